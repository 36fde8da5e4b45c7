"""Exercises of notebook 03: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.network.collectives import estimate as collective_estimate
from accelbook.network.topology import hgx_h100, hop_stats, torus, tpu_slice
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
             "NCCL picks LL at this size: a fixed 6.6 µs plus 14 steps of 0.6 µs, against 1 MiB × 2·7/8 at about "
             "half the link rate.", "%"),
    Exercise("whatif-ring-busbw-2x", "03", "What if every NVLink link of the 8-H100 node had twice the bandwidth: model "
             "busbw (GB/s) of a large ring all-reduce?", lambda: collective_estimate(
                 "all_reduce", 64e9, hgx_h100(nvls=False).scaled(bandwidth=2.0), "ring").busbw_bytes_per_s / 1e9,
             0.02, "A bandwidth-bound ring's busbw is the usable link bandwidth.", "GB/s", model_answer="0.82 × 900 = "
             "738 GB/s, twice the 369: large collectives are bandwidth-bound and scale with the link. A 1 KiB "
             "all-reduce stays at about 15 µs: it is almost all NCCL's fixed and per-step latency, which more "
             "bandwidth does not touch. Decode-size messages need lower latency, not wider links."),
]
