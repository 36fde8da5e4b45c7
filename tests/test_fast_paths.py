"""The shortcuts taken for slider speed give exactly what the plain computation gives: the router's
guessed cut (long runs of tokens, where the guess settles and sometimes misses), the graph builder's
radix sorts, the chip-design bisection's early stop, the migration bisection without copies, the
fleet's rate matrix, and the cached TCO inputs."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from naive_moe import reference_routing

from accelbook import moe
from accelbook.chip import design as cd
from accelbook.chip.design_die import components, matrix_power, throughput
from accelbook.economics import fleet, migration, tco
from accelbook.network.graph import from_edges

ROUTING_FIELDS = ("loads", "processed", "dropped", "groups_hist", "choices", "kept", "bias")


@pytest.mark.parametrize("kw", [
    dict(n_tokens=6000, n_experts=32, top_k=12, skew=0.3, n_batches=2),
    dict(n_tokens=4000, n_experts=64, top_k=3, skew=1.5, bias_rate=0.1, drift=2.0, n_batches=3, capacity_factor=1.0),
    dict(n_tokens=3000, n_experts=64, top_k=8, n_groups=8, node_limit=2, skew=0.8, n_batches=2),
    dict(n_tokens=2000, n_experts=128, top_k=6, n_groups=16, node_limit=1, bias_rate=0.2, n_batches=3),
], ids=["many-of-few", "skewed-bias-drift", "node-limit-2", "node-limit-1"])
def test_router_guessed_cut_equals_reference_on_long_runs(kw):
    r = moe.simulate_routing(**kw)
    for name, want in zip(ROUTING_FIELDS, reference_routing(**kw)):
        np.testing.assert_array_equal(getattr(r, name), want, err_msg=name)


def _plain_csr(n_nodes, edges):
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    e = e[e[:, 0] != e[:, 1]]
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    key = np.unique(lo * n_nodes + hi)
    lo, hi = key // n_nodes, key % n_nodes
    both = np.sort(np.concatenate([lo * n_nodes + hi, hi * n_nodes + lo]))
    indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(np.bincount(both // n_nodes, minlength=n_nodes))
    return indptr, both % n_nodes


@pytest.mark.parametrize("n_nodes", [1, 2, 7, 500, 2**16, 2**16 + 3])
def test_from_edges_equals_sorting_both_directions(n_nodes):
    rng = np.random.default_rng(n_nodes)
    edges = rng.integers(0, n_nodes, (3 * n_nodes + 4, 2))
    t = from_edges("t", "test", n_nodes, n_nodes, edges)
    indptr, indices = _plain_csr(n_nodes, edges)
    np.testing.assert_array_equal(t.indptr, indptr)
    np.testing.assert_array_equal(t.indices, indices)


@pytest.mark.parametrize("power_w", [150.0, 250.0, 400.0])
def test_design_bisection_early_stop_equals_200_halvings(power_w):
    p = cd.params()
    M, S, N = np.meshgrid(np.arange(20.0, 500.0, 40.0), np.arange(0.0, 300.0, 60.0), np.arange(0, 7))
    comp = components(p, M.ravel(), S.ravel(), N.ravel(), p.h100_split["io_mm2"])
    nd = cd.need(cd.TrainingWorkload(), p)
    got = throughput(p, comp, nd, power_w)
    # the plain loop over every design (as first written): the roofline, then 200 halvings where over
    C = comp["peak_flop_s"]
    f = np.minimum(1.0, comp["sram_bytes"] / nd.resident_bytes)
    Mh, Ms = (1.0 - f) * nd.stream_bytes, f * nd.stream_bytes
    e_mem = Mh * p.hbm_j_per_byte + Ms * p.sram_j_per_byte
    with np.errstate(divide="ignore", invalid="ignore"):
        x_h = np.where(Mh > 0, comp["hbm_bw_bytes_per_s"] / np.where(Mh > 0, Mh, 1.0), np.inf)
        x_s = np.where(Ms > 0, comp["sram_bw_bytes_per_s"] / np.where(Ms > 0, Ms, 1.0), np.inf)
    x_roof = np.stack(np.broadcast_arrays(C / nd.flops, x_h, x_s)).min(axis=0)

    def power(x):
        return comp["static_power_w"] + x * e_mem + matrix_power(p, x, nd.flops, C)

    over = power(x_roof) > power_w
    assert over.any()
    lo, hi = np.zeros_like(x_roof), np.where(over, x_roof, 0.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        ok = power(mid) <= power_w
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    want = np.where(over, lo, x_roof)
    want = np.where(nd.resident_bytes <= comp["hbm_bytes"] + comp["sram_bytes"], want, 0.0)
    np.testing.assert_array_equal(got["units_per_s"], want)


def _break_even_with_copies(m):
    """The bisection as first written: a copy of the migration per trial volume."""
    if m.usd_per_m_tokens_new >= m.usd_per_m_tokens_old:
        return math.inf
    lo, hi = 0.0, max(1.0, m.volume_m_tokens_per_month)
    while migration.payback_months(replace(m, volume_m_tokens_per_month=hi)) == math.inf:
        hi *= 2
        if hi > 1e15:
            return math.inf
    for _ in range(60):
        mid = (lo + hi) / 2
        if migration.payback_months(replace(m, volume_m_tokens_per_month=mid)) == math.inf:
            lo = mid
        else:
            hi = mid
    return hi


@pytest.mark.parametrize("old,new,volume,growth,churn", [(2.0, 1.2, 16384, 0.05, 0.05), (1.0, 0.9, 10, 0.0, 0.0),
                                                          (3.0, 0.5, 1e6, -0.1, 0.2), (1.0, 1.5, 100, 0.0, 0.05)])
def test_break_even_volume_equals_bisection_over_copies(old, new, volume, growth, churn):
    m = migration.Migration(old, new, volume, growth, churn_per_month=churn)
    assert migration.break_even_volume(m) == _break_even_with_copies(m)


def test_fleet_rates_in_any_row_order_and_duplicates_refused():
    ws, ps = fleet.example_fleet()
    rates = fleet.default_rates(ws, ps)
    a = fleet.place(ws, ps, rates)
    b = fleet.place(ws, ps, rates.sample(frac=1.0, random_state=3))
    assert a.usd_per_month == b.usd_per_month
    pd.testing.assert_frame_equal(a.hours, b.hours)
    with pytest.raises(ValueError, match="duplicate"):
        fleet.place(ws, ps, pd.concat([rates, rates.iloc[:1]]))


def test_tco_inputs_cached_copies_are_independent():
    a = tco.tco_inputs()
    a["purchase_usd"].clear()
    a["pue"] = -1.0
    b = tco.tco_inputs()
    assert b["purchase_usd"] and b["pue"] > 0
    assert b == tco.tco_inputs()
