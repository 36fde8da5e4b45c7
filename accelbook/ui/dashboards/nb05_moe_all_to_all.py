"""Notebook 05, *MoE all-to-all*: top-k routing with skew, capacity, bias balancing and node limits
(load per chip), and the dispatch + combine time on four networks."""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import pandas as pd

from accelbook import moe
from accelbook.network import topology
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.models import bytes_per_element, get_model
from accelbook.ui import charts
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, Slider, Toggle, View, fmt_si

from .common import markdown_table, require_some


@catalogue_cache(maxsize=1)
def token_copy_bytes() -> int:
    """Bytes one token copy carries to an expert: DeepSeek-V3's hidden size in bf16 (7,168 × 2)."""
    return int(get_model("deepseek-v3").d_model * bytes_per_element("bf16"))


def _routing_sample(n_experts, n_chips, tokens_per_chip, n_batches, limit) -> tuple[int, int]:
    """Tokens to simulate per batch, and all of them (``T_full``).

    A slider move must stay fast: past 2**23 token-expert scores in all (2**21 with a node limit,
    whose group scores cost more), simulate a sample of whole tokens per chip and scale the bytes
    back up. The imbalance and the dropped share are then those of the smaller batch, which averages
    out less: they overstate the full batch's (uniform top-8 routing, 4 batches, 256 experts on 256 chips, 512 tokens
    per chip: imbalance 1.16 for the 8,192-token sample against 1.05 for all 131,072), and the
    dashboard says so."""
    T_full = tokens_per_chip * n_chips
    budget = (2**21 if limit else 2**23) // (n_experts * n_batches)
    return min(T_full, max(n_chips, (budget // n_chips) * n_chips)), T_full


@catalogue_cache(maxsize=16)
def _routing(n_tokens, n_experts, top_k, skew, capacity_factor, n_batches, drift, bias_rate, n_groups, node_limit):
    """:func:`accelbook.moe.simulate_routing` (seed 0), cached: the routing is most of a slider move's
    time (up to the sampling budget of :func:`_routing_sample`), and the placement and, at the same
    tokens and nodes, the chips do not change it. Its arrays are only read downstream."""
    return moe.simulate_routing(n_tokens, n_experts, top_k, skew=skew, capacity_factor=capacity_factor,
                                n_batches=n_batches, seed=0, drift=drift, bias_rate=bias_rate, n_groups=n_groups,
                                node_limit=node_limit)


def moe_routing_view(n_experts, top_k, skew, capacity_factor, n_chips, placement, tokens_per_chip, n_batches,
                     bias_rate, node_limit, drift=0.0) -> View:
    if n_chips > n_experts:
        raise ValueError(f"{n_chips} chips for {n_experts} experts: this dashboard puts at least one expert on "
                         "each chip; lower the chips or raise the experts")
    if top_k > n_experts:
        raise ValueError(f"top-k = {top_k} exceeds the {n_experts} experts")
    limit = None if node_limit == "none" else int(node_limit)
    groups = max(1, n_chips // 8)                       # nodes of 8 chips; experts contiguous per node
    if n_experts % groups:
        groups = 1
    if limit and limit > groups:
        raise ValueError(f"a limit of {limit} nodes needs at least {limit} nodes of 8 chips; have {groups} "
                         f"({n_chips} chips)")
    T, T_full = _routing_sample(n_experts, n_chips, tokens_per_chip, n_batches, limit)
    scale = T_full / T
    r = _routing(T, n_experts, top_k, skew, capacity_factor or None, n_batches, drift, bias_rate, groups, limit)
    pl = moe.place_experts(n_experts, n_chips, placement, hot=max(1, n_experts // 16),
                           loads=r.loads.mean(axis=0))
    loads = moe.chip_loads(r, pl)
    traffic = moe.dispatch_traffic(r, pl, token_copy_bytes())
    chips = pd.DataFrame({"chip": np.arange(n_chips), "load": loads, "mean": loads.mean(),
                          "experts": pl.experts_per_chip()})
    experts = pd.DataFrame({"expert": np.arange(n_experts), "routed": r.loads[-1],
                            "dropped": r.loads[-1] - r.processed[-1]})
    s = r.summary()
    fig = charts.moe_load_chart(chips, experts, title=f"{n_experts} experts, top-{top_k}, skew {skew:g}, "
                                                      f"{n_chips} chips ({placement}), last of {n_batches} batches")
    chip_imb = loads.max() / loads.mean()
    summary = (f"Expert imbalance (busiest ÷ mean) **{r.imbalance[-1]:.2f}** in the last batch "
               f"(mean over batches {s['imbalance_mean']:.2f}); chip imbalance **{chip_imb:.2f}**, so the "
               f"expert layer runs at **{1 / chip_imb:.0%}** of balanced speed. Dropped: **{s['dropped_fraction']:.1%}** "
               f"of assignments. Each token goes to {traffic['copies_per_token']:.2f} chips on average "
               f"({s['groups_per_token']:.2f} of {groups} node{'s' if groups != 1 else ''} of {n_chips // groups} chips); "
               f"a chip sends up to "
               f"{fmt_si(traffic['sent'].max() * scale, 'B')} per dispatch ({token_copy_bytes():,} bytes per copy)."
               + (f"\n\n**Sampled**: these figures are of {T:,} of the {T_full:,} tokens per batch (to keep a slider "
                  "move fast). A smaller batch averages out less, so the imbalance and the dropped share shown "
                  "overstate the full batch's; the bytes are scaled up to the full batch." if scale > 1 else ""))
    table = pd.DataFrame({"batch": np.arange(r.n_batches), "imbalance": r.imbalance,
                          "dropped": r.dropped_fraction, "nodes per token": r.mean_groups_per_token})
    return View(chips, fig, summary, table=table)


def _routing_limits(controls: Mapping) -> Callable[[Mapping], dict[str, list]]:
    """The routing dashboard's :attr:`~accelbook.ui.controls.DashboardSpec.limits`, as the view checks them:
    at most as many chips as experts (at least one expert on each chip), top-k at most the experts (a token
    picks distinct experts) and at most what its allowed nodes hold, and a node limit at most the nodes of 8
    chips, whose experts must hold top-k; replicating the hot experts needs a second chip for the copies.
    The placement gives way first, then the node limit, top-k and the chips."""
    def limits(v: Mapping) -> dict[str, list]:
        E, k = v["n_experts"], v["top_k"]
        nodes = max(1, v["n_chips"] // 8)      # chips ≤ experts, both powers of two: the nodes divide the experts
        per_node = E // nodes
        limit = None if v["node_limit"] == "none" else int(v["node_limit"])
        k_max = min(E, limit * per_node) if limit else E
        return {
            "placement": [x for x in moe.PLACEMENTS if x != "replicate_hot" or v["n_chips"] >= 2],
            "node_limit": ["none"] + [x for x in controls["node_limit"].values[1:]
                                      if int(x) <= nodes and int(x) * per_node >= k],
            "top_k": [x for x in range(controls["top_k"].min, controls["top_k"].max + 1) if x <= k_max],
            "n_chips": [c for c in controls["n_chips"].options if c <= E],
        }

    return limits


@catalogue_cache(maxsize=1)
def moe_routing_spec() -> DashboardSpec:
    controls = {
        "n_experts": LogSlider("experts", 3, 9, 256),
        "top_k": Slider("top-k", 1, 16, 1, 8),
        "skew": Slider("popularity skew (Zipf)", 0.0, 2.0, 0.1, 0.0),
        "capacity_factor": Slider("capacity factor", 0.0, 4.0, 0.25, 0.0, help="0 = no capacity limit"),
        "n_chips": LogSlider("chips (expert parallel)", 0, 9, 64),
        "placement": Choice("placement", moe.PLACEMENTS, "contiguous"),
        "tokens_per_chip": LogSlider("tokens per chip", 0, 10, 64),
        "n_batches": Slider("batches", 1, 32, 1, 2),
        "bias_rate": Slider("bias balancing rate", 0.0, 0.2, 0.01, 0.0),
        "node_limit": Choice("max nodes per token", ("none", "1", "2", "4"), "none",
                             help="a node is 8 chips; none = no limit"),
        "drift": Slider("hot-expert drift", 0.0, 8.0, 0.5, 0.0,
                        help="how far the popular experts move per batch"),
    }
    return DashboardSpec(
        name="moe routing",
        description="Top-k routing with skewed popularity, capacity, bias balancing and node limits; load per chip.",
        controls=controls, view=moe_routing_view, limits=_routing_limits(controls),
    )


MOE_NETWORKS = {   # equal chip counts per size, so only the wiring differs
    "3D torus": {64: lambda: topology.torus((4, 4, 4)), 256: lambda: topology.torus((4, 8, 8)),
                 1024: lambda: topology.torus((8, 8, 16))},
    "BoardFly-like": {64: lambda: topology.boardfly(4, 4, 4), 256: lambda: topology.boardfly(16, 4, 4),
                      1024: lambda: topology.boardfly(32, 8, 4)},
    "dragonfly": {64: lambda: topology.dragonfly(4, 4, 1, groups=4), 256: lambda: topology.dragonfly(8, 4, 1, groups=8),
                  1024: lambda: topology.dragonfly(8, 4, 4, groups=32)},
    "one switch": {64: lambda: topology.switched(64), 256: lambda: topology.switched(256),
                   1024: lambda: topology.switched(1024)},
}
MOE_TOKEN_GRID = [2.0**k for k in range(0, 15)]


@catalogue_cache(maxsize=16)
def _moe_network(size: int, name: str):
    return MOE_NETWORKS[name][size]()


def _bandwidth_bound_from(sweep: pd.DataFrame) -> str:
    """For each network of a crossover sweep, the fewest tokens per chip at which it is bandwidth-bound."""
    cross = []
    for name, g in sweep.groupby("network", sort=False):
        bw_side = g[g["bound"] == "bandwidth"]
        cross.append(f"{name}: {int(bw_side['tokens_per_chip'].min()):,}" if len(bw_side) else f"{name}: beyond 16k")
    return "; ".join(cross)


def moe_network_view(size, networks, chip_bw_gb_s, hop_latency_us, overhead_us, cae, top_k, n_experts,
                     tokens_per_chip) -> View:
    require_some(networks, "network")
    size = int(size)
    if size not in (64, 256, 1024):
        raise ValueError(f"chips must be 64, 256 or 1024, got {size}")
    nets = {}
    for n in networks:
        t = _moe_network(size, n)
        nets[f"{n} ({t.name})"] = moe.equal_injection(t, chip_bw_gb_s * 1e9, hop_latency_us * 1e-6)
    epc = n_experts / size
    if epc >= 1 and not float(epc).is_integer():
        raise ValueError(f"{n_experts} experts do not split evenly over {size} chips")
    if epc < 1 and not float(size / n_experts).is_integer():
        raise ValueError(f"{size} chips are not a whole number of copies of {n_experts} experts")
    sweep = moe.crossover_sweep(nets, MOE_TOKEN_GRID, top_k, token_copy_bytes(), epc, cae=cae,
                                message_overhead_s=overhead_us * 1e-6)
    here = moe.crossover_sweep(nets, [tokens_per_chip], top_k, token_copy_bytes(), epc, cae=cae,
                               message_overhead_s=overhead_us * 1e-6)
    fig = charts.crossover_chart(sweep, tokens_per_chip,
                                 title=f"{size} chips, {n_experts} experts, top-{top_k}, {chip_bw_gb_s:g} GB/s per chip"
                                       + (", with a collective engine" if cae else ""))
    lines = []
    torus = here[here["network"].str.startswith("3D torus")]
    t_ref = float(torus["time_s"].iloc[0]) if len(torus) else None
    for r in here.itertuples():
        rel = "—" if not t_ref or r.network.startswith("3D torus") else f"{t_ref / r.time_s:.2f}×"
        lines.append(f"| {r.network} | {r.diameter} | {fmt_si(r.time_s, 's')} | {r.bound} | {rel} |")
    table = markdown_table(("network", "diameter", "time", "bound", "speed-up over the torus"), lines)
    summary = (f"At **{tokens_per_chip:,} tokens per chip** (dispatch + combine):\n\n" + table
               + "\n\nBandwidth-bound from (tokens per chip): " + _bandwidth_bound_from(sweep) + ".")
    return View(sweep, fig, summary)


@catalogue_cache(maxsize=1)
def moe_network_spec() -> DashboardSpec:
    return DashboardSpec(
        name="moe network",
        description="Dispatch + combine time on a torus, a BoardFly-like network, a dragonfly and a switch.",
        controls={
            "size": Choice("chips", (64, 256, 1024), 1024),
            "networks": Choice("networks", tuple(MOE_NETWORKS), tuple(MOE_NETWORKS), multi=True),
            "chip_bw_gb_s": Slider("bandwidth per chip (GB/s)", 100.0, 1800.0, 100.0, 600.0),
            "hop_latency_us": Slider("latency per hop (µs)", 0.1, 5.0, 0.1, 1.0),
            "overhead_us": Slider("overhead per message (µs)", 0.0, 5.0, 0.1, 2.0),
            "cae": Toggle("collective acceleration engine", False),
            "top_k": Slider("top-k", 1, 16, 1, 8),
            "n_experts": Choice("experts", (64, 256, 1024), 256),
            "tokens_per_chip": LogSlider("tokens per chip", 0, 14, 8),
        },
        view=moe_network_view,
    )


SPECS = (moe_routing_spec, moe_network_spec)
