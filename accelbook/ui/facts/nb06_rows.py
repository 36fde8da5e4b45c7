"""Facts of notebook 06, section 4's validation rows by family: TensorRT-LLM's tables, vLLM on MI300X and
DeepSeek-R1 with data-parallel attention, and the MoE rows of TensorRT-LLM's v1.0 overview
(``inference.validation_table``)."""

from __future__ import annotations

from accelbook import inference as inf
from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui.facts import fact


@catalogue_cache(maxsize=None)
def _validation():
    return inf.validation_table()


def _thr(prefix: str = ""):
    """Section 4's throughput target rows (those whose id starts with ``prefix``)."""
    v = _validation()
    return v[(v["role"] == "target") & (v["metric"] == "tokens_per_s_per_chip") & v["id"].str.startswith(prefix)]


@fact("nb06.trt_within_20")
def trt_within_20() -> str:
    return f"{int((_thr('trt-')['error'].abs() <= 0.20).sum())} of {len(_thr('trt-'))}"


@fact("nb06.amd_within_20")
def amd_within_20() -> str:
    return f"{int((_thr('vllm-mi300x')['error'].abs() <= 0.20).sum())} of {len(_thr('vllm-mi300x'))}"


@fact("nb06.amd_median_pct")
def amd_median_pct() -> str:
    return f"{_thr('vllm-mi300x')['error'].median() * 100:+.0f}"


@fact("nb06.amd_8b_pct")
def amd_8b_pct() -> str:
    return f"{_validation().set_index('id').loc['vllm-mi300x-8b-tp1-128-2048', 'error'] * 100:+.0f}"


@fact("nb06.dp_within_20")
def dp_within_20() -> str:
    # DeepSeek-R1 with data-parallel attention and expert parallelism (TensorRT-LLM, 8 GPUs)
    return f"{int((_thr('trtllm-dsr1')['error'].abs() <= 0.20).sum())} of {len(_thr('trtllm-dsr1'))}"


@fact("nb06.ovw_within_20")
def ovw_within_20() -> str:
    # Qwen3 and Llama 4 Maverick at TensorRT-LLM's v1.0 performance overview (1,000 in, 1,000 out, held out)
    return f"{int((_thr('trtllm-ovw')['error'].abs() <= 0.20).sum())} of {len(_thr('trtllm-ovw'))}"


@fact("nb06.ovw_30b_pct")
def ovw_30b_pct() -> str:
    return f"{_validation().set_index('id').loc['trtllm-ovw-qwen3-30b-a3b-b200x1-1k1k', 'error'] * 100:+.0f}"
