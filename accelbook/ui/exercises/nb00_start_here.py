"""Exercises of notebook 00: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui.exercises.core import Exercise


def _ridge(chip: str) -> float:
    return get_chip(chip).ridge_point("bf16")


EXERCISES: list[Exercise] = [
    Exercise("ridge-h100", "00", "What is the ridge point of an H100 in dense bf16, in FLOP/byte?",
             lambda: _ridge("h100"), 0.02, "Divide peak FLOP/s by memory bandwidth in bytes/s; both from ab.get_chip('h100').",
             "FLOP/byte"),
    Exercise("ridge-higher", "00", "Which has the higher bf16 ridge point: 'h100' or 'tpu-v5p'?",
             lambda: {"h100" if _ridge("h100") > _ridge("tpu-v5p") else "tpu-v5p"}, hint=
             "A higher ridge means a kernel needs more FLOPs per byte before the math units become the limit."),
    Exercise("v5p-8-chip-gib", "00", "How many GiB of HBM do 8 TPU v5p chips hold together?",
             lambda: 8 * get_chip("tpu-v5p").hbm_bytes / 2**30, 0.01,
             "GiB = 2**30 bytes; the catalogue stores bytes.", "GiB"),
    Exercise("predict-v5p-fp8-gain", "00", "Predict before switching the catalogue chart to fp8: by what factor does "
             "a TPU v5p's dense peak grow from bf16 to fp8?", lambda: get_chip("tpu-v5p").peak_flop_s("fp8")
             / get_chip("tpu-v5p").peak_flop_s("bf16"), 0.02, "Does the v5p's matrix unit have a faster mode for "
             "8-bit floats? Compare its two peaks in the catalogue.", "×"),
    Exercise("kv-bytes-deepseek", "00", "KV-cache bytes per token of DeepSeek-V3 in bf16 (MLA: 61 layers, a latent of "
             "512 and a rotary key of 64 per layer)?", lambda: get_model("deepseek-v3").kv_cache_bytes_per_token("bf16"),
             0.0, "MLA caches L × (d_c + d_r) values per token, 2 bytes each.", "bytes"),
    Exercise("whatif-ridge-2x-hbm", "00", "What if an H100 had twice its HBM bandwidth and the same bf16 peak: what "
             "would its ridge point be, and which work would gain?", lambda: _ridge("h100") / 2, 0.02,
             "I* = P / B: double B.", "FLOP/byte", model_answer="I* = 989.4e12 / 6.7e12 = 148 FLOP/byte, half the "
             "H100's 295. Work below the old ridge (decode, attention over a long KV cache, element-wise layers) runs "
             "up to twice as fast, because memory set its pace; large training GEMMs, far above both ridges, gain "
             "nothing. The H200 is close to this what-if: same peak, 4.8 TB/s, ridge 206."),
]
