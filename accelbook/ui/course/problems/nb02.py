"""Paper-and-pencil problems of notebook 02: systolic-array cycles and utilisation, SRAM reuse, GPU tiles and
waves (see accelbook.ui.course.hand)."""

from __future__ import annotations

import math

from accelbook.chip.systolic import closed_form
from accelbook.chip.tiling import gpu_gemm, tpu_gemm
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt

_SYSTOLIC = "accelbook.chip.systolic.closed_form; Kung and Leiserson 1979; Samajdar et al., SCALE-Sim v2, ISPASS 2020"
_TILING = "accelbook.chip.tiling.gpu_gemm; NVIDIA, Matrix Multiplication Background User's Guide"


def _fold_len(T, R, C, dataflow):
    """Cycles of one fold: T + R + C - 2 (output stationary) or 2R + T + C - 2 (weight, input stationary)."""
    return T + R + C - 2 if dataflow == "os" else 2 * R + T + C - 2


def _mapped(g, dataflow):
    """(S_r, S_c, T): what the rows and columns hold and what streams, (M, N, K) for OS, (K, N, M) for WS."""
    return (g["M"], g["N"], g["K"]) if dataflow == "os" else (g["K"], g["N"], g["M"])


def _folds(g, dataflow):
    """(folds, T) with folds = ⌈S_r/R⌉·⌈S_c/C⌉."""
    sr, sc, t = _mapped(g, dataflow)
    return math.ceil(sr / g["R"]) * math.ceil(sc / g["C"]), t


def _cycles(g, dataflow):
    f, t = _folds(g, dataflow)
    return f * _fold_len(t, g["R"], g["C"], dataflow) - 1


def _util_pct(g, dataflow):
    return 100 * g["M"] * g["N"] * g["K"] / (_cycles(g, dataflow) * g["R"] * g["C"])


def _util_steps(g, dataflow):
    f, t = _folds(g, dataflow)
    L, tot = _fold_len(t, g["R"], g["C"], dataflow), _cycles(g, dataflow)
    what = "T + R + C − 2" if dataflow == "os" else "2R + T + C − 2"
    sr, sc, _ = _mapped(g, dataflow)
    rows, cols = ("M", "N") if dataflow == "os" else ("K", "N")
    return [f"folds = ⌈{rows}/R⌉·⌈{cols}/C⌉ = {math.ceil(sr / g['R'])} × {math.ceil(sc / g['C'])} = {f}; streamed T = {t}",
            f"one fold = {what} = {fmt(L)} cycles; total = folds × fold − 1 = {f} × {fmt(L)} − 1 = {fmt(tot)} cycles",
            f"utilisation = M·N·K ÷ (cycles·R·C) = {fmt(g['M'] * g['N'] * g['K'])} ÷ ({fmt(tot)} × {g['R']} × {g['C']}) "
            f"= {fmt(_util_pct(g, dataflow))} %"]


def _cf(g, dataflow):
    return closed_form(g["M"], g["N"], g["K"], g["R"], g["C"], dataflow)


def _shape(M, N, K, R=None, C=None, chip=None):
    def given():
        r, c = (get_chip(chip).mxu_rows, get_chip(chip).mxu_cols) if chip else (R, C)
        return {"M": M, "N": N, "K": K, "R": r, "C": c}
    return given


def _gemv_70b():
    d = get_model("llama-3.1-70b").d_model
    return _shape(1, d, d, chip="tpu-v5p")()


def _sram_given():
    d = get_model("llama-3.2-1b").d_model
    return _shape(2048, d, d, chip="tpu-v5p")()


def _sram(g):
    fr, fc = math.ceil(g["K"] / g["R"]), math.ceil(g["N"] / g["C"])
    a, b, c = g["M"] * g["K"] * fc, g["K"] * g["N"], g["M"] * g["N"] * fr
    return a, b, c, (a + b + c) / (g["M"] * g["N"] * g["K"])


def _sram_steps(g):
    a, b, c, per = _sram(g)
    fr, fc = math.ceil(g["K"] / g["R"]), math.ceil(g["N"] / g["C"])
    return [f"row folds F_r = ⌈K/R⌉ = {fr}; column folds F_c = ⌈N/C⌉ = {fc}",
            f"reads of A = M·K·F_c = {fmt(a)}; reads of B = K·N = {fmt(b)}; writes of C = M·N·F_r = {fmt(c)}",
            f"per MAC = {fmt(a + b + c)} ÷ {fmt(g['M'] * g['N'] * g['K'])} = {fmt(per)}, about 1/C + 1/M + 1/R = "
            f"{fmt(1 / g['C'] + 1 / g['M'] + 1 / g['R'])}; {fmt(2 / per)} times fewer than 2 per MAC"]


def _sram_model(g):
    r = _cf(g, "ws")
    return (r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes) / r.macs


def _gpu(n: int, chip: str, tile: int = 128):
    def given():
        return {"M": n, "N": n, "K": n, "S": get_chip(chip).compute_units, "t": tile}
    return given


def _gpu_eff(g):
    tiles = math.ceil(g["M"] / g["t"]) * math.ceil(g["N"] / g["t"])
    waves = math.ceil(tiles / g["S"])
    return tiles, waves, tiles / (waves * g["S"])


def _gpu_steps(g):
    tiles, waves, eff = _gpu_eff(g)
    return [f"tiles = ⌈M/t⌉·⌈N/t⌉ = {math.ceil(g['M'] / g['t'])} × {math.ceil(g['N'] / g['t'])} = {tiles}; no padding "
            f"({g['M']:,} is a multiple of {g['t']}, K of 64)",
            f"waves = ⌈tiles / SMs⌉ = ⌈{tiles} / {g['S']}⌉ = {waves}",
            f"η_wave = tiles ÷ (waves·SMs) = {tiles} ÷ ({waves} × {g['S']}) = {fmt(100 * eff)} %"]


def _gpu_model(g):
    return 100 * gpu_gemm(g["M"], g["N"], g["K"], g["S"], g["t"], g["t"])["efficiency"]


def _tpu_given():
    c = get_chip("tpu-v5p")
    return {"M": 4096, "N": 4096, "K": 4096, "R": c.mxu_rows, "n": c.mxu_count}


def _tpu_eff(g):
    folds = math.ceil(g["K"] / g["R"]) * math.ceil(g["N"] / g["R"])
    waves, L = math.ceil(folds / g["n"]), 3 * g["R"] + g["M"] - 2
    return folds, waves, L, g["M"] * g["N"] * g["K"] / (L * waves * g["R"] ** 2 * g["n"])


def _tpu_steps(g):
    folds, waves, L, eff = _tpu_eff(g)
    return [f"weight tiles (folds) = ⌈K/R⌉·⌈N/R⌉ = {folds}; over {g['n']} MXUs: {waves} waves",
            f"one fold = 2R + M + R − 2 = {fmt(L)} cycles (preload, stream the {g['M']:,} rows, drain)",
            f"efficiency = M·N·K ÷ (fold × waves × R² × MXUs) = {fmt(g['M'] * g['N'] * g['K'])} ÷ ({fmt(L)} × {waves} × "
            f"{g['R']}² × {g['n']}) = {fmt(100 * eff)} %"]


def _two_arrays():
    d = get_model("llama-3.1-70b").d_model
    return {"M": 1, "N": d, "K": d, "R": get_chip("tpu-v5p").mxu_rows, "R2": get_chip("tpu-v6e").mxu_rows}


def _big(g):
    return {**g, "R": g["R2"], "C": g["R2"]}


def _small(g):
    return {**g, "C": g["R"]}


def _gemv_ratio_steps(g):
    s, b = _small(g), _big(g)
    return [f"{g['R']}×{g['R']}: " + _util_steps(s, "ws")[1] + f"; utilisation {fmt(_util_pct(s, 'ws'))} %",
            f"{g['R2']}×{g['R2']}: " + _util_steps(b, "ws")[1] + f"; utilisation {fmt(_util_pct(b, 'ws'))} %",
            f"ratio = {fmt(_util_pct(b, 'ws'))} ÷ {fmt(_util_pct(s, 'ws'))} = "
            f"{fmt(_util_pct(b, 'ws') / _util_pct(s, 'ws'))}: each fold holds 4× the weights but uses them for one row"]


def _os_ws_steps(g):
    return ["output stationary (T = K): " + "; ".join(_util_steps(g, "os")[1:]),
            "weight stationary (T = M, but K fills only K of R rows): " + "; ".join(_util_steps(g, "ws")[1:]),
            f"OS ÷ WS = {fmt(_util_pct(g, 'os'))} ÷ {fmt(_util_pct(g, 'ws'))} = "
            f"{fmt(_util_pct(g, 'os') / _util_pct(g, 'ws'))}: both lose most of the array"]


def _sawtooth():
    return {"a": 2304, "b": 2560, "K": 2560, "S": get_chip("h100").compute_units, "t": 128}


def _saw_eff(g, n):
    return _gpu_eff({"M": n, "N": n, "S": g["S"], "t": g["t"]})


def _saw_steps(g):
    out = []
    for n in (g["a"], g["b"]):
        tiles, waves, eff = _saw_eff(g, n)
        out.append(f"{n:,}³: {tiles} tiles, ⌈{tiles}/{g['S']}⌉ = {waves} waves, η = {tiles} ÷ {waves * g['S']} = "
                   f"{fmt(100 * eff)} %")
    d = 100 * (_saw_eff(g, g["a"])[2] - _saw_eff(g, g["b"])[2])
    return [*out, f"the larger GEMM loses {fmt(d)} percentage points more: its last wave holds only "
                  f"{_saw_eff(g, g['b'])[0] - (_saw_eff(g, g['b'])[1] - 1) * g['S']} tiles"]


def _saw_model(g):
    a, b = gpu_gemm(g["a"], g["a"], g["a"], g["S"]), gpu_gemm(g["b"], g["b"], g["b"], g["S"])
    return 100 * (a["efficiency"] - b["efficiency"])


def _b200_h100():
    return {"n": 3072, "Sb": get_chip("b200").compute_units, "Sh": get_chip("h100").compute_units, "t": 128}


def _bh_steps(g):
    out = []
    for name, s in (("B200", g["Sb"]), ("H100", g["Sh"])):
        tiles, waves, eff = _gpu_eff({"M": g["n"], "N": g["n"], "S": s, "t": g["t"]})
        out.append(f"{name}: {tiles} tiles on {s} SMs: {waves} waves, η_wave = {tiles} ÷ {waves * s} = {fmt(100 * eff)} %")
    return [*out, f"ratio = {fmt(_bh(g))}"]


def _bh(g):
    return (_gpu_eff({"M": g["n"], "N": g["n"], "S": g["Sb"], "t": g["t"]})[2]
            / _gpu_eff({"M": g["n"], "N": g["n"], "S": g["Sh"], "t": g["t"]})[2])


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb02-os-cycles-16-on-8", "02", "hand",
        "A {M}×{N}×{K} GEMM runs output-stationary on an {R}×{C} systolic array. How many cycles does SCALE-Sim report "
        "(the index of the last cycle, one less than the trace holds)?",
        _shape(16, 16, 16, 8, 8),
        lambda g: _util_steps(g, "os")[:2], lambda g: _cycles(g, "os"), lambda g: _cf(g, "os").total_cycles,
        "cycles", _SYSTOLIC, 0.0),
    Problem(
        "hand-nb02-gemv-util-v5p", "02", "hand",
        "Decoding one token through Llama 3.1 70B's attention output projection is a {M}×{N}×{K} GEMV. What PE "
        "utilisation does it reach on one {R}×{C} weight-stationary MXU of a TPU v5p, fill and drain included?",
        _gemv_70b, lambda g: _util_steps(g, "ws"), lambda g: _util_pct(g, "ws"),
        lambda g: 100 * _cf(g, "ws").overall_util, "%", _SYSTOLIC),
    Problem(
        "hand-nb02-sram-per-mac", "02", "hand",
        "Llama 3.2 1B's width is {K}: a {M}-token prefill through one of its {K}×{N} projections is a {M}×{N}×{K} GEMM. "
        "Weight-stationary on a {R}×{C} array, how many SRAM accesses (reads of A and B, writes of C) does each "
        "multiply-accumulate need?",
        _sram_given, _sram_steps, lambda g: _sram(g)[3], _sram_model, "accesses per MAC", _SYSTOLIC),
    Problem(
        "hand-nb02-ws-util-256", "02", "hand",
        "A {M}×{N}×{K} GEMM (M = {M} rows of A streamed) runs weight-stationary on a {R}×{C} array. What overall PE "
        "utilisation does it reach, preload, fill and drain of every fold included?",
        _shape(256, 512, 512, 128, 128), lambda g: _util_steps(g, "ws"), lambda g: _util_pct(g, "ws"),
        lambda g: 100 * _cf(g, "ws").overall_util, "%", _SYSTOLIC),
    Problem(
        "hand-nb02-gpu-waves-3072", "02", "hand",
        "An H100 has {S} SMs. A {M}×{N}×{K} GEMM is cut into {t}×{t} output tiles, one thread block each. How many "
        "waves does it take, and what share of the SMs' tile throughput does it use?",
        _gpu(3072, "h100"), _gpu_steps, lambda g: 100 * _gpu_eff(g)[2], _gpu_model, "%", _TILING),
    Problem(
        "hand-nb02-tpu-gemm-v5p", "02", "hand",
        "A TPU v5p has {n} weight-stationary MXUs of {R}×{R}. A {M}×{N}×{K} GEMM is split into weight tiles that the "
        "MXUs take in turn. What share of peak does its shape allow, fill and drain included?",
        _tpu_given, _tpu_steps, lambda g: 100 * _tpu_eff(g)[3],
        lambda g: 100 * tpu_gemm(g["M"], g["N"], g["K"], g["R"], g["n"])["efficiency"],
        "%", "accelbook.chip.tiling.tpu_gemm; Jouppi et al., ISCA 2017"),
    Problem(
        "exam-nb02-gemv-bigger-mxu", "02", "exam",
        "A decode GEMV of {M}×{N}×{K} runs weight-stationary on one {R}×{R} MXU (TPU v5p) or on one {R2}×{R2} MXU "
        "(TPU v6e). By what factor does the bigger array's utilisation differ from the smaller one's? What does that "
        "say about big arrays and decoding?",
        _two_arrays, _gemv_ratio_steps, lambda g: _util_pct(_big(g), "ws") / _util_pct(_small(g), "ws"),
        lambda g: _cf(_big(g), "ws").overall_util / _cf(_small(g), "ws").overall_util, "×", _SYSTOLIC),
    Problem(
        "exam-nb02-thin-k-os-vs-ws", "02", "exam",
        "A thin GEMM of {M}×{N}×{K} runs on a {R}×{C} array. Compute its utilisation output-stationary and "
        "weight-stationary. How many times the weight-stationary utilisation does output-stationary reach, and why do "
        "both stay low?",
        _shape(64, 64, 4, 32, 32), _os_ws_steps, lambda g: _util_pct(g, "os") / _util_pct(g, "ws"),
        lambda g: _cf(g, "os").overall_util / _cf(g, "ws").overall_util, "×", _SYSTOLIC),
    Problem(
        "exam-nb02-sawtooth-2304-2560", "02", "exam",
        "On an H100 ({S} SMs, {t}×{t} tiles), compare a {a:,}³ GEMM with a larger {b:,}³ one (K a multiple of 64 in "
        "both). By how many percentage points is the larger GEMM's wave efficiency lower?",
        _sawtooth, _saw_steps, lambda g: 100 * (_saw_eff(g, g["a"])[2] - _saw_eff(g, g["b"])[2]), _saw_model,
        "percentage points", _TILING),
    Problem(
        "exam-nb02-waves-b200-h100", "02", "exam",
        "A {n:,}³ GEMM in {t}×{t} tiles runs on a B200 ({Sb} SMs) and on an H100 ({Sh} SMs). Which GPU loses more to "
        "its last wave? Give the B200's wave efficiency as a multiple of the H100's.",
        _b200_h100, _bh_steps, _bh,
        lambda g: (gpu_gemm(g["n"], g["n"], g["n"], g["Sb"])["efficiency"]
                   / gpu_gemm(g["n"], g["n"], g["n"], g["Sh"])["efficiency"]), "×", _TILING),
    Problem(
        "exam-nb02-bigger-array-512", "02", "exam",
        "A {M}×{N}×{K} GEMM runs weight-stationary on a {R}×{C} array, four times the PEs of a 128×128 one. What "
        "utilisation does it reach? Is the bigger array the better use of silicon for this GEMM?",
        _shape(512, 512, 512, 256, 256),
        lambda g: [*_util_steps(g, "ws"),
                   f"on a 128×128 array the same GEMM reaches {fmt(_util_pct({**g, 'R': 128, 'C': 128}, 'ws'))} %: the "
                   "preload and drain grow with the array, and the same 512 rows of A amortise them less well"],
        lambda g: _util_pct(g, "ws"), lambda g: 100 * _cf(g, "ws").overall_util, "%", _SYSTOLIC),
]
