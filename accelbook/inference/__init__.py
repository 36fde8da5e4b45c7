"""Inference: prefill and decode on any catalogue chip, KV cache, TTFT, TPOT, tokens/s/user, tokens/kW, cost.

One model replica runs on ``tp × pp`` chips (tensor parallel inside a stage, ``pp`` pipeline
stages); ``n_chips / (tp·pp)`` replicas serve in parallel. ``batch_size`` is the number of
sequences one replica decodes together.

**Decode step** (one token for every sequence of the batch). The batch is split into ``pp``
microbatches so that every stage stays busy; a stage's time for a microbatch of ``b = B/pp``
sequences at mean context ``c`` (prompt + half the output) is a roofline per kind of operation,

    t_stage = max(W/(η_mem·B_mem), b·2N_active/(η_gemm·P))              the matmuls
            + max(b·c·KV/(η_mem·B_mem), b·c·F_att/(η_att·P_bf16))    attention over the cache
            + two ring all-reduces of b·d activations per layer over tp chips

per chip (weights ``W`` and FLOPs divided by ``tp·pp``; for MoE only the experts the microbatch
touches are read). ``F_att`` is the attention FLOPs per context token, ``2L·(d_qk+d_v)``, or
``2L·H·(2·d_c + d_r)`` for absorbed MLA (DeepSeek-V3), as :mod:`accelbook.chip.roofline` counts it.
The all-reduces' time is their latency (``2L·2(tp-1)·hop``, whatever the batch) plus their bytes
per token; the serving simulator charges them that way (``step``). The two kinds of kernel run one after the other, so their times add. A token crosses all
``pp`` stages: **TPOT** = ``pp·t_stage + (pp-1)·hop``, tokens/s/user = 1/TPOT, and a replica
makes ``B / TPOT`` tokens/s. ``B_mem`` is HBM, or SRAM on chips whose weights live on-chip
(Groq LPU, Cerebras WSE); ``η_mem`` is the share of the memory bandwidth that reads reach: the chip's
measured achievable HBM bandwidth (BabelStream Triad, ``accelbook.specs.measured.achievable_hbm_fraction``;
H100 2.97 of 3.35 TB/s), an ESTIMATE of 85 % on SRAM. Measured mechanisms on top, each its own term:
``η_gemm`` times the GEMMs' shape efficiency (tile and wave quantisation, ``rates.pass_shape_efficiency``);
each all-reduce's fixed part at the measured nccl-tests small-message time (``measured.allreduce_latency``:
A100 43 µs, H100 27 µs, H200 31 µs on 8 GPUs) instead of ``2(tp-1)·hop``; and with ``cuda_graphs=False``
the measured host and launch time per layer (0.30 ms, ``measured.launch_overhead_per_layer``).

**Prefill** of one prompt of ``s`` tokens: ``s·(2·N_active + L·s·(d_qk + d_v))`` FLOPs (causal)
at the measured GEMM efficiency, or the weights' read time if that is longer, across the ``pp``
stages one after another, plus its all-reduces: **TTFT** at an idle server (queueing is the
serving simulator's job, :mod:`accelbook.inference.serving`, also reachable as ``accelbook.serving``).

**Throughput** of a replica serving a batch from prompt to last token (static batching, as the
TensorRT-LLM tables were measured): ``B·output_len / (t_prefill(B prompts) + output_len·TPOT)``,
with the B prompts streamed through the stages, ``(B + pp - 1)·max(t_prompt, t_weights/B)``.

**Power** per chip (an ESTIMATE: no per-chip power curve is published for most chips):
``P = P_idle + (TDP - P_idle)·activity`` with ``P_idle = 0.3·TDP`` and activity the busy share of
the binding unit (1 when compute-bound; 0.7 per unit of memory-bound time, as moving bytes draws
less than the matrix units). tokens/kW = tokens/s / (P·chips/1000); USD per million tokens from
the catalogue's price per chip-hour.

Memory per chip: the stage's weights + its share of the KV cache must fit in ``(1 - reserve)`` of
the chip's memory (``accelbook.specs.chips.MEMORY_RESERVE``, 10 % today, on HBM for activations and
the runtime; none on SRAM chips, whose compilers place everything statically).

Where each part lives (one job a module):

- ``rates``: peak at a precision, measured GEMM efficiency, the ESTIMATE shares and defaults;
- ``estimate``: :class:`InferenceEstimate`, :func:`estimate` (memory, decode, prefill, throughput,
  power; a tensor-parallel degree must divide the attention heads);
- ``parallel``: what a decode step reads (:func:`weights_read_bytes`), and the layouts of a mixture-of-experts
  model: tensor-parallel attention, or ``attention="dp"``, data-parallel attention with expert parallelism
  (two all-to-alls per MoE layer at their real size, ``costs.hierarchical.collective_time_s``, as in training;
  the busiest rank at the measured expert imbalance; the prompts prefilled one rank at a time);
- ``dataflow``: SRAM-only and tiered chips at batch 1: Groq LPU v1's published chip-to-chip terms, a wafer's
  layers mapped onto regions of cores (read one region at a time), SN40L's weights served from HBM at the vendor's
  decode share, and :func:`plausibility`, the flag an estimate carries when its per-user speed is out of the
  model's reach, naming the figure no publication gives (``data/dataflow.toml``);
- ``sweep``: the valid :func:`layouts`, every layout and batch that fits, :func:`min_chips` (weights,
  and with a context the KV cache), :func:`max_throughput`, :func:`pareto`, :func:`frontier`;
- ``validation``: :func:`published_results`, :func:`validation_table` (``data/inference_runs.toml``) and
  :func:`error_band` (the model's error per metric, printed next to every number notebook 06 shows);
- ``variants``: speculative decoding, heterogeneous GPU + LPU decode, disaggregated prefill and decode;
- ``speculative``: draft heads (EAGLE-2, EAGLE-3, MTP) at their measured acceptance lengths (``data/speculative.toml``);
- the serving simulator: ``serving`` (its specification, the Numba event loop, :func:`simulate`,
  ``load_sweep``), ``workload`` (:class:`ServingWorkload` and its generator), ``step``
  (:class:`StepCost` and :func:`step_cost` from this model), ``serving_result`` (:class:`ServingResult`).
"""

from .dataflow import PLAUSIBLE_FACTOR, link_terms, plausibility, published_speeds
from .estimate import InferenceEstimate, estimate
from .mlperf import continuous_throughput, server_validation_table  # noqa: F401  (steady-state serving, MLPerf rows)
from .parallel import decode_attention_flops_per_context_token, weights_read_bytes
from .power import PowerDraw, decode_power
from .rates import (
    DEFAULT_HOP_S,
    DEFAULT_LINK_BYTES_S,
    IDLE_POWER_SHARE,
    MEM_EFFICIENCY,
    MEMORY_BOUND_POWER,
    WEIGHT_PRECISIONS,
    elementwise_bytes_per_token,
    gemm_efficiency,
    layer_gemms,
    nearest_peak_flop_s,
    pass_shape_efficiency,
    peak_precision,
)
from .result import usable_bytes
from .speculative import acceptance, chain_tau, draft_head, speculative_decode
from .step import StepCost, step_cost
from .sweep import frontier, layouts, max_throughput, min_chips, pareto, sweep
from .validation import METRICS, ErrorBand, error_band, published_results, validation_table
from .variants import disaggregation, expected_accepted, heterogeneous_decode, speculative

__all__ = [
    "WEIGHT_PRECISIONS", "MEM_EFFICIENCY", "IDLE_POWER_SHARE", "MEMORY_BOUND_POWER", "DEFAULT_HOP_S",
    "DEFAULT_LINK_BYTES_S", "nearest_peak_flop_s", "peak_precision", "gemm_efficiency", "pass_shape_efficiency",
    "layer_gemms", "elementwise_bytes_per_token", "decode_power", "PowerDraw",
    "InferenceEstimate", "estimate", "min_chips", "usable_bytes", "weights_read_bytes",
    "decode_attention_flops_per_context_token",
    "sweep", "layouts", "max_throughput", "pareto", "frontier",
    "METRICS", "published_results", "validation_table", "ErrorBand", "error_band",
    "expected_accepted", "speculative", "heterogeneous_decode", "disaggregation",
    "acceptance", "chain_tau", "draft_head", "speculative_decode",
    "StepCost", "step_cost",
    "PLAUSIBLE_FACTOR", "plausibility", "published_speeds", "link_terms",
]
