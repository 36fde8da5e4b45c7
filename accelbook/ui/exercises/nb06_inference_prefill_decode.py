"""Exercises of notebook 06: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.inference import estimate as inference_estimate
from accelbook.specs.models import bytes_per_element, get_model
from accelbook.ui.exercises.core import Exercise


def _decode_bound_b1() -> set[str]:
    return {inference_estimate("llama-3.1-70b", "h200", 1, 1, 1024, 256, "fp8").decode_bound}


def _h200x8(batch: int, context: int = 2048, output: int = 256):
    # the inference dashboard's defaults: Llama 3.1 70B on 8 H200, TP8, fp8 weights, 2,048 in, 256 out
    return inference_estimate("llama-3.1-70b", "h200", 8, batch, context, output, "fp8", tp=8)


def _mha_kv_bytes_70b() -> float:
    # Llama 3.1 70B with one K and one V head per query head (multi-head attention) instead of GQA's 8
    m = get_model("llama-3.1-70b")
    return 2 * m.n_layers * m.n_heads * m.d_head * bytes_per_element("bf16")


EXERCISES: list[Exercise] = [
    Exercise("kv-bytes-70b", "06", "KV-cache bytes per token of Llama 3.1 70B in bf16 (80 layers, 8 KV heads of 128)?",
             lambda: get_model("llama-3.1-70b").kv_cache_bytes_per_token("bf16"), 0.0,
             "2 (K and V) × layers × KV heads × head size × 2 bytes.", "bytes"),
    Exercise("decode-bound-b1", "06", "Decoding Llama 3.1 70B at batch 1 on one H200 in fp8: 'memory' or 'compute' bound?",
             _decode_bound_b1,
             hint="Each token multiplies every weight once: 2 FLOPs per byte of fp8 weights, far below the ridge."),
    Exercise("predict-batch64-chip-gain", "06", "Predict before moving the batch slider: at the dashboard's defaults "
             "(Llama 3.1 70B, 8 H200, TP8, fp8, 2,048 tokens in, 256 out), how many times more tokens/s per chip does "
             "batch 64 give than batch 1?", lambda: _h200x8(64).tokens_per_s_per_chip / _h200x8(1).tokens_per_s_per_chip,
             0.05, "A decode step reads the weights once whatever the batch, but every request also needs its "
             "prefill, which is compute-bound.", "×"),
    Exercise("tpot-b1-one-h200", "06", "TPOT (ms) of Llama 3.1 70B in fp8 at batch 1 on one H200 (2,048 tokens "
             "in, 256 out)?", lambda: inference_estimate("llama-3.1-70b", "h200", 1, 1, 2048, 256, "fp8").tpot_s * 1e3,
             0.03, "The weights (less the embedding table) ÷ the achievable 4.15 TB/s, plus the KV cache's read.", "ms"),
    Exercise("max-batch-32k", "06", "Largest batch of 32,768-token sequences (32,512 in, 256 out) that fits on 8 H200 "
             "with fp8 weights and KV cache (TP8)?", lambda: _h200x8(8, 32768 - 256).max_batch_size, 0.02,
             "(usable memory − weights) ÷ (KV bytes per token in fp8 × 32,768).", "sequences"),
    Exercise("whatif-mha-kv-70b", "06", "What if Llama 3.1 70B used multi-head attention (64 KV heads, one per query "
             "head) instead of grouped-query attention's 8: how many bytes of KV cache per token in bf16?",
             _mha_kv_bytes_70b, 0.0, "2 (K and V) × layers × KV heads × head size × 2 bytes, with 64 KV heads.", "bytes",
             model_answer="2 × 80 × 64 × 128 × 2 = 2,621,440 bytes, 8× GQA's 327,680: a 32K-token sequence would "
             "hold 86 GB of KV cache in bf16, more than an H200's usable memory. The largest batch at long context "
             "falls about 8-fold, and each decode step reads 8× the KV bytes per sequence, so attention, not the "
             "weights, sets the step time at long contexts. That is why Llama 2 70B and 3 moved to GQA and "
             "DeepSeek-V3 to MLA: the KV cache, not the weights, caps batch and throughput in serving."),
]
