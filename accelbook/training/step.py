"""One layout's training step: :func:`estimate` and the :class:`TrainingEstimate` it returns."""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from accelbook.checks import fraction, one_of, output_fields, whole
from accelbook.limits import grouped_sentence, seconds_words
from accelbook.specs.chips import MEMORY_RESERVE, Chip, get_chip, usable_memory_bytes
from accelbook.specs.clusters import Cluster
from accelbook.specs.grouped_gemm import grouped_gemm_fraction
from accelbook.specs.models import Model

from .arguments import batch_sequences, chip_count, memory_reserve_fraction, resolve, sequence_length
from .goodput import check_goodput, time_to_train_words
from .kernel import evaluate_layout
from .layout import ZERO_STAGES, Layout, layout_arguments
from .mfu import ATTENTION_COUNTS, DEFAULT_ATTENTION, DEFAULT_PEAK, PEAKS, convention_name, model_flops_utilisation
from .plausibility import Plausibility, plausibility
from .records import (
    CP_COMM,
    GRAD_SYNC,
    RECOMPUTE,
    RESULT_FIELDS,
    SCHEDULES,
    attention_head_dim,
    chip_record,
    model_record,
    options_record,
    router_imbalance,
)

HOURS = 3600.0

#: ``TrainingEstimate.time`` key (a result field, as in :func:`search`'s columns) -> its display label
TIME_LABELS = {"t_gemm_s": "matmuls", "t_attention_s": "attention", "t_elementwise_s": "elementwise",
               "t_recompute_s": "recompute", "t_lm_head_s": "LM head + loss", "t_tp_comm_s": "tensor-parallel comm",
               "t_cp_comm_s": "context-parallel comm", "t_ep_comm_s": "expert all-to-all",
               "t_pp_comm_s": "pipeline sends", "t_bubble_s": "pipeline bubble",
               "t_dp_comm_s": "data-parallel comm (exposed)", "t_dp_bucket_s": "data-parallel last bucket", "t_optimizer_s": "optimizer step",
               "t_permute_s": "MoE token permutation", "t_imbalance_s": "expert load imbalance",
               "t_overlap_s": "compute slowed by hidden comm", "t_stage_imbalance_s": "pipeline stage imbalance"}
#: what binds a step (``TrainingEstimate.limit``): its time parts grouped by the resource they wait on
LIMIT_GROUPS = {
    "compute": ("t_gemm_s", "t_attention_s", "t_recompute_s", "t_lm_head_s", "t_overlap_s"),
    "memory-bandwidth": ("t_elementwise_s", "t_optimizer_s", "t_permute_s"),
    "communication": ("t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_comm_s", "t_dp_comm_s", "t_dp_bucket_s"),
    "pipeline": ("t_bubble_s", "t_stage_imbalance_s"),
    "load-imbalance": ("t_imbalance_s",)}
#: ``TrainingEstimate.memory`` key (a result field) -> its display label
MEMORY_LABELS = {"mem_weights_bytes": "weights", "mem_grads_bytes": "gradients",
                 "mem_optimizer_bytes": "optimizer states", "mem_activations_bytes": "activations",
                 "mem_logits_bytes": "logits"}


@dataclass(frozen=True)
class TrainingEstimate:
    """A training step's time, utilisation, memory per chip and their breakdowns (SI units).

    ``time`` and ``memory`` are keyed by result field, the names :func:`search`'s columns have
    (``e.time["t_bubble_s"]``, ``e.memory["mem_activations_bytes"]``); :data:`TIME_LABELS` and
    :data:`MEMORY_LABELS` give their display labels, which :meth:`breakdown` and charts show.

    ``mfu`` is model FLOPs utilisation in the one convention of :mod:`accelbook.training.mfu`
    (full attention, dense bf16 peak), named in ``mfu_convention``; :meth:`mfu_as` gives the others.
    ``hfu`` is in the same convention with the recomputed forward counted too (×4/3 under full
    recomputation).
    """

    model: str
    chip: str
    cluster: str
    n_chips: int
    config: dict
    step_time_s: float
    mfu: float
    hfu: float
    tokens_per_s_per_chip: float
    memory_per_chip_bytes: float
    memory_capacity_bytes: float
    fits: bool
    time: dict = field(repr=False)
    memory: dict = field(repr=False)
    assumptions: tuple[str, ...] = field(repr=False, default=())
    mfu_convention: str = convention_name()
    #: (attention, peak) -> MFU in that convention (:meth:`mfu_as`)
    mfu_by_convention: dict = field(repr=False, default_factory=dict)
    #: ``mfu`` against the highest MFU published on the chip's family at this precision
    #: (:func:`accelbook.training.plausibility.plausibility`); None only for an estimate built by hand
    plausibility: Plausibility | None = field(repr=False, default=None)

    @property
    def mfu_ceiling(self) -> float | None:
        """The highest MFU any published run reached on this chip's family and precision (None: none published)."""
        return None if self.plausibility is None else self.plausibility.ceiling

    @property
    def mfu_flag(self) -> str:
        """Why ``mfu`` is above :attr:`mfu_ceiling` (with the ceiling and its source), ``""`` when it is not."""
        return "" if self.plausibility is None else self.plausibility.flag

    def mfu_as(self, attention: str = DEFAULT_ATTENTION, peak: str = DEFAULT_PEAK) -> float:
        """MFU with attention counted "full" or "causal", over the "bf16" peak or the run's "precision"
        peak (:func:`accelbook.training.mfu.model_flops_utilisation`)."""
        convention_name(attention, peak)   # checks both names
        return self.mfu_by_convention[(attention, peak)]

    @property
    def layout(self) -> Layout:
        """The layout this step ran, as one value (``dp`` and ``grad_sync`` as resolved)."""
        return Layout.from_mapping(self.config)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_s_per_chip * self.n_chips

    @property
    def overflow_bytes(self) -> float:
        """How far memory exceeds what is usable (0 when it fits)."""
        return max(0.0, self.memory_per_chip_bytes - self.memory_capacity_bytes)

    def time_to_train(self, tokens: float, goodput: float | None = None) -> float:
        """Seconds to train ``tokens`` tokens: ``tokens / tokens_per_s / goodput``.

        ``goodput`` in (0, 1] is the share of wall-clock time that trains (failures, restarts and
        checkpoints take the rest); ``None`` takes the published value, Llama 3's 90 %
        (:func:`~accelbook.training.goodput.published_goodput`); 1 gives the ideal time.
        """
        if not (isinstance(tokens, numbers.Real) and math.isfinite(tokens) and tokens > 0):
            raise ValueError(f"tokens must be > 0, got {tokens!r}")
        return tokens / self.tokens_per_s / check_goodput(goodput)

    def chip_hours(self, tokens: float, goodput: float | None = None) -> float:
        """Chip-hours to train ``tokens`` tokens (every chip is held while the job stalls too)."""
        return self.time_to_train(tokens, goodput) * self.n_chips / HOURS

    def cost_usd(self, tokens: float, price_usd_per_hour: float | None = None, goodput: float | None = None) -> float:
        """Chip-hours (at ``goodput``, as :meth:`time_to_train`) × price (the catalogue's list price
        unless one is given)."""
        if price_usd_per_hour is None:
            p = get_chip(self.chip).price_usd_per_hour
            if p is None:
                raise ValueError(f"{self.chip} has no published price per chip-hour; give price_usd_per_hour")
            price_usd_per_hour = p
        if not (math.isfinite(price_usd_per_hour) and price_usd_per_hour > 0):
            raise ValueError(f"price must be > 0 USD/h, got {price_usd_per_hour!r}")
        return self.chip_hours(tokens, goodput) * price_usd_per_hour

    def time_to_train_summary(self, tokens: float, goodput: float | None = None) -> str:
        """The ideal time and the time at ``goodput``, in words: ``"82.5 days at 100 % → **91.7 days** at
        the 90 % effective training time Llama 3 reported (…)"``."""
        return time_to_train_words(self.time_to_train(tokens, 1.0), goodput)

    @property
    def limit(self) -> str:
        """Which limit binds the step, in plain words: the group of parts that takes longest (compute,
        memory traffic, communication, the pipeline) and the four largest parts with their times
        (:func:`accelbook.limits.grouped_sentence`)."""
        groups = {g: {TIME_LABELS[k]: v for k, v in self.time.items() if k in keys} for g, keys in LIMIT_GROUPS.items()}
        return grouped_sentence(groups, f"each {seconds_words(self.step_time_s)} step is ", top=4, by_size=True)

    def breakdown(self) -> pd.DataFrame:
        """Tidy table for reading: component (display label), kind (time/memory), value (s or bytes),
        share of the total, and a ``detail`` where the layout changes what a line means (the
        gradient sync, on the data-parallel and gradient lines)."""
        sync = grad_sync_detail(self.config)
        detail = {"t_dp_comm_s": sync, "mem_grads_bytes": sync}
        rows = [{"component": TIME_LABELS[k], "kind": "time", "value": v, "share": v / self.step_time_s,
                 "detail": detail.get(k, "")} for k, v in self.time.items()]
        rows += [{"component": MEMORY_LABELS[k], "kind": "memory", "value": v, "share": v / self.memory_per_chip_bytes,
                  "detail": detail.get(k, "")} for k, v in self.memory.items()]
        return pd.DataFrame(rows)

    def why_not_fit(self) -> str:
        if self.fits:
            return ""
        big = max(self.memory, key=self.memory.get)
        return (f"does not fit: {self.memory_per_chip_bytes / 1e9:.1f} GB needed per chip, "
                f"{self.memory_capacity_bytes / 1e9:.1f} GB usable ({self.overflow_bytes / 1e9:.1f} GB over; "
                f"largest: {MEMORY_LABELS[big]} {self.memory[big] / 1e9:.1f} GB)")


def grad_sync_detail(config: dict) -> str:
    """The gradient sync of a layout in words (empty when the config does not say)."""
    g, m = config.get("grad_sync"), config.get("n_microbatches")
    if g is None:
        return ""
    if g == "step":
        return "gradient sync: once a step (full gradient buffer kept while accumulating)"
    return f"gradient sync: every microbatch ({m} reduce-scatters a step; gradients sharded)"


def layout_assumptions(config: dict) -> list[str]:
    """What the layout's own choices take for granted: the gradient sync, the pipeline schedule."""
    out = []
    if config.get("grad_sync") == "step":
        out.append("gradients reduce-scattered once a step, after the last microbatch: the full fp32 gradient "
                   "buffer is kept while accumulating (ZeRO-2 so synced holds what ZeRO-1 holds)")
    elif config.get("grad_sync") == "microbatch":
        out.append("gradients reduce-scattered every microbatch (each behind that microbatch's backward), so only "
                   "a 1/dp shard is kept: n_microbatches reduce-scatters a step")
    if config.get("cp", 1) > 1:
        out.append("context parallelism by all-gather: K and V gathered before attention and their gradients "
                   "reduce-scattered after it, exposed (Llama 3's choice)" if config.get("cp_comm") == "allgather" else
                   "context parallelism by ring attention: K and V passed round the ring behind the attention "
                   "they feed (exposed only where attention is shorter)")
    sched = config.get("schedule", "1f1b")
    if config.get("pp", 1) > 1:
        out.append({"1f1b": "pipeline schedule: 1F1B" + (" interleaved (vp chunks a stage)" if config.get("vp", 1) > 1
                                                         else "") + ", bubble (pp-1)/vp microbatches",
                    "zb-h1": "pipeline schedule: ZB-H1 (Qi et al. 2024): the weight-gradient GEMMs fill the bubble, "
                             "(pp-1)·(F+B-W); 1F1B's memory",
                    "dualpipe": "pipeline schedule: DualPipe (DeepSeek-V3): bubble (pp/2-1)·(F&B+B-3W), two copies of "
                                "the stage's parameters, pp+1 microbatches in flight; expert all-to-all and pipeline "
                                "sends hidden behind compute (which they slow by the measured overlap slowdown)"}[sched])
    return out


def assumptions(notes: list[str], cl: Cluster, flash: bool, reserve: float) -> tuple[str, ...]:
    """What an estimate takes for granted: the chip's ``notes``, then the model's standing choices."""
    base = [
        f"network: {cl.name}",
        "sequence parallelism on whenever tp > 1; expert and pipeline communication exposed; tensor-parallel "
        "communication exposed unless tp_overlap says otherwise",
        "data-parallel reduce-scatter hidden behind one microbatch's backward, all-gather behind a forward",
        "gradients reduced in fp32 (Megatron's main gradients; Llama 3 too), updated weights gathered in bf16; "
        "Adam with fp32 master weights and moments (18 bytes/parameter with the fp32 gradient buffer)",
        "no dropout; " + ("FlashAttention (scores never stored)" if flash else "unfused attention (scores stored)"),
        f"{reserve:.0%} of HBM kept for runtime, communication buffers and fragmentation",
        "step time without failures, restarts or checkpoint stalls; time to train and cost divide by goodput "
        f"(default {check_goodput(None) * 100:.0f} %, the effective training time Llama 3 reported)",
    ]
    return tuple(notes + base)


def reported_mfu(tokens_per_s_per_chip: float, model: Model, chip: Chip, seq_len: int, precision: str,
                 attention: str = DEFAULT_ATTENTION, peak: str = DEFAULT_PEAK) -> float:
    """The MFU an estimate reports in one convention (:func:`~.mfu.model_flops_utilisation`): NaN over
    the bf16 peak for a chip that has none."""
    if peak == "precision" or "bf16" in chip.peak_dense_flop_s:
        return model_flops_utilisation(tokens_per_s_per_chip, model, chip, seq_len, precision, attention, peak)
    return float("nan")


def to_estimate(out: np.record, model: Model, chip: Chip, cl: Cluster, n: int, config: dict, mv: np.record,
                notes: list[str], flash: bool, reserve: float) -> TrainingEstimate:
    """The :class:`TrainingEstimate` of a result record ``out`` (:data:`~.records.RESULT`)."""
    r = {k: float(out[k]) for k in RESULT_FIELDS}
    time = {k: r[k] for k in TIME_LABELS}
    memory = {k: r[k] for k in MEMORY_LABELS}
    config = dict(config, n_microbatches=int(round(r["n_microbatches"])))
    # the kernel's r["mfu"] is causal attention over the precision's peak; reported: the one convention
    tps, s, p = r["tokens_per_s_per_chip"], config["seq_len"], config["precision"]
    mfus = {(a, k): reported_mfu(tps, model, chip, s, p, a, k) for a in ATTENTION_COUNTS for k in PEAKS}
    return TrainingEstimate(
        model=model.name, chip=chip.name, cluster=cl.name, n_chips=n, config=config,
        step_time_s=r["step_time_s"], mfu=mfus[(DEFAULT_ATTENTION, DEFAULT_PEAK)],
        hfu=mfus[(DEFAULT_ATTENTION, DEFAULT_PEAK)] * r["hfu"] / r["mfu"],
        tokens_per_s_per_chip=r["tokens_per_s_per_chip"], memory_per_chip_bytes=r["memory_per_chip_bytes"],
        memory_capacity_bytes=usable_memory_bytes(chip.hbm_bytes, reserve), fits=bool(r["fits"]),
        time=time, memory=memory, assumptions=assumptions(notes, cl, flash, reserve),
        mfu_convention=convention_name(DEFAULT_ATTENTION, DEFAULT_PEAK, p), mfu_by_convention=mfus,
        plausibility=plausibility(chip, p, mfus[(DEFAULT_ATTENTION, DEFAULT_PEAK)]),
    )


def check_layout(model: Model, n: int, s: int, tp: int, cp: int, pp: int, dp: int | None, ep: int) -> int:
    """Say plainly why a layout is impossible; returns dp (``n / (tp·cp·pp)`` when not given)."""
    if n % (tp * cp * pp):
        raise ValueError(f"n_chips = {n} is not divisible by tp·cp·pp = {tp}·{cp}·{pp} = {tp * cp * pp}")
    dp_auto = n // (tp * cp * pp)
    if dp is None:
        dp = dp_auto
    elif whole("dp", dp) != dp_auto:
        raise ValueError(f"tp·cp·pp·dp = {tp * cp * pp * dp} but n_chips = {n}; dp must be {dp_auto}")
    if model.n_heads % tp:
        raise ValueError(f"tp = {tp} must divide the {model.n_heads} attention heads of {model.name}")
    if cp > 1 and s % (2 * cp):
        raise ValueError(f"seq_len = {s} must be divisible by 2·cp = {2 * cp} (load-balanced context parallelism)")
    n_exp = model.moe.n_experts if model.moe else 1
    if ep > 1 and (model.moe is None or n_exp % ep or dp % ep):
        why = "it has no experts" if model.moe is None else f"ep must divide both its {n_exp} experts and dp = {dp}"
        raise ValueError(f"ep = {ep} is not possible for {model.name}: {why}")
    if pp > model.n_layers:
        raise ValueError(f"pp = {pp} is more stages than {model.name}'s {model.n_layers} layers")
    return dp


def check_batch(model: Model, B: int, dp: int, mb: int, pp: int, vp: int) -> None:
    """The batch splits into dp·microbatch equal parts, and interleaving has the microbatches it needs."""
    if B % (dp * mb):
        raise ValueError(f"the global batch of {B} sequences does not split into dp·microbatch = {dp}·{mb} "
                         f"= {dp * mb} equal parts; choose a batch that is a multiple of {dp * mb} sequences")
    m = B // (dp * mb)
    if vp > 1 and (pp == 1 or m % pp or pp * vp > model.n_layers):
        raise ValueError(f"interleaving (vp = {vp}) needs pp > 1, a number of microbatches ({m}) divisible "
                         f"by pp = {pp}, and pp·vp ≤ {model.n_layers} layers")


def check_schedule(schedule: str, pp: int, vp: int, m: int) -> str:
    """The pipeline schedule (:data:`~.records.SCHEDULES`), refused with the reason where it cannot run."""
    one_of("schedule", schedule, SCHEDULES)
    if schedule != "1f1b" and (pp <= 1 or vp != 1):
        raise ValueError(f"schedule {schedule!r} needs a pipeline (pp > 1, got {pp}) without interleaving (vp = 1, "
                         f"got {vp})")
    if schedule == "dualpipe" and (pp % 2 or m % 2):
        raise ValueError(f"schedule 'dualpipe' needs an even pp (got {pp}) and an even number of microbatches "
                         f"(got {m}): microbatches enter from both ends")
    return schedule


def check_grad_sync(zero_stage: int, grad_sync: str | None) -> str:
    """The gradient sync (:data:`~.records.GRAD_SYNC`) of a ZeRO stage: ``None`` takes every microbatch
    from ZeRO-2 on and once a step below; an impossible pairing is refused, saying why."""
    if grad_sync is None:
        return "microbatch" if zero_stage >= 2 else "step"
    one_of("grad_sync", grad_sync, GRAD_SYNC)
    if grad_sync == "microbatch" and zero_stage < 2:
        raise ValueError(f"grad_sync='microbatch' needs zero_stage 2 or 3 (got {zero_stage}): below ZeRO-2 every "
                         "rank keeps the full gradients, so reducing them every microbatch only adds traffic")
    if grad_sync == "step" and zero_stage == 3:
        raise ValueError("grad_sync='step' is not possible with zero_stage=3: ZeRO-3 reduce-scatters every "
                         "microbatch (its weights are gathered per microbatch and its gradients sharded)")
    return grad_sync


def estimate(model: Model | str, chip: Chip | str | None, n_chips: int, global_batch_tokens: float, seq_len: int,
             tp: int = 1, pp: int = 1, dp: int | None = None, ep: int = 1, cp: int = 1, zero_stage: int = 1,
             recompute: str = "selective", microbatch: int = 1, vp: int = 1, precision: str = "bf16",
             cluster: Cluster | str | None = None, flash_attention: bool = True,
             sequence_parallel: bool = True, memory_reserve: float = MEMORY_RESERVE,
             tp_overlap: float = 0.0, grad_sync: str | None = None, cp_comm: str = "ring",
             schedule: str = "1f1b", layout: Layout | None = None) -> TrainingEstimate:
    """Step time, MFU, tokens/s and memory per chip of one parallel layout.

    The layout is given as keywords (``tp=8, pp=4``) or as one value, ``layout=Layout(tp=8, pp=4)``
    (:class:`~accelbook.training.layout.Layout`; then the keywords stay at their defaults), and comes
    back as ``TrainingEstimate.layout``.

    ``global_batch_tokens`` must be a whole number of ``seq_len`` sequences; ``dp`` defaults to
    ``n_chips / (tp·cp·pp)``. ``recompute``: "none", "selective" (norms and FFN activation, plus
    attention scores without FlashAttention), "full". ``vp``: interleaved pipeline chunks per
    stage (1 = plain 1F1B). ``tp_overlap``: share of tensor-parallel communication hidden behind
    GEMMs (0 = none, the default: no published measurement of the overlap achieved). ``cluster``:
    a preset id from ``data/clusters.toml`` (default: the chip's own, e.g. DGX H100, TPU v5p pod).
    ``memory_reserve``: share of HBM kept free (default 10 %). ``grad_sync``: "step" (gradients
    reduced once a step; the full gradient buffer kept while accumulating) or "microbatch" (reduce-
    scattered every microbatch; ZeRO ≥ 2 keeps a 1/dp shard); default "microbatch" from ZeRO-2 on.
    ``schedule``: the pipeline schedule, "1f1b" (interleaved when vp > 1), "zb-h1" (zero bubble, Qi
    et al. 2024) or "dualpipe" (DeepSeek-V3); the last two with vp = 1.
    ``cp_comm``: how context parallelism moves K and V: "ring" (ring attention, hidden behind the
    attention it feeds) or "allgather" (gathered before attention, exposed: Llama 3's choice).
    """
    if layout is not None:
        given = dict(tp=tp, pp=pp, dp=dp, ep=ep, cp=cp, zero_stage=zero_stage, recompute=recompute, microbatch=microbatch,
                     vp=vp, precision=precision, flash_attention=flash_attention, sequence_parallel=sequence_parallel,
                     tp_overlap=tp_overlap, grad_sync=grad_sync, cp_comm=cp_comm, schedule=schedule)
        return estimate(model, chip, n_chips, global_batch_tokens, seq_len, cluster=cluster, memory_reserve=memory_reserve,
                        **layout_arguments(layout, given))
    model, chip, cl = resolve(model, chip, cluster, precision)
    n = chip_count(n_chips)
    s = sequence_length(seq_len)
    tp, pp, cp, ep, mb, vp = (whole(k, v) for k, v in
                              (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep), ("microbatch", microbatch), ("vp", vp)))
    one_of("zero_stage", whole("zero_stage", zero_stage, 0), ZERO_STAGES)     # True is not a stage
    for name, v in (("flash_attention", flash_attention), ("sequence_parallel", sequence_parallel)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {v!r}"[:200])
    one_of("recompute", recompute, RECOMPUTE)
    grad_sync = check_grad_sync(zero_stage, grad_sync)
    reserve = memory_reserve_fraction(memory_reserve)
    dp = check_layout(model, n, s, tp, cp, pp, dp, ep)
    B = batch_sequences(global_batch_tokens, s)
    check_batch(model, B, dp, mb, pp, vp)
    schedule = check_schedule(schedule, pp, vp, B // (dp * mb))
    mv = model_record(model, s)
    cv, notes = chip_record(chip, cl, precision, s, attention_head_dim(model))
    notes = notes + [n for n in (router_imbalance(model)[1],) if n]
    if model.moe is not None:   # the routed experts run as grouped GEMMs (records.CHIP's grouped_gemm_fraction)
        notes.append(grouped_gemm_fraction(chip, precision).note)
    out = evaluate_layout(mv, cv, B, s, tp, cp, pp, vp, dp, ep, mb, zero_stage, RECOMPUTE.index(recompute),
                          flash_attention, sequence_parallel, usable_memory_bytes(chip.hbm_bytes, reserve),
                          options_record(fraction("tp_overlap", tp_overlap), one_of("cp_comm", cp_comm, CP_COMM)),
                          grad_sync=GRAD_SYNC.index(grad_sync), schedule=SCHEDULES.index(schedule))
    config = dict(tp=tp, cp=cp, pp=pp, vp=vp, dp=dp, ep=ep, microbatch=mb, zero_stage=zero_stage, recompute=recompute,
                  grad_sync=grad_sync, schedule=schedule, precision=precision, seq_len=s, global_batch_sequences=B,
                  flash_attention=bool(flash_attention), sequence_parallel=bool(sequence_parallel), cp_comm=cp_comm,
                  tp_overlap=float(tp_overlap))
    est = to_estimate(out, model, chip, cl, n, config, mv, notes, flash_attention, reserve)
    return _checked(dataclasses.replace(est, assumptions=est.assumptions + tuple(layout_assumptions(est.config))))


def _checked(est: TrainingEstimate) -> TrainingEstimate:
    """``est`` if every number in it is finite and >= 0 and the chips do no more than their peak: the
    model FLOPs with causal attention over the peak at the run's precision at most 1 (``mfu`` itself is
    over the bf16 peak, so an fp8 run may pass 1 there)."""
    u = output_fields("training.estimate", est).mfu_by_convention.get(("causal", "precision"))
    if u is not None and u > 1 + 1e-9:
        raise ValueError(f"training.estimate returned a utilisation of {u:.3f} of the {est.config['precision']} peak "
                         "(model FLOPs, causal attention), above 1: a model bug or inputs at its edge")
    return est
