"""Mixture-of-experts routing, placement and traffic: the router kernel against a vectorised NumPy
reference written from the docstring, routing statistics against analytic values and direct
simulations, DeepSeek-V3's node-limited routing, bias balancing, capacity, placement, dispatch traffic
recomputed by hand, link loads for a traffic matrix against networkx, all-to-all time, and errors."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_moe import reference_routing, splitmix_noise

from accelbook import moe
from accelbook.network import topology as tp

FIELDS = ("loads", "processed", "dropped", "groups_hist", "choices", "kept", "bias")


def assert_same_as_reference(**kw):
    r = moe.simulate_routing(**kw)
    ref = reference_routing(**kw)
    for name, want in zip(FIELDS, ref):
        got = getattr(r, name)
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=f"{name} differs for {kw}")
    return r


# -- 1. the noise ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed,b,T,E", [(0, 0, 1, 1), (0, 3, 100, 64), (12345, 7, 33, 256), (2**40 + 1, 2, 16, 10)])
def test_exp_noise_is_splitmix64_of_the_documented_key(seed, b, T, E):
    np.testing.assert_array_equal(moe.exp_noise(seed, b, T, E), splitmix_noise(seed, b, T, E))


def test_splitmix64_first_outputs_are_the_published_ones():
    # SplitMix64 seeded with 0 (Vigna's splitmix64.c): the first output is 0xE220A8397B1DCDAF, i.e. the hash
    # of key 0; u from its top 53 bits
    z = 0xE220A8397B1DCDAF
    assert moe.exp_noise(0, 0, 1, 1)[0, 0] == -math.log(((z >> 11) + 0.5) / 2**53)


def test_exp_noise_is_exp1():
    x = moe.exp_noise(1, 0, 2000, 100).ravel()
    assert x.min() > 0
    assert x.mean() == pytest.approx(1.0, abs=0.01)          # SE 0.0022
    assert x.var() == pytest.approx(1.0, abs=0.03)
    assert np.mean(x > 1.0) == pytest.approx(math.exp(-1), abs=0.003)


# -- 2. kernel == reference -------------------------------------------------------------------------------
GRID = [
    dict(n_tokens=1000, n_experts=64, top_k=4),
    dict(n_tokens=1000, n_experts=64, top_k=1, skew=1.5),
    dict(n_tokens=500, n_experts=32, top_k=2, skew=1.0, drift=2.5, n_batches=6),
    dict(n_tokens=800, n_experts=64, top_k=6, capacity_factor=1.0, n_batches=3, seed=4),
    dict(n_tokens=800, n_experts=64, top_k=6, skew=1.2, capacity_factor=0.2, n_batches=2),    # heavy dropping
    dict(n_tokens=600, n_experts=64, top_k=4, skew=1.0, bias_rate=0.05, n_batches=8, capacity_factor=1.5),
    dict(n_tokens=512, n_experts=64, top_k=4, n_groups=8, node_limit=2),
    dict(n_tokens=512, n_experts=64, top_k=8, n_groups=8, node_limit=3, skew=0.7, bias_rate=0.01, n_batches=4),
    dict(n_tokens=512, n_experts=64, top_k=8, n_groups=8, node_limit=4, drift=1.0, n_batches=3, capacity_factor=0.8),
    dict(n_tokens=512, n_experts=64, top_k=5, n_groups=8, node_limit=1),
    dict(n_tokens=700, n_experts=256, top_k=8, n_groups=8, node_limit=4, seed=11, n_batches=2),
    dict(n_tokens=300, n_experts=16, top_k=16),                                     # k = E
    dict(n_tokens=300, n_experts=12, top_k=3, n_groups=4, node_limit=4),            # limit = groups: no limit
    dict(n_tokens=256, n_experts=64, top_k=4, n_shared=2, skew=0.5),
    dict(n_tokens=200, n_experts=64, top_k=4, skew=3.0, bias_rate=10.0, n_batches=25, n_groups=8, node_limit=2),
]


@pytest.mark.parametrize("kw", GRID, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items() if k != "n_tokens"))
def test_kernel_equals_reference_grid(kw):
    r = assert_same_as_reference(**kw)
    assert r.n_shared == kw.get("n_shared", 0)


@st.composite
def routing_args(draw):
    E = draw(st.sampled_from([4, 8, 12, 16, 64, 256]))
    G = draw(st.sampled_from([g for g in (1, 2, 4, 8) if E % g == 0]))
    k = draw(st.integers(1, min(E, 9)))
    kw = dict(n_tokens=draw(st.integers(1, 400)), n_experts=E, top_k=k, n_groups=G,
              skew=draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])), n_batches=draw(st.integers(1, 4)),
              seed=draw(st.integers(0, 2**32)), drift=draw(st.sampled_from([0.0, 0.5, 3.0])),
              bias_rate=draw(st.sampled_from([0.0, 0.01, 0.3])),
              capacity_factor=draw(st.sampled_from([None, 0.1, 0.6, 1.0, 2.0])))
    limits = [m for m in range(1, G + 1) if m * (E // G) >= k]
    kw["node_limit"] = draw(st.sampled_from([None] + limits))
    return kw


@settings(max_examples=80, deadline=None)
@given(kw=routing_args())
def test_kernel_equals_reference_random(kw):
    assert_same_as_reference(**kw)


def test_choices_are_distinct_and_ordered_by_affinity():
    T, E, k = 300, 32, 5
    r = moe.simulate_routing(T, E, k, skew=1.0, seed=3)
    assert all(len(set(row)) == k for row in r.choices.tolist())
    aff = moe.popularity(E, 1.0)[None, :] / moe.exp_noise(3, 0, T, E)
    a = np.take_along_axis(aff, r.choices, axis=1)
    assert np.all(np.diff(a, axis=1) <= 0)
    # and nothing outside a token's top-k has a larger affinity than its k-th pick
    outside = aff.copy()
    np.put_along_axis(outside, r.choices, -np.inf, axis=1)
    assert np.all(outside.max(axis=1) <= a[:, -1])


def test_reproducible_and_seed_dependent():
    a = moe.simulate_routing(256, 16, 2, seed=5, n_batches=2)
    b = moe.simulate_routing(256, 16, 2, seed=5, n_batches=2)
    c = moe.simulate_routing(256, 16, 2, seed=6, n_batches=2)
    np.testing.assert_array_equal(a.choices, b.choices)
    assert not np.array_equal(a.choices, c.choices)


# -- 3. statistics -----------------------------------------------------------------------------------------
def test_uniform_loads_are_binomial():
    T, E, k, B = 512, 64, 4, 200
    r = moe.simulate_routing(T, E, k, n_batches=B, seed=1)
    assert np.all(r.loads.sum(axis=1) == T * k)
    s = moe.expected_load_stats(T, E, k)
    assert s["mean"] == T * k / E == 32 and s["var"] == pytest.approx(32 * (1 - 1 / 16))
    x = r.loads.ravel()
    assert x.mean() == s["mean"]                                  # exact: the sum is T·k every batch
    assert x.var(ddof=1) == pytest.approx(s["var"], rel=0.08)      # 12,800 samples: SE of var ~1.3 %
    # the tail too: P(load >= mean + 2 sd) against the binomial pmf
    q = k / E
    thr = math.ceil(s["mean"] + 2 * math.sqrt(s["var"]))
    tail = sum(math.comb(T, j) * q**j * (1 - q) ** (T - j) for j in range(thr, T + 1))
    assert np.mean(x >= thr) == pytest.approx(tail, abs=0.006)


def test_top1_frequencies_are_the_popularity():
    T, E, B, skew = 4000, 16, 25, 1.2
    r = moe.simulate_routing(T, E, 1, skew=skew, n_batches=B, seed=2)
    p = np.arange(1, E + 1) ** -skew
    p /= p.sum()
    obs = r.loads.sum(axis=0)
    exp = T * B * p
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    assert chi2 < 40.0          # 15 degrees of freedom: P(chi2 > 40) ≈ 5e-4
    # against a wrong hypothesis (skew 1.1) the same statistic is huge: the test has power
    p2 = np.arange(1, E + 1) ** -1.1
    p2 /= p2.sum()
    assert float(((obs - T * B * p2) ** 2 / (T * B * p2)).sum()) > 200


def test_top2_is_sampling_without_replacement():
    # P(e in top-2) = w_e + sum_{f != e} w_f w_e / (1 - w_f) for the exponential race (Plackett-Luce)
    T, E, B = 4000, 8, 20
    w = moe.popularity(E, 1.0)
    incl = w + np.array([sum(w[f] * w[e] / (1 - w[f]) for f in range(E) if f != e) for e in range(E)])
    assert incl.sum() == pytest.approx(2.0)
    r = moe.simulate_routing(T, E, 2, skew=1.0, n_batches=B, seed=8)
    freq = r.loads.sum(axis=0) / (T * B)
    np.testing.assert_allclose(freq, incl, atol=4 * np.sqrt(incl * (1 - incl) / (T * B)).max())


def test_drift_moves_the_hot_expert():
    T, E, drift = 2000, 32, 3.0
    r = moe.simulate_routing(T, E, 1, skew=2.0, drift=drift, n_batches=6)
    for b in range(6):
        assert r.loads[b].argmax() == round(b * drift) % E
    r = moe.simulate_routing(T, E, 1, skew=2.0, drift=2.5, n_batches=4)
    assert [int(r.loads[b].argmax()) for b in range(4)] == [round(b * 2.5) % E for b in range(4)] == [0, 2, 5, 8]


def test_balls_into_bins_max_load_matches_multinomial():
    T, E, B = 256, 64, 400
    r = moe.simulate_routing(T, E, 1, n_batches=B, seed=3)
    rng = np.random.default_rng(0)
    sim = rng.multinomial(T, np.full(E, 1 / E), size=20000).max(axis=1)
    assert r.loads.max(axis=1).mean() == pytest.approx(sim.mean(), abs=0.2)        # SD ~1.2: SE 0.06
    assert r.imbalance.mean() == pytest.approx(sim.mean() / (T / E), abs=0.05)


def test_balls_into_bins_topk_max_load_matches_direct_simulation():
    T, E, k, B = 256, 32, 4, 300
    r = moe.simulate_routing(T, E, k, n_batches=B, seed=4)
    rng = np.random.default_rng(1)
    maxima = []
    for _ in range(20):
        pick = np.argpartition(rng.random((100, T, E)), k, axis=2)[:, :, :k]      # k distinct experts per token
        loads = np.stack([np.bincount(p.ravel(), minlength=E) for p in pick])
        maxima.append(loads.max(axis=1))
    sim = np.concatenate(maxima)
    assert r.loads.max(axis=1).mean() == pytest.approx(sim.mean(), abs=0.5)        # SD ~2.5: SE 0.15


# -- 4. DeepSeek-V3: 256 routed experts, top-8, 8 nodes, at most 4 ----------------------------------------
DSV3 = dict(n_tokens=4096, n_experts=256, top_k=8, n_groups=8, n_batches=2, seed=0)


@pytest.fixture(scope="module")
def dsv3():
    return moe.simulate_routing(**DSV3, node_limit=4, n_shared=1), moe.simulate_routing(**DSV3)


def _groups_of(choices, per_group):
    return np.array([len(set(row)) for row in (choices // per_group).tolist()])


def test_node_limit_caps_groups_per_token(dsv3):
    lim, free = dsv3
    assert np.all(lim.groups_hist[:, 5:] == 0) and lim.groups_hist.sum() == 2 * 4096
    g = _groups_of(lim.choices, 32)
    assert g.max() <= 4
    np.testing.assert_array_equal(np.bincount(g, minlength=9), lim.groups_hist[-1])
    assert lim.summary()["max_groups_per_token"] <= 4


def test_unlimited_groups_per_token_is_analytic(dsv3):
    _, free = dsv3
    expect = 8 * (1 - math.comb(224, 8) / math.comb(256, 8))
    assert expect == pytest.approx(5.3, abs=0.05)
    assert free.mean_groups_per_token.mean() == pytest.approx(expect, abs=0.05)      # SE ~0.012
    np.testing.assert_array_equal(np.bincount(_groups_of(free.choices, 32), minlength=9), free.groups_hist[-1])
    assert free.groups_hist[:, 5:].sum() > 0


def test_node_limited_picks_are_the_topk_of_the_best_groups():
    # by hand for a few tokens: group score = sum of the best 2 log-affinities; top-8 among the best 4 groups
    T, E = 64, 256
    r = moe.simulate_routing(T, E, 8, n_groups=8, node_limit=4, seed=2, skew=0.5)
    aff = moe.popularity(E, 0.5) / moe.exp_noise(2, 0, T, E)
    for t in range(T):
        la = np.log(aff[t]).reshape(8, 32)
        score = np.sort(la, axis=1)[:, -2:].sum(axis=1)
        groups = sorted(np.argsort(-score, kind="stable")[:4])
        allowed = np.concatenate([np.arange(g * 32, g * 32 + 32) for g in groups])
        want = allowed[np.argsort(-aff[t][allowed], kind="stable")[:8]]
        assert r.choices[t].tolist() == want.tolist()


def test_node_limited_dispatch_on_eight_nodes(dsv3):
    lim, free = dsv3
    B = 7168 * 2
    per = []
    for r in (lim, free):
        d = moe.dispatch_traffic(r, moe.place_experts(256, 8, "contiguous"), B)
        src = np.arange(4096) * 8 // 4096
        nodes = [set(row[k] // 32 for k in range(8) if r.kept[t, k]) for t, row in enumerate(r.choices.tolist())]
        remote = sum(len(s - {src[t]}) for t, s in enumerate(nodes))
        assert d["total_bytes"] == remote * B
        per.append(remote / 4096)
    assert per[0] <= 4 and max(len(s) for s in [set(row // 32) for row in lim.choices]) <= 4
    assert per[0] < per[1]


def test_node_limited_on_64_chips_8_per_node(dsv3):
    lim, _ = dsv3
    pl = moe.place_experts(256, 64, "contiguous")
    node_of_chip = np.arange(64) // 8
    d = moe.dispatch_traffic(lim, pl, 1.0)
    # aggregate the demand per node pair: a token's copies reach at most 4 nodes, so each node sends at most
    # (tokens per node) × 4 nodes × 8 chips, and each token's destination nodes are at most 4
    token_nodes = node_of_chip[pl.replicas[lim.choices, 0]]
    assert max(len(set(row)) for row in token_nodes.tolist()) <= 4
    node_demand = np.zeros((8, 8))
    np.add.at(node_demand, (node_of_chip[:, None].repeat(64, 1), node_of_chip[None, :].repeat(64, 0)), d["demand"])
    assert node_demand.sum() == pytest.approx(d["total_bytes"])
    src_node = (np.arange(4096) * 64 // 4096) // 8
    inter = sum(len(set(token_nodes[t]) - {src_node[t]}) for t in range(4096))
    assert inter / 4096 <= 4


# -- 5. bias balancing -------------------------------------------------------------------------------------
def test_bias_balancing_lowers_imbalance():
    kw = dict(n_tokens=1024, n_experts=64, top_k=4, skew=1.0, n_batches=60, seed=1)
    off = moe.simulate_routing(**kw)
    on = moe.simulate_routing(**kw, bias_rate=0.05)
    assert np.all(off.bias == 0)
    assert on.imbalance[0] == off.imbalance[0]                  # the bias only acts from the second batch
    assert on.imbalance[-10:].mean() < 0.5 * off.imbalance[-10:].mean()
    # the hot experts end with the lowest bias
    assert on.bias[0] < on.bias[-1]


def test_bias_sign_rule_after_one_batch():
    r = moe.simulate_routing(512, 32, 2, skew=1.0, bias_rate=0.125, n_batches=1)
    mean = 512 * 2 / 32
    want = np.where(r.loads[0] < mean, 0.125, np.where(r.loads[0] > mean, -0.125, 0.0))
    np.testing.assert_array_equal(r.bias, want)


def test_strong_bias_does_not_overflow_into_degenerate_routing():
    # bias_rate = 10 is accepted; the bias is only relative, yet all of it drifts upwards together. After
    # ~70 batches exp(bias) overflows to inf for every expert, every affinity is inf and the tie rule sends
    # every token to experts 0..k-1: routing becomes maximally unbalanced.
    # Only relative bias matters, so the kernel subtracts the largest bias before exp: no overflow. A rate
    # this large overshoots every batch (the loads oscillate), which is the method's behaviour, not a bug.
    kw = dict(n_tokens=256, n_experts=64, top_k=4, skew=1.0, n_batches=150, seed=0)
    on = moe.simulate_routing(**kw, bias_rate=10.0)
    off = moe.simulate_routing(**kw)
    assert np.isfinite(on.bias).all()
    assert len(np.unique(on.choices)) > 4
    assert on.imbalance[-10:].mean() < 64 / 4                    # not the degenerate all-to-experts-0..k-1 case
    moderate = moe.simulate_routing(**kw, bias_rate=0.1)
    assert moderate.imbalance[-10:].mean() < 0.5 * off.imbalance[-10:].mean()


# -- 6. capacity ----------------------------------------------------------------------------------------------
def test_capacity_large_drops_nothing():
    r = moe.simulate_routing(1024, 64, 4, skew=1.5, capacity_factor=100.0, n_batches=3)
    assert np.all(r.dropped == 0) and np.all(r.kept)
    np.testing.assert_array_equal(r.processed, r.loads)
    assert r.dropped_fraction.max() == 0 and r.capacity == math.ceil(100 * 1024 * 4 / 64)


@pytest.mark.parametrize("cf", [0.1, 0.5, 1.0, 1.25])
def test_capacity_bounds_and_conservation(cf):
    T, E, k = 4096, 256, 8
    r = moe.simulate_routing(T, E, k, skew=1.0, capacity_factor=cf, n_batches=3)
    C = math.ceil(cf * T * k / E)
    assert r.capacity == C
    assert np.all(r.processed <= C)
    np.testing.assert_array_equal(r.processed, np.minimum(r.loads, C))
    np.testing.assert_array_equal(r.dropped, (r.loads - r.processed).sum(axis=1))
    assert r.kept.sum() == r.processed[-1].sum()
    np.testing.assert_allclose(r.dropped_fraction, r.dropped / (T * k))
    if cf < 1:
        assert np.all(r.dropped >= T * k - E * C)                 # pigeonhole


def test_capacity_first_come_first_served():
    r = moe.simulate_routing(400, 8, 2, skew=2.0, capacity_factor=0.5)
    C = r.capacity
    seen = {}
    for t in range(400):
        for j in range(2):
            e = int(r.choices[t, j])
            assert r.kept[t, j] == (seen.get(e, 0) < C)
            seen[e] = seen.get(e, 0) + 1


def test_capacity_worked_numbers():
    assert moe.simulate_routing(4096, 256, 8, capacity_factor=1.25).capacity == 160
    assert moe.simulate_routing(100, 10, 1, capacity_factor=1.0).capacity == 10
    assert moe.simulate_routing(100, 10, 1).capacity is None


def test_capacity_factor_decimal_is_not_rounded_up_by_float_error():
    # C = ceil(1.1 · 100 · 1 / 10) = 11; in floating point 1.1·100 = 110.00000000000001 and ceil gives 12
    assert moe.simulate_routing(100, 10, 1, capacity_factor=1.1).capacity == 11
    assert moe.simulate_routing(100, 10, 1, capacity_factor=2.2).capacity == 22


# -- 7. placement ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("E,C", [(256, 64), (256, 8), (64, 64), (10, 3), (7, 1)])
def test_contiguous_and_round_robin_formulas(E, C):
    cont = moe.place_experts(E, C, "contiguous")
    rr = moe.place_experts(E, C, "round_robin")
    for e in range(E):
        assert cont.replicas[e].tolist() == [e * C // E]
        assert rr.replicas[e].tolist() == [e % C]
    assert cont.experts_per_chip().sum() == E and (cont.n_replicas == 1).all()
    np.testing.assert_array_equal(rr.experts_per_chip(), [len(range(c, E, C)) for c in range(C)])


def test_replicate_hot_gives_hot_experts_distinct_chips():
    E, C = 64, 16
    loads = moe.simulate_routing(2048, E, 4, skew=1.2).loads[-1]
    pl = moe.place_experts(E, C, "replicate_hot", hot=4, replicas=3, loads=loads)
    hot = np.argsort(-loads, kind="stable")[:4]
    for e in range(E):
        reps = pl.replicas[e][pl.replicas[e] >= 0]
        assert reps[0] == e * C // E
        if e in hot:
            assert len(reps) == 3 and len(set(reps.tolist())) == 3
        else:
            assert len(reps) == 1
    assert pl.experts_per_chip().sum() == E + 4 * 2
    # default: the first experts are the hot ones
    pl = moe.place_experts(E, C, "replicate_hot", hot=2, replicas=2)
    assert pl.n_replicas.tolist() == [2, 2] + [1] * (E - 2)


def test_replicate_hot_evens_out_chip_loads():
    E, C = 64, 16
    r = moe.simulate_routing(4096, E, 4, skew=1.2)
    cont = moe.chip_loads(r, moe.place_experts(E, C))
    rep = moe.chip_loads(r, moe.place_experts(E, C, "replicate_hot", hot=4, replicas=4, loads=r.loads[-1]))
    assert rep.max() < cont.max()


@pytest.mark.parametrize("scheme", ["contiguous", "round_robin", "replicate_hot"])
def test_chip_loads_conserve_processed(scheme):
    r = moe.simulate_routing(1024, 32, 4, skew=1.0, capacity_factor=1.0, n_batches=2)
    pl = moe.place_experts(32, 8, scheme, hot=3, replicas=3)
    for b in (0, 1, -1):
        cl = moe.chip_loads(r, pl, batch=b)
        assert cl.sum() == pytest.approx(r.processed[b].sum())
    cl = moe.chip_loads(r, moe.place_experts(32, 8, "contiguous"))
    np.testing.assert_allclose(cl, r.processed[-1].reshape(8, 4).sum(axis=1))


def test_more_chips_than_experts_replicates_every_expert():
    pl = moe.place_experts(8, 24)
    assert pl.n_chips == 24 and (pl.n_replicas == 3).all()
    for e in range(8):
        assert len(set(pl.replicas[e].tolist())) == 3
    np.testing.assert_array_equal(pl.experts_per_chip(), np.ones(24))
    r = moe.simulate_routing(480, 8, 2, skew=1.0, capacity_factor=1.0)
    cl = moe.chip_loads(r, pl)
    assert cl.sum() == pytest.approx(r.processed[-1].sum())
    for e in range(8):
        np.testing.assert_allclose(cl[pl.replicas[e]], r.processed[-1][e] / 3)


def test_placement_errors():
    with pytest.raises(ValueError, match="multiple"):
        moe.place_experts(8, 12)
    with pytest.raises(ValueError, match="scheme"):
        moe.place_experts(8, 4, "random")
    with pytest.raises(ValueError, match="hot"):
        moe.place_experts(8, 4, "replicate_hot", hot=9)
    with pytest.raises(ValueError, match="loads"):
        moe.place_experts(8, 4, "replicate_hot", hot=1, loads=np.ones(7))
    with pytest.raises(ValueError, match="n_chips"):
        moe.place_experts(8, 0)


def test_more_replicas_than_chips_is_a_clear_error():
    # 6 replicas of an expert on 4 chips cannot be distinct chips: today this escapes as StopIteration
    with pytest.raises(ValueError, match="replicas"):
        moe.place_experts(8, 4, "replicate_hot", hot=1, replicas=6)


# -- 8. dispatch traffic ---------------------------------------------------------------------------------------
def dispatch_by_hand(r, pl, bpt):
    T, C = r.n_tokens, pl.n_chips
    demand = np.zeros((C, C))
    copies = []
    for t in range(T):
        src = t * C // T
        dst = set()
        for j in range(r.top_k):
            if r.kept[t, j]:
                reps = [c for c in pl.replicas[r.choices[t, j]] if c >= 0]
                dst.add(reps[t % len(reps)])
        copies.append(len(dst))
        for d in dst - {src}:
            demand[src, d] += bpt
    return demand, copies


@pytest.mark.parametrize("scheme,cf,chips", [("contiguous", None, 8), ("round_robin", 0.7, 8), ("replicate_hot", 1.0, 8),
                                             ("contiguous", 1.0, 64)])
def test_dispatch_traffic_by_hand(scheme, cf, chips):
    r = moe.simulate_routing(512, 32, 4, skew=1.0, capacity_factor=cf, seed=3)
    pl = moe.place_experts(32, chips, scheme, hot=4, replicas=3, loads=r.loads[-1])
    d = moe.dispatch_traffic(r, pl, 1000.0)
    demand, copies = dispatch_by_hand(r, pl, 1000.0)
    np.testing.assert_array_equal(d["demand"], demand)
    assert np.all(np.diag(d["demand"]) == 0)
    assert d["total_bytes"] == demand.sum()
    np.testing.assert_array_equal(d["sent"], demand.sum(axis=1))
    np.testing.assert_array_equal(d["received"], demand.sum(axis=0))
    assert d["copies_per_token"] == pytest.approx(np.mean(copies))
    assert d["remote_share"] == pytest.approx(demand.sum() / 1000.0 / sum(copies))


def test_dispatch_all_experts_on_one_chip_is_free():
    r = moe.simulate_routing(256, 16, 4)
    d = moe.dispatch_traffic(r, moe.place_experts(16, 1), 4096.0)
    assert d["total_bytes"] == 0 and d["remote_share"] == 0 and d["copies_per_token"] == 1
    assert d["demand"].shape == (1, 1)


def test_dispatch_one_expert_per_chip_counts_every_remote_pick():
    # E chips, one expert each: a token's copies = its k kept experts, minus the one on its own chip
    T, E, k = 256, 16, 3
    r = moe.simulate_routing(T, E, k, seed=2)
    d = moe.dispatch_traffic(r, moe.place_experts(E, E), 1.0)
    own = np.arange(T) * E // T
    assert d["total_bytes"] == T * k - int((r.choices == own[:, None]).sum())
    assert d["copies_per_token"] == k


def test_uniform_demand_matches_simulated_dispatch():
    C, epc, k, tpc = 8, 4, 4, 512
    E = C * epc
    r = moe.simulate_routing(C * tpc, E, k, seed=5)
    d = moe.dispatch_traffic(r, moe.place_experts(E, C), 1.0)["demand"]
    u = moe.uniform_demand(C, tpc, k, 1.0, experts_per_chip=epc)
    per_pair = tpc * (1 - math.comb(E - epc, k) / math.comb(E, k))
    off = ~np.eye(C, dtype=bool)
    np.testing.assert_allclose(u[off], per_pair)
    assert np.all(np.diag(u) == 0)
    assert d[off].mean() == pytest.approx(per_pair, rel=0.02)
    np.testing.assert_allclose(d[off], per_pair, rtol=0.2)


def test_dispatch_errors():
    r = moe.simulate_routing(100, 16, 2)
    with pytest.raises(ValueError, match="evenly"):
        moe.dispatch_traffic(r, moe.place_experts(16, 8), 1.0)
    with pytest.raises(ValueError, match="experts"):
        moe.dispatch_traffic(r, moe.place_experts(20, 4), 1.0)
    with pytest.raises(ValueError, match="bytes_per_token"):
        moe.dispatch_traffic(r, moe.place_experts(16, 4), 0)


# -- 9. link loads for a traffic matrix --------------------------------------------------------------------------
SMALL_NETS = [tp.torus((4, 4)), tp.ring(7), tp.fat_tree(4), tp.dragonfly(3, 2, 1, groups=4), tp.switched(6),
              tp.mesh((3, 4))]


@pytest.mark.parametrize("t", SMALL_NETS + [tp.torus((4, 4, 4))], ids=lambda t: t.name)
def test_all_ones_matrix_is_uniform_traffic(t):
    n = t.n_endpoints
    ones = np.ones((n, n)) - np.eye(n)
    np.testing.assert_allclose(tp.link_loads(t, ones), tp.link_loads(t, "uniform"), rtol=1e-12, atol=1e-12)
    # the diagonal is ignored
    np.testing.assert_allclose(tp.link_loads(t, np.ones((n, n)) * 3), 3 * tp.link_loads(t, "uniform"), rtol=1e-12)


@pytest.mark.parametrize("t", SMALL_NETS, ids=lambda t: t.name)
@pytest.mark.parametrize("seed", [0, 5])
def test_permutation_matrix_is_permutation_traffic(t, seed):
    n = t.n_endpoints
    perm = np.random.default_rng(seed).permutation(n)
    m = np.zeros((n, n))
    m[np.arange(n), perm] = 1.0
    np.testing.assert_allclose(tp.link_loads(t, m), tp.link_loads(t, "permutation", seed=seed), rtol=1e-12, atol=1e-12)


def test_matrix_link_loads_are_linear():
    t = tp.torus((4, 4))
    rng = np.random.default_rng(2)
    a, b = rng.random((16, 16)), rng.random((16, 16))
    la, lb = tp.link_loads(t, a), tp.link_loads(t, b)
    np.testing.assert_allclose(tp.link_loads(t, 2 * a), 2 * la, rtol=1e-12)
    np.testing.assert_allclose(tp.link_loads(t, a + 3 * b), la + 3 * lb, rtol=1e-12)
    assert np.all(tp.link_loads(t, np.zeros((16, 16))) == 0)


@pytest.mark.parametrize("t", [tp.torus((3, 4)), tp.fat_tree(4), tp.dragonfly(3, 2, 1, groups=4)], ids=lambda t: t.name)
def test_matrix_link_loads_equal_networkx_ecmp(t):
    n = t.n_endpoints
    m = np.random.default_rng(4).integers(0, 5, (n, n)).astype(float)
    G = nx.Graph()
    G.add_edges_from(t.edges().tolist())
    ref: dict = {}
    for s in range(n):
        for d in range(n):
            if s == d or m[s, d] == 0:
                continue
            paths = list(nx.all_shortest_paths(G, s, d))
            for p in paths:
                for u, v in zip(p, p[1:]):
                    ref[(u, v)] = ref.get((u, v), 0.0) + m[s, d] / len(paths)
    loads = tp.link_loads(t, m)
    src = np.repeat(np.arange(t.n_nodes), np.diff(t.indptr))
    ours = {(int(u), int(v)): float(x) for u, v, x in zip(src, t.indices, loads)}
    assert {k for k, v in ours.items() if v > 1e-9} == set(ref)
    for k, v in ref.items():
        assert ours[k] == pytest.approx(v, rel=1e-12)


def test_traffic_matrix_errors():
    t = tp.ring(4)
    with pytest.raises(ValueError, match="4×4"):
        tp.link_loads(t, np.ones((3, 4)))
    with pytest.raises(ValueError, match=">= 0"):
        tp.link_loads(t, -np.ones((4, 4)))
    with pytest.raises(ValueError, match="finite"):
        tp.link_loads(t, np.full((4, 4), np.nan))
    with pytest.raises(ValueError):
        tp.link_loads(t, "everything")


# -- 10. all-to-all time ------------------------------------------------------------------------------------------
def test_all_to_all_bandwidth_term_on_a_torus():
    t = tp.torus((4, 4, 4)).with_links(link_bw_bytes_per_s=50e9, hop_latency_s=1e-6, efficiency=0.8)
    bpp = 1e6
    demand = (np.ones((64, 64)) - np.eye(64)) * bpp
    a = moe.all_to_all_time(demand, t)
    assert a.max_link_bytes == pytest.approx(tp.torus_all_to_all_max_load((4, 4, 4)) * bpp, rel=1e-12)
    assert a.bandwidth_s == pytest.approx(a.max_link_bytes / (0.8 * 50e9), rel=1e-12)
    assert a.diameter == 6 and a.latency_s == pytest.approx(6e-6)
    assert a.peers == 63 and a.overhead_s == pytest.approx(63 * moe.MESSAGE_OVERHEAD_S)
    assert a.time_s == pytest.approx(a.bandwidth_s + a.latency_s + a.overhead_s)
    fast = moe.all_to_all_time(demand, t.with_links(link_bw_bytes_per_s=100e9))
    assert fast.bandwidth_s == pytest.approx(a.bandwidth_s / 2, rel=1e-12)
    assert fast.latency_s == a.latency_s
    assert moe.all_to_all_time(demand, t, message_overhead_s=0).overhead_s == 0


def test_all_to_all_zero_demand_and_switched():
    t = tp.switched(8)
    a = moe.all_to_all_time(np.zeros((8, 8)), t)
    assert a.time_s == 0 and a.peers == 0 and a.max_link_bytes == 0
    d = np.zeros((8, 8))
    d[0, 1] = d[0, 2] = d[3, 1] = 1e6
    a = moe.all_to_all_time(d, t)
    assert a.diameter == 2 and a.peers == 2
    # chip 0 sends 2 MB up its one link to the switch; the switch sends 2 MB down to chip 1
    assert a.max_link_bytes == pytest.approx(2e6)
    assert a.bandwidth_s == pytest.approx(2e6 / (t.efficiency * t.link_bw_bytes_per_s))
    assert a.latency_s == pytest.approx(2 * t.hop_latency_s)


def test_all_to_all_errors():
    t = tp.ring(4)
    with pytest.raises(ValueError, match="4×4"):
        moe.all_to_all_time(np.zeros((3, 3)), t)


NETS = {"torus 4x4x4": tp.torus((4, 4, 4)), "switched 64": tp.switched(64), "fat tree k=8": tp.fat_tree(8)}


def test_crossover_sweep_latency_then_bandwidth():
    tpc = [1, 4, 16, 64, 256, 1024, 4096, 16384]
    df = moe.crossover_sweep(NETS, tpc, 8, 7168 * 2, experts_per_chip=4)
    assert set(df.network) == set(NETS)
    for name, g in df.groupby("network"):
        g = g.sort_values("tokens_per_chip")
        assert np.all(np.diff(g.time_s.to_numpy()) > 0)
        assert g.bound.iat[0] == "latency" and g.bound.iat[-1] == "bandwidth"
        np.testing.assert_allclose(g.time_s, g.bandwidth_s + g.latency_s, rtol=1e-12)
        # the bandwidth term is linear in tokens
        np.testing.assert_allclose(g.bandwidth_s / g.tokens_per_chip, g.bandwidth_s.iat[0] / 1, rtol=1e-9)
    cae = moe.crossover_sweep(NETS, tpc, 8, 7168 * 2, experts_per_chip=4, cae=True)
    assert np.all(cae.time_s.to_numpy() <= df.time_s.to_numpy())
    assert np.all(cae.time_s.to_numpy() < df.time_s.to_numpy())


def test_crossover_sweep_dispatch_bandwidth_is_the_uniform_demand():
    t = tp.torus((4, 4, 4))
    tpc = [1.0, 10.0, 100.0, 1e4]
    df = moe.crossover_sweep({"t": t}, tpc, 8, 1000.0, experts_per_chip=4)
    diam = tp.hop_stats(t)["diameter"]
    for i, n in enumerate(tpc):
        a = moe.all_to_all_time(moe.uniform_demand(64, n, 8, 1000.0, experts_per_chip=4), t)
        assert df.bandwidth_s.iat[i] == pytest.approx(2 * a.bandwidth_s, rel=1e-9)    # dispatch + combine
    # peers: fewer than the 63 others while a chip sends few copies, all of them for many tokens
    remote = 63 * (1 - math.comb(252, 8) / math.comb(256, 8))
    peers = df.peers.to_numpy()
    assert np.all(np.diff(peers) > 0) and peers[0] <= remote and peers[-1] == pytest.approx(63)
    np.testing.assert_allclose(df.latency_s, 2 * (diam * t.hop_latency_s + peers * moe.MESSAGE_OVERHEAD_S), rtol=1e-12)


def test_chip_degree_and_equal_injection():
    assert moe.chip_degree(tp.torus((4, 4, 4))) == 6 and moe.chip_degree(tp.switched(8)) == 1
    assert moe.chip_degree(tp.ring(5)) == 2
    t = moe.equal_injection(tp.torus((4, 4, 4)), 600e9)
    assert t.link_bw_bytes_per_s == pytest.approx(100e9) and t.efficiency == 1.0
    assert moe.equal_injection(tp.switched(8), 600e9).link_bw_bytes_per_s == pytest.approx(600e9)


# -- 11. input validation ---------------------------------------------------------------------------------------
OK = dict(n_tokens=64, n_experts=16, top_k=2)


@pytest.mark.parametrize("bad,name", [
    (dict(top_k=17), "top_k"), (dict(top_k=0), "top_k"), (dict(top_k=2.0), "top_k"), (dict(top_k=True), "top_k"),
    (dict(n_tokens=64.0), "n_tokens"), (dict(n_tokens=0), "n_tokens"), (dict(n_tokens=True), "n_tokens"),
    (dict(n_experts=0), "n_experts"), (dict(n_experts="16"), "n_experts"),
    (dict(skew=-0.1), "skew"), (dict(skew=float("nan")), "skew"), (dict(skew=True), "skew"),
    (dict(capacity_factor=0), "capacity_factor"), (dict(capacity_factor=-1.0), "capacity_factor"),
    (dict(capacity_factor=float("inf")), "capacity_factor"),
    (dict(n_batches=0), "n_batches"), (dict(n_batches=False), "n_batches"),
    (dict(seed=-1), "seed"), (dict(seed=1.5), "seed"), (dict(drift=-1.0), "drift"),
    (dict(bias_rate=-0.1), "bias_rate"), (dict(bias_rate=False), "bias_rate"),
    (dict(n_groups=3), "n_groups"), (dict(n_groups=0), "n_groups"),
    (dict(n_groups=4, node_limit=5), "node_limit"), (dict(n_groups=4, node_limit=0), "node_limit"),
    (dict(n_groups=8, node_limit=1, top_k=3), "node_limit"), (dict(n_shared=-1), "n_shared"),
    (dict(n_shared=True), "n_shared"),
])
def test_bad_arguments_name_themselves(bad, name):
    with pytest.raises(ValueError, match=name):
        moe.simulate_routing(**{**OK, **bad})


def test_huge_seed_is_a_clear_error_or_works():
    # seeds are whole numbers >= 0; the noise key wraps in uint64, so any seed < 2^64 is meaningful
    try:
        r = moe.simulate_routing(64, 16, 2, seed=2**63)
    except ValueError as e:
        assert "seed" in str(e)
    else:
        np.testing.assert_array_equal(r.choices, reference_routing(64, 16, 2, seed=2**63, noise=splitmix_noise)[4])


def test_the_package_reaches_every_public_name():
    names = ["AllToAll", "CAE_OVERHEAD_S", "GOLDEN", "MESSAGE_OVERHEAD_S", "MIX1", "MIX2", "PLACEMENTS", "Placement",
             "Routing", "SEED_MULT", "all_to_all_time", "chip_degree", "chip_loads", "crossover_sweep",
             "dispatch_traffic", "equal_injection", "exp_noise", "expected_load_stats", "place_experts", "popularity",
             "simulate_routing", "uniform_demand"]
    assert sorted(moe.__all__) == sorted(names)
    for name in names:
        assert getattr(moe, name) is not None
