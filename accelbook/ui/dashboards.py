"""The dashboards of notebooks 00 and 01, built on :mod:`accelbook.dashboard`.

Each ``*_spec()`` returns a :class:`DashboardSpec`: controls as data plus a pure view function.
Notebooks call ``show(roofline_spec())``; the benchmark times the same specs.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from accelbook.chip import systolic, tiling
from accelbook.chip.roofline import PHASES, concat_columns, layer_roofline_columns, roofline_curve_columns
from accelbook.economics import training_cost_table
from accelbook.network import collectives, topology
from accelbook.specs.chips import PRECISIONS, all_chips, get_chip, summary_table
from accelbook.specs.chips import chips as chips_table
from accelbook.specs.models import all_models, get_model

from . import charts
from .dashboard import Choice, DashboardSpec, LogSlider, Slider, Toggle, View, fmt_si

# Presets: what a first look should compare (a GPU and TPU of each generation).
DEFAULT_ROOFLINE_CHIPS = ("h100", "tpu-v5p", "b200", "tpu-v6e")
DEFAULT_COST_CHIPS = ("a100", "h100", "h200", "tpu-v5e", "tpu-v5p", "tpu-v6e")


def _chip_options() -> list[tuple[str, str]]:
    return [(c.name, c.id) for c in all_chips()]


def _model_options() -> list[tuple[str, str]]:
    return [(m.name, m.id) for m in all_models()]


def _existing(ids) -> tuple[str, ...]:
    have = {c.id for c in all_chips()}
    return tuple(i for i in ids if i in have)


# -- 00: the catalogue ------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _catalogue_frame() -> pd.DataFrame:
    return chips_table()  # built once per session; views only filter it


def catalogue_view(vendors, statuses, precision) -> View:
    df = _catalogue_frame()
    sel = df[df["vendor"].isin(vendors) & df["status"].isin(statuses)]
    if sel.empty:
        raise ValueError("no chip matches this filter: pick at least one vendor and one status")
    col = f"peak_{precision}_flop_s"
    shown = sel.dropna(subset=[col, "memory_bw_bytes_per_s"])
    missing = sorted(set(sel["name"]) - set(shown["name"]))
    table = summary_table(sel, precision)
    summary = f"{len(sel)} chips selected; {len(shown)} publish a dense {precision} peak."
    if missing:
        summary += f" Not on the chart (no dense {precision} peak published): {', '.join(missing)}."
    chart_data = shown[["id", "name", "vendor", "status", "memory_kind", col, "memory_bw_bytes_per_s"]]
    return View(chart_data, charts.peak_bandwidth_chart(shown, precision), summary,
                table=table.reset_index(drop=True))


@functools.lru_cache(maxsize=1)
def catalogue_spec() -> DashboardSpec:
    df = _catalogue_frame()
    vendors = sorted(df["vendor"].unique())
    return DashboardSpec(
        name="catalogue",
        description="Filter the chip catalogue; the chart places each chip by bandwidth and peak.",
        controls={
            "vendors": Choice("vendors", vendors, tuple(vendors), multi=True),
            "statuses": Choice("status", ("shipping", "announced", "estimated"), ("shipping", "announced"), multi=True),
            "precision": Choice("precision", [p for p in PRECISIONS if df[f"peak_{p}_flop_s"].notna().any()], "bf16"),
        },
        view=catalogue_view,
    )


# -- 01: GPUs and TPUs on one roofline --------------------------------------------------------
def roofline_view(chips, model, phase, batch, seq_len, precision, bw_scale=1.0) -> View:
    if not chips:
        raise ValueError("pick at least one chip")
    m = get_model(model)
    curves, ops, skipped, lines = [], [], [], []
    for cid in chips:
        chip = get_chip(cid)
        if precision not in chip.peak_dense_flop_s:
            skipped.append(f"{chip.name} (no dense {precision} peak published)")
            continue
        if bw_scale != 1.0:
            field = "hbm_bw_bytes_per_s" if chip.hbm_bw_bytes_per_s else "sram_bw_bytes_per_s"
            chip = chip.what_if_variant(f"{bw_scale:g}x memory BW", **{field: chip.memory_bw_bytes_per_s * bw_scale})
        curves.append(roofline_curve_columns(chip, precision, i_min=0.3, i_max=3e4, n=48))
        o = layer_roofline_columns(m, chip, phase, batch, seq_len, precision)
        ops.append(o)
        t = o["t_s"].sum()
        mem_share = o["t_s"][o["bound"] == "memory"].sum() / t
        lines.append(f"| {chip.name} | {fmt_si(t, 's')} | {mem_share:.0%} | {chip.ridge_point(precision):.0f} |")
    if not curves:
        raise ValueError(f"none of the chosen chips publishes a dense {precision} peak: " + "; ".join(skipped))
    curves, ops = concat_columns(curves), concat_columns(ops)
    chart = charts.stack(
        charts.roofline_chart(curves, ops, title=f"{m.name}, one layer, {phase}: B={batch}, s={seq_len}, {precision}"),
        charts.layer_time_chart(ops),
    )
    summary = "\n".join(["| chip | layer time (lower bound) | memory-bound share | ridge (FLOP/B) |",
                         "|---|---|---|---|", *lines])
    if skipped:
        summary += "\n\nLeft out: " + "; ".join(skipped) + "."
    return View(ops, chart, summary)


@functools.lru_cache(maxsize=1)
def roofline_spec() -> DashboardSpec:
    return DashboardSpec(
        name="roofline",
        description="Operations of one transformer layer on each chip's roofline.",
        controls={
            "chips": Choice("chips", _chip_options(), _existing(DEFAULT_ROOFLINE_CHIPS), multi=True),
            "model": Choice("model", _model_options(), "llama-3.1-70b"),
            "phase": Choice("phase", PHASES, "decode"),
            "batch": LogSlider("batch", 0, 12, 8, help="sequences per step (B)"),
            "seq_len": LogSlider("sequence length", 7, 17, 4096, help="tokens per sequence / context (s)"),
            "precision": Choice("precision", ("bf16", "fp8", "int8", "fp4"), "bf16"),
            "bw_scale": Slider("memory BW ×", 0.5, 4.0, 0.25, 1.0, help="what if memory bandwidth changes?"),
        },
        view=roofline_view,
    )


# -- 01: tokens/s per chip and dollars per million training tokens ------------------------------
def training_cost_view(chips, model, mfu, price_scale, seq_len, precision="bf16") -> View:
    if not chips:
        raise ValueError("pick at least one chip")
    m = get_model(model)
    df, skipped = training_cost_table(m, [get_chip(c) for c in chips], mfu, seq_len, precision, price_scale)
    if df.empty:
        raise ValueError("none of the chosen chips has both a published price and a dense "
                         f"{precision} peak: " + "; ".join(skipped))
    best = df.loc[df["usd_per_million_tokens"].idxmin()]
    summary = (f"At {mfu:.0%} MFU, {m.name} (s = {seq_len}) needs "
               f"{m.flops_per_token(seq_len, training=True):.3g} FLOP per training token. "
               f"Cheapest per token here: **{best['chip']}** at ${best['usd_per_million_tokens']:.2f} per million tokens.")
    if skipped:
        summary += "\n\nLeft out: " + "; ".join(skipped) + "."
    table = pd.DataFrame({
        "chip": df["chip"], "tokens/s per chip": df["tokens_per_s_per_chip"],
        "USD per 1M tokens": df["usd_per_million_tokens"], "USD/h (after ×)": df["price_usd_per_hour"],
        "chip-hours per 1T tokens": df["chip_hours"],
    })
    return View(df, charts.training_cost_chart(df), summary, table=table)


@functools.lru_cache(maxsize=1)
def training_cost_spec() -> DashboardSpec:
    return DashboardSpec(
        name="training cost",
        description="Training tokens/s per chip and USD per million tokens at a given MFU and price.",
        controls={
            "chips": Choice("chips", _chip_options(), _existing(DEFAULT_COST_CHIPS), multi=True),
            "model": Choice("model", _model_options(), "llama-3.1-70b"),
            "mfu": Slider("MFU", 0.05, 0.80, 0.01, 0.40, help="model FLOPs utilisation"),
            "price_scale": Slider("price × list", 0.25, 2.0, 0.05, 1.0, help="discount or premium on list price"),
            "seq_len": LogSlider("sequence length", 10, 15, 4096),
        },
        view=training_cost_view,
    )


ALL_SPECS = (catalogue_spec, roofline_spec, training_cost_spec)


# -- 02: inside the chip ------------------------------------------------------------------------------
TRACE_LIMIT_CYCLES = 400_000
DATAFLOW_OPTIONS = (("output stationary", "os"), ("weight stationary (TPU)", "ws"), ("input stationary", "is"))  # above this the dashboard shows totals (closed form) without the trace


def systolic_view(M, N, K, array, dataflow) -> View:
    R = C = int(array)
    table = systolic.simulate_table(M, N, K, R, C)
    r = systolic.closed_form(M, N, K, R, C, dataflow)
    charts_ = [charts.dataflow_chart(table, title=f"{M}×{K} · {K}×{N} on a {R}×{C} array")]
    if r.trace_cycles <= TRACE_LIMIT_CYCLES:
        sim = systolic.simulate(M, N, K, R, C, dataflow, trace=True)
        charts_.append(charts.trace_chart(sim.trace, R * C, title=f"cycle by cycle, {dataflow.upper()} (simulated)"))
        note = f"Simulated {sim.trace_cycles:,} cycles."
    else:
        note = (f"{r.trace_cycles:,} cycles: too many to draw the trace; totals from the closed form, "
                "which equals the simulator.")
    summary = (f"**{dataflow.upper()}**: {r.total_cycles:,} cycles, {r.n_folds:,} folds, PE utilisation "
               f"{r.overall_util:.1%}, mapping efficiency {r.mapping_efficiency:.1%}; SRAM reads A {r.sram_ifmap_reads:,}, "
               f"B {r.sram_filter_reads:,}, writes C {r.sram_ofmap_writes:,} for {r.macs:,} MACs. {note}")
    shown = table.assign(overall_util=table["overall_util"] * 100, mapping_efficiency=table["mapping_efficiency"] * 100)
    shown = shown.rename(columns={"overall_util": "PE util %", "mapping_efficiency": "mapping eff. %"})
    return View(table, charts.stack(*charts_), summary,
                table=shown[["dataflow", "cycles", "folds", "PE util %", "mapping eff. %", "sram_ifmap_reads",
                             "sram_filter_reads", "sram_ofmap_writes", "sram_accesses_per_mac"]])


@functools.lru_cache(maxsize=1)
def systolic_spec() -> DashboardSpec:
    return DashboardSpec(
        name="systolic",
        description="A GEMM on a systolic array: the three dataflows, and the simulated cycle trace.",
        controls={
            "M": Slider("M (rows of A)", 1, 1024, 1, 64),
            "N": Slider("N (columns of B)", 1, 1024, 1, 64),
            "K": Slider("K (shared)", 1, 1024, 1, 64),
            "array": Choice("array (R = C)", (8, 16, 32, 64, 128, 256), 32),
            "dataflow": Choice("dataflow", DATAFLOW_OPTIONS, "ws"),
        },
        view=systolic_view,
    )


def animation_view(M, N, K, array, dataflow, cycle) -> View:
    R = C = int(array)
    total = systolic.closed_form(M, N, K, R, C, dataflow).trace_cycles
    c = min(int(cycle), total - 1)
    s = systolic.pe_states(M, N, K, R, C, dataflow, c)
    busy = int(s["busy"].sum())
    summary = (f"Cycle {c} of {total} (fold {int(s['fold'].iloc[0]) + 1}, cycle {int(s['fold_cycle'].iloc[0])} "
               f"within it): {busy} of {R * C} PEs busy.")
    if c != cycle:
        summary += f" (The slider is past the last cycle, {total - 1}: showing that.)"
    return View(s[["row", "col", "step"]], charts.pe_grid_chart(s, title=f"{dataflow.upper()}, cycle {c}"), summary)


@functools.lru_cache(maxsize=1)
def animation_spec() -> DashboardSpec:
    return DashboardSpec(
        name="animation",
        description="Which PEs work at each cycle: move the cycle slider.",
        controls={
            "M": Slider("M", 1, 16, 1, 6), "N": Slider("N", 1, 16, 1, 6), "K": Slider("K", 1, 16, 1, 6),
            "array": Choice("array (R = C)", (2, 4, 8, 16), 4),
            "dataflow": Choice("dataflow", DATAFLOW_OPTIONS, "os"),
            "cycle": Slider("cycle", 0, 300, 1, 3),
        },
        view=animation_view,
    )


def shapes_view(dim, M, N, K, gpu, tpu) -> View:
    g, t = get_chip(gpu), get_chip(tpu)
    sms = g.compute_units
    if sms is None:
        raise ValueError(f"no SM count recorded for {g.name}; pick one of {', '.join(_gpu_sms())}")
    if t.mxu_rows is None or t.mxu_count is None:
        raise ValueError(f"{t.name} publishes no MXU shape and count; pick one that does")
    lo = 1
    values = sorted(set(np.unique(np.geomspace(lo, 4096, 60).astype(int)).tolist() + [128, 256, 384, 512, 1024]))
    df = tiling.shape_sweep(dim, values, M, N, K, sms=sms, tile=128, mxu=t.mxu_rows, n_mxu=t.mxu_count)
    df["arch"] = df["arch"].map({"GPU": f"{g.name} ({sms} SMs, 128×128 tiles)",
                                 "TPU": f"{t.name} ({t.mxu_count}× {t.mxu_rows}×{t.mxu_cols} MXU)"})
    here = {"M": M, "N": N, "K": K}
    gg = tiling.gpu_gemm(M, N, K, sms)
    tt = tiling.tpu_gemm(M, N, K, t.mxu_rows, t.mxu_count)
    summary = (f"At M={M}, N={N}, K={K}: GPU keeps {gg['efficiency']:.1%} of peak (tiles {gg['eta_pad']:.1%} × "
               f"K-slices {gg['eta_inner']:.1%} × waves {gg['eta_wave']:.1%}); TPU keeps {tt['efficiency']:.1%} "
               f"(padding {tt['eta_pad']:.1%} × streaming share {tt['eta_inner']:.1%} × waves {tt['eta_wave']:.1%}). "
               f"Sweeping {dim}; the others fixed at {', '.join(f'{k}={v}' for k, v in here.items() if k != dim)}.")
    return View(df, charts.efficiency_sweep_chart(df, dim, title=f"shape efficiency as {dim} varies"), summary)


def _gpu_sms() -> dict[str, int]:
    return {c.id: c.compute_units for c in all_chips() if c.kind == "gpu" and c.compute_units}


@functools.lru_cache(maxsize=1)
def shapes_spec() -> DashboardSpec:
    tpus = [(c.name, c.id) for c in all_chips() if c.kind == "tpu" and c.mxu_rows and c.mxu_count]
    gpus = [(c.name, c.id) for c in all_chips() if c.id in _gpu_sms()]
    return DashboardSpec(
        name="shapes",
        description="Which GEMM shapes waste a GPU's or a TPU's peak.",
        controls={
            "dim": Choice("sweep", ("M", "N", "K"), "M"),
            "M": Slider("M", 1, 8192, 1, 4096), "N": Slider("N", 1, 8192, 1, 4096), "K": Slider("K", 1, 8192, 1, 4096),
            "gpu": Choice("GPU", gpus, "h100"),
            "tpu": Choice("TPU", tpus, "tpu-v5p"),
        },
        view=shapes_view,
    )


ALL_SPECS = ALL_SPECS + (systolic_spec, animation_spec, shapes_spec)


# -- 03: interconnects -----------------------------------------------------------------------------------
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


@functools.lru_cache(maxsize=None)
def network_stats(name: str) -> dict:
    """Hop statistics of a named network (cached: the BFS over ~1,000 chips takes tens of ms)."""
    if name not in NETWORKS:
        raise ValueError(f"unknown network {name!r}; have {', '.join(NETWORKS)}")
    t = NETWORKS[name]()
    return {"topology": t, **topology.hop_stats(t)}


@functools.lru_cache(maxsize=32)
def _cube_stats(k: int) -> dict:
    t = topology.torus((k, k, k))
    return {"topology": t, **topology.hop_stats(t)}


def topology_view(networks, k=8) -> View:
    names = list(networks) + ([f"{k}×{k}×{k} torus (slider)"] if k else [])
    if not names:
        raise ValueError("pick at least one network")
    rows, lines = [], ["| network | chips | links | diameter | mean hops |", "|---|---|---|---|---|"]
    for name in names:
        s = _cube_stats(int(k)) if name.endswith("(slider)") else network_stats(name)
        h = s["histogram"]
        rows += [{"network": name, "hops": d, "share": h[d] / s["n_pairs"]} for d in range(1, len(h))]
        lines.append(f"| {name} | {s['n_chips']:,} | {s['n_links']:,} | {s['diameter']} | {s['mean_hops']:.2f} |")
    df = pd.DataFrame(rows)
    return View(df, charts.hop_histogram_chart(df), "\n".join(lines))


@functools.lru_cache(maxsize=1)
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


@functools.lru_cache(maxsize=1)
def _validation():
    return collectives.validation_table()


@functools.lru_cache(maxsize=512)
def _system(name: str, n: int):
    """A system of the collectives dashboard, built once per (name, nodes or pods): a 64-pod
    multislice graph takes ~60 ms to build, a slider move must not pay that again."""
    return SYSTEMS[name](n)


def collective_view(systems, collective, size_mib, bw_scale, latency_scale, scale_out=4) -> View:
    if not systems:
        raise ValueError("pick at least one system")
    size = float(size_mib) * 2**20
    curves, lines = [], ["| system | chips | algorithm | protocol | time | busbw |", "|---|---|---|---|---|---|"]
    v = _validation()
    v = v[(v["metric"] == "busbw GB/s") & (v["collective"] == collective)]
    shown = np.zeros(len(v), dtype=bool)
    for name in systems:
        base = _system(name, int(scale_out))
        shown |= ((v["system"] == base.name) & (v["nvls"] == base.in_network_reduction)).to_numpy()
        t = base.scaled(bw_scale, latency_scale)
        c = collectives.sweep(collective, t, np.geomspace(2**10, 2**34, 40)).assign(system=name)
        curves.append(c)
        e = collectives.estimate(collective, size, t)
        lines.append(f"| {name} | {t.n_endpoints:,} | {e.algorithm} | {e.protocol} | {fmt_si(e.time_s, 's')} | "
                     f"{e.busbw_bytes_per_s / 1e9:,.0f} GB/s ({e.latency_s / e.time_s:.0%} latency) |")
    curve = pd.concat(curves, ignore_index=True)
    v = v[shown]
    meas = pd.DataFrame({"case": v["case"], "message_bytes": v["message_bytes"], "busbw_gb_s": v["measured"]})
    return View(curve, charts.collective_chart(curve, size, meas, title=f"{collective}: bus bandwidth"), "\n".join(lines))


@functools.lru_cache(maxsize=1)
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


ALL_SPECS = ALL_SPECS + (topology_spec, collective_spec)


# -- 04: distributed training -----------------------------------------------------------------------
from accelbook import training  # noqa: E402  (kept with the dashboards that use it)
from accelbook.specs.clusters import clusters as _clusters  # noqa: E402
from accelbook.specs.clusters import get_cluster  # noqa: E402

DEFAULT_TRAINING = dict(model="llama-3.1-70b", chip="h100", n_chips=1024, batch_tokens=2**24, seq_len=8192)


def _training_chip_options() -> list[tuple[str, str]]:
    ids = []
    for cl in _clusters().values():
        if cl.chip_id not in ids:
            ids.append(cl.chip_id)
    return [(get_chip(i).name, i) for i in ids]


def _layout_label(c: dict) -> str:
    parts = [f"{k}{c[k]}" for k in ("tp", "cp", "pp", "dp") if c[k] > 1 or k == "dp"]
    if c["vp"] > 1:
        parts.append(f"vp{c['vp']}")
    if c["ep"] > 1:
        parts.append(f"ep{c['ep']}")
    parts += [f"mb{c['microbatch']}", f"ZeRO-{c['zero_stage']}", f"recompute {c['recompute']}"]
    return " ".join(parts)


def _step_frames(ests: dict[str, "training.TrainingEstimate"]) -> tuple[pd.DataFrame, pd.DataFrame]:
    t, m = [], []
    for label, e in ests.items():
        t += [{"layout": label, "component": k, "seconds": v, "share": v / e.step_time_s} for k, v in e.time.items()]
        m += [{"layout": label, "component": k, "bytes": v} for k, v in e.memory.items()]
    return pd.DataFrame(t), pd.DataFrame(m)


def _estimate_summary(e: "training.TrainingEstimate", train_tokens: float) -> str:
    fit = "fits" if e.fits else f"**{e.why_not_fit()}**"
    lines = [
        f"**{e.model}** on {e.n_chips:,} × {e.chip}: step {fmt_si(e.step_time_s, 's')}, "
        f"**MFU {e.mfu:.1%}** (HFU {e.hfu:.1%}; {e.mfu_full_attention:.1%} if attention is counted as full, "
        f"as PaLM and MaxText do), {e.tokens_per_s_per_chip:,.0f} tokens/s per chip, "
        f"{e.memory_per_chip_bytes / 1e9:.1f} GB per chip of {e.memory_capacity_bytes / 1e9:.0f} usable: {fit}.",
    ]
    if e.fits:
        days = e.time_to_train(train_tokens) / 86400
        price = get_chip(e.chip).price_usd_per_hour
        cost = f", USD {e.cost_usd(train_tokens) / 1e6:,.1f} M at the list price of USD {price:.2f}/chip-hour" \
            if price else " (no published price)"
        lines.append(f"{train_tokens / 1e12:g}T tokens: **{days:,.1f} days**, "
                     f"{e.chip_hours(train_tokens) / 1e6:,.2f} M chip-hours{cost} (no failures or restarts).")
    return "\n\n".join(lines)


@functools.lru_cache(maxsize=64)
def _best_layout(model, chip, n_chips, batch_tokens, seq_len, precision, tp_overlap):
    """The search's best layout (cached: moving a layout slider does not search again)."""
    return training.search(model, chip, n_chips, batch_tokens, seq_len, precision=precision, top=1,
                           tp_overlap=tp_overlap).attrs["best"]


def training_view(model, chip, n_chips, batch_tokens, seq_len, tp, pp, cp, vp, microbatch, zero_stage, recompute,
                  precision, tp_overlap=0.0, train_tokens_t=15.0) -> View:
    layout = dict(tp=tp, pp=pp, cp=cp, vp=vp, microbatch=microbatch, zero_stage=zero_stage, recompute=recompute,
                  precision=precision, tp_overlap=tp_overlap)
    mine = training.estimate(model, chip, n_chips, batch_tokens, seq_len, **layout)
    ests = {"your layout: " + _layout_label(mine.config): mine}
    note = ""
    try:
        best = _best_layout(model, chip, n_chips, batch_tokens, seq_len, precision, tp_overlap)
        ests["search's best: " + _layout_label(best.config)] = best
        note = (f"\n\nThe search's best layout is **{mine.step_time_s / best.step_time_s:.2f}× faster** "
                f"than yours (MFU {best.mfu:.1%})." if mine.step_time_s > best.step_time_s * 1.0005 or not mine.fits
                else "\n\nYour layout is the fastest that fits.")
    except ValueError as err:
        note = f"\n\nSearch: {err}"
    t, m = _step_frames(ests)
    fig = charts.step_chart(t, m, mine.memory_capacity_bytes / 1e9,
                            title=f"{mine.model}, {n_chips:,} × {mine.chip}, batch {batch_tokens / 2**20:g}M tokens")
    table = mine.breakdown().assign(value=lambda d: [fmt_si(v, "s" if k == "time" else "B")
                                                     for v, k in zip(d["value"], d["kind"])],
                                    share=lambda d: d["share"].map("{:.1%}".format))
    return View(t, fig, _estimate_summary(mine, train_tokens_t * 1e12) + note, table=table)


@functools.lru_cache(maxsize=1)
def training_spec() -> DashboardSpec:
    d = DEFAULT_TRAINING
    return DashboardSpec(
        name="training",
        description="One parallel layout: step time, MFU and memory per chip, next to the search's best layout.",
        controls={
            "model": Choice("model", _model_options(), d["model"]),
            "chip": Choice("chip (cluster)", _training_chip_options(), d["chip"]),
            "n_chips": LogSlider("chips", 3, 15, d["n_chips"]),
            "batch_tokens": LogSlider("global batch (tokens)", 17, 26, d["batch_tokens"]),
            "seq_len": LogSlider("sequence length", 11, 17, d["seq_len"]),
            "tp": LogSlider("tensor parallel", 0, 6, 8),
            "pp": LogSlider("pipeline stages", 0, 6, 4),
            "cp": LogSlider("context parallel", 0, 5, 1),
            "vp": LogSlider("interleaved chunks", 0, 3, 1),
            "microbatch": LogSlider("microbatch (sequences)", 0, 3, 1),
            "zero_stage": Choice("ZeRO stage", (0, 1, 2, 3), 1),
            "recompute": Choice("recompute", training.RECOMPUTE, "selective"),
            "precision": Choice("precision", training.PRECISIONS, "bf16"),
            "tp_overlap": Slider("TP comm hidden (share)", 0.0, 1.0, 0.1, 0.0),
            "train_tokens_t": Slider("tokens to train (T)", 0.5, 30.0, 0.5, 15.0),
        },
        view=training_view,
    )


def search_view(model, chip, n_chips, batch_tokens, seq_len, precision) -> View:
    df = training.search(model, chip, n_chips, batch_tokens, seq_len, precision=precision, top=12)
    top = df.head(6)
    ests = {}
    for i, r in top.iterrows():
        c = {k: r[k] for k in ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute")}
        ests[f"{i + 1}. {_layout_label(c)}"] = r
    t = pd.DataFrame([{"layout": lab, "component": name, "seconds": r[k], "share": r[k] / r["step_time_s"]}
                      for lab, r in ests.items() for k, name in training.TIME_LABELS.items()])
    m = pd.DataFrame([{"layout": lab, "component": name, "bytes": r[k]}
                      for lab, r in ests.items() for k, name in training.MEMORY_LABELS.items()])
    cap = get_chip(chip).hbm_bytes * 0.9 / 1e9
    fig = charts.step_chart(t, m, cap, title=f"the fastest layouts that fit ({df.attrs['n_fit']:,} of "
                                             f"{df.attrs['n_evaluated']:,} fit)")
    best = df.attrs["best"]
    table = df.head(12).assign(
        step=lambda d: d["step_time_s"].map(lambda v: fmt_si(v, "s")), MFU=lambda d: d["mfu"].map("{:.1%}".format),
        memory=lambda d: (d["memory_per_chip_bytes"] / 1e9).map("{:.1f} GB".format))[
        ["tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute", "step", "MFU", "memory", "why"]]
    summary = (f"Evaluated **{df.attrs['n_evaluated']:,} layouts**, {df.attrs['n_fit']:,} fit in memory. Best: "
               f"**{_layout_label(best.config)}**, MFU {best.mfu:.1%}, {best.tokens_per_s_per_chip:,.0f} tokens/s per chip. "
               "`why` says what costs each runner-up most compared with the best.")
    return View(t, fig, summary, table=table)


@functools.lru_cache(maxsize=1)
def search_spec() -> DashboardSpec:
    d = DEFAULT_TRAINING
    return DashboardSpec(
        name="search",
        description="Every data/tensor/pipeline/context/expert layout, microbatch, ZeRO stage and recompute; "
                    "the fastest that fit.",
        controls={
            "model": Choice("model", _model_options(), d["model"]),
            "chip": Choice("chip (cluster)", _training_chip_options(), d["chip"]),
            "n_chips": LogSlider("chips", 3, 15, d["n_chips"]),
            "batch_tokens": LogSlider("global batch (tokens)", 17, 26, d["batch_tokens"]),
            "seq_len": LogSlider("sequence length", 11, 17, d["seq_len"]),
            "precision": Choice("precision", training.PRECISIONS, "bf16"),
        },
        view=search_view,
    )


SCALING_SYSTEMS = {"DGX H100 + InfiniBand": "dgx-h100", "GB200 NVL72": "gb200-nvl72",
                   "TPU v5p pod (ICI + OCS)": "tpu-v5p-pod", "TPU v6e pods + DCN": "tpu-v6e-pod"}


@functools.lru_cache(maxsize=64)
def _scaling_one(model, name, seqs_per_chip, seq_len, max_chips, bw_scale) -> pd.DataFrame:
    """One system's weak-scaling curve (cached: toggling another system does not recompute it)."""
    counts = [2**k for k in range(6, int(np.log2(max_chips)) + 1)]
    cl = get_cluster(SCALING_SYSTEMS[name])
    if bw_scale != 1.0:
        cl = cl.with_changes(network_bw_bytes_per_s=cl.network_bw_bytes_per_s * bw_scale)
    try:
        df = training.scaling(model, None, counts, seq_len, batch_tokens_per_chip=seqs_per_chip * seq_len,
                              cluster=cl, microbatch=[1, 2], vp=[1, 4])
    except ValueError:   # nothing fits even at the largest size: the view says so
        df = pd.DataFrame()
    if "efficiency" not in df:
        return pd.DataFrame(columns=["system", "n_chips", "efficiency", "mfu", "comm_share", "layout",
                                     "tokens_per_s_per_chip"])
    return df.dropna(subset=["efficiency"]).assign(system=name)


def scaling_view(model, systems, seqs_per_chip, seq_len, max_chips, bw_scale=1.0) -> View:
    if not systems:
        raise ValueError("pick at least one system")
    frames = {name: _scaling_one(model, name, seqs_per_chip, seq_len, max_chips, bw_scale) for name in systems}
    missing = [name for name, f in frames.items() if f.empty]
    data = pd.concat([f for f in frames.values() if not f.empty], ignore_index=True) if len(missing) < len(frames) \
        else pd.DataFrame()
    if data.empty:
        raise ValueError(f"{model} fits on none of these systems up to {max_chips:,} chips with "
                         f"{seqs_per_chip:g} sequences of {seq_len:,} tokens per chip; raise the largest fleet "
                         "or lower the sequences per chip")
    fig = charts.scaling_chart(data, title=f"weak scaling, {seqs_per_chip} sequences of {seq_len:,} tokens per chip")
    last = data.sort_values("n_chips").groupby("system").tail(1)
    summary = "" if not missing else f"Nothing fits on {', '.join(missing)} at these settings. "
    summary += "At the largest size: " + "; ".join(
        f"**{r.system}** {r.efficiency:.0%} efficiency, MFU {r.mfu:.0%}, comm + bubble {r.comm_share:.0%} ({r.layout})"
        for r in last.itertuples())
    return View(data[["system", "n_chips", "efficiency", "mfu", "comm_share"]], fig, summary,
                table=data[["system", "n_chips", "tokens_per_s_per_chip", "mfu", "efficiency", "comm_share", "layout"]])


@functools.lru_cache(maxsize=1)
def scaling_spec() -> DashboardSpec:
    return DashboardSpec(
        name="scaling",
        description="Throughput per chip as the fleet grows, with the best layout at each size.",
        controls={
            "model": Choice("model", _model_options(), "gpt3-175b"),
            "systems": Choice("systems", tuple(SCALING_SYSTEMS), tuple(SCALING_SYSTEMS), multi=True),
            "seqs_per_chip": LogSlider("sequences per chip", -3, 3, 1),
            "seq_len": LogSlider("sequence length", 11, 15, 2048),
            "max_chips": LogSlider("largest fleet", 8, 15, 8192),
            "bw_scale": Slider("scale-out bandwidth ×", 0.25, 4.0, 0.25, 1.0),
        },
        view=scaling_view,
    )


ALL_SPECS = ALL_SPECS + (training_spec, search_spec, scaling_spec)


# -- 05: MoE all-to-all -----------------------------------------------------------------------------------
from accelbook import moe  # noqa: E402

MOE_D_MODEL_BYTES = 7168 * 2   # DeepSeek-V3's hidden size in bf16: the bytes one token copy carries


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
    T_full = tokens_per_chip * n_chips
    # a slider move must stay fast: past 2**23 token-expert scores in all (2**21 with a node limit, whose
    # group scores cost more), simulate a sample of whole tokens per chip and scale the bytes back up
    # (loads and imbalance are per-token statistics)
    budget = (2**21 if limit else 2**23) // (n_experts * n_batches)
    T = min(T_full, max(n_chips, (budget // n_chips) * n_chips))
    scale = T_full / T
    r = moe.simulate_routing(T, n_experts, top_k, skew=skew, capacity_factor=capacity_factor or None,
                             n_batches=n_batches, seed=0, drift=drift, bias_rate=bias_rate, n_groups=groups,
                             node_limit=limit)
    pl = moe.place_experts(n_experts, n_chips, placement, hot=max(1, n_experts // 16),
                           loads=r.loads.mean(axis=0))
    loads = moe.chip_loads(r, pl)
    traffic = moe.dispatch_traffic(r, pl, MOE_D_MODEL_BYTES)
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
               f"({s['groups_per_token']:.2f} nodes of {groups}); a chip sends up to "
               f"{fmt_si(traffic['sent'].max() * scale, 'B')} per dispatch ({MOE_D_MODEL_BYTES:,} bytes per copy)."
               + (f" Simulated a sample of {T:,} of the {T_full:,} tokens per batch." if scale > 1 else ""))
    table = pd.DataFrame({"batch": np.arange(r.n_batches), "imbalance": r.imbalance,
                          "dropped": r.dropped_fraction, "nodes per token": r.mean_groups_per_token})
    return View(chips, fig, summary, table=table)


@functools.lru_cache(maxsize=1)
def moe_routing_spec() -> DashboardSpec:
    return DashboardSpec(
        name="moe routing",
        description="Top-k routing with skewed popularity, capacity, bias balancing and node limits; load per chip.",
        controls={
            "n_experts": LogSlider("experts", 3, 9, 256),
            "top_k": Slider("top-k", 1, 16, 1, 8),
            "skew": Slider("popularity skew (Zipf)", 0.0, 2.0, 0.1, 0.0),
            "capacity_factor": Slider("capacity factor (0 = none)", 0.0, 4.0, 0.25, 0.0),
            "n_chips": LogSlider("chips (expert parallel)", 0, 9, 64),
            "placement": Choice("placement", moe.PLACEMENTS, "contiguous"),
            "tokens_per_chip": LogSlider("tokens per chip", 0, 10, 64),
            "n_batches": Slider("batches", 1, 32, 1, 2),
            "bias_rate": Slider("bias balancing rate", 0.0, 0.2, 0.01, 0.0),
            "node_limit": Choice("nodes per token (of 8)", ("none", "1", "2", "4"), "none"),
            "drift": Slider("hot experts drift (per batch)", 0.0, 8.0, 0.5, 0.0),
        },
        view=moe_routing_view,
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


@functools.lru_cache(maxsize=16)
def _moe_network(size: int, name: str):
    return MOE_NETWORKS[name][size]()


def moe_network_view(size, networks, chip_bw_gb_s, hop_latency_us, overhead_us, cae, top_k, n_experts,
                     tokens_per_chip) -> View:
    if not networks:
        raise ValueError("pick at least one network")
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
    sweep = moe.crossover_sweep(nets, MOE_TOKEN_GRID, top_k, MOE_D_MODEL_BYTES, epc, cae=cae,
                                message_overhead_s=overhead_us * 1e-6)
    here = moe.crossover_sweep(nets, [tokens_per_chip], top_k, MOE_D_MODEL_BYTES, epc, cae=cae,
                               message_overhead_s=overhead_us * 1e-6)
    fig = charts.crossover_chart(sweep, tokens_per_chip,
                                 title=f"{size} chips, {n_experts} experts, top-{top_k}, {chip_bw_gb_s:g} GB/s per chip"
                                       + (", with a collective engine" if cae else ""))
    lines = ["| network | diameter | time | bound | speed-up over the torus |", "|---|---|---|---|---|"]
    torus = here[here["network"].str.startswith("3D torus")]
    t_ref = float(torus["time_s"].iloc[0]) if len(torus) else None
    for r in here.itertuples():
        rel = "—" if not t_ref or r.network.startswith("3D torus") else f"{t_ref / r.time_s:.2f}×"
        lines.append(f"| {r.network} | {r.diameter} | {fmt_si(r.time_s, 's')} | {r.bound} | {rel} |")
    cross = []
    for name, g in sweep.groupby("network", sort=False):
        bw_side = g[g["bound"] == "bandwidth"]
        cross.append(f"{name}: {int(bw_side['tokens_per_chip'].min()):,}" if len(bw_side) else f"{name}: beyond 16k")
    summary = (f"At **{tokens_per_chip:,} tokens per chip** (dispatch + combine):\n\n" + "\n".join(lines)
               + "\n\nBandwidth-bound from (tokens per chip): " + "; ".join(cross) + ".")
    return View(sweep, fig, summary)


@functools.lru_cache(maxsize=1)
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


ALL_SPECS = ALL_SPECS + (moe_routing_spec, moe_network_spec)


# -- 06 and 07: inference -------------------------------------------------------------------------------
from accelbook import inference  # noqa: E402


def _memory_chip_options() -> list[tuple[str, str]]:
    return [(c.name, c.id) for c in all_chips() if c.memory_bytes is not None and c.memory_bw_bytes_per_s is not None
            and not c.id.endswith("lpx")]


@functools.lru_cache(maxsize=64)
def _batch_sweep(model, chip, n_chips, input_len, output_len, precision, tp) -> pd.DataFrame:
    """Every batch of every layout up to ``tp`` (cached: the batch slider only moves the marker)."""
    return inference.sweep(model, chip, n_chips, input_len, output_len, precision,
                           batches=[2**k for k in range(0, 13)], max_tp=tp)


def inference_view(model, chip, n_chips, tp, batch, input_len, output_len, precision) -> View:
    if n_chips % tp:
        raise ValueError(f"{n_chips} chips do not split into replicas of tp = {tp}")
    e = inference.estimate(model, chip, n_chips, batch, input_len, output_len, precision, tp=tp)
    sw = _batch_sweep(model, chip, n_chips, input_len, output_len, precision, tp)
    if not sw.empty:
        sw = sw[(sw["tp"] == tp) & (sw["pp"] == n_chips // tp // e.config["replicas"])]
    if sw.empty:
        raise ValueError(e.why_not_fit() or "no batch fits")
    fig = charts.batch_sweep_chart(sw, batch, e.max_batch_size,
                                   title=f"{e.model} on {n_chips} × {e.chip}, TP{tp}, {input_len:,} in / {output_len:,} out")
    pw = (f"{e.power_w_per_chip:,.0f} W per chip (estimate), {e.tokens_per_s_per_kw:,.0f} tokens/s per kW"
          if e.power_w_per_chip else "no published TDP, so no power figure")
    usd = f"USD {e.usd_per_million_tokens:.2f} per million output tokens" if e.usd_per_million_tokens else "no published price"
    fit = "fits" if e.fits else f"**{e.why_not_fit()}**"
    summary = (f"TTFT **{fmt_si(e.ttft_s, 's')}** (idle server), TPOT **{fmt_si(e.tpot_s, 's')}** = "
               f"**{e.tokens_per_s_per_user:,.0f} tokens/s per user**, **{e.tokens_per_s_per_chip:,.0f} tokens/s per chip** "
               f"({e.decode_bound}-bound decode, {e.prefill_bound}-bound prefill). KV cache {fmt_si(e.kv_cache_bytes, 'B')} "
               f"per replica; the largest batch that fits is {e.max_batch_size:,}; {fit}. {pw}; {usd}.")
    b = e.breakdown
    table = pd.DataFrame({"part": ["decode: matmuls", "decode: attention over the KV cache", "decode: all-reduces",
                                   "prefill (one prompt): compute", "prefill: weights read"],
                          "time": [fmt_si(b[k], "s") for k in ("decode_gemm_s", "decode_attention_s", "decode_comm_s",
                                                                "prefill_compute_s", "prefill_memory_s")]})
    return View(sw, fig, summary, table=table)


@functools.lru_cache(maxsize=1)
def inference_spec() -> DashboardSpec:
    return DashboardSpec(
        name="inference",
        description="Decode latency against throughput as the batch grows, and what fits in memory.",
        controls={
            "model": Choice("model", _model_options(), "llama-3.1-70b"),
            "chip": Choice("chip", _memory_chip_options(), "h200"),
            "n_chips": LogSlider("chips", 0, 10, 8),
            "tp": LogSlider("tensor parallel", 0, 10, 8),
            "batch": LogSlider("batch", 0, 12, 64),
            "input_len": LogSlider("input tokens", 4, 17, 2048),
            "output_len": LogSlider("output tokens", 0, 14, 256),
            "precision": Choice("weights", inference.WEIGHT_PRECISIONS, "fp8"),
        },
        view=inference_view,
    )


FRONTIER_SYSTEMS = {   # label -> (chip id, chips): 8-GPU servers, and enough SRAM chips to hold a 70B model
    "8 × H100": ("h100", 8), "8 × H200": ("h200", 8), "8 × B200": ("b200", 8), "8 × MI300X": ("mi300x", 8),
    "8 × TPU v6e": ("tpu-v6e", 8), "12 × Inferentia2": ("inferentia2", 12),
    "640 × Groq LPU v1": ("groq-lpu-v1", 640), "320 × Groq LP30": ("groq-lp30", 320),
    "4 × Cerebras CS-3": ("cerebras-cs3", 4), "8 × custom ASIC (what-if)": ("custom-asic", 8),
}


@functools.lru_cache(maxsize=64)
def _frontier_one(model, label, input_len, output_len, precision) -> pd.DataFrame:
    chip, n = FRONTIER_SYSTEMS[label]
    try:
        return inference.frontier(model, {label: (chip, n)}, input_len, output_len, precision)
    except ValueError:
        return pd.DataFrame()


def frontier_view(model, systems, input_len, output_len, precision, target_tps_user, per="chip") -> View:
    if not systems:
        raise ValueError("pick at least one system")
    parts = {s: _frontier_one(model, s, input_len, output_len, precision) for s in systems}
    missing = [s for s, f in parts.items() if f.empty]
    front = pd.concat([f for f in parts.values() if not f.empty], ignore_index=True) if len(missing) < len(parts) \
        else pd.DataFrame()
    if front.empty:
        raise ValueError(f"{model} at {precision} fits on none of these systems")
    fig = charts.frontier_chart(front, target_tps_user, per, title=f"{model}, {input_len:,} in / {output_len:,} out, {precision}")
    lines = ["| system | best tokens/s per chip at the target | per kW | USD per M tokens | layout |", "|---|---|---|---|---|"]
    for s, f in parts.items():
        ok = f[f["tokens_per_s_per_user"] >= target_tps_user] if not f.empty else f
        if ok.empty:
            lines.append(f"| {s} | cannot reach {target_tps_user:,.0f} tokens/s per user | | | |")
            continue
        r = ok.loc[ok["tokens_per_s_per_chip"].idxmax()]
        kw = f"{r.tokens_per_s_per_kw:,.0f}" if pd.notna(r.tokens_per_s_per_kw) else "—"
        usd = f"{r.usd_per_million_tokens:.2f}" if pd.notna(r.usd_per_million_tokens) else "—"
        lines.append(f"| {s} | {r.tokens_per_s_per_chip:,.0f} | {kw} | {usd} | TP{r.tp} PP{r.pp} batch {r.batch} |")
    summary = (f"At **{target_tps_user:,.0f} tokens/s per user**:\n\n" + "\n".join(lines)
               + ("" if not missing else f"\n\nDoes not fit: {', '.join(missing)}."))
    if any("Cerebras" in s_ for s_ in systems):
        summary += ("\n\n**Read the CS-3 curve with care:** the model treats a wafer as one chip with 21 PB/s "
                    "everywhere and is about 11× optimistic against Cerebras's published 405B speed (notebook 06). "
                    "A wafer also has the silicon of dozens of GPUs, so per-chip figures do not compare.")
    return View(front[["system", "tokens_per_s_per_user", "tokens_per_s_per_chip"]], fig, summary)


@functools.lru_cache(maxsize=1)
def frontier_spec() -> DashboardSpec:
    return DashboardSpec(
        name="frontier",
        description="Tokens/s per chip against tokens/s per user: GPUs, TPUs, LPUs, wafers, Inferentia.",
        controls={
            "model": Choice("model", _model_options(), "llama-2-70b"),
            "systems": Choice("systems", tuple(FRONTIER_SYSTEMS),
                              ("8 × H200", "8 × B200", "640 × Groq LPU v1", "320 × Groq LP30"), multi=True),
            "input_len": LogSlider("input tokens", 4, 15, 1024),
            "output_len": LogSlider("output tokens", 4, 14, 256),
            "precision": Choice("weights", inference.WEIGHT_PRECISIONS, "fp8"),
            "target_tps_user": LogSlider("target tokens/s per user", 3, 12, 256),
            "per": Choice("per", ("chip", "kw"), "chip"),
        },
        view=frontier_view,
    )


ALL_SPECS = ALL_SPECS + (inference_spec, frontier_spec)


# -- 08: token economics, migration, the hybrid fleet ----------------------------------------------------------
from accelbook import economics  # noqa: E402
from accelbook.economics import fleet, migration


def tco_view(chip, tokens_per_s, utilisation, purchase_k_usd, lifetime_years, electricity_usd_per_kwh, pue) -> View:
    c = get_chip(chip)
    if c.tdp_w is None:
        raise ValueError(f"{c.name} has no published TDP, so its power cost cannot be computed")
    base = dict(purchase_usd=purchase_k_usd * 1e3, tdp_w=c.tdp_w, lifetime_years=lifetime_years,
                electricity_usd_per_kwh=electricity_usd_per_kwh, pue=pue, utilisation=utilisation)
    inp = economics.tco_inputs()
    for k in ("cost_of_capital", "load_power_share", "overhead_share", "staff_usd_per_chip_year"):
        base[k] = inp[k]

    def usd_per_m(**kw):
        return economics.own_cost_per_hour(**kw)["usd_per_hour"] / 3600 / tokens_per_s * 1e6

    ranges = {"purchase_usd": (base["purchase_usd"] * 0.7, base["purchase_usd"] * 1.3),
              "lifetime_years": (max(1.0, lifetime_years - 1), lifetime_years + 2),
              "utilisation": (max(0.1, utilisation - 0.3), min(1.0, utilisation + 0.25)),
              "electricity_usd_per_kwh": (electricity_usd_per_kwh / 2, electricity_usd_per_kwh * 2),
              "pue": (1.05, max(1.1, pue + 0.4)), "overhead_share": (0.1, 0.5),
              "cost_of_capital": (0.0, 0.15)}
    tor = economics.tornado(usd_per_m, base, ranges)
    own = economics.own_cost_per_hour(**base)
    lines = [f"Owned: **USD {own['usd_per_hour']:.2f} per useful hour** (capex {own['capex_usd_per_hour']:.2f}, power "
             f"{own['power_usd_per_hour']:.2f}, overheads {own['overhead_usd_per_hour']:.2f}) = "
             f"**USD {usd_per_m(**base):.2f} per million tokens** at {tokens_per_s:,.0f} tokens/s."]
    if c.price_usd_per_hour:
        rent = economics.rent_cost_per_hour(c.price_usd_per_hour, utilisation)
        lines.append(f"Rented at the catalogue's USD {c.price_usd_per_hour:.2f}/h: USD {rent:.2f} per useful hour = "
                     f"USD {rent / 3600 / tokens_per_s * 1e6:.2f} per million tokens.")
    lines.append("Purchase price, lifetime, PUE and electricity are estimates (data/tco.toml): the tornado shows "
                 "which of them the answer depends on.")
    fig = charts.tornado_chart(tor, title=f"USD per million tokens, owned {c.name}: what moves it")
    return View(tor[["input", "output_low", "output_high", "swing"]], fig, "\n\n".join(lines), table=tor)


@functools.lru_cache(maxsize=1)
def tco_spec() -> DashboardSpec:
    return DashboardSpec(
        name="tco", description="Owning against renting, and which input the cost per token depends on.",
        controls={
            "chip": Choice("chip", [(get_chip(i).name, i) for i in economics.tco_inputs()["purchase_usd"]], "h100"),
            "tokens_per_s": LogSlider("tokens/s per chip", 6, 14, 1024),
            "utilisation": Slider("utilisation", 0.1, 1.0, 0.05, 0.7),
            "purchase_k_usd": Slider("purchase price (k USD, per chip)", 5.0, 100.0, 5.0, 35.0),
            "lifetime_years": Slider("lifetime (years)", 1.0, 8.0, 0.5, 4.0),
            "electricity_usd_per_kwh": Slider("electricity (USD/kWh)", 0.02, 0.40, 0.01, 0.08),
            "pue": Slider("PUE", 1.0, 2.0, 0.05, 1.2),
        },
        view=tco_view,
    )


def migration_view(cost_old, cost_new, volume_m, growth, engineer_months, churn, horizon) -> View:
    m = migration.Migration(cost_old, cost_new, volume_m, growth / 100, engineer_months=engineer_months,
                            churn_per_month=churn / 100, horizon_months=int(horizon))
    v = migration.verdict(m)
    from dataclasses import replace

    flows = []
    for label, mm in ((f"{volume_m:,.0f}M tokens/month", m), ("half the volume", replace(m, volume_m_tokens_per_month=volume_m / 2)),
                      ("twice the volume", replace(m, volume_m_tokens_per_month=volume_m * 2))):
        flows.append(migration.cash_flow(mm).assign(case=label))
    flow = pd.concat(flows, ignore_index=True)
    fig = charts.payback_chart(flow, title="expected cumulative net of the migration")
    be = v["break_even_m_tokens_per_month"]
    summary = (f"**Verdict: {v['verdict']}.** Stable workload: {'yes' if v['stable'] else 'no'}; cheaper per token: "
               f"{'yes' if v['cheaper'] else 'no'}; volume large enough: {'yes' if v['volume_large_enough'] else 'no'} "
               f"(break-even {be:,.0f}M tokens/month). Port cost USD {v['port_cost_usd']:,.0f}; yearly spend now "
               f"USD {v['yearly_spend_usd']:,.0f}.")
    return View(flow[["case", "month", "cumulative_usd"]], fig, summary)


@functools.lru_cache(maxsize=1)
def migration_spec() -> DashboardSpec:
    return DashboardSpec(
        name="migration", description="Does moving this workload to other hardware pay for itself, and when?",
        controls={
            "cost_old": Slider("USD per M tokens now", 0.1, 10.0, 0.1, 2.0),
            "cost_new": Slider("USD per M tokens after", 0.1, 10.0, 0.1, 1.2),
            "volume_m": LogSlider("volume (M tokens/month)", 6, 20, 2**14),
            "growth": Slider("growth per month (%)", -10.0, 30.0, 1.0, 5.0),
            "engineer_months": Slider("engineer-months to port", 1.0, 60.0, 1.0, 12.0),
            "churn": Slider("model churn per month (%)", 0.0, 50.0, 1.0, 5.0),
            "horizon": Slider("horizon (months)", 6, 60, 6, 36),
        },
        view=migration_view,
    )


@functools.lru_cache(maxsize=16)
def _fleet_case(target: float, scale: float):
    ws, ps = fleet.example_fleet(target, scale)
    return ws, ps, fleet.default_rates(ws, ps)


def fleet_view(interactive_target, demand_scale, tpu_price, lpu_price) -> View:
    ws, ps, rates = _fleet_case(float(interactive_target), float(demand_scale))
    from dataclasses import replace

    ps = [replace(p, usd_per_chip_hour=tpu_price) if p.name.startswith("TPU") else
          replace(p, usd_per_chip_hour=lpu_price) if p.name.startswith("LPU") else p for p in ps]
    rows, lines = [], ["| strategy | USD per month | note |", "|---|---|---|"]
    for name, rule in fleet.STRATEGIES.items():
        allowed = {(w.name, p.name) for w in ws for p in ps if rule(w.name, p.name)}
        pl = fleet.place(ws, ps, rates, allowed)
        lines.append(f"| {name} | {'—' if not pl.feasible else f'{pl.usd_per_month:,.0f}'} | {pl.message} |")
        if pl.feasible:
            for w in ws:
                for p in ps:
                    h = pl.hours.loc[w.name, p.name]
                    if h > 0:
                        rows.append({"strategy": name, "workload": w.name, "pool": p.name,
                                     "usd_per_month": h * p.usd_per_chip_hour})
    if not rows:
        raise ValueError("no strategy can serve this demand with these pools")
    df = pd.DataFrame(rows)
    fig = charts.fleet_chart(df, title=f"monthly cost by strategy (interactive target {interactive_target:,.0f} tokens/s per user)")
    table = rates.pivot(index="workload", columns="pool", values="tokens_per_s_per_chip").round(0).reset_index()
    return View(df, fig, "\n".join(lines) + "\n\nRates (tokens/s per chip) come from the training and inference "
                "models; 0 means the pool cannot run the workload or meet its latency target.", table=table)


@functools.lru_cache(maxsize=1)
def fleet_spec() -> DashboardSpec:
    return DashboardSpec(
        name="fleet", description="Place five workloads on GPU, TPU and LPU pools at least cost (a linear programme).",
        controls={
            "interactive_target": LogSlider("interactive target (tokens/s per user)", 4, 9, 64),
            "demand_scale": Slider("demand ×", 0.25, 4.0, 0.25, 1.0),
            "tpu_price": Slider("TPU v5p USD/chip-hour", 1.0, 10.0, 0.2, 4.2),
            "lpu_price": Slider("LP30 USD/chip-hour (estimate)", 0.5, 10.0, 0.5, 3.0),
        },
        view=fleet_view,
    )


ALL_SPECS = ALL_SPECS + (tco_spec, migration_spec, fleet_spec)


# -- 09: designing a chip -------------------------------------------------------------------------------------------
from accelbook.chip import design as chipdesign  # noqa: E402


@functools.lru_cache(maxsize=32)
def _design_case(area_mm2, power_w, decode_batch, context_len, shards, grid):
    tr = chipdesign.TrainingWorkload(shards=int(shards))
    de = chipdesign.DecodeWorkload(batch_size=int(decode_batch), context_len=int(context_len))
    df = chipdesign.sweep([tr, de], area_mm2=area_mm2, power_w=power_w, grid_mm2=grid)
    cmp_ = chipdesign.compare_8t_8i(tr, de, area_mm2=area_mm2, power_w=power_w, grid_mm2=grid)
    return df, cmp_


def design_view(area_mm2, power_w, decode_batch, context_len, shards) -> View:
    df, cmp_ = _design_case(float(area_mm2), float(power_w), int(decode_batch), int(context_len), int(shards), 20.0)
    if df.empty:
        raise ValueError("no split fits this die area; raise the area")
    cells = []
    for w in ("training", "decode"):
        col = f"{w}_tokens_per_s_per_chip"
        g = df.loc[df.groupby(["matrix_mm2", "n_hbm_stacks"])[col].idxmax()]
        top = df[col].max()
        if not top > 0:
            raise ValueError(f"no split can run the {w} workload (memory capacity too small); raise the area or power")
        cells.append(pd.DataFrame({"workload": w, "matrix_mm2": g["matrix_mm2"], "n_hbm_stacks": g["n_hbm_stacks"],
                                   "sram_mb": g["sram_bytes"] / 1e6, "tokens_per_s_per_chip": g[col],
                                   "share_of_best": g[col] / top, "limit": g[f"{w}_limit"]}))
    cells = pd.concat(cells, ignore_index=True)
    opt = cmp_.iloc[:2]
    best = pd.DataFrame({"workload": ["training", "decode"], "matrix_mm2": opt["matrix_mm2"].to_numpy(),
                         "n_hbm_stacks": opt["n_hbm_stacks"].to_numpy(), "design": opt["design"].to_numpy()})
    fig = charts.design_map_chart(cells, best, title=f"{area_mm2:.0f} mm², {power_w:.0f} W: throughput as a share of "
                                                     "each workload's best")
    rows = cmp_.iloc[:3]
    lines = ["| design | matrix (mm²) | SRAM (MB) | HBM stacks | training | decode |", "|---|---|---|---|---|---|"]
    for r in rows.itertuples():
        lines.append(f"| {r.design} | {r.matrix_mm2:.0f} | {r.sram_mb:.0f} | {r.n_hbm_stacks} | "
                     f"{r.training_vs_best:.0%} of best | {r.decode_vs_best:.0%} of best |")
    summary = "\n".join(lines) + ("\n\nPublished: TPU 8t has 6 HBM stacks and 128 MB of SRAM, TPU 8i has 8 stacks and "
                                  "384 MB. Every constant of this model is an estimate (`chipdesign.provenance_table()`).")
    return View(cells, fig, summary, table=cmp_)


@functools.lru_cache(maxsize=1)
def design_spec() -> DashboardSpec:
    return DashboardSpec(
        name="design", description="Split a die between matrix units, SRAM and HBM interfaces; training against decode.",
        controls={
            "area_mm2": Slider("die area (mm²)", 400.0, 860.0, 20.0, 820.0),
            "power_w": Slider("power budget (W)", 300.0, 1400.0, 50.0, 700.0),
            "decode_batch": LogSlider("decode batch", 0, 9, 64),
            "context_len": LogSlider("decode context", 10, 17, 8192),
            "shards": LogSlider("training: chips sharing the model", 3, 8, 32),
        },
        view=design_view,
    )


ALL_SPECS = ALL_SPECS + (design_spec,)
