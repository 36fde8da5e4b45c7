"""All-pairs hop statistics: accelbook's bit-parallel Numba BFS against networkx, same graphs.

For a 16×16×16 torus (4,096 chips) and a 16×24×24 torus (9,216 chips, the size of a TPU7 pod),
times ``accelbook.topology.hop_stats`` and networkx's ``all_pairs_shortest_path_length``, checks
that the hop histograms are identical, and prints both times and the ratio (goal: >= 100x).

Usage: python benchmarks/bench_topology.py [--quick]   (--quick: 8x8x8 and 12x12x12 only)
A measurement, not a test: exit status 0 unless the histograms differ.
"""

from __future__ import annotations

import argparse
import sys
import time

import networkx as nx
import numpy as np

from accelbook import topology as tp


def networkx_histogram(t):
    G = nx.Graph()
    G.add_nodes_from(range(t.n_nodes))
    G.add_edges_from(t.edges().tolist())
    h = np.zeros(t.n_nodes + 1, dtype=np.int64)
    for s, lengths in nx.all_pairs_shortest_path_length(G):
        if s < t.n_endpoints:
            for v, d in lengths.items():
                if v < t.n_endpoints and v != s:
                    h[d] += 1
    return np.trim_zeros(h, "b")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    shapes = [(8, 8, 8), (12, 12, 12)] if args.quick else [(16, 16, 16), (16, 24, 24)]
    tp.hop_stats(tp.torus((4, 4, 4)))  # compile (or load the cache) first
    print(f"{'graph':<22}{'chips':>7}{'accelbook s':>13}{'networkx s':>12}{'ratio':>9}  histograms")
    ok = True
    for dims in shapes:
        t = tp.torus(dims)
        t0 = time.perf_counter()
        ours = tp.hop_stats(t)["histogram"]
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = networkx_histogram(t)
        t_nx = time.perf_counter() - t0
        same = np.array_equal(ours, ref)
        ok &= same
        print(f"{t.name:<22}{t.n_endpoints:>7,}{t_ours:>13.3f}{t_nx:>12.2f}{t_nx / t_ours:>8.0f}x  "
              f"{'identical' if same else 'DIFFERENT'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
