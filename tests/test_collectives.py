"""Collective cost models: nccl-tests' definitions, alpha-beta terms by hand, algorithm choice."""

from __future__ import annotations

import numpy as np
import pytest

from accelbook.network import collectives as co
from accelbook.network import topology as tp
from accelbook.network.validation import validation_table  # no longer re-exported by collectives (it made a circle)
from accelbook.specs.fabrics import FABRICS
from accelbook.specs.loader import DATA_DIR as DATA


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
    # a 4 x 4 mesh (no wraparound), lines of 4: half the message goes X then Y, half Y then X, so each
    # axis carries 3/4 of S/2 first-hand and 3/4 of S/8 second-hand, both axes at once
    m = tp.mesh((4, 4)).with_links(45e9, 1e-6, 1.0)
    e = co.estimate("all_gather", S, m, "torus")
    assert e.time_s == pytest.approx(2 * 3e-6 + 3 / 4 * (S / 2 + S / 8) / 45e9)
    # scaling-book: gathering over n axes multiplies the bandwidth by n (v5p 16x16x16: ~3 x 180 GB/s algbw)
    cube = tp.tpu_slice("v5p", (16, 16, 16))
    big = co.estimate("all_gather", 1e12, cube, "torus")
    assert big.algbw_bytes_per_s == pytest.approx(3 * 180e9 / (15 / 16 * (1 + 1 / 16 + 1 / 256)), rel=1e-3)


def test_nvls_by_hand():
    h = tp.hgx_h100()
    e = co.estimate("all_reduce", 8e9, h, "nvls")
    # multimem load-reduce + multicast store: S(1 + 1/8) each way at 450 GB/s x 0.82 (protocol) x 0.85
    # (NCCL's nvlsEfficiency for Hopper), after NCCL's fixed 25 us; busbw = algbw x 2*7/8
    t = 25e-6 + 8e9 * (1 + 1 / 8) / (450e9 * 0.82 * 0.85)
    assert e.time_s == pytest.approx(t) and e.protocol == "Simple"
    assert e.busbw_bytes_per_s == pytest.approx(8e9 / t * 1.75)
    # theory without NCCL's efficiency: 2(p-1)/(p+1) x the usable link rate, about 1.56x the ring's
    ideal = co.estimate("all_reduce", 1e13, h, "nvls")
    assert ideal.busbw_bytes_per_s / 0.85 == pytest.approx(2 * 7 / 9 * 450e9 * 0.82, rel=1e-3)
    with pytest.raises(ValueError, match="NVLS"):
        co.estimate("all_reduce", 8e9, tp.hgx_h100(nvls=False), "nvls")


def test_nccl_protocols_on_nvlink_by_hand():
    h = tp.hgx_h100(nvls=False)
    # 8 bytes: LL ring, 6.6 us + 14 steps x 0.6 us (NCCL tuning.cc) and a negligible transfer
    tiny = co.estimate("all_reduce", 8, h)
    assert (tiny.algorithm, tiny.protocol) in {("ring", "LL"), ("tree", "LL")}
    assert tiny.time_s == pytest.approx(6.6e-6 + 14 * 0.6e-6, rel=1e-3)
    # LL's bandwidth is half the link's and capped at 141 GB/s busbw
    ll = co.estimate("all_reduce", 1e10, h, "ring")
    assert ll.protocol == "Simple"
    forced = co._estimate_one("all_reduce", 1e10, h, "ring", h.protocols[0])
    assert forced[1] == pytest.approx(1.75 * 1e10 / 141e9)
    # large: Simple ring, 8.4 us + 14 x 3.4 us + 1.75 S / 369 GB/s
    assert ll.time_s == pytest.approx(8.4e-6 + 14 * 3.4e-6 + 1.75 * 1e10 / (450e9 * 0.82))
    # the protocol moves from LL to LL128 to Simple as the message grows
    order = [co.estimate("all_reduce", s, h).protocol for s in (2**10, 2**24, 2**31)]
    assert order == ["LL", "LL128", "Simple"]


def test_cluster_rings_use_every_rail():
    # 2 nodes x 8 GPUs, 8 NICs of 50 GB/s x 0.82: each of 8 rings crosses nodes through its own NIC,
    # so busbw -> 8 x 41 = 328 GB/s (not one NIC's 41), below NVLink's 369 x 8/7
    c = tp.h100_cluster(2)
    e = co.estimate("all_reduce", 1e12, c, "ring")
    assert e.busbw_bytes_per_s == pytest.approx(8 * 50e9 * 0.82, rel=2e-3)
    # the two node-crossing steps each way pay the NIC's 14 us instead of NVLink's 3.4 us
    assert e.latency_s == pytest.approx(8.4e-6 + (30 - 2) * 3.4e-6 + 2 * 14e-6)
    # hierarchical (serial) is slower than the rail rings for large messages, so NCCL-like choice is ring
    assert co.estimate("all_reduce", 1e10, tp.h100_cluster(4)).algorithm == "ring"
    h = co.estimate("all_reduce", 1e10, tp.h100_cluster(4), "hierarchical")
    assert h.bandwidth_s == pytest.approx(2 * 7 / 8 * 1e10 / (450e9 * 0.82) + 2 * 3 / 4 * 1e10 / 8 / (50e9 * 0.82))


def test_cluster_all_to_all_leaves_through_the_nics():
    # 4 nodes x 8 GPUs: each GPU sends S/32 to each peer, 7/32 of S over NVLink, 24/32 of S out of its NIC
    c = tp.h100_cluster(4)
    S = 1e9
    e = co.estimate("all_to_all", S, c)
    assert e.algorithm == "direct"
    assert e.bandwidth_s == pytest.approx(max(7 / 32 * S / (450e9 * 0.82), 24 / 32 * S / (50e9 * 0.82)))
    assert e.latency_s == pytest.approx(8.4e-6 + 14e-6)  # Simple: fixed cost + one inter-node step
    with pytest.raises(ValueError, match="direct"):
        co.estimate("all_to_all", S, c, "routed")


def test_sliders_scale_every_latency_and_bandwidth():
    h = tp.hgx_h100()
    slow = h.scaled(bandwidth=0.5, latency=2.0)
    assert slow.link_bw_bytes_per_s == h.link_bw_bytes_per_s / 2 and slow.in_network_latency_s == pytest.approx(50e-6)
    assert [p.step_latency_s for p in slow.protocols] == pytest.approx([2 * p.step_latency_s for p in h.protocols])
    c = tp.h100_cluster(2).scaled(2.0, 0.5)
    assert c.params["nic_bw_bytes_per_s"] == 100e9 and c.params["nic_protocols"][-1].step_latency_s == pytest.approx(7e-6)
    # with_links(hop_latency_s=...) sets the bulk protocol's step and moves the others with it
    w = h.with_links(hop_latency_s=6.8e-6)
    assert w.protocols[-1].step_latency_s == pytest.approx(6.8e-6) and w.protocols[0].step_latency_s == pytest.approx(1.2e-6)
    for bad in (0, -1.0, float("nan"), True):
        with pytest.raises(ValueError, match="scale"):
            h.scaled(bandwidth=bad)


def test_tpu_multislice_by_hand():
    # 4 v6e pods of 16x16 over the DCN (12.5 GB/s per chip, 10 us a step from data/clusters.toml):
    # all-reduce = 2 x torus reduce-scatter in a pod + ring all-reduce of S/256 across 4 pods on the DCN
    t = tp.tpu_multislice("v6e", (16, 16), 4)
    assert t.n_endpoints == 1024 and t.kind == "multislice"
    one = tp.tpu_slice("v6e", (16, 16))
    S = 1e9
    lat_in, bw_in = co._torus("reduce_scatter", S, one, 1e-6, 90e9)
    e = co.estimate("all_reduce", S, t)
    assert e.algorithm == "hierarchical"
    assert e.time_s == pytest.approx(2 * (lat_in + bw_in) + 2 * 3 * 10e-6 + 2 * 3 / 4 * (S / 256) / 12.5e9)
    # one pod: the same as the torus algorithm on the slice
    solo = co.estimate("all_reduce", S, tp.tpu_multislice("v6e", (16, 16), 1))
    assert solo.time_s == pytest.approx(co.estimate("all_reduce", S, one, "torus").time_s)
    with pytest.raises(ValueError, match="hierarchical"):
        co.estimate("all_reduce", S, t, "ring")


def test_more_bandwidth_never_slower():
    for bw in (10e9, 50e9, 200e9):
        slow = co.estimate("all_reduce", 1e8, tp.torus((4, 4)).with_links(bw, 1e-6))
        fast = co.estimate("all_reduce", 1e8, tp.torus((4, 4)).with_links(2 * bw, 1e-6))
        assert fast.time_s < slow.time_s


def test_validation_table_reports_errors():
    v = validation_table().set_index("case")
    assert (v["error"] == v["model"] / v["measured"] - 1).all()
    # the ring on NVLink: 450 GB/s x 0.82 protocol efficiency against ~370 measured
    assert abs(v.loc["ring-allreduce-8xh100", "error"]) < 0.02
    # NVLS: S(1 + 1/p) per link at NCCL's 0.85 efficiency against ~480 GB/s measured
    assert abs(v.loc["nvls-allreduce-8xh100", "error"]) < 0.05
    assert v.loc["ib-ring-2-nodes", "metric"] == "busbw per NIC GB/s"
    # the measurements the alpha-beta model misses are kept and shown, not dropped
    assert len(v) >= 7 and (v["error"].abs() > 0.2).any()


def test_validation_table_shows_the_small_message_floor():
    # data/allreduce_latency.toml: 8 KB on 8 H100s at 0.53 GB/s busbw is 8192 * 1.75 / 0.53e9 = 27.05 us;
    # the model's LL ring is 6.6 us fixed + 14 steps x 0.6 us + 8 KB at LL's 141 GB/s cap, about 15.1 us.
    row = validation_table().set_index("case").loc["allreduce-8kib-8xh100"]
    assert row["measured"] == pytest.approx(8192 * 1.75 / 0.53e9 * 1e6, rel=1e-9)
    assert row["protocol"] == "LL" and row["model"] == pytest.approx(6.6 + 14 * 0.6 + 8192 * 1.75 / 141e9 * 1e6, rel=0.01)
    assert row["error"] == pytest.approx(15.1 / 27.05 - 1, abs=0.01)
    # a path of the caller's own keeps only its rows
    assert "allreduce-8kib-8xh100" not in set(validation_table(DATA / "collective_measurements.toml")["case"])


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
    assert d.protocol == "plain"


def test_fabric_figures_come_from_data_with_sources():
    f = tp.fabrics()
    assert f["nvlink4"]["link_bw_bytes_per_s"] == 450e9          # H100 datasheet: 900 GB/s bidirectional
    assert f["ici-v5p-v6e"]["link_bw_bytes_per_s"] == 90e9       # scaling-book: 9e10 B/s one-way per link
    for fab in f.values():
        for key in ("link_bw_bytes_per_s", "hop_latency_s", "efficiency"):
            assert fab[key + "_provenance"].source.date
    assert tp.hgx_h100().link_bw_bytes_per_s == f["nvlink4"]["link_bw_bytes_per_s"]
    # NCCL's protocols and NVLS figures, with the tuner source; the bulk protocol's step is the fabric's
    assert f["nvlink4"]["protocols_source"].url.endswith("tuning.cc")
    assert [p.name for p in f["nvlink4"]["protocols"]] == ["LL", "LL128", "Simple"]
    assert f["nvlink4"]["protocols"][-1].step_latency_s == f["nvlink4"]["hop_latency_s"]
    assert f["nvlink4"]["in_network_efficiency"] == 0.85


def test_fabric_protocols_are_checked(tmp_path, monkeypatch):
    from accelbook.specs import loader as catalogue

    text = (catalogue.DATA_DIR / "fabrics.toml").read_text()
    bad = text.replace("LL128 = [14.0, 1.9, 0.92, 0]", "LL128 = [14.0, 1.9, 1.5, 0]")
    assert bad != text
    d = tmp_path / "data"
    d.mkdir()
    for f in catalogue.DATA_DIR.glob("*.toml"):
        (d / f.name).write_text(f.read_text())
    (d / "fabrics.toml").write_text(bad)
    monkeypatch.setattr(catalogue, "DATA_DIR", d)
    FABRICS.cache_clear()     # the fabric catalogue's cache (fabrics() itself no longer caches)
    try:
        with pytest.raises(catalogue.CatalogueError, match="LL128"):
            tp.fabrics()
    finally:
        monkeypatch.undo()
        FABRICS.cache_clear()


SYSTEMS = [tp.hgx_h100(), tp.hgx_h100(nvls=False), tp.h100_cluster(3), tp.tpu_slice("v5p", (4, 4, 8)),
           tp.tpu_axis("v5e", 4), tp.tpu_multislice("v5e", (4, 4), 3), tp.torus((4, 4)).with_links(50e9, 2e-6),
           tp.fat_tree(4).with_links(50e9, 1e-6), tp.switched(16).with_links(100e9, 1e-6)]


@pytest.mark.parametrize("topo", SYSTEMS, ids=lambda t: t.name)
def test_every_algorithm_is_affine_in_the_message_size(topo):
    # sweep relies on t = latency + bytes x slope holding exactly for every algorithm and protocol
    for c in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        try:
            cands = co._candidates(c, topo, None)
        except ValueError as exc:      # e.g. no broadcast across TPU slices: said, not guessed
            assert topo.kind == "multislice" and c == "broadcast" and "hierarchical" in str(exc)
            continue
        for alg, proto, lat, slope in cands:
            p = next(q for q in co._protocols(topo) if q.name == proto)
            for S in (1.0, 3e3, 7.7e8):
                t_lat, t_bw = co._estimate_one(c, S, topo, alg, p)
                assert t_lat == pytest.approx(lat, rel=1e-12) and t_bw == pytest.approx(slope * S, rel=1e-12)


@pytest.mark.parametrize("topo", SYSTEMS, ids=lambda t: t.name)
def test_sweep_equals_estimate_at_every_size(topo):
    sizes = np.geomspace(8, 2**34, 23)
    for c in ("all_reduce", "all_gather"):
        sw = co.sweep(c, topo, sizes)
        for row, S in zip(sw.itertuples(), sizes):
            e = co.estimate(c, S, topo)
            assert (row.algorithm, row.protocol) == (e.algorithm, e.protocol)
            assert row.time_s == pytest.approx(e.time_s, rel=1e-12)
            assert row.busbw_bytes_per_s == pytest.approx(e.busbw_bytes_per_s, rel=1e-12)
    with pytest.raises(ValueError, match="sizes"):
        co.sweep("all_reduce", topo, [1e6, -1.0])


def test_validation_table_reads_measurements_through_the_catalogue_loader(tmp_path):
    from accelbook.specs import loader as catalogue

    text = (catalogue.DATA_DIR / "collective_measurements.toml").read_text()
    assert 'src = "nccl-tests-issue-212"' in text
    bad = tmp_path / "m.toml"
    bad.write_text(text.replace('src = "nccl-tests-issue-212"', 'src = "nccl-tests-issue-999"', 1))
    with pytest.raises(catalogue.CatalogueError, match="nccl-tests-issue-999"):
        validation_table(bad)
    two = tmp_path / "two.toml"
    two.write_text(text.replace('algorithm = "nvls"\n', 'algorithm = "nvls"\nmeasured_time_us = { value = 1, src = "nccl-tests-issue-212" }\n', 1))
    with pytest.raises(catalogue.CatalogueError, match="exactly one"):
        validation_table(two)


@pytest.mark.parametrize("c,passes", [("all_reduce", 2), ("all_gather", 1), ("reduce_scatter", 1)])
@pytest.mark.parametrize("p", [2, 3, 8, 64])
def test_ring_formulas_are_what_estimate_charges(c, passes, p):
    # the public @njit ring formulas (called by the training and inference kernels) and the collective
    # model's ring on a switched domain with one plain protocol: the same numbers
    S, alpha, B = 3.7e8, 2.5e-6, 150e9
    e = co.estimate(c, S, tp.switched(p).with_links(B, alpha, 1.0), "ring")
    assert e.latency_s == pytest.approx(co.ring_latency_s(passes, p, alpha), rel=1e-12)
    assert e.bandwidth_s == pytest.approx(co.ring_bytes_per_link(passes, S, p) / B, rel=1e-12)
    assert e.time_s == pytest.approx(co.ring_time_s(passes, S, p, alpha, B), rel=1e-12)


def test_ring_time_worked_number_and_inside_a_kernel():
    from numba import njit

    # the docstring's worked number: 2*7*5 us + 2*7/8*1e9/450e9 = 70 us + 3.89 ms
    assert co.ring_time_s(2, 1e9, 8, 5e-6, 450e9) == pytest.approx(70e-6 + 1.75e9 / 450e9, rel=1e-12)
    assert co.ring_time_s(2, 1e9, 1, 5e-6, 450e9) == 0.0

    @njit
    def in_kernel(S):
        return co.ring_time_s(2, S, 8, 5e-6, 450e9)

    assert in_kernel(1e9) == co.ring_time_s(2, 1e9, 8, 5e-6, 450e9)
