"""Paper-and-pencil problems of notebook 09: splitting a die between matrix units, SRAM, HBM and I/O, and what
each split buys a workload (see accelbook.ui.course.hand). The constants come from ``data/chipdesign.toml``."""

from __future__ import annotations

import math

from accelbook.chip import design as cd
from accelbook.chip.roofline import ridge_point
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt

_PJ_BIT = 8e-12   # J/byte in one pJ/bit


def _split():
    """The H100-like calibration split and the constants a student needs to work it."""
    p = cd.params()
    h = p.h100_split
    return {"m": h["matrix_mm2"], "s": h["sram_mm2"], "n": int(h["n_hbm_stacks"]), "io": h["io_mm2"],
            "unc": p.uncore_mm2, "phy": p.hbm_phy_mm2, "A": p.area_mm2, "P": p.power_w,
            "d": p.flop_s_per_mm2 / 1e12, "stack_gb": p.hbm_stack_bytes / 1e9,
            "stack_tb_s": p.hbm_stack_bytes_per_s / 1e12, "sram_mb": p.sram_bytes_per_mm2 / 1e6,
            "sram_tb_s": p.sram_bytes_per_s_per_mm2 / 1e12, "shore": p.hbm_shoreline_mm,
            "io_mm2_tb": p.io_mm2_per_byte_s * 1e12, "io_shore": p.io_shoreline_mm_per_byte_s * 1e12,
            "w_mm2": p.static_w_per_mm2, "pj_flop": p.j_per_flop * 1e12, "io_pj": p.io_j_per_byte / _PJ_BIT,
            "hbm_pj": p.hbm_j_per_byte / _PJ_BIT, "sram_pj": p.sram_j_per_byte / _PJ_BIT,
            "datasheet_tflop_s": get_chip("h100").peak_flop_s("bf16") / 1e12}


def _area(g):
    return g["m"] + g["s"] + g["n"] * g["phy"] + g["io"] + g["unc"]


def _area_steps(g):
    a = _area(g)
    return [f"area = matrix + SRAM + n × PHY + I/O + uncore = {fmt(g['m'])} + {fmt(g['s'])} + {g['n']} × "
            f"{fmt(g['phy'])} + {fmt(g['io'])} + {fmt(g['unc'])} = {fmt(a)} mm²",
            f"budget − area = {fmt(g['A'])} − {fmt(a)} = {fmt(g['A'] - a)} mm² to spare: it fits"]


def _ridge_steps(g):
    peak, bw = g["m"] * g["d"], g["n"] * g["stack_tb_s"]
    return [f"peak = {fmt(g['m'])} mm² × {fmt(g['d'])} TFLOP/s per mm² = {fmt(peak)} TFLOP/s",
            f"HBM bandwidth = {g['n']} stacks × {fmt(g['stack_tb_s'])} TB/s = {fmt(bw)} TB/s",
            f"ridge = peak ÷ bandwidth = {fmt(peak)}e12 ÷ {fmt(bw)}e12 = {fmt(peak / bw)} FLOP/byte"]


def _edge(g):
    return g["n"] * g["shore"] + g["io"] / g["io_mm2_tb"] * g["io_shore"]


def _edge_given():
    g = _split()
    g["area"] = _area(g)
    return g


def _edge_steps(g):
    io_tb = g["io"] / g["io_mm2_tb"]
    a = _area(g)
    return [f"I/O bandwidth = {fmt(g['io'])} mm² ÷ {fmt(g['io_mm2_tb'])} mm² per TB/s = {fmt(io_tb)} TB/s",
            f"edge used = n × {fmt(g['shore'])} mm + {fmt(io_tb)} TB/s × {fmt(g['io_shore'])} mm per TB/s = "
            f"{g['n']} × {fmt(g['shore'])} + {fmt(io_tb * g['io_shore'])} = {fmt(_edge(g))} mm",
            f"edge of a square die = 4 × √area = 4 × √{fmt(a)} = {fmt(4 * math.sqrt(a))} mm: the PHYs and links fit"]


def _full_power_parts(g):
    a = _area(g)
    io_bw = g["io"] / g["io_mm2_tb"] * 1e12
    return {"static": g["w_mm2"] * a, "links": io_bw * g["io_pj"] * _PJ_BIT,
            "matrix": g["m"] * g["d"] * g["pj_flop"], "hbm": g["n"] * g["stack_tb_s"] * 1e12 * g["hbm_pj"] * _PJ_BIT,
            "sram": g["s"] * g["sram_tb_s"] * 1e12 * g["sram_pj"] * _PJ_BIT}


def _full_power_steps(g):
    w, a = _full_power_parts(g), _area(g)
    io_tb = g["io"] / g["io_mm2_tb"]
    return [f"area = {fmt(a)} mm², so static = {fmt(g['w_mm2'])} W/mm² × {fmt(a)} mm² = {fmt(w['static'])} W",
            f"links = {fmt(io_tb)}e12 B/s × 8 bit × {fmt(g['io_pj'])} pJ = {fmt(w['links'])} W",
            f"matrix = {fmt(g['m'] * g['d'])} TFLOP/s × {fmt(g['pj_flop'])} pJ/FLOP = {fmt(w['matrix'])} W",
            f"HBM = {fmt(g['n'] * g['stack_tb_s'])}e12 B/s × 8 × {fmt(g['hbm_pj'])} pJ = {fmt(w['hbm'])} W",
            f"SRAM = {fmt(g['s'] * g['sram_tb_s'])}e12 B/s × 8 × {fmt(g['sram_pj'])} pJ = {fmt(w['sram'])} W",
            f"total = {' + '.join(fmt(v) for v in w.values())} = {fmt(sum(w.values()))} W, above the {fmt(g['P'])} W "
            "budget: a workload that used everything at once would have its matrix clock lowered"]


def _max_stacks(g):
    return math.floor((4 * math.sqrt(g["A"]) - g["io_edge"]) / g["shore"])


def _max_stacks_given():
    g = _split()
    g["m"] = 90.0
    g["io_edge"] = g["io"] / g["io_mm2_tb"] * g["io_shore"]
    return g


def _max_stacks_model(g):
    ok = []
    for n in range(0, 40):
        sram = g["A"] - g["unc"] - g["io"] - g["m"] - n * g["phy"]
        if sram < 0:
            break
        if cd.design(g["m"], sram, n, g["io"]).fits:
            ok.append(n)
    return max(ok)


def _max_stacks_steps(g):
    edge = 4 * math.sqrt(g["A"])
    n = _max_stacks(g)
    sram = g["A"] - g["unc"] - g["io"] - g["m"] - n * g["phy"]
    return [f"edge of the full die = 4 × √{fmt(g['A'])} = {fmt(edge)} mm",
            f"edge left for HBM = {fmt(edge)} − {fmt(g['io_edge'])} = {fmt(edge - g['io_edge'])} mm",
            f"stacks = ⌊{fmt(edge - g['io_edge'])} ÷ {fmt(g['shore'])}⌋ = ⌊{fmt((edge - g['io_edge']) / g['shore'])}⌋ "
            f"= {n}",
            f"area check: SRAM gets {fmt(g['A'])} − {fmt(g['unc'])} − {fmt(g['io'])} − {fmt(g['m'])} − {n} × "
            f"{fmt(g['phy'])} = {fmt(sram)} mm² ≥ 0, so the edge, not the area, sets the count"]


def _decode_given():
    m = get_model("llama-3.1-70b")
    w = cd.DecodeWorkload()
    return {"N": m.params, "b": 2, "kv": int(m.kv_cache_bytes_per_token("bf16")), "B": w.batch_size,
            "c": w.context_len, "n": w.n_chips}


def _decode_resident(g):
    return (g["N"] * g["b"] + g["B"] * g["c"] * g["kv"]) / g["n"]


def _decode_steps(g):
    wb, kvb = g["N"] * g["b"], g["B"] * g["c"] * g["kv"]
    return [f"weights = {fmt(g['N'])} × {g['b']} B = {fmt(wb / 1e9)} GB",
            f"KV cache = B × context × bytes per token = {g['B']} × {fmt(g['c'])} × {fmt(g['kv'])} = "
            f"{fmt(kvb / 1e9)} GB",
            f"per chip = ({fmt(wb / 1e9)} + {fmt(kvb / 1e9)}) GB ÷ {g['n']} = {fmt(_decode_resident(g) / 1e9)} GB"]


def _decode_tokens_given():
    g = _split()
    nd = cd.need(cd.DecodeWorkload(), cd.params())
    g.update(M=nd.stream_bytes, F=nd.flops, tpu=nd.tokens_per_unit)
    return g


def _decode_times(g):
    f = min(1.0, g["s"] * g["sram_mb"] * 1e6 / g["M"])
    return (f, (1 - f) * g["M"] / (g["n"] * g["stack_tb_s"] * 1e12), f * g["M"] / (g["s"] * g["sram_tb_s"] * 1e12),
            g["F"] / (g["m"] * g["d"] * 1e12))


def _decode_tokens(g):
    return g["tpu"] / max(_decode_times(g)[1:])


def _decode_tokens_steps(g):
    f, t_hbm, t_sram, t_math = _decode_times(g)
    return [f"f = SRAM ÷ M = {fmt(g['s'] * g['sram_mb'])}e6 ÷ {fmt(g['M'])} = {fmt(f)}",
            f"HBM time = (1 − f) × M ÷ ({g['n']} × {fmt(g['stack_tb_s'])}e12) = {fmt(t_hbm * 1e3)} ms",
            f"SRAM time = f × M ÷ {fmt(g['s'] * g['sram_tb_s'])}e12 = {fmt(t_sram * 1e3)} ms; math time = "
            f"{fmt(g['F'])} ÷ {fmt(g['m'] * g['d'])}e12 = {fmt(t_math * 1e3)} ms",
            f"step = max = {fmt(max(t_hbm, t_sram, t_math) * 1e3)} ms (HBM binds), so tokens/s per chip = "
            f"{fmt(g['tpu'])} ÷ {fmt(max(t_hbm, t_sram, t_math))} = {fmt(_decode_tokens(g))}"]


def _train_given():
    m, w, p = get_model("llama-3.1-70b"), cd.TrainingWorkload(), cd.params()
    return {"N": m.params, "shards": w.shards, "state": p.state_bytes_per_param, "d": m.d_model, "L": m.n_layers,
            "T": w.microbatch_tokens, "ck": p.act_checkpoint_bytes_per_d, "wk": p.act_working_bytes_per_d,
            "stack_gb": p.hbm_stack_bytes / 1e9}


def _train_parts(g):
    return (g["state"] * g["N"] / g["shards"], g["ck"] * g["d"] * g["L"] * g["T"], g["wk"] * g["d"] * g["T"])


def _train_steps(g):
    st, ck, wk = _train_parts(g)
    r = st + ck + wk
    return [f"optimizer state = {fmt(g['state'])} × {fmt(g['N'])} ÷ {g['shards']} = {fmt(st / 1e9)} GB",
            f"checkpoints = {fmt(g['ck'])} × d × L × T = {fmt(g['ck'])} × {fmt(g['d'])} × {g['L']} × {fmt(g['T'])} = "
            f"{fmt(ck / 1e9)} GB",
            f"one layer's working set = {fmt(g['wk'])} × {fmt(g['d'])} × {fmt(g['T'])} = {fmt(wk / 1e9)} GB",
            f"resident = {fmt(st / 1e9)} + {fmt(ck / 1e9)} + {fmt(wk / 1e9)} = {fmt(r / 1e9)} GB, so at least "
            f"⌈{fmt(r / 1e9)} ÷ {fmt(g['stack_gb'])}⌉ = {math.ceil(r / 1e9 / g['stack_gb'])} HBM stacks"]


def _clock_given():
    g = _split()
    nd = cd.need(cd.TrainingWorkload(), cd.params())
    g.update(m=580.0, s=0.0, n=4, P=400.0, F=nd.flops, M=nd.stream_bytes, s_v=cd.params().voltage_floor_clock)
    w = _full_power_parts(g)
    g.update(C=g["m"] * g["d"], static=w["static"] + w["links"])
    return g


def _clock_terms(g):
    a = g["pj_flop"] * 1e-12 * g["C"] * 1e12                               # W at s = 1: J·C·s²
    b = g["C"] * 1e12 * g["M"] / g["F"] * g["hbm_pj"] * _PJ_BIT            # W at s = 1: HBM traffic ∝ s
    return a, b, g["P"] - g["static"]


def _clock(g):
    a, b, c = _clock_terms(g)
    return (-b + math.sqrt(b * b + 4 * a * c)) / (2 * a)


def _clock_steps(g):
    a, b, c = _clock_terms(g)
    s = _clock(g)
    return [f"at clock s: tokens/s x = s·C/F; matrix power = {fmt(g['pj_flop'])} pJ × s × x·F = "
            f"{fmt(g['pj_flop'])}e-12 × {fmt(g['C'])}e12 × s² = {fmt(a)}·s² W",
            f"HBM power = x·M × {fmt(g['hbm_pj'])} pJ × 8 = s × ({fmt(g['C'])}e12 × {fmt(g['M'])} ÷ {fmt(g['F'])}) × "
            f"{fmt(g['hbm_pj'] * 8)}e-12 = {fmt(b)}·s W",
            f"{fmt(a)}·s² + {fmt(b)}·s + {fmt(g['static'])} = {fmt(g['P'])}, so s = (−{fmt(b)} + √({fmt(b)}² + 4 × "
            f"{fmt(a)} × {fmt(c)})) ÷ (2 × {fmt(a)}) = {fmt(s)}",
            f"s = {fmt(s)} ≥ {fmt(g['s_v'])} (the voltage floor), so the formula holds: {fmt(100 * s)} % of full clock"]


def _clock_model(g):
    d = cd.design(g["m"], g["s"], g["n"], g["io"], power_w=g["P"])
    return cd.evaluate(d, cd.TrainingWorkload())["clock"]


_SRC = "accelbook.chip.design"
PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb09-h100-peak", "09", "hand",
        "The H100-like split of notebook 09 spends {m:.0f} mm² on matrix units, and each mm² gives {d:g} TFLOP/s "
        "(dense bf16, nominal clock). What is the die's peak? Compare it with the datasheet's "
        "{datasheet_tflop_s:,.1f} TFLOP/s.",
        _split,
        lambda g: [f"peak = matrix area × TFLOP/s per mm² = {fmt(g['m'])} × {fmt(g['d'])} = {fmt(g['m'] * g['d'])} "
                   "TFLOP/s",
                   f"ratio to the datasheet = {fmt(g['m'] * g['d'])} ÷ {fmt(g['datasheet_tflop_s'])} = "
                   f"{fmt(g['m'] * g['d'] / g['datasheet_tflop_s'])}: the constant was calibrated on this die"],
        lambda g: g["m"] * g["d"],
        lambda g: cd.h100_like().peak_flop_s / 1e12,
        "TFLOP/s", f"{_SRC}.h100_like (Design.peak_flop_s; data/chipdesign.toml, calibrated on the H100 datasheet)"),
    Problem(
        "hand-nb09-h100-area", "09", "hand",
        "A die has {m:.0f} mm² of matrix units, {s:.0f} mm² of SRAM, {n} HBM stacks whose PHY and controller take "
        "{phy:.0f} mm² each, {io:.0f} mm² of chip-to-chip I/O and a fixed uncore of {unc:.0f} mm². What area does it "
        "take, and does it fit an {A:.0f} mm² budget?",
        _split, _area_steps, _area,
        lambda g: cd.h100_like().area_mm2,
        "mm²", f"{_SRC}.design (Design.area_mm2)", 0.0),
    Problem(
        "hand-nb09-ridge-of-a-design", "09", "hand",
        "A die has {m:.0f} mm² of matrix units at {d:g} TFLOP/s per mm² and {n} HBM stacks of {stack_tb_s:.2f} TB/s "
        "each. What is its ridge point, the arithmetic intensity above which the matrix units, not HBM, set the time?",
        _split, _ridge_steps,
        lambda g: g["m"] * g["d"] / (g["n"] * g["stack_tb_s"]),
        lambda g: ridge_point(cd.h100_like().peak_flop_s, cd.h100_like().hbm_bw_bytes_per_s),
        "FLOP/byte", "accelbook.chip.roofline.ridge_point on accelbook.chip.design.h100_like (Williams et al. 2009)"),
    Problem(
        "hand-nb09-hbm-capacity-bandwidth", "09", "hand",
        "Each HBM stack gives {stack_gb:.0f} GB at {stack_tb_s:.2f} TB/s. What HBM bandwidth does a die with {n} "
        "stacks have, and what capacity?",
        _split,
        lambda g: [f"bandwidth = {g['n']} × {fmt(g['stack_tb_s'])} TB/s = {fmt(g['n'] * g['stack_tb_s'])} TB/s",
                   f"capacity = {g['n']} × {fmt(g['stack_gb'])} GB = {fmt(g['n'] * g['stack_gb'])} GB"],
        lambda g: g["n"] * g["stack_tb_s"],
        lambda g: cd.h100_like().hbm_bw_bytes_per_s / 1e12,
        "TB/s", f"{_SRC}.design (Design.hbm_bw_bytes_per_s)"),
    Problem(
        "hand-nb09-die-edge", "09", "hand",
        "A square die of {area:.0f} mm² has {n} HBM stacks, each "
        "needing {shore:.0f} mm of die edge, and {io:.0f} mm² of I/O at {io_mm2_tb:.0f} mm² per TB/s, which needs "
        "{io_shore:.0f} mm of edge per TB/s. How many mm of edge do the stacks and links use, and does the die have it?",
        _edge_given, _edge_steps, _edge,
        lambda g: cd.h100_like().shoreline_mm,
        "mm", f"{_SRC}.design (Design.shoreline_mm, Design.perimeter_mm)"),
    Problem(
        "hand-nb09-decode-bytes-per-chip", "09", "hand",
        "Notebook 09's decode workload runs Llama 3.1 70B ({N:,} parameters, bf16 weights of {b} bytes, {kv:,} bytes "
        "of bf16 KV cache per token) at batch {B} and {c:,} tokens of context on {n} chips that split weights and "
        "cache evenly. How many GB must each chip hold? A decode step reads all of it once.",
        _decode_given, _decode_steps,
        lambda g: _decode_resident(g) / 1e9,
        lambda g: cd.need(cd.DecodeWorkload(), cd.params()).resident_bytes / 1e9,
        "GB", "accelbook.chip.design_workloads.need (DecodeWorkload)"),
    Problem(
        "exam-nb09-full-power", "09", "exam",
        "The H100-like split ({m:.0f} mm² matrix at {d:g} TFLOP/s per mm², {s:.0f} mm² SRAM at {sram_tb_s:g} TB/s per "
        "mm², {n} HBM stacks of {stack_tb_s:.2f} TB/s, {io:.0f} mm² of I/O at {io_mm2_tb:.0f} mm² per TB/s, {unc:.0f} "
        "mm² uncore, {phy:.0f} mm² PHY per stack) draws {w_mm2:g} W per mm² of die whatever it does. Energies: "
        "matrix {pj_flop:g} pJ/FLOP, links {io_pj:g} pJ/bit (always on), HBM {hbm_pj:g} pJ/bit, SRAM {sram_pj:g} "
        "pJ/bit. What is its power with every unit at full rate, and is it within {P:.0f} W?",
        _split, _full_power_steps,
        lambda g: sum(_full_power_parts(g).values()),
        lambda g: cd.h100_like().full_power_w,
        "W", f"{_SRC}.design (Design.full_power_w)"),
    Problem(
        "exam-nb09-max-hbm-stacks", "09", "exam",
        "A decode chip fills a square {A:.0f} mm² die: {m:.0f} mm² of matrix units, {io:.0f} mm² of I/O that needs "
        "{io_edge:.0f} mm of die edge, {unc:.0f} mm² of uncore, and SRAM in whatever area is left. Each HBM stack "
        "takes {phy:.0f} mm² of PHY and {shore:.0f} mm of edge. How many HBM stacks can it have at most?",
        _max_stacks_given, _max_stacks_steps, _max_stacks, _max_stacks_model,
        "stacks", f"{_SRC}.design (Design.fits: area and die edge 4·√area)", 0.0),
    Problem(
        "exam-nb09-dark-silicon-clock", "09", "exam",
        "A die with {m:.0f} mm² of matrix units (C = {C:,.0f} TFLOP/s at full clock), no SRAM and {n} HBM stacks "
        "draws {static:.1f} W whatever it does. A training token of Llama 3.1 70B needs F = {F:.4g} FLOPs and streams "
        "M = {M:.4g} bytes from HBM at {hbm_pj:g} pJ/bit. At relative clock s the matrix units spend {pj_flop:g} pJ × s "
        "per FLOP (for s ≥ {s_v:g}). Under a {P:.0f} W budget, at what relative clock do they run?",
        _clock_given, _clock_steps, _clock, _clock_model,
        "of full clock", f"{_SRC}.evaluate (power-capped roofline; dark silicon: Esmaeilzadeh et al. 2011)"),
    Problem(
        "exam-nb09-decode-tokens-h100-like", "09", "exam",
        "On the H100-like split ({m:.0f} mm² matrix at {d:g} TFLOP/s per mm², {n} HBM stacks of {stack_tb_s:.2f} TB/s, "
        "{s:.0f} mm² of SRAM at {sram_mb:g} MB and {sram_tb_s:g} TB/s per mm²), a decode step of Llama 3.1 70B "
        "(batch 64, 8,192 tokens, 8 chips) needs F = {F:.4g} FLOPs and streams M = {M:.4g} bytes per chip. SRAM serves the share f = SRAM ÷ M of "
        "the bytes, HBM the rest, both in parallel. Each step makes {tpu:g} tokens per chip. Tokens/s per chip?",
        _decode_tokens_given, _decode_tokens_steps, _decode_tokens,
        lambda g: cd.evaluate(cd.h100_like(), cd.DecodeWorkload())["tokens_per_s_per_chip"],
        "tokens/s per chip", f"{_SRC}.evaluate (roofline over compute, HBM and SRAM)"),
    Problem(
        "exam-nb09-training-resident", "09", "exam",
        "Training Llama 3.1 70B ({N:,} parameters, d_model {d:,}, {L} layers) with the optimizer state ({state:g} "
        "bytes a parameter) sharded over {shards} chips, microbatches of T = {T:,} tokens and full recomputation: each "
        "chip keeps {ck:g} bytes per token, layer and unit of d_model as checkpoints, and {wk:g} bytes per token and "
        "unit of d_model for the layer being recomputed. How many GB stay resident per chip, and how many "
        "{stack_gb:.0f} GB HBM stacks does that take at least?",
        _train_given, _train_steps,
        lambda g: sum(_train_parts(g)) / 1e9,
        lambda g: cd.need(cd.TrainingWorkload(), cd.params()).resident_bytes / 1e9,
        "GB", "accelbook.chip.design_workloads.need (TrainingWorkload; Rajbhandari et al. 2020, Korthikanti et al. 2022)"),
]
