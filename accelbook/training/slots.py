"""The kernels' vectors and their named slots: the model, the chip, a layout, the results.

The Numba kernels take plain float arrays, so every quantity has a slot, and every slot a name:

- the **model vector** ``mv`` (``M_*``), built once per model and sequence length by
  :func:`model_vector`;
- the **chip vector** ``c`` (``C_*``), the chip in its cluster at one precision, built by
  :func:`chip_vector`;
- a **layout row** of the search (``CFG_*``, in the order of :data:`CONFIG_FIELDS`);
- the **result vector** (``R_*``, in the order of :data:`RESULT_FIELDS`), which the kernel fills
  and :func:`accelbook.training.step.to_estimate` and the search's table read back.

Kernels read and write these only through the names (``out[R_MFU] = ...``), never by position, so
a new slot added to a tuple moves no one else's number. Units are SI; a slot named ``..._s`` holds
seconds, ``..._bytes`` bytes.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from accelbook.costs.gemm import DEFAULT_N_MXU, DEFAULT_SMS, chip_gemm_units
from accelbook.specs.chips import Chip
from accelbook.specs.clusters import Cluster
from accelbook.specs.efficiency import attention_efficiency, measured_efficiency
from accelbook.specs.measured import achievable_hbm_fraction, expert_load_imbalance, overlap_slowdown
from accelbook.specs.models import Model

from .framework import framework_defaults

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

# -- the model vector ---------------------------------------------------------------------------------------
# M_L layers; M_D d_model; M_H query heads; M_KV K/V heads; M_DH head dim; M_DFF dense FFN width;
# M_V vocabulary; M_NM FFN matrices (3 SwiGLU, 2 GELU); M_E experts (1 if dense); M_TOPK experts per
# token; M_DFFE expert FFN width; M_NSH shared experts; M_FMOE share of MoE layers; M_DQK, M_DV the
# widths of the query/key and value projections (all heads); M_WIN weights of the attention's
# in-projections; M_PLAYER_NE, M_PLAYER_E non-expert and expert parameters per layer; M_PEMB embedding
# parameters; M_PHEAD LM head + final norm; M_FLOP_CAUSAL, M_FLOP_FULL training FLOPs per token
# (causal or full attention, ``Model.flops_per_token``); M_IMB the router's measured load imbalance, the
# busiest expert's load over the mean (1 for a dense model; ``data/moe_balance.toml``); M_NODES the most
# nodes (fast domains) one token's routed experts may span, 0 for no limit (DeepSeek-V3: 4); M_ATT the causal
# attention's share of its full-attention FLOPs under a sliding or chunked window (``Model.attention_share``; 1.0 without);
# M_KVS the share of K/V token-layers a windowed model keeps at the sequence length (``Model.kv_share``; 1.0
# without): a local layer's context-parallel exchange moves only its window's K and V.
(M_L, M_D, M_H, M_KV, M_DH, M_DFF, M_V, M_NM, M_E, M_TOPK, M_DFFE, M_NSH, M_FMOE, M_DQK, M_DV,
 M_WIN, M_PLAYER_NE, M_PLAYER_E, M_PEMB, M_PHEAD, M_FLOP_CAUSAL, M_FLOP_FULL, M_IMB, M_NODES, M_ATT, M_KVS,
 M_NVEC) = range(27)

# -- the chip vector ----------------------------------------------------------------------------------------
# C_PEAK dense peak at the training precision, C_PEAK_ATT bf16 peak (attention, LM head) in FLOP/s;
# C_ETA, C_ETA_ATT, C_ETA_BF16 measured GEMM, attention and bf16 GEMM efficiency; C_HBM capacity
# (bytes) and C_HBMBW the ACHIEVABLE bandwidth (bytes/s: the peak × a STREAM-like measurement's
# fraction, ``data/hbm_bandwidth.toml``), which every HBM-bound term streams at; C_TPU 1 for a TPU; C_SMS SMs; C_MXU MXU side; C_NMXU MXUs;
# C_BPE bytes per GEMM element (1 fp8, 2 bf16); C_DOM chips per fast domain; C_DOMBW a domain link's
# bandwidth after efficiency; C_TORUS torus dimensions (0 = switched); C_DOMLAT domain step latency (s);
# C_NETBW, C_NETLAT the network across domains (bytes/s after efficiency, s). The framework's defaults
# (:mod:`.framework`, ``data/training_framework.toml``): C_BKT_MIN, C_BKT_PER_DP the DDP bucket,
# ``max(C_BKT_MIN, C_BKT_PER_DP·dp)`` parameters; C_W_BYTES, C_G_BYTES, C_O_BYTES model-state bytes per
# parameter (weights, gradients, optimizer states). C_OVL the measured slowdown of compute while a
# collective runs beside it (``data/overlap_interference.toml``): hidden communication costs C_OVL × its time.
(C_PEAK, C_PEAK_ATT, C_ETA, C_ETA_ATT, C_HBM, C_HBMBW, C_TPU, C_SMS, C_MXU, C_NMXU, C_BPE,
 C_DOM, C_DOMBW, C_TORUS, C_DOMLAT, C_NETBW, C_NETLAT, C_ETA_BF16, C_BKT_MIN, C_BKT_PER_DP,
 C_W_BYTES, C_G_BYTES, C_O_BYTES, C_OVL, C_NVEC) = range(25)

# -- the run's options: how the framework runs what the layout leaves open -------------------------------------
# O_TP_OVERLAP the share of tensor-parallel communication hidden behind GEMMs; O_CP_ALLGATHER 1 when context
# parallelism all-gathers K and V before attention (Llama 3: exposed), 0 for ring attention (hidden behind it).
OPTION_FIELDS = ("tp_overlap", "cp_allgather")
O_TP_OVERLAP, O_CP_ALLGATHER = range(len(OPTION_FIELDS))
#: context-parallel communication: ring passes hidden behind attention, or one exposed all-gather (``cp_comm``)
CP_COMM = ("ring", "allgather")


def options_vector(tp_overlap: float = 0.0, cp_comm: str = "ring") -> np.ndarray:
    """The run-options vector (``O_*`` slots); the caller has checked the values."""
    v = np.zeros(len(OPTION_FIELDS))
    v[O_TP_OVERLAP] = tp_overlap
    v[O_CP_ALLGATHER] = 1.0 if cp_comm == "allgather" else 0.0
    return v


# -- a layout: one row of the search ------------------------------------------------------------------------
CONFIG_FIELDS = ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute", "grad_sync", "schedule")
CFG = MappingProxyType({name: i for i, name in enumerate(CONFIG_FIELDS)})
CFG_TP, CFG_CP, CFG_PP, CFG_VP = CFG["tp"], CFG["cp"], CFG["pp"], CFG["vp"]
CFG_DP, CFG_EP, CFG_MB = CFG["dp"], CFG["ep"], CFG["microbatch"]
CFG_ZERO, CFG_REC = CFG["zero_stage"], CFG["recompute"]   # recompute as its index in RECOMPUTE
CFG_GSYNC = CFG["grad_sync"]                                # grad_sync as its index in GRAD_SYNC
CFG_SCHED = CFG["schedule"]                                 # schedule as its index in SCHEDULES

# -- the results: the columns of search()'s table, in this order ------------------------------------------------
RESULT_FIELDS = (
    "step_time_s", "t_gemm_s", "t_attention_s", "t_elementwise_s", "t_recompute_s", "t_lm_head_s",
    "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_comm_s", "t_bubble_s", "t_dp_comm_s", "t_dp_bucket_s",
    "t_optimizer_s", "t_permute_s", "t_imbalance_s", "t_overlap_s", "t_stage_imbalance_s", "mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes",
    "mem_activations_bytes", "mem_logits_bytes", "memory_per_chip_bytes", "fits", "mfu", "hfu",
    "tokens_per_s_per_chip", "n_microbatches", "t_dp_total_s",
)
R = MappingProxyType({name: i for i, name in enumerate(RESULT_FIELDS)})
N_RESULTS = len(RESULT_FIELDS)
# one constant per field, "R_" + its name: what the kernels index with
R_STEP_TIME_S = R["step_time_s"]
R_T_GEMM_S = R["t_gemm_s"]                      # per step, busiest stage (as every t_*_s below)
R_T_ATTENTION_S = R["t_attention_s"]
R_T_ELEMENTWISE_S = R["t_elementwise_s"]
R_T_RECOMPUTE_S = R["t_recompute_s"]
R_T_LM_HEAD_S = R["t_lm_head_s"]
R_T_TP_COMM_S = R["t_tp_comm_s"]
R_T_CP_COMM_S = R["t_cp_comm_s"]
R_T_EP_COMM_S = R["t_ep_comm_s"]
R_T_PP_COMM_S = R["t_pp_comm_s"]
R_T_BUBBLE_S = R["t_bubble_s"]
R_T_DP_COMM_S = R["t_dp_comm_s"]                # data-parallel time beyond the compute it hides behind
R_T_DP_BUCKET_S = R["t_dp_bucket_s"]            # the DDP bucket that nothing hides (last reduce, first gather)
R_T_OPTIMIZER_S = R["t_optimizer_s"]
R_T_PERMUTE_S = R["t_permute_s"]                # MoE tokens sorted to their experts and back, through HBM
R_T_IMBALANCE_S = R["t_imbalance_s"]            # the busiest expert's extra work (the pace of expert parallelism)
R_T_OVERLAP_S = R["t_overlap_s"]                # compute slowed by the communication hidden behind it
R_T_STAGE_IMBALANCE_S = R["t_stage_imbalance_s"]  # the busiest pipeline stage beyond the average one
R_MEM_WEIGHTS_BYTES = R["mem_weights_bytes"]
R_MEM_GRADS_BYTES = R["mem_grads_bytes"]
R_MEM_OPTIMIZER_BYTES = R["mem_optimizer_bytes"]
R_MEM_ACTIVATIONS_BYTES = R["mem_activations_bytes"]
R_MEM_LOGITS_BYTES = R["mem_logits_bytes"]
R_MEMORY_PER_CHIP_BYTES = R["memory_per_chip_bytes"]
R_FITS = R["fits"]                              # 1.0 or 0.0
R_MFU = R["mfu"]
R_HFU = R["hfu"]
R_TOKENS_PER_S_PER_CHIP = R["tokens_per_s_per_chip"]
R_N_MICROBATCHES = R["n_microbatches"]
R_T_DP_TOTAL_S = R["t_dp_total_s"]              # all data-parallel traffic, hidden or not


def model_vector(m: Model, seq_len: int) -> np.ndarray:
    """The model vector (``M_*`` slots) of ``m`` at ``seq_len`` tokens per sequence."""
    v = np.zeros(M_NVEC)
    d, L = m.d_model, m.n_layers
    d_qk, d_v = m.attention_dim
    w_attn = sum(i * o for i, o in m.attention_matrices().values())
    nm = 3 if m.ffn == "swiglu" else 2
    v[M_L], v[M_D], v[M_H], v[M_KV], v[M_DH] = L, d, m.n_heads, m.kv_heads, m.d_head
    v[M_DFF], v[M_V], v[M_NM] = m.d_ff, m.vocab_size, nm
    v[M_DQK], v[M_DV], v[M_WIN] = d_qk, d_v, w_attn - d_v * d      # in-projections' weights
    attn_p = m.attention_params() + 2 * m.norm_params
    if m.moe is not None:
        mo = m.moe
        v[M_E], v[M_TOPK], v[M_DFFE], v[M_NSH] = mo.n_experts, mo.top_k, mo.d_ff_expert, mo.n_shared_experts
        v[M_NODES] = mo.node_limit
        f = m.n_moe_layers / L
        v[M_FMOE] = f
        ffn_e = m.ffn_matrices(mo.d_ff_expert)
        v[M_PLAYER_NE] = attn_p + (1 - f) * m.dense_ffn_params() + f * (mo.n_shared_experts * ffn_e + d * mo.n_experts)
        v[M_PLAYER_E] = f * mo.n_experts * ffn_e
    else:
        v[M_E], v[M_TOPK] = 1, 1
        v[M_PLAYER_NE] = attn_p + m.dense_ffn_params()
    v[M_PEMB] = m.embedding_params
    v[M_PHEAD] = m.lm_head_params + m.norm_params   # LM head and the final norm (last stage)
    v[M_FLOP_CAUSAL] = m.flops_per_token(seq_len, training=True, causal=True)
    v[M_FLOP_FULL] = m.flops_per_token(seq_len, training=True, causal=False)
    v[M_IMB] = router_imbalance(m)[0]
    v[M_ATT] = m.attention_share(seq_len, causal=True)
    v[M_KVS] = m.kv_share(seq_len)
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


def chip_vector(chip: Chip, cl: Cluster, precision: str, seq_len: int | None = None,
                head_dim: int = 128) -> tuple[np.ndarray, list[str]]:
    """The chip vector (``C_*`` slots) of ``chip`` in cluster ``cl`` at ``precision``, and notes on
    what was assumed (measured efficiencies borrowed, SM or MXU counts not published). ``C_ETA_ATT`` is
    the FlashAttention fraction at ``seq_len`` tokens (:func:`~accelbook.specs.efficiency.attention_efficiency`:
    the chip's table by sequence length, log-linear, clamped at its ends; the single figure if None) and
    query/key head size ``head_dim`` (:func:`attention_head_dim` of the model)."""
    if chip.hbm_bytes is None or chip.hbm_bw_bytes_per_s is None:
        raise ValueError(f"{chip.name} has no HBM; the training model needs HBM capacity and bandwidth")
    v = np.zeros(C_NVEC)
    gemm, why_g = measured_efficiency(chip, precision)
    eta_att, why_a = attention_efficiency(chip, seq_len, head_dim=head_dim)
    v[C_PEAK] = chip.peak_flop_s(precision)
    v[C_PEAK_ATT] = chip.peak_flop_s("bf16")
    v[C_ETA], v[C_ETA_ATT] = gemm.fraction, eta_att
    v[C_ETA_BF16] = measured_efficiency(chip, "bf16")[0].fraction
    hbm = achievable_hbm_fraction(chip)
    v[C_HBM], v[C_HBMBW] = chip.hbm_bytes, chip.hbm_bw_bytes_per_s * hbm.fraction
    is_tpu, v[C_SMS], v[C_MXU], v[C_NMXU] = chip_gemm_units(chip)   # the defaults where none is published
    v[C_TPU] = 1.0 if is_tpu else 0.0
    v[C_BPE] = 1.0 if precision == "fp8" else 2.0
    v[C_DOM], v[C_DOMBW], v[C_TORUS] = cl.domain_chips, cl.domain_bw_bytes_per_s * cl.domain_efficiency, cl.torus_dims
    v[C_DOMLAT] = cl.domain_latency_s
    v[C_NETBW], v[C_NETLAT] = cl.network_bw_bytes_per_s * cl.network_efficiency, cl.network_latency_s
    fw = framework_defaults()
    v[C_BKT_MIN], v[C_BKT_PER_DP] = fw.bucket_min_params, fw.bucket_params_per_dp_rank
    v[C_W_BYTES], v[C_G_BYTES], v[C_O_BYTES] = fw.weight_bytes_per_param, fw.grad_bytes_per_param, fw.optimizer_bytes_per_param
    v[C_OVL], why_o = overlap_interference(chip)
    notes = [why_g, why_a, hbm_note(chip, hbm), why_o]
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
