"""Paper-and-pencil problems of notebook 00: the catalogue, ridge points and counts derived from a model's shape
(see accelbook.ui.course.hand)."""

from __future__ import annotations

from accelbook.chip.roofline import attainable_flop_s, ridge_point
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt

_BF16 = 2   # bytes of one bf16 element


def _peak_bw(chip: str, precision: str = "bf16") -> tuple[float, float]:
    c = get_chip(chip)
    return c.peak_flop_s(precision), c.hbm_bw_bytes_per_s


def _ridge(chip: str, precision: str = "bf16") -> float:
    return float(ridge_point(*_peak_bw(chip, precision)))


def _ridge_given(chip: str):
    def given():
        p, b = _peak_bw(chip)
        return {"P": p / 1e12, "B": b / 1e12}
    return given


def _ridge_steps(g):
    return [f"I* = P / B = {fmt(g['P'])} TFLOP/s ÷ {fmt(g['B'])} TB/s = {fmt(g['P'] / g['B'])} FLOP/byte"]


def _shape_8b():
    m = get_model("llama-3.1-8b")
    return {"L": m.n_layers, "d": m.d_model, "H": m.n_heads, "Hkv": m.kv_heads, "dh": m.d_head, "dff": m.d_ff,
            "V": m.vocab_size, "s": 4096}


def _attn(g):
    """Weights of one attention block: Q and O are d × H·d_h, K and V d × H_kv·d_h."""
    return 2 * g["d"] * g["H"] * g["dh"] + 2 * g["d"] * g["Hkv"] * g["dh"]


def _params(g):
    layer = _attn(g) + 3 * g["d"] * g["dff"] + 2 * g["d"]
    return g["L"] * layer + 2 * g["V"] * g["d"] + g["d"]


def _params_steps(g):
    a, f = _attn(g), 3 * g["d"] * g["dff"]
    layer = a + f + 2 * g["d"]
    return [f"attention = 2·d·H·d_h + 2·d·H_kv·d_h = 2 × {g['d']} × {g['H']} × {g['dh']} + 2 × {g['d']} × {g['Hkv']} × "
            f"{g['dh']} = {fmt(a)}",
            f"FFN (SwiGLU: gate, up, down) = 3·d·d_ff = 3 × {g['d']} × {g['dff']} = {fmt(f)}",
            f"one layer = {fmt(a)} + {fmt(f)} + 2 norms × {g['d']} = {fmt(layer)}",
            f"embedding + LM head (not tied) = 2·V·d = 2 × {g['V']} × {g['d']} = {fmt(2 * g['V'] * g['d'])}",
            f"N = L × layer + 2·V·d + final norm d = {g['L']} × {fmt(layer)} + {fmt(2 * g['V'] * g['d'])} + {g['d']} "
            f"= {fmt(_params(g))}"]


def _train_flops(g):
    n_mm = g["L"] * (_attn(g) + 3 * g["d"] * g["dff"]) + g["V"] * g["d"]
    return n_mm, 6 * n_mm + 12 * g["L"] * g["H"] * g["dh"] * g["s"]


def _train_flops_steps(g):
    n_mm, c = _train_flops(g)
    attn = 12 * g["L"] * g["H"] * g["dh"] * g["s"]
    return [f"N_mm = L·(attention + FFN) + V·d (LM head) = {g['L']} × ({fmt(_attn(g))} + {fmt(3 * g['d'] * g['dff'])}) + "
            f"{g['V']} × {g['d']} = {fmt(n_mm)}",
            f"weights: 6·N_mm = {fmt(6 * n_mm)} FLOP",
            f"attention: 12·L·H·d_h·s = 12 × {g['L']} × {g['H']} × {g['dh']} × {g['s']} = {fmt(attn)} FLOP",
            f"C = {fmt(6 * n_mm)} + {fmt(attn)} = {fmt(c)} FLOP per token"]


def _mla():
    m = get_model("deepseek-v3")
    return {"L": m.n_layers, "dc": m.mla.kv_lora_rank, "dr": m.mla.qk_rope_head_dim, "b": _BF16}


def _kv_seq():
    m = get_model("llama-3.1-8b")
    return {"L": m.n_layers, "Hkv": m.kv_heads, "dh": m.d_head, "b": _BF16, "s": 8192}


def _kv_seq_bytes(g):
    return g["s"] * 2 * g["L"] * g["Hkv"] * g["dh"] * g["b"]


def _fp8_ridges():
    (ph, bh), (pv, bv) = _peak_bw("h100", "fp8"), _peak_bw("tpu-v5p", "fp8")
    return {"Ph": ph / 1e12, "Bh": bh / 1e12, "Pv": pv / 1e12, "Bv": bv / 1e12}


def _fp8_ratio_steps(g):
    rh, rv = g["Ph"] / g["Bh"], g["Pv"] / g["Bv"]
    return [f"H100 fp8: I* = {fmt(g['Ph'])} ÷ {fmt(g['Bh'])} = {fmt(rh)} FLOP/byte",
            f"TPU v5p fp8 (runs at its bf16 rate): I* = {fmt(g['Pv'])} ÷ {fmt(g['Bv'])} = {fmt(rv)} FLOP/byte",
            f"factor = {fmt(rh)} ÷ {fmt(rv)} = {fmt(rh / rv)}: in fp8 a GEMM needs that many times more reuse, "
            "so a batch that many times larger, on the H100 before it is compute-bound"]


def _h100_h200():
    (p1, b1), (p2, b2) = _peak_bw("h100"), _peak_bw("h200")
    return {"P1": p1 / 1e12, "B1": b1 / 1e12, "P2": p2 / 1e12, "B2": b2 / 1e12}


def _h200_steps(g):
    r1, r2 = g["P1"] / g["B1"], g["P2"] / g["B2"]
    return [f"H100: I* = {fmt(g['P1'])} ÷ {fmt(g['B1'])} = {fmt(r1)} FLOP/byte",
            f"H200: I* = {fmt(g['P2'])} ÷ {fmt(g['B2'])} = {fmt(r2)} FLOP/byte",
            f"ratio = {fmt(r2)} ÷ {fmt(r1)} = {fmt(r2 / r1)} (the same peak, so it is B_H100 ÷ B_H200)",
            "no: the H200 added bandwidth and kept the peak, so it needs less reuse than the H100"]


def _kv_two():
    a, b = get_model("deepseek-v3"), get_model("llama-3.1-70b")
    return {"La": a.n_layers, "dc": a.mla.kv_lora_rank, "dr": a.mla.qk_rope_head_dim,
            "Lb": b.n_layers, "Hkv": b.kv_heads, "dh": b.d_head}


def _kv_two_steps(g):
    a, b = g["La"] * (g["dc"] + g["dr"]), 2 * g["Lb"] * g["Hkv"] * g["dh"]
    return [f"DeepSeek-V3 (MLA): L·(d_c + d_r) = {g['La']} × ({g['dc']} + {g['dr']}) = {fmt(a)} values per token",
            f"Llama 3.1 70B (GQA): 2·L·H_kv·d_h = 2 × {g['Lb']} × {g['Hkv']} × {g['dh']} = {fmt(b)} values per token",
            f"ratio = {fmt(b)} ÷ {fmt(a)} = {fmt(b / a)} (the bytes per element cancel)"]


def _whatif():
    p, b = _peak_bw("h100")
    return {"P": p / 1e12, "B": b / 1e12, "I": 200}


def _whatif_answer(g):
    return min(g["P"], 2 * g["I"] * g["B"]) / min(g["P"], g["I"] * g["B"])


def _whatif_steps(g):
    now, new = min(g["P"], g["I"] * g["B"]), min(g["P"], 2 * g["I"] * g["B"])
    return [f"now: min(P, I·B) = min({fmt(g['P'])}, {g['I']} × {fmt(g['B'])}) = {fmt(now)} TFLOP/s (memory-bound)",
            f"2× HBM: min({fmt(g['P'])}, {g['I']} × {fmt(2 * g['B'])}) = {fmt(new)} TFLOP/s: the new ridge "
            f"{fmt(g['P'] / (2 * g['B']))} FLOP/byte is below {g['I']}, so the kernel is now compute-bound",
            f"speed-up = {fmt(new)} ÷ {fmt(now)} = {fmt(new / now)}"]


def _attainable_ratio(g):
    p, b = _peak_bw("h100")
    return float(attainable_flop_s(g["I"], p, 2 * b) / attainable_flop_s(g["I"], p, b))


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb00-ridge-h100-bf16", "00", "hand",
        "An H100 peaks at {P:,.1f} TFLOP/s dense in bf16 and reads its HBM at {B:.2f} TB/s. What is its bf16 ridge "
        "point, the arithmetic intensity at which memory stops setting the pace?",
        _ridge_given("h100"), _ridge_steps, lambda g: g["P"] / g["B"], lambda g: _ridge("h100"),
        "FLOP/byte", "accelbook.chip.roofline.ridge_point; Williams, Waterman and Patterson, Roofline, CACM 2009"),
    Problem(
        "hand-nb00-ridge-b200-bf16", "00", "hand",
        "A B200 peaks at {P:,.0f} TFLOP/s dense in bf16 and reads its HBM at {B:.1f} TB/s. What is its bf16 ridge "
        "point?",
        _ridge_given("b200"), _ridge_steps, lambda g: g["P"] / g["B"], lambda g: _ridge("b200"),
        "FLOP/byte", "accelbook.chip.roofline.ridge_point; Williams, Waterman and Patterson, Roofline, CACM 2009"),
    Problem(
        "hand-nb00-params-llama31-8b", "00", "hand",
        "Llama 3.1 8B has {L} layers of width d = {d}, {H} query heads and {Hkv} KV heads of d_h = {dh}, a SwiGLU FFN "
        "of width {dff:,}, RMSNorms (d parameters each, two per layer and one at the end) and a vocabulary of {V:,} "
        "tokens with an untied LM head. How many parameters does it have?",
        _shape_8b, _params_steps, _params, lambda g: get_model("llama-3.1-8b").params,
        "parameters", "accelbook.specs.models.Model.params", 0.0),
    Problem(
        "hand-nb00-train-flops-8b", "00", "hand",
        "Take Llama 3.1 8B's shape: {L} layers, d = {d}, {H} query heads and {Hkv} KV heads of d_h = {dh}, SwiGLU FFN "
        "width {dff:,}, vocabulary {V:,}. How many training FLOPs does one token cost at a context of s = {s:,}, counted "
        "as PaLM does (6 per matmul weight, LM head included, plus 12·L·H·d_h·s for attention)?",
        _shape_8b, _train_flops_steps, lambda g: _train_flops(g)[1],
        lambda g: get_model("llama-3.1-8b").flops_per_token(g["s"], training=True),
        "FLOP", "accelbook.specs.models.Model.flops_per_token; Chowdhery et al., PaLM, 2022, appendix B"),
    Problem(
        "hand-nb00-kv-deepseek-v3", "00", "hand",
        "DeepSeek-V3's multi-head latent attention caches, in each of its {L} layers, one latent of {dc} values and "
        "one rotary key of {dr} values per token. How many bytes of KV cache does one token need in bf16 ({b} bytes "
        "an element)?",
        _mla,
        lambda g: [f"KV bytes per token = L·(d_c + d_r)·b = {g['L']} × ({g['dc']} + {g['dr']}) × {g['b']} = "
                   f"{fmt(g['L'] * (g['dc'] + g['dr']) * g['b'])} bytes"],
        lambda g: g["L"] * (g["dc"] + g["dr"]) * g["b"],
        lambda g: get_model("deepseek-v3").kv_cache_bytes_per_token("bf16"),
        "bytes", "accelbook.specs.models.Model.kv_cache_bytes_per_token; DeepSeek-V3 technical report, 2024", 0.0),
    Problem(
        "hand-nb00-kv-sequence-8b", "00", "hand",
        "Llama 3.1 8B has {L} layers with {Hkv} KV heads of {dh} dimensions. How many GB (10⁹ bytes) of KV cache "
        "does one sequence of {s:,} tokens hold in bf16 ({b} bytes an element)?",
        _kv_seq,
        lambda g: [f"per token: 2·L·H_kv·d_h·b = 2 × {g['L']} × {g['Hkv']} × {g['dh']} × {g['b']} = "
                   f"{fmt(_kv_seq_bytes(g) / g['s'])} bytes",
                   f"one sequence: {g['s']} × {fmt(_kv_seq_bytes(g) / g['s'])} = {fmt(_kv_seq_bytes(g))} bytes = "
                   f"{fmt(_kv_seq_bytes(g) / 1e9)} GB"],
        lambda g: _kv_seq_bytes(g) / 1e9,
        lambda g: get_model("llama-3.1-8b").kv_cache_bytes(g["s"], "bf16") / 1e9,
        "GB", "accelbook.specs.models.Model.kv_cache_bytes"),
    Problem(
        "exam-nb00-fp8-ridge-h100-v5p", "00", "exam",
        "In fp8 an H100 peaks at {Ph:,.1f} TFLOP/s with {Bh:.2f} TB/s of HBM bandwidth. A TPU v5p has no fp8 mode, so "
        "an fp8 kernel runs at its bf16 peak, {Pv:,.0f} TFLOP/s, with {Bv:.3f} TB/s. By what factor is the H100's fp8 "
        "ridge point above the v5p's? What does that say about the batch each needs to be compute-bound?",
        _fp8_ridges, _fp8_ratio_steps, lambda g: (g["Ph"] / g["Bh"]) / (g["Pv"] / g["Bv"]),
        lambda g: _ridge("h100", "fp8") / _ridge("tpu-v5p", "fp8"),
        "×", "accelbook.chip.roofline.ridge_point; Williams, Waterman and Patterson, Roofline, CACM 2009"),
    Problem(
        "exam-nb00-ridge-h200-over-h100", "00", "exam",
        "An H100 has {P1:,.1f} TFLOP/s of dense bf16 and {B1:.2f} TB/s of HBM bandwidth; an H200 has {P2:,.1f} "
        "TFLOP/s and {B2:.1f} TB/s. Compute the H200's ridge point as a fraction of the H100's. Does a newer chip "
        "always need more data reuse?",
        _h100_h200, _h200_steps, lambda g: (g["P2"] / g["B2"]) / (g["P1"] / g["B1"]),
        lambda g: _ridge("h200") / _ridge("h100"),
        "×", "accelbook.chip.roofline.ridge_point; Williams, Waterman and Patterson, Roofline, CACM 2009"),
    Problem(
        "exam-nb00-kv-mla-vs-gqa", "00", "exam",
        "DeepSeek-V3 caches per token and layer one latent of {dc} values and a rotary key of {dr}, over {La} layers. "
        "Llama 3.1 70B caches K and V for {Hkv} KV heads of {dh} dimensions, over {Lb} layers. At the same precision, "
        "how many times more KV cache does a Llama 3.1 70B token need?",
        _kv_two, _kv_two_steps, lambda g: 2 * g["Lb"] * g["Hkv"] * g["dh"] / (g["La"] * (g["dc"] + g["dr"])),
        lambda g: (get_model("llama-3.1-70b").kv_cache_bytes_per_token("bf16")
                   / get_model("deepseek-v3").kv_cache_bytes_per_token("bf16")),
        "×", "accelbook.specs.models.Model.kv_cache_bytes_per_token; DeepSeek-V3 technical report, 2024"),
    Problem(
        "exam-nb00-whatif-2x-hbm", "00", "exam",
        "A kernel does {I} FLOP per byte of HBM traffic on an H100 ({P:,.1f} TFLOP/s dense bf16, {B:.2f} TB/s). A "
        "what-if H100 has twice the HBM bandwidth and the same peak. By what factor does the kernel's attainable "
        "FLOP/s grow, and which bound holds it on the new chip?",
        _whatif, _whatif_steps, _whatif_answer, _attainable_ratio,
        "×", "accelbook.chip.roofline.attainable_flop_s; Williams, Waterman and Patterson, Roofline, CACM 2009"),
]
