"""Facts of ``instructor/misconceptions.md`` (keys ``course.*``): each the number a notebook computes, by the
calls of that notebook's code cells or of its checked exercises."""

from __future__ import annotations

from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui.facts import fact
from accelbook.ui.facts.course_text import chip, expected, framework, num, params_error, pct, signed, train_band

# --- instructor/misconceptions.md: what the notebooks compute ---------------------------------------------

@fact("course.llama2_70b_params_e9")
def llama2_70b_params_e9() -> str:
    from accelbook.specs.models import get_model

    return f"{get_model('llama-2-70b').params / 1e9:.2f}"


@fact("course.params_err_llama2_70b_signed")
def params_err_llama2_70b_signed() -> str:
    return signed(params_error()["llama-2-70b"], 1)


def _h100_prices_usd_h() -> list[float]:
    c = chip("h100")
    alts = c.provenance["price_usd_per_s"].alternatives
    return [3600 * v for v in (c.price_usd_per_s, *(a[0] for a in alts))]


@fact("course.h100_price_low")
def h100_price_low() -> str:
    """The lowest H100-hour price the catalogue records (its alternatives included), USD."""
    return f"{min(_h100_prices_usd_h()):.2f}"


@fact("course.h100_price_high")
def h100_price_high() -> str:
    return f"{max(_h100_prices_usd_h()):.2f}"


@catalogue_cache(maxsize=None)
def _decode_gemv():
    """Notebook 01's worked decode GEMM: Llama 3.1 70B's FFN up-projection at batch 1 on an H100."""
    from accelbook.chip.roofline import time_bounds

    h100 = chip("h100")
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
    return pct(1 - t_math / t_mem, 1)


@fact("course.gemv_ws_util_pct")
def gemv_ws_util_pct() -> str:
    """A GEMV (M = 1, 4096²) on a 128×128 weight-stationary array (notebook 02): utilisation, %."""
    from accelbook.chip.systolic import closed_form

    return pct(closed_form(1, 4096, 4096, 128, 128, "ws").overall_util, 2)


def _gemm_waves(n: int) -> dict:
    from accelbook.chip.tiling import gpu_gemm

    return gpu_gemm(n, n, n)


@fact("course.gemm2304_waves")
def gemm2304_waves() -> str:
    return str(_gemm_waves(2304)["waves"])


@fact("course.gemm2304_last_wave_pct")
def gemm2304_last_wave_pct() -> str:
    """How full the last wave of 128×128 tiles of a 2,304³ GEMM is on an H100's SMs, %."""
    g, sms = _gemm_waves(2304), chip("h100").compute_units
    return pct((g["tiles"] - (g["waves"] - 1) * sms) / sms)


@fact("course.h100_sms")
def h100_sms() -> str:
    return str(chip("h100").compute_units)


@fact("course.gemm2304_eff_pct")
def gemm2304_eff_pct() -> str:
    return pct(_gemm_waves(2304)["efficiency"])


@fact("course.gemm2048_waves")
def gemm2048_waves() -> str:
    return str(_gemm_waves(2048)["waves"])


@fact("course.gemm2048_eff_pct")
def gemm2048_eff_pct() -> str:
    return pct(_gemm_waves(2048)["efficiency"])


@fact("course.systolic_sram_per_mac")
def systolic_sram_per_mac() -> str:
    """SRAM accesses per MAC of a 512³ GEMM on a 128×128 weight-stationary array (notebook 02)."""
    from accelbook.chip.systolic import simulate

    r = simulate(512, 512, 512, 128, 128, "ws")
    return f"{(r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes) / r.macs:.3f}"


@catalogue_cache(maxsize=None)
def _nccl_rows():
    from accelbook.network.validation import validation_table

    return validation_table().set_index("case")


@fact("course.ring_busbw_model")
def ring_busbw_model() -> str:
    """Model busbw of a large ring all-reduce on 8 H100s, GB/s (notebook 03's exercise)."""
    return num(expected("ring-busbw-h100"))


@fact("course.ring_busbw_measured")
def ring_busbw_measured() -> str:
    return num(_nccl_rows().loc["ring-allreduce-8xh100", "measured"])


@fact("course.nvls_busbw_model")
def nvls_busbw_model() -> str:
    return num(expected("nvls-busbw-h100"))


@fact("course.nvls_busbw_measured")
def nvls_busbw_measured() -> str:
    return num(_nccl_rows().loc["nvls-allreduce-8xh100", "measured"])


@fact("course.nvls_halving_story")
def nvls_halving_story() -> str:
    """What "NVLS halves the traffic" would predict: twice the ring's model busbw, GB/s (notebook 03)."""
    return num(2 * expected("ring-busbw-h100"))


@fact("course.tiny_allreduce_us")
def tiny_allreduce_us() -> str:
    """A 1 KiB all-reduce on 8 H100s, NVLS off (notebook 03): µs."""
    from accelbook import topology as tp
    from accelbook.network.collectives import estimate

    return num(estimate("all_reduce", 2**10, tp.hgx_h100(nvls=False)).time_s * 1e6)


@catalogue_cache(maxsize=None)
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
    return pct(_v5p_weak()[0])


@fact("course.v5p_weak_small_slowdown")
def v5p_weak_small_slowdown() -> str:
    return f"{_v5p_weak()[1]:.0f}"


@fact("course.state_tb_405b")
def state_tb_405b() -> str:
    """Llama 3.1 405B's model state at the training model's bytes per parameter, TB (notebook 04)."""
    from accelbook.specs.models import get_model

    fw = framework()
    per_param = fw.weight_bytes_per_param + fw.grad_bytes_per_param + fw.optimizer_bytes_per_param
    return f"{per_param * get_model('llama-3.1-405b').params / 1e12:.1f}"


@fact("course.bubble_pp8_m32_pct")
def bubble_pp8_m32_pct() -> str:
    """The 1F1B bubble's share of the pipelined time with 8 stages and 32 microbatches, %."""
    from accelbook.training.pipeline import bubble_time

    bubble = bubble_time(8, 1, 1.0, 0.0, 0.0, 0)
    return pct(bubble / (32 * 1.0 + bubble))


@fact("course.lpu_chips_70b_int8")
def lpu_chips_70b_int8() -> str:
    return num(expected("lpu-chips-70b-int8"))


@fact("course.gpu_over_lpu_per_chip")
def gpu_over_lpu_per_chip() -> str:
    """8 H200s' best tokens/s per chip over 640 LPU v1s' on Llama 2 70B fp8 (notebook 07's frontier), ×."""
    from accelbook import inference

    front = inference.frontier("llama-2-70b", {"8 × H200": ("h200", 8), "640 × Groq LPU v1": ("groq-lpu-v1", 640)},
                               1024, 256, "fp8")
    best = front.groupby("system")["tokens_per_s_per_chip"].max()
    return num(best["8 × H200"] / best["640 × Groq LPU v1"])


@fact("course.spec_tokens_per_step")
def spec_tokens_per_step() -> str:
    return f"{expected('spec-tokens-per-step'):.2f}"


@catalogue_cache(maxsize=None)
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
    return num(_h100_owned_year()[0])


@fact("course.h100_power_usd_year")
def h100_power_usd_year() -> str:
    return num(_h100_owned_year()[1])


def _nb08_migration(**kw):
    """Notebook 08's migration example (its cell 17), with ``kw`` changed."""
    from dataclasses import replace

    from accelbook.economics import migration

    base = migration.Migration(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=20_000,
                               growth_per_month=0.05, churn_per_month=0.05)
    return replace(base, **kw)


@fact("course.port_cost_usd")
def port_cost_usd() -> str:
    return num(_nb08_migration().port_cost_usd)


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
    return num(first)


@fact("course.sram_8i_over_8t")
def sram_8i_over_8t() -> str:
    return f"{chip('tpu-8i').sram_bytes / chip('tpu-8t').sram_bytes:.0f}"


def _fp4_over_fp8(cid: str, digits: int) -> str:
    c = chip(cid)
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
    return pct(nvfp4 / nf.serving_memory(m, "bf16", "bf16", 8192, 32)["total_bytes"])


@fact("course.block_overhead_target_pct")
def block_overhead_target_pct() -> str:
    """The overhead share ``sweep.choose_block_size`` keeps each task under, %."""
    import inspect

    from accelbook import sweep

    return pct(inspect.signature(sweep.choose_block_size).parameters["target"].default)


@fact("course.slo_half_goodput_pct")
def slo_half_goodput_pct() -> str:
    """The best goodput at a 0.5 s TTFT objective over that at 1 s, notebook 11's dashboard defaults, %."""
    return pct(expected("predict-slo-ttft-half") / 100)


@catalogue_cache(maxsize=None)
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
    return _capstone_days(train_band().median)


@fact("course.cap_v5p_days_worst")
def cap_v5p_days_worst() -> str:
    return _capstone_days(train_band().high)


@fact("course.cap_h100_4096_extra_cost_pct")
def cap_h100_4096_extra_cost_pct() -> str:
    """How much more 4,096 H100s cost than 2,048 to train the capstone's model, %."""
    big, small = _capstone_best("h100", 4096), _capstone_best("h100", 2048)
    return pct(big.cost_usd(_CAPSTONE_TOKENS) / small.cost_usd(_CAPSTONE_TOKENS) - 1)


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

    return num(get_fabric("ndr-infiniband")["link_bw_bytes_per_s"] * 8 / 1e9)


@fact("course.moe_uniform_mean_load")
def moe_uniform_mean_load() -> str:
    """Tokens per expert on average: 4,096 tokens, 256 experts, top-8 (notebook 05)."""
    from accelbook import moe

    return num(moe.expected_load_stats(4096, 256, 8)["mean"])


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
    return pct(_moe_dropped(0.0))


@fact("course.moe_dropped_bias_pct")
def moe_dropped_bias_pct() -> str:
    """The same with bias balancing at γ = 0.05, %."""
    return pct(_moe_dropped(0.05), 1)


@fact("course.moe_nodes_per_token")
def moe_nodes_per_token() -> str:
    """Nodes a token's 8 experts reach on 8 nodes of 32 experts, without a node limit (notebook 05)."""
    from accelbook import moe

    free = moe.simulate_routing(4096, 256, 8, n_batches=5, n_groups=8, seed=3)
    return f"{free.mean_groups_per_token.mean():.2f}"
