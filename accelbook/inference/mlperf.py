"""Throughput under latency limits with continuous batching, and the MLPerf Inference Server results.

**Continuous-batching throughput** (:func:`continuous_throughput`). MLPerf's Server scenario sends
Poisson arrivals and a run is valid when the ``q``-th percentile (99th) over requests of the time to
first token is at most ``ttft_limit_s`` and that of the time per output token, ``TPOT = (last token -
first token)/(output_len - 1)`` per request, at most ``tpot_limit_s``. The throughput is the highest
Poisson rate ``λ`` whose simulation (:func:`accelbook.inference.serving.simulate`, step costs from
:func:`accelbook.inference.step.step_cost`) meets both limits, times the mean output length:

    tokens/s = λ · mean(output_len)

``λ`` is found by bisection between a feasible rate and the compute bound ``λ_max = replicas /
(mean(prompt_len + output_len) · (per_token_s + comm_per_token_s))`` (every token costs at least its
matmuls and its all-reduce bytes), ``steps`` halvings, or fewer if ``max_seconds`` runs out (then
``search_complete`` is False). The same seed at every rate (common random numbers). Each
tensor-parallel degree ``tp`` that divides the chips and the heads and fits is tried with
``n_chips / tp`` round-robin replicas, and each prefill token budget a step (``chunk_tokens``: 512,
2,048 or 8,192 unless pinned); the best is kept, as a submitter tunes both. This is the
steady-state alternative to :func:`accelbook.inference.sweep.max_throughput`, which serves static
batches; a result says which it used in ``method``.

**Validation** (:func:`server_validation_table`): the MLPerf Inference v4.1 Server results for
Llama 2 70B on 8 × H100, 8 × H200 and 8 × MI300X (``data/mlperf_server_runs.toml``, each number with
its MLCommons source) against the prediction at the published limits and the dataset's published
length statistics (the mean prompt length is not published: a stated assumption). Each run is served
as its submission's code configures it where that is published (:func:`run_serving_config`: TP, the
token budget, the schedule, AMD's harness batcher, vLLM's measured host time a step); the mean
latencies are also reported at the run's own logged rate (``*_at_rate_*``), not only at the highest
rate found. Rows are marked ``set``: "check" (read to choose a mechanism: AMD's, whose 288 ms
minimum first-token latency pointed to the batcher) or "held-out" (only checked). Nothing is fitted. Errors are
``predicted / reported - 1``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from accelbook.checks import at_most, instance, output_fields, real, whole
from accelbook.specs.loader import (
    DATA_DIR,
    CatalogueError,
    check_keys,
    load_sources,
    parse_quantity,
    read_table_file,
)
from accelbook.specs.models import Model, get_model

from .estimate import MAX_CHIPS
from .serving import MAX_INSTANCES, SCHEDULES, simulate
from .serving_result import ServingResult
from .step import StepCost, step_cost
from .workload import workload

__all__ = ["ServingThroughput", "rate_meets_limits", "highest_rate", "continuous_throughput",
           "published_server_runs", "dataset_lengths", "server_validation_table", "TOLERANCE", "METHOD", "CHUNKS"]

#: the band the validation targets (issue 15): predicted within ±25 % of reported
TOLERANCE = 0.25
#: the prefill token budgets a step that :func:`continuous_throughput` tries unless one is pinned
CHUNKS = (512, 2048, 8192)
METHOD = "continuous batching: serving simulator at the highest Poisson rate meeting the latency limits"
_PATH = DATA_DIR / "mlperf_server_runs.toml"


@dataclass(frozen=True)
class ServingThroughput:
    """The highest rate that meets the limits, and what serving looks like there (SI units)."""

    method: str
    tp: int
    replicas: int
    chunk_tokens: int             # prefill tokens a step
    rate_per_s: float             # requests/s
    tokens_per_s: float           # rate · mean output length
    tokens_per_s_per_chip: float
    ttft_mean_s: float
    tpot_mean_s: float
    ttft_pct_s: float             # the limits' percentile of TTFT over requests
    tpot_pct_s: float             # ... and of TPOT
    percentile: float
    search_complete: bool         # False if max_seconds cut the bisection short
    cost: StepCost


# -- the limits ---------------------------------------------------------------------------------------------
def rate_meets_limits(result, ttft_limit_s: float, tpot_limit_s: float, percentile: float = 99.0):
    """``(ok, stats)``: whether a :class:`~accelbook.inference.serving_result.ServingResult` meets both
    limits at ``percentile`` over requests (TPOT over requests with at least two tokens), and the
    means and percentiles (``ttft_mean_s``, ``tpot_mean_s``, ``ttft_pct_s``, ``tpot_pct_s``)."""
    result = instance("result", result, ServingResult)
    ttft_limit_s = real("ttft_limit_s", ttft_limit_s, 0.0, lo_open=True, allow_inf=True)
    tpot_limit_s = real("tpot_limit_s", tpot_limit_s, 0.0, lo_open=True, allow_inf=True)
    percentile = real("percentile", percentile, 0.0, 100.0)
    multi = result.workload.output_len > 1
    tpot = result.tbt_mean_s[multi] if multi.any() else np.zeros(1)
    stats = {"ttft_mean_s": float(result.ttft_s.mean()), "tpot_mean_s": float(tpot.mean()),
             "ttft_pct_s": float(np.percentile(result.ttft_s, percentile)),
             "tpot_pct_s": float(np.percentile(tpot, percentile))}
    return stats["ttft_pct_s"] <= ttft_limit_s and stats["tpot_pct_s"] <= tpot_limit_s, stats


def highest_rate(cost: StepCost, replicas: int, prompt, output, ttft_limit_s: float, tpot_limit_s: float,
                 percentile: float = 99.0, n_requests: int = 24_576, seed: int = 0, chunk_tokens: int = 512,
                 steps: int = 12, max_seconds: float | None = None, kv_policy: str = "reserve",
                 schedule: str = "chunked", batcher=None):
    """Bisect the Poisson rate (module docstring): ``(rate, stats, complete)`` for the highest rate
    found that meets the limits, its :func:`rate_meets_limits` stats, and whether all ``steps`` ran.
    ``kv_policy``, ``schedule``, ``batcher``: the simulator's (:func:`~accelbook.inference.serving.simulate`).
    A ValueError if even ``λ_max / 4096`` misses the limits (the limits are out of reach)."""
    cost = instance("cost", cost, StepCost)
    replicas = at_most("replicas", whole("replicas", replicas), MAX_INSTANCES,
                       "accelbook.inference.serving.MAX_INSTANCES")
    steps = at_most("steps", whole("steps", steps, 0), 64, "a bisection of at most 64 steps")
    percentile = real("percentile", percentile, 0.0, 100.0)
    if cost.per_token_s + cost.comm_per_token_s <= 0:
        raise ValueError("cost.per_token_s + cost.comm_per_token_s must be > 0: they bound the highest rate tried")
    ttft_limit_s = real("ttft_limit_s", ttft_limit_s, 0.0, lo_open=True)
    tpot_limit_s = real("tpot_limit_s", tpot_limit_s, 0.0, lo_open=True)
    deadline = None if max_seconds is None else time.perf_counter() + real("max_seconds", max_seconds, 0.0)

    def run(rate):
        w = workload(n_requests, rate, "poisson", 1.0, prompt, output, seed)
        return rate_meets_limits(simulate(w, cost, n_instances=replicas, chunk_tokens=chunk_tokens, kv_policy=kv_policy,
                                          records=False,    # per-request times are all it reads
                                          schedule=schedule, batcher=batcher),
                                 ttft_limit_s, tpot_limit_s, percentile)

    w0 = workload(n_requests, 1.0, "poisson", 1.0, prompt, output, seed)
    tokens = float(np.mean(w0.prompt_len + w0.output_len))
    hi = replicas / (tokens * (cost.per_token_s + cost.comm_per_token_s))
    ok, stats = run(hi)
    if ok:
        return hi, stats, True
    lo, floor = hi, hi / 4096
    while True:
        lo /= 4.0
        if lo < floor:
            raise ValueError(f"no Poisson rate down to {lo * 4:.3g} requests/s meets TTFT p{percentile:g} <= "
                             f"ttft_limit_s = {ttft_limit_s} s and TPOT p{percentile:g} <= tpot_limit_s = "
                             f"{tpot_limit_s} s")
        ok, stats = run(lo)
        if ok:
            break
        hi = lo
    best = (lo, stats)
    for _ in range(steps):
        if deadline is not None and time.perf_counter() > deadline:
            return best[0], best[1], False
        mid = 0.5 * (lo + hi)
        ok, stats = run(mid)
        if ok:
            lo, best = mid, (mid, stats)
        else:
            hi = mid
    return best[0], best[1], True


def _tp_choices(model: Model, n_chips: int, tp):
    if tp is not None:
        return [whole("tp", tp)]
    return [t for t in range(1, min(n_chips, model.n_heads) + 1) if n_chips % t == 0 and model.n_heads % t == 0]


def continuous_throughput(model, chip, n_chips: int, precision: str, prompt, output, ttft_limit_s: float,
                          tpot_limit_s: float, percentile: float = 99.0, tp: int | None = None,
                          chunk_tokens: int | None = None, n_requests: int = 24_576, seed: int = 0, steps: int = 12,
                          max_seconds: float | None = None, kv_policy: str = "reserve", schedule: str = "chunked",
                          batcher=None, host_step_s: float = 0.0) -> ServingThroughput:
    """Steady-state throughput with continuous batching (module docstring) on ``n_chips`` chips:
    ``prompt`` and ``output`` are :func:`~accelbook.inference.workload.workload` length specs; ``tp``
    pins the tensor-parallel degree and ``chunk_tokens`` the prefill budget (default: each of
    :data:`CHUNKS`, best kept); ``max_seconds`` bounds each search; ``kv_policy`` is the simulator's
    ("reserve", TensorRT-LLM's default, or "paged", vLLM's), ``schedule`` and ``batcher`` too
    (:func:`~accelbook.inference.serving.simulate`); ``host_step_s``, the serving stack's host time a
    step (s), is added to the step cost's ``fixed_s``. A ValueError if no layout fits or meets the limits."""
    host_step_s = real("host_step_s", host_step_s, 0.0, 1.0)
    m = instance("model", model, Model, get_model)
    n_chips = at_most("n_chips", whole("n_chips", n_chips), MAX_CHIPS, "accelbook.inference.estimate.MAX_CHIPS")
    w0 = workload(n_requests, 1.0, "poisson", 1.0, prompt, output, seed)
    mean_in, mean_out = float(w0.prompt_len.mean()), float(w0.output_len.mean())
    longest = int((w0.prompt_len + w0.output_len).max())
    chunks = CHUNKS if chunk_tokens is None else (whole("chunk_tokens", chunk_tokens),)
    best, why = None, []
    for t in _tp_choices(m, n_chips, tp):
        try:
            cost = step_cost(m, chip, t, precision=precision, tp=t, input_len=max(1, round(mean_in)),
                             output_len=max(1, round(mean_out)))
            cost = replace(cost, fixed_s=cost.fixed_s + host_step_s)
            if cost.max_kv_tokens < longest:
                raise ValueError(f"KV cache holds {cost.max_kv_tokens} tokens, the longest request {longest}")
        except ValueError as err:
            why.append(f"tp {t}: {err}")
            continue
        for chunk in chunks:
            try:
                rate, stats, complete = highest_rate(cost, n_chips // t, prompt, output, ttft_limit_s, tpot_limit_s,
                                                     percentile, n_requests, seed, chunk, steps, max_seconds,
                                                     kv_policy, schedule, batcher)
            except ValueError as err:
                why.append(f"tp {t}, chunk {chunk}: {err}")
                continue
            if best is None or rate > best.rate_per_s:
                best = ServingThroughput(METHOD, t, n_chips // t, chunk, rate, rate * mean_out,
                                         rate * mean_out / n_chips, stats["ttft_mean_s"], stats["tpot_mean_s"],
                                         stats["ttft_pct_s"], stats["tpot_pct_s"], float(percentile), complete, cost)
    if best is None:
        raise ValueError(f"{m.name} on {n_chips} x {chip}: no layout serves under the limits ({'; '.join(why)})")
    return output_fields("inference.continuous_throughput", best)


# -- the published runs -------------------------------------------------------------------------------------
_RUN_KEYS = {"name", "model", "chip", "n_chips", "precision", "precision_note", "dataset", "limits", "tokens_per_s",
             "ttft_mean_ms", "tpot_mean_ms", "set", "scheduled_per_s"}
#: a run's own serving configuration, where its submission's code publishes it (data file header)
_RUN_OPTIONAL = {"tp", "schedule", "prefill_budget_count", "batcher_window_ms", "batcher_batch_count", "host_step_ms"}
#: a run's role: read to choose a serving mechanism, or only checked
SETS = ("check", "held-out")
_DATASET_KEYS = {"name", "samples_count", "input_mean_count", "input_sigma_ratio", "input_max_count",
                 "output_mean_count", "output_sigma_ratio", "output_max_count"}
_LIMIT_KEYS = {"ttft_ms", "tpot_ms", "latency_percentile_count"}
_UNITS = {"ms": "ms", "count": "count", "ratio": "ratio", "per_s": "count"}


def _quantities(path, eid, entry, keys, sources):
    out = {}
    for k in keys:
        if k not in entry:
            continue
        if isinstance(entry[k], dict):
            unit = next(u for suffix, u in _UNITS.items() if k.endswith(suffix))
            out[k] = parse_quantity(path, eid, k, entry[k], unit, sources)
        else:
            out[k] = entry[k]
    return out


def published_server_runs(path=None) -> dict:
    """``{"limits": ..., "datasets": ..., "runs": ...}`` from ``data/mlperf_server_runs.toml``: each
    entry's numbers as SI :class:`~accelbook.specs.loader.Quantity` (value and provenance)."""
    path = path or _PATH
    sources = load_sources()
    raw = read_table_file(path)
    check_keys(path, None, raw, required={"limits", "datasets", "runs"}, optional=set())
    out = {}
    for section, keys, optional in (("limits", _LIMIT_KEYS, set()), ("datasets", _DATASET_KEYS, set()),
                                    ("runs", _RUN_KEYS, _RUN_OPTIONAL)):
        out[section] = {}
        for eid, entry in raw[section].items():
            check_keys(path, f"{section}.{eid}", entry, required=keys, optional=optional)
            if section == "runs" and entry["set"] not in SETS:
                raise CatalogueError(path, f"runs.{eid}", "set", f"one of {SETS}")
            if section == "runs" and entry.get("schedule", "chunked") not in SCHEDULES:
                raise CatalogueError(path, f"runs.{eid}", "schedule", f"one of {SCHEDULES}")
            out[section][eid] = _quantities(path, f"{section}.{eid}", entry, keys | optional, sources)
    return out


def dataset_lengths(dataset: dict):
    """The ``(prompt, output)`` length specs of a dataset entry: ``("lognormal", mean, sigma, max)``."""
    return tuple(("lognormal", dataset[f"{s}_mean_count"].value, dataset[f"{s}_sigma_ratio"].value,
                  int(dataset[f"{s}_max_count"].value)) for s in ("input", "output"))


_UNMODELLED = {
    "tokens_per_s": "throughput: host time a step only where measured for the stack (vLLM's), one GEMM efficiency "
                    "for every batch; the mean prompt length is an assumption (none published), and the token count "
                    "a request costs scales with it",
    "ttft_mean_ms": "TTFT: the scheduler and the harness batching are the submission's where its code publishes "
                    "them, otherwise FCFS chunked prefill at the next iteration; the prefill time scales with the "
                    "assumed mean prompt length, and the load generator's and server's own latency are not modelled",
    "tpot_mean_ms": "TPOT: the simulator runs the fewest residents that carry the rate (the batch is capped only by "
                    "KV capacity); the submitters' stacks hold more sequences at a longer step (Little's law on the "
                    "reported mean latency), spending the slack under the 200 ms limit",
}


def run_serving_config(run: dict) -> dict:
    """The :func:`continuous_throughput` keywords a published run's own serving configuration pins (data
    file header): ``tp``, ``chunk_tokens`` (its prefill budget), ``schedule``, ``batcher`` and
    ``host_step_s``; the simulator's defaults (every layout and budget tried, chunked prefill, no
    batcher, no host time) where the run publishes none."""
    out = {"schedule": run.get("schedule", "chunked"), "batcher": None, "host_step_s": 0.0}
    if "tp" in run:
        out["tp"] = run["tp"]
    if "prefill_budget_count" in run:
        out["chunk_tokens"] = int(run["prefill_budget_count"].value)
    if ("batcher_window_ms" in run) != ("batcher_batch_count" in run):
        raise ValueError("a run's batcher needs both batcher_window_ms and batcher_batch_count")
    if "batcher_window_ms" in run:
        out["batcher"] = (run["batcher_window_ms"].value, int(run["batcher_batch_count"].value))
    if "host_step_ms" in run:
        out["host_step_s"] = run["host_step_ms"].value
    return out


def server_validation_table(path=None, n_requests: int = 24_576, steps: int = 12,
                            max_seconds: float | None = None, seed: int = 0, kv_policy: str = "reserve") -> pd.DataFrame:
    """Reported against predicted for every MLPerf Server run (module docstring): one row per run with
    tokens/s, mean TTFT and mean TPOT reported, predicted and ``error = predicted / reported - 1``,
    the layout and rate found, and a note on what the model leaves out where an error exceeds ±25 %.
    ``kv_policy``: the simulator's; the default "reserve" is the default scheduler of TensorRT-LLM, the
    H100 and H200 submissions' stack ("paged" is vLLM's, the MI300X submission's stack)."""
    data = published_server_runs(path)
    rows = []
    for rid, run in data["runs"].items():
        lim, ds = data["limits"][run["limits"]], data["datasets"][run["dataset"]]
        prompt, output = dataset_lengths(ds)
        serve = run_serving_config(run)
        pred = continuous_throughput(run["model"], run["chip"], run["n_chips"], run["precision"], prompt, output,
                                     lim["ttft_ms"].value, lim["tpot_ms"].value, lim["latency_percentile_count"].value,
                                     n_requests=n_requests, seed=seed, steps=steps, max_seconds=max_seconds,
                                     kv_policy=kv_policy, **serve)
        # the latencies at the rate the run was measured at (the log's scheduled samples per second)
        w = workload(n_requests, run["scheduled_per_s"].value, "poisson", 1.0, prompt, output, seed)
        _, at = rate_meets_limits(simulate(w, pred.cost, n_instances=pred.replicas, chunk_tokens=pred.chunk_tokens,
                                           kv_policy=kv_policy, records=False, schedule=serve["schedule"],
                                           batcher=serve["batcher"]),
                                  lim["ttft_ms"].value, lim["tpot_ms"].value, lim["latency_percentile_count"].value)
        row = {"id": rid, "system": run["name"], "set": run["set"], "chip": run["chip"], "n_chips": run["n_chips"],
               "tp": pred.tp, "replicas": pred.replicas, "chunk_tokens": pred.chunk_tokens,
               "schedule": serve["schedule"], "batcher": serve["batcher"] is not None,
               "host_step_ms": serve["host_step_s"] * 1e3, "rate_per_s": pred.rate_per_s}
        predicted = {"tokens_per_s": pred.tokens_per_s, "ttft_mean_ms": pred.ttft_mean_s * 1e3,
                     "tpot_mean_ms": pred.tpot_mean_s * 1e3}
        misses = []
        for k, at_s in (("ttft_mean_ms", at["ttft_mean_s"]), ("tpot_mean_ms", at["tpot_mean_s"])):
            rep = run[k].value * 1e3
            row[f"{k}_at_rate_predicted"], row[f"{k}_at_rate_error"] = at_s * 1e3, at_s * 1e3 / rep - 1
        for k, p in predicted.items():
            rep = run[k].value * (1e3 if k.endswith("_ms") else 1.0)     # parse_quantity gave seconds
            row[f"{k}_reported"], row[f"{k}_predicted"], row[f"{k}_error"] = rep, p, p / rep - 1
            if abs(p / rep - 1) > TOLERANCE:
                misses.append(_UNMODELLED[k])
        row.update({"ttft_p99_ms_predicted": pred.ttft_pct_s * 1e3, "tpot_p99_ms_predicted": pred.tpot_pct_s * 1e3,
                    "search_complete": pred.search_complete, "method": pred.method,
                    "source": run["tokens_per_s"].provenance.source.title,
                    "note": "; ".join(misses) if misses else "within ±25 %"})
        rows.append(row)
    return pd.DataFrame(rows)
