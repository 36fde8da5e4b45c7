"""Facts quoted in the prose of notebooks/06_inference_prefill_decode.ipynb (keys ``nb06.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

import numpy as np

from accelbook import inference as inf
from accelbook.inference import serving as sv
from accelbook.inference.dataflow import link_terms
from accelbook.inference.rates import elementwise_bytes_per_token
from accelbook.network import topology
from accelbook.network.collectives import estimate
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.measured import achievable_hbm_fraction, allreduce_latency, launch_overhead_per_layer
from accelbook.specs.models import bytes_per_element, get_model
from accelbook.ui.dashboards.nb06_inference_prefill_decode import inference_spec
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact

_M = "llama-3.1-70b"


@catalogue_cache(maxsize=None)
def _one_h200():
    """Section 1's estimate (and exercise 3's): Llama 3.1 70B in fp8 at batch 1 on one H200, 2,048 in, 256 out."""
    return inf.estimate(_M, "h200", 1, 1, 2048, 256, "fp8")


@catalogue_cache(maxsize=None)
def _defaults() -> dict:
    return {k: c.value for k, c in inference_spec().controls.items()}


@catalogue_cache(maxsize=None)
def _dash(batch: int):
    """The dashboard's defaults at ``batch`` (the prediction's layout)."""
    d = _defaults()
    return inf.estimate(d["model"], d["chip"], d["n_chips"], batch, d["input_len"], d["output_len"], d["precision"],
                        tp=d["tp"])


@catalogue_cache(maxsize=None)
def _cap(context: int):
    """Section 2's table: the largest batch on 8 H200 (fp8 weights and KV, TP8) at ``context`` tokens."""
    return inf.estimate(_M, "h200", 8, 8, context - 256, 256, "fp8", tp=8)


@catalogue_cache(maxsize=None)
def _validation():
    return inf.validation_table()


@catalogue_cache(maxsize=None)
def _gap() -> dict:
    """Cell 16's table: the missing time per layer (µs) of each row the model under-predicts, by result id."""
    v, pub, out = _validation(), inf.published_results(), {}
    for r in v.itertuples():
        if r.metric == "ttft_ms":
            out[r.id] = (r.reported - r.predicted) * 1e3 / 80
        elif r.metric == "tokens_per_s_per_user" and np.isfinite(r.error):
            L = get_model(pub[r.id]["model"]).n_layers
            out[r.id] = (1 / r.reported - 1 / r.predicted) * 1e6 / L
    return out


@catalogue_cache(maxsize=None)
def _cost():
    return inf.step_cost(_M, "h200", 8, "fp8")


@catalogue_cache(maxsize=None)
def _sweep():
    """Section 5's load sweep, as cell 19 runs it."""
    return sv.load_sweep(_cost(), [1, 8, 16, 24, 28, 32, 40], n_requests=2000, prompt=("lognormal", 1024, 0.5),
                         output=("lognormal", 256, 0.5), ttft_slo_s=1.0, tbt_slo_s=0.05).set_index("rate_per_s")


@catalogue_cache(maxsize=None)
def _chunks() -> dict:
    """Cell 22's comparison: p99 TBT (s) and goodput (req/s) of the two colocated chunk sizes and disaggregation."""
    wl = sv.workload(3000, 12.0, prompt=("lognormal", 2048, 0.5), output=("lognormal", 256, 0.5), seed=1)
    kvb = get_model(_M).kv_cache_bytes_per_token("fp8")
    out = {}
    for label, kw in {"256": dict(n_instances=2, chunk_tokens=256), "4096": dict(n_instances=2, chunk_tokens=4096),
                      "dis": dict(disaggregated=True, n_prefill=1, n_decode=1, chunk_tokens=4096,
                                  kv_bytes_per_token=kvb, link_bytes_per_s=50e9)}.items():
        r = sv.simulate(wl, _cost(), **kw)
        out[label] = (r.tbt_percentile(99), r.goodput(1.0, 0.05), r.percentiles()["ttft_p50_s"])
    return out


def _pct(x: float) -> str:
    return f"{abs(x) * 100:.0f}"


# -- section 1 ------------------------------------------------------------------------------------------------

@fact("nb06.weights_read_gb")
def weights_read_gb() -> str:
    b = _one_h200().breakdown
    return f"{b['decode_weights_read_s'] * achievable_hbm_fraction('h200').measured_bytes_per_s / 1e9:.1f}"


@fact("nb06.h200_achievable_tb_s")
def h200_achievable_tb_s() -> str:
    return f"{achievable_hbm_fraction('h200').measured_bytes_per_s / 1e12:.2f}"


@fact("nb06.h200_achievable_pct")
def h200_achievable_pct() -> str:
    return f"{achievable_hbm_fraction('h200').fraction * 100:.0f}"


@fact("nb06.h200_hbm_tb_s")
def h200_hbm_tb_s() -> str:
    return f"{get_chip('h200').hbm_bw_bytes_per_s / 1e12:.1f}"


@fact("nb06.weights_read_ms")
def weights_read_ms() -> str:
    return f"{_one_h200().breakdown['decode_weights_read_s'] * 1e3:.1f}"


# -- section 3: the prediction's answer ------------------------------------------------------------------------

@fact("nb06.batch_default")
def batch_default() -> str:
    return f"{_defaults()['batch']}"


@fact("nb06.batch64_gain")
def batch64_gain() -> str:
    return f"{EXERCISES['predict-batch64-chip-gain'].expected():.0f}"


@fact("nb06.step_b1_ms")
def step_b1_ms() -> str:
    return f"{_dash(1).tpot_s * 1e3:.1f}"


@fact("nb06.step_b64_ms")
def step_b64_ms() -> str:
    return f"{_dash(_defaults()['batch']).tpot_s * 1e3:.1f}"


@fact("nb06.allreduce_fixed_ms")
def allreduce_fixed_ms() -> str:
    return f"{_dash(1).breakdown['allreduce_fixed_s'] * 1e3:.1f}"


@fact("nb06.prefill_ms")
def prefill_ms() -> str:
    return f"{_dash(_defaults()['batch']).ttft_s * 1e3:.0f}"


@fact("nb06.batch_prefill_s")
def batch_prefill_s() -> str:
    B = _defaults()["batch"]
    return f"{B * _dash(B).ttft_s:.1f}"


@fact("nb06.batch_decode_s")
def batch_decode_s() -> str:
    d = _defaults()
    return f"{d['output_len'] * _dash(d['batch']).tpot_s:.1f}"


# -- section 4 ------------------------------------------------------------------------------------------------

@fact("nb06.ar_h100_us")
def ar_h100_us() -> str:
    return f"{allreduce_latency('h100').latency_s * 1e6:.0f}"


@fact("nb06.ar_h200_us")
def ar_h200_us() -> str:
    return f"{allreduce_latency('h200').latency_s * 1e6:.0f}"


@fact("nb06.ar_a100_us")
def ar_a100_us() -> str:
    return f"{allreduce_latency('a100').latency_s * 1e6:.0f}"


@fact("nb06.ar_message_kb")
def ar_message_kb() -> str:
    return f"{allreduce_latency('h100').message_bytes / 1024:.0f}"


@fact("nb06.nccl_model_us")
def nccl_model_us() -> str:
    """Notebook 03's NCCL latency model for the same message on 8 H100s (its cell's call)."""
    m = allreduce_latency("h100")
    return f"{estimate('all_reduce', m.message_bytes, topology.hgx_h100(nvls=False)).time_s * 1e6:.0f}"


@fact("nb06.ar_mi300x_us")
def ar_mi300x_us() -> str:
    return f"{allreduce_latency('mi300x').latency_s * 1e6:.0f}"


@fact("nb06.ar_mi300x_4mib_us")
def ar_mi300x_4mib_us() -> str:
    a, k = allreduce_latency("mi300x").line_at(4 * 2**20)
    return f"{(a + k * 4 * 2**20) * 1e6:.0f}"


@fact("nb06.launch_per_layer_ms")
def launch_per_layer_ms() -> str:
    return f"{launch_overhead_per_layer(False)[0] * 1e3:.2f}"


@fact("nb06.elementwise_gb_b512")
def elementwise_gb_b512() -> str:
    return f"{elementwise_bytes_per_token(get_model('llama-2-70b'), 1, 'fp8') * 512 / 1e9:.0f}"


@fact("nb06.thr_median_pct")
def thr_median_pct() -> str:
    return f"{inf.error_band('tokens_per_s_per_chip').median * 100:+.0f}"


@fact("nb06.thr_lo_pct")
def thr_lo_pct() -> str:
    return f"{inf.error_band('tokens_per_s_per_chip').lo * 100:+.0f}".replace("-", "−")


@fact("nb06.thr_hi_pct")
def thr_hi_pct() -> str:
    return f"{inf.error_band('tokens_per_s_per_chip').hi * 100:+.0f}"


@fact("nb06.thr_median_abs_pct")
def thr_median_abs_pct() -> str:
    return _pct(inf.error_band("tokens_per_s_per_chip").median)


@fact("nb06.ttft_under_range_pct")
def ttft_under_range_pct() -> str:
    b = inf.error_band("ttft_ms")
    return f"{_pct(b.hi)}-{_pct(b.lo)}"


@fact("nb06.gpu_gap_range_us")
def gpu_gap_range_us() -> str:
    gpu = [g for k, g in _gap().items() if k.startswith("trt-")]
    return f"{min(gpu):.0f}-{max(gpu):.0f}"


@fact("nb06.eager_ttft_ms")
def eager_ttft_ms() -> str:
    r = inf.published_results()["trt-h200-tp8-bs1-ttft-128"]
    e = inf.estimate(r["model"], r["chip"], r["n_chips"], r["batch"], r["input_len"], r["output_len"], r["precision"],
                     tp=r["tp"], cuda_graphs=False)
    return f"{e.ttft_s * 1e3:.0f}"


@fact("nb06.eager_ttft_published_ms")
def eager_ttft_published_ms() -> str:
    return f"{inf.published_results()['trt-h200-tp8-bs1-ttft-128']['reported_value']:.0f}"


@fact("nb06.groq_gap_us")
def groq_gap_us() -> str:
    return f"{_gap()['groq-llama2-70b-user']:.0f}"


@fact("nb06.cerebras_gap_us")
def cerebras_gap_us() -> str:
    return f"{_gap()['cerebras-405b-user']:.0f}"


@fact("nb06.groq_hop_us")
def groq_hop_us() -> str:
    return f"{link_terms('groq-lpu-v1').hop_s * 1e6:.0f}"


# -- section 5 ------------------------------------------------------------------------------------------------

@fact("nb06.serving_ar_us")
def serving_ar_us() -> str:
    return f"{_cost().fixed_s / (get_model(_M).n_layers * 2) * 1e6:.0f}"


@fact("nb06.serving_fixed_ms")
def serving_fixed_ms() -> str:
    return f"{_cost().fixed_s * 1e3:.1f}"


@fact("nb06.serving_ar_per_token_us")
def serving_ar_per_token_us() -> str:
    return f"{inf.estimate(_M, 'h200', 8, 1, 1024, 256, 'fp8').breakdown['allreduce_per_token_s'] * 1e6:.0f}"


@fact("nb06.serving_elementwise_mb")
def serving_elementwise_mb() -> str:
    return f"{elementwise_bytes_per_token(get_model(_M), 8, 'fp8') / 1e6:.0f}"


@fact("nb06.serving_elementwise_us")
def serving_elementwise_us() -> str:
    return f"{inf.estimate(_M, 'h200', 8, 1, 1024, 256, 'fp8').breakdown['elementwise_per_token_s'] * 1e6:.0f}"


@fact("nb06.peak_tok_s")
def peak_tok_s() -> str:
    return f"{round(_sweep()['throughput_tok_s'].max(), -2):,.0f}"


@fact("nb06.capacity_req_s")
def capacity_req_s() -> str:
    return f"{_sweep()['throughput_tok_s'].max() / 256:.0f}"


@fact("nb06.chunk_tbt_ratio")
def chunk_tbt_ratio() -> str:
    c = _chunks()
    return f"{c['4096'][0] / c['256'][0]:.0f}"


@fact("nb06.chunk_goodput_req_s")
def chunk_goodput_req_s() -> str:
    lo, hi = (f"{f(c[1] for c in _chunks().values()):.0f}" for f in (min, max))
    return lo if lo == hi else f"{lo}–{hi}"


@fact("nb06.chunk_ttft_extra_ms")
def chunk_ttft_extra_ms() -> str:
    c = _chunks()
    return f"{(c['256'][2] - c['4096'][2]) * 1e3:.0f}"


@fact("nb06.chunk256_ttft_ms")
def chunk256_ttft_ms() -> str:
    return f"{_chunks()['256'][2] * 1e3:.0f}"


@fact("nb06.disagg_ttft_ms")
def disagg_ttft_ms() -> str:
    return f"{_chunks()['dis'][2] * 1e3:.0f}"


# -- pitfalls -------------------------------------------------------------------------------------------------

@fact("nb06.max_batch_2k")
def max_batch_2k() -> str:
    return f"{_cap(2048).max_batch_size:,}"


@fact("nb06.max_batch_32k")
def max_batch_32k() -> str:
    return f"{_cap(32768).max_batch_size:,}"


@fact("nb06.tok_s_at_40")
def tok_s_at_40() -> str:
    return f"{round(_sweep().loc[40, 'throughput_tok_s'], -2):,.0f}"


@fact("nb06.goodput_at_40")
def goodput_at_40() -> str:
    return f"{_sweep().loc[40, 'goodput_req_s']:.1f}"


@fact("nb06.best_goodput")
def best_goodput() -> str:
    return f"{_sweep()['goodput_req_s'].max():.0f}"


@fact("nb06.best_goodput_rate")
def best_goodput_rate() -> str:
    return f"{_sweep()['goodput_req_s'].idxmax():g}"


# -- exercises' answers -----------------------------------------------------------------------------------------

@fact("nb06.bf16_bytes")
def bf16_bytes() -> str:
    return f"{bytes_per_element('bf16'):.0f}"


@fact("nb06.h200_memory_gb")
def h200_memory_gb() -> str:
    return f"{get_chip('h200').memory_bytes / 1e9:.0f}"


@fact("nb06.kv_bytes_bf16")
def kv_bytes_bf16() -> str:
    return f"{get_model(_M).kv_cache_bytes_per_token('bf16'):,.0f}"


@fact("nb06.kv_kib_bf16")
def kv_kib_bf16() -> str:
    return f"{get_model(_M).kv_cache_bytes_per_token('bf16') / 1024:.0f}"


@fact("nb06.kv_gb_128k_bf16")
def kv_gb_128k_bf16() -> str:
    return f"{get_model(_M).kv_cache_bytes_per_token('bf16') * 131072 / 1e9:.0f}"


@fact("nb06.h200_ridge_fp8")
def h200_ridge_fp8() -> str:
    return f"{get_chip('h200').ridge_point('fp8'):.0f}"


@fact("nb06.h200_ridge_bf16")
def h200_ridge_bf16() -> str:
    return f"{get_chip('h200').ridge_point('bf16'):.0f}"


@fact("nb06.h200_fp8_tflop_s")
def h200_fp8_tflop_s() -> str:
    return f"{get_chip('h200').peak_flop_s('fp8') / 1e12:,.0f}"


@fact("nb06.tpot_one_h200_ms")
def tpot_one_h200_ms() -> str:
    return f"{_one_h200().tpot_s * 1e3:.1f}"


@fact("nb06.kv_read_one_h200_ms")
def kv_read_one_h200_ms() -> str:
    return f"{_one_h200().breakdown['decode_attention_s'] * 1e3:.1f}"


@fact("nb06.tok_s_user_one_h200")
def tok_s_user_one_h200() -> str:
    return f"{_one_h200().tokens_per_s_per_user:.0f}"


@fact("nb06.kv_bytes_fp8")
def kv_bytes_fp8() -> str:
    return f"{get_model(_M).kv_cache_bytes_per_token('fp8'):,.0f}"


@fact("nb06.kv_gb_32k_fp8")
def kv_gb_32k_fp8() -> str:
    return f"{get_model(_M).kv_cache_bytes_per_token('fp8') * 32768 / 1e9:.1f}"


@fact("nb06.kv_room_8h200_tb")
def kv_room_8h200_tb() -> str:
    e = _cap(32768)
    return f"{(e.memory_capacity_bytes - e.breakdown['weights_per_chip_bytes']) * e.n_chips / 1e12:.2f}"


@fact("nb06.weights_fp8_gb")
def weights_fp8_gb() -> str:
    e = _cap(32768)
    return f"{e.breakdown['weights_per_chip_bytes'] * e.n_chips / 1e9:.0f}"


@fact("nb06.kv_bytes_mha_bf16")
def kv_bytes_mha_bf16() -> str:
    return f"{EXERCISES['whatif-mha-kv-70b'].expected():,.0f}"


@fact("nb06.mha_over_gqa")
def mha_over_gqa() -> str:
    return f"{EXERCISES['whatif-mha-kv-70b'].expected() / get_model(_M).kv_cache_bytes_per_token('bf16'):.0f}"


@fact("nb06.kv_gb_32k_mha_bf16")
def kv_gb_32k_mha_bf16() -> str:
    return f"{EXERCISES['whatif-mha-kv-70b'].expected() * 32768 / 1e9:.0f}"


@fact("nb06.one_h200_spare_gb")
def one_h200_spare_gb() -> str:
    e = _one_h200()
    return f"{(e.memory_capacity_bytes - e.breakdown['weights_per_chip_bytes']) / 1e9:.0f}"

