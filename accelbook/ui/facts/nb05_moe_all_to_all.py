"""Facts quoted in the prose of notebooks/05_moe_all_to_all.ipynb (keys ``nb05.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook import moe
from accelbook.moe.alltoall import CAE_OVERHEAD_S, MESSAGE_OVERHEAD_S, chip_degree
from accelbook.network import topology as tp
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.models import bytes_per_element, get_model
from accelbook.ui.dashboards.nb05_moe_all_to_all import moe_network_spec
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact


@catalogue_cache(maxsize=None)
def _balance():
    """Cell 12's table: skew × bias rate -> (imbalance of the first batch, of the last 10, dropped % of the last 10)."""
    out = {}
    for skew in (0.0, 0.5, 1.0):
        for rate in (0.0, 0.05):
            rr = moe.simulate_routing(4096, 256, 8, skew=skew, capacity_factor=1.25, n_batches=30, bias_rate=rate,
                                      seed=2)
            out[(skew, rate)] = (rr.imbalance[0], rr.imbalance[-10:].mean(), 100 * rr.dropped_fraction[-10:].mean())
    return out


@catalogue_cache(maxsize=None)
def _node_limit():
    """Cell 15: remote copies per token without and with DeepSeek-V3's limit of 4 nodes."""
    free = moe.simulate_routing(4096, 256, 8, n_batches=5, n_groups=8, seed=3)
    lim = moe.simulate_routing(4096, 256, 8, n_batches=5, n_groups=8, node_limit=4, seed=3)
    nodes = moe.place_experts(256, 8)
    tb = _token_bytes("fp8")
    f, li = moe.dispatch_traffic(free, nodes, tb), moe.dispatch_traffic(lim, nodes, tb)
    return f["copies_per_token"] * f["remote_share"], li["copies_per_token"] * li["remote_share"]


def _token_bytes(precision: str) -> float:
    return get_model("deepseek-v3").d_model * bytes_per_element(precision)


@catalogue_cache(maxsize=None)
def _net_controls() -> dict:
    return {k: c.value for k, c in moe_network_spec().controls.items()}


@catalogue_cache(maxsize=None)
def _net(cae: bool):
    """The network dashboard's sweep at its defaults (cell 27's call), by (network family, tokens per chip)."""
    v = moe_network_spec().render(cae=cae).data
    return {(r.network.split(" (")[0], r.tokens_per_chip): r for r in v.itertuples()}


def _speedup(cae: bool, tpc: float, net: str = "BoardFly-like") -> float:
    n = _net(cae)
    return n[("3D torus", tpc)].time_s / n[(net, tpc)].time_s


@catalogue_cache(maxsize=None)
def _skew_link_factor() -> float:
    """Cell 30: skew 1 over uniform routing, the busiest torus link's time with contiguous placement."""
    parts = []
    for skew in (0.0, 1.0):
        rr = moe.simulate_routing(64 * 64, 256, 8, skew=skew, seed=6)
        tr = moe.dispatch_traffic(rr, moe.place_experts(256, 64, "contiguous"), _token_bytes("fp8"))
        parts.append(moe.all_to_all_time(tr["demand"], moe.equal_injection(tp.torus((4, 4, 4)), 600e9)).bandwidth_s)
    return parts[1] / parts[0]


@catalogue_cache(maxsize=None)
def _fallacy() -> dict:
    """Cell 34's call: BoardFly-like against the torus at 1 and 4,096 tokens per chip."""
    nets = {"torus": moe.equal_injection(tp.torus((8, 8, 16)), 600e9),
            "BoardFly-like": moe.equal_injection(tp.boardfly(32, 8, 4), 600e9)}
    sweep = moe.crossover_sweep(nets, [1.0, 4096.0], 8, _token_bytes("bf16"), 256 / 1024, message_overhead_s=2e-6)
    t = sweep.set_index(["network", "tokens_per_chip"])["time_s"]
    return {tpc: t[("torus", tpc)] / t[("BoardFly-like", tpc)] for tpc in (1.0, 4096.0)}


def _range(xs, fmt: str) -> str:
    lo, hi = (format(f(xs), fmt) for f in (min, max))
    return lo if lo == hi else f"{lo}-{hi}"


# -- section 1 ------------------------------------------------------------------------------------------------

@fact("nb05.mean_load")
def mean_load() -> str:
    return f"{moe.expected_load_stats(4096, 256, 8)['mean']:.0f}"


@fact("nb05.load_var")
def load_var() -> str:
    return f"{moe.expected_load_stats(4096, 256, 8)['var']:.0f}"


@fact("nb05.load_sd")
def load_sd() -> str:
    return f"{moe.expected_load_stats(4096, 256, 8)['var'] ** 0.5:.1f}"


@fact("nb05.dropped_skew1_pct")
def dropped_skew1_pct() -> str:
    return f"{EXERCISES['predict-moe-dropped-skew1'].expected():.0f}"


@fact("nb05.hot_skew1_x")
def hot_skew1_x() -> str:
    return f"{_balance()[(1.0, 0.0)][0]:.0f}"


@fact("nb05.hot_skew05_x")
def hot_skew05_x() -> str:
    return f"{_balance()[(0.5, 0.0)][0]:.0f}"


@fact("nb05.dropped_skew05_pct")
def dropped_skew05_pct() -> str:
    return f"{_balance()[(0.5, 0.0)][2]:.0f}"


@fact("nb05.dropped_skew1_last_pct")
def dropped_skew1_last_pct() -> str:
    return f"{_balance()[(1.0, 0.0)][2]:.0f}"


@fact("nb05.balanced_skew05_x")
def balanced_skew05_x() -> str:
    return f"{_balance()[(0.5, 0.05)][1]:.1f}"


@fact("nb05.balanced_skew05_dropped_pct")
def balanced_skew05_dropped_pct() -> str:
    return f"{_balance()[(0.5, 0.05)][2]:.1f}"


# -- section 2 ------------------------------------------------------------------------------------------------

@fact("nb05.nodes_per_token")
def nodes_per_token() -> str:
    return f"{EXERCISES['moe-nodes-per-token'].expected():.2f}"


@fact("nb05.node_limit_cut_pct")
def node_limit_cut_pct() -> str:
    free, lim = _node_limit()
    return f"{(1 - lim / free) * 100:.0f}"


# -- section 3 ------------------------------------------------------------------------------------------------

@fact("nb05.fp8_bytes")
def fp8_bytes() -> str:
    return f"{bytes_per_element('fp8'):.0f}"


@fact("nb05.bf16_bytes")
def bf16_bytes() -> str:
    return f"{bytes_per_element('bf16'):.0f}"


@fact("nb05.token_kb_fp8")
def token_kb_fp8() -> str:
    return f"{_token_bytes('fp8') / 1e3:.0f}"


@fact("nb05.token_kb_bf16")
def token_kb_bf16() -> str:
    return f"{_token_bytes('bf16') / 1e3:.0f}"


# -- section 4 ------------------------------------------------------------------------------------------------

@fact("nb05.chip_bw_gb_s")
def chip_bw_gb_s() -> str:
    return f"{_net_controls()['chip_bw_gb_s']:.0f}"


@fact("nb05.hop_us")
def hop_us() -> str:
    return f"{_net_controls()['hop_latency_us']:g}"


@fact("nb05.overhead_us")
def overhead_us() -> str:
    return f"{_net_controls()['overhead_us']:g}"


@fact("nb05.package_overhead_us")
def package_overhead_us() -> str:
    return f"{MESSAGE_OVERHEAD_S * 1e6:g}"


@fact("nb05.cae_overhead_us")
def cae_overhead_us() -> str:
    return f"{CAE_OVERHEAD_S * 1e6:g}"


@fact("nb05.torus_links")
def torus_links() -> str:
    return f"{chip_degree(tp.torus((8, 8, 16))):.0f}"


@fact("nb05.torus_link_gb_s")
def torus_link_gb_s() -> str:
    return f"{_net_controls()['chip_bw_gb_s'] / chip_degree(tp.torus((8, 8, 16))):.0f}"


@fact("nb05.speedup_1")
def speedup_1() -> str:
    return f"{EXERCISES['predict-boardfly-speedup'].expected():.1f}"


@fact("nb05.torus_diameter")
def torus_diameter() -> str:
    return f"{_net(False)[('3D torus', 1.0)].diameter}"


@fact("nb05.boardfly_diameter")
def boardfly_diameter() -> str:
    return f"{_net(False)[('BoardFly-like', 1.0)].diameter}"


@fact("nb05.peers_1")
def peers_1() -> str:
    return f"{_net(False)[('3D torus', 1.0)].peers:.0f}"


@fact("nb05.overhead_total_us")
def overhead_total_us() -> str:
    r = _net(False)[("3D torus", 1.0)]
    return f"{2 * r.peers * _net_controls()['overhead_us']:.0f}"


def _hops_us(net: str) -> float:
    return 2 * _net(False)[(net, 1.0)].diameter * _net_controls()["hop_latency_us"]


@fact("nb05.torus_hops_us")
def torus_hops_us() -> str:
    return f"{_hops_us('3D torus'):.0f}"


@fact("nb05.boardfly_hops_us")
def boardfly_hops_us() -> str:
    return f"{_hops_us('BoardFly-like'):.0f}"


@fact("nb05.torus_us")
def torus_us() -> str:
    return f"{_net(False)[('3D torus', 1.0)].time_s * 1e6:.0f}"


@fact("nb05.boardfly_us")
def boardfly_us() -> str:
    return f"{_net(False)[('BoardFly-like', 1.0)].time_s * 1e6:.0f}"


@fact("nb05.cae_speedup_1")
def cae_speedup_1() -> str:
    return f"{_speedup(True, 1.0):.1f}"


@fact("nb05.cae_speedup_8")
def cae_speedup_8() -> str:
    return f"{_speedup(True, 8.0):.1f}"


@fact("nb05.boardfly_4096_range")
def boardfly_4096_range() -> str:
    return _range([_speedup(c, 4096.0) for c in (False, True)], ".2f")


@fact("nb05.wide_4096_range")
def wide_4096_range() -> str:
    return _range([_speedup(c, 4096.0, n) for c in (False, True) for n in ("dragonfly", "one switch")], ".1f")


@fact("nb05.skew_link_factor")
def skew_link_factor() -> str:
    return f"{_skew_link_factor():.1f}"


@fact("nb05.fallacy_speed_1")
def fallacy_speed_1() -> str:
    return f"{_fallacy()[1.0]:.1f}"


@fact("nb05.fallacy_speed_4096")
def fallacy_speed_4096() -> str:
    return f"{_fallacy()[4096.0]:.2f}"


# -- exercises' answers -----------------------------------------------------------------------------------------

@fact("nb05.latency_us")
def latency_us() -> str:
    return f"{_net(False)[('3D torus', 1.0)].latency_s * 1e6:.1f}"


@fact("nb05.total_us")
def total_us() -> str:
    return f"{_net(False)[('3D torus', 1.0)].time_s * 1e6:.1f}"


@fact("nb05.bytes_us")
def bytes_us() -> str:
    return f"{_net(False)[('3D torus', 1.0)].bandwidth_s * 1e6:.1f}"


@fact("nb05.miss_8")
def miss_8() -> str:
    return f"{1 - EXERCISES['moe-nodes-per-token'].expected() / 8:.3f}"


@fact("nb05.miss_16")
def miss_16() -> str:
    return f"{1 - EXERCISES['whatif-16-nodes'].expected() / 16:.3f}"


@fact("nb05.nodes_16")
def nodes_16() -> str:
    return f"{EXERCISES['whatif-16-nodes'].expected():.2f}"


@fact("nb05.nodes_16_short")
def nodes_16_short() -> str:
    return f"{EXERCISES['whatif-16-nodes'].expected():.1f}"


@fact("nb05.nodes_8_short")
def nodes_8_short() -> str:
    return f"{EXERCISES['moe-nodes-per-token'].expected():.1f}"


@fact("nb05.nodes_16_more_pct")
def nodes_16_more_pct() -> str:
    return f"{(EXERCISES['whatif-16-nodes'].expected() / EXERCISES['moe-nodes-per-token'].expected() - 1) * 100:.0f}"
