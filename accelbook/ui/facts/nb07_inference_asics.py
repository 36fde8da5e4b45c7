"""Facts quoted in the prose of notebooks/07_inference_asics.ipynb (keys ``nb07.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

import inspect

from accelbook import inference as inf
from accelbook.inference.dataflow import PLAUSIBLE_FACTOR, layers_per_region, link_terms, published_speeds, tier_terms
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.models import bytes_per_element, get_model
from accelbook.specs.system_power import default_pue, median_ratio, system_power
from accelbook.ui.dashboards.nb07_inference_asics import frontier_spec
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact


def _gb(x: float) -> str:
    return f"{x / 1e9:.0f}"


def _mb(x: float) -> str:
    return f"{x / 1e6:.0f}"


@catalogue_cache(maxsize=None)
def _controls() -> dict:
    return {k: c.value for k, c in frontier_spec().controls.items()}


@catalogue_cache(maxsize=None)
def _best_at_target() -> dict:
    """The prediction's answer: each default system's best tokens/s per chip among the points that reach the
    dashboard's default target, and its fastest tokens/s per user (as the exercise computes it)."""
    c, out = _controls(), {}
    for word, (chip, n) in {"h200": ("h200", 8), "b200": ("b200", 8), "lpu-v1": ("groq-lpu-v1", 640),
                            "lp30": ("groq-lp30", 320)}.items():
        f = inf.frontier(c["model"], {word: (chip, n)}, c["input_len"], c["output_len"], c["precision"])
        ok = f[f["tokens_per_s_per_user"] >= c["target_tps_user"]]
        out[word] = (ok["tokens_per_s_per_chip"].max() if len(ok) else 0.0, f["tokens_per_s_per_user"].max())
    return out


@catalogue_cache(maxsize=None)
def _gpu_b1():
    """A GPU server's step at batch 1 at the dashboard's defaults: 8 H200, TP8."""
    c = _controls()
    return inf.estimate(c["model"], "h200", 8, 1, c["input_len"], c["output_len"], c["precision"], tp=8)


@catalogue_cache(maxsize=None)
def _front():
    """Section 2's comparison (cell 14)."""
    f = inf.frontier("llama-2-70b", {"8 × H200": ("h200", 8), "640 × Groq LPU v1": ("groq-lpu-v1", 640)}, 1024, 256,
                     "fp8")
    g = f.groupby("system")
    return g["tokens_per_s_per_chip"].max(), g["tokens_per_s_per_user"].max()


@catalogue_cache(maxsize=None)
def _validation() -> dict:
    v = inf.validation_table()
    return {r.id: r for r in v.itertuples()}


@catalogue_cache(maxsize=None)
def _het():
    """Section 3's table (cell 19) and the GPUs alone."""
    rows = {m: inf.heterogeneous_decode("llama-3.1-70b", "h200", 8, "groq-lp30", 256, 64, 4096, microbatches=m)
            for m in (1, 2, 4, 8)}
    return rows, inf.estimate("llama-3.1-70b", "h200", 8, 64, 4096 - 128, 256, "fp8")


def _het_default(name: str):
    return inspect.signature(inf.heterogeneous_decode).parameters[name].default


# -- section 1 ------------------------------------------------------------------------------------------------

@fact("nb07.lpu_v1_sram_mb")
def lpu_v1_sram_mb() -> str:
    return _mb(get_chip("groq-lpu-v1").sram_bytes)


@fact("nb07.lp30_sram_mb")
def lp30_sram_mb() -> str:
    return _mb(get_chip("groq-lp30").sram_bytes)


@fact("nb07.cs3_sram_gb")
def cs3_sram_gb() -> str:
    return _gb(get_chip("cerebras-cs3").sram_bytes)


@fact("nb07.h200_hbm_gb")
def h200_hbm_gb() -> str:
    return _gb(get_chip("h200").memory_bytes)


@fact("nb07.default_hop_us")
def default_hop_us() -> str:
    return f"{inf.DEFAULT_HOP_S * 1e6:.0f}"


# -- section 2 ------------------------------------------------------------------------------------------------

@fact("nb07.target_default")
def target_default() -> str:
    return f"{_controls()['target_tps_user']:,}"


@fact("nb07.ar_us")
def ar_us() -> str:
    return f"{_gpu_b1().breakdown['allreduce_latency_s'] * 1e6:.0f}"


@fact("nb07.gpu_b1_ar_ms")
def gpu_b1_ar_ms() -> str:
    return f"{_gpu_b1().breakdown['allreduce_fixed_s'] * 1e3:.1f}"


@fact("nb07.gpu_b1_step_ms")
def gpu_b1_step_ms() -> str:
    return f"{_gpu_b1().tpot_s * 1e3:.1f}"


@fact("nb07.gpu_b1_weights_ms")
def gpu_b1_weights_ms() -> str:
    return f"{_gpu_b1().breakdown['decode_weights_read_s'] * 1e3:.1f}"


@fact("nb07.h200_cap_tok_s")
def h200_cap_tok_s() -> str:
    return f"{round(_best_at_target()['h200'][1], -1):.0f}"


@fact("nb07.b200_cap_tok_s")
def b200_cap_tok_s() -> str:
    return f"{round(_best_at_target()['b200'][1], -1):.0f}"


@fact("nb07.lp30_over_lpu_v1")
def lp30_over_lpu_v1() -> str:
    b = _best_at_target()
    return f"{b['lp30'][0] / b['lpu-v1'][0]:.0f}"


@fact("nb07.groq_hop_us")
def groq_hop_us() -> str:
    return f"{link_terms('groq-lpu-v1').hop_s * 1e6:.0f}"


@fact("nb07.groq_link_gb_s")
def groq_link_gb_s() -> str:
    return f"{link_terms('groq-lpu-v1').link_bytes_per_s / 1e9:.0f}"


@fact("nb07.groq_predicted_tok_s")
def groq_predicted_tok_s() -> str:
    return f"{_validation()['groq-llama2-70b-user'].predicted:.0f}"


@fact("nb07.groq_error_pct")
def groq_error_pct() -> str:
    return f"{_validation()['groq-llama2-70b-user'].error * 100:+.0f}"


@fact("nb07.groq_reported_tok_s")
def groq_reported_tok_s() -> str:
    return f"{_validation()['groq-llama2-70b-user'].reported:.0f}"


@fact("nb07.groq_later_tok_s")
def groq_later_tok_s() -> str:
    return f"{max(s.tokens_per_s_per_user for s in published_speeds('groq-lpu-v1') if s.model_id == 'llama-2-70b'):.0f}"


@fact("nb07.cerebras_predicted_tok_s")
def cerebras_predicted_tok_s() -> str:
    return f"{_validation()['cerebras-405b-user'].predicted:,.0f}"


@fact("nb07.cerebras_reported_tok_s")
def cerebras_reported_tok_s() -> str:
    return f"{_validation()['cerebras-405b-user'].reported:,.0f}"


@catalogue_cache(maxsize=None)
def _cerebras_405b():
    """The validation row's layout (21 wafers, one pipeline stage each) at batch 1."""
    return inf.estimate("llama-3.1-405b", "cerebras-cs3", 21, 1, 128, 128, "bf16", tp=1, pp=21)


@fact("nb07.cerebras_layers_per_wafer")
def cerebras_layers_per_wafer() -> str:
    return f"{layers_per_region(get_chip('cerebras-cs3'), get_model('llama-3.1-405b'), 21):.0f}"


@fact("nb07.cerebras_roofline_tok_s")
def cerebras_roofline_tok_s() -> str:
    return f"{1 / _cerebras_405b().breakdown['decode_roofline_tpot_s']:,.0f}"


@fact("nb07.sn40l_share_pct")
def sn40l_share_pct() -> str:
    return f"{tier_terms('sn40l').decode_bw_share * 100:.0f}"


@fact("nb07.sn40l_predicted_tok_s")
def sn40l_predicted_tok_s() -> str:
    return f"{_validation()['sn40l-405b-user'].predicted:,.0f}"


@fact("nb07.sn40l_reported_tok_s")
def sn40l_reported_tok_s() -> str:
    return f"{_validation()['sn40l-405b-user'].reported:,.0f}"


@fact("nb07.sn40l_8b_error_pct")
def sn40l_8b_error_pct() -> str:
    return f"{_validation()['sn40l-8b-user'].error * 100:+.0f}"


@fact("nb07.plausible_factor")
def plausible_factor() -> str:
    return f"{PLAUSIBLE_FACTOR:g}"


@fact("nb07.w405b_bf16_gb")
def w405b_bf16_gb() -> str:
    return _gb(get_model("llama-3.1-405b").params * bytes_per_element("bf16"))


@fact("nb07.cs3_wafers_405b")
def cs3_wafers_405b() -> str:
    return f"{EXERCISES['cs3-wafers-405b'].expected()}"


# -- section 3 ------------------------------------------------------------------------------------------------

@fact("nb07.het_link_gb_s")
def het_link_gb_s() -> str:
    return f"{_het_default('link_bytes_per_s') / 1e9:.0f}"


@fact("nb07.het_link_us")
def het_link_us() -> str:
    return f"{_het_default('link_latency_s') * 1e6:.0f}"


@fact("nb07.het_best_microbatches")
def het_best_microbatches() -> str:
    rows, _ = _het()
    return f"{min(rows, key=lambda m: rows[m]['tpot_s'])}"


@fact("nb07.het_tpot_ms")
def het_tpot_ms() -> str:
    rows, _ = _het()
    return f"{min(r['tpot_s'] for r in rows.values()) * 1e3:.1f}"


@fact("nb07.gpu_only_tpot_ms")
def gpu_only_tpot_ms() -> str:
    return f"{_het()[1].tpot_s * 1e3:.1f}"


@fact("nb07.het_per_chip")
def het_per_chip() -> str:
    rows, _ = _het()
    return f"{max(r['tokens_per_s'] for r in rows.values()) / (8 + 256):.0f}"


@fact("nb07.gpu_only_per_chip")
def gpu_only_per_chip() -> str:
    return f"{round(64 / _het()[1].tpot_s / 8, -2):,.0f}"


# -- section 4 ------------------------------------------------------------------------------------------------

@fact("nb07.h100_tdp_w")
def h100_tdp_w() -> str:
    return f"{get_chip('h100').tdp_w:,.0f}"


@fact("nb07.dgx_h100_kw")
def dgx_h100_kw() -> str:
    return f"{system_power('h100').system_w * 8 / 1e3:.1f}"


@fact("nb07.dgx_h100_per_gpu_w")
def dgx_h100_per_gpu_w() -> str:
    return f"{system_power('h100').system_w:,.0f}"


@fact("nb07.cs3_system_kw")
def cs3_system_kw() -> str:
    return f"{system_power('cerebras-cs3').system_w / 1e3:.0f}"


@fact("nb07.median_ratio")
def median_ratio_() -> str:
    return f"{median_ratio():.2f}"


@fact("nb07.idle_share_pct")
def idle_share_pct() -> str:
    return f"{inf.IDLE_POWER_SHARE * 100:.0f}"


@fact("nb07.memory_bound_pct")
def memory_bound_pct() -> str:
    return f"{inf.MEMORY_BOUND_POWER * 100:.0f}"


@fact("nb07.pue")
def pue() -> str:
    return f"{default_pue():g}"


# -- section 5: the LPX rack's arithmetic (cell 26) --------------------------------------------------------------

@fact("nb07.lpx_sram_gb")
def lpx_sram_gb() -> str:
    return _gb(256 * get_chip("groq-lp30").sram_bytes)


@fact("nb07.lp30_sram_tb_s")
def lp30_sram_tb_s() -> str:
    return f"{get_chip('groq-lp30').sram_bw_bytes_per_s / 1e12:.0f}"


@fact("nb07.lpx_sram_pb_s")
def lpx_sram_pb_s() -> str:
    return f"{256 * get_chip('groq-lp30').sram_bw_bytes_per_s / 1e15:.1f}"


@fact("nb07.lpx_rack_pb_s")
def lpx_rack_pb_s() -> str:
    return f"{get_chip('groq-lpx').sram_bw_bytes_per_s / 1e15:.0f}"


# -- fallacies --------------------------------------------------------------------------------------------------

@fact("nb07.lpu_best_user")
def lpu_best_user() -> str:
    return f"{_front()[1]['640 × Groq LPU v1']:,.0f}"


@fact("nb07.h200_best_user")
def h200_best_user() -> str:
    return f"{_front()[1]['8 × H200']:,.0f}"


@fact("nb07.h200_best_chip")
def h200_best_chip() -> str:
    return f"{round(_front()[0]['8 × H200'], -1):,.0f}"


@fact("nb07.lpu_best_chip")
def lpu_best_chip() -> str:
    return f"{_front()[0]['640 × Groq LPU v1']:,.0f}"


@fact("nb07.chip_ratio")
def chip_ratio() -> str:
    b = _front()[0]
    return f"{b['8 × H200'] / b['640 × Groq LPU v1']:.0f}"


# -- exercises' answers -----------------------------------------------------------------------------------------

@fact("nb07.fp8_bytes")
def fp8_bytes() -> str:
    return f"{bytes_per_element('fp8'):.0f}"


@fact("nb07.bf16_bytes")
def bf16_bytes() -> str:
    return f"{bytes_per_element('bf16'):.0f}"


@fact("nb07.p70b_1e9")
def p70b_1e9() -> str:
    return f"{get_model('llama-3.1-70b').params / 1e9:.2f}"


@fact("nb07.p405b_1e9")
def p405b_1e9() -> str:
    return f"{get_model('llama-3.1-405b').params / 1e9:.1f}"


@fact("nb07.lpu_v1_ratio")
def lpu_v1_ratio() -> str:
    return f"{get_model('llama-3.1-70b').params * bytes_per_element('int8') / get_chip('groq-lpu-v1').sram_bytes:.1f}"


@fact("nb07.lpu_v1_chips_int8")
def lpu_v1_chips_int8() -> str:
    return f"{EXERCISES['lpu-chips-70b-int8'].expected()}"


@fact("nb07.lp30_ratio")
def lp30_ratio() -> str:
    return f"{get_model('llama-3.1-70b').params * bytes_per_element('fp8') / get_chip('groq-lp30').sram_bytes:.1f}"


@fact("nb07.lp30_chips_fp8")
def lp30_chips_fp8() -> str:
    return f"{EXERCISES['lp30-chips-70b-fp8'].expected()}"


@fact("nb07.cs3_ratio")
def cs3_ratio() -> str:
    m = get_model("llama-3.1-405b")
    return f"{m.params * bytes_per_element('bf16') / get_chip('cerebras-cs3').sram_bytes:.1f}"


@fact("nb07.stream_tok_s")
def stream_tok_s() -> str:
    return f"{EXERCISES['whatif-stream-5tbs'].expected():.0f}"


@catalogue_cache(maxsize=None)
def _stream():
    """Exercise 5's layout: Llama 3.1 405B in bf16 on 4 CS-3 wafers streaming their weights at 5 TB/s each."""
    return inf.estimate("llama-3.1-405b", "cerebras-cs3", 4, 1, 1024, 256, "bf16", tp=1, pp=4,
                        weight_streaming_bytes_per_s=5e12)


@fact("nb07.stream_per_wafer_gb")
def stream_per_wafer_gb() -> str:
    return _gb(_stream().breakdown["weights_per_chip_bytes"])


@fact("nb07.stream_stage_ms")
def stream_stage_ms() -> str:
    return f"{_stream().breakdown['stage_s'] * 1e3:.1f}"


@fact("nb07.stream_token_ms")
def stream_token_ms() -> str:
    return f"{_stream().tpot_s * 1e3:.0f}"


@fact("nb07.spec_worked_tokens")
def spec_worked_tokens() -> str:
    return f"{inf.expected_accepted(0.7, 4):.2f}"


@catalogue_cache(maxsize=None)
def _drafted():
    """The validation table's rows served with a draft head (accelbook.inference.speculative), by id."""
    v = inf.validation_table()
    return v[v["draft"] != ""].set_index("id")


_EAGLE3 = "sglang-eagle3-llama31-8b-h100-s5"


@fact("nb07.eagle3_tau")
def eagle3_tau() -> str:
    """The acceptance length SGLang measured for EAGLE-3 on Llama 3.1 8B (MT-bench, 5 steps)."""
    return f"{inf.acceptance(_drafted().loc[_EAGLE3, 'draft']).tau:.2f}"


@fact("nb07.eagle3_published")
def eagle3_published() -> str:
    return f"{_drafted().loc[_EAGLE3, 'reported']:.0f}"


@fact("nb07.eagle3_predicted")
def eagle3_predicted() -> str:
    return f"{_drafted().loc[_EAGLE3, 'predicted']:.0f}"


@fact("nb07.drafted_rows")
def drafted_rows() -> str:
    return f"{len(_drafted())}"


@fact("nb07.drafted_band")
def drafted_band() -> str:
    """The drafted rows' error band, in words."""
    return inf.error_band("tokens_per_s_per_user", role="context", drafted=True).text()


@fact("nb07.int8_bytes")
def int8_bytes() -> str:
    return f"{bytes_per_element('int8'):.0f}"


@fact("nb07.front_chip_ratio")
def front_chip_ratio() -> str:
    chip = _front()[0]
    return f"{chip['8 × H200'] / chip['640 × Groq LPU v1']:.0f}"
