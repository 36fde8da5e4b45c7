"""Collective cost models: nccl-tests' definitions, alpha-beta terms by hand, algorithm choice."""

from __future__ import annotations

import pytest

from accelbook import collectives as co
from accelbook import topology as tp


def test_bus_factors_are_nccl_tests():
    # nccl-tests doc/PERFORMANCE.md: allreduce 2(n-1)/n, allgather/reducescatter/alltoall (n-1)/n, bcast 1
    assert co.bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    assert co.bus_factor("all_gather", 8) == pytest.approx(7 / 8)
    assert co.bus_factor("broadcast", 8) == 1.0


def test_ring_all_reduce_by_hand():
    # 8 ranks on a switch, 100 GB/s per direction, 1 us per step, S = 1 GB:
    # t = 2*7 * 1e-6 + 2*7/8 * 1e9 / 1e11 = 14 us + 17.5 ms; busbw -> 1e9/t * 1.75
    topo = tp.switched(8).with_links(100e9, 1e-6, 1.0, False)
    e = co.estimate("all_reduce", 1e9, topo, "ring")
    t = 14e-6 + 1.75 * 1e9 / 100e9
    assert e.time_s == pytest.approx(t)
    assert e.busbw_bytes_per_s == pytest.approx(1e9 / t * 1.75)
    # bandwidth-bound: busbw tends to the link bandwidth whatever the ring size
    big = co.estimate("all_reduce", 1e12, tp.switched(64).with_links(100e9, 1e-6, 1.0), "ring")
    assert big.busbw_bytes_per_s == pytest.approx(100e9, rel=1e-3)


def test_small_messages_are_latency_bound_and_pick_the_tree():
    topo = tp.switched(64).with_links(100e9, 5e-6, 1.0, False)
    small = co.estimate("all_reduce", 1024, topo)
    assert small.algorithm == "tree" and small.latency_s > small.bandwidth_s
    large = co.estimate("all_reduce", 1e10, topo)
    assert large.algorithm == "ring" and large.bandwidth_s > 100 * large.latency_s


def test_torus_all_gather_by_hand():
    # one axis of 16 with wraparound, 90 GB/s links each way: bidirectional ring, 2 links
    # t = (16//2) * 1 us + 15/16 * S / (2 * 90e9)
    axis = tp.torus((16,)).with_links(90e9, 1e-6, 1.0)
    S = 1e9
    e = co.estimate("all_gather", S, axis, "torus")
    assert e.time_s == pytest.approx(8e-6 + 15 / 16 * S / 180e9)
    # a 4 x 4 mesh (no wraparound): two passes over lines of 4, the second on a quarter of the data
    m = tp.mesh((4, 4)).with_links(45e9, 1e-6, 1.0)
    e = co.estimate("all_gather", S, m, "torus")
    assert e.time_s == pytest.approx(2 * 3e-6 + 3 / 4 * S / 45e9 + 3 / 4 * S / 4 / 45e9)


def test_nvls_theory_and_the_hierarchy():
    h = tp.hgx_h100()
    e = co.estimate("all_reduce", 8e9, h, "nvls")
    # each GPU sends and receives S once at 0.82 x 450 GB/s: algbw -> 369 GB/s, busbw x 1.75
    assert e.algbw_bytes_per_s == pytest.approx(8e9 / (2 * 2e-6 + 8e9 / (450e9 * 0.82)))
    c = tp.h100_cluster(4)
    assert co.estimate("all_reduce", 8e9, c).algorithm == "hierarchical"


def test_more_bandwidth_never_slower():
    for bw in (10e9, 50e9, 200e9):
        slow = co.estimate("all_reduce", 1e8, tp.torus((4, 4)).with_links(bw, 1e-6))
        fast = co.estimate("all_reduce", 1e8, tp.torus((4, 4)).with_links(2 * bw, 1e-6))
        assert fast.time_s < slow.time_s


def test_validation_table_reports_errors():
    v = co.validation_table().set_index("case")
    assert (v["error"] == v["model"] / v["measured"] - 1).all()
    # the ring on NVLink: 450 GB/s x 0.82 protocol efficiency against ~370 measured
    assert abs(v.loc["ring-allreduce-8xh100", "error"]) < 0.02
    # the measurements the alpha-beta model misses are kept and shown, not dropped
    assert len(v) >= 7 and (v["error"].abs() > 0.2).any()


@pytest.mark.parametrize("bad", [
    dict(collective="allreduce"), dict(message_bytes=0), dict(message_bytes=float("nan")),
    dict(algorithm="nvls"), dict(algorithm="bogus"),
])
def test_clear_errors(bad):
    args = dict(collective="all_reduce", message_bytes=1e6, topology=tp.ring(8), algorithm=None)
    args.update(bad)
    with pytest.raises(ValueError):
        co.estimate(**args)


def test_routed_all_to_all_by_hand():
    # ring of 8, uniform all-to-all: busiest directed link carries N * m / 2 = 8 * 2 / 2 = 8 pair-messages
    # (m = mean ring distance = (0+1+2+3+4+3+2+1)/8 = 2); each message S/8; plus diameter 4 x alpha
    r = tp.ring(8).with_links(100e9, 1e-6, 1.0)
    S = 8e8
    e = co.estimate("all_to_all", S, r)
    assert e.algorithm == "routed"
    assert e.time_s == pytest.approx(4e-6 + 8 * (S / 8) / 100e9)
    # a switched domain uses the direct algorithm: every GPU sends (p-1)/p of S over its own link
    d = co.estimate("all_to_all", S, tp.switched(8).with_links(100e9, 1e-6, 1.0))
    assert d.algorithm == "direct" and d.time_s == pytest.approx(1e-6 + 7 / 8 * S / 100e9)


def test_fabric_figures_come_from_data_with_sources():
    f = tp.fabrics()
    assert f["nvlink4"]["link_bw_bytes_per_s"] == 450e9          # H100 datasheet: 900 GB/s bidirectional
    assert f["ici-v5p-v6e"]["link_bw_bytes_per_s"] == 90e9       # scaling-book: 9e10 B/s one-way per link
    for fab in f.values():
        for key in ("link_bw_bytes_per_s", "hop_latency_s", "efficiency"):
            assert fab[key + "_provenance"].source.date
    assert tp.hgx_h100().link_bw_bytes_per_s == f["nvlink4"]["link_bw_bytes_per_s"]
