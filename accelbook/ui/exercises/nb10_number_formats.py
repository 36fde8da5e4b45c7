"""Exercises of notebook 10: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.chip import number_formats as nf
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui.exercises.core import Exercise


def _fp4_over_fp8_tpu8i() -> float:
    table = nf.peak_ratio_table([get_chip("tpu-8i")])
    return float(table["ratio"].iloc[0])


def _nvfp4_decode_speedup() -> float:
    return nf.decode_speedup(get_model("llama-3.1-70b"), get_chip("b200"), "nvfp4", "bf16", 8192, 1)


def _nvfp4_memory_share() -> float:
    m = get_model("llama-3.1-70b")
    nv, bf = (nf.serving_memory(m, w, "bf16", 8192, 32)["total_bytes"] for w in ("nvfp4", "bf16"))
    return 100 * nv / bf


def _kv_gb_70b_b64_32k() -> float:
    return nf.serving_memory(get_model("llama-3.1-70b"), "fp8-e4m3", "bf16", 32768, 64)["kv_bytes"] / 1e9


EXERCISES: list[Exercise] = [
    Exercise("e4m3-max", "10", "Largest finite value of FP8 E4M3 (4 exponent bits, bias 7, 3 mantissa bits, OCP rules)?",
             lambda: nf.max_finite("fp8-e4m3"), 0.0,
             "The top exponent code holds numbers except all-ones mantissa (the NaN): (2 − 2^(1−M)) × 2^(15 − 7).", ""),
    Exercise("mxfp4-bits", "10", "Bits per element of MXFP4, counting the E8M0 scale shared by a block of 32?",
             lambda: nf.bits_per_element("mxfp4"), 0.0, "Element bits + scale bits ÷ block size.", "bits"),
    Exercise("fp4-over-fp8-tpu8i", "10", "TPU 8i: dense fp4 peak over dense fp8 peak (from the catalogue)?",
             _fp4_over_fp8_tpu8i, 0.02, "Divide the two peaks of chips.toml; is it 2?", "×"),
    Exercise("weights-70b-fp8-gb", "10", "Llama 3.1 70B's weights in fp8 E4M3, in GB?",
             lambda: get_model("llama-3.1-70b").params * nf.bits_per_element("fp8-e4m3") / 8 / 1e9, 0.02,
             "Parameters × bits per element ÷ 8.", "GB"),
    Exercise("predict-nvfp4-speedup", "10", "Predict: decode step speed-up of NVFP4 weights (KV cache kept in bf16) "
             "over bf16, Llama 3.1 70B on a B200, batch 1, 8,192 tokens of context?", _nvfp4_decode_speedup, 0.02,
             "Memory-bound: the ratio of bytes read. Weights at 4.5 bits, not 4; the KV cache does not shrink.", "×"),
    Exercise("nvfp4-memory-share", "10", "Memory to serve Llama 3.1 70B (batch 32, 8,192 tokens, bf16 KV cache) with "
             "NVFP4 weights, as a percentage of the memory with bf16 weights?", _nvfp4_memory_share, 0.02,
             "Weights at 4.5 bits against 16; the KV cache is the same in both.", "%"),
    Exercise("what-if-long-context-kv", "10", "What if Llama 3.1 70B serves batch 64 at 32,768 tokens of context "
             "with fp8 weights: how many GB does a bf16 KV cache take? What does that say about moving the weights "
             "from fp8 to NVFP4?", _kv_gb_70b_b64_32k, 0.02,
             "KV bytes per token × tokens × batch; compare with 70.6 GB of fp8 weights.", "GB",
             model_answer="The KV cache (about 687 GB) is ten times the fp8 weights (70.6 GB). Moving the weights to "
             "NVFP4 saves about 31 GB, about 4 % of the 758 GB total, and the decode step, which reads all of it, "
             "barely speeds up. At long contexts and large batches the KV cache's format (fp8 or NVFP4 KV, or fewer "
             "KV heads, or MLA) decides memory and speed, not the weights'. The model leaves out the accuracy cost "
             "of a 4-bit KV cache, which the published results here do not measure."),
]
