"""Layout search speed: the issue's goal, and the Numba kernel against a plain-Python reference.

1. Goal (issue 5): every layout of a 405B model on 16,384 chips in under 2 s on this machine.
   ``training.search`` enumerates and evaluates in one Numba kernel, then builds the table.
2. The same search done the slow way, in one run: ``tests/naive_training.py`` enumerates with
   itertools and evaluates each layout with the plain-Python step written from the docstrings
   (``naive_training.reference_step``, no Numba); the tests check both give the same results. Prints layouts per second for each and the ratio.

Usage: python benchmarks/bench_training.py
A measurement, not a test: exit status 0.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from accelbook import training  # noqa: E402
from accelbook.specs.chips import get_chip, usable_memory_bytes  # noqa: E402
from accelbook.specs.clusters import cluster_for  # noqa: E402
from accelbook.specs.models import get_model  # noqa: E402
from accelbook.training import kernel, records  # noqa: E402

GOAL_S = 2.0


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t0, out


def _kernel_only(model, chip, n, B, s):
    """The enumeration and evaluation kernel alone, without the DataFrame around it."""
    sp = training.search_space(model, n)
    mv = records.model_record(model, s)
    cv, _ = records.chip_record(chip, cluster_for(chip), "bf16")
    return len(kernel.evaluate_layouts(mv, cv, n, B, s, sp, True, True, usable_memory_bytes(chip.hbm_bytes),
                                       records.options_record())[0])


def main() -> int:
    t_first, _ = timed(training.search, "llama-3.1-8b", "h100", 64, 2**20, 4096, top=1)
    print(f"first call (Numba compile or cache load): {t_first:.2f} s")
    print("1. Issue goal: all layouts of a 405B model on 16,384 chips, 16M-token batch, 8K context")
    for chip in ("h100", "tpu-v5p"):
        times = []
        for _ in range(3):
            t, df = timed(training.search, "llama-3.1-405b", chip, 16384, 2048 * 8192, 8192, top=10)
            times.append(t)
        t = min(times)
        n = df.attrs["n_evaluated"]
        print(f"   {chip:<8} {n:>7,} layouts ({df.attrs['n_fit']:,} fit) in {t * 1e3:7.1f} ms "
              f"= {t / n * 1e6:.2f} µs per layout; goal {GOAL_S:.0f} s: {'met' if t < GOAL_S else 'MISSED'} "
              f"({GOAL_S / t:.0f}x margin)")
    print("2. Numba search kernel vs the plain-Python reference (same layouts, same results)")
    from naive_training import reference_search

    for mid, cid, n, B, s in (("llama-3.1-8b", "h100", 64, 256, 4096), ("mixtral-8x7b", "h100", 64, 256, 4096)):
        model, chip = get_model(mid), get_chip(cid)
        t_py, ref = timed(reference_search, model, chip, cluster_for(chip), n, B, s)
        t_nb = min(timed(training.search, model, chip, n, B * s, s, top=None, include_unfit=True)[0] for _ in range(3))
        k = len(ref)
        t_kernel = min(timed(_kernel_only, model, chip, n, B, s)[0] for _ in range(5))
        print(f"   {mid} on {n} {cid}: {k:,} layouts; python {k / t_py:,.0f}/s; numba search {k / t_nb:,.0f}/s "
              f"({t_py / t_nb:,.0f}x, with the table), kernel alone {k / t_kernel:,.0f}/s ({t_py / t_kernel:,.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
