"""Exercises of notebook 05: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

import math

from accelbook.moe import crossover_sweep, equal_injection, simulate_routing
from accelbook.network.topology import boardfly, torus
from accelbook.specs.models import bytes_per_element, get_model
from accelbook.ui.exercises.core import Exercise


def _nodes_per_token() -> float:
    return 8 * (1 - math.comb(224, 8) / math.comb(256, 8))


def _decode_bound() -> set[str]:
    # the network dashboard's defaults (notebook 05; tests/test_exercises.py checks that they agree):
    # 1,024 chips as an 8×8×16 torus, 600 GB/s per chip, 1 µs per hop, 2 µs per message, 256 experts
    # (a quarter per chip), top-8, one DeepSeek-V3 token (7,168 values in bf16) per copy
    net = equal_injection(torus((8, 8, 16)), 600e9, 1e-6)
    token_bytes = int(get_model("deepseek-v3").d_model * bytes_per_element("bf16"))
    sweep = crossover_sweep({"3D torus": net}, [1.0], 8, token_bytes, 256 / 1024, message_overhead_s=2e-6)
    return {sweep["bound"].iloc[0]}


def _nodes_reached(n_nodes: int, experts: int = 256, k: int = 8) -> float:
    # a node of E/n experts is missed when all k picks avoid it: C(E - E/n, k) / C(E, k)
    return n_nodes * (1 - math.comb(experts - experts // n_nodes, k) / math.comb(experts, k))


def _moe_speedup(tokens_per_chip: float) -> float:
    # the network dashboard's 1,024-chip defaults (notebook 05): torus time / BoardFly-like time, no CAE
    token_bytes = int(get_model("deepseek-v3").d_model * bytes_per_element("bf16"))
    nets = {n: equal_injection(t, 600e9, 1e-6) for n, t in (("torus", torus((8, 8, 16))), ("bf", boardfly(32, 8, 4)))}
    t = crossover_sweep(nets, [tokens_per_chip], 8, token_bytes, 256 / 1024, message_overhead_s=2e-6)
    t = t.set_index("network")["time_s"]
    return float(t["torus"] / t["bf"])


EXERCISES: list[Exercise] = [
    Exercise("moe-mean-load", "05", "Mean load of one expert: 4,096 tokens, 256 experts, top-8, uniform routing?",
             lambda: 4096 * 8 / 256, 0.0, "Every token makes k assignments; they spread over E experts.", "assignments"),
    Exercise("moe-nodes-per-token", "05", "Mean number of nodes (of 8, 32 experts each) a token reaches with 256 "
             "experts, top-8, uniform routing and no node limit?", _nodes_per_token, 0.01,
             "A node is missed when all 8 picks avoid its 32 experts: C(224, 8) / C(256, 8). Sum over 8 nodes.",
             "nodes"),
    Exercise("moe-decode-bound", "05", "One token per chip on the 1,024-chip 3D torus (defaults of the network "
             "dashboard): is the all-to-all 'latency' or 'bandwidth' bound?", _decode_bound,
             hint="Compare 16 hops × 1 µs plus the per-message overheads with one token's 14 KB per copy ÷ link bandwidth."),
    Exercise("predict-moe-dropped-skew1", "05", "Predict before moving the routing sliders: with Zipf skew 1, a capacity "
             "factor of 1.25 and no balancing, what share (%) of the assignments is dropped (4,096 tokens, 256 experts, "
             "top-8)?", lambda: 100 * simulate_routing(4096, 256, 8, skew=1.0, capacity_factor=1.25, n_batches=30,
                                                       seed=2).dropped_fraction.mean(), 0.2,
             "Each expert keeps at most ⌈1.25 · T·k/E⌉ = 160; how far above that are the hottest experts?", "%"),
    Exercise("predict-boardfly-speedup", "05", "Predict before reading the network dashboard: at 1 token per chip "
             "(its defaults, no collective engine), how many times faster is the BoardFly-like network's all-to-all "
             "than the 1,024-chip torus's?", lambda: _moe_speedup(1.0), 0.15,
             "Both pay 2 µs per peer message; only the hops differ (16 against 5, at 1 µs each).", "×"),
    Exercise("whatif-16-nodes", "05", "What if DeepSeek-V3's 256 experts were spread over 16 nodes of 16 instead of 8 "
             "of 32: how many nodes does a token reach on average, top-8, uniform routing, no node limit?",
             lambda: _nodes_reached(16), 0.01, "A node is missed when all 8 picks avoid its 16 experts.", "nodes",
             model_answer="16 × (1 - C(240, 8)/C(256, 8)) = 6.5 nodes, against 5.3 on 8 nodes: almost every pick lands "
             "on a different node, so each token crosses the inter-node network about 6.5 times instead of 5.3 "
             "(+23 %). A node limit of 4 then saves more (6.5 → 4 instead of 5.3 → 4), which is why node-limited "
             "routing matters more as expert parallelism spreads wider."),
]
