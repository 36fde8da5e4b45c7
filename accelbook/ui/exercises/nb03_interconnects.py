"""Exercises of notebook 03: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.network.collectives import estimate as collective_estimate
from accelbook.network.topology import hgx_h100, hop_stats, torus, tpu_slice
from accelbook.specs.measured import allreduce_latency
from accelbook.ui.exercises.core import Exercise


def _torus16_diameter() -> float:
    return hop_stats(torus((16, 16, 16)))["diameter"]


def _ring_busbw() -> float:
    return collective_estimate("all_reduce", 64e9, hgx_h100(nvls=False), "ring").busbw_bytes_per_s / 1e9


def _small_bound() -> set[str]:
    e = collective_estimate("all_reduce", 64 * 2**10, tpu_slice("v5p", (4, 4, 4)))
    return {"latency" if e.latency_s > e.bandwidth_s else "bandwidth"}


def _nvls_busbw() -> float:
    return collective_estimate("all_reduce", 64e9, hgx_h100(nvls=True), "nvls").busbw_bytes_per_s / 1e9


def _latency_share_1mib() -> float:
    e = collective_estimate("all_reduce", 2**20, hgx_h100(nvls=False))
    return 100 * e.latency_s / e.time_s


def _ring_2x_answer() -> str:
    node, fast = hgx_h100(nvls=False), hgx_h100(nvls=False).scaled(bandwidth=2.0)
    big = [collective_estimate("all_reduce", 64e9, t, "ring").busbw_bytes_per_s / 1e9 for t in (node, fast)]
    tiny = [collective_estimate("all_reduce", 1024, t).time_s * 1e6 for t in (node, fast)]
    floor = allreduce_latency("h100").latency_s * 1e6
    return (f"{fast.efficiency:.2f} × {fast.link_bw_bytes_per_s / 1e9:.0f} = {big[1]:.0f} GB/s, twice the {big[0]:.0f}: "
            f"large collectives are bandwidth-bound and scale with the link. A 1 KiB all-reduce stays at {tiny[0]:.1f} "
            f"µs in the model ({tiny[1]:.1f} µs with the faster links; nccl-tests measures about {floor:.0f} µs at 8 KB): "
            "it is almost all fixed and per-step latency, which more bandwidth does not touch. Decode-size messages "
            "need lower latency, not wider links.")


EXERCISES: list[Exercise] = [
    Exercise("torus-diameter-16", "03", "Diameter of a 16×16×16 torus with wraparound?", _torus16_diameter, 0.0,
             "At most half-way round each of the three rings.", "hops"),
    Exercise("ring-busbw-h100", "03", "Model busbw (GB/s) of a large ring all-reduce on 8 H100s?", _ring_busbw, 0.02,
             "A bandwidth-bound ring's busbw is the usable link bandwidth, efficiency × 450 GB/s.", "GB/s"),
    Exercise("small-allreduce-bound", "03", "Is a 64 KiB all-reduce on a v5p 4×4×4 slice latency- or bandwidth-bound?",
             _small_bound, hint="Compare steps × 1 µs with bytes ÷ link bandwidth."),
    Exercise("nvls-busbw-h100", "03", "Model busbw (GB/s) of a large NVLS all-reduce on 8 H100s?", _nvls_busbw, 0.02,
             "Each link carries S(1 + 1/p) each way, so algbw = p/(p+1) × the NVLS rate (0.82 × 0.85 × 450 GB/s); "
             "busbw = algbw × 2(p-1)/p.", "GB/s"),
    Exercise("predict-torus-mean-hops", "03", "Predict before reading the hop histograms: the mean hop count between "
             "two chips of the 8×8×16 torus?", lambda: hop_stats(torus((8, 8, 16)))["mean_hops"], 0.05,
             "The mean distance on a ring of k is about k/4; add the three axes.", "hops"),
    Exercise("predict-latency-share-1mib", "03", "Predict before moving the message slider: what share (%) of a 1 MiB "
             "all-reduce on 8 H100s (NVLS off) is latency, in the model?",
             _latency_share_1mib, 0.2,
             "NCCL picks LL at this size: a fixed 6.6 µs plus 14 steps of 0.6 µs, against 1 MiB × 2·7/8 at LL's cap "
             "of 141 GB/s of bus bandwidth (8 data bytes in each 16).", "%"),
    Exercise("whatif-ring-busbw-2x", "03", "What if every NVLink link of the 8-H100 node had twice the bandwidth: model "
             "busbw (GB/s) of a large ring all-reduce?", lambda: collective_estimate(
                 "all_reduce", 64e9, hgx_h100(nvls=False).scaled(bandwidth=2.0), "ring").busbw_bytes_per_s / 1e9,
             0.02, "A bandwidth-bound ring's busbw is the usable link bandwidth.", "GB/s", model_answer=_ring_2x_answer),
]
