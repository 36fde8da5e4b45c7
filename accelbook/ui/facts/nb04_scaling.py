"""Facts of notebooks/04_distributed_training.ipynb, sections 6 on (scaling, goodput, the pitfall, the exercises; keys ``nb04.*``); see :mod:`accelbook.ui.facts`."""


from __future__ import annotations

import re

from accelbook import training
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import get_cluster
from accelbook.specs.models import get_model
from accelbook.ui.dashboards import layout_label
from accelbook.ui.facts import fact, value
from accelbook.ui.facts import nb04_shared as sh

# -- section 6: scaling --------------------------------------------------------------------------------------------


@fact("nb04.h100_weak_scaling_pct")
def h100_weak_scaling_pct() -> str:
    return f"{sh.answer('predict-h100-weak-scaling'):.0f}"


@fact("nb04.trillium_eff_12_pods")
def trillium_eff_12_pods() -> str:
    return sh.pct(sh.scaling_claims()[0], 1)


@fact("nb04.trillium_eff_24_pods")
def trillium_eff_24_pods() -> str:
    return sh.pct(sh.scaling_claims()[1], 1)


@fact("nb04.mlperf_layout_3584")
def mlperf_layout_3584() -> str:
    return str(sh.scaling_claims()[2].loc[3584, "layout"])


@fact("nb04.mlperf_replica_chips")
def mlperf_replica_chips() -> str:
    # why the model gives no number at 768 chips: the fixed layout's tp·cp·pp does not divide it (the row's note)
    return re.search(r"tp·cp·pp = (\d+)", str(sh.scaling_claims()[2].loc[768, "note"]))[1]


@fact("nb04.h100_8192_comm_share")
def h100_8192_comm_share() -> str:
    # the scaling dashboard's defaults for DGX H100 + InfiniBand, as the exercise predict-h100-weak-scaling reads them
    counts = [2**k for k in range(6, 14)]
    df = training.scaling("gpt3-175b", None, counts, 2048, batch_tokens_per_chip=2048, cluster=get_cluster("dgx-h100"),
                          microbatch=[1, 2], vp=[1, 4])
    return sh.pct(df.set_index("n_chips").loc[8192, "comm_share"])


# -- section 7 and after: goodput, the pitfall, the exercises -----------------------------------------------------------


@fact("nb04.goodput_pct")
def goodput_pct() -> str:
    return sh.pct(training.published_goodput().fraction)


def _tp_overlap_effect():
    exposed, hidden = sh.default_70b(), sh.default_70b(0.8)
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
    return f"{sh.answer('model-state-70b'):,.0f}"


@fact("nb04.state_70b_zero_gb")
def state_70b_zero_gb() -> str:
    return f"{int(value('nb04.zero_state_bytes')) * get_model('llama-3.1-70b').params / 1e9:,.0f}"


@fact("nb04.bubble_8_32_pct")
def bubble_8_32_pct() -> str:
    return f"{sh.answer('bubble-8-32'):.1f}"


@fact("nb04.flops_per_token_405b")
def flops_per_token_405b() -> str:
    return sh.sci(get_model("llama-3.1-405b").flops_per_token(8192, training=True, causal=True))


@fact("nb04.h100_peak_tflops")
def h100_peak_tflops() -> str:
    return f"{get_chip('h100').peak_flop_s('bf16') / 1e12:.1f}"


@fact("nb04.days_405b_s")
def days_405b_s() -> str:
    return sh.sci(sh.answer("days-405b") * 86400)


@fact("nb04.days_405b")
def days_405b() -> str:
    return f"{sh.answer('days-405b'):.0f}"


@fact("nb04.days_405b_goodput")
def days_405b_goodput() -> str:
    return f"{sh.answer('days-405b') / training.published_goodput().fraction:.0f}"


@fact("nb04.mfu_default_pct")
def mfu_default_pct() -> str:
    return sh.pct(sh.default_70b().mfu)


@fact("nb04.mfu_default_flag")
def mfu_default_flag() -> str:
    return sh.flag_words("h100", "bf16", sh.default_70b().mfu)


@fact("nb04.mfu_tp_overlap_flag")
def mfu_tp_overlap_flag() -> str:
    return sh.flag_words("h100", "bf16", sh.default_70b(0.8).mfu)


@fact("nb04.mfu_tp_overlap_pct")
def mfu_tp_overlap_pct() -> str:
    return f"{sh.answer('whatif-tp-overlap-08'):.0f}"


@catalogue_cache(maxsize=None)
def _meta_405b(zero_stage: int, recompute: str):
    # section 1's table (cell 4): Meta's 405B layout, TP8 PP16 on 8,192 H100s, by ZeRO stage and recomputation
    return training.estimate("llama-3.1-405b", "h100", 8192, 2048 * 8192, 8192, tp=8, pp=16, zero_stage=zero_stage,
                             recompute=recompute)


@fact("nb04.meta_z1_selective_mfu")
def meta_z1_selective_mfu() -> str:
    return sh.pct(_meta_405b(1, "selective").mfu)


@fact("nb04.meta_z1_full_mfu")
def meta_z1_full_mfu() -> str:
    return sh.pct(_meta_405b(1, "full").mfu)


@fact("nb04.meta_z3_none_mfu")
def meta_z3_none_mfu() -> str:
    return sh.pct(_meta_405b(3, "none").mfu)


@catalogue_cache(maxsize=None)
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
    return sh.pct(_search_best_70b().mfu)


@fact("nb04.search_best_flag")
def search_best_flag() -> str:
    return sh.flag_words("h100", "bf16", _search_best_70b().mfu)


@fact("nb04.search_best_overlap08_flag")
def search_best_overlap08_flag() -> str:
    return sh.flag_words("h100", "bf16", _search_best_70b(0.8).mfu)


@fact("nb04.search_best_overlap08_layout")
def search_best_overlap08_layout() -> str:
    return layout_label(_search_best_70b(0.8).config)


@fact("nb04.search_best_overlap08_mfu")
def search_best_overlap08_mfu() -> str:
    return sh.pct(_search_best_70b(0.8).mfu)


@catalogue_cache(maxsize=None)
def _ideal_errors():
    # each published run's waterfall starts at the ideal step; its error there is the run read at peak
    return [float(training.waterfall(rid)["error"].iloc[0]) for rid in sh.validation()["id"]]


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
    w = sh.waterfall_405b().set_index("field")
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
