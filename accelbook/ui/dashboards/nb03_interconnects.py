"""Notebook 03, *Interconnects*: hop counts of ~1,000-chip networks, and alpha-beta collectives on
real systems against NCCL and TPU measurements."""

from __future__ import annotations

import numpy as np
import pandas as pd

from accelbook.network import collectives, topology
from accelbook.network.validation import validation_table
from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui import charts
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, Slider, View, fmt_si

from .common import markdown_table, require_some

NETWORKS = {  # about 1,000 chips each, so the hop counts compare like with like
    "3D torus 8×8×16 (1,024)": lambda: topology.torus((8, 8, 16)),
    "3D mesh 8×8×16, no wraparound (1,024)": lambda: topology.mesh((8, 8, 16)),
    "twisted torus 8×8×16 (1,024)": lambda: topology.torus((8, 8, 16), twisted=True),
    "BoardFly-like 36×8×4 (1,152)": lambda: topology.boardfly(),
    "dragonfly a=8 p=4 h=4 (1,056)": lambda: topology.dragonfly(8, 4, 4),
    "fat tree k=16 (1,024)": lambda: topology.fat_tree(16),
    "8 nodes × 8 H100 + IB rails (64)": lambda: topology.gpu_cluster(8),
    "NVL72 (72)": lambda: topology.nvl72(),
}


@catalogue_cache(maxsize=None)
def network_stats(name: str) -> dict:
    """Hop statistics of a named network (cached: the BFS over ~1,000 chips takes tens of ms)."""
    if name not in NETWORKS:
        raise ValueError(f"unknown network {name!r}; have {', '.join(NETWORKS)}")
    t = NETWORKS[name]()
    return {"topology": t, **topology.hop_stats(t)}


@catalogue_cache(maxsize=32)
def _cube_stats(k: int) -> dict:
    t = topology.torus((k, k, k))
    return {"topology": t, **topology.hop_stats(t)}


def topology_view(networks, k=8) -> View:
    names = list(networks) + ([f"{k}×{k}×{k} torus (slider)"] if k else [])
    require_some(names, "network")
    rows, lines = [], []
    for name in names:
        s = _cube_stats(int(k)) if name.endswith("(slider)") else network_stats(name)
        h = s["histogram"]
        rows += [{"network": name, "hops": d, "share": h[d] / s["n_pairs"]} for d in range(1, len(h))]
        lines.append(f"| {name} | {s['n_chips']:,} | {s['n_links']:,} | {s['diameter']} | {s['mean_hops']:.2f} |")
    df = pd.DataFrame(rows)
    return View(df, charts.hop_histogram_chart(df),
                markdown_table(("network", "chips", "links", "diameter", "mean hops"), lines))


@catalogue_cache(maxsize=1)
def topology_spec() -> DashboardSpec:
    return DashboardSpec(
        name="topology",
        description="Hop-count distributions of ~1,000-chip networks.",
        controls={"networks": Choice("networks", tuple(NETWORKS), ("3D torus 8×8×16 (1,024)",
                                                                    "BoardFly-like 36×8×4 (1,152)"), multi=True),
                  "k": Slider("k×k×k torus (0 = none)", 0, 16, 1, 0)},
        view=topology_view,
    )


SYSTEMS = {   # label -> builder of the system with ``n`` nodes or pods where it scales out
    "HGX H100, NVLS on": lambda n: topology.hgx_h100(nvls=True),
    "HGX H100, NVLS off": lambda n: topology.hgx_h100(nvls=False),
    "H100 nodes, IB rails": lambda n: topology.h100_cluster(n),
    "TPU v5p 4×4×4 slice": lambda n: topology.tpu_slice("v5p", (4, 4, 4)),
    "TPU v5e 16×16 pod": lambda n: topology.tpu_slice("v5e", (16, 16)),
    "TPU v6e pods over DCN": lambda n: topology.tpu_multislice("v6e", (16, 16), n),
}


@catalogue_cache(maxsize=1)
def _validation():
    return validation_table()


#: the message sizes (bytes) of the collectives chart's curves
SWEEP_SIZES = np.geomspace(2**10, 2**34, 40)
#: the systems whose size follows the "nodes / pods" slider; the others ignore it
SCALES_OUT = ("H100 nodes, IB rails", "TPU v6e pods over DCN")


def _system(name: str, n: int):
    """A system of the collectives dashboard, built once per (name, nodes or pods), or once per name
    for a system that does not scale out: a slider move must not pay a graph's build again."""
    return _built_system(name, n if name in SCALES_OUT else 0)


@catalogue_cache(maxsize=512)
def _built_system(name: str, n: int):
    return SYSTEMS[name](n)


@catalogue_cache(maxsize=8)
def _measured_busbw(collective: str) -> pd.DataFrame:
    """The published bus-bandwidth measurements of ``collective`` (rows of the validation table)."""
    v = _validation()
    return v[(v["metric"] == "busbw GB/s") & (v["collective"] == collective)]


def collective_view(systems, collective, size_mib, bw_scale, latency_scale, scale_out=4) -> View:
    require_some(systems, "system")
    size = float(size_mib) * 2**20
    curves, lines = [], []
    v = _measured_busbw(collective)
    shown = np.zeros(len(v), dtype=bool)
    for name in systems:
        base = _system(name, int(scale_out))
        shown |= ((v["system"] == base.name) & (v["nvls"] == base.in_network_reduction)).to_numpy()
        t = base.scaled(bw_scale, latency_scale)
        curves.append(collectives.sweep(collective, t, SWEEP_SIZES))
        e = collectives.estimate(collective, size, t)
        lines.append(f"| {name} | {t.n_endpoints:,} | {e.algorithm} | {e.protocol} | {fmt_si(e.time_s, 's')} | "
                     f"{e.busbw_bytes_per_s / 1e9:,.0f} GB/s | {e.limit} |")
    curve = pd.concat(curves, ignore_index=True)
    curve["system"] = np.repeat(list(systems), [len(c) for c in curves])
    v = v[shown]
    meas = pd.DataFrame({"case": v["case"], "message_bytes": v["message_bytes"], "busbw_gb_s": v["measured"]})
    summary = markdown_table(("system", "chips", "algorithm", "protocol", "time", "busbw", "what binds"), lines)
    return View(curve, charts.collective_chart(curve, size, meas, title=f"{collective}: bus bandwidth",
                                                             systems=tuple(SYSTEMS)), summary)


@catalogue_cache(maxsize=1)
def collective_spec() -> DashboardSpec:
    return DashboardSpec(
        name="collectives",
        description="Alpha-beta collective models: message size, link bandwidth and latency.",
        controls={
            "systems": Choice("systems", tuple(SYSTEMS), ("HGX H100, NVLS off", "TPU v5p 4×4×4 slice"), multi=True),
            "collective": Choice("collective", collectives.COLLECTIVES[:3], "all_reduce"),
            "size_mib": LogSlider("message (MiB)", -6, 13, 64),
            "bw_scale": Slider("link BW ×", 0.25, 4.0, 0.25, 1.0),
            "latency_scale": Slider("latency ×", 0.25, 8.0, 0.25, 1.0),
            "scale_out": Slider("nodes / pods", 1, 64, 1, 4),
        },
        view=collective_view,
    )


SPECS = (topology_spec, collective_spec)
