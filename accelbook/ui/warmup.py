"""Compile the Numba kernels ahead, in parallel, so that a fresh install's first results come in seconds.

Every kernel is ``@njit(cache=True)``: compiled on its first call, then loaded from Numba's on-disk cache
(``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the source). On a fresh install the first call waits
for the compiler: notebook 04's first estimate about 45 s of CPU, notebook 05's first routing 18 s, notebook
03's first hop count 10 s (``benchmarks/bench_cold_start.py``, 2 cores, December 2026). This module makes
those first calls ahead:
each task is one notebook's: its first model calls and every dashboard of it at its default settings (the
same calls, with the same argument types, the notebook makes, so the cache it fills is the one the notebook
reads); the tasks run in ``jobs`` processes at once, the slowest first.

Run it once after installing: ``python -m accelbook.ui.warmup`` (``--jobs N``, default: the CPU count),
or :func:`compile_all` from Python. It changes no number: it only fills the cache. Measured on 2 cores: the
warm-up takes 89 s (notebook 04's kernels are most of it), and afterwards every notebook's first result comes
within 6.1 s of starting a fresh kernel and its first dashboard within 8.4 s, imports included.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing
import os
import sys
import time
from typing import Callable

from accelbook.checks import whole


def _first_calls() -> dict[str, Callable[[], object]]:
    """The notebooks' first model calls that compile kernels no dashboard default does, by notebook (the
    notebooks' own arguments: 03's torus hop counts, 04's layout estimate, 05's routing, 06's estimate)."""
    import accelbook as ab
    from accelbook import inference, moe, training
    from accelbook.network import topology

    return {
        "nb03": lambda: topology.hop_stats(topology.torus((4, 4, 4))),
        "nb04": lambda: training.estimate(ab.get_model("llama-3.1-405b"), "h100", 8192, 2048 * 8192, 8192,
                                          tp=8, pp=16, zero_stage=1, recompute="selective"),
        "nb05": lambda: moe.simulate_routing(4096, 256, 8, n_batches=40, seed=0),
        "nb06": lambda: inference.estimate("llama-3.1-70b", "h200", 1, 1, 2048, 256, "fp8"),
    }


#: the notebooks whose kernels take longest to compile, started first (benchmarks/bench_cold_start.py):
#: notebook 04's training kernels alone take about as long as all the others together
SLOW_FIRST = ("nb04", "nb05", "nb06", "nb03", "nb11", "nb02", "nb07", "nb08")


def task_names() -> list[str]:
    """Every warm-up task, one per notebook (``nb00`` ... ``nb11``: its dashboards and first calls), slowest
    first. A notebook's kernels compile in one process: its dashboards share most of them."""
    from accelbook.ui.dashboards import NOTEBOOK_MODULES

    names = [m.__name__.rsplit(".", 1)[-1][:4] for m in NOTEBOOK_MODULES]
    return sorted(names, key=lambda n: (SLOW_FIRST.index(n) if n in SLOW_FIRST else len(SLOW_FIRST), names.index(n)))


def run_task(name: str) -> tuple[str, float, str]:
    """Run one notebook's task in this process: its first calls, then each dashboard at its defaults.
    Returns (its name, seconds, "" or the errors it met). An error is reported, not raised: a dashboard
    whose defaults have no result still compiled what it reached."""
    from accelbook.ui.dashboards import NOTEBOOK_MODULES

    t0 = time.perf_counter()
    modules = [m for m in NOTEBOOK_MODULES if m.__name__.rsplit(".", 1)[-1].startswith(name + "_")]
    if len(modules) != 1:
        return name, 0.0, f"unknown warm-up task {name!r}"
    calls = [_first_calls()[name]] if name in _first_calls() else []
    calls += [lambda f=factory: f().render() for factory in modules[0].SPECS]
    errors = []
    for call in calls:
        try:
            call()
        except Exception as e:  # noqa: BLE001 - a warm-up reports and goes on
            errors.append(f"{type(e).__name__}: {e}")
    return name, time.perf_counter() - t0, "; ".join(errors)


def compile_all(jobs: int | None = None, names: list[str] | None = None, verbose: bool = False) -> list[tuple]:
    """Run the warm-up tasks (all of :func:`task_names`, or ``names``) in ``jobs`` processes (default: the
    CPU count); returns (name, seconds, error) per task, in the order they finished."""
    jobs = whole("jobs", jobs if jobs is not None else (os.cpu_count() or 1))
    names = task_names() if names is None else list(names)
    out = []
    if jobs == 1:
        for n in names:
            out.append(run_task(n))
            if verbose:
                _report(out[-1])
        return out
    ctx = multiprocessing.get_context("spawn")      # a fresh interpreter: no threads or Numba state inherited
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        for fut in cf.as_completed([pool.submit(run_task, n) for n in names]):
            out.append(fut.result())
            if verbose:
                _report(out[-1])
    return out


def _report(row: tuple) -> None:
    name, seconds, err = row
    print(f"  {name:24} {seconds:6.1f} s" + (f"  ({err})" if err else ""), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accelbook.ui.warmup", description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None, help="processes at once (default: the CPU count)")
    ap.add_argument("--quiet", action="store_true", help="print only the total")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = compile_all(args.jobs, verbose=not args.quiet)
    print(f"warm-up: {len(rows)} tasks in {time.perf_counter() - t0:.1f} s "
          f"(Numba cache: {os.environ.get('NUMBA_CACHE_DIR') or 'beside the sources'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
