"""Cold start: seconds to each notebook's first result on a fresh install with an empty Numba cache.

For every notebook this starts a fresh Python process with ``NUMBA_CACHE_DIR`` pointing at a new,
empty temporary folder (so every ``@njit(cache=True)`` kernel compiles as on a first install) and runs
the notebook's code cells in an IPython shell, in order, up to its first dashboard (the first cell
calling ``show(...)``: the dashboard's default recompute), or up to its first model cell when it has no
dashboard. It prints, per notebook, in seconds:

- ``import``: the cells up to ``notebook.setup()`` (the install cell, the imports, the renderer);
- ``first``: from the start to the end of the first cell after them (the notebook's first model call,
  its first result);
- ``dashboard``: from the start to the end of the first ``show(...)`` cell (every cell before it run too);
- ``cpu 1st`` / ``cpu d.``: the CPU seconds of the same two (all threads): what the wall times would be on
  an idle machine, when other processes share the CPUs;
- ``numba``: of that, the seconds spent compiling (or loading) Numba kernels (outermost calls), how many
  kernels and overloads were compiled, and the slowest of the package's kernels.

Goal: ``first`` and ``dashboard`` at most 10 s on a 2-core machine (issue 32).

Measured (December 2026, 2 cores shared with other jobs, so CPU seconds are the comparable figure): with an
empty cache, notebook 04's first result took 45.6 CPU-s (its training kernels: ``_evaluate`` and the search),
05's 17.5, 03's 10.5, the first dashboards of 02 and 07 12.9 and 12.3. After ``python -m accelbook.ui.warmup``
(89 s once, 2 jobs) every notebook's first result came within 6.1 s wall and its first dashboard within 8.4 s.

Usage: python benchmarks/bench_cold_start.py [--notebooks 01 04] [--warm] [--kernels 3] [--strict]
``--warm`` runs ``python -m accelbook.ui.warmup`` once into an empty cache (its time printed apart) and
then every notebook on that cache: what a fresh install costs once the warm-up has run. Exit status 0,
or 1 with ``--strict`` when a notebook misses the goal. This is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 10.0

# Runs inside the fresh process: the cells of one notebook, timed, with every Numba compile timed.
CHILD = r"""
import json, sys, time
t_start = time.perf_counter()
from numba.core import dispatcher

compiles = []          # (kernel, seconds including the kernels it compiled, outermost?)
depth = [0]
_compile = dispatcher.Dispatcher.compile

def _timed(self, sig):
    t0 = time.perf_counter()
    depth[0] += 1
    try:
        return _compile(self, sig)
    finally:
        depth[0] -= 1
        compiles.append((self.py_func.__module__ + "." + self.py_func.__qualname__, time.perf_counter() - t0,
                         depth[0] == 0))

dispatcher.Dispatcher.compile = _timed
from IPython.core.interactiveshell import InteractiveShell

cells = json.loads(sys.argv[1])
shell = InteractiveShell.instance()
out = []
for i, src in enumerate(cells):
    t0 = time.perf_counter()
    r = shell.run_cell(src, silent=True)
    n_compiles = len(compiles)
    out.append({"cell": i, "end_s": time.perf_counter() - t_start, "cell_s": time.perf_counter() - t0,
                "cpu_s": time.process_time(),
                "ok": r.success, "error": repr(r.error_in_exec or r.error_before_exec or "")[:300],
                "compile_s": sum(t for _, t, top in compiles if top), "n_compiles": n_compiles})
kernels = {}
for name, t, top in compiles:
    if top and name.startswith("accelbook."):
        kernels[name] = kernels.get(name, 0.0) + t
print("@@" + json.dumps({"cells": out, "kernels": sorted(kernels.items(), key=lambda kv: -kv[1])}))
"""


def first_cells(path: Path) -> tuple[list[str], int, int, int]:
    """The code cells up to the notebook's first dashboard, and the indices of the set-up cell, of the first
    model cell and of the first ``show(`` cell (or of the first model cell when there is none)."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    srcs = ["".join(c["source"]) for c in cells]
    setup = next(i for i, s in enumerate(srcs) if "notebook.setup()" in s)
    first = setup + 1
    dash = next((i for i, s in enumerate(srcs) if i > setup and "show(" in s and "import" not in s.split("show(")[0][-40:]),
                None)
    last = dash if dash is not None else first
    return srcs[:last + 1], setup, first, last


def run_notebook(path: Path, cache_dir: str) -> dict:
    srcs, setup, first, last = first_cells(path)
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(srcs)], cwd=ROOT / "notebooks", env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("@@")), None)
    if line is None:
        raise SystemExit(f"{path.name}: the child process failed:\n{p.stderr[-3000:]}")
    res = json.loads(line[2:])
    cells = res["cells"]
    bad = [c for c in cells if not c["ok"]]
    return {"notebook": path.stem, "wall_s": wall, "import_s": cells[setup]["end_s"],
            "first_s": cells[first]["end_s"], "dashboard_s": cells[last]["end_s"],
            "first_cpu_s": cells[first]["cpu_s"], "dashboard_cpu_s": cells[last]["cpu_s"],
            "has_dashboard": last != first or "show(" in srcs[last], "compile_s": cells[last]["compile_s"],
            "n_compiles": cells[last]["n_compiles"], "kernels": res["kernels"], "errors": [c["error"] for c in bad]}


def warm_up(cache_dir: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "accelbook.ui.warmup", "--quiet"], cwd=ROOT, env=env, check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebooks", nargs="*", help="notebook numbers (default: all), e.g. 01 04")
    ap.add_argument("--warm", action="store_true", help="run python -m accelbook.ui.warmup into the empty cache first")
    ap.add_argument("--kernels", type=int, default=3, help="the slowest kernels to name per notebook")
    ap.add_argument("--strict", action="store_true", help=f"exit 1 when a notebook misses {GOAL_S:g} s")
    args = ap.parse_args(argv)
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.notebooks:
        paths = [p for p in paths if p.name[:2] in args.notebooks]
    print(f"cold start, empty Numba cache per notebook, {os.cpu_count()} CPUs; goal {GOAL_S:g} s"
          + (" (after python -m accelbook.ui.warmup)" if args.warm else ""))
    print(f"{'notebook':30} {'import':>7} {'first':>7} {'dashb.':>7} {'cpu 1st':>7} {'cpu d.':>7} {'numba':>7} "
          f"{'kernels':>7}  slowest kernels (s)")
    missed = []
    with tempfile.TemporaryDirectory(prefix="bench_cold_warm_") as warm_cache:
        if args.warm:     # one warm-up, as after an install; then every notebook reads that cache
            print(f"warm-up into the empty cache: {warm_up(warm_cache):.1f} s", flush=True)
        for p in paths:
            with tempfile.TemporaryDirectory(prefix="bench_cold_") as cache:
                r = run_notebook(p, warm_cache if args.warm else cache)
            slow = ", ".join(f"{k.split('.')[-1]} {t:.1f}" for k, t in r["kernels"][:args.kernels])
            dash, cpu_d = ((f"{r['dashboard_s']:7.1f}", f"{r['dashboard_cpu_s']:7.1f}") if r["has_dashboard"]
                           else (f"{'-':>7}", f"{'-':>7}"))
            print(f"{r['notebook'][:30]:30} {r['import_s']:7.1f} {r['first_s']:7.1f} {dash} {r['first_cpu_s']:7.1f} "
                  f"{cpu_d} {r['compile_s']:7.1f} {r['n_compiles']:7d}  {slow}", flush=True)
            for e in r["errors"]:
                print(f"    error in a cell: {e}")
            if max(r["first_s"], r["dashboard_s"]) > GOAL_S or r["errors"]:
                missed.append(r["notebook"])
    print(f"missed the goal: {', '.join(missed) or 'none'}")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
