"""Facts quoted in the prose of notebooks/00_start_here.ipynb (keys ``nb00.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.inference import estimate
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.loader import UNITS
from accelbook.specs.models import bytes_per_element, get_model, models
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact

_MINUS = "\u2212"


def _e(x: float, digits: int = 3) -> str:
    """``2.46e12``: ``x`` in e-notation with at most ``digits`` significant digits, trailing zeros dropped."""
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def _signed_pct(x: float, digits: int = 1) -> str:
    return f"{x * 100:.{digits}f}".replace("-", _MINUS)


def _h100() -> Chip:
    return get_chip("h100")


def _v5p() -> Chip:
    return get_chip("tpu-v5p")


def _alternative(chip: Chip, field: str, source_id: str) -> float:
    """The value (SI) that ``source_id`` publishes for ``field`` of ``chip``, kept beside the one used."""
    return next(v for v, s, _ in chip.provenance[field].alternatives if s.id == source_id)


def _all_values(chip: Chip, field: str, used: float) -> list[float]:
    return [used] + [v for v, _, _ in chip.provenance[field].alternatives]


# -- where a number comes from (cells 8 and 10) ----------------------------------------------------------------
@fact("nb00.v5p_hbm_bw_gb_s")
def v5p_hbm_bw_gb_s() -> str:
    return f"{_v5p().hbm_bw_bytes_per_s / 1e9:,.0f}"


@fact("nb00.v5p_hbm_bw_scaling_book")
def v5p_hbm_bw_scaling_book() -> str:
    return _e(_alternative(_v5p(), "hbm_bw_bytes_per_s", "scaling-book-tpus"))


@fact("nb00.v5p_hbm_bw_jax")
def v5p_hbm_bw_jax() -> str:
    return _e(_alternative(_v5p(), "hbm_bw_bytes_per_s", "jax-tpu-info"))


@catalogue_cache(maxsize=None)
def _h100_prices_usd_per_hour() -> list[float]:
    c = _h100()
    return [v * 3600 for v in _all_values(c, "price_usd_per_s", c.price_usd_per_s)]


@fact("nb00.h100_price_low_usd")
def h100_price_low_usd() -> str:
    return f"{min(_h100_prices_usd_per_hour()):.2f}"


@fact("nb00.h100_price_high_usd")
def h100_price_high_usd() -> str:
    return f"{max(_h100_prices_usd_per_hour()):.2f}"


def _rubin_hbm_bw_tb_s() -> list[float]:
    c = get_chip("rubin")
    return [v / 1e12 for v in _all_values(c, "hbm_bw_bytes_per_s", c.hbm_bw_bytes_per_s)]


@fact("nb00.rubin_hbm_bw_low_tb_s")
def rubin_hbm_bw_low_tb_s() -> str:
    return f"{min(_rubin_hbm_bw_tb_s()):.0f}"


@fact("nb00.rubin_hbm_bw_high_tb_s")
def rubin_hbm_bw_high_tb_s() -> str:
    return f"{max(_rubin_hbm_bw_tb_s()):.0f}"


# -- the ridge point (cells 12 and 19, the answers) ------------------------------------------------------------
@fact("nb00.h100_bf16_tflop_s")
def h100_bf16_tflop_s() -> str:
    return f"{_h100().peak_flop_s('bf16') / 1e12:,.1f}"


@fact("nb00.h100_bf16_tflop_s_rounded")
def h100_bf16_tflop_s_rounded() -> str:
    return f"{_h100().peak_flop_s('bf16') / 1e12:,.0f}"


@fact("nb00.h100_fp8_tflop_s")
def h100_fp8_tflop_s() -> str:
    return f"{_h100().peak_flop_s('fp8') / 1e12:,.0f}"


@fact("nb00.h100_hbm_bw_tb_s")
def h100_hbm_bw_tb_s() -> str:
    return f"{_h100().hbm_bw_bytes_per_s / 1e12:.2f}"


@fact("nb00.h100_ridge")
def h100_ridge() -> str:
    return f"{_h100().ridge_point('bf16'):.0f}"


@fact("nb00.h100_ridge_fp8")
def h100_ridge_fp8() -> str:
    return f"{_h100().ridge_point('fp8'):.0f}"


@fact("nb00.v5p_bf16_tflop_s")
def v5p_bf16_tflop_s() -> str:
    return f"{_v5p().peak_flop_s('bf16') / 1e12:.0f}"


@fact("nb00.v5p_hbm_bw_tb_s")
def v5p_hbm_bw_tb_s() -> str:
    return f"{_v5p().hbm_bw_bytes_per_s / 1e12:.3f}"


@fact("nb00.v5p_ridge")
def v5p_ridge() -> str:
    return f"{_v5p().ridge_point('bf16'):.0f}"


@fact("nb00.v5p_fp8_gain")
def v5p_fp8_gain() -> str:
    return f"{EXERCISES['predict-v5p-fp8-gain'].expected():.1f}"


@fact("nb00.v5p_int8_top_s")
def v5p_int8_top_s() -> str:
    return f"{_v5p().peak_flop_s('int8') / 1e12:.0f}"


@fact("nb00.whatif_hbm_bw_tb_s")
def whatif_hbm_bw_tb_s() -> str:
    return f"{2 * _h100().hbm_bw_bytes_per_s / 1e12:.1f}"


@fact("nb00.whatif_ridge")
def whatif_ridge() -> str:
    return f"{EXERCISES['whatif-ridge-2x-hbm'].expected():.0f}"


@fact("nb00.h200_hbm_bw_tb_s")
def h200_hbm_bw_tb_s() -> str:
    return f"{get_chip('h200').hbm_bw_bytes_per_s / 1e12:.1f}"


@fact("nb00.h200_ridge")
def h200_ridge() -> str:
    return f"{get_chip('h200').ridge_point('bf16'):.0f}"


@fact("nb00.b200_hbm_bw_tb_s")
def b200_hbm_bw_tb_s() -> str:
    return f"{get_chip('b200').hbm_bw_bytes_per_s / 1e12:.0f}"


# -- models: counts derived from the architecture (cell 23, answer 4) ------------------------------------------
def _params_error(mid: str) -> float:
    m = get_model(mid)
    return m.params / m.published_params - 1


@fact("nb00.params_error_max_other_pct")
def params_error_max_other_pct() -> str:
    """The largest |error| of the derived counts, leaving out the three the text discusses one by one."""
    errors = models().set_index("id")["params_error"].dropna()
    return f"{errors.drop(['llama-2-70b', 'llama-4-scout', 'kimi-k2']).abs().max() * 100:.2f}"


@fact("nb00.llama2_70b_params")
def llama2_70b_params() -> str:
    return f"{get_model('llama-2-70b').params / 1e9:.2f}e9"


@fact("nb00.llama2_70b_error_pct")
def llama2_70b_error_pct() -> str:
    return _signed_pct(_params_error("llama-2-70b"))


@fact("nb00.scout_published_b")
def scout_published_b() -> str:
    return f"{get_model('llama-4-scout').published_params / 1e9:.0f}"


@fact("nb00.scout_error_pct")
def scout_error_pct() -> str:
    return _signed_pct(_params_error("llama-4-scout"))


@fact("nb00.kimi_below_pct")
def kimi_below_pct() -> str:
    return f"{-_params_error('kimi-k2') * 100:.1f}"


@fact("nb00.kimi_published_trillion")
def kimi_published_trillion() -> str:
    return f"{get_model('kimi-k2').published_params / 1e12:.2f}"


@fact("nb00.deepseek_published_active_b")
def deepseek_published_active_b() -> str:
    return f"{get_model('deepseek-v3').published_active_params / 1e9:.0f}"


@fact("nb00.deepseek_active")
def deepseek_active() -> str:
    return f"{get_model('deepseek-v3').active_params / 1e9:.1f}e9"


@fact("nb00.deepseek_layers")
def deepseek_layers() -> str:
    return f"{get_model('deepseek-v3').n_layers}"


@fact("nb00.deepseek_d_c")
def deepseek_d_c() -> str:
    return f"{get_model('deepseek-v3').mla.kv_lora_rank}"


@fact("nb00.deepseek_d_r")
def deepseek_d_r() -> str:
    return f"{get_model('deepseek-v3').mla.qk_rope_head_dim}"


@fact("nb00.bf16_bytes")
def bf16_bytes() -> str:
    return f"{bytes_per_element('bf16'):g}"


@fact("nb00.deepseek_kv_bytes")
def deepseek_kv_bytes() -> str:
    return f"{EXERCISES['kv-bytes-deepseek'].expected():,.0f}"


@fact("nb00.llama31_70b_kv_bytes")
def llama31_70b_kv_bytes() -> str:
    return f"{get_model('llama-3.1-70b').kv_cache_bytes_per_token('bf16'):,.0f}"


@fact("nb00.kv_ratio")
def kv_ratio() -> str:
    llama = get_model("llama-3.1-70b").kv_cache_bytes_per_token("bf16")
    return f"{llama / EXERCISES['kv-bytes-deepseek'].expected():.1f}"


# -- memory is binary (cell 27, the pitfall; answer 3) ----------------------------------------------------------
@fact("nb00.gib_over_gb_pct")
def gib_over_gb_pct() -> str:
    return f"{(UNITS['gib'] / UNITS['gb'] - 1) * 100:.1f}"


@fact("nb00.v5p_hbm_gib")
def v5p_hbm_gib() -> str:
    return f"{_v5p().hbm_bytes / 2**30:.0f}"


@fact("nb00.v5p_hbm_gb")
def v5p_hbm_gb() -> str:
    return f"{_v5p().hbm_bytes / 1e9:.1f}"


@fact("nb00.v5p8_hbm_gib")
def v5p8_hbm_gib() -> str:
    return f"{EXERCISES['v5p-8-chip-gib'].expected():.0f}"


@fact("nb00.v5p8_hbm_gb")
def v5p8_hbm_gb() -> str:
    return f"{8 * _v5p().hbm_bytes / 1e9:.0f}"


@fact("nb00.h100_hbm_mib")
def h100_hbm_mib() -> str:
    return f"{_h100().hbm_bytes / 2**20:,.0f}"


@fact("nb00.h100_hbm_gb")
def h100_hbm_gb() -> str:
    return f"{_h100().hbm_bytes / 1e9:.1f}"


@fact("nb00.h100_hbm_gib")
def h100_hbm_gib() -> str:
    return f"{_h100().hbm_bytes / 2**30:.1f}"


def _h100_printed_readings() -> tuple[float, float]:
    """The datasheet's "80GB" read in GiB (the raw stacks) and read as decimal GB: the alternatives kept."""
    alts = [v for v, _, _ in _h100().provenance["hbm_bytes"].alternatives]
    return max(alts), min(alts)


@fact("nb00.h100_raw_gib")
def h100_raw_gib() -> str:
    return f"{_h100_printed_readings()[0] / 2**30:.0f}"


@fact("nb00.h100_printed_gb")
def h100_printed_gb() -> str:
    return f"{_h100_printed_readings()[1] / 1e9:.0f}"


@fact("nb00.h100_driver_keeps_mib")
def h100_driver_keeps_mib() -> str:
    return f"{(_h100_printed_readings()[0] - _h100().hbm_bytes) / 2**20:,.0f}"


@fact("nb00.h100_decimal_short_pct")
def h100_decimal_short_pct() -> str:
    return f"{(1 - _h100_printed_readings()[1] / _h100().hbm_bytes) * 100:.1f}"


@catalogue_cache(maxsize=None)
def _h100_largest_batches() -> tuple[int, int]:
    """Largest batch of Llama 3.1 70B in fp8 on one H100, 128 + 128 tokens: with the catalogue's capacity,
    and with the datasheet's "80GB" read as 80e9 bytes (the call of the notebook's cell 28)."""
    h100 = _h100()
    decimal = h100.what_if_variant("80e9 bytes", hbm_bytes=_h100_printed_readings()[1])
    return tuple(estimate("llama-3.1-70b", c, 1, 1, 128, 128, "fp8").max_batch_size for c in (h100, decimal))


@fact("nb00.h100_max_batch")
def h100_max_batch() -> str:
    return f"{_h100_largest_batches()[0]:,}"


@fact("nb00.h100_max_batch_decimal")
def h100_max_batch_decimal() -> str:
    return f"{_h100_largest_batches()[1]:,}"
