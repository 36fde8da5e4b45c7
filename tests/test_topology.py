"""Topologies and hop statistics: against networkx exactly, and against analytic values."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelbook.network import topology as tp


def networkx_histogram(t: tp.Topology) -> np.ndarray:
    """Reference: networkx all-pairs shortest path lengths, over ordered pairs of distinct chips."""
    G = nx.Graph()
    G.add_nodes_from(range(t.n_nodes))
    G.add_edges_from(t.edges().tolist())
    h: dict[int, int] = {}
    for s, lengths in nx.all_pairs_shortest_path_length(G):
        if s >= t.n_endpoints:
            continue
        for v, d in lengths.items():
            if v < t.n_endpoints and v != s:
                h[d] = h.get(d, 0) + 1
    return np.array([h.get(i, 0) for i in range(max(h) + 1)])


BUILT = [
    tp.ring(2), tp.ring(9), tp.ring(130), tp.torus((4, 4, 4)), tp.torus((5, 6)), tp.mesh((3, 4, 2)),
    tp.torus((8, 8), twisted=True), tp.torus((4, 4, 8), twisted=True), tp.torus((3, 1, 5)), tp.full_mesh(6),
    tp.switched(8), tp.nvl72(), tp.fat_tree(4), tp.fat_tree(6), tp.fat_tree(4, oversubscription=2),
    tp.dragonfly(4, 2, 2), tp.dragonfly(3, 1, 1, groups=3), tp.boardfly(6, 4, 4), tp.boardfly(3, 2, 2),
    tp.tpu_pod((4, 4, 8)), tp.tpu_pod((2, 4, 4)), tp.tpu_pod((1, 1, 4)), tp.tpu_multislice("v5e", (4, 4), 3),
    tp.h100_cluster(3),
]


@pytest.mark.parametrize("t", BUILT, ids=lambda t: t.name)
def test_histogram_equals_networkx(t):
    np.testing.assert_array_equal(tp.hop_stats(t)["histogram"], networkx_histogram(t))


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(1, 7), min_size=1, max_size=3), wrap=st.booleans(), twist=st.booleans())
def test_random_tori_equal_networkx(dims, wrap, twist):
    twisted = twist and wrap and len(dims) >= 2
    t = tp.torus(dims, wraparound=wrap, twisted=twisted)
    if t.n_endpoints < 2:
        return
    np.testing.assert_array_equal(tp.hop_stats(t)["histogram"], networkx_histogram(t))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 60), p=st.floats(0.05, 0.5), seed=st.integers(0, 10_000))
def test_random_connected_graphs_equal_networkx(n, p, seed):
    G = nx.gnp_random_graph(n, p, seed=seed)
    G.add_edges_from((i, i + 1) for i in range(n - 1))         # make it connected
    t = tp.from_edges("random", "random", n, n, np.array(list(G.edges())))
    np.testing.assert_array_equal(tp.hop_stats(t)["histogram"], networkx_histogram(t))


@pytest.mark.parametrize("k", [3, 4, 5, 8, 16])
def test_cube_torus_analytic(k):
    # k x k x k torus with wraparound: diameter 3*floor(k/2); mean = 3 * (mean ring distance) * n/(n-1)
    s = tp.hop_stats(tp.torus((k, k, k)))
    assert s["diameter"] == 3 * (k // 2)
    ring_mean = sum(min(d, k - d) for d in range(k)) / k
    assert s["mean_hops"] == pytest.approx(3 * ring_mean * k**3 / (k**3 - 1), rel=1e-12)
    assert s["n_pairs"] == k**3 * (k**3 - 1)


@pytest.mark.parametrize("dims,wrap", [((8, 8, 16), True), ((6, 10), False), ((4, 4, 4), (True, False, True))])
def test_torus_formulas(dims, wrap):
    s = tp.hop_stats(tp.torus(dims, wraparound=wrap))
    assert s["diameter"] == tp.torus_diameter(dims, wrap)
    assert s["mean_hops"] == pytest.approx(tp.torus_mean_hops(dims, wrap), rel=1e-12)


def test_the_16_hop_claim_is_an_8x8x16_torus():
    # the articles: "a 1,024-chip 3D torus has a 16-hop diameter": 8 x 8 x 16 with wraparound, 4 + 4 + 8
    t = tp.torus((8, 8, 16))
    assert t.n_endpoints == 1024 and tp.hop_stats(t)["diameter"] == 16


def test_switched_and_fat_tree_by_hand():
    assert tp.hop_stats(tp.switched(8))["diameter"] == 2               # chip - switch - chip
    s = tp.hop_stats(tp.fat_tree(4))
    # 16 hosts: same edge switch 2 hops (1 other host), same pod 4 hops (2), other pod 6 hops (12)
    np.testing.assert_array_equal(s["histogram"], [0, 0, 16 * 1, 0, 16 * 2, 0, 16 * 12])
    assert tp.fat_tree(4).n_endpoints == 4**3 // 4 and tp.fat_tree(4, 2).n_endpoints == 32


def test_tpu_slice_wraps_only_whole_cubes():
    t = tp.tpu_pod((2, 4, 8))
    assert t.wraparound == (False, True, True)
    assert tp.hop_stats(t)["diameter"] == 1 + 2 + 4
    with pytest.raises(ValueError, match="multiples of 4"):
        tp.tpu_pod((3, 4, 4))


def test_bisection_cut_matches_formula():
    # tori: cut across the longest dimension k: 2 N / k links with wraparound, N / k without
    for dims, wrap in [((4, 4, 8), True), ((4, 4, 8), False), ((16,), True), ((6, 6), True)]:
        t = tp.torus(dims, wraparound=wrap)
        k = max(dims)
        n = np.prod(dims)
        assert tp.bisection_links(t) == (2 if (wrap and k > 2) else 1) * n // k


@pytest.mark.parametrize("t,by_hand", [
    (tp.fat_tree(4), 8),                        # k^3/8 core links: 4^3/8
    (tp.fat_tree(8, oversubscription=2), 64),   # 8^3/8 links for 256 hosts: half the full bisection
    (tp.dragonfly(4, 2, 2), 20),                # 9 groups, one link per pair: 4 x 5 across the cut
    (tp.boardfly(), 18 * 18),                   # 36 groups: 18 x 18 global links
    (tp.switched(8), 4),                        # 4 chips' links on each side of the switch
], ids=lambda x: x.name if hasattr(x, "name") else str(x))
def test_bisection_graph_cut_equals_textbook(t, by_hand):
    assert tp.bisection_links(t) == tp.bisection_links_analytic(t) == by_hand


def test_boardfly_labels_its_assumptions():
    b = tp.boardfly()
    assert b.n_endpoints == 36 * 8 * 4 == 1152
    assert "chip c of each board" in b.assumptions
    assert tp.hop_stats(b)["diameter"] <= 7          # the public claim is "at most 7 hops"


def test_disconnected_and_bad_input_errors():
    t = tp.from_edges("two islands", "x", 4, 4, np.array([[0, 1], [2, 3]]))
    with pytest.raises(ValueError, match="not connected"):
        tp.hop_stats(t)
    for bad in [lambda: tp.torus(()), lambda: tp.torus((0, 4)), lambda: tp.ring(1.5), lambda: tp.fat_tree(3),
                lambda: tp.dragonfly(2, 2, 1, groups=9), lambda: tp.torus((4,), twisted=True)]:
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(ValueError, match="two chips"):
        tp.hop_stats(tp.ring(1))


# -- link loads under minimal routing ------------------------------------------------------------------
def brute_force_loads(t: tp.Topology, pairs) -> dict:
    """Reference: enumerate every shortest path of every (source, destination) pair with networkx and
    split the pair's unit of traffic equally over them."""
    G = nx.Graph()
    G.add_edges_from(t.edges().tolist())
    load: dict = {}
    for s, d in pairs:
        paths = list(nx.all_shortest_paths(G, s, d))
        for p in paths:
            for a, b in zip(p, p[1:]):
                load[(a, b)] = load.get((a, b), 0.0) + 1 / len(paths)
    return load


def _as_dict(t, loads):
    src = np.repeat(np.arange(t.n_nodes), np.diff(t.indptr))
    return {(int(u), int(v)): float(x) for u, v, x in zip(src, t.indices, loads)}


@pytest.mark.parametrize("t", [tp.torus((4, 4)), tp.mesh((3, 5)), tp.ring(9), tp.fat_tree(4), tp.dragonfly(4, 2, 2),
                               tp.boardfly(3, 2, 2), tp.gpu_cluster(2, 4), tp.torus((4, 6), twisted=True)],
                         ids=lambda t: t.name)
def test_uniform_link_loads_equal_brute_force(t):
    n = t.n_endpoints
    ref = brute_force_loads(t, [(s, d) for s in range(n) for d in range(n) if s != d])
    ours = _as_dict(t, tp.link_loads(t, "uniform"))
    assert set(k for k, v in ours.items() if v > 1e-12) == set(ref)
    for k, v in ref.items():
        assert ours[k] == pytest.approx(v, rel=1e-12)


def test_permutation_link_loads_equal_brute_force():
    t = tp.dragonfly(3, 2, 1, groups=4)
    perm = np.random.default_rng(7).permutation(t.n_endpoints)
    ref = brute_force_loads(t, [(s, int(d)) for s, d in enumerate(perm) if s != d])
    ours = _as_dict(t, tp.link_loads(t, "permutation", seed=7))
    for k, v in ref.items():
        assert ours[k] == pytest.approx(v, rel=1e-12)
    assert sum(ours.values()) == pytest.approx(sum(ref.values()))


@pytest.mark.parametrize("dims", [(4, 4, 4), (8, 8, 16), (6, 10)])
def test_torus_all_to_all_load_is_analytic(dims):
    # uniform traffic on a torus: every link of dimension d carries N * m_d / 2 (m_d: mean ring distance);
    # total flow = sum of all pair distances
    a = tp.all_to_all_load(tp.torus(dims))
    assert a["max_link_load"] == pytest.approx(tp.torus_all_to_all_max_load(dims), rel=1e-12)
    s = tp.hop_stats(tp.torus(dims))
    assert a["total_link_load"] == pytest.approx(s["mean_hops"] * s["n_pairs"], rel=1e-12)


# -- dimension-ordered routing ----------------------------------------------------------------------------
def dor_reference(t: tp.Topology, pairs) -> dict:
    """Pure Python: route each pair dimension by dimension, the shorter way round (ties split)."""
    dims, wrap = t.dims, t.wraparound
    strides = [int(np.prod(dims[a + 1:])) for a in range(len(dims))]
    load: dict = {}

    def walk(node, a, direction, target, w):
        k = dims[a]
        c = (node // strides[a]) % k
        while c != target:
            c2 = (c + direction) % k
            nxt = node + (c2 - c) * strides[a]
            load[(node, nxt)] = load.get((node, nxt), 0.0) + w
            node, c = nxt, c2
        return node

    for s, d in pairs:
        node = s
        for a, k in enumerate(dims):
            cs, cd = (node // strides[a]) % k, (d // strides[a]) % k
            if cs == cd:
                continue
            fwd = (cd - cs) % k
            if wrap[a] and k > 2:
                ways = [1] if 2 * fwd < k else [-1] if 2 * fwd > k else [1, -1]
            else:
                ways = [1 if cd > cs else -1]
            ends = [walk(node, a, w, cd, 1 / len(ways)) for w in ways]
            node = ends[0]
    return load


@pytest.mark.parametrize("t", [tp.torus((4, 4)), tp.torus((4, 6, 3)), tp.mesh((3, 5)), tp.ring(8), tp.torus((2, 5))],
                         ids=lambda t: t.name)
def test_dor_equals_reference(t):
    n = t.n_endpoints
    ref = dor_reference(t, [(s, d) for s in range(n) for d in range(n) if s != d])
    ours = _as_dict(t, tp.dor_link_loads(t))
    assert {k for k, v in ours.items() if v > 0} == set(ref)
    for k, v in ref.items():
        assert ours[k] == pytest.approx(v, rel=1e-12)
    perm = np.random.default_rng(3).permutation(n)
    ref = dor_reference(t, [(s, int(d)) for s, d in enumerate(perm)])
    ours = _as_dict(t, tp.dor_link_loads(t, "permutation", seed=3))
    for k, v in ref.items():
        assert ours[k] == pytest.approx(v, rel=1e-12)


@pytest.mark.parametrize("dims", [(4, 4, 4), (8, 8, 16), (5, 6)])
def test_dor_uniform_equals_shortest_path_split_on_tori(dims):
    # by symmetry every link of a dimension carries the same load under uniform traffic, however routed
    t = tp.torus(dims)
    assert tp.dor_link_loads(t).max() == pytest.approx(tp.link_loads(t).max(), rel=1e-12)
    assert tp.dor_link_loads(t).max() == pytest.approx(tp.torus_all_to_all_max_load(dims), rel=1e-12)


@pytest.mark.parametrize("args", [(4, 2, 2, None), (3, 1, 2, 5), (2, 1, 3, 7)])
def test_dragonfly_global_ports_as_documented(args):
    # global port n of group i leads to group n if n < i, else n + 1; ports fill router after router, h each
    a, p, h, groups = args
    t = tp.dragonfly(a, p, h, groups=groups)
    g = t.params["groups"]
    r0 = t.n_endpoints
    group_of = lambda node: (node - r0) // a  # noqa: E731
    seen = {}
    for u, v in t.edges():
        if u >= r0 and v >= r0 and group_of(u) != group_of(v):
            for x, y in ((u, v), (v, u)):
                seen.setdefault(group_of(x), []).append(((x - r0) % a, group_of(y)))
    for i in range(g):
        links = sorted(seen[i], key=lambda rv: rv[1])
        assert [other for _, other in links] == [j for j in range(g) if j != i]     # one link per other group
        for (router, other) in links:
            n = other if other < i else other - 1
            assert router == (n // h) % a


def test_the_short_name_reaches_every_public_name():
    # users reach the network layer as accelbook.topology / `from accelbook.network import topology as tp`;
    # the module gathers names that live in graph, builders, systems, paths, geometry and bisection
    import accelbook

    names = ["PRESETS", "Protocol", "Topology", "all_to_all_load", "bisection_links", "bisection_links_analytic",
             "boardfly", "dor_link_loads", "dragonfly", "fabrics", "fat_tree", "full_mesh", "gpu_cluster",
             "h100_cluster", "hgx_h100", "hop_histogram", "hop_stats", "link_loads", "mesh", "nvl72", "ring",
             "switched", "torus", "torus_all_to_all_max_load", "torus_diameter", "torus_mean_hops", "tpu_axis",
             "tpu_multislice", "tpu_pod", "tpu_slice", "from_edges"]
    assert accelbook.topology is tp
    assert sorted(tp.__all__) == sorted(names)
    for name in names:
        assert getattr(tp, name) is not None
