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
from accelbook.economics import own_cost_per_hour, tco_inputs, training_tokens_per_s, usd_per_token
from accelbook.economics.fleet import example_fleet, place
from accelbook.economics.migration import Migration, payback_months, verdict
from accelbook.inference import estimate as inference_estimate
from accelbook.inference import min_chips
from accelbook.moe import crossover_sweep, equal_injection, simulate_routing
from accelbook.network.collectives import estimate as collective_estimate
from accelbook.network.topology import boardfly, hgx_h100, hop_stats, torus, tpu_slice
from accelbook.specs.chips import get_chip
from accelbook.specs.models import bytes_per_element, get_model


@dataclass(frozen=True)
class Exercise:
    """One checked question. ``expected()`` returns the answer the checker compares with (a number in
    ``unit``, accepted within ``rel_tol``; or a set of accepted lower-case words); ``hint`` is what a
    wrong answer shows; ``notebook`` is the two-digit number of the notebook that asks it; ``model_answer``
    is the reasoning an open what-if expects, for the instructor's guide (never shown by ``check``)."""

    id: str
    notebook: str
    question: str
    expected: Callable[[], Any]    # a number, or a set of accepted lower-case words
    rel_tol: float = 0.02
    hint: str = ""
    unit: str = ""
    model_answer: str = ""         # an open what-if's model answer, shown in instructor/solutions.md


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


def _latency_share_1mib() -> float:
    e = collective_estimate("all_reduce", 2**20, hgx_h100(nvls=False))
    return 100 * e.latency_s / e.time_s


def _nodes_reached(n_nodes: int, experts: int = 256, k: int = 8) -> float:
    # a node of E/n experts is missed when all k picks avoid it: C(E - E/n, k) / C(E, k)
    return n_nodes * (1 - math.comb(experts - experts // n_nodes, k) / math.comb(experts, k))


def _moe_speedup(tokens_per_chip: float) -> float:
    # the network dashboard's 1,024-chip defaults (notebook 05): torus time / BoardFly-like time, no CAE
    token_bytes = int(get_model("deepseek-v3").d_model * bytes_per_element("bf16"))
    nets = {n: equal_injection(t, 600e9, 1e-6) for n, t in (("torus", torus((8, 8, 16))), ("bf", boardfly(32, 8, 4)))}
    t = crossover_sweep(nets, [tokens_per_chip], 8, token_bytes, 256 / 1024, message_overhead_s=2e-6)
    t = t.set_index("network")["time_s"]
    return float(t["torus"] / t["bf"])


def _own_h100(utilisation: float = 0.7, **change) -> dict:
    inp = {k: v for k, v in tco_inputs().items() if k != "purchase_usd"} | change
    return own_cost_per_hour(35000, get_chip("h100").tdp_w, utilisation=utilisation, **inp)


def _pretrain_pool() -> set[str]:
    hours = place(*example_fleet(64)).hours
    return {hours.loc["pre-training"].idxmax().split()[0].lower()}


def _design(row: int, column: str, power_w: float = 700.0):
    return compare_8t_8i(power_w=power_w).iloc[row][column]


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
    Exercise("predict-v5p-fp8-gain", "00", "Predict before switching the catalogue chart to fp8: by what factor does "
             "a TPU v5p's dense peak grow from bf16 to fp8?", lambda: get_chip("tpu-v5p").peak_flop_s("fp8")
             / get_chip("tpu-v5p").peak_flop_s("bf16"), 0.02, "Does the v5p's matrix unit have a faster mode for "
             "8-bit floats? Compare its two peaks in the catalogue.", "×"),
    Exercise("kv-bytes-deepseek", "00", "KV-cache bytes per token of DeepSeek-V3 in bf16 (MLA: 61 layers, a latent of "
             "512 and a rotary key of 64 per layer)?", lambda: get_model("deepseek-v3").kv_cache_bytes_per_token("bf16"),
             0.0, "MLA caches L × (d_c + d_r) values per token, 2 bytes each.", "bytes"),
    Exercise("whatif-ridge-2x-hbm", "00", "What if an H100 had twice its HBM bandwidth and the same bf16 peak: what "
             "would its ridge point be, and which work would gain?", lambda: _ridge("h100") / 2, 0.02,
             "I* = P / B: double B.", "FLOP/byte", model_answer="I* = 989.4e12 / 6.7e12 = 148 FLOP/byte, half the "
             "H100's 295. Work below the old ridge (decode, attention over a long KV cache, element-wise layers) runs "
             "up to twice as fast, because memory set its pace; large training GEMMs, far above both ridges, gain "
             "nothing. The H200 is close to this what-if: same peak, 4.8 TB/s, ridge 206."),
    Exercise("predict-anim-cycles", "02", "Predict before moving the cycle slider: how many cycles does the animation's "
             "6×6×6 output-stationary GEMM last on the 4×4 array (the whole trace)?",
             lambda: closed_form(6, 6, 6, 4, 4, "os").trace_cycles, 0.0,
             "⌈6/4⌉ × ⌈6/4⌉ folds, each T + R + C - 2 cycles with T = K.", "cycles"),
    Exercise("predict-ws-util-k4", "02", "Predict before setting K = 4 on the dataflow dashboard (M = N = 64, 32×32 "
             "array): the overall PE utilisation (%) of weight-stationary?",
             lambda: closed_form(64, 64, 4, 32, 32, "ws").overall_util * 100, 0.1,
             "Weight-stationary maps K onto the array's rows: how many of the 32 rows hold a weight?", "%"),
    Exercise("predict-gpu-eff-2560", "02", "Predict before sweeping M on the shapes dashboard: the tile-and-wave "
             "efficiency (%) of a 2560×2560×2560 GEMM on an H100 (128×128 tiles, 132 SMs)?",
             lambda: gpu_gemm(2560, 2560, 2560, sms=132)["efficiency"] * 100, 0.03,
             "Tiles = ⌈M/128⌉·⌈N/128⌉; waves = ⌈tiles/132⌉; efficiency = tiles / (waves × 132).", "%"),
    Exercise("whatif-gemv-256", "02", "What if the weight-stationary array were 256×256 (as on TPU v6e) instead of "
             "128×128: PE utilisation (%) of the 1×4096×4096 GEMV?",
             lambda: closed_form(1, 4096, 4096, 256, 256, "ws").overall_util * 100, 0.05,
             "256 weight tiles of 2R + 1 + C - 2 cycles each; MACs ÷ (cycles × R·C).", "%", model_answer="256 folds "
             "of 2·256 + 1 + 256 - 2 = 767 cycles for 16.8 million MACs: 0.13 %, half the 128×128 array's 0.26 %. A "
             "bigger array holds four times the weights per fold but still multiplies each by a single row, and its "
             "fill and drain are twice as long. A larger MXU helps large batches and hurts decode, unless decode is "
             "batched to hundreds of rows."),
    Exercise("predict-torus-mean-hops", "03", "Predict before reading the hop histograms: the mean hop count between "
             "two chips of the 8×8×16 torus?", lambda: hop_stats(torus((8, 8, 16)))["mean_hops"], 0.05,
             "The mean distance on a ring of k is about k/4; add the three axes.", "hops"),
    Exercise("predict-latency-share-1mib", "03", "Predict before moving the message slider: what share (%) of a 1 MiB "
             "all-reduce on 8 H100s (NVLS off) is latency, in the model?",
             _latency_share_1mib, 0.2,
             "NCCL picks LL at this size: a fixed 6.6 µs plus 14 steps of 0.6 µs, against 1 MiB × 2·7/8 at about "
             "half the link rate.", "%"),
    Exercise("whatif-ring-busbw-2x", "03", "What if every NVLink link of the 8-H100 node had twice the bandwidth: model "
             "busbw (GB/s) of a large ring all-reduce?", lambda: collective_estimate(
                 "all_reduce", 64e9, hgx_h100(nvls=False).scaled(bandwidth=2.0), "ring").busbw_bytes_per_s / 1e9,
             0.02, "A bandwidth-bound ring's busbw is the usable link bandwidth.", "GB/s", model_answer="0.82 × 900 = "
             "738 GB/s, twice the 369: large collectives are bandwidth-bound and scale with the link. A 1 KiB "
             "all-reduce stays at about 15 µs: it is almost all NCCL's fixed and per-step latency, which more "
             "bandwidth does not touch. Decode-size messages need lower latency, not wider links."),
    Exercise("predict-moe-dropped-skew1", "05", "Predict before moving the routing sliders: with Zipf skew 1, a capacity "
             "factor of 1.25 and no balancing, what share (%) of the assignments is dropped (4,096 tokens, 256 experts, "
             "top-8)?", lambda: 100 * simulate_routing(4096, 256, 8, skew=1.0, capacity_factor=1.25, n_batches=30,
                                                       seed=2).dropped_fraction.mean(), 0.2,
             "Each expert keeps at most ⌈1.25 · T·k/E⌉ = 160; how far above that are the hottest experts?", "%"),
    Exercise("predict-boardfly-speedup", "05", "Predict before reading the network dashboard: at 1 token per chip "
             "(its defaults, no collective engine), how many times faster is the BoardFly-like network's all-to-all "
             "than the 1,024-chip torus's?", lambda: _moe_speedup(1.0), 0.15,
             "Both pay 2 µs per peer message; only the hops differ (16 against 5, at 1 µs each).", "×"),
    Exercise("whatif-16-nodes", "05", "What if DeepSeek-V3's 256 experts were spread over 16 nodes of 16 instead of 8 "
             "of 32: how many nodes does a token reach on average, top-8, uniform routing, no node limit?",
             lambda: _nodes_reached(16), 0.01, "A node is missed when all 8 picks avoid its 16 experts.", "nodes",
             model_answer="16 × (1 - C(240, 8)/C(256, 8)) = 6.5 nodes, against 5.3 on 8 nodes: almost every pick lands "
             "on a different node, so each token crosses the inter-node network about 6.5 times instead of 5.3 "
             "(+23 %). A node limit of 4 then saves more (6.5 → 4 instead of 5.3 → 4), which is why node-limited "
             "routing matters more as expert parallelism spreads wider."),
    Exercise("predict-own-h100-util35", "08", "Predict before moving the utilisation slider: an owned H100 costs USD "
             "2.47 per useful hour at 70 % utilisation; what at 35 %?", lambda: _own_h100(0.35)["usd_per_hour"], 0.05,
             "Which parts of the cost are paid per wall-clock hour, busy or not?", "USD/h"),
    Exercise("predict-payback", "08", "Predict before reading the migration dashboard: months to pay back at its "
             "defaults (USD 2.0 → 1.2 per M tokens, 16,384M tokens a month growing 5 %, 12 engineer-months, 5 % "
             "churn)?", lambda: verdict(Migration(2.0, 1.2, 16384, 0.05, churn_per_month=0.05))["payback_months"], 0.2,
             "Port cost USD 450,000; savings 0.8 × volume a month once the port is live, less churn's rework.",
             "months"),
    Exercise("predict-pretrain-pool", "08", "Predict before moving the fleet sliders: which pool pre-trains Llama 3.1 "
             "70B in the least-cost fleet at its defaults: 'gpu', 'tpu' or 'lpu'?", _pretrain_pool,
             hint="Compare USD per training token on rented H100s and TPU v5p; LPUs do not train."),
    Exercise("whatif-electricity-2x", "08", "What if electricity cost twice as much (USD 0.16/kWh): by how many % "
             "does an owned H100's cost per useful hour rise (70 % utilisation)?",
             lambda: 100 * (_own_h100(electricity_usd_per_kwh=0.16)["usd_per_hour"] / _own_h100()["usd_per_hour"] - 1),
             0.05, "Only the power term changes: TDP × load share × PUE × tariff.", "%", model_answer="Power is "
             "700 W × 0.75 × 1.2 × USD 0.08/kWh = USD 0.050 per wall-clock hour, 0.072 per useful hour at 70 %: "
             "2.9 % of USD 2.47. Doubling the tariff adds that 2.9 % again. The purchase (70 %) and overheads (27 %) "
             "dominate, so utilisation and price, not electricity, decide an owned token's cost."),
    Exercise("predict-decode-stacks", "09", "Predict before moving the design sliders: how many HBM stacks does the "
             "decode optimum take on the default 820 mm², 700 W die?", lambda: _design(1, "n_hbm_stacks"), 0.0,
             "Decode reads every weight and the KV cache per token; how many stacks can the die's edge connect?",
             "stacks"),
    Exercise("design-training-limit-400", "09", "At a 400 W budget, what limits the training optimum: 'power', "
             "'compute' or 'memory bandwidth'?", lambda: {_design(0, "training_limit", 400.0)},
             hint="cd.compare_8t_8i(power_w=400): can every mm² of matrix units run at full clock?"),
    Exercise("design-compromise-loss", "09", "How much (%) of the best training throughput does the compromise chip "
             "give up at 700 W?", lambda: 100 * (1 - _design(2, "training_vs_best")), 0.05,
             "1 - training_vs_best of the compromise row of cd.compare_8t_8i().", "%"),
    Exercise("design-training-opt-decode", "09", "What share (%) of the best decode throughput does the training "
             "optimum reach?", lambda: 100 * _design(0, "decode_vs_best"), 0.05,
             "decode_vs_best of the training row: how many HBM stacks did it keep?", "%"),
    Exercise("whatif-design-1000w", "09", "What if the power budget were 1,000 W: how much (%) of the best training "
             "throughput would the compromise chip give up?", lambda: 100 * (1 - _design(2, "training_vs_best", 1000.0)),
             0.05, "cd.compare_8t_8i(power_w=1000).", "%", model_answer="About 10 %, against 8 % at 700 W and 5 % at "
             "400 W. More watts let the training optimum clock more matrix area; the compromise keeps all 8 HBM stacks "
             "for decode and cannot give that area to matrix units. The richer the power budget, the more a single "
             "chip serving both workloads loses: one reason the eighth-generation TPUs split."),
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


# -- notebook 10: number formats and quantisation (one block; answers from accelbook.chip.number_formats) ------
from accelbook.chip import number_formats as nf  # noqa: E402  (kept with the block it serves)


def _fp4_over_fp8_tpu8i() -> float:
    table = nf.peak_ratio_table([get_chip("tpu-8i")])
    return float(table["ratio"].iloc[0])


def _nvfp4_decode_speedup() -> float:
    return nf.decode_speedup(get_model("llama-3.1-70b"), get_chip("b200"), "nvfp4", "bf16", 8192, 1)


def _nvfp4_memory_share() -> float:
    m = get_model("llama-3.1-70b")
    nv, bf = (nf.serving_memory(m, w, "bf16", 8192, 32)["total_bytes"] for w in ("nvfp4", "bf16"))
    return 100 * nv / bf


def _kv_gb_70b_b64_32k() -> float:
    return nf.serving_memory(get_model("llama-3.1-70b"), "fp8-e4m3", "bf16", 32768, 64)["kv_bytes"] / 1e9


EXERCISES.update({e.id: e for e in [
    Exercise("e4m3-max", "10", "Largest finite value of FP8 E4M3 (4 exponent bits, bias 7, 3 mantissa bits, OCP rules)?",
             lambda: nf.max_finite("fp8-e4m3"), 0.0,
             "The top exponent code holds numbers except all-ones mantissa (the NaN): (2 − 2^(1−M)) × 2^(15 − 7).", ""),
    Exercise("mxfp4-bits", "10", "Bits per element of MXFP4, counting the E8M0 scale shared by a block of 32?",
             lambda: nf.bits_per_element("mxfp4"), 0.0, "Element bits + scale bits ÷ block size.", "bits"),
    Exercise("fp4-over-fp8-tpu8i", "10", "TPU 8i: dense fp4 peak over dense fp8 peak (from the catalogue)?",
             _fp4_over_fp8_tpu8i, 0.02, "Divide the two peaks of chips.toml; is it 2?", "×"),
    Exercise("weights-70b-fp8-gb", "10", "Llama 3.1 70B's weights in fp8 E4M3, in GB?",
             lambda: get_model("llama-3.1-70b").params * nf.bits_per_element("fp8-e4m3") / 8 / 1e9, 0.02,
             "Parameters × bits per element ÷ 8.", "GB"),
    Exercise("predict-nvfp4-speedup", "10", "Predict: decode step speed-up of NVFP4 weights (KV cache kept in bf16) "
             "over bf16, Llama 3.1 70B on a B200, batch 1, 8,192 tokens of context?", _nvfp4_decode_speedup, 0.02,
             "Memory-bound: the ratio of bytes read. Weights at 4.5 bits, not 4; the KV cache does not shrink.", "×"),
    Exercise("nvfp4-memory-share", "10", "Memory to serve Llama 3.1 70B (batch 32, 8,192 tokens, bf16 KV cache) with "
             "NVFP4 weights, as a percentage of the memory with bf16 weights?", _nvfp4_memory_share, 0.02,
             "Weights at 4.5 bits against 16; the KV cache is the same in both.", "%"),
    Exercise("what-if-long-context-kv", "10", "What if Llama 3.1 70B serves batch 64 at 32,768 tokens of context "
             "with fp8 weights: how many GB does a bf16 KV cache take? What does that say about moving the weights "
             "from fp8 to NVFP4?", _kv_gb_70b_b64_32k, 0.02,
             "KV bytes per token × tokens × batch; compare with 70.6 GB of fp8 weights.", "GB",
             model_answer="The KV cache (about 687 GB) is ten times the fp8 weights (70.6 GB). Moving the weights to "
             "NVFP4 saves about 31 GB, about 4 % of the 758 GB total, and the decode step, which reads all of it, "
             "barely speeds up. At long contexts and large batches the KV cache's format (fp8 or NVFP4 KV, or fewer "
             "KV heads, or MLA) decides memory and speed, not the weights'. The model leaves out the accuracy cost "
             "of a 4-bit KV cache, which the published results here do not measure."),
]})
