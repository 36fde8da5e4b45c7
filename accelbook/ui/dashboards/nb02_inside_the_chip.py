"""Notebook 02, *Inside the chip*: a GEMM on a systolic array (the three dataflows, a cycle trace, the
PEs at work cycle by cycle) and which GEMM shapes waste a GPU's or a TPU's peak."""

from __future__ import annotations

import numpy as np

from accelbook.chip import systolic, tiling
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import all_chips, get_chip
from accelbook.ui import charts
from accelbook.ui.dashboard import Choice, DashboardSpec, Slider, View

#: above this many cycles the systolic dashboard shows the totals (closed form) without the trace
TRACE_LIMIT_CYCLES = 400_000
DATAFLOW_OPTIONS = (("output stationary", "os"), ("weight stationary (TPU)", "ws"), ("input stationary", "is"))


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


@catalogue_cache(maxsize=1)
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
    fold = int(s['fold'].iloc[0]) + 1
    summary = (f"Cycle {c} of {total} (fold {fold}, cycle {int(s['fold_cycle'].iloc[0])} "
               f"within it): {busy} of {R * C} PEs busy.")
    if c != cycle:
        summary += f" (The slider is past the last cycle, {total - 1}: showing that.)"
    # the title and the progress bar carry the GEMM's shape: early cycles look alike for any M, N, K
    title = f"{M}×{K} · {K}×{N} on a {R}×{C} array, {dataflow.upper()}: cycle {c} of {total}, fold {fold}"
    return View(s[["row", "col", "step"]], charts.pe_grid_chart(s, title=title, cycle=c, total_cycles=total), summary)


@catalogue_cache(maxsize=1)
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
    here = {"M": M, "N": N, "K": K}
    # the sweep reaches past the swept dimension's setting and passes through it (the marked point)
    top = max(4096, 2 ** int(np.ceil(np.log2(here[dim]))))
    values = sorted(set(np.unique(np.geomspace(1, top, 60).astype(int)).tolist() + [128, 256, 384, 512, 1024, here[dim]]))
    df = tiling.shape_sweep(dim, values, M, N, K, sms=sms, tile=128, mxu=t.mxu_rows, n_mxu=t.mxu_count)
    df["arch"] = df["arch"].map({"GPU": f"{g.name} ({sms} SMs, 128×128 tiles)",
                                 "TPU": f"{t.name} ({t.mxu_count}× {t.mxu_rows}×{t.mxu_cols} MXU)"})
    gg = tiling.gpu_gemm(M, N, K, sms)
    tt = tiling.tpu_gemm(M, N, K, t.mxu_rows, t.mxu_count)
    summary = (f"At M={M}, N={N}, K={K}: GPU keeps {gg['efficiency']:.1%} of peak (tiles {gg['eta_pad']:.1%} × "
               f"K-slices {gg['eta_inner']:.1%} × waves {gg['eta_wave']:.1%}); TPU keeps {tt['efficiency']:.1%} "
               f"(padding {tt['eta_pad']:.1%} × streaming share {tt['eta_inner']:.1%} × waves {tt['eta_wave']:.1%}). "
               f"Sweeping {dim}; the others fixed at {', '.join(f'{k}={v}' for k, v in here.items() if k != dim)}.")
    chart = charts.efficiency_sweep_chart(df, dim, here=here[dim],
                                          title=f"shape efficiency as {dim} varies (marked: {dim} = {here[dim]:,})")
    return View(df, chart, summary)


def _gpu_sms() -> dict[str, int]:
    return {c.id: c.compute_units for c in all_chips() if c.kind == "gpu" and c.compute_units}


@catalogue_cache(maxsize=1)
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


SPECS = (systolic_spec, animation_spec, shapes_spec)
