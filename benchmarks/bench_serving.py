"""Serving simulator speed: the Numba event loop on 100,000 requests, and against the plain-Python reference.

1. ``serving.simulate`` on 100,000 Poisson requests (lognormal prompts, mean 512, and outputs, mean
   256) at 8 requests/s on one instance with a realistic step cost (15 ms weight read that the tokens'
   0.05 ms of matmuls each overlap, 2e-8 s per context token, 0.05 ms more attention per prompt token,
   batch 256, 2,000,000 KV tokens).
   Goal: under 0.5 s (it was 1.2 s before the event loop's work became per event, not per resident).
   Prints the time and requests per second, where it goes (workload generation, ``simulate``, the
   summary's percentiles), and the run's summary.
   Then the same 100,000 requests under the paged KV policy (16-token blocks, preemption by
   recomputation) with prefix caching of a 256-token system prompt shared by half of them, on a
   pool of 40,000 tokens so that requests are preempted: same goal.
2. On 2,000 of those requests: the kernel against ``tests/naive_serving.py`` (identical first-token,
   finish and admission times and gaps asserted first), and the speed ratio; the same for the
   disaggregated mode and for the paged policy with prefix caching.

Usage: python benchmarks/bench_serving.py
A measurement, not a test: exit status 0.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from naive_serving import reference_simulate  # noqa: E402

from accelbook.inference import serving as sv  # noqa: E402

GOAL_S = 0.5
COST = sv.StepCost(fixed_s=0.0, weight_read_s=0.015, per_token_s=0.05e-3, comm_per_token_s=0.0,
                   decode_per_ctx_token_s=2e-8, prefill_attn_per_token_s=0.05e-3, max_batch=256, max_kv_tokens=2_000_000)
LENGTHS = dict(prompt=("lognormal", 512, 0.5), output=("lognormal", 256, 0.7))
PAGED_COST = sv.StepCost(**{**COST.__dict__, "max_kv_tokens": 40_000})
PAGED = dict(kv_policy="paged", block_tokens=16, prefix_caching=True)
PREFIX = (256, 0.5)


def best_of(fn, n):
    times, out = [], None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times)), out


def main() -> int:
    t0 = time.perf_counter()
    sv.simulate(sv.workload(10, 1.0), COST)
    sv.simulate(sv.workload(10, 1.0), COST, disaggregated=True)
    print(f"first calls (Numba compile or cache load): {time.perf_counter() - t0:.2f} s")

    t_gen, _, w = best_of(lambda: sv.workload(100_000, 8.0, **LENGTHS, seed=0), 3)
    best, med, r = best_of(lambda: sv.simulate(w, COST), 5)
    t_sum, _, s = best_of(r.summary, 3)
    print("1. 100,000 requests, Poisson 8/s, lognormal prompt 512 / output 256, one instance")
    print(f"   simulate: best {best:.3f} s, median {med:.3f} s, {w.n / med:,.0f} requests/s "
          f"(goal {GOAL_S} s: {'met' if med < GOAL_S else 'MISSED'}); {len(r.iterations):,} iterations, "
          f"{r.output_tokens:,} tokens")
    print(f"   where the time goes (best of 3): workload generation {t_gen * 1e3:.0f} ms, simulate {best * 1e3:.0f} ms "
          f"(the event loop and the result's arrays), summary {t_sum * 1e3:.0f} ms (mostly the weighted TBT sort)")
    print(f"   TTFT p50/p99 {s['ttft_p50_s'] * 1e3:.0f}/{s['ttft_p99_s'] * 1e3:.0f} ms, TBT p50/p99 "
          f"{s['tbt_p50_s'] * 1e3:.1f}/{s['tbt_p99_s'] * 1e3:.1f} ms, throughput {s['throughput_tok_s']:,.0f} tok/s, "
          f"mean resident {s['mean_resident']:.1f}, goodput(1 s, 50 ms) {r.goodput(1.0, 0.05):.2f} req/s")

    wp = sv.workload(100_000, 8.0, **LENGTHS, seed=0, prefix=PREFIX)
    sv.simulate(sv.workload(10, 1.0), PAGED_COST, **PAGED)
    best, med, r = best_of(lambda: sv.simulate(wp, PAGED_COST, **PAGED), 5)
    print(f"   paged, prefix caching, 40,000-token pool: best {best:.3f} s, median {med:.3f} s "
          f"(goal {GOAL_S} s: {'met' if med < GOAL_S else 'MISSED'}); {len(r.iterations):,} iterations, "
          f"{int(r.preemptions.sum()):,} preemptions, {int(r.cached_tokens.sum()):,} prompt tokens from the cache")

    print("2. 2,000 requests: kernel vs plain-Python reference (identical results asserted)")
    w2 = sv.workload(2000, 8.0, **LENGTHS, seed=1, prefix=PREFIX)
    for label, c, kw in (("colocated          ", COST, {}),
                         ("disaggregated 1P+1D", COST, dict(disaggregated=True, kv_bytes_per_token=131072.0,
                                                            link_bytes_per_s=50e9)),
                         ("paged, prefix cache", PAGED_COST, PAGED)):
        r = sv.simulate(w2, c, **kw)
        first, finish, admit, gaps = reference_simulate(w2.arrival_s, w2.prompt_len, w2.output_len, c, **kw,
                                                        prefix_len=w2.prefix_len, prefix_id=w2.prefix_id)
        assert np.array_equal(r.first_token_s, first) and np.array_equal(r.finish_s, finish)
        assert np.array_equal(r.admit_s, admit) and np.array_equal(np.sort(r.gaps()), np.sort(gaps))
        t_nb, _, _ = best_of(lambda: sv.simulate(w2, c, **kw), 5)
        t_py, _, _ = best_of(lambda: reference_simulate(w2.arrival_s, w2.prompt_len, w2.output_len, c, **kw,
                                                        prefix_len=w2.prefix_len, prefix_id=w2.prefix_id), 2)
        print(f"   {label}: numba {t_nb * 1e3:7.1f} ms, python {t_py * 1e3:7.1f} ms, ratio {t_py / t_nb:5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
