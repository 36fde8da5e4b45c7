"""Paper-and-pencil problems of notebook 10: bit layouts, block scales, and what fewer bits buy a decode step
(see accelbook.ui.course.hand). The layouts come from ``data/number_formats.toml``, the chips and models from the
catalogue."""

from __future__ import annotations

import math

from accelbook.chip import number_formats as nf
from accelbook.specs.chips import get_chip
from accelbook.specs.formats import load_formats
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt

_SRC = "accelbook.chip.number_formats"


def _layout(fid: str) -> dict:
    f = load_formats()[fid]
    return {"E": f.exponent_bits, "M": f.mantissa_bits, "b": f.bias, "sign": int(f.signed)}


def _float_bits(f) -> int:
    return int(f.signed) + f.exponent_bits + f.mantissa_bits


def _block(fid: str) -> dict:
    """A block format: its element's and its scale's bits, and the block size."""
    fs = load_formats()
    f = fs[fid]
    return {"elem_bits": _float_bits(fs[f.element]), "scale_bits": _float_bits(fs[f.scale]), "k": f.block_size}


def _bits(g) -> float:
    return g["elem_bits"] + g["scale_bits"] / g["k"]


def _mxfp4_given():
    g = _block("mxfp4")
    g.update(_layout("fp4-e2m1"))
    return g


def _e5m2_range(g):
    top = (2 - 2.0 ** -g["M"]) * 2.0 ** ((2 ** g["E"] - 2) - g["b"])
    return math.log2(top / 2.0 ** (1 - g["b"] - g["M"]))


def _e5m2_steps(g):
    e_max = (2 ** g["E"] - 2) - g["b"]
    top = (2 - 2.0 ** -g["M"]) * 2.0 ** e_max
    low = 1 - g["b"] - g["M"]
    return [f"e_max = (2^{g['E']} − 2) − {g['b']} = {e_max} (the top exponent code is reserved)",
            f"max = (2 − 2^−{g['M']}) × 2^{e_max} = {fmt(2 - 2.0 ** -g['M'])} × {fmt(2.0 ** e_max)} = {fmt(top)}",
            f"smallest subnormal = 2^(1 − {g['b']} − {g['M']}) = 2^{low} = {fmt(2.0 ** low)}",
            f"range = log2({fmt(top)} ÷ 2^{low}) = {fmt(_e5m2_range(g))} binades"]


def _e2m1_range(g):
    top = (2 - 2.0 ** -g["M"]) * 2.0 ** ((2 ** g["E"] - 1) - g["b"])
    return math.log2(top / 2.0 ** (1 - g["b"] - g["M"]))


def _e2m1_steps(g):
    e_max = (2 ** g["E"] - 1) - g["b"]
    top = (2 - 2.0 ** -g["M"]) * 2.0 ** e_max
    low = 2.0 ** (1 - g["b"] - g["M"])
    return [f"e_max = (2^{g['E']} − 1) − {g['b']} = {e_max} (no infinities, no NaNs: the top code holds numbers)",
            f"max = (2 − 2^−{g['M']}) × 2^{e_max} = {fmt(top)}",
            f"smallest subnormal = 2^(1 − {g['b']} − {g['M']}) = {fmt(low)}",
            f"range = log2({fmt(top)} ÷ {fmt(low)}) = {fmt(_e2m1_range(g))} binades: a block scale is what moves it"]


def _m70():
    return get_model("llama-3.1-70b")


def _weights_given():
    g = _block("nvfp4")
    g.update(N=_m70().params)
    return g


def _kv_given():
    m = _m70()
    return {"L": m.n_layers, "h": m.kv_heads, "d": m.d_head, "b": 2, "B": 32, "s": 8192}


def _kv(g):
    return g["B"] * g["s"] * 2 * g["L"] * g["h"] * g["d"] * g["b"]


def _decode_given(B: int, s: int, chip: str = "b200"):
    """Llama 3.1 70B decoding at batch ``B`` and context ``s`` on ``chip``: what the roofline needs."""
    m, c = _m70(), get_chip(chip)
    g = _block("nvfp4")
    g.update(N=m.params, N_mm=m.matmul_params_active, L=m.n_layers, Hd=m.n_heads * m.d_head,
             n_kv=int(nf.kv_elements_per_token(m)), B=B, s=s, bw_tb_s=c.memory_bw_bytes_per_s / 1e12,
             p_bf16=c.peak_flop_s("bf16") / 1e12, p_fp4=c.peak_flop_s("fp4") / 1e12,
             p_fp8=c.peak_flop_s("fp8") / 1e12)
    return g


def _step_flops(g):
    return g["B"] * (2 * g["N_mm"] + 4 * g["L"] * g["s"] * g["Hd"])


def _step(g, weight_bits, kv_bits, peak_tflop_s):
    """(t_math, t_mem, bytes) of one decode step with weights and KV cache at these bits."""
    d = g["N"] * weight_bits / 8 + g["B"] * g["s"] * g["n_kv"] * kv_bits / 8
    return _step_flops(g) / (peak_tflop_s * 1e12), d / (g["bw_tb_s"] * 1e12), d


def _speedup(g):
    ref, new = _step(g, 16, 16, g["p_bf16"]), _step(g, _bits(g), 16, g["p_fp4"])
    return max(ref[:2]) / max(new[:2])


def _speedup_steps(g):
    ref, new = _step(g, 16, 16, g["p_bf16"]), _step(g, _bits(g), 16, g["p_fp4"])
    kv = g["B"] * g["s"] * g["n_kv"] * 2
    return [f"F = B × (2·N_mm + 4·L·s·H·d_h) = {g['B']} × (2 × {fmt(g['N_mm'])} + 4 × {g['L']} × {fmt(g['s'])} × "
            f"{fmt(g['Hd'])}) = {fmt(_step_flops(g))} FLOPs",
            f"KV = B × s × n_kv × 2 B = {g['B']} × {fmt(g['s'])} × {fmt(g['n_kv'])} × 2 = {fmt(kv / 1e9)} GB",
            f"bf16: D = {fmt(g['N'] * 2 / 1e9)} + {fmt(kv / 1e9)} = {fmt(ref[2] / 1e9)} GB; t_mem = {fmt(ref[1] * 1e3)} "
            f"ms, t_math = {fmt(ref[0] * 1e3)} ms",
            f"NVFP4 weights at {fmt(_bits(g))} bits: D = {fmt(g['N'] * _bits(g) / 8 / 1e9)} + {fmt(kv / 1e9)} = "
            f"{fmt(new[2] / 1e9)} GB; t_mem = {fmt(new[1] * 1e3)} ms, t_math = {fmt(new[0] * 1e3)} ms",
            f"both memory-bound: speed-up = {fmt(max(ref[:2]) * 1e3)} ÷ {fmt(max(new[:2]) * 1e3)} = {fmt(_speedup(g))}×, "
            f"not 16 ÷ 4 = 4×",
            f"the KV cache is {fmt(kv / 1e9)} ÷ {fmt(ref[2] / 1e9)} = {fmt(100 * kv / ref[2])} % of the bf16 step's bytes "
            "and does not shrink with the weights"]


def _share(g):
    kv = g["B"] * g["s"] * g["n_kv"] * 2
    return 100 * (g["N"] * _bits(g) / 8 + kv) / (g["N"] * 2 + kv)


def _share_steps(g):
    kv, w4, w16 = g["B"] * g["s"] * g["n_kv"] * 2, g["N"] * _bits(g) / 8, g["N"] * 2
    return [f"KV = {g['B']} × {fmt(g['s'])} × {fmt(g['n_kv'])} × 2 B = {fmt(kv / 1e9)} GB, the same in both",
            f"NVFP4 weights = {fmt(g['N'])} × ({g['elem_bits']} + {g['scale_bits']}/{g['k']}) ÷ 8 = {fmt(w4 / 1e9)} GB; "
            f"bf16 weights = {fmt(w16 / 1e9)} GB",
            f"share = ({fmt(w4 / 1e9)} + {fmt(kv / 1e9)}) ÷ ({fmt(w16 / 1e9)} + {fmt(kv / 1e9)}) = {fmt(_share(g))} %"]


def _share_model(g):
    m = _m70()
    new = nf.serving_memory(m, "nvfp4", "bf16", g["s"], g["B"])["total_bytes"]
    return 100 * new / nf.serving_memory(m, "bf16", "bf16", g["s"], g["B"])["total_bytes"]


def _fp8_step(g):
    return max(_step(g, 8, 8, g["p_fp8"])[:2])


def _fp8_steps(g):
    t_math, t_mem, d = _step(g, 8, 8, g["p_fp8"])
    return [f"D = N × 1 B + B × s × n_kv × 1 B = {fmt(g['N'] / 1e9)} GB + {g['B']} × {fmt(g['s'])} × {fmt(g['n_kv'])} "
            f"B = {fmt(d / 1e9)} GB",
            f"t_mem = {fmt(d / 1e9)} GB ÷ {fmt(g['bw_tb_s'])} TB/s = {fmt(t_mem * 1e3)} ms",
            f"F = {g['B']} × (2 × {fmt(g['N_mm'])} + 4 × {g['L']} × {fmt(g['s'])} × {fmt(g['Hd'])}) = "
            f"{fmt(_step_flops(g))}; t_math = F ÷ {fmt(g['p_fp8'])} TFLOP/s = {fmt(t_math * 1e3)} ms",
            f"t = max = {fmt(max(t_math, t_mem) * 1e3)} ms: memory-bound by {fmt(t_mem / t_math)}×"]


def _scale_given():
    g = _layout("e8m0")
    g.update({f"nv_{k}": v for k, v in _layout("fp8-e4m3").items()})
    return g


def _e8m0_range(g):
    e_max = (2 ** g["E"] - 2) - g["b"]        # the top code is the NaN
    return math.log2((2 - 2.0 ** -g["M"]) * 2.0 ** e_max / 2.0 ** -g["b"])


def _e8m0_steps(g):
    e_max = (2 ** g["E"] - 2) - g["b"]
    e4 = (2 ** g["nv_E"] - 1) - g["nv_b"]
    e4_max = (2 - 2.0 ** (1 - g["nv_M"])) * 2.0 ** e4
    e4_range = math.log2(e4_max / 2.0 ** (1 - g["nv_b"] - g["nv_M"]))
    return [f"e_max = (2^{g['E']} − 2) − {g['b']} = {e_max}; with no mantissa, max = 2^{e_max}",
            f"no subnormals: smallest = 2^−{g['b']}",
            f"range = log2(2^{e_max} ÷ 2^−{g['b']}) = {fmt(_e8m0_range(g))} binades",
            f"NVFP4's E4M3 scale: max = {fmt(e4_max)}, smallest 2^({1 - g['nv_b'] - g['nv_M']}), range "
            f"{fmt(e4_range)} binades: less reach, but finer steps than powers of two"]


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb10-mxfp4-bits", "10", "hand",
        "An MXFP4 block holds {k} elements in FP4 E2M1 ({sign} sign, {E} exponent and {M} mantissa bit) and one shared "
        "E8M0 scale of {scale_bits} bits. How many bits does each element cost, its share of the scale included?",
        _mxfp4_given,
        lambda g: [f"element = {g['sign']} + {g['E']} + {g['M']} = {g['elem_bits']} bits",
                   f"bits per element = {g['elem_bits']} + {g['scale_bits']} ÷ {g['k']} = {fmt(_bits(g))} bits"],
        _bits,
        lambda g: nf.bits_per_element("mxfp4"),
        "bits", f"{_SRC}.bits_per_element (OCP Microscaling Formats v1.0)", 0.0),
    Problem(
        "hand-nb10-e4m3-max", "10", "hand",
        "FP8 E4M3 has {E} exponent bits, {M} mantissa bits and bias {b}. Its top exponent code holds numbers; only the "
        "all-ones mantissa there is a NaN. What is its largest finite value?",
        lambda: _layout("fp8-e4m3"),
        lambda g: [f"e_max = (2^{g['E']} − 1) − {g['b']} = {(2 ** g['E'] - 1) - g['b']}",
                   f"max = (2 − 2^(1 − {g['M']})) × 2^{(2 ** g['E'] - 1) - g['b']} = {fmt(2 - 2.0 ** (1 - g['M']))} × "
                   f"{fmt(2.0 ** ((2 ** g['E'] - 1) - g['b']))} = "
                   f"{fmt((2 - 2.0 ** (1 - g['M'])) * 2.0 ** ((2 ** g['E'] - 1) - g['b']))}"],
        lambda g: (2 - 2.0 ** (1 - g["M"])) * 2.0 ** ((2 ** g["E"] - 1) - g["b"]),
        lambda g: nf.max_finite("fp8-e4m3"),
        "(dimensionless)", f"{_SRC}.max_finite (OCP 8-bit Floating Point Specification)", 0.0),
    Problem(
        "hand-nb10-e5m2-range", "10", "hand",
        "FP8 E5M2 has {E} exponent bits, {M} mantissa bits and bias {b}, follows IEEE 754 (the top exponent code is "
        "for infinities and NaNs) and has subnormals. What is its dynamic range, log2(largest ÷ smallest positive)?",
        lambda: _layout("fp8-e5m2"), _e5m2_steps, _e5m2_range,
        lambda g: nf.dynamic_range_binades("fp8-e5m2"),
        "binades", f"{_SRC}.dynamic_range_binades (Micikevicius et al. 2022, FP8 formats)"),
    Problem(
        "hand-nb10-e2m1-range", "10", "hand",
        "The FP4 element E2M1 of the MX formats has {E} exponent bits, {M} mantissa bit and bias {b}, subnormals, and "
        "no infinities or NaNs. What are its largest value, its smallest positive value and its range in binades?",
        lambda: _layout("fp4-e2m1"), _e2m1_steps, _e2m1_range,
        lambda g: nf.dynamic_range_binades("fp4-e2m1"),
        "binades", f"{_SRC}.dynamic_range_binades (OCP Microscaling Formats v1.0)"),
    Problem(
        "hand-nb10-nvfp4-weights-70b", "10", "hand",
        "Llama 3.1 70B has {N:,} parameters. In NVFP4 every block of {k} four-bit elements shares one {scale_bits}-bit "
        "E4M3 scale (the one FP32 scale per tensor is negligible). How many GB do the weights take, against bf16?",
        _weights_given,
        lambda g: [f"bits per weight = {g['elem_bits']} + {g['scale_bits']} ÷ {g['k']} = {fmt(_bits(g))}",
                   f"NVFP4 = {fmt(g['N'])} × {fmt(_bits(g))} ÷ 8 = {fmt(g['N'] * _bits(g) / 8 / 1e9)} GB",
                   f"bf16 = {fmt(g['N'])} × 2 = {fmt(g['N'] * 2 / 1e9)} GB: {fmt(16 / _bits(g))}× less, not 4×"],
        lambda g: g["N"] * _bits(g) / 8 / 1e9,
        lambda g: nf.serving_memory(_m70(), "nvfp4", "bf16", 1, 1)["weights_bytes"] / 1e9,
        "GB", f"{_SRC}.serving_memory (NVIDIA NVFP4 blog)"),
    Problem(
        "hand-nb10-kv-cache-batch", "10", "hand",
        "Llama 3.1 70B has {L} layers and {h} KV heads of {d} dimensions. How many GB of KV cache do {B} sequences of "
        "{s:,} tokens take in bf16 ({b} bytes an element)?",
        _kv_given,
        lambda g: [f"per token = 2 × {g['L']} × {g['h']} × {g['d']} × {g['b']} = "
                   f"{fmt(2 * g['L'] * g['h'] * g['d'] * g['b'])} bytes",
                   f"KV = {g['B']} × {fmt(g['s'])} × {fmt(2 * g['L'] * g['h'] * g['d'] * g['b'])} = {fmt(_kv(g) / 1e9)} GB"],
        lambda g: _kv(g) / 1e9,
        lambda g: nf.serving_memory(_m70(), "bf16", "bf16", g["s"], g["B"])["kv_bytes"] / 1e9,
        "GB", f"{_SRC}.serving_memory"),
    Problem(
        "exam-nb10-nvfp4-decode-speedup", "10", "exam",
        "Llama 3.1 70B ({N:,} parameters, N_mm = {N_mm:,} in the matmuls, {L} layers, H·d_h = {Hd:,}, {n_kv:,} KV "
        "elements a token) decodes at batch {B} and {s:,} tokens on a B200 ({bw_tb_s:g} TB/s; dense {p_bf16:,.0f} "
        "TFLOP/s in bf16, {p_fp4:,.0f} in fp4), KV cache in bf16. How many times faster is a step with NVFP4 weights "
        "({elem_bits} + {scale_bits}/{k} bits) than with bf16 weights?",
        lambda: _decode_given(1, 8192), _speedup_steps, _speedup,
        lambda g: nf.decode_speedup(_m70(), get_chip("b200"), "nvfp4", "bf16", g["s"], g["B"]),
        "×", f"{_SRC}.decode_speedup (roofline: accelbook.chip.roofline.time_bounds)"),
    Problem(
        "exam-nb10-long-context-speedup", "10", "exam",
        "The same B200 ({bw_tb_s:g} TB/s; {p_bf16:,.0f} TFLOP/s bf16, {p_fp4:,.0f} fp4) now decodes Llama 3.1 70B "
        "({N:,} parameters, N_mm = {N_mm:,}, {L} layers, H·d_h = {Hd:,}, {n_kv:,} KV elements a token) at batch {B} "
        "and {s:,} tokens, KV cache in bf16. What do NVFP4 weights ({elem_bits} + {scale_bits}/{k} bits) buy now? "
        "Which part of the bytes should shrink instead?",
        lambda: _decode_given(64, 32768), _speedup_steps, _speedup,
        lambda g: nf.decode_speedup(_m70(), get_chip("b200"), "nvfp4", "bf16", g["s"], g["B"]),
        "×", f"{_SRC}.decode_speedup"),
    Problem(
        "exam-nb10-nvfp4-memory-share", "10", "exam",
        "Serving Llama 3.1 70B ({N:,} parameters, {n_kv:,} KV elements a token) at batch {B} and {s:,} tokens with a "
        "bf16 KV cache: what percentage of the bf16-weight memory does the system need with NVFP4 weights "
        "({elem_bits} + {scale_bits}/{k} bits)? Why is it not 25 %?",
        lambda: _decode_given(32, 8192), _share_steps, _share, _share_model,
        "%", f"{_SRC}.serving_memory"),
    Problem(
        "exam-nb10-fp8-decode-step", "10", "exam",
        "Llama 3.1 70B ({N:,} parameters, N_mm = {N_mm:,}, {L} layers, H·d_h = {Hd:,}, {n_kv:,} KV elements a token) "
        "decodes at batch {B} and {s:,} tokens on one B200 ({bw_tb_s:g} TB/s, {p_fp8:,.0f} TFLOP/s dense fp8), with fp8 "
        "weights and an fp8 KV cache (1 byte each). How long does a step take on the roofline, and what bounds it?",
        lambda: _decode_given(8, 8192),
        _fp8_steps,
        lambda g: _fp8_step(g) * 1e3,
        lambda g: nf.decode_step(_m70(), get_chip("b200"), "fp8-e4m3", "fp8-e4m3", g["s"], g["B"]).t_s * 1e3,
        "ms", f"{_SRC}.decode_step (Williams et al. 2009 roofline)"),
    Problem(
        "exam-nb10-block-scale-range", "10", "exam",
        "MXFP4's shared scale is E8M0: {E} exponent bits, {M} mantissa bits, bias {b}, unsigned, no subnormals, and its "
        "top exponent code is the one NaN. Over how many binades can it move a block? Compare with NVFP4's E4M3 scale "
        "({nv_E} exponent bits, {nv_M} mantissa bits, bias {nv_b}).",
        _scale_given, _e8m0_steps, _e8m0_range,
        lambda g: nf.scale_binades("mxfp4"),
        "binades", f"{_SRC}.scale_binades (OCP Microscaling Formats v1.0)"),
]
