"""Paper-and-pencil problems of notebook 06: the KV cache and decode's memory bound (see accelbook.ui.course.hand)."""

from __future__ import annotations

import dataclasses
import math

from accelbook.chip.roofline import layer_ops, ridge_point, time_bounds
from accelbook.inference import estimate
from accelbook.specs.chips import MEMORY_RESERVE, get_chip
from accelbook.specs.measured import achievable_hbm_fraction
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt

_KV = "accelbook.specs.models.Model.kv_cache_bytes_per_token"
_FFN = "FFN up + gate"


def _kv70():
    m = get_model("llama-3.1-70b")
    return {"L": m.n_layers, "h_kv": m.n_kv_heads, "d": m.d_head, "b": 2}


def _ridge_h200():
    c = get_chip("h200")
    return {"peak_tflop_s": c.peak_dense_flop_s["fp8"] / 1e12, "bw_tb_s": c.hbm_bw_bytes_per_s / 1e12}


def _kv_batch():
    return {**_kv70(), "b": 1, "B": 32, "s": 8192}


def _kv_batch_gb(g):
    return g["B"] * g["s"] * 2 * g["L"] * g["h_kv"] * g["d"] * g["b"] / 1e9


def _decode_read():
    m = get_model("llama-3.1-70b")
    return {"N": m.params, "V": m.vocab_size, "dm": m.d_model, "kv": m.kv_cache_bytes_per_token("fp8"),
            "s_in": 2048, "s_out": 256, "bw": achievable_hbm_fraction("h200").measured_bytes_per_s / 1e12}


def _read_bytes(g, B):
    """Weights a decode step reads (all but the embedding table, one row of it a token) and the KV cache."""
    w = g["N"] - g["V"] * g["dm"] + B * g["dm"]
    return w, B * (g["s_in"] + g["s_out"] / 2) * g["kv"]


def _decode_read_steps(g):
    w, kv = _read_bytes(g, 1)
    c = g["s_in"] + g["s_out"] / 2
    return [f"weights read = N − V·d + d = {fmt(g['N'])} − {fmt(g['V'])} × {fmt(g['dm'])} + {fmt(g['dm'])} = "
            f"{fmt(w)} bytes (fp8: 1 byte a weight)",
            f"mean context = s_in + s_out/2 = {fmt(g['s_in'])} + {fmt(g['s_out'])}/2 = {fmt(c)} tokens; KV read = "
            f"{fmt(c)} × {fmt(g['kv'])} = {fmt(kv)} bytes",
            f"time = ({fmt(w)} + {fmt(kv)}) ÷ {fmt(g['bw'])}e12 B/s = {fmt((w + kv) / g['bw'] / 1e9)} ms"]


def _model_decode_ms(B):
    e = estimate("llama-3.1-70b", "h200", 1, B, 2048, 256, "fp8")
    return e.breakdown["decode_memory_s"] * 1e3


def _gain_steps(g):
    w1, kv1 = _read_bytes(g, 1)
    wB, kvB = _read_bytes(g, g["B"])
    return [f"batch 1 reads {fmt(w1)} + {fmt(kv1)} = {fmt(w1 + kv1)} bytes a step",
            f"batch {g['B']} reads {fmt(wB)} + {g['B']} × {fmt(kv1)} = {fmt(wB + kvB)} bytes a step",
            f"gain = B × t(1) ÷ t(B) = {g['B']} × {fmt(w1 + kv1)} ÷ {fmt(wB + kvB)} = "
            f"{fmt(g['B'] * (w1 + kv1) / (wB + kvB))}×"]


def _prefill():
    m, c = get_model("llama-3.1-70b"), get_chip("h200")
    return {"N_mm": m.matmul_params_active, "L": m.n_layers, "H": m.n_heads, "d": m.d_head, "s": 2048,
            "peak": c.peak_dense_flop_s["fp8"] / 1e12}


def _prefill_flops(g):
    return g["s"] * (2 * g["N_mm"] + 2 * g["L"] * g["s"] * g["H"] * g["d"])


def _ffn():
    m, c = get_model("llama-3.1-70b"), get_chip("h200")
    return {"k": m.d_model, "n": 2 * m.d_ff, "b": 1, "B": 64, "ridge": ridge_point(c.peak_dense_flop_s["fp8"],
                                                                                  c.hbm_bw_bytes_per_s)}


def _intensity(g, B):
    return 2 * B * g["k"] * g["n"] / (g["b"] * (B * g["k"] + g["k"] * g["n"] + B * g["n"]))


def _ffn_op_intensity(B):
    ops = layer_ops("llama-3.1-70b", "decode", B, 2048, "fp8")
    return next(op.intensity for op in ops if op.name == _FFN)


def _bound_batch(g):
    r = g["ridge"] * g["b"] * (g["k"] + g["n"]) / (g["k"] * g["n"])
    return g["ridge"] * g["b"] / (2 - r)


def _model_bound_batch(g):
    lo, hi = 1, 4096          # the smallest whole batch whose FFN GEMM reaches the ridge, by bisection
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if _ffn_op_intensity(mid) < g["ridge"] else (lo, mid)
    return lo


def _max_batch():
    m, c = get_model("llama-3.1-70b"), get_chip("h200")
    return {"hbm_gb": c.hbm_bytes / 1e9, "reserve": MEMORY_RESERVE, "N": m.params, "kv": m.kv_cache_bytes_per_token("fp8"),
            "n": 8, "s": 32768}


def _max_batch_hand(g):
    room = (1 - g["reserve"]) * g["hbm_gb"] * 1e9 - g["N"] / g["n"]
    return math.floor(room / (g["s"] * g["kv"] / g["n"]))


def _max_batch_steps(g):
    usable = (1 - g["reserve"]) * g["hbm_gb"] * 1e9
    room = usable - g["N"] / g["n"]
    per_seq = g["s"] * g["kv"] / g["n"]
    return [f"usable per chip = (1 − {g['reserve']}) × {fmt(g['hbm_gb'])} GB = {fmt(usable / 1e9)} GB",
            f"weights per chip = {fmt(g['N'])} × 1 byte ÷ {g['n']} = {fmt(g['N'] / g['n'] / 1e9)} GB; room = "
            f"{fmt(room / 1e9)} GB",
            f"KV per sequence per chip = {fmt(g['s'])} × {fmt(g['kv'])} ÷ {g['n']} = {fmt(per_seq / 1e9)} GB",
            f"largest batch = ⌊{fmt(room / 1e9)} ÷ {fmt(per_seq / 1e9)}⌋ = {_max_batch_hand(g)} sequences"]


def _mla():
    ds, ll = get_model("deepseek-v3"), get_model("llama-3.1-405b")
    return {"L1": ds.n_layers, "dc": ds.mla.kv_lora_rank, "dr": ds.mla.qk_rope_head_dim, "L2": ll.n_layers,
            "h_kv": ll.n_kv_heads, "d": ll.d_head, "b": 2}


def _mla_factor(g):
    return 2 * g["L2"] * g["h_kv"] * g["d"] * g["b"] / (g["L1"] * (g["dc"] + g["dr"]) * g["b"])


PROBLEMS: list[Problem] = [
    Problem(
        "hand-kv-token-70b", "06", "hand",
        "Llama 3.1 70B has {L} layers and {h_kv} KV heads of {d} dimensions. How many bytes of KV cache does one "
        "token need in bf16 ({b} bytes an element)?",
        _kv70,
        lambda g: [f"KV bytes per token = 2 (K and V) × L × h_kv × d × b = 2 × {g['L']} × {g['h_kv']} × {g['d']} × "
                   f"{g['b']} = {fmt(2 * g['L'] * g['h_kv'] * g['d'] * g['b'])} bytes"],
        lambda g: 2 * g["L"] * g["h_kv"] * g["d"] * g["b"],
        lambda g: get_model("llama-3.1-70b").kv_cache_bytes_per_token("bf16"),
        "bytes", _KV, 0.0),
    Problem(
        "exam-ridge-h200-fp8", "06", "exam",
        "An H200 peaks at {peak_tflop_s:,.0f} TFLOP/s dense in fp8 and reads HBM at {bw_tb_s:.2f} TB/s. At what "
        "arithmetic intensity (FLOP/byte) does a kernel stop being memory-bound?",
        _ridge_h200,
        lambda g: [f"ridge = peak ÷ bandwidth = {fmt(g['peak_tflop_s'])}e12 ÷ {fmt(g['bw_tb_s'])}e12 = "
                   f"{fmt(g['peak_tflop_s'] / g['bw_tb_s'])} FLOP/byte"],
        lambda g: g["peak_tflop_s"] / g["bw_tb_s"],
        lambda g: ridge_point(get_chip("h200").peak_dense_flop_s["fp8"], get_chip("h200").hbm_bw_bytes_per_s),
        "FLOP/byte", "accelbook.chip.roofline.ridge_point"),
    Problem(
        "hand-nb06-kv-batch-70b", "06", "hand",
        "Llama 3.1 70B has {L} layers and {h_kv} KV heads of {d} dimensions. A server holds B = {B} sequences of "
        "{s:,} tokens each, with the KV cache in fp8 ({b} byte an element). How many GB of KV cache is that?",
        _kv_batch,
        lambda g: [f"per token = 2 × {g['L']} × {g['h_kv']} × {g['d']} × {g['b']} = "
                   f"{fmt(2 * g['L'] * g['h_kv'] * g['d'] * g['b'])} bytes",
                   f"batch = B × s × per token = {g['B']} × {fmt(g['s'])} × "
                   f"{fmt(2 * g['L'] * g['h_kv'] * g['d'] * g['b'])} = {fmt(_kv_batch_gb(g))} GB"],
        _kv_batch_gb,
        lambda g: g["B"] * get_model("llama-3.1-70b").kv_cache_bytes(g["s"], "fp8") / 1e9,
        "GB", "accelbook.specs.models.Model.kv_cache_bytes"),
    Problem(
        "hand-nb06-decode-read-ms", "06", "hand",
        "Llama 3.1 70B (N = {N:,} parameters, an embedding table of V = {V:,} rows of d = {dm:,}) decodes in fp8 "
        "(1 byte a weight) at batch 1 on one H200, whose HBM reaches {bw:.2f} TB/s in a STREAM-like test. A step "
        "reads every weight but the embedding table, of which the token reads its own row, and the KV cache "
        "({kv:,.0f} bytes a token) at the mean context s_in + s_out/2, with s_in = {s_in:,} and s_out = {s_out}. "
        "How long does one step take to read that memory, in ms?",
        _decode_read,
        _decode_read_steps,
        lambda g: sum(_read_bytes(g, 1)) / g["bw"] / 1e9,
        lambda g: _model_decode_ms(1),
        "ms", "accelbook.inference.estimate (breakdown decode_memory_s: the roofline's memory time)"),
    Problem(
        "hand-nb06-prefill-ms", "06", "hand",
        "A Llama 3.1 70B token multiplies N_mm = {N_mm:,} weights; the model has L = {L} layers of H = {H} query "
        "heads of {d} dimensions. Prefill of a prompt of s = {s:,} tokens does s × (2·N_mm + 2·L·s·H·d) FLOPs (causal "
        "attention: half of 4·L·s·H·d a token). How long does it take on one H200 at its dense fp8 peak of "
        "{peak:,.1f} TFLOP/s, in ms?",
        _prefill,
        lambda g: [f"FLOPs per token = 2 × {fmt(g['N_mm'])} + 2 × {g['L']} × {fmt(g['s'])} × {g['H']} × {g['d']} = "
                   f"{fmt(_prefill_flops(g) / g['s'])}",
                   f"prefill FLOPs = {fmt(g['s'])} × {fmt(_prefill_flops(g) / g['s'])} = "
                   f"{fmt(_prefill_flops(g) / 1e15)}e15",
                   f"time = {fmt(_prefill_flops(g) / 1e15)}e15 ÷ {fmt(g['peak'])}e12 = "
                   f"{fmt(_prefill_flops(g) / g['peak'] / 1e9)} ms"],
        lambda g: _prefill_flops(g) / g["peak"] / 1e9,
        lambda g: 1e3 * float(time_bounds(g["s"] * get_model("llama-3.1-70b").flops_per_token(g["s"], causal=True), 0.0,
                                          get_chip("h200").peak_dense_flop_s["fp8"], 1.0)[0]),
        "ms", "accelbook.specs.models.Model.flops_per_token (PaLM, arXiv:2204.02311 App. B) and "
              "accelbook.chip.roofline.time_bounds"),
    Problem(
        "hand-nb06-decode-intensity", "06", "hand",
        "Llama 3.1 70B's FFN up + gate projection multiplies a [B×{k:,}] activation by a [{k:,}×{n:,}] weight matrix. "
        "In decode at batch B = {B}, fp8 ({b} byte an element), it reads X and W and writes Y once. What is its "
        "arithmetic intensity (FLOP/byte)?",
        _ffn,
        lambda g: [f"FLOPs = 2·B·k·n = 2 × {g['B']} × {fmt(g['k'])} × {fmt(g['n'])} = "
                   f"{fmt(2 * g['B'] * g['k'] * g['n'])}",
                   f"bytes = (B·k + k·n + B·n) × b = ({g['B']} × {fmt(g['k'])} + {fmt(g['k'])} × {fmt(g['n'])} + "
                   f"{g['B']} × {fmt(g['n'])}) × {g['b']} = "
                   f"{fmt((g['B'] * g['k'] + g['k'] * g['n'] + g['B'] * g['n']) * g['b'])}",
                   f"intensity = {fmt(_intensity(g, g['B']))} FLOP/byte, about 2B: far below the ridge"],
        lambda g: _intensity(g, g["B"]),
        lambda g: _ffn_op_intensity(g["B"]),
        "FLOP/byte", "accelbook.chip.roofline.layer_ops (Williams, Waterman & Patterson, CACM 2009)"),
    Problem(
        "hand-nb06-max-batch-32k", "06", "hand",
        "Eight H200s ({hbm_gb:.1f} GB of HBM each, {reserve:.0%} kept free) serve Llama 3.1 70B with TP{n}: each "
        "chip holds 1/{n} of the {N:,} fp8 weights (1 byte each) and 1/{n} of every sequence's KV cache "
        "({kv:,.0f} bytes a token in fp8). How many sequences of {s:,} tokens fit?",
        _max_batch,
        _max_batch_steps,
        _max_batch_hand,
        lambda g: estimate("llama-3.1-70b", "h200", g["n"], 1, g["s"] - 256, 256, "fp8", tp=g["n"]).max_batch_size,
        "sequences", "accelbook.inference.estimate (max_batch_size)", 0.0),
    Problem(
        "exam-nb06-compute-bound-batch", "06", "exam",
        "On an H200 the fp8 ridge is {ridge:.1f} FLOP/byte. Llama 3.1 70B's FFN up + gate GEMM multiplies [B×{k:,}] by "
        "[{k:,}×{n:,}] in fp8 ({b} byte an element), reading X and W and writing Y once. From what whole batch B does "
        "this decode GEMM become compute-bound?",
        _ffn,
        lambda g: ["2·B·k·n ÷ (b·(B·k + k·n + B·n)) = I*  ⇒  B = I*·b ÷ (2 − I*·b·(k + n)/(k·n))",
                   f"I*·b·(k + n)/(k·n) = {fmt(g['ridge'])} × {g['b']} × {fmt(g['k'] + g['n'])} ÷ "
                   f"{fmt(g['k'] * g['n'])} = {fmt(g['ridge'] * g['b'] * (g['k'] + g['n']) / (g['k'] * g['n']))}",
                   f"B = {fmt(g['ridge'] * g['b'])} ÷ (2 − "
                   f"{fmt(g['ridge'] * g['b'] * (g['k'] + g['n']) / (g['k'] * g['n']))}) = {fmt(_bound_batch(g))}, "
                   f"so batch {math.ceil(_bound_batch(g))}"],
        lambda g: math.ceil(_bound_batch(g)),
        _model_bound_batch,
        "sequences", "accelbook.chip.roofline.layer_ops and ridge_point (the roofline, Williams et al. 2009)", 0.0),
    Problem(
        "exam-nb06-mha-kv-70b", "06", "exam",
        "Llama 3.1 70B has {L} layers and {H} query heads of {d} dimensions, with grouped-query attention over "
        "{h_kv} KV heads. With multi-head attention instead (one KV head per query head), how many bytes of KV "
        "cache would a token need in bf16 ({b} bytes), and by what factor more than now?",
        lambda: {**_kv70(), "H": get_model("llama-3.1-70b").n_heads},
        lambda g: [f"MHA: 2 × L × H × d × b = 2 × {g['L']} × {g['H']} × {g['d']} × {g['b']} = "
                   f"{fmt(2 * g['L'] * g['H'] * g['d'] * g['b'])} bytes",
                   f"factor = H ÷ h_kv = {g['H']} ÷ {g['h_kv']} = {fmt(g['H'] / g['h_kv'])}: the largest batch "
                   "shrinks and each step reads that many times the KV bytes"],
        lambda g: 2 * g["L"] * g["H"] * g["d"] * g["b"],
        lambda g: (lambda m: dataclasses.replace(m, n_kv_heads=m.n_heads))(get_model("llama-3.1-70b"))
        .kv_cache_bytes_per_token("bf16"),
        "bytes", _KV, 0.0),
    Problem(
        "exam-nb06-kv-equals-weights", "06", "exam",
        "Llama 3.1 70B has N = {N:,} parameters and needs {kv:,.0f} bytes of KV cache a token, both in fp8 "
        "(1 byte an element). At what context length does one sequence's KV cache weigh as much as the weights?",
        lambda: (lambda m: {"N": m.params, "kv": m.kv_cache_bytes_per_token("fp8")})(get_model("llama-3.1-70b")),
        lambda g: [f"s = N × 1 ÷ KV per token = {fmt(g['N'])} ÷ {fmt(g['kv'])} = {fmt(g['N'] / g['kv'])} tokens"],
        lambda g: g["N"] / g["kv"],
        lambda g: get_model("llama-3.1-70b").weight_bytes("fp8") / get_model("llama-3.1-70b").kv_cache_bytes_per_token("fp8"),
        "tokens", "accelbook.specs.models.Model.weight_bytes and kv_cache_bytes_per_token"),
    Problem(
        "exam-nb06-mla-factor", "06", "exam",
        "DeepSeek-V3 caches one latent per layer: L·(d_c + d_r) values a token, with L = {L1}, d_c = {dc} and "
        "d_r = {dr}. Llama 3.1 405B caches K and V for {h_kv} KV heads of {d} dimensions on each of its {L2} layers. "
        "In bf16 ({b} bytes), by what factor is Llama's KV cache per token larger?",
        _mla,
        lambda g: [f"DeepSeek-V3: {g['L1']} × ({g['dc']} + {g['dr']}) × {g['b']} = "
                   f"{fmt(g['L1'] * (g['dc'] + g['dr']) * g['b'])} bytes",
                   f"Llama 3.1 405B: 2 × {g['L2']} × {g['h_kv']} × {g['d']} × {g['b']} = "
                   f"{fmt(2 * g['L2'] * g['h_kv'] * g['d'] * g['b'])} bytes",
                   f"factor = {fmt(_mla_factor(g))}"],
        _mla_factor,
        lambda g: get_model("llama-3.1-405b").kv_cache_bytes_per_token() / get_model("deepseek-v3").kv_cache_bytes_per_token(),
        "×", _KV + " (MLA: DeepSeek-V2, arXiv:2405.04434)"),
    Problem(
        "exam-nb06-batch64-gain", "06", "exam",
        "Llama 3.1 70B decodes in fp8 on one H200. A step reads the weights once (N = {N:,}, less the embedding "
        "table of {V:,} × {dm:,}, plus one row of it per sequence) and each sequence's KV cache ({kv:,.0f} bytes a "
        "token) at a mean context of {s_in:,} + {s_out}/2 tokens. Counting only this memory time, by what factor "
        "do tokens/s per chip grow from batch 1 to batch B = {B}?",
        lambda: {**_decode_read(), "B": 64},
        _gain_steps,
        lambda g: g["B"] * sum(_read_bytes(g, 1)) / sum(_read_bytes(g, g["B"])),
        lambda g: g["B"] * _model_decode_ms(1) / _model_decode_ms(g["B"]),
        "×", "accelbook.inference.estimate (breakdown decode_memory_s)"),
]
