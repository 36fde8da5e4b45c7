"""Facts quoted in the prose of notebooks/01_gpu_vs_tpu.ipynb (keys ``nb01.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.chip.roofline import layer_roofline, time_bounds
from accelbook.economics import training_tokens_per_s, usd_per_token
from accelbook.economics.claims import article_of, load_claims
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.training import counted_flops_per_token, published_goodput
from accelbook.ui.dashboards import roofline_spec, training_cost_spec
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sci(x: float, digits: int = 2) -> str:
    """``4.7 × 10⁸``: ``x`` with ``digits`` significant digits."""
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _llama70():
    return get_model("llama-3.1-70b")


def _h100():
    return get_chip("h100")


def _v5p():
    return get_chip("tpu-v5p")


# -- two designs, one bound: the FFN weight times one token on an H100 (the notebook's cell under it) --
@catalogue_cache(maxsize=None)
def _gemv() -> tuple[float, float, float, float]:
    """FLOPs, bytes, t_math, t_mem of one 8192 × 28672 bf16 weight times one token on an H100."""
    m = _llama70()
    flops = 2 * m.d_model * m.d_ff
    data = 2 * m.d_model * m.d_ff          # bf16: 2 bytes per weight
    t_math, t_mem, _ = time_bounds(flops, data, _h100().peak_flop_s(), _h100().hbm_bw_bytes_per_s)
    return flops, data, t_math, t_mem


@fact("nb01.gemv_flops")
def gemv_flops() -> str:
    return _sci(_gemv()[0])


@fact("nb01.gemv_bytes")
def gemv_bytes() -> str:
    return _sci(_gemv()[1])


@fact("nb01.gemv_t_math_us")
def gemv_t_math_us() -> str:
    return f"{_gemv()[2] * 1e6:.2f}"


@fact("nb01.gemv_t_mem_us")
def gemv_t_mem_us() -> str:
    return f"{_gemv()[3] * 1e6:.0f}"


@fact("nb01.gemv_idle_pct")
def gemv_idle_pct() -> str:
    _, _, t_math, t_mem = _gemv()
    return f"{(1 - t_math / max(t_math, t_mem)) * 100:.1f}"


# -- the chips' peaks, bandwidths, prices and ridges ----------------------------------------------------
@fact("nb01.ridge_h100")
def ridge_h100() -> str:
    return f"{_h100().ridge_point('bf16'):.0f}"


@fact("nb01.ridge_v5p")
def ridge_v5p() -> str:
    return f"{_v5p().ridge_point('bf16'):.0f}"


@fact("nb01.h100_peak_tflop_s")
def h100_peak_tflop_s() -> str:
    return f"{_h100().peak_flop_s('bf16') / 1e12:g}"


@fact("nb01.v5p_peak_tflop_s")
def v5p_peak_tflop_s() -> str:
    return f"{_v5p().peak_flop_s('bf16') / 1e12:g}"


@fact("nb01.h100_bw_tb_s")
def h100_bw_tb_s() -> str:
    return f"{_h100().hbm_bw_bytes_per_s / 1e12:g}"


@fact("nb01.v5p_bw_tb_s")
def v5p_bw_tb_s() -> str:
    return f"{_v5p().hbm_bw_bytes_per_s / 1e12:g}"


@fact("nb01.peak_ratio")
def peak_ratio() -> str:
    """H100 over v5p, bf16 dense peak."""
    return f"{_h100().peak_flop_s('bf16') / _v5p().peak_flop_s('bf16'):.1f}"


@fact("nb01.peak_only_cost_ratio")
def peak_only_cost_ratio() -> str:
    """The H100/v5p cost ratio a reader predicts from the peaks alone (equal prices): v5p peak / H100 peak."""
    return f"{_v5p().peak_flop_s('bf16') / _h100().peak_flop_s('bf16'):.2f}"


@fact("nb01.h100_price")
def h100_price() -> str:
    return f"{_h100().price_usd_per_hour:.2f}"


@fact("nb01.v5p_price")
def v5p_price() -> str:
    return f"{_v5p().price_usd_per_hour:.2f}"


@fact("nb01.price_ratio")
def price_ratio() -> str:
    return f"{_h100().price_usd_per_hour / _v5p().price_usd_per_hour:.1f}"


@fact("nb01.h100_price_per_s")
def h100_price_per_s() -> str:
    return _sci(_h100().price_usd_per_s)


@fact("nb01.v5p_price_per_s")
def v5p_price_per_s() -> str:
    return _sci(_v5p().price_usd_per_s, 3)


# -- the roofline dashboard's default view (Llama 3.1 70B decode, batch 8, 4,096 tokens) -----------------
@fact("nb01.roofline_batch")
def roofline_batch() -> str:
    return f"{roofline_spec().controls['batch'].value:,}"


@fact("nb01.roofline_seq_len")
def roofline_seq_len() -> str:
    return f"{roofline_spec().controls['seq_len'].value:,}"


@fact("nb01.decode_ratio")
def decode_ratio() -> str:
    return f"{EXERCISES['predict-v5p-decode-ratio'].expected():.2f}"


@fact("nb01.decode_b8_intensity")
def decode_b8_intensity() -> str:
    """FLOPs per byte of the FFN's weight GEMM in the roofline dashboard's default view (batch 8)."""
    controls = roofline_spec().controls
    df = layer_roofline(_llama70(), _h100(), "decode", batch=controls["batch"].value, seq_len=controls["seq_len"].value)
    return f"{df.loc[df['op'] == 'FFN up + gate', 'intensity_flop_per_byte'].iloc[0]:.0f}"


@fact("nb01.decode_b1_intensity")
def decode_b1_intensity() -> str:
    """FLOPs per byte of the FFN's weight GEMM at batch 1 (exercise 1)."""
    df = layer_roofline(_llama70(), _h100(), "decode", batch=1, seq_len=4096)
    return f"{df.loc[df['op'] == 'FFN up + gate', 'intensity_flop_per_byte'].iloc[0]:.0f}"


# -- training throughput and cost at the cost dashboard's defaults --------------------------------------
@catalogue_cache(maxsize=None)
def _cost_defaults() -> tuple[float, int]:
    controls = training_cost_spec().controls
    return controls["mfu"].value, int(controls["seq_len"].value)


def _tokens_s(chip, mfu: float | None = None) -> float:
    default_mfu, seq_len = _cost_defaults()
    return training_tokens_per_s(_llama70(), chip, default_mfu if mfu is None else mfu, seq_len)


@fact("nb01.mfu_pct")
def mfu_pct() -> str:
    return f"{_cost_defaults()[0] * 100:.0f}"


@fact("nb01.cost_seq_len")
def cost_seq_len() -> str:
    return f"{_cost_defaults()[1]:,}"


@fact("nb01.train_flop_per_token")
def train_flop_per_token() -> str:
    return _sci(_llama70().flops_per_token(_cost_defaults()[1], training=True), 3)


@fact("nb01.h100_tokens_s")
def h100_tokens_s() -> str:
    return f"{_tokens_s(_h100()):,.0f}"


@fact("nb01.h100_usd_per_m")
def h100_usd_per_m() -> str:
    return f"{usd_per_token(_tokens_s(_h100()), _h100()) * 1e6:.2f}"


@fact("nb01.v5p_usd_per_m")
def v5p_usd_per_m() -> str:
    return f"{usd_per_token(_tokens_s(_v5p()), _v5p()) * 1e6:.2f}"


@fact("nb01.cost_ratio")
def cost_ratio() -> str:
    return f"{EXERCISES['predict-h100-v5p-cost-ratio'].expected():.2f}"


@fact("nb01.goodput_pct")
def goodput_pct() -> str:
    return f"{published_goodput().fraction * 100:.0f}"


# -- how reports count FLOPs: full over causal attention at 8,192 tokens ---------------------------------
def _full_over_causal(model: str) -> float:
    m = get_model(model)
    return counted_flops_per_token(m, 8192, "full") / counted_flops_per_token(m, 8192, "causal") - 1


@fact("nb01.full_causal_8b_pct")
def full_causal_8b_pct() -> str:
    return f"{EXERCISES['mfu-full-vs-causal-8b'].expected():.1f}"


@fact("nb01.full_causal_70b_pct")
def full_causal_70b_pct() -> str:
    return f"{_full_over_causal('llama-3.1-70b') * 100:.1f}"


def _llama8_counts() -> tuple[float, float, float]:
    """Llama 3.1 8B at 8,192 tokens: training FLOPs per token of the weights, and counted full and causal."""
    m = get_model("llama-3.1-8b")
    return (6 * m.matmul_params_active, counted_flops_per_token(m, 8192, "full"),
            counted_flops_per_token(m, 8192, "causal"))


@fact("nb01.attn_full_8b")
def attn_full_8b() -> str:
    weights, full, _ = _llama8_counts()
    return _sci(full - weights, 3)


@fact("nb01.params_8b")
def params_8b() -> str:
    return _sci(get_model("llama-3.1-8b").matmul_params_active)


@fact("nb01.weights_8b")
def weights_8b() -> str:
    return _sci(_llama8_counts()[0])


@fact("nb01.attn_half_8b")
def attn_half_8b() -> str:
    _, full, causal = _llama8_counts()
    return _sci(full - causal)


@fact("nb01.causal_8b")
def causal_8b() -> str:
    return _sci(_llama8_counts()[2])


# -- fallacies and pitfalls -------------------------------------------------------------------------------
@catalogue_cache(maxsize=None)
def _article_mfus() -> tuple[float, float]:
    """Article 1's MFUs for the H100 and the TPU v5p (its throughput claim in data/claims.toml)."""
    params = {c.id: c for c in load_claims()}["h100-v5p-throughput"].params
    assert (params["chip_a"], params["chip_b"]) == ("h100", "tpu-v5p"), params
    return params["mfu_a"], params["mfu_b"]


@fact("nb01.article_mfu_h100_pct")
def article_mfu_h100_pct() -> str:
    return f"{_article_mfus()[0] * 100:.0f}"


@fact("nb01.article_mfu_v5p_pct")
def article_mfu_v5p_pct() -> str:
    return f"{_article_mfus()[1] * 100:.0f}"


@fact("nb01.article_mfu_tps_ratio")
def article_mfu_tps_ratio() -> str:
    mfu_h100, mfu_v5p = _article_mfus()
    return f"{_tokens_s(_h100(), mfu_h100) / _tokens_s(_v5p(), mfu_v5p):.1f}"


@fact("nb01.b200_peak_ratio")
def b200_peak_ratio() -> str:
    return f"{get_chip('b200').peak_flop_s('bf16') / _h100().peak_flop_s('bf16'):.1f}"


@fact("nb01.b200_bw_ratio")
def b200_bw_ratio() -> str:
    return f"{get_chip('b200').hbm_bw_bytes_per_s / _h100().hbm_bw_bytes_per_s:.1f}"


@fact("nb01.b200_decode_time_ratio")
def b200_decode_time_ratio() -> str:
    t = {c: layer_roofline(_llama70(), get_chip(c), "decode", batch=1, seq_len=4096)["t_s"].sum()
         for c in ("b200", "h100")}
    return f"{t['b200'] / t['h100']:.2f}"


# -- answers ----------------------------------------------------------------------------------------------
@fact("nb01.v5p_tokens_s_at_50")
def v5p_tokens_s_at_50() -> str:
    return f"{_tokens_s(_v5p(), 0.5):,.0f}"


@fact("nb01.cost_v5p_at_50")
def cost_v5p_at_50() -> str:
    return f"{EXERCISES['cost-v5p'].expected():.2f}"


@fact("nb01.break_even_fraction")
def break_even_fraction() -> str:
    return f"{EXERCISES['whatif-h100-price-match'].expected():.2f}"


@fact("nb01.break_even_discount_pct")
def break_even_discount_pct() -> str:
    return f"{(1 - EXERCISES['whatif-h100-price-match'].expected()) * 100:.0f}"


@fact("nb01.claims_total")
def claims_total() -> str:
    return f"{len(load_claims())}"


@fact("nb01.claims_article1")
def claims_article1() -> str:
    return f"{sum(article_of(c) == 'article-1' for c in load_claims())}"
