"""Facts quoted in the prose of notebooks/10_number_formats.ipynb (keys ``nb10.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.chip import number_formats as nf
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.formats import load_quantisation_results
from accelbook.specs.models import get_model
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact

MODEL = "llama-3.1-70b"


def _num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _gb(x: float, digits: int = 1) -> str:
    return _num(x / 1e9, digits)


# -- fp4 over fp8 peaks (nf.peak_ratio_table, as cell 9)
def _ratio(chip: str) -> float:
    return float(nf.peak_ratio_table([get_chip(chip)])["ratio"].iloc[0])


def _ratio_fact(chip: str, digits: int):
    return lambda: _num(_ratio(chip), digits)


for _chip, _digits in (("b200", 0), ("rubin", 0), ("tpu-8t", 1), ("tpu-8i", 2), ("h100", 0)):
    fact(f"nb10.fp4_over_fp8_{_chip.replace('-', '')}")(_ratio_fact(_chip, _digits))


@fact("nb10.tpu8i_fp4_tflop_s")
def tpu8i_fp4_tflop_s() -> str:
    return _num(nf.peak_flop_s(get_chip("tpu-8i"), "nvfp4") / 1e12)


@fact("nb10.tpu8i_fp8_tflop_s")
def tpu8i_fp8_tflop_s() -> str:
    return _num(nf.peak_flop_s(get_chip("tpu-8i"), "fp8-e4m3") / 1e12)


@fact("nb10.h100_fp8_over_bf16")
def h100_fp8_over_bf16() -> str:
    c = get_chip("h100")
    return _num(nf.peak_flop_s(c, "fp8-e4m3") / nf.peak_flop_s(c, "bf16"), 0)


# -- memory and the decode step (Llama 3.1 70B, bf16 KV cache)
@catalogue_cache(maxsize=None)
def _mem(weights: str, context: int, batch: int) -> dict:
    return nf.serving_memory(get_model(MODEL), weights, "bf16", context, batch)


@fact("nb10.params_e9")
def params_e9() -> str:
    return _num(get_model(MODEL).params / 1e9, 2)


@fact("nb10.nvfp4_bits")
def nvfp4_bits() -> str:
    return _num(nf.bits_per_element("nvfp4"), 1)


@fact("nb10.bf16_weights_gb")
def bf16_weights_gb() -> str:
    return _gb(_mem("bf16", 8192, 1)["weights_bytes"])


@fact("nb10.bf16_weights_gb_round")
def bf16_weights_gb_round() -> str:
    return _gb(_mem("bf16", 8192, 1)["weights_bytes"], 0)


@fact("nb10.fp8_weights_gb")
def fp8_weights_gb() -> str:
    return _gb(_mem("fp8-e4m3", 8192, 1)["weights_bytes"])


@fact("nb10.nvfp4_weights_gb")
def nvfp4_weights_gb() -> str:
    return _gb(_mem("nvfp4", 8192, 1)["weights_bytes"])


@fact("nb10.kv_b1_8k_gb")
def kv_b1_8k_gb() -> str:
    return _gb(_mem("bf16", 8192, 1)["kv_bytes"])


@fact("nb10.bf16_total_b1_8k_gb")
def bf16_total_b1_8k_gb() -> str:
    return _gb(_mem("bf16", 8192, 1)["total_bytes"])


@fact("nb10.nvfp4_total_b1_8k_gb")
def nvfp4_total_b1_8k_gb() -> str:
    return _gb(_mem("nvfp4", 8192, 1)["total_bytes"])


@fact("nb10.nvfp4_speedup_b1_8k")
def nvfp4_speedup_b1_8k() -> str:
    return _num(EXERCISES["predict-nvfp4-speedup"].expected(), 2)


@fact("nb10.nvfp4_speedup_b64_32k")
def nvfp4_speedup_b64_32k() -> str:
    return _num(nf.decode_speedup(get_model(MODEL), get_chip("b200"), "nvfp4", "bf16", 32768, 64), 1)


@fact("nb10.kv_b64_32k_gb")
def kv_b64_32k_gb() -> str:
    return _num(EXERCISES["what-if-long-context-kv"].expected(), 0)


@fact("nb10.kv_b64_32k_over_fp8_weights")
def kv_b64_32k_over_fp8_weights() -> str:
    return _num(_mem("fp8-e4m3", 32768, 64)["kv_bytes"] / _mem("fp8-e4m3", 32768, 64)["weights_bytes"], 1)


@fact("nb10.fp8_total_b64_32k_gb")
def fp8_total_b64_32k_gb() -> str:
    return _gb(_mem("fp8-e4m3", 32768, 64)["total_bytes"], 0)


@fact("nb10.nvfp4_saving_b64_32k_gb")
def nvfp4_saving_b64_32k_gb() -> str:
    return _gb(_mem("fp8-e4m3", 32768, 64)["total_bytes"] - _mem("nvfp4", 32768, 64)["total_bytes"], 0)


@fact("nb10.nvfp4_saving_b64_32k_pct")
def nvfp4_saving_b64_32k_pct() -> str:
    fp8, fp4 = _mem("fp8-e4m3", 32768, 64)["total_bytes"], _mem("nvfp4", 32768, 64)["total_bytes"]
    return _num(100 * (1 - fp4 / fp8))


@fact("nb10.kv_bytes_per_token")
def kv_bytes_per_token() -> str:
    return _num(get_model(MODEL).kv_cache_bytes_per_token("bf16"))


@fact("nb10.kv_b32_8k_gb")
def kv_b32_8k_gb() -> str:
    return _gb(_mem("bf16", 8192, 32)["kv_bytes"])


@fact("nb10.nvfp4_total_b32_8k_gb")
def nvfp4_total_b32_8k_gb() -> str:
    return _gb(_mem("nvfp4", 8192, 32)["total_bytes"])


@fact("nb10.bf16_total_b32_8k_gb")
def bf16_total_b32_8k_gb() -> str:
    return _gb(_mem("bf16", 8192, 32)["total_bytes"])


@fact("nb10.nvfp4_memory_share_pct")
def nvfp4_memory_share_pct() -> str:
    return _num(EXERCISES["nvfp4-memory-share"].expected())


@fact("nb10.ex_tpu8i_ratio")
def ex_tpu8i_ratio() -> str:
    return _num(EXERCISES["fp4-over-fp8-tpu8i"].expected(), 2)


@fact("nb10.ex_fp8_weights_gb")
def ex_fp8_weights_gb() -> str:
    return _num(EXERCISES["weights-70b-fp8-gb"].expected(), 1)


@fact("nb10.fp8_bytes_per_element")
def fp8_bytes_per_element() -> str:
    return _num(nf.bits_per_element("fp8-e4m3") / 8)


# -- published results (data/quantisation_results.toml)
@catalogue_cache(maxsize=None)
def _results() -> dict:
    return {r.id: r for r in load_quantisation_results()}


def _loss_pct(rid: str) -> float:
    r = _results()[rid]
    return 100 * abs(r.reported - r.baseline) / r.baseline


@fact("nb10.nvfp4_12b_mmlu_pro")
def nvfp4_12b_mmlu_pro() -> str:
    return _num(_results()["nvfp4-12b-pretraining-mmlu-pro"].reported, 2)


@fact("nb10.fp8_12b_mmlu_pro")
def fp8_12b_mmlu_pro() -> str:
    return _num(_results()["nvfp4-12b-pretraining-mmlu-pro"].baseline, 2)


@fact("nb10.nemotron_mmlu_pro_loss")
def nemotron_mmlu_pro_loss() -> str:
    r = _results()["nemotron3-nano-nvfp4-mmlu-pro"]
    return _num(r.baseline - r.reported, 1)


@fact("nb10.nemotron_aime_loss")
def nemotron_aime_loss() -> str:
    r = _results()["nemotron3-nano-nvfp4-aime25"]
    return _num(r.baseline - r.reported, 1)


@fact("nb10.int4_70b_ppl_rise_range")
def int4_70b_ppl_rise_range() -> str:
    lo, hi = sorted(_loss_pct(i) for i in ("awq-llama2-70b-wikitext2", "gptq-llama2-70b-wikitext2"))
    return f"{lo:.1f}–{hi:.1f}"


@fact("nb10.int4_7b_ppl_rise_pct")
def int4_7b_ppl_rise_pct() -> str:
    return _num(_loss_pct("awq-llama2-7b-wikitext2"), 1)


@fact("nb10.gptq_over_awq_70b")
def gptq_over_awq_70b() -> str:
    return _num(_loss_pct("gptq-llama2-70b-wikitext2") / _loss_pct("awq-llama2-70b-wikitext2"), 1)


@fact("nb10.fp8_lm_speedup")
def fp8_lm_speedup() -> str:
    return _num(_results()["fp8-lm-gpt-175b-speed"].reported, 2)


@fact("nb10.fp8_lm_speedup_v1")
def fp8_lm_speedup_v1() -> str:
    return _num(_results()["fp8-lm-gpt-175b-speed"].provenance.alternatives[0][0], 2)


@fact("nb10.bf16_bytes_per_element")
def bf16_bytes_per_element() -> str:
    return _num(nf.bits_per_element("bf16") / 8)
