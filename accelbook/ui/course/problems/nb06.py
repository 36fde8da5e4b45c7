"""Paper-and-pencil problems of notebook 06: the KV cache and decode's memory bound (see accelbook.ui.course.hand)."""

from __future__ import annotations

from accelbook.chip.roofline import ridge_point
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt


def _kv70():
    m = get_model("llama-3.1-70b")
    return {"L": m.n_layers, "h_kv": m.n_kv_heads, "d": m.d_head, "b": 2}


def _ridge_h200():
    c = get_chip("h200")
    return {"peak_tflop_s": c.peak_dense_flop_s["fp8"] / 1e12, "bw_tb_s": c.hbm_bw_bytes_per_s / 1e12}


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
        "bytes", "accelbook.specs.models.Model.kv_cache_bytes_per_token", 0.0),
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
]
