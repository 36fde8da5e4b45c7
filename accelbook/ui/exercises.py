"""Exercise checkers: ``check("ridge-h100", 295)`` marks an answer right or wrong, with a hint.

Each exercise states its question, computes its expected answer from the catalogue and the model
functions (so it follows the data), and accepts a numeric answer within a tolerance or one of a set
of words. A wrong answer gets a hint, never the answer.

The expected answer, for instructors and tests: ``EXERCISES[id].expected()`` calls the exercise's
answer function and returns what the checker compares with, computed now from the catalogue and the
models: a number (in ``EXERCISES[id].unit``; ``check`` accepts any answer within ``rel_tol`` of it,
relatively, and exactly when ``rel_tol`` is 0) or a set of accepted lower-case words. For example
``EXERCISES["ridge-h100"].expected()`` is 295.3 (FLOP/byte, ±2 %) and
``EXERCISES["decode-bound"].expected()`` is ``{"memory"}``. ``accelbook.ui.solutions`` writes every
exercise's worked solution from these values to ``instructor/solutions.md`` (``make solutions``).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Callable

from accelbook.chip.design import compare_8t_8i
from accelbook.chip.roofline import layer_roofline
from accelbook.chip.systolic import closed_form, cycles
from accelbook.chip.tiling import gpu_gemm
from accelbook.economics import training_tokens_per_s, usd_per_token
from accelbook.economics.migration import Migration, payback_months
from accelbook.inference import estimate as inference_estimate
from accelbook.inference import min_chips
from accelbook.moe import crossover_sweep, equal_injection
from accelbook.network.collectives import estimate as collective_estimate
from accelbook.network.topology import hgx_h100, hop_stats, torus, tpu_slice
from accelbook.specs.chips import get_chip
from accelbook.specs.models import bytes_per_element, get_model


@dataclass(frozen=True)
class Exercise:
    """One checked question. ``expected()`` returns the answer the checker compares with (a number in
    ``unit``, accepted within ``rel_tol``; or a set of accepted lower-case words); ``hint`` is what a
    wrong answer shows; ``notebook`` is the two-digit number of the notebook that asks it."""

    id: str
    notebook: str
    question: str
    expected: Callable[[], Any]    # a number, or a set of accepted lower-case words
    rel_tol: float = 0.02
    hint: str = ""
    unit: str = ""


@dataclass(frozen=True)
class Result:
    exercise: Exercise
    answer: Any
    correct: bool
    message: str

    def _repr_html_(self) -> str:
        colour, mark = ("#2e7d32", "✔ Correct") if self.correct else ("#b00020", "✘ Not yet")
        return (f'<div style="border-left:4px solid {colour};padding:4px 10px"><b style="color:{colour}">{mark}.</b> '
                f"{html.escape(self.message)}</div>")

    def __repr__(self) -> str:
        return ("Correct. " if self.correct else "Not yet. ") + self.message

    def __bool__(self) -> bool:
        return self.correct


def _ridge(chip: str) -> float:
    return get_chip(chip).ridge_point("bf16")


def _decode_ffn_bound() -> set[str]:
    df = layer_roofline(get_model("llama-3.1-70b"), get_chip("h100"), "decode", 1, 4096)
    return {df.loc[df["op"] == "FFN up + gate", "bound"].iloc[0]}


def _cost_v5p() -> float:
    m, c = get_model("llama-3.1-70b"), get_chip("tpu-v5p")
    return usd_per_token(training_tokens_per_s(m, c, 0.5, 4096), c) * 1e6


def _batch_to_ridge() -> float:
    # GEMM of T tokens with a k×n weight: I = 2Tkn / (b(Tk + kn + Tn)) ≈ T / b for T << k, n (b = 2 bytes)
    # so the decode GEMM turns compute-bound near T = b · I* = 2 · (P/B) / 2 = I* tokens.
    return _ridge("h100")


def _gemv_util() -> float:
    return closed_form(1, 4096, 4096, 128, 128, "ws").overall_util * 100


def _waves_h100() -> float:
    return gpu_gemm(2304, 2304, 2304, sms=132)["waves"]


def _os_cycles() -> float:
    return cycles(8, 8, 8, 8, 8, "os")


def _torus16_diameter() -> float:
    return hop_stats(torus((16, 16, 16)))["diameter"]


def _ring_busbw() -> float:
    return collective_estimate("all_reduce", 64e9, hgx_h100(nvls=False), "ring").busbw_bytes_per_s / 1e9


def _small_bound() -> set[str]:
    e = collective_estimate("all_reduce", 64 * 2**10, tpu_slice("v5p", (4, 4, 4)))
    return {"latency" if e.latency_s > e.bandwidth_s else "bandwidth"}


def _nvls_busbw() -> float:
    return collective_estimate("all_reduce", 64e9, hgx_h100(nvls=True), "nvls").busbw_bytes_per_s / 1e9


def _model_state_70b() -> float:
    return 16 * get_model("llama-3.1-70b").params / 1e9


def _days_405b() -> float:
    m, chip = get_model("llama-3.1-405b"), get_chip("h100")
    return 15.6e12 * m.flops_per_token(8192, training=True, causal=True) / (16384 * 0.40 * chip.peak_flop_s("bf16")) / 86400


def _nodes_per_token() -> float:
    return 8 * (1 - math.comb(224, 8) / math.comb(256, 8))


def _decode_bound() -> set[str]:
    # the network dashboard's defaults (notebook 05; tests/test_exercises.py checks that they agree):
    # 1,024 chips as an 8×8×16 torus, 600 GB/s per chip, 1 µs per hop, 2 µs per message, 256 experts
    # (a quarter per chip), top-8, one DeepSeek-V3 token (7,168 values in bf16) per copy
    net = equal_injection(torus((8, 8, 16)), 600e9, 1e-6)
    token_bytes = int(get_model("deepseek-v3").d_model * bytes_per_element("bf16"))
    sweep = crossover_sweep({"3D torus": net}, [1.0], 8, token_bytes, 256 / 1024, message_overhead_s=2e-6)
    return {sweep["bound"].iloc[0]}


def _lpu_chips_70b() -> int:
    return min_chips("llama-3.1-70b", "groq-lpu-v1", "int8")


def _decode_bound_b1() -> set[str]:
    return {inference_estimate("llama-3.1-70b", "h200", 1, 1, 1024, 256, "fp8").decode_bound}


def _payback_simple() -> float:
    return payback_months(Migration(1.0, 0.5, 100_000, engineer_months=0, validation_usd=300_000, tooling_usd=0,
                                    port_months=0, churn_per_month=0.0))


def _more_hbm_stacks() -> set[str]:
    c = compare_8t_8i()
    return {"decode" if c.iloc[1].n_hbm_stacks > c.iloc[0].n_hbm_stacks else "training"}


EXERCISES: dict[str, Exercise] = {e.id: e for e in [
    Exercise("ridge-h100", "00", "What is the ridge point of an H100 in dense bf16, in FLOP/byte?",
             lambda: _ridge("h100"), 0.02, "Divide peak FLOP/s by memory bandwidth in bytes/s; both from ab.get_chip('h100').",
             "FLOP/byte"),
    Exercise("ridge-higher", "00", "Which has the higher bf16 ridge point: 'h100' or 'tpu-v5p'?",
             lambda: {"h100" if _ridge("h100") > _ridge("tpu-v5p") else "tpu-v5p"}, hint=
             "A higher ridge means a kernel needs more FLOPs per byte before the math units become the limit."),
    Exercise("v5p-8-chip-gib", "00", "How many GiB of HBM do 8 TPU v5p chips hold together?",
             lambda: 8 * get_chip("tpu-v5p").hbm_bytes / 2**30, 0.01,
             "GiB = 2**30 bytes; the catalogue stores bytes.", "GiB"),
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
    Exercise("os-cycles-8", "02", "How many cycles does SCALE-Sim report for an 8×8×8 GEMM, output stationary, "
             "on an 8×8 array?", _os_cycles, 0.0,
             "One fold of T + R + C - 2 cycles; SCALE-Sim reports the index of the last cycle.", "cycles"),
    Exercise("gemv-util", "02", "PE utilisation (in %) of a 1×4096×4096 GEMV on one 128×128 weight-stationary "
             "array?", _gemv_util, 0.05,
             "Every weight tile (fold) costs 2R + T + C - 2 cycles but does only T = M = 1 row of MACs.", "%"),
    Exercise("waves-h100", "02", "How many waves of 128×128 tiles does a 2304×2304×2304 GEMM take on an H100 "
             "(132 SMs)?", _waves_h100, 0.0, "Count the tiles, ⌈M/128⌉·⌈N/128⌉, then divide by the SMs and round up.",
             "waves"),
    Exercise("torus-diameter-16", "03", "Diameter of a 16×16×16 torus with wraparound?", _torus16_diameter, 0.0,
             "At most half-way round each of the three rings.", "hops"),
    Exercise("ring-busbw-h100", "03", "Model busbw (GB/s) of a large ring all-reduce on 8 H100s?", _ring_busbw, 0.02,
             "A bandwidth-bound ring's busbw is the usable link bandwidth, efficiency × 450 GB/s.", "GB/s"),
    Exercise("small-allreduce-bound", "03", "Is a 64 KiB all-reduce on a v5p 4×4×4 slice latency- or bandwidth-bound?",
             _small_bound, hint="Compare steps × 1 µs with bytes ÷ link bandwidth."),
    Exercise("nvls-busbw-h100", "03", "Model busbw (GB/s) of a large NVLS all-reduce on 8 H100s?", _nvls_busbw, 0.02,
             "Each link carries S(1 + 1/p) each way, so algbw = p/(p+1) × the NVLS rate (0.82 × 0.85 × 450 GB/s); "
             "busbw = algbw × 2(p-1)/p.", "GB/s"),
    Exercise("model-state-70b", "04", "GB of model state (bf16 weights and gradients, fp32 Adam) for Llama 3.1 70B?",
             _model_state_70b, 0.02, "16 bytes per parameter; ab.get_model('llama-3.1-70b').params.", "GB"),
    Exercise("bubble-8-32", "04", "Bubble share (%) of a 1F1B pipeline with 8 stages and 32 microbatches?",
             lambda: 100 * 7 / (32 + 7), 0.02,
             "The pipeline takes m + p - 1 microbatch-times, of which p - 1 are the bubble.", "%"),
    Exercise("days-405b", "04", "Days for 15.6T tokens of Llama 3.1 405B (8K, causal FLOPs) on 16,384 H100s at 40% MFU?",
             _days_405b, 0.03, "tokens × model.flops_per_token(8192, training=True, causal=True) ÷ "
             "(chips × MFU × peak), then seconds to days.", "days"),
    Exercise("moe-mean-load", "05", "Mean load of one expert: 4,096 tokens, 256 experts, top-8, uniform routing?",
             lambda: 4096 * 8 / 256, 0.0, "Every token makes k assignments; they spread over E experts.", "assignments"),
    Exercise("moe-nodes-per-token", "05", "Mean number of nodes (of 8, 32 experts each) a token reaches with 256 "
             "experts, top-8, uniform routing and no node limit?", _nodes_per_token, 0.01,
             "A node is missed when all 8 picks avoid its 32 experts: C(224, 8) / C(256, 8). Sum over 8 nodes.",
             "nodes"),
    Exercise("moe-decode-bound", "05", "One token per chip on the 1,024-chip 3D torus (defaults of the network "
             "dashboard): is the all-to-all 'latency' or 'bandwidth' bound?", _decode_bound,
             hint="Compare 16 hops × 1 µs plus the per-message overheads with one token's 14 KB per copy ÷ link bandwidth."),
    Exercise("lpu-chips-70b-int8", "07", "Groq LPU v1 chips (230 MB SRAM) to hold Llama 3.1 70B in int8?",
             _lpu_chips_70b,
             0.0, "Parameters × 1 byte ÷ 230 MB, rounded up.", "chips"),
    Exercise("spec-tokens-per-step", "07", "Tokens per verification step, acceptance 0.8, γ = 3?",
             lambda: (1 - 0.8**4) / (1 - 0.8), 0.01, "(1 - a^(γ+1)) / (1 - a).", "tokens"),
    Exercise("kv-bytes-70b", "06", "KV-cache bytes per token of Llama 3.1 70B in bf16 (80 layers, 8 KV heads of 128)?",
             lambda: get_model("llama-3.1-70b").kv_cache_bytes_per_token("bf16"), 0.0,
             "2 (K and V) × layers × KV heads × head size × 2 bytes.", "bytes"),
    Exercise("decode-bound-b1", "06", "Decoding Llama 3.1 70B at batch 1 on one H200 in fp8: 'memory' or 'compute' bound?",
             _decode_bound_b1,
             hint="Each token multiplies every weight once: 2 FLOPs per byte of fp8 weights, far below the ridge."),
    Exercise("capex-per-hour", "08", "Straight-line capex per useful hour: USD 40,000 over 4 years at 50% utilisation?",
             lambda: 40000 / (4 * 8760 * 0.5), 0.01, "Purchase ÷ (years × 8,760 h × utilisation).", "USD/h"),
    Exercise("payback-simple", "08", "Months to pay back USD 300,000 saving USD 0.5/M tokens at 100,000M tokens a month?",
             _payback_simple, 0.0,
             "Savings per month = 0.5 × 100,000; divide the port cost by it and round up.", "months"),
    Exercise("more-hbm-stacks", "09", "Which optimum has more HBM stacks in the default comparison: 'training' or 'decode'?",
             _more_hbm_stacks,
             hint="Decode reads every weight per token; which resource does that need?"),
]}


def check(exercise_id: str, answer: Any) -> Result:
    """Mark ``answer`` to exercise ``exercise_id``; returns a Result that displays as ✔ or ✘ with a hint."""
    try:
        ex = EXERCISES[exercise_id]
    except KeyError:
        raise ValueError(f"no exercise {exercise_id!r}; have {', '.join(EXERCISES)}") from None
    expected = ex.expected()
    if isinstance(expected, set):
        ok = isinstance(answer, str) and answer.strip().lower() in expected
        msg = "" if ok else f"Hint: {ex.hint}"
        if ok:
            msg = f"'{answer}' is right."
        return Result(ex, answer, ok, msg)
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return Result(ex, answer, False, f"Give a number{(' in ' + ex.unit) if ex.unit else ''}. Hint: {ex.hint}")
    if not math.isfinite(value):
        return Result(ex, answer, False, f"Give a finite number{(' in ' + ex.unit) if ex.unit else ''}. Hint: {ex.hint}")
    ok = abs(value - expected) <= ex.rel_tol * abs(expected)
    if ok:
        if ex.rel_tol == 0:
            return Result(ex, answer, True, f"{value:,.4g} {ex.unit} is exactly right.")
        return Result(ex, answer, True, f"{value:,.4g} {ex.unit} is within {ex.rel_tol:.0%} of the model's "
                                        f"{expected:,.4g} {ex.unit}.")
    direction = "too high" if value > expected else "too low"
    return Result(ex, answer, False, f"{value:,.4g} {ex.unit} is {direction}. Hint: {ex.hint}")
