"""Facts quoted in the prose of notebooks/04_distributed_training.ipynb (keys ``nb04.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

import re

from accelbook import training
from accelbook.specs.chips import get_chip, usable_memory_bytes
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.measured import achievable_hbm_fraction, load_hbm_bandwidth, overlap_slowdown
from accelbook.specs.models import get_model
from accelbook.training.framework import framework_defaults
from accelbook.ui.dashboards import layout_label
from accelbook.ui.facts import fact
from accelbook.ui.facts import nb04_shared as sh

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
    return f"{sh.state_bytes_per_param()}"


@fact("nb04.zero_state_bytes")
def zero_state_bytes() -> str:
    # ZeRO's count: the gradients in the weights' bf16 instead of Megatron's fp32 main_grad
    fw = framework_defaults()
    return f"{2 * fw.weight_bytes_per_param + fw.optimizer_bytes_per_param:.0f}"


@fact("nb04.state_405b_tb")
def state_405b_tb() -> str:
    return f"{sh.state_bytes_per_param() * get_model('llama-3.1-405b').params / 1e12:.1f}"


@fact("nb04.weights_405b_tb")
def weights_405b_tb() -> str:
    return f"{framework_defaults().weight_bytes_per_param * get_model('llama-3.1-405b').params / 1e12:.2f}"


@fact("nb04.state_405b_h100s")
def state_405b_h100s() -> str:
    return f"{sh.state_bytes_per_param() * get_model('llama-3.1-405b').params / get_chip('h100').hbm_bytes:.0f}"


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
    return f"{sh.pct(min(fr))}–{sh.pct(max(fr))}"


@fact("nb04.overlap_slowdown_pct")
def overlap_slowdown_pct() -> str:
    return sh.pct(overlap_slowdown("h100")[0], 1)


@fact("nb04.bubble_default_pct")
def bubble_default_pct() -> str:
    return f"{sh.answer('predict-bubble-default'):.1f}"


@fact("nb04.default_microbatches")
def default_microbatches() -> str:
    return f"{sh.default_70b().config['n_microbatches']:.0f}"


@fact("nb04.default_bubble_denominator")
def default_bubble_denominator() -> str:
    e = sh.default_70b()
    return f"{e.config['n_microbatches'] + e.config['pp'] - 1:.0f}"


# -- section 4: validation -----------------------------------------------------------------------------------------


@fact("nb04.val_median")
def val_median() -> str:
    return sh.signed(training.error_band().median)


@fact("nb04.val_low")
def val_low() -> str:
    return sh.signed(training.error_band().low)


@fact("nb04.val_high")
def val_high() -> str:
    return sh.signed(training.error_band().high)


@fact("nb04.val_n_targets")
def val_n_targets() -> str:
    return f"{len(sh.targets())}"


@fact("nb04.val_within_15")
def val_within_15() -> str:
    return f"{int((sh.targets()['error'].abs() <= 0.15).sum())}"


@fact("nb04.val_a100_range")
def val_a100_range() -> str:
    e = sh.errors()[list(sh.A100_RUNS)]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


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
    return sh.signed(sh.errors()["llama31-405b-8k"])


@fact("nb04.val_llama_128k")
def val_llama_128k() -> str:
    return sh.signed(sh.errors()["llama31-405b-128k"])


def _check_ids() -> set:
    """The check set's run ids (section 4's bullets discuss these; the held-out rows have their own)."""
    v = sh.validation()
    return set(v.loc[v["set"] == "check", "id"])


def _mb_dense():
    err = sh.errors()
    return err[[i for i in err.index if i.startswith("mb-") and "deepseek" not in i and i in _check_ids()]]


@fact("nb04.val_mb_dense_range")
def val_mb_dense_range() -> str:
    e = _mb_dense()
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.val_mb_dense_within_10")
def val_mb_dense_within_10() -> str:
    e = _mb_dense()
    return f"{int((e.abs() <= 0.10).sum())} of the {len(e)}"


@fact("nb04.val_mb_405b_gb200")
def val_mb_405b_gb200() -> str:
    return sh.signed(sh.errors()["mb-llama31-405b-gb200"])


@fact("nb04.val_mb_deepseek")
def val_mb_deepseek() -> str:
    return sh.signed(sh.errors()["mb-deepseek-v3-gb200"])


@fact("nb04.val_deepseek_h800")
def val_deepseek_h800() -> str:
    return sh.signed(sh.errors()["deepseek-v3-h800"])


@fact("nb04.val_maxtext_range")
def val_maxtext_range() -> str:
    err = sh.errors()
    e = err[[i for i in err.index if i.startswith("maxtext") and i in _check_ids()]]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.centring_factor")
def centring_factor() -> str:
    return f"{1 / (1 + training.error_band().median):.2f}"


# -- the waterfall -------------------------------------------------------------------------------------------------


@fact("nb04.ideal_share_405b_pct")
def ideal_share_405b_pct() -> str:
    return f"{sh.answer('predict-ideal-share-405b'):.0f}"


@fact("nb04.ideal_step_405b_s")
def ideal_step_405b_s() -> str:
    return f"{sh.waterfall_405b()['seconds'].iloc[0]:.1f}"


@fact("nb04.step_405b_s")
def step_405b_s() -> str:
    return f"{sh.waterfall_405b()['cumulative_s'].iloc[-1]:.1f}"


# -- section 5: Article 1's MFU figures ------------------------------------------------------------------------------


@fact("nb04.full_over_causal_70b_8k")
def full_over_causal_70b_8k() -> str:
    return f"{sh.answer('mfu-full-vs-causal-70b'):.1f}"


@fact("nb04.full_over_causal_70b_4k")
def full_over_causal_70b_4k() -> str:
    b = sh.mfu_compare()["h100"]
    return sh.pct(b.mfu / b.mfu_as("causal") - 1, 1)


@fact("nb04.full_over_causal_8b_8k")
def full_over_causal_8b_8k() -> str:
    return f"{sh.answer('mfu-full-vs-causal-8b'):.1f}"


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
    return sh.pct(_tpu_gemm().fraction, 1)


@fact("nb04.v5p_gemm_where")
def v5p_gemm_where() -> str:
    # measured_efficiency's own sentence: "measured on this chip" or "borrowed from ... (no measurement on ...)"
    _, why = measured_efficiency("tpu-v5p")
    return why.split(", ", 1)[1].split(":", 1)[0]


@fact("nb04.v5p_attention_pct")
def v5p_attention_pct() -> str:
    return sh.pct(measured_efficiency("tpu-v5p", "attention")[0].fraction, 1)


@fact("nb04.v5p_attention_share_of_gemm")
def v5p_attention_share_of_gemm() -> str:
    # no FlashAttention measurement on a TPU: measured_efficiency assumes a share of the GEMM fraction, and says so
    _, why = measured_efficiency("tpu-v5p", "attention")
    return re.search(r"ASSUMED: (\d+)% of the bf16 GEMM fraction", why)[1]


@fact("nb04.h100_gemm_pct")
def h100_gemm_pct() -> str:
    return sh.pct(measured_efficiency("h100")[0].fraction, 1)


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
    return sh.pct(sh.mfu_compare()["h100"].mfu_as("causal"))


@fact("nb04.cmp_mfu_causal_v5p")
def cmp_mfu_causal_v5p() -> str:
    return sh.pct(sh.mfu_compare()["tpu-v5p"].mfu_as("causal"))


@fact("nb04.cmp_gemm_gap_points")
def cmp_gemm_gap_points() -> str:
    return sh.pct(_tpu_gemm().fraction - measured_efficiency("h100")[0].fraction)


@fact("nb04.cmp_layout_h100")
def cmp_layout_h100() -> str:
    return layout_label(sh.mfu_compare()["h100"].config)


@fact("nb04.cmp_layout_v5p")
def cmp_layout_v5p() -> str:
    return layout_label(sh.mfu_compare()["tpu-v5p"].config)


def _share(chip: str, component: str) -> float:
    b = sh.mfu_compare()[chip].breakdown().set_index("component")
    return float(b.loc[component, "share"])


@fact("nb04.cmp_h100_overlap_share")
def cmp_h100_overlap_share() -> str:
    return sh.pct(_share("h100", "compute slowed by hidden comm"))


@fact("nb04.cmp_v5p_overlap_share")
def cmp_v5p_overlap_share() -> str:
    return sh.pct(_share("tpu-v5p", "compute slowed by hidden comm"))


@fact("nb04.cmp_h100_tp_share")
def cmp_h100_tp_share() -> str:
    return sh.pct(_share("h100", "tensor-parallel comm"))


@fact("nb04.v5p_hbm_pct")
def v5p_hbm_pct() -> str:
    return sh.pct(achievable_hbm_fraction("tpu-v5p").fraction)


# -- plausibility: the highest MFU a published run reached (data/training_mfu_ceilings.toml) -----------------

@fact("nb04.ceiling_h100_bf16")
def ceiling_h100_bf16() -> str:
    return sh.pct(training.mfu_ceiling("h100", "bf16").mfu)


@fact("nb04.ceiling_h100_fp8")
def ceiling_h100_fp8() -> str:
    return sh.pct(training.mfu_ceiling("h100", "fp8").mfu)


@fact("nb04.cmp_h100_flag")
def cmp_h100_flag() -> str:
    return sh.flag_words("h100", "bf16", sh.mfu_compare()["h100"].mfu)


@fact("nb04.cmp_v5p_flag")
def cmp_v5p_flag() -> str:
    return sh.flag_words("tpu-v5p", "bf16", sh.mfu_compare()["tpu-v5p"].mfu)
