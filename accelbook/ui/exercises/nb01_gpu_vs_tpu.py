"""Exercises of notebook 01: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.chip.roofline import layer_roofline
from accelbook.economics import training_tokens_per_s, usd_per_token
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.training.mfu import counted_flops_per_token
from accelbook.ui.exercises.core import Exercise


def _decode_ffn_bound() -> set[str]:
    df = layer_roofline(get_model("llama-3.1-70b"), get_chip("h100"), "decode", 1, 4096)
    return {df.loc[df["op"] == "FFN up + gate", "bound"].iloc[0]}


def _cost_v5p() -> float:
    m, c = get_model("llama-3.1-70b"), get_chip("tpu-v5p")
    return usd_per_token(training_tokens_per_s(m, c, 0.5, 4096), c) * 1e6


def _batch_to_ridge() -> float:
    # GEMM of T tokens with a k×n weight: I = 2Tkn / (b(Tk + kn + Tn)) ≈ T / b for T << k, n (b = 2 bytes)
    # so the decode GEMM turns compute-bound near T = b · I* = 2 · (P/B) / 2 = I* tokens.
    return get_chip("h100").ridge_point("bf16")


def _decode_layer_s(chip: str) -> float:
    # the roofline dashboard's default view: Llama 3.1 70B decode, batch 8, 4,096 tokens of context
    return float(layer_roofline(get_model("llama-3.1-70b"), get_chip(chip), "decode", 8, 4096)["t_s"].sum())


def _usd_per_m_training(chip: str, mfu: float = 0.40) -> float:
    # the training-cost dashboard's defaults: Llama 3.1 70B, s = 4,096, MFU 40 %, list price
    c = get_chip(chip)
    return usd_per_token(training_tokens_per_s(get_model("llama-3.1-70b"), c, mfu, 4096), c) * 1e6


def _price_match_answer() -> str:
    h, p = get_chip("h100"), get_chip("tpu-v5p")
    ratio = _usd_per_m_training("h100") / _usd_per_m_training("tpu-v5p")
    return (f"USD per token at equal MFU is price ÷ peak: {h.price_usd_per_hour:.2f}/{h.peak_flop_s('bf16') / 1e12:.1f} against "
            f"{p.price_usd_per_hour:.2f}/{p.peak_flop_s('bf16') / 1e12:.0f} USD per hour per TFLOP/s, so an H100 token costs "
            f"{ratio:.2f}× a v5p token and the H100 breaks even at {1 / ratio:.2f} × its list price, a "
            f"{100 * (1 - 1 / ratio):.0f} % discount. Committed-use discounts are larger than that, but they are offered "
            "on TPUs too: the H100 wins per token only if the share of its list price it pays is under "
            f"{1 / ratio:.2f} × the share the v5p pays. And equal MFU is the weak assumption: a chip that reaches 10 % "
            "more MFU needs 10 % less discount. Compare chips at the MFU each reaches on your model (notebook 04), not "
            "at one MFU.")


def _full_over_causal(model: str, seq_len: int) -> float:
    # MFU is proportional to the FLOPs counted per token: full over causal attention, less one, in %
    m = get_model(model)
    return 100 * (counted_flops_per_token(m, seq_len, "full") / counted_flops_per_token(m, seq_len, "causal") - 1)


EXERCISES: list[Exercise] = [
    Exercise("decode-bound", "01", "Decoding Llama 3.1 70B at batch 1 on an H100: is the FFN GEMM 'compute' "
             "or 'memory' bound?", _decode_ffn_bound, hint="Count FLOPs per byte of weights read when only one "
             "token multiplies each weight."),
    Exercise("batch-to-ridge", "01", "About how many tokens per step must a bf16 decode GEMM process before it "
             "turns compute-bound on an H100? (within 30%)", _batch_to_ridge, 0.30,
             "For T tokens and a k×n weight, I = 2Tkn / (2(Tk + kn + Tn)) ≈ T when T is much smaller than k and n.",
             "tokens"),
    Exercise("cost-v5p", "01", "USD per million training tokens for Llama 3.1 70B (s = 4096) on TPU v5p at 50% MFU "
             "and list price?", _cost_v5p, 0.03,
             "tokens/s = MFU·P / C_train with C_train = model.flops_per_token(4096, training=True); "
             "then price per second / tokens per second.", "USD"),
    Exercise("predict-v5p-decode-ratio", "01", "Predict before moving the roofline sliders: at the default view "
             "(Llama 3.1 70B decode, batch 8, 4,096 tokens of context), how many times longer does one layer take on a "
             "TPU v5p than on an H100?", lambda: _decode_layer_s("tpu-v5p") / _decode_layer_s("h100"), 0.03,
             "Which bound holds for every operation at batch 8? Then only one number of each chip matters.", "×"),
    Exercise("predict-h100-v5p-cost-ratio", "01", "Predict before moving the training-cost sliders: at equal MFU "
             "(40 %) and list prices, how many times more does a training token cost on an H100 than on a TPU v5p?",
             lambda: _usd_per_m_training("h100") / _usd_per_m_training("tpu-v5p"), 0.03,
             "At equal MFU, USD per token ∝ price per hour ÷ peak FLOP/s; the model's FLOPs per token cancel.", "×"),
    Exercise("mfu-full-vs-causal-8b", "01", "By how many % is Llama 3.1 8B's MFU at 8,192 tokens higher when "
             "attention is counted full rather than causal (the same run, the same tokens/s)?",
             lambda: _full_over_causal("llama-3.1-8b", 8192), 0.03,
             "MFU ∝ FLOPs counted per token. Causal counting halves the attention-score term, 6·L·s·d_attn of "
             "training FLOPs per token with full attention; compare it with 6 × the parameters.", "%"),
    Exercise("whatif-h100-price-match", "01", "What if Google Cloud cut the H100's price: at what fraction of its "
             "list price (the dashboard's 'price × list') would an H100 train Llama 3.1 70B as cheaply per token as a "
             "TPU v5p at list price, both at 40 % MFU?",
             lambda: _usd_per_m_training("tpu-v5p") / _usd_per_m_training("h100"), 0.03,
             "Invert the cost ratio of your second prediction.", "× list",
             model_answer=_price_match_answer),
]
