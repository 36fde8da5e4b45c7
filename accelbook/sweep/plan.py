"""How big a task is: a probe of the scheduler's per-task overhead and of the model's cost per
configuration, and the block size that keeps the overhead under a target share of the work.

A task of ``b`` configurations costs ``b·c`` seconds of model work (``c`` per configuration) and
``o`` seconds of overhead: scheduling, shipping the block, writing its Parquet file, reporting back.
The overhead's share of the work is ``o / (b·c)``; to keep it at most ``target`` (5 %),

    b ≥ b_min = ceil(o / (target·c))

Larger tasks cost nothing more in overhead but balance worse across workers and lose more work to an
interruption, so the block size is ``b = max(b_min, min(b_balance, b_cap))``, with ``b_balance =
ceil(n / (4·threads))`` (four tasks per worker thread, so that a slow task does not leave the others
idle at the end) and ``b_cap = ceil(max_task_s / c)`` (a task of at most ``max_task_s`` of work).

``o`` is measured on the cluster itself (:func:`measure_overhead`): ``m`` tasks that do no model work
but write a one-row Parquet file as a real task does, submitted together; the wall time ``T`` of the
batch, once the workers are warm, gives ``o = T·threads / m``, the worker time each task takes away
from model work. ``c`` is measured in this process (:func:`measure_cost`) on a few configurations
spread over the grid, after one untimed call that pays imports and Numba compilation.
Worked number: ``o`` = 8 ms, ``c`` = 2 ms: ``b_min = ceil(0.008 / (0.05·0.002)) = 80``.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from accelbook.checks import fraction, positive, whole

from .evaluate import evaluate
from .grid import CONFIG_ID, ERROR
from .store import write_part

#: tasks per worker thread that the block size aims for (load balance at the end of a sweep)
TASKS_PER_THREAD = 4


@dataclass(frozen=True)
class Plan:
    """How a sweep is cut into tasks, and why."""

    n_configs: int
    block_size: int
    n_tasks: int
    threads: int
    overhead_s: float          # o: per task, worker time (NaN if not measured)
    per_config_s: float        # c: model work per configuration (NaN if not measured)
    overhead_share: float      # o / (b·c) at the chosen block size
    reason: str

    def as_dict(self) -> dict:
        return asdict(self)


def _probe_task(directory: str, k: int) -> int:
    frame = pd.DataFrame({CONFIG_ID: [k], "x": [0.0], ERROR: [None]})
    write_part(frame, directory, k)
    return k


def measure_overhead(client, tasks_per_thread: int = 10, rounds: int = 2) -> float:
    """Per-task overhead ``o`` in seconds of worker time (module docstring); the last of ``rounds``
    batches counts (the first warms the workers up)."""
    threads = max(1, sum(client.nthreads().values()))
    m = max(8, whole("tasks_per_thread", tasks_per_thread) * threads)
    o = math.nan
    with tempfile.TemporaryDirectory(prefix="accelbook-probe-") as d:
        for r in range(whole("rounds", rounds)):
            t0 = time.perf_counter()
            futures = [client.submit(_probe_task, d, k, pure=False) for k in range(m)]
            client.gather(futures)
            o = (time.perf_counter() - t0) * threads / m
            del futures
    return o


def measure_cost(fn, configs: pd.DataFrame, per: str = "config", max_configs: int = 16,
                 max_s: float = 2.0) -> float:
    """Model seconds per configuration ``c``, timed in this process on up to ``max_configs``
    configurations spread evenly over the grid, evaluated together as one task would (about
    ``max_s`` seconds at most, judged from one untimed warm-up call)."""
    n = len(configs)
    idx = np.unique(np.linspace(0, n - 1, min(n, whole("max_configs", max_configs))).round().astype(int))
    t0 = time.perf_counter()
    evaluate(fn, configs.iloc[idx[:1]], per)        # warm-up: imports, Numba compilation, catalogue
    first = time.perf_counter() - t0
    k = int(min(len(idx), max(1, max_s // max(first, 1e-6))))
    sample = configs.iloc[idx[np.linspace(0, len(idx) - 1, k).round().astype(int)]]
    t0 = time.perf_counter()
    evaluate(fn, sample, per)
    return max((time.perf_counter() - t0) / len(sample), 1e-9)


def choose_block_size(n_configs: int, overhead_s: float, per_config_s: float, threads: int,
                      target: float = 0.05, max_task_s: float = 60.0) -> tuple[int, str]:
    """``b = max(b_min, min(b_balance, b_cap))`` (module docstring), and which term decided it."""
    n, threads = whole("n_configs", n_configs), whole("threads", threads)
    target = fraction("target", target, zero_ok=False)
    o, c = positive("overhead_s", overhead_s, allow_zero=True), positive("per_config_s", per_config_s)
    b_min = max(1, math.ceil(o / (target * c)))
    b_balance = max(1, math.ceil(n / (TASKS_PER_THREAD * threads)))
    b_cap = max(1, math.ceil(positive("max_task_s", max_task_s) / c))
    b = min(n, max(b_min, min(b_balance, b_cap)))
    if b == n:
        why = "the whole grid is one task"
    elif b == b_min and b_min >= min(b_balance, b_cap):
        why = f"overhead ≤ {target:.0%} of the work needs ≥ {b_min} configurations a task"
    elif b == b_cap:
        why = f"a task holds at most {max_task_s:g} s of work"
    else:
        why = f"{TASKS_PER_THREAD} tasks per worker thread (overhead needs only ≥ {b_min})"
    return b, why


def plan(n_configs: int, overhead_s: float, per_config_s: float, threads: int, target: float = 0.05,
         block_size: int | None = None, max_task_s: float = 60.0) -> Plan:
    """A :class:`Plan`: the given ``block_size``, or :func:`choose_block_size`'s."""
    if block_size is not None:
        b, why = min(whole("block_size", block_size), n_configs), "block size given"
    else:
        b, why = choose_block_size(n_configs, overhead_s, per_config_s, threads, target, max_task_s)
    share = overhead_s / (b * per_config_s) if per_config_s > 0 else math.nan
    return Plan(n_configs, b, math.ceil(n_configs / b), threads, float(overhead_s), float(per_config_s),
                float(share), why)
