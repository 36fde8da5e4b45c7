"""Facts quoted in the prose of the README, instructor/ and docs/ (keys ``course.*``); see :mod:`accelbook.ui.facts`.

Each calls the package as the notebooks' code cells do: the validation bands of :mod:`accelbook.training`
and :mod:`accelbook.inference`, the catalogue's chips and models, and the dashboards' defaults.
"""

from __future__ import annotations

import functools

from accelbook.ui.facts import fact


def _pct(x: float, digits: int = 0) -> str:
    return f"{x * 100:.{digits}f}"


def _signed(x: float, digits: int = 0) -> str:
    return f"{x * 100:+.{digits}f}".replace("-", "\u2212")


def _num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _chip(cid: str):
    from accelbook.specs.chips import get_chip

    return get_chip(cid)


def _short(chip) -> str:
    """A chip's short name as the prose writes it: ``H100``, ``TPU v5p``."""
    for alias in chip.aliases:
        if alias.startswith("TPU "):
            return alias
    return chip.aliases[0] if chip.aliases else chip.name


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --- the training model against published runs (accelbook.training.validation) -----------------------

@functools.cache
def _train_band():
    from accelbook import training

    return training.error_band()


@fact("course.train_median_pct")
def train_median_pct() -> str:
    """The training model's median error over the target runs, in % (positive: optimistic)."""
    return _pct(_train_band().median)


@fact("course.train_correction")
def train_correction() -> str:
    """The correction factor notebook 04 declines to apply: 1 / (1 + median error)."""
    return f"{1 / (1 + _train_band().median):.2f}"


# --- the inference model against published results (accelbook.inference.validation) -------------------

@functools.cache
def _inf_bands():
    from accelbook import inference

    return inference.error_band()


@functools.cache
def _inf_throughput_rows():
    from accelbook import inference

    v = inference.validation_table()
    return v[(v["role"] == "target") & (v["metric"] == "tokens_per_s_per_chip")]


@fact("course.inf_tput_median_pct")
def inf_tput_median_pct() -> str:
    """The inference model's median throughput error against TensorRT-LLM's tables, in %."""
    return _pct(_inf_bands()["tokens_per_s_per_chip"].median)


@fact("course.inf_tput_median_signed")
def inf_tput_median_signed() -> str:
    return _signed(_inf_bands()["tokens_per_s_per_chip"].median)


@fact("course.inf_tput_lo")
def inf_tput_lo() -> str:
    return _signed(_inf_bands()["tokens_per_s_per_chip"].lo)


@fact("course.inf_tput_hi")
def inf_tput_hi() -> str:
    return _signed(_inf_bands()["tokens_per_s_per_chip"].hi)


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
    b = _inf_bands()["ttft_ms"]
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


@functools.cache
def _mlperf_errors():
    from accelbook.inference import mlperf

    return mlperf.server_validation_table()["tokens_per_s_error"]


@fact("course.mlperf_tput_lo")
def mlperf_tput_lo() -> str:
    """The serving simulator's throughput error on MLPerf v4.1 Server runs, lowest, in %."""
    return _signed(_mlperf_errors().min())


@fact("course.mlperf_tput_hi")
def mlperf_tput_hi() -> str:
    return _signed(_mlperf_errors().max())


# --- the model catalogue (notebook 00's table) --------------------------------------------------------

@functools.cache
def _params_error():
    import accelbook as ab

    return ab.models(seq_len=4096).set_index("id")["params_error"]


_PARAM_OUTLIERS = ("llama-2-70b", "llama-4-scout", "kimi-k2")


@fact("course.params_within_pct")
def params_within_pct() -> str:
    """The largest parameter-count error of the models but the three outliers, rounded up to 0.5 %."""
    import math

    worst = _params_error().drop(list(_PARAM_OUTLIERS)).abs().max()
    return f"{math.ceil(worst * 200) / 2:.1f}"


@fact("course.params_err_llama2_70b")
def params_err_llama2_70b() -> str:
    return _pct(abs(_params_error()["llama-2-70b"]), 1)


@fact("course.params_err_llama4_scout")
def params_err_llama4_scout() -> str:
    return _pct(abs(_params_error()["llama-4-scout"]), 1)


@fact("course.params_err_kimi_k2")
def params_err_kimi_k2() -> str:
    return _pct(abs(_params_error()["kimi-k2"]), 1)


# --- the chip catalogue ------------------------------------------------------------------------------

def _ridge(cid: str) -> str:
    return _num(_chip(cid).ridge_point("bf16"))


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


@fact("course.h100_hbm_gb")
def h100_hbm_gb() -> str:
    return _num(_chip("h100").hbm_bytes / 1e9)


@fact("course.h100_hbm_tb_s")
def h100_hbm_tb_s() -> str:
    return f"{_chip('h100').hbm_bw_bytes_per_s / 1e12:.2f}"


@fact("course.h100_link_gb_s")
def h100_link_gb_s() -> str:
    """An H100's NVLink bandwidth each way (the catalogue records it both ways together)."""
    c = _chip("h100")
    return _num(c.link_bw_bytes_per_s / (2 if c.link_bw_direction == "bidirectional" else 1) / 1e9)


@fact("course.h100_tdp_w")
def h100_tdp_w() -> str:
    return _num(_chip("h100").tdp_w)


@fact("course.lpu_v1_sram_mb")
def lpu_v1_sram_mb() -> str:
    return _num(_chip("groq-lpu-v1").sram_bytes / 1e6)


@fact("course.cs3_sram_gb")
def cs3_sram_gb() -> str:
    return _num(_chip("cerebras-cs3").sram_bytes / 1e9)


@fact("course.kv_bytes_llama31_70b")
def kv_bytes_llama31_70b() -> str:
    from accelbook.specs.models import get_model

    return _num(get_model("llama-3.1-70b").kv_cache_bytes_per_token("bf16"))


# --- FLOP conventions (notebooks 01 and 04) -----------------------------------------------------------

def _full_over_causal(mid: str) -> str:
    from accelbook.specs.models import get_model
    from accelbook.training import counted_flops_per_token

    m = get_model(mid)
    return _signed(counted_flops_per_token(m, 8192, "full") / counted_flops_per_token(m, 8192, "causal") - 1, 1)


@fact("course.full_over_causal_8b")
def full_over_causal_8b() -> str:
    """MFU counted with full attention over causal, Llama 3.1 8B at 8K tokens (notebook 01)."""
    return _full_over_causal("llama-3.1-8b")


@fact("course.full_over_causal_70b")
def full_over_causal_70b() -> str:
    return _full_over_causal("llama-3.1-70b")


@functools.cache
def _framework():
    from accelbook.training.framework import framework_defaults

    return framework_defaults()


@fact("course.state_bytes_bf16_grads")
def state_bytes_bf16_grads() -> str:
    """Model-state bytes per parameter with bf16 gradients (ZeRO's count): gradients as wide as the weights."""
    fw = _framework()
    return f"{2 * fw.weight_bytes_per_param + fw.optimizer_bytes_per_param:.0f}"


@fact("course.state_bytes_megatron")
def state_bytes_megatron() -> str:
    """Model-state bytes per parameter the training model counts (Megatron's fp32 gradients)."""
    fw = _framework()
    return f"{fw.weight_bytes_per_param + fw.grad_bytes_per_param + fw.optimizer_bytes_per_param:.0f}"


# --- dashboards' defaults ----------------------------------------------------------------------------

@fact("course.nb01_default_mfu_pct")
def nb01_default_mfu_pct() -> str:
    """The MFU notebook 01's training-cost dashboard opens at, in %."""
    from accelbook.ui.dashboards.nb01_gpu_vs_tpu import training_cost_spec

    return _pct(training_cost_spec().defaults()["mfu"])


@fact("course.nb07_default_target_tps_user")
def nb07_default_target_tps_user() -> str:
    """The per-user target notebook 07's frontier dashboard opens at, tokens/s."""
    from accelbook.ui.dashboards.nb07_inference_asics import frontier_spec

    return _num(frontier_spec().defaults()["target_tps_user"])


# --- chip design (notebook 09) -----------------------------------------------------------------------

@functools.cache
def _compromise():
    from accelbook.chip import design as cd

    return cd.compare_8t_8i().iloc[2]


@fact("course.compromise_training_loss_pct")
def compromise_training_loss_pct() -> str:
    return _pct(1 - _compromise().training_vs_best)


@fact("course.compromise_decode_loss_pct")
def compromise_decode_loss_pct() -> str:
    return _pct(1 - _compromise().decode_vs_best)


@fact("course.design_power_w")
def design_power_w() -> str:
    """The chip-design calculator's default power budget, W."""
    from accelbook.chip import design as cd

    return _num(cd.params().power_w)


# --- assignments: the chips the catalogue can answer for -----------------------------------------------

@fact("course.a1_chips")
def a1_chips() -> str:
    """Assignment 1's choice: every shipping GPU or TPU of the catalogue with a list rental price."""
    from accelbook.specs.chips import all_chips

    chips = [c for c in all_chips()
             if c.status == "shipping" and c.kind in ("gpu", "tpu") and c.price_usd_per_hour is not None]
    return _listed(sorted((_short(c) for c in chips), key=lambda n: (n.startswith("TPU"), n)))


#: the 8-chip systems assignment 2 would like to compare; the fact keeps those the catalogue can cost
_A2_POOL = ("h100", "h200", "b200", "tpu-v6e", "groq-lp30")


@fact("course.a2_pool")
def a2_pool() -> str:
    """The systems assignment 2 starts from, before the catalogue's prices filter them."""
    return _listed([_short(_chip(c)) for c in _A2_POOL])


@fact("course.a2_chips")
def a2_chips() -> str:
    """Assignment 2's candidates: of the pool, the chips ``economics.rent_or_own`` can cost, rented (a list
    price) or owned (a purchase estimate and its server's power)."""
    from accelbook.economics.tco import tco_inputs
    from accelbook.specs.system_power import system_power

    purchase = tco_inputs()["purchase_usd"]
    ok = [c for c in map(_chip, _A2_POOL)
          if c.price_usd_per_hour is not None or (purchase.get(c.id) is not None and system_power(c) is not None)]
    return _listed([f"8 × {_short(c)}" for c in ok])


@functools.cache
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

    return _pct(inspect.signature(serving_mc.replication_intervals).parameters["level"].default)


# --- instructor/misconceptions.md: what the notebooks compute ---------------------------------------------

def _expected(exercise_id: str):
    from accelbook.ui.exercises import EXERCISES

    return EXERCISES[exercise_id].expected()


@fact("course.llama2_70b_params_e9")
def llama2_70b_params_e9() -> str:
    from accelbook.specs.models import get_model

    return f"{get_model('llama-2-70b').params / 1e9:.2f}"


@fact("course.params_err_llama2_70b_signed")
def params_err_llama2_70b_signed() -> str:
    return _signed(_params_error()["llama-2-70b"], 1)


def _h100_prices_usd_h() -> list[float]:
    c = _chip("h100")
    alts = c.provenance["price_usd_per_s"].alternatives
    return [3600 * v for v in (c.price_usd_per_s, *(a[0] for a in alts))]


@fact("course.h100_price_low")
def h100_price_low() -> str:
    """The lowest H100-hour price the catalogue records (its alternatives included), USD."""
    return f"{min(_h100_prices_usd_h()):.2f}"


@fact("course.h100_price_high")
def h100_price_high() -> str:
    return f"{max(_h100_prices_usd_h()):.2f}"


@functools.cache
def _decode_gemv():
    """Notebook 01's worked decode GEMM: Llama 3.1 70B's FFN up-projection at batch 1 on an H100."""
    from accelbook.chip.roofline import time_bounds

    h100 = _chip("h100")
    flops = bytes_ = 2 * 8192 * 28672
    t_math, t_mem, _ = time_bounds(flops, bytes_, h100.peak_flop_s(), h100.hbm_bw_bytes_per_s)
    return flops / bytes_, t_math, t_mem


@fact("course.decode_gemv_intensity")
def decode_gemv_intensity() -> str:
    return f"{_decode_gemv()[0]:.0f}"


@fact("course.decode_gemv_math_us")
def decode_gemv_math_us() -> str:
    return f"{_decode_gemv()[1] * 1e6:.2f}"


@fact("course.decode_gemv_mem_us")
def decode_gemv_mem_us() -> str:
    return f"{_decode_gemv()[2] * 1e6:.0f}"


@fact("course.decode_gemv_idle_pct")
def decode_gemv_idle_pct() -> str:
    _, t_math, t_mem = _decode_gemv()
    return _pct(1 - t_math / t_mem, 1)


@fact("course.gemv_ws_util_pct")
def gemv_ws_util_pct() -> str:
    """A GEMV (M = 1, 4096²) on a 128×128 weight-stationary array (notebook 02): utilisation, %."""
    from accelbook.chip.systolic import closed_form

    return _pct(closed_form(1, 4096, 4096, 128, 128, "ws").overall_util, 2)


def _gemm_waves(n: int) -> dict:
    from accelbook.chip.tiling import gpu_gemm

    return gpu_gemm(n, n, n)


@fact("course.gemm2304_waves")
def gemm2304_waves() -> str:
    return str(_gemm_waves(2304)["waves"])


@fact("course.gemm2304_last_wave_pct")
def gemm2304_last_wave_pct() -> str:
    """How full the last wave of 128×128 tiles of a 2,304³ GEMM is on an H100's SMs, %."""
    g, sms = _gemm_waves(2304), _chip("h100").compute_units
    return _pct((g["tiles"] - (g["waves"] - 1) * sms) / sms)


@fact("course.h100_sms")
def h100_sms() -> str:
    return str(_chip("h100").compute_units)


@fact("course.gemm2304_eff_pct")
def gemm2304_eff_pct() -> str:
    return _pct(_gemm_waves(2304)["efficiency"])


@fact("course.gemm2048_waves")
def gemm2048_waves() -> str:
    return str(_gemm_waves(2048)["waves"])


@fact("course.gemm2048_eff_pct")
def gemm2048_eff_pct() -> str:
    return _pct(_gemm_waves(2048)["efficiency"])


@fact("course.systolic_sram_per_mac")
def systolic_sram_per_mac() -> str:
    """SRAM accesses per MAC of a 512³ GEMM on a 128×128 weight-stationary array (notebook 02)."""
    from accelbook.chip.systolic import simulate

    r = simulate(512, 512, 512, 128, 128, "ws")
    return f"{(r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes) / r.macs:.3f}"


@functools.cache
def _nccl_rows():
    from accelbook.network.validation import validation_table

    return validation_table().set_index("case")


@fact("course.ring_busbw_model")
def ring_busbw_model() -> str:
    """Model busbw of a large ring all-reduce on 8 H100s, GB/s (notebook 03's exercise)."""
    return _num(_expected("ring-busbw-h100"))


@fact("course.ring_busbw_measured")
def ring_busbw_measured() -> str:
    return _num(_nccl_rows().loc["ring-allreduce-8xh100", "measured"])


@fact("course.nvls_busbw_model")
def nvls_busbw_model() -> str:
    return _num(_expected("nvls-busbw-h100"))


@fact("course.nvls_busbw_measured")
def nvls_busbw_measured() -> str:
    return _num(_nccl_rows().loc["nvls-allreduce-8xh100", "measured"])


@fact("course.nvls_halving_story")
def nvls_halving_story() -> str:
    """What "NVLS halves the traffic" would predict: twice the ring's model busbw, GB/s (notebook 03)."""
    return _num(2 * _expected("ring-busbw-h100"))


@fact("course.tiny_allreduce_us")
def tiny_allreduce_us() -> str:
    """A 1 KiB all-reduce on 8 H100s, NVLS off (notebook 03): µs."""
    from accelbook import topology as tp
    from accelbook.network.collectives import estimate

    return _num(estimate("all_reduce", 2**10, tp.hgx_h100(nvls=False)).time_s * 1e6)


@functools.cache
def _v5p_weak():
    """Notebook 03's weak scaling of TPU v5p slices, 64 to 4,096 chips: (1 GiB, 1 MiB) time ratios."""
    from accelbook import topology as tp
    from accelbook.network.collectives import estimate

    small, large = tp.tpu_slice("v5p", (4, 4, 4)), tp.tpu_slice("v5p", (16, 16, 16))
    big = estimate("all_reduce", 2**30, small).time_s / estimate("all_reduce", 2**30, large).time_s
    tiny = estimate("all_reduce", 2**20, large).time_s / estimate("all_reduce", 2**20, small).time_s
    return big, tiny


@fact("course.v5p_weak_pace_pct")
def v5p_weak_pace_pct() -> str:
    return _pct(_v5p_weak()[0])


@fact("course.v5p_weak_small_slowdown")
def v5p_weak_small_slowdown() -> str:
    return f"{_v5p_weak()[1]:.0f}"


@fact("course.state_tb_405b")
def state_tb_405b() -> str:
    """Llama 3.1 405B's model state at the training model's bytes per parameter, TB (notebook 04)."""
    from accelbook.specs.models import get_model

    fw = _framework()
    per_param = fw.weight_bytes_per_param + fw.grad_bytes_per_param + fw.optimizer_bytes_per_param
    return f"{per_param * get_model('llama-3.1-405b').params / 1e12:.1f}"


@fact("course.bubble_pp8_m32_pct")
def bubble_pp8_m32_pct() -> str:
    """The 1F1B bubble's share of the pipelined time with 8 stages and 32 microbatches, %."""
    from accelbook.training.pipeline import bubble_time

    bubble = bubble_time(8, 1, 1.0, 0.0, 0.0, 0)
    return _pct(bubble / (32 * 1.0 + bubble))


@fact("course.lpu_chips_70b_int8")
def lpu_chips_70b_int8() -> str:
    return _num(_expected("lpu-chips-70b-int8"))


@fact("course.gpu_over_lpu_per_chip")
def gpu_over_lpu_per_chip() -> str:
    """8 H200s' best tokens/s per chip over 640 LPU v1s' on Llama 2 70B fp8 (notebook 07's frontier), ×."""
    from accelbook import inference

    front = inference.frontier("llama-2-70b", {"8 × H200": ("h200", 8), "640 × Groq LPU v1": ("groq-lpu-v1", 640)},
                               1024, 256, "fp8")
    best = front.groupby("system")["tokens_per_s_per_chip"].max()
    return _num(best["8 × H200"] / best["640 × Groq LPU v1"])


@fact("course.spec_tokens_per_step")
def spec_tokens_per_step() -> str:
    return f"{_expected('spec-tokens-per-step'):.2f}"


@functools.cache
def _h100_owned_year():
    """Notebook 08's worked number: an owned H100 at full use, capex and power per year (USD)."""
    from accelbook import economics
    from accelbook.specs.system_power import system_power

    inp = economics.tco_inputs()
    keys = ("lifetime_years", "cost_of_capital", "pue", "electricity_usd_per_kwh", "load_power_share",
            "overhead_share", "staff_usd_per_chip_year")
    own = economics.own_cost_per_hour(inp["purchase_usd"]["h100"], system_power("h100").system_w, utilisation=1.0,
                                      **{k: inp[k] for k in keys})
    return own["capex_usd_per_hour"] * 8760, own["power_usd_per_hour"] * 8760


@fact("course.h100_capex_usd_year")
def h100_capex_usd_year() -> str:
    return _num(_h100_owned_year()[0])


@fact("course.h100_power_usd_year")
def h100_power_usd_year() -> str:
    return _num(_h100_owned_year()[1])


def _nb08_migration(**kw):
    """Notebook 08's migration example (its cell 17), with ``kw`` changed."""
    from dataclasses import replace

    from accelbook.economics import migration

    base = migration.Migration(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=20_000,
                               growth_per_month=0.05, churn_per_month=0.05)
    return replace(base, **kw)


@fact("course.port_cost_usd")
def port_cost_usd() -> str:
    return _num(_nb08_migration().port_cost_usd)


@fact("course.payback_80bn_months")
def payback_80bn_months() -> str:
    """Months the port takes to pay back at 80 billion tokens a month (notebook 08's "volume ×4" case)."""
    from accelbook.economics import migration

    return f"{migration.verdict(_nb08_migration(volume_m_tokens_per_month=80_000))['payback_months']:.0f}"


@fact("course.payback_horizon_years")
def payback_horizon_years() -> str:
    """The migration calculator's horizon, years (the flat case does not pay back within it)."""
    from accelbook.economics import migration

    m = _nb08_migration(growth_per_month=0.0)
    assert migration.verdict(m)["payback_months"] == float("inf")
    return f"{m.horizon_months / 12:.0f}"


@fact("course.lpu_tier_from_tps_user")
def lpu_tier_from_tps_user() -> str:
    """The lowest of notebook 08's interactive targets from which the least-cost fleet serves interactive
    traffic on the LPU pool, tokens/s per user."""
    from accelbook.economics import fleet

    on_lpu = {}
    for target in (32, 64, 128, 256):
        ws, ps = fleet.example_fleet(target)
        hours = fleet.place(ws, ps).hours
        lpu = [p.name for p in ps if p.chip == "groq-lp30"]
        on_lpu[target] = float(hours.loc["interactive inference", lpu].sum()) > 0
    first = min(t for t in on_lpu if all(on_lpu[u] for u in on_lpu if u >= t))
    return _num(first)


@fact("course.sram_8i_over_8t")
def sram_8i_over_8t() -> str:
    return f"{_chip('tpu-8i').sram_bytes / _chip('tpu-8t').sram_bytes:.0f}"


def _fp4_over_fp8(cid: str, digits: int) -> str:
    c = _chip(cid)
    return f"{c.peak_flop_s('fp4') / c.peak_flop_s('fp8'):.{digits}f}"


@fact("course.fp4_over_fp8_b200")
def fp4_over_fp8_b200() -> str:
    return _fp4_over_fp8("b200", 0)


@fact("course.fp4_over_fp8_rubin")
def fp4_over_fp8_rubin() -> str:
    return _fp4_over_fp8("rubin", 0)


@fact("course.fp4_over_fp8_tpu8i")
def fp4_over_fp8_tpu8i() -> str:
    return _fp4_over_fp8("tpu-8i", 2)


@fact("course.nvfp4_memory_share_pct")
def nvfp4_memory_share_pct() -> str:
    """Llama 3.1 70B, batch 32 at 8K tokens: NVFP4 weights with a bf16 KV cache over all-bf16 memory (notebook 10)."""
    from accelbook.chip import number_formats as nf
    from accelbook.specs.models import get_model

    m = get_model("llama-3.1-70b")
    nvfp4 = nf.serving_memory(m, "nvfp4", "bf16", 8192, 32)["total_bytes"]
    return _pct(nvfp4 / nf.serving_memory(m, "bf16", "bf16", 8192, 32)["total_bytes"])


@fact("course.block_overhead_target_pct")
def block_overhead_target_pct() -> str:
    """The overhead share ``sweep.choose_block_size`` keeps each task under, %."""
    import inspect

    from accelbook import sweep

    return _pct(inspect.signature(sweep.choose_block_size).parameters["target"].default)


@fact("course.slo_half_goodput_pct")
def slo_half_goodput_pct() -> str:
    """The best goodput at a 0.5 s TTFT objective over that at 1 s, notebook 11's dashboard defaults, %."""
    return _pct(_expected("predict-slo-ttft-half") / 100)


@functools.cache
def _capstone_best(cid: str, n: int):
    """Notebook 12's training step: the fastest layout for Llama 3.1 70B at 8K context, 16M-token batches."""
    from accelbook import training

    return training.search("llama-3.1-70b", cid, n, 2**24, 8192, top=1).attrs["best"]


_CAPSTONE_TOKENS = 15e12


def _capstone_days(factor: float = 0.0) -> str:
    return f"{_capstone_best('tpu-v5p', 4096).time_to_train(_CAPSTONE_TOKENS) / 86400 * (1 + factor):.0f}"


@fact("course.cap_v5p_days")
def cap_v5p_days() -> str:
    """Days for 4,096 TPU v5p to train Llama 3.1 70B on 15T tokens, by the model (notebook 12)."""
    return _capstone_days()


@fact("course.cap_v5p_days_median")
def cap_v5p_days_median() -> str:
    return _capstone_days(_train_band().median)


@fact("course.cap_v5p_days_worst")
def cap_v5p_days_worst() -> str:
    return _capstone_days(_train_band().high)


@fact("course.cap_h100_4096_extra_cost_pct")
def cap_h100_4096_extra_cost_pct() -> str:
    """How much more 4,096 H100s cost than 2,048 to train the capstone's model, %."""
    big, small = _capstone_best("h100", 4096), _capstone_best("h100", 2048)
    return _pct(big.cost_usd(_CAPSTONE_TOKENS) / small.cost_usd(_CAPSTONE_TOKENS) - 1)


@fact("course.cap_chat_idle_ttft_s")
def cap_chat_idle_ttft_s() -> str:
    """The chat layout's TTFT at an idle server (notebook 12: 8 H200s, fp8, TBT under 50 ms, TTFT under 1 s), s."""
    from accelbook import inference

    chat = inference.max_throughput("llama-3.1-70b", "h200", 8, 1024, 256, "fp8", tpot_target_s=0.05,
                                    ttft_target_s=1.0)
    return f"{chat.ttft_s:.1f}"


@fact("course.ndr_port_gbit_s")
def ndr_port_gbit_s() -> str:
    """An NDR InfiniBand port's rate each way, Gb/s (the fabric catalogue records bytes/s)."""
    from accelbook.specs.fabrics import get_fabric

    return _num(get_fabric("ndr-infiniband")["link_bw_bytes_per_s"] * 8 / 1e9)


@fact("course.moe_uniform_mean_load")
def moe_uniform_mean_load() -> str:
    """Tokens per expert on average: 4,096 tokens, 256 experts, top-8 (notebook 05)."""
    from accelbook import moe

    return _num(moe.expected_load_stats(4096, 256, 8)["mean"])


@fact("course.moe_uniform_imbalance")
def moe_uniform_imbalance() -> str:
    """The busiest expert's load over the mean under uniform routing (notebook 05's first simulation)."""
    from accelbook import moe

    return f"{moe.simulate_routing(4096, 256, 8, n_batches=40, seed=0).imbalance.mean():.2f}"


def _moe_dropped(bias_rate: float) -> float:
    from accelbook import moe

    rr = moe.simulate_routing(4096, 256, 8, skew=0.5, capacity_factor=1.25, n_batches=30, bias_rate=bias_rate, seed=2)
    return float(rr.dropped_fraction[-10:].mean())


@fact("course.moe_dropped_pct")
def moe_dropped_pct() -> str:
    """Assignments dropped at skew 0.5 and capacity factor 1.25, last 10 of 30 batches (notebook 05), %."""
    return _pct(_moe_dropped(0.0))


@fact("course.moe_dropped_bias_pct")
def moe_dropped_bias_pct() -> str:
    """The same with bias balancing at γ = 0.05, %."""
    return _pct(_moe_dropped(0.05), 1)


@fact("course.moe_nodes_per_token")
def moe_nodes_per_token() -> str:
    """Nodes a token's 8 experts reach on 8 nodes of 32 experts, without a node limit (notebook 05)."""
    from accelbook import moe

    free = moe.simulate_routing(4096, 256, 8, n_batches=5, n_groups=8, seed=3)
    return f"{free.mean_groups_per_token.mean():.2f}"
