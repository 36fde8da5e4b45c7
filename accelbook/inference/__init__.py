"""Inference: prefill and decode on any catalogue chip, KV cache, TTFT, TPOT, tokens/s/user, tokens/kW, cost.

One model replica runs on ``tp × pp`` chips (tensor parallel inside a stage, ``pp`` pipeline
stages); ``n_chips / (tp·pp)`` replicas serve in parallel. ``batch_size`` is the number of
sequences one replica decodes together.

**Decode step** (one token for every sequence of the batch). The batch is split into ``pp``
microbatches so that every stage stays busy; a stage's time for a microbatch of ``b = B/pp``
sequences at mean context ``c`` (prompt + half the output) is a roofline per kind of operation,

    t_stage = max(W/(η_mem·B_mem), b·2N_active/(η_gemm·P))              the matmuls
            + max(b·c·KV/(η_mem·B_mem), b·2L·c·(d_qk+d_v)/(η_att·P_bf16))  attention over the cache
            + two ring all-reduces of b·d activations per layer over tp chips

per chip (weights ``W`` and FLOPs divided by ``tp·pp``; for MoE only the experts the microbatch
touches are read). The two kinds of kernel run one after the other, so their times add. A token crosses all
``pp`` stages: **TPOT** = ``pp·t_stage + (pp-1)·hop``, tokens/s/user = 1/TPOT, and a replica
makes ``B / TPOT`` tokens/s. ``B_mem`` is HBM, or SRAM on chips whose weights live on-chip
(Groq LPU, Cerebras WSE); ``η_mem`` is the share of the memory bandwidth that decode reaches.

**Prefill** of one prompt of ``s`` tokens: ``s·(2·N_active + L·s·(d_qk + d_v))`` FLOPs (causal)
at the measured GEMM efficiency, or the weights' read time if that is longer, across the ``pp``
stages one after another, plus its all-reduces: **TTFT** at an idle server (queueing is the
serving simulator's job, :mod:`accelbook.serving`).

**Throughput** of a replica serving a batch from prompt to last token (static batching, as the
TensorRT-LLM tables were measured): ``B·output_len / (t_prefill(B prompts) + output_len·TPOT)``,
with the B prompts streamed through the stages, ``(B + pp - 1)·max(t_prompt, t_weights/B)``.

**Power** per chip (an ESTIMATE: no per-chip power curve is published for most chips):
``P = P_idle + (TDP - P_idle)·activity`` with ``P_idle = 0.3·TDP`` and activity the busy share of
the binding unit (1 when compute-bound; 0.7 per unit of memory-bound time, as moving bytes draws
less than the matrix units). tokens/kW = tokens/s / (P·chips/1000); USD per million tokens from
the catalogue's price per chip-hour.

Memory per chip: the stage's weights + its share of the KV cache must fit in ``(1 - reserve)`` of
the chip's memory (10% reserve on HBM for activations and the runtime; none on SRAM chips, whose
compilers place everything statically).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.models import Model, bytes_per_element, get_model

WEIGHT_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4")
MEM_EFFICIENCY = 0.85          # share of memory bandwidth decode reaches (ESTIMATE; Azure measured 92% on GB200 HBM)
HBM_RESERVE = 0.10
IDLE_POWER_SHARE = 0.30        # ESTIMATE
MEMORY_BOUND_POWER = 0.70      # ESTIMATE
DEFAULT_HOP_S = 2e-6           # chip-to-chip hop when the catalogue has no latency (estimate-link-latency)
DEFAULT_LINK_BYTES_S = 100e9   # ... and no link bandwidth (ESTIMATE)


def _whole(name, v, lo=1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    return int(v)


def _peak(chip: Chip, precision: str) -> float:
    """Dense peak at the weights' precision, falling back to the nearest the vendor published."""
    order = {"fp4": ("fp4", "fp8", "int8", "bf16", "fp16"), "fp8": ("fp8", "int8", "bf16", "fp16"),
             "int8": ("int8", "fp8", "bf16", "fp16"), "bf16": ("bf16", "fp16"), "fp16": ("fp16", "bf16")}[precision]
    for p in order:
        if p in chip.peak_dense_flop_s:
            return chip.peak_dense_flop_s[p]
    if chip.peak_sparse_flop_s:
        return max(chip.peak_sparse_flop_s.values()) / 2   # no dense figure: half the sparse one
    raise ValueError(f"{chip.name} publishes no peak for {precision}")


_GEMM_EFF: dict = {}


def _gemm_eff(chip: Chip, precision: str) -> tuple[float, str]:
    # the answer depends on the chip's catalogue lineage and name only (not on what-if peaks): cached,
    # as sweeps ask it for every layout and batch
    from accelbook.specs.chips import base_id

    key = (base_id(chip), chip.name, precision)
    if key not in _GEMM_EFF:
        try:
            m, why = measured_efficiency(chip, "fp8" if precision in ("fp8", "int8", "fp4") else "bf16")
            _GEMM_EFF[key] = (m.fraction, why)
        except ValueError:
            _GEMM_EFF[key] = (0.7, f"{chip.name}: no GEMM measurement for it or a sibling; 70% of peak ASSUMED")
    return _GEMM_EFF[key]


@dataclass(frozen=True)
class InferenceEstimate:
    model: str
    chip: str
    n_chips: int
    config: dict
    ttft_s: float
    tpot_s: float
    tokens_per_s: float              # output tokens/s, all replicas
    tokens_per_s_per_user: float
    tokens_per_s_per_chip: float
    kv_cache_bytes: float            # per replica, the whole batch at full context
    max_batch_size: int              # per replica
    fits: bool
    memory_per_chip_bytes: float
    memory_capacity_bytes: float
    power_w_per_chip: float | None
    tokens_per_s_per_kw: float | None
    usd_per_million_tokens: float | None
    decode_bound: str
    prefill_bound: str
    breakdown: dict = field(repr=False, default_factory=dict)
    assumptions: tuple[str, ...] = field(repr=False, default=())

    def why_not_fit(self) -> str:
        if self.fits:
            return ""
        return (f"does not fit: {self.memory_per_chip_bytes / 1e9:.1f} GB per chip needed, "
                f"{self.memory_capacity_bytes / 1e9:.1f} GB usable; at most batch {self.max_batch_size} "
                "per replica fits" if self.max_batch_size > 0 else
                f"does not fit: the weights alone need {self.breakdown['weights_per_chip_bytes'] / 1e9:.2f} GB per "
                f"chip of {self.memory_capacity_bytes / 1e9:.2f} GB usable; use more chips")


def _allreduce_s(nbytes: float, p: int, bw: float, hop: float) -> float:
    if p <= 1:
        return 0.0
    return 2 * (p - 1) * hop + 2 * (p - 1) / p * nbytes / bw


def estimate(model: Model | str, chip: Chip | str, n_chips: int, batch_size: int, input_len: int, output_len: int,
             precision: str = "bf16", tp: int | None = None, pp: int = 1, kv_precision: str | None = None,
             mem_efficiency: float = MEM_EFFICIENCY, hop_latency_s: float | None = None,
             price_usd_per_hour: float | None = None,
             weight_streaming_bytes_per_s: float | None = None) -> InferenceEstimate:
    """TTFT, TPOT, tokens/s (total, per user, per chip), KV cache, the largest batch that fits,
    power, tokens/kW and USD per million output tokens for one layout (module docstring).

    ``weight_streaming_bytes_per_s``: for models too large for the chips' memory (Cerebras's weight
    streaming from MemoryX), the weights stay off-chip and stream in at this bandwidth every step;
    the chip's memory then holds only the KV cache. No published figure: a what-if."""
    model = model if isinstance(model, Model) else get_model(model)
    chip = chip if isinstance(chip, Chip) else get_chip(chip)
    n = _whole("n_chips", n_chips)
    B = _whole("batch_size", batch_size)
    s_in, s_out = _whole("input_len", input_len), _whole("output_len", output_len)
    if precision not in WEIGHT_PRECISIONS:
        raise ValueError(f"precision must be one of {WEIGHT_PRECISIONS}, got {precision!r}")
    kv_precision = kv_precision or ("fp8" if precision in ("fp8", "fp4", "int8") else "bf16")
    if kv_precision not in WEIGHT_PRECISIONS:
        raise ValueError(f"kv_precision must be one of {WEIGHT_PRECISIONS}, got {kv_precision!r}")
    for name, v in (("hop_latency_s", hop_latency_s), ("price_usd_per_hour", price_usd_per_hour)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0):
            raise ValueError(f"{name} must be a number >= 0, got {v!r}")
    pp = _whole("pp", pp)
    if tp is None:
        tp = n // pp
    tp = _whole("tp", tp)
    if n % (tp * pp):
        raise ValueError(f"n_chips = {n} is not a whole number of replicas of tp·pp = {tp}·{pp} = {tp * pp} chips")
    if pp > model.n_layers:
        raise ValueError(f"pp = {pp} exceeds the {model.n_layers} layers of {model.name}")
    if isinstance(mem_efficiency, bool) or not (isinstance(mem_efficiency, numbers.Real) and 0 < mem_efficiency <= 1):
        raise ValueError(f"mem_efficiency must be a fraction in (0, 1], got {mem_efficiency!r}")
    replicas = n // (tp * pp)
    mem_bw, mem_cap = chip.memory_bw_bytes_per_s, chip.memory_bytes
    if mem_bw is None or mem_cap is None:
        raise ValueError(f"{chip.name} publishes no memory capacity or bandwidth")
    sram = chip.hbm_bytes is None
    usable = mem_cap * (1.0 if sram else 1.0 - HBM_RESERVE)
    peak = _peak(chip, precision)
    eta, why_eta = _gemm_eff(chip, precision)
    try:
        eta_att = measured_efficiency(chip, "attention")[0].fraction
    except ValueError:
        eta_att = 0.75 * eta
    try:      # attention runs in 16-bit; a chip that publishes only 8-bit peaks is taken at that rate
        peak_att = _peak(chip, "bf16" if precision != "fp16" else "fp16")
    except ValueError:
        peak_att = peak
    hop = hop_latency_s if hop_latency_s is not None else (chip.link_latency_s or DEFAULT_HOP_S)
    link = (chip.link_bw_bytes_per_s / (2 if chip.link_bw_direction == "bidirectional" else 1)
            if chip.link_bw_bytes_per_s else DEFAULT_LINK_BYTES_S)
    bpe, kvb = bytes_per_element(precision), model.kv_cache_bytes_per_token(kv_precision)
    L, d = model.n_layers, model.d_model
    d_qk, d_v = model.attention_dim
    kv_split = min(tp, model.kv_heads) if model.mla is None else 1   # K/V heads shared out, replicated beyond
    # -- memory
    w_chip = model.params * bpe / (tp * pp)
    streaming = weight_streaming_bytes_per_s is not None
    if streaming:
        if isinstance(weight_streaming_bytes_per_s, bool) or not (
                isinstance(weight_streaming_bytes_per_s, numbers.Real) and weight_streaming_bytes_per_s > 0):
            raise ValueError(f"weight_streaming_bytes_per_s must be > 0, got {weight_streaming_bytes_per_s!r}")
    resident = 0.0 if streaming else w_chip        # weights that occupy the chip's memory
    kv_tok_chip = kvb / (kv_split * pp)
    ctx_full = s_in + s_out
    mem_chip = resident + B * ctx_full * kv_tok_chip
    max_batch = max(0, int((usable - resident) // (ctx_full * kv_tok_chip)))
    w_bw = weight_streaming_bytes_per_s if streaming else mem_efficiency * mem_bw
    # -- decode
    b = max(B / pp, 1.0)                                # a microbatch per stage (at least one sequence)
    c = s_in + s_out / 2
    n_act = model.matmul_params_active
    w_read = model.params * bpe
    if model.moe is not None:                            # experts a microbatch touches, expected
        mo = model.moe
        touched = 1 - (1 - mo.top_k / mo.n_experts) ** max(b, 1.0)
        expert_bytes = model.n_moe_layers * mo.n_experts * model.ffn_matrices(mo.d_ff_expert) * bpe
        w_read = model.params * bpe - expert_bytes * (1 - touched)
    # the matmuls (weights) and attention (KV cache) are different kernels: each is bound by its own
    # roofline, and their times add (a roofline per operation, as in notebook 01)
    gemm_mem = w_read / (tp * pp) / w_bw
    gemm_cmp = b * 2 * n_act / (tp * pp) / (eta * peak)
    attn_mem = b * c * kv_tok_chip / (mem_efficiency * mem_bw)
    attn_cmp = b * 2 * L * c * (d_qk + d_v) / (tp * pp) / (eta_att * peak_att)
    t_mem = gemm_mem + attn_mem
    t_cmp = gemm_cmp + attn_cmp
    t_comm = (L / pp) * 2 * _allreduce_s(b * d * 2, tp, link, hop)
    t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm
    tpot = pp * t_stage + (pp - 1) * (hop + b * d * 2 / link)
    # -- prefill (one prompt, idle server)
    per_tok = 2 * n_act / (tp * pp) / (eta * peak)                 # one token's matmuls
    pf_tok = per_tok + L * s_in * (d_qk + d_v) / (tp * pp) / (eta_att * peak_att)   # ... plus causal attention
    pf_cmp = s_in * pf_tok
    pf_mem = (model.params * bpe / (tp * pp)) / w_bw
    pf_comm = (L / pp) * 2 * _allreduce_s(s_in * d * 2, tp, link, hop)
    ttft = pp * (max(pf_cmp, pf_mem) + pf_comm) + (pp - 1) * (hop + s_in * d * 2 / link)
    # -- throughput (static batching: prefill the batch, then decode it)
    # B prompts stream through the pp stages: (B + pp - 1) stage-slots, weights read once per batch
    pf_batch = (B + pp - 1) * max(pf_cmp, pf_mem / B) + B * pf_comm
    replica_tps = B * s_out / (pf_batch + s_out * tpot)
    tps = replicas * replica_tps
    # -- power and cost
    bound = "memory" if t_mem >= t_cmp else "compute"
    power = None
    if chip.tdp_w is not None:
        activity = (t_cmp / t_stage) if bound == "compute" else MEMORY_BOUND_POWER * (t_mem / t_stage)
        power = chip.tdp_w * (IDLE_POWER_SHARE + (1 - IDLE_POWER_SHARE) * min(1.0, activity))
    tpk = None if power is None else tps / (power * n / 1000)
    price = price_usd_per_hour if price_usd_per_hour is not None else chip.price_usd_per_hour
    usd = None if price is None else price * n / 3600 / tps * 1e6
    assumptions = (
        why_eta,
        f"decode reaches {mem_efficiency:.0%} of the memory bandwidth (ESTIMATE)",
        ("weights streamed in at " + f"{weight_streaming_bytes_per_s / 1e9:,.0f} GB/s per chip (what-if)" if streaming
         else "weights resident in the chip's memory"),
        f"chip-to-chip hop {hop * 1e6:.1f} µs, link {link / 1e9:.0f} GB/s per direction"
        + ("" if chip.link_latency_s and chip.link_bw_bytes_per_s else " (ESTIMATE: not in the catalogue)"),
        "power: 30% of TDP idle, up to TDP when compute-bound, 70% of the dynamic range when memory-bound (ESTIMATE)",
        "throughput: static batching (prefill the batch, then decode it); TTFT at an idle server",
    )
    return InferenceEstimate(
        model=model.name, chip=chip.name, n_chips=n,
        config=dict(tp=tp, pp=pp, replicas=replicas, batch_size=B, input_len=s_in, output_len=s_out,
                    precision=precision, kv_precision=kv_precision),
        ttft_s=ttft, tpot_s=tpot, tokens_per_s=tps, tokens_per_s_per_user=1 / tpot, tokens_per_s_per_chip=tps / n,
        kv_cache_bytes=B * ctx_full * kvb, max_batch_size=max_batch, fits=mem_chip <= usable,
        memory_per_chip_bytes=mem_chip, memory_capacity_bytes=usable, power_w_per_chip=power,
        tokens_per_s_per_kw=tpk, usd_per_million_tokens=usd, decode_bound=bound,
        prefill_bound="compute" if pf_cmp >= pf_mem else "memory",
        breakdown=dict(decode_memory_s=t_mem, decode_compute_s=t_cmp, decode_comm_s=t_comm, stage_s=t_stage,
                       decode_gemm_s=max(gemm_mem, gemm_cmp), decode_attention_s=max(attn_mem, attn_cmp),
                       prefill_compute_s=pf_cmp, prefill_memory_s=pf_mem, prefill_comm_s=pf_comm,
                       weights_per_chip_bytes=w_chip, kv_per_chip_bytes=B * ctx_full * kv_tok_chip,
                       kv_token_per_chip_bytes=kv_tok_chip, decode_per_seq_s=per_tok,
                       decode_per_ctx_token_s=kv_tok_chip / (mem_efficiency * mem_bw), prefill_per_token_s=pf_tok),
        assumptions=assumptions,
    )


def min_chips(model: Model | str, chip: Chip | str, precision: str = "bf16") -> int:
    """Fewest chips whose memory holds the weights (no KV cache): how many LPUs a 70B model needs."""
    model = model if isinstance(model, Model) else get_model(model)
    chip = chip if isinstance(chip, Chip) else get_chip(chip)
    if precision not in WEIGHT_PRECISIONS:
        raise ValueError(f"precision must be one of {WEIGHT_PRECISIONS}, got {precision!r}")
    if chip.memory_bytes is None:
        raise ValueError(f"chip {chip.name} publishes no memory capacity")
    cap = chip.memory_bytes * (1.0 if chip.hbm_bytes is None else 1 - HBM_RESERVE)
    return math.ceil(model.params * bytes_per_element(precision) / cap)


def _layouts(n: int, n_layers: int, max_tp: int = 64):
    for pp in [p for p in range(1, n + 1) if n % p == 0 and p <= n_layers]:
        for tp in [t for t in range(1, min(max_tp, n // pp) + 1) if (n // pp) % t == 0]:
            yield tp, pp


def sweep(model, chip, n_chips: int, input_len: int, output_len: int, precision: str = "bf16",
          batches=None, max_tp: int = 64, **kw) -> pd.DataFrame:
    """Every (tp, pp, batch) that fits on ``n_chips``: one row each, for the frontier and the search."""
    model = model if isinstance(model, Model) else get_model(model)
    chip = chip if isinstance(chip, Chip) else get_chip(chip)
    rows = []
    for tp, pp in _layouts(_whole("n_chips", n_chips), model.n_layers, max_tp):
        first = estimate(model, chip, n_chips, 1, input_len, output_len, precision, tp=tp, pp=pp, **kw)
        if first.max_batch_size < 1:
            continue
        bs = batches if batches is not None else sorted({2**k for k in range(0, 13)} | {first.max_batch_size})
        for B in bs:
            if B > first.max_batch_size or B < 1:
                continue
            e = estimate(model, chip, n_chips, int(B), input_len, output_len, precision, tp=tp, pp=pp, **kw)
            rows.append({"chip": chip.name, "tp": tp, "pp": pp, "replicas": e.config["replicas"], "batch": int(B),
                         "ttft_s": e.ttft_s, "tpot_s": e.tpot_s, "tokens_per_s_per_user": e.tokens_per_s_per_user,
                         "tokens_per_s_per_chip": e.tokens_per_s_per_chip, "tokens_per_s": e.tokens_per_s,
                         "tokens_per_s_per_kw": e.tokens_per_s_per_kw, "usd_per_million_tokens": e.usd_per_million_tokens,
                         "decode_bound": e.decode_bound})
    return pd.DataFrame(rows)


def max_throughput(model, chip, n_chips: int, input_len: int, output_len: int, precision: str = "bf16",
                   tpot_target_s: float | None = None, ttft_target_s: float | None = None, **kw) -> InferenceEstimate:
    """The layout and batch with the most tokens/s per chip that fit (and meet the targets, if given)."""
    df = sweep(model, chip, n_chips, input_len, output_len, precision, **kw)
    if df.empty:
        m = model if isinstance(model, Model) else get_model(model)
        raise ValueError(f"{m.name} does not fit on {n_chips} × {get_chip(chip).name if isinstance(chip, str) else chip.name} "
                         f"at {precision}: at least {min_chips(m, chip, precision)} chips hold the weights")
    ok = df
    if tpot_target_s is not None:
        ok = ok[ok["tpot_s"] <= tpot_target_s]
    if ttft_target_s is not None:
        ok = ok[ok["ttft_s"] <= ttft_target_s]
    if ok.empty:
        raise ValueError(f"no layout meets the targets (TPOT ≤ {tpot_target_s}, TTFT ≤ {ttft_target_s}); the fastest "
                         f"TPOT that fits is {df['tpot_s'].min() * 1e3:.1f} ms")
    r = ok.loc[ok["tokens_per_s_per_chip"].idxmax()]
    return estimate(model, chip, n_chips, int(r.batch), input_len, output_len, precision, tp=int(r.tp), pp=int(r.pp), **kw)


def pareto(df: pd.DataFrame, x: str = "tokens_per_s_per_user", y: str = "tokens_per_s_per_chip") -> pd.DataFrame:
    """The points no other point beats on both ``x`` and ``y`` (higher is better), sorted by ``x``."""
    d = df.sort_values([x, y], ascending=[False, False])
    best = -np.inf
    keep = []
    for i, v in zip(d.index, d[y]):
        if v > best:
            keep.append(i)
            best = v
    return df.loc[keep].sort_values(x)


def frontier(model, chips: dict, input_len: int, output_len: int, precision: str = "bf16", **kw) -> pd.DataFrame:
    """Throughput against interactivity: for each ``{label: (chip, n_chips)}``, the Pareto front of
    tokens/s per chip against tokens/s per user over every layout and batch that fits."""
    frames = []
    for label, (chip, n) in chips.items():
        df = sweep(model, chip, n, input_len, output_len, precision, **kw)
        if df.empty:
            continue
        frames.append(pareto(df).assign(system=label))
    if not frames:
        raise ValueError("the model fits on none of these systems")
    return pd.concat(frames, ignore_index=True)


# -- validation against published results ---------------------------------------------------------------
_RUN_KEYS = {"name", "model", "chip", "n_chips", "batch", "input_len", "output_len", "precision", "metric", "reported",
             "role"}
METRICS = ("tokens_per_s_per_chip", "ttft_ms", "tokens_per_s_per_user")


def published_results(path=None) -> dict:
    from accelbook.specs.loader import DATA_DIR, CatalogueError, check_keys, load_sources, parse_quantity, read_table_file

    path = path or DATA_DIR / "inference_runs.toml"
    sources = load_sources()
    out = {}
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required=_RUN_KEYS, optional={"tp", "pp"})
        if e["metric"] not in METRICS or e["role"] not in ("target", "context"):
            raise CatalogueError(path, rid, "metric", f"metric in {METRICS}, role 'target' or 'context'")
        q = parse_quantity(path, rid, "reported", e["reported"], "count", sources)
        out[rid] = dict(e, reported_value=q.value, reported_provenance=q.provenance)
    return out


def validation_table(path=None) -> pd.DataFrame:
    """Predicted against reported for every published result, from its stated configuration."""
    rows = []
    for rid, e in published_results(path).items():
        try:
            est = estimate(e["model"], e["chip"], e["n_chips"], e["batch"], e["input_len"], e["output_len"],
                           e["precision"], tp=e.get("tp"), pp=e.get("pp", 1))
        except ValueError as err:
            rows.append({"id": rid, "result": e["name"], "role": e["role"], "note": f"not evaluated: {err}"})
            continue
        pred = {"tokens_per_s_per_chip": est.tokens_per_s_per_chip, "ttft_ms": est.ttft_s * 1e3,
                "tokens_per_s_per_user": est.tokens_per_s_per_user}[e["metric"]]
        rep = e["reported_value"]
        rows.append({"id": rid, "result": e["name"], "role": e["role"], "metric": e["metric"], "reported": rep,
                     "predicted": pred, "error": pred / rep - 1, "decode_bound": est.decode_bound, "fits": est.fits,
                     "source": e["reported_provenance"].source.title, "note": est.why_not_fit()})
    return pd.DataFrame(rows)


# -- speculative decoding -------------------------------------------------------------------------------
def expected_accepted(acceptance: float, gamma: int) -> float:
    """Tokens produced per verification step with ``gamma`` draft tokens, each accepted with
    probability ``acceptance`` independently: (1 - a^(γ+1)) / (1 - a) (Leviathan et al. 2023)."""
    if not (isinstance(acceptance, numbers.Real) and 0 <= acceptance < 1):
        raise ValueError(f"acceptance must be a probability in [0, 1), got {acceptance!r}")
    g = _whole("gamma", gamma, 0)
    return (1 - acceptance ** (g + 1)) / (1 - acceptance)


def speculative(model, draft, chip, n_chips: int, batch_size: int, input_len: int, output_len: int,
                gamma: int = 4, acceptance: float = 0.7, precision: str = "bf16", tp: int | None = None) -> dict:
    """Speculative decoding on one replica: the draft model proposes ``gamma`` tokens one by one,
    the target verifies all of them in one step (a decode step over ``gamma + 1`` tokens per
    sequence: the same weight read, more FLOPs and KV reads). Returns TPOT and tokens/s per user with
    and without it, and the speed-up."""
    base = estimate(model, chip, n_chips, batch_size, input_len, output_len, precision, tp=tp)
    verify = estimate(model, chip, n_chips, batch_size * (gamma + 1), input_len, output_len, precision, tp=tp)
    d = estimate(draft, chip, n_chips, batch_size, input_len, output_len, precision, tp=tp)
    # the verify step processes (γ+1)·B tokens: a decode step at that batch, TPOT of that step
    t_step = gamma * d.tpot_s + verify.tpot_s
    acc = expected_accepted(acceptance, gamma)
    tpot = t_step / acc
    return {"tpot_s": tpot, "tokens_per_s_per_user": 1 / tpot, "baseline_tpot_s": base.tpot_s,
            "speedup": base.tpot_s / tpot, "accepted_per_step": acc, "draft_tpot_s": d.tpot_s,
            "verify_step_s": verify.tpot_s, "fits": base.fits and verify.fits}


# -- heterogeneous decode: attention on GPUs (where the KV cache lives), FFN on LPUs ------------------------
def heterogeneous_decode(model, gpu, n_gpus: int, lpu, n_lpus: int, batch_size: int, context_len: int,
                         precision: str = "fp8", link_bytes_per_s: float = 100e9, link_latency_s: float = 5e-6,
                         microbatches: int = 4) -> dict:
    """One decode step split across two kinds of chip, per layer: attention (and its weights, and
    the KV cache) on the GPUs, the FFN on LPUs whose SRAM holds its weights, the activations crossing
    twice per layer. A layer's FFN lives on its own ``n_lpus / layers`` LPUs (at least one), which
    read it from SRAM. ``microbatches`` split the batch so the four stages (attention, send, FFN,
    return) overlap: a layer takes the sum of the stages for one microbatch plus (m - 1) times the
    slowest. Returns TPOT, tokens/s, where the time goes, and whether the FFN weights fit in the LPUs."""
    model = model if isinstance(model, Model) else get_model(model)
    gpu = gpu if isinstance(gpu, Chip) else get_chip(gpu)
    lpu = lpu if isinstance(lpu, Chip) else get_chip(lpu)
    G, P = _whole("n_gpus", n_gpus), _whole("n_lpus", n_lpus)
    B, m = _whole("batch_size", batch_size), _whole("microbatches", microbatches)
    c = _whole("context_len", context_len)
    if m > B:
        raise ValueError(f"microbatches ({m}) cannot exceed the batch ({B})")
    if not (link_bytes_per_s > 0 and link_latency_s >= 0):
        raise ValueError("link_bytes_per_s must be > 0 and link_latency_s >= 0")
    bpe = bytes_per_element(precision)
    L, d = model.n_layers, model.d_model
    attn_w = model.attention_params() * bpe                       # per layer
    ffn_w = (model.params - model.embedding_params - model.lm_head_params) * bpe / L - attn_w
    kvb = model.kv_cache_bytes_per_token("fp8" if bpe <= 1 else "bf16") / L
    b = B / m
    g_bw = gpu.memory_bw_bytes_per_s * MEM_EFFICIENCY
    t_attn = (attn_w / G + b * c * kvb / G) / g_bw
    l_bw = lpu.memory_bw_bytes_per_s * MEM_EFFICIENCY
    per_layer = max(1.0, P / L)      # LPUs holding one layer's FFN (a layer's weights stay on its chips)
    eta, _ = _gemm_eff(lpu, precision)
    t_ffn = max(ffn_w / per_layer / l_bw, b * 2 * ffn_w / bpe / per_layer / (eta * _peak(lpu, precision)))
    t_x = link_latency_s + b * d * 2 / (link_bytes_per_s * min(G, per_layer))
    stages = (t_attn, t_x, t_ffn, t_x)
    t_layer = sum(stages) + (m - 1) * max(stages)
    tpot = L * t_layer
    ffn_total = ffn_w * L
    fits_lpu = ffn_total / P <= lpu.memory_bytes
    kv_total = B * c * kvb * L
    fits_gpu = (attn_w * L + model.embedding_params * bpe * 2 + kv_total) / G <= gpu.memory_bytes * (1 - HBM_RESERVE)
    return {"tpot_s": tpot, "tokens_per_s": B / tpot, "tokens_per_s_per_user": 1 / tpot,
            "attention_s": L * t_attn, "transfer_s": 2 * L * t_x, "ffn_s": L * t_ffn,
            "bottleneck": ("attention (GPU)", "transfer", "FFN (LPU)", "transfer")[int(np.argmax(stages))],
            "fits": bool(fits_lpu and fits_gpu), "lpus_needed": math.ceil(ffn_total / lpu.memory_bytes)}


# -- disaggregated prefill and decode ---------------------------------------------------------------------
def disaggregation(model, chip, chips_per_instance: int, input_len: int, output_len: int, decode_batch: int,
                   precision: str = "fp8", link_bytes_per_s: float = 50e9) -> dict:
    """Size prefill and decode pools for a steady stream of requests: a prefill instance serves
    1/t_prefill requests/s, a decode instance B/(output_len·TPOT); the P:D ratio balances them. The
    KV cache of each prompt crosses from the prefill to the decode pool at ``link_bytes_per_s``."""
    e = estimate(model, chip, chips_per_instance, decode_batch, input_len, output_len, precision)
    m = model if isinstance(model, Model) else get_model(model)
    kv = input_len * m.kv_cache_bytes_per_token(e.config["kv_precision"])
    prefill_rps = 1 / e.ttft_s
    decode_rps = decode_batch / (output_len * e.tpot_s)
    return {"prefill_requests_per_s": prefill_rps, "decode_requests_per_s": decode_rps,
            "p_to_d": decode_rps / prefill_rps, "kv_transfer_s": kv / link_bytes_per_s, "kv_bytes": kv,
            "ttft_s": e.ttft_s + kv / link_bytes_per_s, "tpot_s": e.tpot_s, "fits": e.fits}


# -- the serving simulator's step cost from this model ---------------------------------------------------
def step_cost(model, chip, n_chips: int, precision: str = "fp8", tp: int | None = None, input_len: int = 1024,
              output_len: int = 256):
    """A :class:`accelbook.serving.StepCost` for one replica, from this module's formulas:
    ``decode_base_s`` = reading the weights (and the all-reduce latencies) once per iteration,
    ``decode_per_seq_s`` = one sequence's matmul FLOPs, ``decode_per_ctx_token_s`` = reading one
    token of KV cache, ``prefill_per_token_s`` = one prompt token's FLOPs (with attention at the
    typical prompt length). The simulator adds the terms, so at large batches it counts weight
    reads and compute one after the other, where this module takes the larger: slightly pessimistic."""
    from .serving import StepCost

    e = estimate(model, chip, n_chips, 1, input_len, output_len, precision, tp=tp)
    b, pp = e.breakdown, e.config["pp"]
    cap = e.memory_capacity_bytes - b["weights_per_chip_bytes"]
    if cap <= 0:
        raise ValueError(e.why_not_fit())
    return StepCost(decode_base_s=(b["decode_gemm_s"] + b["decode_comm_s"]) * pp,
                    decode_per_seq_s=b["decode_per_seq_s"] * pp, decode_per_ctx_token_s=b["decode_per_ctx_token_s"] * pp,
                    prefill_base_s=b["prefill_comm_s"] * pp, prefill_per_token_s=b["prefill_per_token_s"] * pp,
                    max_batch=max(1, e.max_batch_size), max_kv_tokens=int(cap // b["kv_token_per_chip_bytes"]))
