"""Running a sweep: configurations cut into tasks (:mod:`.plan`), each task evaluated on a Dask worker
(:mod:`.evaluate`) and written to its Parquet file (:mod:`.store`), the files read back as one tidy
DataFrame.

``run(fn, grid)`` starts a :class:`~distributed.LocalCluster` (one single-threaded worker process per
core: the models hold the GIL in Python and Numba alike) when no client is given; any
``dask.distributed.Client`` works the same, on one machine or many (``Client("tcp://scheduler:8786")``,
dask-jobqueue on Slurm, dask-kubernetes, Dask Gateway): the code does not change, only the client and,
for many machines, an ``out_dir`` that every worker can write (a shared file system).

Reliability. A worker that dies mid-task (killed, out of memory) is noticed by the scheduler, which
runs its tasks again elsewhere (up to ``distributed.scheduler.allowed-failures`` times); a task that
raises is retried ``retries`` times. Either way a task's rows exist once: the file is named by the
task and written atomically. A task that still fails becomes error rows for its configurations. An
interrupted ``run`` (a kernel interrupt, a closed laptop) is resumed by the same call with the same
``out_dir``: finished tasks are read, not run.
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
import time
import uuid

import pandas as pd

from accelbook.checks import fraction, one_of, real, whole

from . import store
from .evaluate import PER, evaluate, tidy
from .grid import CONFIG_ID, ERROR, blocks, configurations, grid_hash
from .plan import Plan, measure_cost, measure_overhead, plan

SERIAL = "serial"


def local_client(n_workers: int | None = None, threads_per_worker: int = 1, **cluster_kw):
    """A ``Client`` on a new ``LocalCluster`` of worker processes (default: one per core)."""
    from distributed import Client, LocalCluster

    kw = dict(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=threads_per_worker, processes=True,
              dashboard_address=":0", silence_logs=logging.ERROR)
    kw.update(cluster_kw)
    return Client(LocalCluster(**kw))


def function_name(fn) -> str:
    """What the manifest records of the model function (a partial's keywords included)."""
    if isinstance(fn, functools.partial):
        return f"{function_name(fn.func)}(*{fn.args!r}, **{sorted(fn.keywords.items())!r})"
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def run_task(fn, per: str, block: pd.DataFrame, out_dir: str, task: int) -> dict:
    """One task: evaluate ``block`` and write its file. Returns a small summary, not the rows."""
    t0 = time.perf_counter()
    rows = evaluate(fn, block, per)
    store.write_part(rows, out_dir, task)
    return {"task": task, "rows": len(rows), "errors": int(rows[ERROR].notna().sum()),
            "seconds": time.perf_counter() - t0, "pid": os.getpid()}


def _failed_task(block: pd.DataFrame, out_dir: str, task: int, exc: BaseException) -> None:
    rows = pd.DataFrame({CONFIG_ID: block[CONFIG_ID].to_numpy(), ERROR: f"task failed: {type(exc).__name__}: {exc}"})
    store.write_part(tidy(rows, block), out_dir, task)


def _progress(total: int, initial: int, show: bool):
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="task", desc="sweep")


def _execute(fn, per, configs, todo, out_dir, client, retries, bar) -> list[dict]:
    """Run the unfinished tasks ``todo`` (task -> (start, stop)) in this process or on the client."""
    done = []
    if client == SERIAL:
        for task, (a, b) in todo.items():
            done.append(run_task(fn, per, configs.iloc[a:b], out_dir, task))
            bar and bar.update(1)
        return done
    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    futures = {client.submit(run_task, fn, per, configs.iloc[a:b], out_dir, task, key=f"accelbook-sweep-{token}-{task}",
                             retries=retries, pure=False): task for task, (a, b) in todo.items()}
    try:
        for fut in as_completed(futures):
            task = futures[fut]
            try:
                done.append(fut.result())
            except Exception as exc:     # retries spent, or the worker died too often: its rows say so
                a, b = todo[task]
                _failed_task(configs.iloc[a:b], out_dir, task, exc)
            bar and bar.update(1)
    finally:
        client.cancel(list(futures))     # after an interrupt: stop what is left; finished files stay
    return done


def _plan(fn, per, configs, client, block_size, target, max_task_s, probe) -> Plan:
    n = len(configs)
    threads = 1 if client == SERIAL else max(1, sum(client.nthreads().values()))
    if block_size is not None and not probe:
        return plan(n, float("nan"), float("nan"), threads, target, block_size)
    o = 0.0 if client == SERIAL else measure_overhead(client)
    c = measure_cost(fn, configs, per)
    return plan(n, o, c, threads, target, block_size, max_task_s)


def _check_run_args(fn, per, client, block_size, target_overhead, retries, max_task_s, **flags) -> None:
    """Every argument of :func:`run` checked at its edge, whichever mode uses it."""
    if not callable(fn):
        raise TypeError(f"fn must be a function of a configuration, got {type(fn).__name__} {fn!r}")
    one_of("per", per, PER)
    if not (client is None or client == SERIAL or (hasattr(client, "submit") and hasattr(client, "nthreads"))):
        raise TypeError(f"client must be None, {SERIAL!r} or a dask.distributed.Client, got {client!r}")
    if block_size is not None:
        whole("block_size", block_size)
    fraction("target_overhead", target_overhead, zero_ok=False)
    whole("retries", retries, lo=0)
    real("max_task_s", max_task_s, lo_open=True)
    for name, v in flags.items():
        if not isinstance(v, bool):
            raise TypeError(f"{name} must be True or False, got {v!r}")


def run(fn, grid, per: str = "config", client=None, out_dir=None, block_size: int | None = None,
        target_overhead: float = 0.05, retries: int = 2, progress: bool = True, lazy: bool = False,
        overwrite: bool = False, max_task_s: float = 60.0, probe: bool = True):
    """Evaluate ``fn`` on every configuration of ``grid`` and return one tidy DataFrame (module docstring).

    ``per``: "config" (``fn(**config)``) or "block" (``fn(configs_frame)``), :mod:`.evaluate`.
    ``client``: a ``dask.distributed.Client``; None starts a local cluster for this call; "serial" runs
    in this process (the reference the distributed result equals). ``out_dir``: where the task files
    go (a temporary folder, removed after reading, if None); the same ``out_dir`` resumes. ``block_size``:
    configurations per task (default from a probe: overhead under ``target_overhead`` of the work).
    ``lazy``: return a Dask DataFrame over the files instead (needs ``out_dir``). The plan, and which
    tasks ran and which were found finished, are in ``df.attrs`` (a Dask DataFrame has no ``attrs``: with
    ``lazy``, the plan is in ``out_dir``'s manifest, and ``sweep.read(out_dir)`` gives the eager frame).
    """
    _check_run_args(fn, per, client, block_size, target_overhead, retries, max_task_s,
                    progress=progress, lazy=lazy, overwrite=overwrite, probe=probe)
    if lazy and out_dir is None:
        raise ValueError("lazy=True reads the task files back: give an out_dir")
    configs = configurations(grid)
    own_client = client is None
    client = local_client() if own_client else client
    tmp = out_dir is None
    out_dir = tempfile.mkdtemp(prefix="accelbook-sweep-") if tmp else str(out_dir)
    try:
        manifest = {"version": 1, "function": function_name(fn), "per": per, "grid_hash": grid_hash(configs),
                    "n_configs": len(configs)}
        resumed = store.open_manifest(out_dir, manifest, overwrite)
        if "block_size" in resumed:
            p = _plan(fn, per, configs, client, resumed["block_size"], target_overhead, max_task_s, probe=False)
        else:
            p = _plan(fn, per, configs, client, block_size, target_overhead, max_task_s, probe)
            store.open_manifest(out_dir, {**manifest, "block_size": p.block_size, "n_tasks": p.n_tasks,
                                          "plan": p.as_dict()}, overwrite=True)
        store.clean_temporary(out_dir)
        tasks = dict(enumerate(blocks(len(configs), p.block_size)))
        skipped = store.finished(out_dir, len(tasks))
        todo = {k: v for k, v in tasks.items() if k not in skipped}
        bar = _progress(len(tasks), len(skipped), progress)
        try:
            done = _execute(fn, per, configs, todo, out_dir, client, retries, bar)
        finally:
            bar and bar.close()
        df = store.read(out_dir, lazy=lazy)
        if lazy:
            return df
        df.attrs.update(plan=p.as_dict(), tasks_run=sorted(d["task"] for d in done), tasks_skipped=sorted(skipped),
                        out_dir=None if tmp else out_dir)
        return df
    finally:
        if tmp:
            store.remove(out_dir)
        if own_client:
            client.close()
