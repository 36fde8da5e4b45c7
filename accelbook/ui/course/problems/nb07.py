"""Paper-and-pencil problems of notebook 07: SRAM chips, wafers, speculative decoding (see accelbook.ui.course.hand)."""

from __future__ import annotations

import math

from accelbook.inference import estimate, expected_accepted, min_chips, speculative
from accelbook.specs.chips import MEMORY_RESERVE, get_chip
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt

_MIN = "accelbook.inference.sweep.min_chips (weights only: ⌈N·bytes per weight ÷ memory per chip⌉)"
_SPEC = "accelbook.inference.variants.expected_accepted (Leviathan, Kalman & Matias, ICML 2023)"
#: the largest draft length the package takes: long enough that a^(γ+1) vanishes for any a used here
_GAMMA_MAX = 4095


def _sram(model, chip, b):
    mem = get_chip(chip).sram_bytes
    return {"N": get_model(model).params, "mem_gb": mem / 1e9, "mem_mb": mem / 1e6, "b": b}


def _chips(g):
    return math.ceil(g["N"] * g["b"] / (g["mem_gb"] * 1e9))


def _chips_steps(g):
    ratio = g["N"] * g["b"] / (g["mem_gb"] * 1e9)
    return [f"weights = N × b = {fmt(g['N'])} × {g['b']} = {fmt(g['N'] * g['b'] / 1e9)} GB",
            f"chips = ⌈{fmt(g['N'] * g['b'] / 1e9)} GB ÷ {fmt(g['mem_gb'])} GB⌉ = ⌈{fmt(ratio)}⌉ = {_chips(g)}"]


def _h200_405b():
    return {"N": get_model("llama-3.1-405b").params, "hbm_gb": get_chip("h200").hbm_bytes / 1e9,
            "reserve": MEMORY_RESERVE, "b": 1}


def _h200_chips(g):
    return math.ceil(g["N"] * g["b"] / ((1 - g["reserve"]) * g["hbm_gb"] * 1e9))


def _accepted(a, gamma):
    return (1 - a ** (gamma + 1)) / (1 - a)


def _gamma_90(g):
    """Smallest γ whose (1 - a^(γ+1)) reaches ``share`` of its limit: a^(γ+1) <= 1 - share."""
    return math.ceil(math.log(1 - g["share"]) / math.log(g["a"])) - 1


def _model_gamma_90(g):
    limit = expected_accepted(g["a"], _GAMMA_MAX)
    gamma = 0
    while expected_accepted(g["a"], gamma) < g["share"] * limit:
        gamma += 1
    return gamma


def _spec():
    r = speculative("llama-3.1-70b", "llama-3.1-8b", "h200", 8, 1, 1024, 256, gamma=4, acceptance=0.7,
                    precision="fp8")
    return {"a": 0.7, "gamma": 4, "t_d": r["draft_tpot_s"] * 1e3, "t_v": r["verify_step_s"] * 1e3,
            "t_b": r["baseline_tpot_s"] * 1e3}


def _speedup(g):
    return g["t_b"] * _accepted(g["a"], g["gamma"]) / (g["gamma"] * g["t_d"] + g["t_v"])


def _speedup_steps(g):
    acc = _accepted(g["a"], g["gamma"])
    step = g["gamma"] * g["t_d"] + g["t_v"]
    return [f"tokens a step = (1 − {g['a']}^{g['gamma'] + 1}) ÷ (1 − {g['a']}) = {fmt(acc)}",
            f"step = γ × t_draft + t_verify = {g['gamma']} × {fmt(g['t_d'])} + {fmt(g['t_v'])} = {fmt(step)} ms",
            f"TPOT = {fmt(step)} ÷ {fmt(acc)} = {fmt(step / acc)} ms; speed-up = {fmt(g['t_b'])} ÷ {fmt(step / acc)} = "
            f"{fmt(_speedup(g))}×"]


def _stream():
    m = get_model("llama-3.1-405b")
    return {"N": m.params, "V": m.vocab_size, "dm": m.d_model, "b": 2, "n": 4, "bw": 5.0}


def _stream_tok_s(g):
    return 1 / ((g["N"] - g["V"] * g["dm"] + g["dm"]) * g["b"] / (g["bw"] * 1e12))


def _model_stream(g):
    e = estimate("llama-3.1-405b", "cerebras-cs3", g["n"], 1, 1024, 256, "bf16", tp=1, pp=g["n"],
                 weight_streaming_bytes_per_s=g["bw"] * 1e12)
    return 1 / (g["n"] * e.breakdown["decode_weights_read_s"])


def _lp30():
    m, c = get_model("llama-3.1-70b"), get_chip("groq-lp30")
    return {"N": m.params, "V": m.vocab_size, "dm": m.d_model, "b": 1, "tp": 2, "pp": 80,
            "bw": c.sram_bw_bytes_per_s / 1e12, "bw_h200": get_chip("h200").hbm_bw_bytes_per_s / 1e12}


def _lp30_us(g):
    return (g["N"] - g["V"] * g["dm"] + g["dm"]) * g["b"] / (g["tp"] * g["bw"] * 1e12) * 1e6


def _model_lp30(g):
    e = estimate("llama-3.1-70b", "groq-lp30", g["tp"] * g["pp"], 1, 1024, 256, "fp8", tp=g["tp"], pp=g["pp"],
                 mem_efficiency=1.0)
    return g["pp"] * e.breakdown["decode_weights_read_s"] * 1e6


def _usd():
    e = estimate("llama-3.1-70b", "h200", 8, 64, 1024, 256, "fp8")
    return {"price": get_chip("h200").price_usd_per_hour, "tps": e.tokens_per_s_per_chip}


def _usd_per_m(g):
    return g["price"] / 3600 / g["tps"] * 1e6


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb07-lpu-v1-int8", "07", "hand",
        "A Groq LPU v1 holds {mem_mb:,.0f} MB of SRAM and no DRAM. How many chips hold the weights of Llama 3.1 70B "
        "(N = {N:,} parameters) in int8 ({b} byte a weight)?",
        lambda: _sram("llama-3.1-70b", "groq-lpu-v1", 1),
        _chips_steps, _chips,
        lambda g: min_chips("llama-3.1-70b", "groq-lpu-v1", "int8"),
        "chips", _MIN, 0.0),
    Problem(
        "hand-nb07-lp30-fp8", "07", "hand",
        "A Groq LP30 holds {mem_mb:,.0f} MB of SRAM. How many chips hold the weights of Llama 3.1 70B "
        "(N = {N:,} parameters) in fp8 ({b} byte a weight), before any room for a KV cache?",
        lambda: _sram("llama-3.1-70b", "groq-lp30", 1),
        _chips_steps, _chips,
        lambda g: min_chips("llama-3.1-70b", "groq-lp30", "fp8"),
        "chips", _MIN, 0.0),
    Problem(
        "hand-nb07-cs3-405b", "07", "hand",
        "A Cerebras CS-3 wafer holds {mem_gb:.0f} GB of SRAM. How many wafers hold the weights of Llama 3.1 405B "
        "(N = {N:,} parameters) in bf16 ({b} bytes a weight)?",
        lambda: _sram("llama-3.1-405b", "cerebras-cs3", 2),
        _chips_steps, _chips,
        lambda g: min_chips("llama-3.1-405b", "cerebras-cs3", "bf16"),
        "wafers", _MIN, 0.0),
    Problem(
        "hand-nb07-h200-405b", "07", "hand",
        "An H200 has {hbm_gb:.1f} GB of HBM, of which {reserve:.0%} is kept free for the runtime. How many H200s hold "
        "the weights of Llama 3.1 405B (N = {N:,} parameters) in fp8 ({b} byte a weight)?",
        _h200_405b,
        lambda g: [f"usable = (1 − {g['reserve']}) × {fmt(g['hbm_gb'])} GB = "
                   f"{fmt((1 - g['reserve']) * g['hbm_gb'])} GB",
                   f"chips = ⌈{fmt(g['N'] * g['b'] / 1e9)} GB ÷ {fmt((1 - g['reserve']) * g['hbm_gb'])} GB⌉ = "
                   f"⌈{fmt(g['N'] * g['b'] / ((1 - g['reserve']) * g['hbm_gb'] * 1e9))}⌉ = {_h200_chips(g)}"],
        _h200_chips,
        lambda g: min_chips("llama-3.1-405b", "h200", "fp8"),
        "chips", _MIN, 0.0),
    Problem(
        "hand-nb07-spec-tokens", "07", "hand",
        "In speculative decoding a draft model proposes γ = {gamma} tokens and the target checks them in one step. "
        "Each draft token is accepted with probability a = {a}, independently, until the first rejection. How "
        "many tokens does a verification step yield on average?",
        lambda: {"a": 0.8, "gamma": 3},
        lambda g: [f"tokens = (1 − a^(γ+1)) ÷ (1 − a) = (1 − {g['a']}^{g['gamma'] + 1}) ÷ (1 − {g['a']}) = "
                   f"{fmt(1 - g['a'] ** (g['gamma'] + 1))} ÷ {fmt(1 - g['a'])} = {fmt(_accepted(g['a'], g['gamma']))}"],
        lambda g: _accepted(g["a"], g["gamma"]),
        lambda g: expected_accepted(g["a"], g["gamma"]),
        "tokens", _SPEC),
    Problem(
        "exam-nb07-spec-gamma-90pct", "07", "exam",
        "With acceptance a = {a} per draft token, a verification step yields (1 − a^(γ+1)) ÷ (1 − a) tokens. "
        "However long the draft, it never yields more than 1 ÷ (1 − a). What is the smallest γ that reaches "
        "{share:.0%} of that limit?",
        lambda: {"a": 0.8, "share": 0.9},
        lambda g: [f"limit = 1 ÷ (1 − {g['a']}) = {fmt(1 / (1 - g['a']))} tokens",
                   f"1 − a^(γ+1) ≥ {g['share']}  ⇒  γ + 1 ≥ ln({fmt(1 - g['share'])}) ÷ ln({g['a']}) = "
                   f"{fmt(math.log(1 - g['share']) / math.log(g['a']))}",
                   f"γ = {_gamma_90(g)}: each extra draft token adds less, and a longer draft costs more draft steps"],
        _gamma_90,
        _model_gamma_90,
        "draft tokens", _SPEC, 0.0),
    Problem(
        "exam-nb07-spec-speedup", "07", "exam",
        "Llama 3.1 70B on 8 H200s (fp8, batch 1) decodes a token in {t_b:.3f} ms. With Llama 3.1 8B as a draft, each "
        "draft token takes {t_d:.3f} ms and the step that verifies γ = {gamma} of them {t_v:.3f} ms. Each draft "
        "token is accepted with probability a = {a}. By what factor does speculative decoding speed up one user?",
        _spec,
        _speedup_steps,
        _speedup,
        lambda g: speculative("llama-3.1-70b", "llama-3.1-8b", "h200", 8, 1, 1024, 256, gamma=g["gamma"],
                              acceptance=g["a"], precision="fp8")["speedup"],
        "×", "accelbook.inference.variants.speculative (Leviathan, Kalman & Matias, ICML 2023)"),
    Problem(
        "exam-nb07-stream-405b", "07", "exam",
        "Llama 3.1 405B (N = {N:,} parameters, an embedding table of {V:,} × {dm:,}) runs in bf16 ({b} bytes a weight) "
        "on {n} CS-3 wafers that stream their weights in at {bw:g} TB/s each. A step reads every weight but the "
        "embedding table (one row of it), and for one user the {n} stages run one after another. Counting only "
        "the streaming, how many tokens/s does one user get? What is streaming good for, then?",
        _stream,
        lambda g: [f"weights read = ({fmt(g['N'])} − {fmt(g['V'])} × {fmt(g['dm'])} + {fmt(g['dm'])}) × {g['b']} = "
                   f"{fmt((g['N'] - g['V'] * g['dm'] + g['dm']) * g['b'] / 1e9)} GB a token",
                   f"{g['n']} stages of a quarter each, one after another: {fmt(1e3 / _stream_tok_s(g))} ms at "
                   f"{fmt(g['bw'])} TB/s",
                   f"tokens/s = 1 ÷ {fmt(1 / _stream_tok_s(g))} s = {fmt(_stream_tok_s(g))}: streaming makes a model "
                   "fit; only a large batch pays for each weight's read"],
        _stream_tok_s,
        _model_stream,
        "tokens/s", "accelbook.inference.estimate (weight_streaming_bytes_per_s; breakdown decode_weights_read_s)"),
    Problem(
        "exam-nb07-lp30-read-us", "07", "exam",
        "160 Groq LP30s serve Llama 3.1 70B in fp8 ({b} byte a weight) as {pp} pipeline stages of TP{tp}. Each chip "
        "reads its share from SRAM at {bw:.0f} TB/s. A token reads every weight but the embedding table of "
        "{V:,} × {dm:,} (one row of it), N = {N:,} parameters in all; the stages run one after another, and in "
        "each the {tp} chips read in parallel. How long does one token's weight read take, in µs?",
        _lp30,
        lambda g: [f"weights read = {fmt(g['N'])} − {fmt(g['V'])} × {fmt(g['dm'])} + {fmt(g['dm'])} = "
                   f"{fmt(g['N'] - g['V'] * g['dm'] + g['dm'])} bytes",
                   f"time = bytes ÷ (tp × SRAM bandwidth) = {fmt(g['N'] - g['V'] * g['dm'] + g['dm'])} ÷ "
                   f"({g['tp']} × {fmt(g['bw'])}e12) = {fmt(_lp30_us(g))} µs",
                   f"one H200 reading the same bytes from HBM at {fmt(g['bw_h200'])} TB/s takes "
                   f"{fmt(_lp30_us(g) * g['tp'] * g['bw'] / g['bw_h200'] / 1e3)} ms"],
        _lp30_us,
        _model_lp30,
        "µs", "accelbook.inference.estimate (mem_efficiency=1; breakdown decode_weights_read_s)"),
    Problem(
        "exam-nb07-usd-per-m-h200", "07", "exam",
        "The model gives {tps:.1f} tokens/s per chip for Llama 3.1 70B in fp8 on 8 H200s at batch 64 (1,024 tokens "
        "in, 256 out). An H200 rents at USD {price:.2f} an hour (list price). What does a million output tokens "
        "cost?",
        _usd,
        lambda g: [f"USD per second per chip = {fmt(g['price'])} ÷ 3,600 = {fmt(g['price'] / 3600)}",
                   f"USD per million tokens = {fmt(g['price'] / 3600)} ÷ {fmt(g['tps'])} × 1e6 = {fmt(_usd_per_m(g))}"],
        _usd_per_m,
        lambda g: estimate("llama-3.1-70b", "h200", 8, 64, 1024, 256, "fp8").usd_per_million_tokens,
        "USD per million tokens", "accelbook.inference.estimate (usd_per_million_tokens)"),
]
