"""Slow, plain-Python reference for :mod:`accelbook.training`: one training step, and the layout search.

Written from the docstrings of ``accelbook/training/*`` (compute, communication, pipeline, memory,
kernel, rows, step) and ARCHITECTURE.md, not from the kernels' bodies: every term is a small function
on the public spec objects (:class:`~accelbook.specs.models.Model`, :class:`~accelbook.specs.chips.Chip`,
:class:`~accelbook.specs.clusters.Cluster`) and the public measured-efficiency functions of
:mod:`accelbook.specs`, with plain loops, no Numba and no slot vectors. :func:`reference_step` puts them
together and returns the estimate's numbers by result field; :func:`reference_search` enumerates every
valid layout (:func:`is_valid`, from the documented rules) and evaluates each with it.

The GEMM shape efficiency is ONE function, :func:`eta_shape` (the current training model: 128×128×64
tiles, no split-K, on GPUs; MXU folds on TPUs), so that a change of the GEMM model swaps one function.
"""

from __future__ import annotations

import itertools
import math
import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path

from accelbook import training
from accelbook.network.geometry import torus_axes
from accelbook.specs.chips import MEMORY_RESERVE, Chip, usable_memory_bytes
from accelbook.specs.clusters import Cluster
from accelbook.specs.efficiency import attention_efficiency, measured_efficiency
from accelbook.specs.grouped_gemm import grouped_gemm_fraction
from accelbook.specs.measured import achievable_hbm_fraction, expert_load_imbalance, overlap_slowdown
from accelbook.specs.models import Model
from accelbook.training.framework import framework_defaults

FIELDS = ("tp", "cp", "pp", "vp", "ep", "microbatch", "zero_stage", "recompute", "grad_sync", "schedule")
RECOMPUTE = ("none", "selective", "full")
GRAD_SYNC = ("step", "microbatch")
SCHEDULES = ("1f1b", "zb-h1", "dualpipe")
BF16 = 2.0                                 # bytes of a bf16 activation
GPU_TILE = (128, 128, 64)                  # tiling.py: CUTLASS's 128×128×64 thread-block tile and K slice
DEFAULT_SMS, DEFAULT_MXU, DEFAULT_N_MXU = 132, 128, 4   # where the catalogue is silent (records.py's notes)


# -- the GEMM model --------------------------------------------------------------------------------------
def _gpu_tiling(M, N, K, sms, tm, tn, tk) -> tuple[int, float]:
    """(tiles, η_tile·η_k·η_wave) of ``[M×K]·[K×N]`` in ``tm × tn`` output tiles and ``tk`` K-slices on ``sms`` SMs."""
    rows, cols = math.ceil(M / tm), math.ceil(N / tn)
    tiles = rows * cols
    waves = math.ceil(tiles / sms)
    eta_tile = M * N / (rows * tm * cols * tn)
    eta_k = K / (math.ceil(K / tk) * tk)
    return tiles, eta_tile * eta_k * tiles / (waves * sms)


def eta_shape(M, N, K, chip: Chip) -> float:
    """Shape efficiency of ``[M×K]·[K×N]`` (accelbook/costs/gemm.py's docstring), M, N, K first rounded
    up to whole numbers >= 1. GPU: η_tile·η_k·η_wave in tiles of t_m × 128 × 64, t_m the smallest power
    of two from 16 to 128 that covers M, the better of the plain tiling and split-K into
    s = min(⌊SMs/tiles⌋, ⌊K/64⌋) slices (the tiling of ``[M×⌈K/s⌉]·[⌈K/s⌉×N·s]``) when s >= 2. TPU:
    M·N·K / (L·waves·R²·n_mxu), ⌈K/R⌉·⌈N/R⌉ folds of L = 3R + M - 2 cycles in ⌈folds/n_mxu⌉ waves."""
    M, N, K = (max(1, math.ceil(x)) for x in (M, N, K))
    if chip.kind == "tpu":
        R, n_mxu = chip.mxu_rows or DEFAULT_MXU, chip.mxu_count or DEFAULT_N_MXU
        folds = math.ceil(K / R) * math.ceil(N / R)
        waves = math.ceil(folds / n_mxu)
        return M * N * K / ((3 * R + M - 2) * waves * R * R * n_mxu)
    sms = chip.compute_units or DEFAULT_SMS
    tm = 16
    while tm < M and tm < 128:
        tm *= 2
    tiles, plain = _gpu_tiling(M, N, K, sms, tm, 128, 64)
    s = min(sms // tiles, K // 64)
    if s < 2:
        return plain
    return max(plain, _gpu_tiling(M, N * s, math.ceil(K / s), sms, tm, 128, 64)[1])


def gemm_k0(chip: Chip, precision: str) -> float:
    """A GPU tile's fill and epilogue in elements of K (data/gemm_k_overhead.toml gives fp8; bf16 half of it);
    0 on a TPU."""
    if chip.kind == "tpu":
        return 0.0
    with open(Path(__file__).resolve().parents[1] / "data" / "gemm_k_overhead.toml", "rb") as f:
        k0 = tomllib.load(f)["gpu"]["k_overhead_fp8_count"]["value"]
    return float(k0) if precision == "fp8" else k0 / 2.0


def eta_k(K, k0, k_ref) -> float:
    """min(1, (K/(K+k0)) / (k_ref/(k_ref+k0))), K rounded up (>= 1); 1 if k0 is 0; unnormalised if k_ref is 0."""
    if k0 <= 0:
        return 1.0
    K = max(1, math.ceil(K))
    e = K / (K + k0)
    return min(1.0, e / (k_ref / (k_ref + k0)) if k_ref > 0 else e)


@dataclass(frozen=True)
class Hardware:
    """What the step needs of a chip in a cluster at a precision (SI units)."""

    chip: Chip
    cluster: Cluster
    peak: float          # dense peak at the training precision
    peak_bf16: float     # attention and the LM head run in bf16
    eta: float           # measured large-GEMM fraction at the training precision
    eta_bf16: float
    eta_att: float       # FlashAttention fraction of the bf16 peak at this sequence length and head size
    hbm_bw: float        # achievable HBM bandwidth
    elem_bw: float       # what elementwise kernels reach: hbm_bw x their measured fraction of STREAM
    bpe: float           # bytes per GEMM element: 1 (fp8) or 2
    sigma: float         # compute slowdown beside a running collective (0 on TPUs: none measured)
    w_bytes: float       # model-state bytes per parameter (the framework's: 2, 4, 12)
    g_bytes: float
    o_bytes: float
    bucket_min: float
    bucket_per_dp: float
    k0: float            # a GPU tile's fixed cost in elements of K at the training precision (0: none)
    k_ref: float         # the K the GEMM efficiency was measured at (0: not known)
    k0_bf16: float
    k_ref_bf16: float
    rho_group: float     # routed experts' grouped GEMMs: their measured share of the dense GEMM (1 unmeasured)


def hardware(model: Model, chip: Chip, cluster: Cluster, precision: str, s: int) -> Hardware:
    fw = framework_defaults()
    head_dim = round(model.attention_dim[0] / model.n_heads)
    return Hardware(
        chip, cluster, chip.peak_flop_s(precision), chip.peak_flop_s("bf16"),
        measured_efficiency(chip, precision)[0].fraction, measured_efficiency(chip, "bf16")[0].fraction,
        attention_efficiency(chip, s, head_dim=head_dim)[0],
        chip.hbm_bw_bytes_per_s * achievable_hbm_fraction(chip).fraction,
        chip.hbm_bw_bytes_per_s * achievable_hbm_fraction(chip).fraction * elementwise_fraction(chip),
        1.0 if precision == "fp8" else 2.0,
        0.0 if chip.kind == "tpu" else overlap_slowdown(chip)[0],
        fw.weight_bytes_per_param, fw.grad_bytes_per_param, fw.optimizer_bytes_per_param,
        fw.bucket_min_params, fw.bucket_params_per_dp_rank,
        gemm_k0(chip, precision), _measured_k(chip, precision), gemm_k0(chip, "bf16"), _measured_k(chip, "bf16"),
        grouped_gemm_fraction(chip, precision).fraction)


def _measured_k(chip: Chip, precision: str) -> float:
    shape = measured_efficiency(chip, precision)[0].shape
    return float(shape[2]) if shape else 0.0


def gemm_time(M, N, K, hw: Hardware, grouped: bool = False) -> float:
    """max(2MNK / (P·η_meas·η_shape·η_K), bpe·(MK + KN + MN) / B_hbm); 0 for an empty GEMM; one expert of a
    grouped GEMM (``grouped``) at η_meas·ρ_group and no η_K (ρ_group is measured at the experts' own K)."""
    if M <= 0 or N <= 0 or K <= 0:
        return 0.0
    eta = hw.eta * (hw.rho_group if grouped else eta_k(K, hw.k0, hw.k_ref))
    t_math = 2.0 * M * N * K / (hw.peak * eta * eta_shape(M, N, K, hw.chip))
    t_mem = hw.bpe * (M * K + K * N + M * N) / hw.hbm_bw
    return max(t_math, t_mem)


# -- compute of one layer, one microbatch (forward) ----------------------------------------------------------
def n_mats(model: Model) -> int:
    return 3 if model.ffn == "swiglu" else 2


def moe_share(model: Model) -> float:
    return model.n_moe_layers / model.n_layers


def layer_gemms(model: Model, hw: Hardware, T, tp, ep):
    """(forward GEMM time of one layer, the local routed experts' share of it): the in-projections as one
    GEMM (K = d), the out-projection (K = d_v/tp), the dense FFN on the share 1-f of layers, and on the
    share f the local experts, the shared experts and the router."""
    d, nm, f = model.d_model, n_mats(model), moe_share(model)
    d_v = model.attention_dim[1]
    w_in = sum(i * o for name, (i, o) in model.attention_matrices().items() if name != "o")
    t = gemm_time(T, w_in / d / tp, d, hw) + gemm_time(T, d, d_v / tp, hw)
    if f < 1:
        t += (1 - f) * (gemm_time(T, (nm - 1) * model.d_ff / tp, d, hw) + gemm_time(T, d, model.d_ff / tp, hw))
    t_routed = 0.0
    if f > 0:
        mo = model.moe
        tokens_per_expert = T * mo.top_k * ep / mo.n_experts
        one_expert = gemm_time(tokens_per_expert, (nm - 1) * mo.d_ff_expert / tp, d, hw, grouped=True) \
            + gemm_time(tokens_per_expert, d, mo.d_ff_expert / tp, hw, grouped=True)
        local = 0.0
        for _ in range(int(mo.n_experts // ep)):     # the experts this chip holds
            local += one_expert
        t_routed = f * local
        shared = 0.0
        if mo.n_shared_experts:
            width = mo.d_ff_expert * mo.n_shared_experts / tp
            shared = gemm_time(T, (nm - 1) * width, d, hw) + gemm_time(T, d, width, hw)
        t += f * (local + shared + gemm_time(T, mo.n_experts, d, hw))
    return t, t_routed


def attention_times(model: Model, hw: Hardware, T, s, tp, cp, mb, flash):
    """(FLOP time, score traffic) of one layer's attention forward: 2·T·s·(d_qk + d_v)/tp·½·share causal
    FLOPs at the bf16 peak, at the FlashAttention fraction, or unfused at the (bf16) GEMM fraction with
    3·2·mb·(h/tp)·(s/cp)·s bytes of scores. The score GEMMs run in bf16 whatever the training precision
    (the bf16 peak), so at the bf16 GEMM fraction, as the LM head does; the kernel takes the training
    precision's fraction (tests/test_training_reference.py, the xfail on unfused fp8)."""
    d_qk, d_v = model.attention_dim
    flop = 2.0 * T * s * (d_qk + d_v) / tp * 0.5 * model.attention_share(s, causal=True)
    if flash:
        return flop / (hw.peak_bf16 * hw.eta_att), 0.0
    return flop / (hw.peak_bf16 * hw.eta_bf16), 3 * 2.0 * mb * model.n_heads / tp * (s / cp) * s / hw.hbm_bw


def ffn_width(model: Model) -> float:
    """The FFN width a token passes through on average: (1-f)·d_ff + f·(top_k + shared)·d_ff_expert."""
    f = moe_share(model)
    if model.moe is None:
        return model.d_ff
    return (1 - f) * model.d_ff + f * (model.moe.top_k + model.moe.n_shared_experts) * model.moe.d_ff_expert


def kv_heads_per_chip(model: Model, tp) -> float:
    return max(model.kv_heads / tp, 1.0)


def elementwise_fraction(chip: Chip) -> float:
    """Median over data/elementwise_bandwidth.toml's rows on ``chip`` (every row when it has none) of
    bytes_per_element·tokens·hidden / time over the chip's BabelStream figure in data/hbm_bandwidth.toml,
    read here from the files themselves."""
    data = Path(__file__).resolve().parents[1] / "data"
    stream = tomllib.loads((data / "hbm_bandwidth.toml").read_text())
    rows = list(tomllib.loads((data / "elementwise_bandwidth.toml").read_text()).values())
    own = [r for r in rows if r["chip"] == chip.id.split("+")[0].rstrip("*")] or rows
    return statistics.median(r["bytes_per_element"] * r["tokens"] * r["hidden"] / (r["time_ms"]["value"] * 1e-3)
                             / (stream[r["chip"]]["hbm_achievable_tb_s"]["value"] * 1e12) for r in own)


def elementwise_time(model: Model, hw: Hardware, T, tp, sp, fp8):
    """HBM-bound elementwise work of one layer: 2 norms (2·2·d) and 2 residual adds (2·3·d) over sp,
    RoPE on q and k, the FFN activation (2·n_mats·d_ff_eff/tp), and in FP8 the casts of every GEMM input."""
    d, dh = model.d_model, model.d_head
    dff = ffn_width(model)
    per_token = 2 * (2 * 2 * d) / sp + 2 * (3 * d) * 2 / sp \
        + 2 * 2 * (model.n_heads / tp + kv_heads_per_chip(model, tp)) * dh + 2 * n_mats(model) * dff / tp
    if fp8:
        per_token += 3 * (d + model.attention_dim[1] / tp + d + dff / tp)
    return T * per_token / hw.elem_bw


def selective_recompute_time(model: Model, hw: Hardware, T, tp, sp):
    """Selective recomputation's HBM traffic: the forward's two norms again (2·2·2·d/sp a token, as
    :func:`elementwise_time` counts them) and the FFN activation again (2·n_mats·d_ff_eff/tp a token, the
    same); unfused attention adds its scores (:func:`reference_step`)."""
    return T * (8 * model.d_model / sp + n_mats(model) * 2 * ffn_width(model) / tp) / hw.elem_bw


def lm_head_time(model: Model, hw: Hardware, T, tp):
    """LM head and loss, forward and backward: 3 bf16 GEMMs of 2·T·(V/tp)·d FLOPs and 3 passes over the
    fp32 logits (4·T·V/tp bytes each)."""
    V, d = model.vocab_size, model.d_model
    gemm = 2 * T * V / tp * d / (hw.peak_bf16 * hw.eta_bf16 * eta_shape(T, V / tp, d, hw.chip)
                                 * eta_k(d, hw.k0_bf16, hw.k_ref_bf16))
    return 3 * gemm + 3 * 4 * T * V / tp / hw.hbm_bw


def permute_time(model: Model, hw: Hardware, T):
    """MoE permute and unpermute (forward): f·2·2·T·d·(1 + top_k) bytes at the elementwise kernels' bandwidth;
    0 for a dense model."""
    if model.moe is None or model.moe.n_experts <= 1 or moe_share(model) <= 0:
        return 0.0
    return moe_share(model) * 2 * 2 * T * model.d_model * (1 + model.moe.top_k) / hw.elem_bw


def router_imbalance(model: Model) -> float:
    if model.moe is None:
        return 1.0
    return expert_load_imbalance(model.moe.balancing or "aux_loss")[0]


# -- collectives in the two-level cluster ------------------------------------------------------------------
def ring_time(passes, S, p, alpha, bw):
    """passes·(p-1)·α + passes·(p-1)/p·S / B; 0 for p <= 1 (network/collectives.py)."""
    if p <= 1:
        return 0.0
    return passes * (p - 1) * alpha + passes * (p - 1) / p * S / bw


def domain_split(g, stride, cl: Cluster):
    """(g_in, g_out): min(g, ⌊domain/stride⌋) members a domain (at least 1), ⌈g/g_in⌉ domains."""
    g_in = max(1, min(g, math.floor(cl.domain_chips / stride)))
    return g_in, math.ceil(g / g_in)


def net_bw(cl: Cluster) -> float:
    return cl.network_bw_bytes_per_s * cl.network_efficiency


def domain_bw(cl: Cluster, g) -> float:
    """A ring's bandwidth over ``g`` chips of one domain (accelbook.costs.hierarchical's docstring): a switched
    domain gives each chip its link into the switch; a torus, 2 links per axis the group spans
    (:func:`accelbook.network.geometry.torus_axes`); times the domain's efficiency."""
    links = 1 if cl.torus_dims == 0 else 2 * torus_axes(g, cl.domain_chips, cl.torus_dims)
    return links * cl.domain_bw_bytes_per_s * cl.domain_efficiency


def ring_collective(passes, S, g, stride, cl: Cluster):
    """A ring of S over g ranks at this stride. In one domain: its ring. Across switched domains (NCCL): one
    ring through all g ranks per rail, every step at the network's step latency, each rail's 1/g_in of the
    data crossing NVLink (g_in-1 of every g_in hops) and one NIC at once, the slower binding. Across torus
    domains: inside each domain, then S/g_in across the domains."""
    if g <= 1 or S <= 0:
        return 0.0
    g_in, g_out = domain_split(g, stride, cl)
    if g_out > 1 and cl.torus_dims == 0:
        seconds_per_byte = max((g_in - 1) / g_in / domain_bw(cl, g_in), 1 / (g_in * net_bw(cl)))
        return passes * (g - 1) * cl.network_latency_s + passes * (g - 1) / g * S * seconds_per_byte
    return ring_time(passes, S, g_in, cl.domain_latency_s, domain_bw(cl, g_in)) \
        + ring_time(passes, S / g_in, g_out, cl.network_latency_s, net_bw(cl))


def all_gather(S, g, stride, cl):       # S: the full buffer
    return ring_collective(1, S, g, stride, cl)


def reduce_scatter(S, g, stride, cl):   # one ring pass over the full buffer, as an all-gather
    return ring_collective(1, S, g, stride, cl)


def all_to_all(S, g, stride, cl: Cluster):
    """S bytes a rank sends: the domain peers' share at the domain ring bandwidth, the rest on the network,
    whichever is longer, plus (g_in - 1) domain and (g_out - 1) network step latencies."""
    if g <= 1 or S <= 0:
        return 0.0
    g_in, g_out = domain_split(g, stride, cl)
    t = max(S * (g_in - 1) / g / domain_bw(cl, g_in), S * (g - g_in) / g / net_bw(cl))
    return t + (g_in - 1) * cl.domain_latency_s + (g_out - 1) * cl.network_latency_s


def send(S, stride, cl: Cluster):
    """One point-to-point send to the rank ``stride`` away: on the network when that leaves the domain,
    else at the domain bandwidth of a 2-rank ring."""
    if S <= 0:
        return 0.0
    if stride >= cl.domain_chips:
        return S / net_bw(cl) + cl.network_latency_s
    return S / domain_bw(cl, 2) + cl.domain_latency_s


# -- communication of one layer, one microbatch ------------------------------------------------------------
def tp_comm(model, cl, T, tp, rec, overlap):
    """(exposed, hidden): 8 all-gathers/reduce-scatters of 2·T·d (12 with full recomputation)."""
    if tp <= 1:
        return 0.0, 0.0
    raw = (12 if rec == "full" else 8) * all_gather(BF16 * T * model.d_model, tp, 1, cl)
    return (1 - overlap) * raw, overlap * raw


def cp_comm(model, cl, T, s, tp, cp, t_att, rec, mode):
    """(exposed, hidden) context-parallel time: one pass all-gathers every rank's K and V over cp ranks at
    stride tp; ring: 3 passes less 3.5·t_att of attention behind them; all-gather: 2 passes (3 full), exposed."""
    if cp <= 1:
        return 0.0, 0.0
    mine = T * 2 * kv_heads_per_chip(model, tp) * model.d_head * BF16 * model.kv_share(s)
    t_pass = all_gather(mine * cp, cp, tp, cl)
    if mode == "allgather":
        return (3 if rec == "full" else 2) * t_pass, 0.0
    return max(0.0, 3 * t_pass - 3.5 * t_att), min(3 * t_pass, 3.5 * t_att)


def ep_comm(model, cl, T, tp, cp, ep):
    """f·4 all-to-alls of the routed tokens (T·top_k·d·2/tp bytes) over ep at stride tp·cp; with node-limited
    routing across domains, the network carries T·min(top_k, M, g_out)·d·2/tp·(g_out-1)/g_out (no token reaches
    more domains than the group spans) and the domain S·(g_in-1)/g_in (each copy forwarded to its chip)."""
    if model.moe is None or ep <= 1 or moe_share(model) <= 0:
        return 0.0
    mo, f = model.moe, moe_share(model)
    S = T * mo.top_k * model.d_model * BF16 / tp
    g_in, g_out = domain_split(ep, tp * cp, cl)
    if mo.node_limit <= 0 or g_out <= 1:
        return f * 4 * all_to_all(S, ep, tp * cp, cl)
    t_in = S * (g_in - 1) / g_in / domain_bw(cl, g_in)   # every copy forwarded inside its destination domain
    t_out = T * min(mo.top_k, mo.node_limit, g_out) * model.d_model * BF16 / tp * (g_out - 1) / g_out / net_bw(cl)
    return f * 4 * (max(t_in, t_out) + (g_in - 1) * cl.domain_latency_s + (g_out - 1) * cl.network_latency_s)


def pp_sends(model, cl, T, tp, cp, dp, pp, vp, sp):
    """2·vp sends of 2·T·d/sp bytes a microbatch to the next stage (stride tp·cp·dp)."""
    if pp <= 1:
        return 0.0
    return 2 * vp * send(BF16 * T * model.d_model / sp, tp * cp * dp, cl)


# -- parameters, data parallelism, the optimizer ---------------------------------------------------------
def layer_params(model: Model):
    """(non-expert, expert) parameters of the mean layer: attention and its 2 norms, the dense FFN on the
    share 1-f, and on f the shared experts and the router (non-expert) and the routed experts (expert)."""
    f = moe_share(model)
    ne = model.attention_params() + 2 * model.norm_params + (1 - f) * model.dense_ffn_params()
    if model.moe is None:
        return ne, 0.0
    mo = model.moe
    ffn_e = model.ffn_matrices(mo.d_ff_expert)
    return ne + f * (mo.n_shared_experts * ffn_e + model.d_model * mo.n_experts), f * mo.n_experts * ffn_e


def stage_layers(L, pp):
    full = math.ceil(L / pp)
    return full, max(0, L - (pp - 1) * full)


def held_params(model: Model, tp, pp, ep, sched):
    """(non-expert, expert) parameters on a chip of the busiest stage: the first stage's layers and the
    embedding, or the last's and the LM head with the final norm, whichever is more; DualPipe twice that."""
    L = model.n_layers
    Lst, L_last = stage_layers(L, pp)
    ne, e = layer_params(model)
    head = model.lm_head_params + model.norm_params
    if pp == 1:
        p_ne = (L * ne + model.embedding_params + head) / tp
    else:
        p_ne = max((Lst * ne + model.embedding_params) / tp, (L_last * ne + head) / tp)
    p_e = Lst * e / (tp * ep)
    copies = 2 if sched == "dualpipe" else 1
    return copies * p_ne, copies * p_e


def bucket(p, g, hw: Hardware):
    """Megatron's DDP bucket: min(p, max(40M, 1M·g)) parameters; none without data parallelism."""
    return 0.0 if g <= 1 else min(p, max(hw.bucket_min, hw.bucket_per_dp * g))


def dp_passes(hw, cl, p_ne, p_e, tp, cp, dp, ep, zero, layers=1):
    """(t_rs, t_ag, t_bk_rs, t_bk_ag): gradient reduce-scatter (fp32) and weight all-gather (bf16; ZeRO-0's
    all-reduce: gradient bytes both ways) over the dp·cp ranks sharing non-expert weights (stride tp) plus
    the dp·cp/ep sharing experts (stride tp·cp·ep); then the same over one bucket of each. ZeRO-3's two full
    passes are one collective per layer the chip holds (``layers``), each over that layer's share."""
    g_ne, g_e = dp * cp, dp * cp / ep
    w = hw.g_bytes if zero == 0 else hw.w_bytes
    n = layers if zero == 3 else 1
    out = []
    for p_n, p_x, nbytes, k in ((p_ne, p_e, hw.g_bytes, n), (p_ne, p_e, w, n),
                                (bucket(p_ne, g_ne, hw), bucket(p_e, g_e, hw), hw.g_bytes, 1),
                                (bucket(p_ne, g_ne, hw), bucket(p_e, g_e, hw), w, 1)):
        out.append(k * (ring_collective(1, nbytes * p_n / k, g_ne, tp, cl)
                        + ring_collective(1, nbytes * p_x / k, g_e, tp * cp * ep, cl)))
    return tuple(out)


def dp_exposed(passes, zero, gsync, m, t_layers, t_fwd_mb, t_bwd_mb):
    """(exposed beyond compute, the never-hidden last bucket, all traffic) of a step's data parallelism."""
    t_rs, t_ag, bk_rs, bk_ag = passes
    t_bk = bk_rs + bk_ag
    if zero == 3:
        return m * max(0.0, t_rs + 2 * t_ag - t_bk / m - t_layers), t_bk, m * (t_rs + 2 * t_ag)
    n_rs = m if gsync == "microbatch" else 1
    exposed = (n_rs - 1) * max(0.0, t_rs - t_bwd_mb) + max(0.0, t_rs - bk_rs - t_bwd_mb) \
        + max(0.0, t_ag - bk_ag - t_fwd_mb)
    return exposed, t_bk, n_rs * t_rs + t_ag


def optimizer_params(p_ne, p_e, g_ne, g_e, zero):
    return (p_ne / g_ne + p_e / g_e) if zero >= 1 else p_ne + p_e


# -- the pipeline ------------------------------------------------------------------------------------------
def bubble(pp, vp, t_mb, t_b, t_w, sched):
    """1F1B (pp-1)/vp·t_mb; ZB-H1 (pp-1)·(t_mb - 2W); DualPipe (pp/2-1)·(t_mb + B - 3W), never below 0."""
    if sched == "zb-h1":
        return (pp - 1) * max(0.0, t_mb - 2 * t_w)
    if sched == "dualpipe":
        return max(0.0, pp / 2 - 1) * max(0.0, t_mb + t_b - 3 * t_w)
    return (pp - 1) / vp * t_mb


def in_flight(m, pp, vp, sched):
    if pp == 1:
        return 1.0
    n = min(m, pp + 1) if sched == "dualpipe" else min(m, pp)
    return n * (1 + (pp - 1) / (pp * vp)) if vp > 1 else float(n)


# -- memory -----------------------------------------------------------------------------------------------
def activation_bytes_per_token(model: Model, s, tp, sp, rec, flash):
    """Bytes one layer keeps per token for the backward (Korthikanti et al. 2022 without dropout): norm
    inputs 2·2d/sp; norm outputs 2·2d/sp unless selective; q, k, v 2·(h/tp + 2·kv_loc)·d_h; attention
    output 2·d_v/tp; the FFN's up-projection outputs 2·(n_mats-1)·d_ff/tp and its activation output
    2·d_ff/tp unless selective, on the dense share; on the MoE share the top_k routed copies (2d each)
    with their experts' FFN tensors, and the shared experts' FFN tensors; unfused without recomputation
    the softmax output 2·(h/tp)·s."""
    d, dh, f = model.d_model, model.d_head, moe_share(model)
    keep = 0 if rec == "selective" else 1
    ffn = 2 * (n_mats(model) - 1) + 2 * keep      # bytes per unit of FFN width a token stores
    a = 2 * BF16 * d / sp + keep * 2 * BF16 * d / sp
    a += BF16 * (model.n_heads / tp + 2 * kv_heads_per_chip(model, tp)) * dh + BF16 * model.attention_dim[1] / tp
    a += (1 - f) * ffn * model.d_ff / tp
    if model.moe is not None:
        mo = model.moe
        a += f * (mo.top_k * (BF16 * d + ffn * mo.d_ff_expert / tp) + mo.n_shared_experts * ffn * mo.d_ff_expert / tp)
    if not flash and rec == "none":
        a += BF16 * model.n_heads * s / tp
    return a


def memory(model, hw, T, s, lay, m, flash, sp):
    """{field: bytes} of the busiest chip: model states (ZeRO), first-stage activations, last-stage logits."""
    tp, cp, pp, vp, dp, ep = (lay[k] for k in ("tp", "cp", "pp", "vp", "dp", "ep"))
    zero, rec, gsync, sched = lay["zero_stage"], lay["recompute"], lay["grad_sync"], lay["schedule"]
    p_ne, p_e = held_params(model, tp, pp, ep, sched)
    g_ne, g_e = dp * cp, dp * cp / ep
    w = hw.w_bytes * ((p_ne / g_ne + p_e / g_e) if zero == 3 else p_ne + p_e)
    shard = zero >= 2 and gsync == "microbatch"
    g = hw.g_bytes * ((p_ne / g_ne + p_e / g_e) if shard else p_ne + p_e)
    o = hw.o_bytes * optimizer_params(p_ne, p_e, g_ne, g_e, zero)
    Lst = stage_layers(model.n_layers, pp)[0]
    a_tok = activation_bytes_per_token(model, s, tp, sp, rec, flash)
    held = in_flight(m, pp, vp, sched)
    if rec == "full":   # each layer's input for every microbatch in flight, plus one layer's full set
        a = T * Lst * (BF16 * model.d_model / sp) * held + T * a_tok
    else:
        a = T * Lst * a_tok * held
    logits = 4 * T * model.vocab_size / tp
    if pp > 1:
        total = max(w + g + o + a, w + g + o + logits + a / max(1.0, held))
    else:
        total = w + g + o + a + logits
    return {"mem_weights_bytes": w, "mem_grads_bytes": g, "mem_optimizer_bytes": o, "mem_activations_bytes": a,
            "mem_logits_bytes": logits, "memory_per_chip_bytes": total}


# -- the step ----------------------------------------------------------------------------------------------
def layer_compute(model, hw, T, s, lay, flash, sp, fp8):
    """One layer, one microbatch: {t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd, t_rec, t_routed}; backward = 2×
    forward for GEMMs, score traffic and elementwise work, 2.5× for attention FLOPs."""
    tp, cp, ep, mb, rec = lay["tp"], lay["cp"], lay["ep"], lay["microbatch"], lay["recompute"]
    t_g, t_routed = layer_gemms(model, hw, T, tp, ep)
    t_a, t_a_mem = attention_times(model, hw, T, s, tp, cp, mb, flash)
    t_e = elementwise_time(model, hw, T, tp, sp, fp8)
    t_fwd = t_g + t_a + t_a_mem + t_e
    t_bwd = 2 * t_g + 2.5 * t_a + 2 * t_a_mem + 2 * t_e
    t_rec = 0.0
    if rec == "full":
        t_rec = t_fwd
    elif rec == "selective":
        t_rec = selective_recompute_time(model, hw, T, tp, sp) + (0.0 if flash else t_a + t_a_mem)
    return dict(t_g=t_g, t_a=t_a, t_a_mem=t_a_mem, t_e=t_e, t_fwd=t_fwd, t_bwd=t_bwd, t_rec=t_rec, t_routed=t_routed)


def reference_step(model: Model, chip: Chip, cluster: Cluster, B: int, s: int, layout: dict, precision="bf16",
                   flash=True, seqpar=True, reserve=MEMORY_RESERVE, tp_overlap=0.0, cp_mode="ring",
                   hw: Hardware | None = None) -> dict:
    """{result field: value} of one valid layout (``layout``: tp, cp, pp, vp, dp, ep, microbatch, zero_stage,
    and recompute, grad_sync, schedule by name), as :func:`accelbook.training.estimate` reports them: the
    per-step terms of an average stage, the stage imbalance, memory, MFU (full attention, bf16 peak) and HFU.
    ``hw``: :func:`hardware` of these arguments, when the caller has it already.

        t_layer = t_fwd + t_bwd + t_rec + t_tp + t_cp + t_ep + t_perm + t_imb + σ·(h_tp + h_cp + h_ep)
        step    = m·t_mb + bubble + t_dp + t_bk + t_opt + σ·(DP traffic hidden)
    """
    lay = dict(layout)
    tp, cp, pp, vp, dp, ep, mb = (lay[k] for k in ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch"))
    zero, rec, gsync, sched = lay["zero_stage"], lay["recompute"], lay["grad_sync"], lay["schedule"]
    hw = hardware(model, chip, cluster, precision, s) if hw is None else hw
    cl, L = cluster, model.n_layers
    T, sp, m = mb * s / cp, (tp if seqpar else 1), B // (dp * mb)
    Lst, L_last = stage_layers(L, pp)
    c = layer_compute(model, hw, T, s, lay, flash, sp, precision == "fp8")
    t_head = lm_head_time(model, hw, T, tp)
    # communication of a layer; MoE permutation (forward, backward, a recomputed forward) and imbalance
    t_tp, h_tp = tp_comm(model, cl, T, tp, rec, tp_overlap)
    t_cp, h_cp = cp_comm(model, cl, T, s, tp, cp, c["t_a"], rec, cp_mode)
    t_ep = ep_comm(model, cl, T, tp, cp, ep)
    n_fwd = 3 if rec == "full" else 2
    t_perm = n_fwd * permute_time(model, hw, T)
    t_imb = (n_fwd + 1) * ((router_imbalance(model) - 1) * c["t_routed"] if ep > 1 else 0.0)
    h_ep = 0.0
    t_pp = pp_sends(model, cl, T, tp, cp, dp, pp, vp, sp)
    t_ovl_pp = 0.0
    if sched == "dualpipe":   # the other direction's compute hides the all-to-all and the sends
        h_ep = min(t_ep, c["t_fwd"] + c["t_bwd"] + c["t_rec"])
        t_ep -= h_ep
        t_ovl_pp, t_pp = hw.sigma * t_pp, 0.0
    t_ovl_layer = hw.sigma * (h_tp + h_cp + h_ep)
    t_layer = c["t_fwd"] + c["t_bwd"] + c["t_rec"] + t_tp + t_cp + t_ep + t_perm + t_imb + t_ovl_layer
    # the busiest stage, the bubble
    if pp == 1:
        t_mb = L * t_layer + t_head
    else:
        t_mb = max(Lst * t_layer, L_last * t_layer + t_head) + t_pp + t_ovl_pp
    t_w = Lst * c["t_g"]                                            # weight-gradient GEMMs = forward GEMMs
    t_b = Lst * (c["t_bwd"] - c["t_g"] + c["t_rec"])                 # the rest of the backward
    t_bubble = bubble(pp, vp, t_mb, t_b, t_w, sched)
    # data parallelism behind the busiest stage's compute, and Adam
    p_ne, p_e = held_params(model, tp, pp, ep, sched)
    passes = dp_passes(hw, cl, p_ne, p_e, tp, cp, dp, ep, zero, (2 if sched == "dualpipe" else 1) * Lst)
    t_dp, t_bk, t_dp_all = dp_exposed(passes, zero, gsync, m, Lst * t_layer, Lst * (c["t_fwd"] + t_tp / 2),
                                      Lst * (c["t_bwd"] + c["t_rec"] + t_tp / 2))
    t_ovl_dp = hw.sigma * max(0.0, t_dp_all - t_dp - t_bk)
    opt_bytes = 2 * hw.o_bytes + hw.g_bytes + hw.w_bytes          # read and write master + moments, read grad, write weight
    t_opt = opt_bytes * optimizer_params(p_ne, p_e, dp * cp, dp * cp / ep, zero) / hw.hbm_bw
    step = m * t_mb + t_bubble + t_dp + t_bk + t_opt + t_ovl_dp
    passes_per_step = m * L / pp                                      # layer passes of an average stage
    n, tokens = tp * cp * pp * dp, B * s
    out = {"step_time_s": step, "t_gemm_s": passes_per_step * 3 * c["t_g"],
           "t_attention_s": passes_per_step * (3.5 * c["t_a"] + 3 * c["t_a_mem"]),
           "t_elementwise_s": passes_per_step * 3 * c["t_e"], "t_recompute_s": passes_per_step * c["t_rec"],
           "t_lm_head_s": m * t_head / pp, "t_tp_comm_s": passes_per_step * t_tp,
           "t_cp_comm_s": passes_per_step * t_cp, "t_ep_comm_s": passes_per_step * t_ep, "t_pp_comm_s": m * t_pp,
           "t_bubble_s": t_bubble, "t_dp_comm_s": t_dp, "t_dp_bucket_s": t_bk, "t_optimizer_s": t_opt,
           "t_permute_s": passes_per_step * t_perm, "t_imbalance_s": passes_per_step * t_imb,
           "t_overlap_s": passes_per_step * t_ovl_layer + t_ovl_dp + m * t_ovl_pp,
           "t_stage_imbalance_s": m * max(0.0, t_mb - t_pp - t_ovl_pp - (L / pp) * t_layer - t_head / pp),
           "t_dp_total_s": t_dp_all, "n_microbatches": m}
    out.update(memory(model, hw, T, s, lay, m, flash, sp))
    out["fits"] = out["memory_per_chip_bytes"] <= usable_memory_bytes(chip.hbm_bytes, reserve)
    out["tokens_per_s_per_chip"] = tokens / step / n
    flop = model.flops_per_token(s, training=True, causal=False)      # full attention, over the bf16 peak
    out["mfu"] = out["tokens_per_s_per_chip"] * flop / hw.peak_bf16
    out["hfu"] = out["mfu"] * (4 / 3 if rec == "full" else 1.0)
    return out


# -- the layout search -------------------------------------------------------------------------------------
def is_valid(tp, cp, pp, vp, ep, mb, zero, gsync, sched=0, *, n, B, s, layers, heads, experts, dps):
    """The documented validity rules of a layout; returns (valid, dp)."""
    if tp * cp * pp == 0 or n % (tp * cp * pp) != 0:      # tp·cp·pp·dp = n with a whole dp
        return False, None
    dp = n // (tp * cp * pp)
    if dp not in dps:                                     # dp among its candidates (pinned or every divisor)
        return False, dp
    # ZeRO-0/1 reduce gradients once a step, ZeRO-3 every microbatch, ZeRO-2 either
    if (zero < 2 and gsync != 0) or (zero == 3 and gsync != 1):
        return False, dp
    if heads % tp != 0:                                   # tp | heads
        return False, dp
    if cp > 1 and s % (2 * cp) != 0:                      # load-balanced context parallelism
        return False, dp
    if pp > layers:                                       # no empty stage
        return False, dp
    if dp % ep != 0 or experts % ep != 0:                 # ep | dp and ep | experts
        return False, dp
    if B % (dp * mb) != 0:                                # dp·mb | B
        return False, dp
    m = B // (dp * mb)
    if vp > 1:                                            # interleaving needs pp > 1, m % pp, pp·vp ≤ L
        if pp == 1 or m % pp != 0 or pp * vp > layers:
            return False, dp
    if sched != 0 and (pp == 1 or vp != 1):               # ZB-H1 and DualPipe: a pipeline, no interleaving
        return False, dp
    if sched == 2 and (pp % 2 != 0 or m % 2 != 0):        # DualPipe: even pp and microbatches (both ends)
        return False, dp
    return True, dp


def reference_search(model, chip, cluster, n, B, s, precision="bf16", flash=True, seqpar=True,
                     reserve=MEMORY_RESERVE, tp_overlap=0.0, cp_comm="ring", **fixed):
    """{(tp, cp, pp, vp, dp, ep, microbatch, zero_stage, recompute, grad_sync, schedule): result dict} over
    every valid layout, each evaluated by :func:`reference_step`, in the search's order: the fitting
    layouts first, fastest first (by the reference's step time), then the rest."""
    space = training.search_space(model, n, **fixed)
    experts = model.moe.n_experts if model.moe is not None else 1
    dps = {int(d) for d in space["dp"]}
    hw = hardware(model, chip, cluster, precision, s)
    rules = dict(n=n, B=B, s=s, layers=model.n_layers, heads=model.n_heads, experts=experts, dps=dps)
    values = {k: [int(x) for x in space[k]] for k in FIELDS}
    out = {}
    for tp, cp, pp, vp, ep, mb in itertools.product(*(values[k] for k in FIELDS[:6])):
        # ZeRO-0, a step's sync and 1F1B add no rule: a layout invalid with them is invalid with any
        if not is_valid(tp, cp, pp, vp, ep, mb, 0, 0, 0, **rules)[0]:
            continue
        for zero, rec, gsync, sched in itertools.product(*(values[k] for k in FIELDS[6:])):
            ok, dp = is_valid(tp, cp, pp, vp, ep, mb, zero, gsync, sched, **rules)
            if not ok:
                continue
            lay = dict(tp=tp, cp=cp, pp=pp, vp=vp, dp=dp, ep=ep, microbatch=mb, zero_stage=zero,
                       recompute=RECOMPUTE[rec], grad_sync=GRAD_SYNC[gsync], schedule=SCHEDULES[sched])
            key = tuple(lay[k] for k in training.CONFIG_FIELDS)
            assert key not in out
            out[key] = reference_step(model, chip, cluster, B, s, lay, precision, flash, seqpar, reserve, tp_overlap,
                                      cp_comm, hw=hw)
    return dict(sorted(out.items(), key=lambda kv: (not kv[1]["fits"], kv[1]["step_time_s"])))
