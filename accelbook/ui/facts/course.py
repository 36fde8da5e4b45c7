"""Facts quoted in the prose of the README, instructor/ and docs/ (keys ``course.*``); see :mod:`accelbook.ui.facts`.

Each calls the package as the notebooks' code cells do: the validation bands of :mod:`accelbook.training`
and :mod:`accelbook.inference`, the catalogue's chips and models, and the dashboards' defaults. The figures of
``instructor/misconceptions.md`` are :mod:`accelbook.ui.facts.course_misconceptions`'s (imported here, so that
loading this module registers them too).
"""

from __future__ import annotations

from accelbook import training
from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui.facts import (
    course_memory,  # noqa: F401  (registers its facts)
    course_misconceptions,  # noqa: F401  (registers its facts)
    fact,
)
from accelbook.ui.facts.course_text import (
    chip,
    compromise,
    framework,
    inf_bands,
    listed,
    num,
    params_error,
    pct,
    short,
    signed,
    train_band,
)

# --- the training model against published runs (accelbook.training.validation) -----------------------

@fact("course.train_median_pct")
def train_median_pct() -> str:
    """The training model's median error over the target runs, in % (positive: optimistic)."""
    return pct(train_band().median)


@fact("course.train_heldout_median_pct")
def train_heldout_median_pct() -> str:
    """The training model's median error over the held-out target runs alone (added after its mechanisms were
    chosen, looked at only to report), in %."""
    return pct(training.error_band(set="held-out").median)


@fact("course.train_correction")
def train_correction() -> str:
    """The correction factor notebook 04 declines to apply: 1 / (1 + median error)."""
    return f"{1 / (1 + train_band().median):.2f}"


# --- the inference model against published results (accelbook.inference.validation) -------------------

@catalogue_cache(maxsize=None)
def _inf_throughput_rows():
    from accelbook import inference

    v = inference.validation_table()
    return v[(v["role"] == "target") & (v["metric"] == "tokens_per_s_per_chip")]


@fact("course.inf_tput_median_pct")
def inf_tput_median_pct() -> str:
    """The inference model's median throughput error against TensorRT-LLM's and vLLM's (MI300X) tables, in %."""
    return pct(inf_bands()["tokens_per_s_per_chip"].median)


@fact("course.inf_tput_median_signed")
def inf_tput_median_signed() -> str:
    return signed(inf_bands()["tokens_per_s_per_chip"].median)


@fact("course.inf_tput_lo")
def inf_tput_lo() -> str:
    return signed(inf_bands()["tokens_per_s_per_chip"].lo)


@fact("course.inf_tput_hi")
def inf_tput_hi() -> str:
    return signed(inf_bands()["tokens_per_s_per_chip"].hi)


@fact("course.inf_tput_within_20")
def inf_tput_within_20() -> str:
    """How many throughput rows are within ±20 % (notebook 06, section 4)."""
    return str(int((_inf_throughput_rows()["error"].abs() <= 0.20).sum()))


@fact("course.inf_tput_rows")
def inf_tput_rows() -> str:
    return str(len(_inf_throughput_rows()))


@fact("course.inf_ttft_short")
def inf_ttft_short() -> str:
    """How far short batch-1 TTFT is predicted, least to most, in % (``19–45``)."""
    b = inf_bands()["ttft_ms"]
    return f"{-b.hi * 100:.0f}–{-b.lo * 100:.0f}"


@fact("course.inf_ttft_gap_per_layer_us")
def inf_ttft_gap_per_layer_us() -> str:
    """The batch-1 TTFT the roofline misses per layer on the GPUs, in µs (notebook 06, cell 16's gap table)."""
    from accelbook import inference
    from accelbook.specs.models import get_model

    v = inference.validation_table()
    runs = inference.published_results()
    rows = v[v["metric"] == "ttft_ms"]
    gap = [(r.reported - r.predicted) * 1e3 / get_model(runs[r.id]["model"]).n_layers for r in rows.itertuples()]
    return f"{round(min(gap), -1):.0f}–{round(max(gap), -1):.0f}"


@catalogue_cache(maxsize=None)
def _mlperf_errors():
    from accelbook.inference import mlperf

    return mlperf.server_validation_table()["tokens_per_s_error"]


@fact("course.mlperf_tput_lo")
def mlperf_tput_lo() -> str:
    """The serving simulator's throughput error on MLPerf v4.1 Server runs, lowest, in %."""
    return signed(_mlperf_errors().min())


@fact("course.mlperf_tput_hi")
def mlperf_tput_hi() -> str:
    return signed(_mlperf_errors().max())


# --- the model catalogue (notebook 00's table) --------------------------------------------------------

_PARAM_OUTLIERS = ("llama-2-70b", "llama-4-scout", "kimi-k2")


@fact("course.params_within_pct")
def params_within_pct() -> str:
    """The largest parameter-count error of the models but the three outliers, rounded up to 0.5 %."""
    import math

    worst = params_error().drop(list(_PARAM_OUTLIERS)).abs().max()
    return f"{math.ceil(worst * 200) / 2:.1f}"


@fact("course.params_err_llama2_70b")
def params_err_llama2_70b() -> str:
    return pct(abs(params_error()["llama-2-70b"]), 1)


@fact("course.params_err_llama4_scout")
def params_err_llama4_scout() -> str:
    return pct(abs(params_error()["llama-4-scout"]), 1)


@fact("course.params_err_kimi_k2")
def params_err_kimi_k2() -> str:
    return pct(abs(params_error()["kimi-k2"]), 1)


# --- the chip catalogue ------------------------------------------------------------------------------

def _ridge(cid: str) -> str:
    return num(chip(cid).ridge_point("bf16"))


@fact("course.ridge_a100")
def ridge_a100() -> str:
    return _ridge("a100")


@fact("course.ridge_h100")
def ridge_h100() -> str:
    return _ridge("h100")


@fact("course.ridge_h200")
def ridge_h200() -> str:
    return _ridge("h200")


@fact("course.ridge_b200")
def ridge_b200() -> str:
    return _ridge("b200")


@fact("course.ridge_v5p")
def ridge_v5p() -> str:
    return _ridge("tpu-v5p")


@fact("course.h100_hbm_tb_s")
def h100_hbm_tb_s() -> str:
    return f"{chip('h100').hbm_bw_bytes_per_s / 1e12:.2f}"


@fact("course.h100_link_gb_s")
def h100_link_gb_s() -> str:
    """An H100's NVLink bandwidth each way (the catalogue records it both ways together)."""
    c = chip("h100")
    return num(c.link_bw_bytes_per_s / (2 if c.link_bw_direction == "bidirectional" else 1) / 1e9)


@fact("course.h100_tdp_w")
def h100_tdp_w() -> str:
    return num(chip("h100").tdp_w)


@fact("course.lpu_v1_sram_mb")
def lpu_v1_sram_mb() -> str:
    return num(chip("groq-lpu-v1").sram_bytes / 1e6)


@fact("course.cs3_sram_gb")
def cs3_sram_gb() -> str:
    return num(chip("cerebras-cs3").sram_bytes / 1e9)


@fact("course.kv_bytes_llama31_70b")
def kv_bytes_llama31_70b() -> str:
    from accelbook.specs.models import get_model

    return num(get_model("llama-3.1-70b").kv_cache_bytes_per_token("bf16"))


# --- FLOP conventions (notebooks 01 and 04) -----------------------------------------------------------

def _full_over_causal(mid: str) -> str:
    from accelbook.specs.models import get_model
    from accelbook.training import counted_flops_per_token

    m = get_model(mid)
    return signed(counted_flops_per_token(m, 8192, "full") / counted_flops_per_token(m, 8192, "causal") - 1, 1)


@fact("course.full_over_causal_8b")
def full_over_causal_8b() -> str:
    """MFU counted with full attention over causal, Llama 3.1 8B at 8K tokens (notebook 01)."""
    return _full_over_causal("llama-3.1-8b")


@fact("course.full_over_causal_70b")
def full_over_causal_70b() -> str:
    return _full_over_causal("llama-3.1-70b")


@fact("course.state_bytes_bf16_grads")
def state_bytes_bf16_grads() -> str:
    """Model-state bytes per parameter with bf16 gradients (ZeRO's count): gradients as wide as the weights."""
    fw = framework()
    return f"{2 * fw.weight_bytes_per_param + fw.optimizer_bytes_per_param:.0f}"


@fact("course.state_bytes_megatron")
def state_bytes_megatron() -> str:
    """Model-state bytes per parameter the training model counts (Megatron's fp32 gradients)."""
    fw = framework()
    return f"{fw.weight_bytes_per_param + fw.grad_bytes_per_param + fw.optimizer_bytes_per_param:.0f}"


# --- dashboards' defaults ----------------------------------------------------------------------------

@fact("course.nb01_default_mfu_pct")
def nb01_default_mfu_pct() -> str:
    """The MFU notebook 01's training-cost dashboard opens at, in %."""
    from accelbook.ui.dashboards.nb01_gpu_vs_tpu import training_cost_spec

    return pct(training_cost_spec().defaults()["mfu"])


@fact("course.nb07_default_target_tps_user")
def nb07_default_target_tps_user() -> str:
    """The per-user target notebook 07's frontier dashboard opens at, tokens/s."""
    from accelbook.ui.dashboards.nb07_inference_asics import frontier_spec

    return num(frontier_spec().defaults()["target_tps_user"])


# --- chip design (notebook 09) -----------------------------------------------------------------------

@fact("course.compromise_training_loss_pct")
def compromise_training_loss_pct() -> str:
    return pct(1 - compromise().training_vs_best)


@fact("course.compromise_decode_loss_pct")
def compromise_decode_loss_pct() -> str:
    return pct(1 - compromise().decode_vs_best)


@fact("course.design_power_w")
def design_power_w() -> str:
    """The chip-design calculator's default power budget, W."""
    from accelbook.chip import design as cd

    return num(cd.params().power_w)


# --- assignments: the chips the catalogue can answer for -----------------------------------------------

@fact("course.a1_chips")
def a1_chips() -> str:
    """Assignment 1's choice: every shipping GPU or TPU of the catalogue with a list rental price."""
    from accelbook.specs.chips import all_chips

    chips = [c for c in all_chips()
             if c.status == "shipping" and c.kind in ("gpu", "tpu") and c.price_usd_per_hour is not None]
    return listed(sorted((short(c) for c in chips), key=lambda n: (n.startswith("TPU"), n)))


#: the 8-chip systems assignment 2 would like to compare; the fact keeps those the catalogue can cost
_A2_POOL = ("h100", "h200", "b200", "tpu-v6e", "groq-lp30")


@fact("course.a2_pool")
def a2_pool() -> str:
    """The systems assignment 2 starts from, before the catalogue's prices filter them."""
    return listed([short(chip(c)) for c in _A2_POOL])


@fact("course.a2_chips")
def a2_chips() -> str:
    """Assignment 2's candidates: of the pool, the chips ``economics.rent_or_own`` can cost, rented (a list
    price) or owned (a purchase estimate and its server's power)."""
    from accelbook.economics.tco import tco_inputs
    from accelbook.specs.system_power import system_power

    purchase = tco_inputs()["purchase_usd"]
    ok = [c for c in map(chip, _A2_POOL)
          if c.price_usd_per_hour is not None or (purchase.get(c.id) is not None and system_power(c) is not None)]
    return listed([f"8 × {short(c)}" for c in ok])


@catalogue_cache(maxsize=None)
def _decode_example():
    from accelbook import inference

    return inference.estimate("llama-3.1-70b", "h200", 1, 1, 2048, 256, "fp8").breakdown


@fact("course.decode_example_memory_ms")
def decode_example_memory_ms() -> str:
    """Batch-1 decode of Llama 3.1 70B in fp8 on one H200 (notebook 06, exercise 3): HBM time, ms."""
    return f"{_decode_example()['decode_memory_s'] * 1e3:.1f}"


@fact("course.decode_example_compute_ms")
def decode_example_compute_ms() -> str:
    return f"{_decode_example()['decode_compute_s'] * 1e3:.1f}"


@fact("course.ci_level_pct")
def ci_level_pct() -> str:
    """The confidence level of the serving Monte Carlo's intervals (notebook 11), in %."""
    import inspect

    from accelbook.sweep import serving_mc

    return pct(inspect.signature(serving_mc.replication_intervals).parameters["level"].default)


# --- the benchmarks' goals (README): read from the scripts, not typed twice ------------------------------

def _bench_constant(script: str, name: str) -> float:
    """A module-level constant of ``benchmarks/<script>.py``, read without running the script."""
    import ast
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "benchmarks" / f"{script}.py"
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return float(ast.literal_eval(node.value))
    raise KeyError(f"no constant {name} in {path}")


def _g(x: float) -> str:
    return f"{x:g}"


@fact("course.bench_dashboard_target_ms")
def bench_dashboard_target_ms() -> str:
    return _g(_bench_constant("bench_dashboards", "TARGET_P95_S") * 1e3)


@fact("course.bench_training_goal_s")
def bench_training_goal_s() -> str:
    return _g(_bench_constant("bench_training", "GOAL_S"))


@fact("course.bench_moe_goal_ratio")
def bench_moe_goal_ratio() -> str:
    return _g(_bench_constant("bench_moe", "GOAL_RATIO"))


@fact("course.bench_moe_goal_ms")
def bench_moe_goal_ms() -> str:
    return _g(_bench_constant("bench_moe", "GOAL_S") * 1e3)


@fact("course.bench_serving_goal_s")
def bench_serving_goal_s() -> str:
    return _g(_bench_constant("bench_serving", "GOAL_S"))


@fact("course.n_chips")
def n_chips() -> str:
    """How many accelerators ``data/chips.toml`` holds."""
    import accelbook as ab

    return str(len(ab.chips()))


@fact("course.n_models")
def n_models() -> str:
    import accelbook as ab

    return str(len(ab.models()))


@fact("course.claims_total")
def claims_total() -> str:
    from accelbook.economics.claims import load_claims

    return f"{len(load_claims())}"


@fact("course.claims_article1")
def claims_article1() -> str:
    from accelbook.economics.claims import article_of, load_claims

    return f"{sum(article_of(c) == 'article-1' for c in load_claims())}"


@fact("course.half_matrix_400_loss_pct")
def half_matrix_400_loss_pct() -> str:
    """Misconceptions §09: at 400 W, halving the training optimum's matrix area loses this share (%) of throughput."""
    from accelbook.ui.facts import value

    return value("nb09.half_matrix_400_loss_pct")


@fact("course.train_opt_matrix_400")
def train_opt_matrix_400() -> str:
    from accelbook.ui.facts import value

    return value("nb09.train_opt_matrix_400")
