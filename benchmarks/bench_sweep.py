"""Sweep throughput: configurations per second serially and on 1 and 2 local Dask workers, the
per-task overhead measured, and the plan extrapolated to 64 workers.

1. The frontier sweep (``accelbook.sweep.frontier``) on 336 configurations (every catalogue chip ×
   Llama 3.1 8B and 70B × bf16, fp8 × batch 1, 8, 64, 256 × 1,024-token prompts): serially in this
   process, then on a LocalCluster of 1 and of 2 single-threaded worker processes, each with the block
   size its own probe chooses. The three results are asserted equal row for row.
2. The per-task overhead ``o`` (worker time a task takes beyond its model work: scheduling, shipping
   the block, the Parquet write, the report) on each cluster, and the scheduler's time per task ``s``
   (wall time per no-op task with every worker busy: the rate the scheduler sustains on this machine).
3. The plan for 64 workers: a task must hold ``o / 0.05`` seconds of work (overhead under 5 %), and the
   scheduler, which handles ``64 / t_task`` tasks a second, must stay under half busy: ``t_task ≥
   64·s / 0.5``. Printed for a million-configuration frontier sweep at the measured cost per
   configuration.

Usage: python benchmarks/bench_sweep.py
A measurement, not a test: exit status 0 (the equality is asserted).
"""

from __future__ import annotations

import math
import time

from pandas.testing import assert_frame_equal

from accelbook import sweep
from accelbook.sweep import frontier


def _noop(k):
    return k


def scheduler_time_per_task(client, m: int = 400) -> float:
    client.gather([client.submit(_noop, k, pure=False) for k in range(50)])     # warm
    t0 = time.perf_counter()
    client.gather([client.submit(_noop, k, pure=False) for k in range(m)])
    return (time.perf_counter() - t0) / m


def main() -> None:
    grid = {**frontier.default_grid(), "prompt_len": [1024]}
    n = len(sweep.configurations(grid))
    t0 = time.perf_counter()
    serial = frontier.frontier_sweep(grid, client=sweep.SERIAL, progress=False)
    t_serial = time.perf_counter() - t0
    c_serial = serial.attrs["plan"]["per_config_s"]
    print(f"{n} frontier configurations, {len(serial)} rows ({serial['error'].notna().sum()} error rows)")
    print(f"  serial: {t_serial:6.2f} s, {n / t_serial:7.1f} configurations/s (model cost {c_serial * 1e3:.2f} ms each)")
    measured = {}
    for workers in (1, 2):
        client = sweep.local_client(workers)
        try:
            client.run(frontier.frontier_point, "h100", "llama-3.1-8b", "bf16", 1, 1024)   # imports, catalogue
            t0 = time.perf_counter()
            dist = frontier.frontier_sweep(grid, client=client, progress=False)
            t = time.perf_counter() - t0
            assert_frame_equal(dist, serial)
            p = dist.attrs["plan"]
            o = sweep.measure_overhead(client)
            s = scheduler_time_per_task(client)
        finally:
            client.close()
        measured[workers] = (o, s, p)
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: {t:6.2f} s, {n / t:7.1f} configurations/s "
              f"(probe, {p['n_tasks']} tasks of {p['block_size']}: {p['reason']}; overhead {p['overhead_share']:.1%} "
              f"of the work); per-task overhead o = {o * 1e3:.1f} ms, scheduler s = {s * 1e3:.2f} ms/task")
    o, s, _ = measured[2]
    c = c_serial
    W, N = 64, 10**6
    t_task = max(o / 0.05, W * s / 0.5)
    b = math.ceil(t_task / c)
    print(f"plan for {W} workers, {N:,} frontier configurations at {c * 1e3:.2f} ms each ({N * c / 3600:.1f} h of work):")
    print(f"  overhead under 5 %: a task holds ≥ o/0.05 = {o / 0.05:.2f} s of work; scheduler under half busy: "
          f"≥ {W}·s/0.5 = {W * s / 0.5:.2f} s")
    print(f"  → {b:,} configurations a task, {math.ceil(N / b):,} tasks ({math.ceil(N / b) / W:.0f} per worker), "
          f"about {N * c / W / 60 * 1.05:.1f} min on {W} workers")


if __name__ == "__main__":
    main()
