"""Facts quoted in the prose of notebooks/04_distributed_training.ipynb (keys ``nb04.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

import functools
import re

from accelbook import training
from accelbook.specs.chips import get_chip, usable_memory_bytes
from accelbook.specs.clusters import get_cluster
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.measured import achievable_hbm_fraction, load_hbm_bandwidth, overlap_slowdown
from accelbook.specs.models import get_model
from accelbook.training.framework import framework_defaults
from accelbook.ui.dashboards import layout_label
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact

#: the runs of 2021-22 on A100s that section 4's first bullet groups (GPT-3, the 530B model, BLOOM)
_A100_RUNS = ("gpt3-175b-ptdp-384", "gpt3-175b-ptdp-768", "gpt3-175b-ptdp-1536", "mt-nlg-530b-ptdp-2520",
              "mt-nlg-530b-sp-2240", "bloom-176b-384")


def _signed(x: float) -> str:
    return f"{100 * x:+.0f}".replace("-", "\u2212")


def _pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sci(x: float) -> str:
    """``2.52 × 10¹²``: three significant figures."""
    mant, exp = f"{x:.2e}".split("e")
    return f"{mant} × 10{str(int(exp)).translate(_SUPERSCRIPT)}"


def _answer(exercise_id: str) -> float:
    return float(EXERCISES[exercise_id].expected())


# -- shared computations (cached: the validation table and the searches take seconds) -------------------------


@functools.cache
def _validation():
    return training.validation_table()


@functools.cache
def _errors():
    return _validation().set_index("id")["error"]


@functools.cache
def _targets():
    v = _validation()
    return v[(v["role"] == "target") & v["error"].notna()]


@functools.cache
def _default_70b(tp_overlap: float = 0.0):
    # the training dashboard's defaults (cell 12 and the pitfall of cell 52): Llama 3.1 70B, 1,024 H100, TP8 PP4
    return training.estimate("llama-3.1-70b", "h100", 1024, 2**24, 8192, tp=8, pp=4, tp_overlap=tp_overlap)


@functools.cache
def _mfu_compare():
    # section 5's table (cell 37): the search's best layout for Llama 3.1 70B at 4K on 1,024 chips of each kind
    return {chip: training.search("llama-3.1-70b", chip, 1024, 2**22, 4096, top=1).attrs["best"]
            for chip in ("h100", "tpu-v5p")}


@functools.cache
def _waterfall_405b():
    return training.waterfall("llama31-405b-8k")


@functools.cache
def _scaling_claims():
    # cell 46: Trillium at 1, 12 and 24 pods, and MLPerf's 768 -> 3,584 H100
    tr = training.scaling("gpt3-175b", "tpu-v6e", [256, 3072, 6144], 2048, batch_tokens_per_chip=2 * 2048)
    eff = tr.set_index("n_chips")["efficiency"]
    ml = training.scaling("gpt3-175b", "h100", [768, 3584], 2048, batch_tokens_per_chip=2 * 2048)
    return float(eff.loc[3072]), float(eff.loc[6144]), ml.set_index("n_chips")


def _state_bytes_per_param() -> int:
    fw = framework_defaults()
    return int(fw.weight_bytes_per_param + fw.grad_bytes_per_param + fw.optimizer_bytes_per_param)


# -- section 1: memory -------------------------------------------------------------------------------------------


@fact("nb04.weight_bytes")
def weight_bytes() -> str:
    return f"{framework_defaults().weight_bytes_per_param:.0f}"


@fact("nb04.grad_bytes")
def grad_bytes() -> str:
    return f"{framework_defaults().grad_bytes_per_param:.0f}"


@fact("nb04.optimizer_bytes")
def optimizer_bytes() -> str:
    return f"{framework_defaults().optimizer_bytes_per_param:.0f}"


@fact("nb04.state_bytes")
def state_bytes() -> str:
    return f"{_state_bytes_per_param()}"


@fact("nb04.zero_state_bytes")
def zero_state_bytes() -> str:
    # ZeRO's count: the gradients in the weights' bf16 instead of Megatron's fp32 main_grad
    fw = framework_defaults()
    return f"{2 * fw.weight_bytes_per_param + fw.optimizer_bytes_per_param:.0f}"


@fact("nb04.state_405b_tb")
def state_405b_tb() -> str:
    return f"{_state_bytes_per_param() * get_model('llama-3.1-405b').params / 1e12:.1f}"


@fact("nb04.weights_405b_tb")
def weights_405b_tb() -> str:
    return f"{framework_defaults().weight_bytes_per_param * get_model('llama-3.1-405b').params / 1e12:.2f}"


@fact("nb04.state_405b_h100s")
def state_405b_h100s() -> str:
    return f"{_state_bytes_per_param() * get_model('llama-3.1-405b').params / get_chip('h100').hbm_bytes:.0f}"


@fact("nb04.h100_hbm_gb")
def h100_hbm_gb() -> str:
    return f"{get_chip('h100').hbm_bytes / 1e9:.0f}"


@fact("nb04.h100_usable_gb")
def h100_usable_gb() -> str:
    return f"{usable_memory_bytes(get_chip('h100').hbm_bytes) / 1e9:.0f}"


# -- section 2: a training step ------------------------------------------------------------------------------------


@fact("nb04.hbm_fraction_range")
def hbm_fraction_range() -> str:
    fr = [m.fraction for m in load_hbm_bandwidth().values()]
    return f"{_pct(min(fr))}–{_pct(max(fr))}"


@fact("nb04.overlap_slowdown_pct")
def overlap_slowdown_pct() -> str:
    return _pct(overlap_slowdown("h100")[0], 1)


@fact("nb04.bubble_default_pct")
def bubble_default_pct() -> str:
    return f"{_answer('predict-bubble-default'):.1f}"


@fact("nb04.default_microbatches")
def default_microbatches() -> str:
    return f"{_default_70b().config['n_microbatches']:.0f}"


@fact("nb04.default_bubble_denominator")
def default_bubble_denominator() -> str:
    e = _default_70b()
    return f"{e.config['n_microbatches'] + e.config['pp'] - 1:.0f}"


# -- section 4: validation -----------------------------------------------------------------------------------------


@fact("nb04.val_median")
def val_median() -> str:
    return _signed(training.error_band().median)


@fact("nb04.val_low")
def val_low() -> str:
    return _signed(training.error_band().low)


@fact("nb04.val_high")
def val_high() -> str:
    return _signed(training.error_band().high)


@fact("nb04.val_n_targets")
def val_n_targets() -> str:
    return f"{len(_targets())}"


@fact("nb04.val_within_15")
def val_within_15() -> str:
    return f"{int((_targets()['error'].abs() <= 0.15).sum())}"


@fact("nb04.val_a100_range")
def val_a100_range() -> str:
    e = _errors()[list(_A100_RUNS)]
    return f"{_signed(e.min())} % to {_signed(e.max())}"


@fact("nb04.a100_mamf_tflops")
def a100_mamf_tflops() -> str:
    return f"{measured_efficiency('a100')[0].measured_flop_s / 1e12:.0f}"


@fact("nb04.a100_peak_tflops")
def a100_peak_tflops() -> str:
    return f"{get_chip('a100').peak_flop_s('bf16') / 1e12:.0f}"


@fact("nb04.bloom_reported_tflops")
def bloom_reported_tflops() -> str:
    return f"{training.published_runs()['bloom-176b-384']['reported']['value']:.0f}"


@fact("nb04.val_llama_8k")
def val_llama_8k() -> str:
    return _signed(_errors()["llama31-405b-8k"])


@fact("nb04.val_llama_128k")
def val_llama_128k() -> str:
    return _signed(_errors()["llama31-405b-128k"])


def _mb_dense():
    err = _errors()
    return err[[i for i in err.index if i.startswith("mb-") and "deepseek" not in i]]


@fact("nb04.val_mb_dense_range")
def val_mb_dense_range() -> str:
    e = _mb_dense()
    return f"{_signed(e.min())} % to {_signed(e.max())}"


@fact("nb04.val_mb_dense_within_10")
def val_mb_dense_within_10() -> str:
    e = _mb_dense()
    return f"{int((e.abs() <= 0.10).sum())} of the {len(e)}"


@fact("nb04.val_mb_405b_gb200")
def val_mb_405b_gb200() -> str:
    return _signed(_errors()["mb-llama31-405b-gb200"])


@fact("nb04.val_mb_deepseek")
def val_mb_deepseek() -> str:
    return _signed(_errors()["mb-deepseek-v3-gb200"])


@fact("nb04.val_deepseek_h800")
def val_deepseek_h800() -> str:
    return _signed(_errors()["deepseek-v3-h800"])


@fact("nb04.val_maxtext_range")
def val_maxtext_range() -> str:
    err = _errors()
    e = err[[i for i in err.index if i.startswith("maxtext")]]
    return f"{_signed(e.min())} % to {_signed(e.max())}"


@fact("nb04.centring_factor")
def centring_factor() -> str:
    return f"{1 / (1 + training.error_band().median):.2f}"


# -- the waterfall -------------------------------------------------------------------------------------------------


@fact("nb04.ideal_share_405b_pct")
def ideal_share_405b_pct() -> str:
    return f"{_answer('predict-ideal-share-405b'):.0f}"


@fact("nb04.ideal_step_405b_s")
def ideal_step_405b_s() -> str:
    return f"{_waterfall_405b()['seconds'].iloc[0]:.1f}"


@fact("nb04.step_405b_s")
def step_405b_s() -> str:
    return f"{_waterfall_405b()['cumulative_s'].iloc[-1]:.1f}"


# -- section 5: Article 1's MFU figures ------------------------------------------------------------------------------


@fact("nb04.full_over_causal_70b_8k")
def full_over_causal_70b_8k() -> str:
    return f"{_answer('mfu-full-vs-causal-70b'):.1f}"


@fact("nb04.full_over_causal_70b_4k")
def full_over_causal_70b_4k() -> str:
    b = _mfu_compare()["h100"]
    return _pct(b.mfu / b.mfu_as("causal") - 1, 1)


@fact("nb04.full_over_causal_8b_8k")
def full_over_causal_8b_8k() -> str:
    return f"{_answer('mfu-full-vs-causal-8b'):.1f}"


def _tpu_gemm():
    m, _ = measured_efficiency("tpu-v5p")
    return m


@fact("nb04.tpu_gemm_chip")
def tpu_gemm_chip() -> str:
    # the chip the TPU v5p's GEMM efficiency was measured on
    return get_chip(_tpu_gemm().chip_id).name


@fact("nb04.tpu_gemm_shape")
def tpu_gemm_shape() -> str:
    # the one shape of the measurement, as its note in data/matmul_efficiency.toml gives it (8192^3)
    size = re.search(r"(\d+)\^3", _tpu_gemm().provenance.note)
    return f"{int(size[1]):,}³"


@fact("nb04.tpu_gemm_pct")
def tpu_gemm_pct() -> str:
    return _pct(_tpu_gemm().fraction, 1)


@fact("nb04.v5p_gemm_where")
def v5p_gemm_where() -> str:
    # measured_efficiency's own sentence: "measured on this chip" or "borrowed from ... (no measurement on ...)"
    _, why = measured_efficiency("tpu-v5p")
    return why.split(", ", 1)[1].split(":", 1)[0]


@fact("nb04.v5p_attention_pct")
def v5p_attention_pct() -> str:
    return _pct(measured_efficiency("tpu-v5p", "attention")[0].fraction, 1)


@fact("nb04.v5p_attention_share_of_gemm")
def v5p_attention_share_of_gemm() -> str:
    # no FlashAttention measurement on a TPU: measured_efficiency assumes a share of the GEMM fraction, and says so
    _, why = measured_efficiency("tpu-v5p", "attention")
    return re.search(r"ASSUMED: (\d+)% of the bf16 GEMM fraction", why)[1]


@fact("nb04.h100_gemm_pct")
def h100_gemm_pct() -> str:
    return _pct(measured_efficiency("h100")[0].fraction, 1)


@fact("nb04.tpu_gemm_small_shape")
def tpu_gemm_small_shape() -> str:
    # the smaller shape the same note quotes ("4096^3: 84.3%")
    size = re.search(r"\((\d+)\^3: ([\d.]+)%", _tpu_gemm().provenance.note)
    return f"{int(size[1]):,}³"


@fact("nb04.tpu_gemm_small_pct")
def tpu_gemm_small_pct() -> str:
    return re.search(r"\((\d+)\^3: ([\d.]+)%", _tpu_gemm().provenance.note)[2]


@fact("nb04.cmp_mfu_causal_h100")
def cmp_mfu_causal_h100() -> str:
    return _pct(_mfu_compare()["h100"].mfu_as("causal"))


@fact("nb04.cmp_mfu_causal_v5p")
def cmp_mfu_causal_v5p() -> str:
    return _pct(_mfu_compare()["tpu-v5p"].mfu_as("causal"))


@fact("nb04.cmp_gemm_gap_points")
def cmp_gemm_gap_points() -> str:
    return _pct(_tpu_gemm().fraction - measured_efficiency("h100")[0].fraction)


@fact("nb04.cmp_layout_h100")
def cmp_layout_h100() -> str:
    return layout_label(_mfu_compare()["h100"].config)


@fact("nb04.cmp_layout_v5p")
def cmp_layout_v5p() -> str:
    return layout_label(_mfu_compare()["tpu-v5p"].config)


def _share(chip: str, component: str) -> float:
    b = _mfu_compare()[chip].breakdown().set_index("component")
    return float(b.loc[component, "share"])


@fact("nb04.cmp_h100_overlap_share")
def cmp_h100_overlap_share() -> str:
    return _pct(_share("h100", "compute slowed by hidden comm"))


@fact("nb04.cmp_v5p_overlap_share")
def cmp_v5p_overlap_share() -> str:
    return _pct(_share("tpu-v5p", "compute slowed by hidden comm"))


@fact("nb04.cmp_h100_tp_share")
def cmp_h100_tp_share() -> str:
    return _pct(_share("h100", "tensor-parallel comm"))


@fact("nb04.v5p_hbm_pct")
def v5p_hbm_pct() -> str:
    return _pct(achievable_hbm_fraction("tpu-v5p").fraction)


# -- section 6: scaling --------------------------------------------------------------------------------------------


@fact("nb04.h100_weak_scaling_pct")
def h100_weak_scaling_pct() -> str:
    return f"{_answer('predict-h100-weak-scaling'):.0f}"


@fact("nb04.trillium_eff_12_pods")
def trillium_eff_12_pods() -> str:
    return _pct(_scaling_claims()[0], 1)


@fact("nb04.trillium_eff_24_pods")
def trillium_eff_24_pods() -> str:
    return _pct(_scaling_claims()[1], 1)


@fact("nb04.mlperf_layout_3584")
def mlperf_layout_3584() -> str:
    return str(_scaling_claims()[2].loc[3584, "layout"])


@fact("nb04.mlperf_replica_chips")
def mlperf_replica_chips() -> str:
    # why the model gives no number at 768 chips: the fixed layout's tp·cp·pp does not divide it (the row's note)
    return re.search(r"tp·cp·pp = (\d+)", str(_scaling_claims()[2].loc[768, "note"]))[1]


@fact("nb04.h100_8192_comm_share")
def h100_8192_comm_share() -> str:
    # the scaling dashboard's defaults for DGX H100 + InfiniBand, as the exercise predict-h100-weak-scaling reads them
    counts = [2**k for k in range(6, 14)]
    df = training.scaling("gpt3-175b", None, counts, 2048, batch_tokens_per_chip=2048, cluster=get_cluster("dgx-h100"),
                          microbatch=[1, 2], vp=[1, 4])
    return _pct(df.set_index("n_chips").loc[8192, "comm_share"])


# -- section 7 and after: goodput, the pitfall, the exercises -----------------------------------------------------------


@fact("nb04.goodput_pct")
def goodput_pct() -> str:
    return _pct(training.published_goodput().fraction)


def _tp_overlap_effect():
    exposed, hidden = _default_70b(), _default_70b(0.8)
    return (exposed.time["t_tp_comm_s"] - hidden.time["t_tp_comm_s"], exposed.step_time_s - hidden.step_time_s,
            exposed.time["t_overlap_s"], hidden.time["t_overlap_s"])


@fact("nb04.tp_overlap_comm_saved_s")
def tp_overlap_comm_saved_s() -> str:
    return f"{_tp_overlap_effect()[0]:.1f}"


@fact("nb04.tp_overlap_step_saved_s")
def tp_overlap_step_saved_s() -> str:
    return f"{_tp_overlap_effect()[1]:.1f}"


@fact("nb04.tp_overlap_cost_before_s")
def tp_overlap_cost_before_s() -> str:
    return f"{_tp_overlap_effect()[2]:.2f}"


@fact("nb04.tp_overlap_cost_after_s")
def tp_overlap_cost_after_s() -> str:
    return f"{_tp_overlap_effect()[3]:.2f}"


@fact("nb04.params_70b_e9")
def params_70b_e9() -> str:
    return f"{get_model('llama-3.1-70b').params / 1e9:.2f}"


@fact("nb04.state_70b_gb")
def state_70b_gb() -> str:
    return f"{_answer('model-state-70b'):,.0f}"


@fact("nb04.state_70b_zero_gb")
def state_70b_zero_gb() -> str:
    return f"{int(zero_state_bytes()) * get_model('llama-3.1-70b').params / 1e9:,.0f}"


@fact("nb04.bubble_8_32_pct")
def bubble_8_32_pct() -> str:
    return f"{_answer('bubble-8-32'):.1f}"


@fact("nb04.flops_per_token_405b")
def flops_per_token_405b() -> str:
    return _sci(get_model("llama-3.1-405b").flops_per_token(8192, training=True, causal=True))


@fact("nb04.h100_peak_tflops")
def h100_peak_tflops() -> str:
    return f"{get_chip('h100').peak_flop_s('bf16') / 1e12:.1f}"


@fact("nb04.days_405b_s")
def days_405b_s() -> str:
    return _sci(_answer("days-405b") * 86400)


@fact("nb04.days_405b")
def days_405b() -> str:
    return f"{_answer('days-405b'):.0f}"


@fact("nb04.days_405b_goodput")
def days_405b_goodput() -> str:
    return f"{_answer('days-405b') / training.published_goodput().fraction:.0f}"


@fact("nb04.mfu_default_pct")
def mfu_default_pct() -> str:
    return _pct(_default_70b().mfu)


@fact("nb04.mfu_tp_overlap_pct")
def mfu_tp_overlap_pct() -> str:
    return f"{_answer('whatif-tp-overlap-08'):.0f}"


@functools.cache
def _meta_405b(zero_stage: int, recompute: str):
    # section 1's table (cell 4): Meta's 405B layout, TP8 PP16 on 8,192 H100s, by ZeRO stage and recomputation
    return training.estimate("llama-3.1-405b", "h100", 8192, 2048 * 8192, 8192, tp=8, pp=16, zero_stage=zero_stage,
                             recompute=recompute)


@fact("nb04.meta_z1_selective_mfu")
def meta_z1_selective_mfu() -> str:
    return _pct(_meta_405b(1, "selective").mfu)


@fact("nb04.meta_z1_full_mfu")
def meta_z1_full_mfu() -> str:
    return _pct(_meta_405b(1, "full").mfu)


@fact("nb04.meta_z3_none_mfu")
def meta_z3_none_mfu() -> str:
    return _pct(_meta_405b(3, "none").mfu)


@functools.cache
def _search_best_70b(tp_overlap: float = 0.0):
    # the search dashboard's defaults (section 3): the same model, fleet and batch as the training dashboard
    return training.search("llama-3.1-70b", "h100", 1024, 2**24, 8192, top=1, tp_overlap=tp_overlap).attrs["best"]


@fact("nb04.search_best_layout")
def search_best_layout() -> str:
    return layout_label(_search_best_70b().config)


@fact("nb04.search_best_cp")
def search_best_cp() -> str:
    return f"{_search_best_70b().config['cp']}"


@fact("nb04.search_best_mfu")
def search_best_mfu() -> str:
    return _pct(_search_best_70b().mfu)


@fact("nb04.search_best_overlap08_layout")
def search_best_overlap08_layout() -> str:
    return layout_label(_search_best_70b(0.8).config)


@fact("nb04.search_best_overlap08_mfu")
def search_best_overlap08_mfu() -> str:
    return _pct(_search_best_70b(0.8).mfu)


@functools.cache
def _ideal_errors():
    # each published run's waterfall starts at the ideal step; its error there is the run read at peak
    return [float(training.waterfall(rid)["error"].iloc[0]) for rid in _validation()["id"]]


@fact("nb04.wf_runs")
def wf_runs() -> str:
    return f"{len(_ideal_errors())}"


@fact("nb04.wf_runs_not_twice")
def wf_runs_not_twice() -> str:
    return f"{sum(e <= 1.0 for e in _ideal_errors())}"


@fact("nb04.llama3_interruptions")
def llama3_interruptions() -> str:
    return f"{training.published_goodput().interruptions}"


@fact("nb04.llama3_unexpected_interruptions")
def llama3_unexpected_interruptions() -> str:
    return f"{training.published_goodput().unexpected_interruptions}"


@fact("nb04.llama3_snapshot_days")
def llama3_snapshot_days() -> str:
    return f"{training.published_goodput().snapshot_s / 86400:.0f}"


def _wf405_term(field: str) -> float:
    w = _waterfall_405b().set_index("field")
    return float(w.loc[field, "term_s"] if field != "t_gemm_s" else w.loc[field, "seconds"])


@fact("nb04.wf405_tp_s")
def wf405_tp_s() -> str:
    return f"{_wf405_term('t_tp_comm_s'):.1f}"


@fact("nb04.wf405_gemm_loss_s")
def wf405_gemm_loss_s() -> str:
    return f"{_wf405_term('t_gemm_s'):.1f}"


@fact("nb04.wf405_bubble_s")
def wf405_bubble_s() -> str:
    return f"{_wf405_term('t_bubble_s'):.1f}"


@fact("nb04.wf405_attention_s")
def wf405_attention_s() -> str:
    return f"{_wf405_term('t_attention_s'):.1f}"


@fact("nb04.wf405_recompute_s")
def wf405_recompute_s() -> str:
    return f"{_wf405_term('t_recompute_s'):.2f}"
