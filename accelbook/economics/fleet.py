"""The hybrid fleet: which workload runs on which hardware, at least cost.

Workloads (:class:`FleetWorkload`: pre-training, fine-tuning, batch inference, interactive inference
with a per-user speed target, research) need tokens per month; hardware pools (:class:`Pool`: GPU,
TPU, LPU, other ASIC) have a number
of chips, a cost per chip-hour and, for each workload, a rate in tokens/s per chip (0 = cannot run
it, or cannot meet its latency target). The placement is a linear programme solved by HiGHS
(``scipy.optimize.linprog``): chip-hours ``x[w, p] ≥ 0`` minimising ``Σ cost_p · x[w, p]`` subject
to ``Σ_p rate[w, p] · 3600 · x[w, p] ≥ demand_w`` for every workload and ``Σ_w x[w, p] ≤ chips_p ·
730`` hours a month for every pool (:func:`place` returns a :class:`FleetPlacement`). A strategy
is a set of allowed (workload, pool) pairs.

Rates come from the models (:func:`default_rates`): training tokens/s per chip from the layout
search on 1,024 chips (:mod:`accelbook.training`), inference tokens/s per chip from the best layout
and batch on one server-sized group that meets the workload's per-user target
(:mod:`accelbook.inference`). A tighter latency target can only lower an interactive rate, so it can
never lower the fleet's cost (a tested property).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from accelbook.checks import instance, one_of, positive, positive_array, whole
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.loader import UnknownNameError

HOURS_PER_MONTH = 730.0
KINDS = ("pretrain", "finetune", "batch_inference", "interactive", "research")


@dataclass(frozen=True)
class FleetWorkload:
    """A workload of the fleet: its kind (one of :data:`KINDS`), the model it runs, its demand in
    tokens per month and, for interactive serving, the per-user speed it must meet (tokens/s)."""

    name: str
    kind: str
    model: str
    tokens_per_month: float
    min_tokens_per_s_per_user: float = 0.0     # interactive: the per-user speed target

    def __post_init__(self):
        one_of("workload kind", self.kind, KINDS)
        for f in ("tokens_per_month", "min_tokens_per_s_per_user"):
            positive(f"{self.name}: {f}", getattr(self, f), allow_zero=True)


@dataclass(frozen=True)
class Pool:
    """A pool of ``chips`` chips of one kind (a catalogue id) at a price per chip-hour (USD)."""

    name: str
    chip: str
    chips: int
    usd_per_chip_hour: float
    group: int = 8          # chips that serve one inference replica group (8-GPU server; LPUs: as many as hold the model)

    def __post_init__(self):
        whole(f"{self.name}: chips", self.chips, lo=0)
        positive(f"{self.name}: usd_per_chip_hour", self.usd_per_chip_hour)
        whole(f"{self.name}: group", self.group)


@catalogue_cache(maxsize=256)
def _rate(kind: str, model: str, chip: str, group: int, target: float) -> float:
    """tokens/s per chip of one workload kind on one chip (0 if it cannot run or meet the target)."""
    from accelbook import inference, training
    from accelbook.specs.chips import get_chip

    c = get_chip(chip)
    try:
        if kind in ("pretrain", "finetune", "research"):
            if c.hbm_bytes is None or c.kind not in ("gpu", "tpu"):
                return 0.0
            gbt = 2**22 if kind == "pretrain" else 2**20
            return float(training.search(model, c, 1024, gbt, 4096, top=1).attrs["best"].tokens_per_s_per_chip)
        n = max(group, inference.min_chips(model, c, "fp8" if "fp8" in c.peak_dense_flop_s else "bf16"))
        prec = "fp8" if ("fp8" in c.peak_dense_flop_s or "int8" in c.peak_dense_flop_s) else "bf16"
        tpot = None if target <= 0 else 1.0 / target
        return float(inference.max_throughput(model, c, n, 1024, 256, prec, tpot_target_s=tpot).tokens_per_s_per_chip)
    except UnknownNameError:
        raise
    except ValueError:
        return 0.0


def _checked(workloads, pools) -> tuple[list, list]:
    """Lists of :class:`FleetWorkload` and :class:`Pool`, each non-empty with unique names."""
    out = []
    for arg, items, cls in (("workloads", workloads, FleetWorkload), ("pools", pools, Pool)):
        items = [items] if isinstance(items, cls) else items
        try:
            items = list(items)
        except TypeError:
            raise TypeError(f"{arg} must be a list of {cls.__name__}, got {type(items).__name__}") from None
        if not items:
            raise ValueError(f"give at least one workload and one pool ({arg} is empty)")
        for x in items:
            instance(f"each of {arg}", x, cls)
        names = [x.name for x in items]
        if len(set(names)) != len(names):
            raise ValueError(f"{arg} must have distinct names, got {names}")
        out.append(items)
    return out[0], out[1]


def _checked_rates(rates) -> pd.DataFrame:
    """``rates`` as given, once it is a table of workload, pool and finite tokens/s per chip >= 0."""
    cols = {"workload", "pool", "tokens_per_s_per_chip"}
    if not isinstance(rates, pd.DataFrame) or not cols <= set(rates.columns):
        raise ValueError(f"rates must be a DataFrame with columns {sorted(cols)} (as default_rates returns)")
    positive_array("rates['tokens_per_s_per_chip']", rates["tokens_per_s_per_chip"].to_numpy(), allow_zero=True)
    return rates


def default_rates(workloads, pools) -> pd.DataFrame:
    """tokens/s per chip for every (workload, pool) from the training and inference models.
    An unknown model or chip name is an :class:`~accelbook.specs.loader.UnknownNameError` (it is not
    a pool that "cannot run" the workload)."""
    from accelbook.specs.chips import get_chip
    from accelbook.specs.models import get_model

    workloads, pools = _checked(workloads, pools)
    for w in workloads:
        get_model(w.model)
    for p in pools:
        get_chip(p.chip)
    rows = []
    for w in workloads:
        for p in pools:
            rows.append({"workload": w.name, "pool": p.name,
                         "tokens_per_s_per_chip": _rate(w.kind, w.model, p.chip, p.group, float(w.min_tokens_per_s_per_user))})
    return pd.DataFrame(rows)


def _rate_matrix(rates: pd.DataFrame, workloads, pools) -> np.ndarray:
    """tokens/s per chip as a (workload × pool) matrix in the given orders, 0 for a pair without a row
    (the table pivoted; a pair given twice is an error, as pivoting it would be)."""
    row = {w.name: i for i, w in enumerate(workloads)}
    col = {p.name: j for j, p in enumerate(pools)}
    R = np.zeros((len(workloads), len(pools)))
    seen = set()
    for w, p, r in zip(rates["workload"].tolist(), rates["pool"].tolist(),
                       rates["tokens_per_s_per_chip"].to_numpy(dtype=float).tolist()):
        if (w, p) in seen:
            raise ValueError("Index contains duplicate entries, cannot reshape")
        seen.add((w, p))
        if w in row and p in col:
            R[row[w], col[p]] = r
    return R


@dataclass(frozen=True)
class FleetPlacement:
    """The least-cost placement: feasible or not, its cost per month (USD; inf if infeasible), the
    chip-hours per month of each workload on each pool, and why not (when infeasible)."""

    feasible: bool
    usd_per_month: float
    hours: pd.DataFrame = field(repr=False)        # workload x pool chip-hours per month
    message: str = ""


def place(workloads, pools, rates: pd.DataFrame | None = None, allowed=None) -> FleetPlacement:
    """Least-cost placement (module docstring). ``allowed``: a set of (workload name, pool name)
    pairs (None = all); ``rates``: from :func:`default_rates` unless given."""
    from scipy.optimize import linprog

    workloads, pools = _checked(workloads, pools)
    rates = default_rates(workloads, pools) if rates is None else _checked_rates(rates)
    R = _rate_matrix(rates, workloads, pools)
    W, P = R.shape
    # a pair runs when the pool can serve the workload at all and has chips: a pool of 0 chips hosts nothing
    # (left in, the LP's feasibility tolerance, 1e-7 absolute, could "place" a tiny demand on it)
    ok = (R > 0) & (np.array([p.chips for p in pools]) > 0)[None, :]
    if allowed is not None:
        ok &= np.array([[(w.name, p.name) in allowed for p in pools] for w in workloads])
    idx = [(i, j) for i in range(W) for j in range(P) if ok[i, j]]
    unserved = [workloads[i].name for i in range(W) if workloads[i].tokens_per_month > 0 and not ok[i].any()]
    if unserved:
        return FleetPlacement(False, math.inf, pd.DataFrame(),
                         f"no allowed pool with chips can run {', '.join(unserved)} (or meet its latency target)")
    if not idx:   # nothing to place, and (checked above) no demand that needed a pool
        return FleetPlacement(True, 0.0, pd.DataFrame(0.0, index=[w.name for w in workloads],
                                                 columns=[p.name for p in pools]), "")
    cost = np.array([pools[j].usd_per_chip_hour for i, j in idx])
    A_ub, b_ub = [], []
    for i in range(W):                      # demand: -Σ rate·3600·x <= -demand
        A_ub.append([-R[i, j] * 3600 if ii == i else 0.0 for ii, j in idx])
        b_ub.append(-workloads[i].tokens_per_month)
    for j in range(P):                      # capacity
        A_ub.append([1.0 if jj == j else 0.0 for _, jj in idx])
        b_ub.append(pools[j].chips * HOURS_PER_MONTH)
    res = linprog(cost, A_ub=np.array(A_ub), b_ub=np.array(b_ub), bounds=(0, None), method="highs")
    if res.status != 0:
        return FleetPlacement(False, math.inf, pd.DataFrame(),
                         "not enough capacity in the allowed pools for the demand" if res.status == 2 else res.message)
    used = np.array(A_ub) @ res.x
    if np.any(used > np.array(b_ub) + 1e-9 * np.maximum(1.0, np.abs(b_ub))):   # beyond HiGHS's absolute tolerance
        return FleetPlacement(False, math.inf, pd.DataFrame(), "not enough capacity in the allowed pools for the demand")
    hours = np.zeros((W, P))
    for (i, j), v in zip(idx, res.x):
        hours[i, j] = v
    df = pd.DataFrame(hours, index=[w.name for w in workloads], columns=[p.name for p in pools])
    return FleetPlacement(True, float(res.fun), df, "")


def example_fleet(interactive_target: float = 100.0, scale: float = 1.0):
    """The articles' fleet: pre-training, fine-tuning, batch and interactive inference and research,
    on a GPU pool (rented H100), a TPU pool (v5p) and an LPU pool (LP30 racks, price an estimate)."""
    ws = [FleetWorkload("pre-training", "pretrain", "llama-3.1-70b", 1.0e12 * scale),
          FleetWorkload("fine-tuning", "finetune", "llama-3.1-8b", 0.2e12 * scale),
          FleetWorkload("batch inference", "batch_inference", "llama-3.1-70b", 2.0e12 * scale),
          FleetWorkload("interactive inference", "interactive", "llama-3.1-70b", 0.5e12 * scale, interactive_target),
          FleetWorkload("research", "research", "llama-3.1-8b", 0.05e12 * scale)]
    ps = [Pool("GPU (H100)", "h100", 4096, 10.8), Pool("TPU (v5p)", "tpu-v5p", 4096, 4.2),
          Pool("LPU (LP30)", "groq-lp30", 4096, 3.0, group=256)]
    return ws, ps


STRATEGIES = {
    "all on GPUs": lambda w, p: p.startswith("GPU"),
    "pre-train on TPUs, serve on GPUs": lambda w, p: (p.startswith("TPU") if w in ("pre-training", "fine-tuning")
                                                      else p.startswith("GPU")),
    "... plus an LPU tier for interactive": lambda w, p: (p.startswith("TPU") if w in ("pre-training", "fine-tuning")
                                                          else p.startswith("LPU") if w == "interactive inference"
                                                          else p.startswith("GPU")),
    "least cost (any pool)": lambda w, p: not (w == "research" and not p.startswith("GPU")),
}


def compare_strategies(workloads, pools, rates=None) -> pd.DataFrame:
    """Cost per month of each strategy in :data:`STRATEGIES` (research stays on GPUs in all)."""
    rates = default_rates(workloads, pools) if rates is None else rates
    rows = []
    for name, rule in STRATEGIES.items():
        allowed = {(w.name, p.name) for w in workloads for p in pools if rule(w.name, p.name)}
        pl = place(workloads, pools, rates, allowed)
        rows.append({"strategy": name, "feasible": pl.feasible, "usd_per_month": pl.usd_per_month,
                     "note": pl.message})
    return pd.DataFrame(rows)
