"""MoE router speed: the Numba kernel against the best vectorised NumPy reference, and a slider update.

1. ``moe.simulate_routing`` (the Numba router) against ``tests/naive_moe.py`` (argpartition top-k,
   stable-sort capacity; the tests check both give identical results, and so does this script before
   timing) for 256 experts, top-8, 4,096 and 16,384 tokens per batch, with and without DeepSeek-V3's
   node limit (8 groups, at most 4). Prints tokens per second for each and the ratio (goal: >= 10x).
2. One "slider update" on a 256-expert, 64-chip setting: routing (1 batch of 4,096 tokens),
   placement, dispatch traffic and the all-to-all time on a 4x4x4 torus, against the 50 ms goal; and
   ``spec.render()`` with defaults for the MoE dashboards in ``accelbook.ui.dashboards``, if present.

Usage: python benchmarks/bench_moe.py
A measurement, not a test: exit status 0.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from naive_moe import reference_routing  # noqa: E402

from accelbook import moe  # noqa: E402
from accelbook.network import topology as tp  # noqa: E402

GOAL_RATIO = 10.0
GOAL_S = 0.050
FIELDS = ("loads", "processed", "dropped", "groups_hist", "choices", "kept", "bias")


def best_of(fn, n, *args, **kw):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn(*args, **kw)
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times)), out


def slider_update(topo):
    r = moe.simulate_routing(4096, 256, 8, skew=0.5, n_batches=1, n_groups=8, node_limit=4)
    pl = moe.place_experts(256, 64, "contiguous")
    moe.chip_loads(r, pl)
    d = moe.dispatch_traffic(r, pl, 7168 * 2)
    return moe.all_to_all_time(d["demand"], topo)


def main() -> int:
    t0 = time.perf_counter()
    moe.simulate_routing(64, 16, 2, n_groups=4, node_limit=2)
    print(f"first call (Numba compile or cache load): {time.perf_counter() - t0:.2f} s")
    print("1. Router: Numba kernel vs vectorised NumPy reference (256 experts, top-8; identical results)")
    for T in (4096, 16384):
        for limit in (None, 4):
            kw = dict(n_tokens=T, n_experts=256, top_k=8, skew=0.5, capacity_factor=1.25, n_batches=2,
                      bias_rate=0.01, n_groups=8, node_limit=limit)
            r = moe.simulate_routing(**kw)
            ref = reference_routing(**kw)
            same = all(np.array_equal(getattr(r, f), x) for f, x in zip(FIELDS, ref))
            assert same, f"kernel and reference differ for {kw}"
            t_np, _, _ = best_of(reference_routing, 3, **kw)
            t_nb, _, _ = best_of(moe.simulate_routing, 7, **kw)
            tok = T * kw["n_batches"]
            ratio = t_np / t_nb
            print(f"   T={T:>6,} {'node-limited 4/8' if limit else 'unlimited       '}: numpy {tok / t_np:>10,.0f} tok/s, "
                  f"numba {tok / t_nb:>11,.0f} tok/s, ratio {ratio:5.1f}x "
                  f"(goal {GOAL_RATIO:.0f}x: {'met' if ratio >= GOAL_RATIO else 'MISSED'})")
    print("2. Slider update: 256 experts, 64 chips, 4,096 tokens, node limit 4 of 8, 4x4x4 torus")
    topo = tp.torus((4, 4, 4))
    slider_update(topo)
    best, med, a = best_of(slider_update, 15, topo)
    print(f"   routing + placement + dispatch + all-to-all: best {best * 1e3:.1f} ms, median {med * 1e3:.1f} ms "
          f"(goal {GOAL_S * 1e3:.0f} ms: {'met' if med < GOAL_S else 'MISSED'}); all-to-all {a.time_s * 1e6:.1f} µs")
    parts = {
        "simulate_routing": lambda: moe.simulate_routing(4096, 256, 8, skew=0.5, n_groups=8, node_limit=4),
        "all_to_all_time": lambda: moe.all_to_all_time(moe.uniform_demand(64, 64, 8, 14336.0, 4), topo),
    }
    for name, fn in parts.items():
        fn()
        b, m, _ = best_of(fn, 15)
        print(f"   {name:<18} median {m * 1e3:6.1f} ms")
    try:
        from accelbook.ui import dashboards
    except Exception as e:      # the module is being edited elsewhere; report, don't fail
        print(f"   (dashboards not importable: {type(e).__name__}: {e})")
        return 0
    for name in ("moe_routing_spec", "moe_network_spec"):
        fn = getattr(dashboards, name, None)
        if fn is None:
            print(f"   (no dashboards.{name} yet)")
            continue
        spec = fn()
        t0 = time.perf_counter()
        spec.render()
        first = time.perf_counter() - t0
        b, m, _ = best_of(spec.render, 10)
        print(f"   dashboards.{name}().render() defaults: first {first * 1e3:.0f} ms, median {m * 1e3:.1f} ms "
              f"(goal {GOAL_S * 1e3:.0f} ms: {'met' if m < GOAL_S else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
