"""The kernels' records: the model, the chip in its cluster, the run's options, a layout, the results.

The Numba kernels take NumPy structured records (``np.dtype(..., align=True)``, every field a float64 unless
said), which they read and write by field name (``mv.d_model``, ``c.peak_flop_s``, ``out.step_time_s``):

- the **model record** ``mv`` (:data:`MODEL`), built once per model and sequence length by
  :func:`model_record`;
- the **chip record** ``c`` (:data:`CHIP`), the chip in its cluster at one precision, built by
  :func:`chip_record`;
- the **options record** ``opt`` (:data:`OPTIONS`), how the framework runs what the layout leaves open
  (:func:`options_record`);
- a **layout** of the search (:data:`LAYOUT`, fields :data:`CONFIG_FIELDS`, in that order);
- the **result record** (:data:`RESULT`, fields :data:`RESULT_FIELDS`, in that order: the columns of
  ``search()``'s table), which the kernel fills and :func:`accelbook.training.step.to_estimate` and the
  search's table read back.

A field added to a dtype moves no one else's number: nothing reads a record by position. Units are SI and
in the names: ``..._s`` seconds, ``..._bytes`` bytes, ``..._flop_s`` FLOP/s, ``..._bytes_per_s`` bytes/s,
``..._params`` parameters; a bare name is a count, a width or a fraction.
"""

from __future__ import annotations

import numpy as np

from accelbook.costs.gemm import DEFAULT_N_MXU, DEFAULT_SMS, chip_gemm_units
from accelbook.specs.chips import Chip
from accelbook.specs.clusters import Cluster
from accelbook.specs.efficiency import attention_efficiency, gemm_k_overhead, measured_efficiency
from accelbook.specs.grouped_gemm import grouped_gemm_fraction
from accelbook.specs.measured import achievable_hbm_fraction, elementwise_stream_fraction, expert_load_imbalance, overlap_slowdown
from accelbook.specs.models import Model

from .framework import framework_defaults


def record_dtype(names, kind=np.float64) -> np.dtype:
    """An aligned structured dtype of the fields ``names``, each of type ``kind``."""
    return np.dtype([(name, kind) for name in names], align=True)


def new_record(dtype: np.dtype) -> np.record:
    """One zeroed record of ``dtype``: a view into its own one-element array, which the kernels get by reference
    and Python reads by field name or attribute (``r["d_model"]``, ``r.d_model``)."""
    return np.zeros(1, dtype=dtype).view(np.recarray)[0]


RECOMPUTE = ("none", "selective", "full")     # the kernel's ``rec``: 0, 1, 2
PRECISIONS = ("bf16", "fp8")
#: when the data-parallel gradients are reduced (the kernel's ``gsync``: 0, 1): once a step, after the last
#: microbatch (the full gradient buffer is kept while accumulating), or every microbatch (ZeRO ≥ 2 keeps
#: only its shard). ZeRO-0/1 sync once a step, ZeRO-3 every microbatch; ZeRO-2 may do either.
GRAD_SYNC = ("step", "microbatch")
#: the pipeline schedule (the kernel's ``sched``: 0, 1, 2): 1F1B (interleaved when vp > 1; Narayanan et al.
#: 2021), ZB-H1 (Qi et al. 2024: the weight-gradient GEMMs fill the bubble, 1F1B's memory) and DualPipe
#: (DeepSeek-V3 report: two directions, a smaller bubble, all-to-all and sends hidden, two copies of the weights)
SCHEDULES = ("1f1b", "zb-h1", "dualpipe")

# -- the model record ---------------------------------------------------------------------------------------
#: the model at one sequence length (:func:`model_record`): layers; widths (``d_model``, ``d_head``, the dense
#: FFN's ``d_ff``, an expert's ``d_ff_expert``, ``d_qk``/``d_v`` the query/key and value projections of all
#: heads); ``n_ffn_matrices`` 3 SwiGLU, 2 GELU; ``n_experts`` 1 if dense, ``top_k`` experts per token,
#: ``moe_layer_share`` the share of MoE layers; parameters: the attention's in-projections
#: (``attn_in_params``), a layer's non-expert and expert ones, the embedding, the LM head with the final norm;
#: training FLOPs per token with causal or full attention (``Model.flops_per_token``); ``router_imbalance`` the
#: busiest expert's load over the mean (1 dense; ``data/moe_balance.toml``); ``node_limit`` the most nodes (fast
#: domains) one token's routed experts may span, 0 for no limit (DeepSeek-V3: 4); ``attention_share`` the causal
#: attention's share of its full-attention FLOPs under a sliding or chunked window (``Model.attention_share``;
#: 1.0 without); ``kv_share`` the share of K/V token-layers a windowed model keeps at the sequence length
#: (``Model.kv_share``; 1.0 without): a local layer's context-parallel exchange moves only its window's K and V.
MODEL = record_dtype((
    "n_layers", "d_model", "n_heads", "kv_heads", "d_head", "d_ff", "vocab_size", "n_ffn_matrices", "n_experts",
    "top_k", "d_ff_expert", "n_shared_experts", "moe_layer_share", "d_qk", "d_v", "attn_in_params",
    "layer_params_non_expert", "layer_params_expert", "embedding_params", "head_params", "flop_per_token_causal",
    "flop_per_token_full", "router_imbalance", "node_limit", "attention_share", "kv_share",
))

# -- the chip record ----------------------------------------------------------------------------------------
#: the chip in its cluster at one precision (:func:`chip_record`): ``peak_flop_s`` the dense peak at the
#: training precision, ``peak_bf16_flop_s`` the bf16 one (attention, LM head); ``eta_gemm``, ``eta_attention``,
#: ``eta_gemm_bf16`` measured GEMM, attention and bf16 GEMM efficiency; ``hbm_bytes`` capacity and
#: ``hbm_bw_bytes_per_s`` the ACHIEVABLE bandwidth (the peak × a STREAM-like measurement's fraction,
#: ``data/hbm_bandwidth.toml``), which the GEMMs' operands, attention scores, the logits and the optimizer stream
#: at; ``elem_bw_bytes_per_s`` that × the fraction of it elementwise kernels reach (norms, residual adds, RoPE,
#: the FFN activation, FP8 casts and their recomputation: ``data/elementwise_bandwidth.toml``); ``is_tpu`` 1 for a TPU; ``n_sms`` SMs,
#: ``mxu_side``, ``n_mxu`` MXUs; ``bytes_per_element`` of a GEMM (1 fp8, 2 bf16); ``domain_chips`` chips per
#: fast domain, ``domain_bw_bytes_per_s`` a domain link's bandwidth after efficiency, ``torus_dims`` (0 =
#: switched), ``domain_latency_s`` its step latency; ``network_bw_bytes_per_s``, ``network_latency_s`` the
#: network across domains (after efficiency). The framework's defaults (:mod:`.framework`,
#: ``data/training_framework.toml``): the DDP bucket ``max(bucket_min_params, bucket_params_per_dp·dp)``;
#: model-state bytes per parameter (weights, gradients, optimizer states). ``overlap_slowdown`` the measured
#: slowdown of compute while a collective runs beside it (``data/overlap_interference.toml``): hidden
#: communication costs ``overlap_slowdown`` × its time. ``gemm_k0`` a GPU GEMM tile's fixed fill and epilogue as
#: elements of K at the training precision, ``gemm_k_ref`` the K its GEMM efficiency was measured at
#: (:func:`accelbook.costs.gemm.gemm_k_efficiency`; ``data/gemm_k_overhead.toml``), ``gemm_k0_bf16`` and
#: ``gemm_k_ref_bf16`` the same for the bf16 GEMMs (LM head); 0 on a TPU (no such factor) and ``k_ref`` 0 where
#: the measured shape is not known. ``grouped_gemm_fraction`` the share of the measured dense GEMM
#: throughput grouped (MoE expert) GEMMs reach at this precision (``data/grouped_gemm_efficiency.toml``; 1 unmeasured).
CHIP = record_dtype((
    "peak_flop_s", "peak_bf16_flop_s", "eta_gemm", "eta_attention", "hbm_bytes", "hbm_bw_bytes_per_s", "is_tpu",
    "n_sms", "mxu_side", "n_mxu", "bytes_per_element", "domain_chips", "domain_bw_bytes_per_s", "torus_dims",
    "domain_latency_s", "network_bw_bytes_per_s", "network_latency_s", "eta_gemm_bf16", "bucket_min_params",
    "bucket_params_per_dp", "weight_bytes_per_param", "grad_bytes_per_param", "optimizer_bytes_per_param",
    "overlap_slowdown", "elem_bw_bytes_per_s", "gemm_k0", "gemm_k_ref", "gemm_k0_bf16", "gemm_k_ref_bf16",
    "grouped_gemm_fraction",
))

# -- the run's options: how the framework runs what the layout leaves open -------------------------------------
#: ``tp_overlap`` the share of tensor-parallel communication hidden behind GEMMs; ``cp_allgather`` 1 when context
#: parallelism all-gathers K and V before attention (Llama 3: exposed), 0 for ring attention (hidden behind it)
OPTION_FIELDS = ("tp_overlap", "cp_allgather")
OPTIONS = record_dtype(OPTION_FIELDS)
#: context-parallel communication: ring passes hidden behind attention, or one exposed all-gather (``cp_comm``)
CP_COMM = ("ring", "allgather")


def options_record(tp_overlap: float = 0.0, cp_comm: str = "ring") -> np.record:
    """The run-options record (:data:`OPTIONS`); the caller has checked the values."""
    v = new_record(OPTIONS)
    v["tp_overlap"] = tp_overlap
    v["cp_allgather"] = 1.0 if cp_comm == "allgather" else 0.0
    return v


# -- a layout: one row of the search ------------------------------------------------------------------------
#: every field a float64 (the kernels' arithmetic on them is float); ``recompute``, ``grad_sync`` and
#: ``schedule`` hold their index in :data:`RECOMPUTE`, :data:`GRAD_SYNC`, :data:`SCHEDULES`
CONFIG_FIELDS = ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute", "grad_sync", "schedule")
LAYOUT = record_dtype(CONFIG_FIELDS)

# -- the results: the columns of search()'s table, in this order ------------------------------------------------
#: ``t_*_s`` per step, of an average stage (``t_stage_imbalance_s`` what the busiest one adds); ``t_dp_comm_s``
#: the data-parallel time beyond the compute it hides behind, ``t_dp_bucket_s`` the DDP bucket nothing hides
#: (last reduce, first gather), ``t_dp_total_s`` all data-parallel traffic, hidden or not; ``t_permute_s`` MoE
#: tokens sorted to their experts and back through HBM, ``t_imbalance_s`` the busiest expert's extra work,
#: ``t_overlap_s`` compute slowed by the communication hidden behind it; ``fits`` 1.0 or 0.0
RESULT_FIELDS = (
    "step_time_s", "t_gemm_s", "t_attention_s", "t_elementwise_s", "t_recompute_s", "t_lm_head_s",
    "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_comm_s", "t_bubble_s", "t_dp_comm_s", "t_dp_bucket_s",
    "t_optimizer_s", "t_permute_s", "t_imbalance_s", "t_overlap_s", "t_stage_imbalance_s", "mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes",
    "mem_activations_bytes", "mem_logits_bytes", "memory_per_chip_bytes", "fits", "mfu", "hfu",
    "tokens_per_s_per_chip", "n_microbatches", "t_dp_total_s",
)
RESULT = record_dtype(RESULT_FIELDS)


def model_record(m: Model, seq_len: int) -> np.record:
    """The model record (:data:`MODEL`) of ``m`` at ``seq_len`` tokens per sequence."""
    v = new_record(MODEL)
    d, L = m.d_model, m.n_layers
    d_qk, d_v = m.attention_dim
    w_attn = sum(i * o for i, o in m.attention_matrices().values())
    nm = 3 if m.ffn == "swiglu" else 2
    v["n_layers"], v["d_model"], v["n_heads"], v["kv_heads"], v["d_head"] = L, d, m.n_heads, m.kv_heads, m.d_head
    v["d_ff"], v["vocab_size"], v["n_ffn_matrices"] = m.d_ff, m.vocab_size, nm
    v["d_qk"], v["d_v"], v["attn_in_params"] = d_qk, d_v, w_attn - d_v * d      # in-projections' weights
    attn_p = m.attention_params() + 2 * m.norm_params
    if m.moe is not None:
        mo = m.moe
        v["n_experts"], v["top_k"], v["d_ff_expert"], v["n_shared_experts"] = (mo.n_experts, mo.top_k, mo.d_ff_expert,
                                                                               mo.n_shared_experts)
        v["node_limit"] = mo.node_limit
        f = m.n_moe_layers / L
        v["moe_layer_share"] = f
        ffn_e = m.ffn_matrices(mo.d_ff_expert)
        v["layer_params_non_expert"] = (attn_p + (1 - f) * m.dense_ffn_params()
                                        + f * (mo.n_shared_experts * ffn_e + d * mo.n_experts))
        v["layer_params_expert"] = f * mo.n_experts * ffn_e
    else:
        v["n_experts"], v["top_k"] = 1, 1
        v["layer_params_non_expert"] = attn_p + m.dense_ffn_params()
    v["embedding_params"] = m.embedding_params
    v["head_params"] = m.lm_head_params + m.norm_params   # LM head and the final norm (last stage)
    v["flop_per_token_causal"] = m.flops_per_token(seq_len, training=True, causal=True)
    v["flop_per_token_full"] = m.flops_per_token(seq_len, training=True, causal=False)
    v["router_imbalance"] = router_imbalance(m)[0]
    v["attention_share"] = m.attention_share(seq_len, causal=True)
    v["kv_share"] = m.kv_share(seq_len)
    return v


def router_imbalance(m: Model) -> tuple[float, str]:
    """(max/mean expert load, a note) of ``m``'s router: the measurement for its balancing method
    (:func:`accelbook.specs.measured.expert_load_imbalance`); an auxiliary loss where the model does not say;
    1 for a dense model."""
    if m.moe is None:
        return 1.0, ""
    kind = m.moe.balancing or "aux_loss"
    imb, prov = expert_load_imbalance(kind)
    said = "" if m.moe.balancing else " (balancing not published: an auxiliary loss assumed)"
    return imb, (f"{m.name}: busiest expert {imb:.2f}× the mean load with {kind.replace('_', ' ')} balancing"
                 f"{said}, {prov.source.title}; a validation-set figure, so one batch on one device is less even")


def chip_record(chip: Chip, cl: Cluster, precision: str, seq_len: int | None = None,
                head_dim: int = 128) -> tuple[np.record, list[str]]:
    """The chip record (:data:`CHIP`) of ``chip`` in cluster ``cl`` at ``precision``, and notes on
    what was assumed (measured efficiencies borrowed, SM or MXU counts not published). ``eta_attention`` is
    the FlashAttention fraction at ``seq_len`` tokens (:func:`~accelbook.specs.efficiency.attention_efficiency`:
    the chip's table by sequence length, log-linear, clamped at its ends; the single figure if None) and
    query/key head size ``head_dim`` (:func:`attention_head_dim` of the model)."""
    if chip.hbm_bytes is None or chip.hbm_bw_bytes_per_s is None:
        raise ValueError(f"{chip.name} has no HBM; the training model needs HBM capacity and bandwidth")
    v = new_record(CHIP)
    gemm, why_g = measured_efficiency(chip, precision)
    eta_att, why_a = attention_efficiency(chip, seq_len, head_dim=head_dim)
    v["peak_flop_s"] = chip.peak_flop_s(precision)
    v["peak_bf16_flop_s"] = chip.peak_flop_s("bf16")
    v["eta_gemm"], v["eta_attention"] = gemm.fraction, eta_att
    gemm_bf16 = measured_efficiency(chip, "bf16")[0]
    v["eta_gemm_bf16"] = gemm_bf16.fraction
    if chip.kind != "tpu":   # a TPU's fold model charges each fold's fill and drain (costs.gemm)
        v["gemm_k0"], v["gemm_k0_bf16"] = gemm_k_overhead(precision), gemm_k_overhead("bf16")
        v["gemm_k_ref"] = gemm.shape[2] if gemm.shape else 0.0
        v["gemm_k_ref_bf16"] = gemm_bf16.shape[2] if gemm_bf16.shape else 0.0
    v["grouped_gemm_fraction"] = grouped_gemm_fraction(chip, precision).fraction
    hbm = achievable_hbm_fraction(chip)
    v["hbm_bytes"], v["hbm_bw_bytes_per_s"] = chip.hbm_bytes, chip.hbm_bw_bytes_per_s * hbm.fraction
    elem = elementwise_stream_fraction(chip)
    v["elem_bw_bytes_per_s"] = v["hbm_bw_bytes_per_s"] * elem.fraction
    is_tpu, v["n_sms"], v["mxu_side"], v["n_mxu"] = chip_gemm_units(chip)   # the defaults where none is published
    v["is_tpu"] = 1.0 if is_tpu else 0.0
    v["bytes_per_element"] = 1.0 if precision == "fp8" else 2.0
    v["domain_chips"], v["torus_dims"] = cl.domain_chips, cl.torus_dims
    v["domain_bw_bytes_per_s"] = cl.domain_bw_bytes_per_s * cl.domain_efficiency
    v["domain_latency_s"] = cl.domain_latency_s
    v["network_bw_bytes_per_s"] = cl.network_bw_bytes_per_s * cl.network_efficiency
    v["network_latency_s"] = cl.network_latency_s
    fw = framework_defaults()
    v["bucket_min_params"], v["bucket_params_per_dp"] = fw.bucket_min_params, fw.bucket_params_per_dp_rank
    v["weight_bytes_per_param"] = fw.weight_bytes_per_param
    v["grad_bytes_per_param"] = fw.grad_bytes_per_param
    v["optimizer_bytes_per_param"] = fw.optimizer_bytes_per_param
    v["overlap_slowdown"], why_o = overlap_interference(chip)
    notes = [why_g, why_a, hbm_note(chip, hbm), elem.note, why_o]
    if chip.kind != "tpu" and chip.compute_units is None:
        notes.append(f"{chip.name}: SM count not published; {DEFAULT_SMS} assumed for wave quantisation")
    if chip.kind == "tpu" and chip.mxu_count is None:
        notes.append(f"{chip.name}: MXU count not published; {DEFAULT_N_MXU} assumed for wave quantisation")
    return v, notes


def hbm_note(chip: Chip, hbm) -> str:
    """Where the chip's achievable HBM bandwidth comes from, in words."""
    how = (f"measured ({hbm.provenance.source.title})" if hbm.borrowed_from is None and hbm.provenance is not None
           else f"borrowed from {hbm.borrowed_from}" if hbm.borrowed_from else "not measured: the mean of the measured chips")
    return (f"{chip.name}: HBM-bound work streams at {hbm.fraction:.0%} of the {chip.hbm_bw_bytes_per_s / 1e12:.2f} TB/s "
            f"peak, {how}")


def overlap_interference(chip: Chip) -> tuple[float, str]:
    """(slowdown, a note) of compute beside a running collective on ``chip``
    (:func:`accelbook.specs.measured.overlap_slowdown`, the typical case). TPUs: none applied, as no
    measurement exists there (their collectives run on DMA engines, not on the matrix units' cores)."""
    if chip.kind == "tpu":
        return 0.0, (f"{chip.name}: no published measurement of compute slowed by overlapped collectives on TPUs; "
                     "none applied")
    slow, prov = overlap_slowdown(chip)
    return slow, (f"{chip.name}: compute runs {slow:.1%} slower while a collective is hidden behind it "
                  f"({prov.source.title})")


def attention_head_dim(m: Model) -> int:
    """The query/key head size attention kernels see: ``d_qk / H`` (128 for Llama, 192 for MLA's nope + rope)."""
    return int(round(m.attention_dim[0] / m.n_heads))
