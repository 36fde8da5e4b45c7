"""Notebook 09, *Design your chip*: split a die between matrix units, SRAM and HBM interfaces, and see
which split training and decode each prefer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from accelbook.chip import design as chipdesign
from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui import charts
from accelbook.ui.dashboard import DashboardSpec, LogSlider, Slider, View

from .common import markdown_table


@catalogue_cache(maxsize=32)
def _design_case(area_mm2, power_w, decode_batch, context_len, shards, grid):
    tr = chipdesign.TrainingWorkload(shards=int(shards))
    de = chipdesign.DecodeWorkload(batch_size=int(decode_batch), context_len=int(context_len))
    df = chipdesign.sweep([tr, de], area_mm2=area_mm2, power_w=power_w, grid_mm2=grid)
    return df, chipdesign.compare_in_sweep(df)


def _share_of_best(df: pd.DataFrame) -> pd.DataFrame:
    """For each workload and each (matrix area, HBM stacks) cell, the best split's throughput as a share
    of the workload's best (the first best row of a cell, cells in ascending order, as a groupby's idxmax)."""
    M, N = df["matrix_mm2"].to_numpy(), df["n_hbm_stacks"].to_numpy()
    cols: dict[str, list] = {k: [] for k in ("workload", "matrix_mm2", "n_hbm_stacks", "sram_mb",
                                             "tokens_per_s_per_chip", "share_of_best", "limit")}
    for w in ("training", "decode"):
        v = df[f"{w}_tokens_per_s_per_chip"].to_numpy()
        top = np.nanmax(v) if len(v) else np.nan
        if not top > 0:
            raise ValueError(f"no split can run the {w} workload (memory capacity too small); raise the area or power")
        order = np.lexsort((np.arange(len(v)), -v, N, M))
        first = np.ones(len(order), dtype=bool)
        first[1:] = (M[order][1:] != M[order][:-1]) | (N[order][1:] != N[order][:-1])
        rows = order[first]
        for k, a in (("workload", np.full(len(rows), w, dtype=object)), ("matrix_mm2", M[rows]), ("n_hbm_stacks", N[rows]),
                     ("sram_mb", df["sram_bytes"].to_numpy()[rows] / 1e6), ("tokens_per_s_per_chip", v[rows]),
                     ("share_of_best", v[rows] / top), ("limit", df[f"{w}_limit"].to_numpy()[rows])):
            cols[k].append(a)
    return pd.DataFrame({k: np.concatenate(a) for k, a in cols.items()})


def _published_tpu8() -> str:
    t = chipdesign.params().tpu8
    return (f"Published: TPU 8t has {t['t_hbm_stacks']:.0f} HBM stacks and {t['t_sram_mb']:.0f} MB of SRAM, "
            f"TPU 8i has {t['i_hbm_stacks']:.0f} stacks and {t['i_sram_mb']:.0f} MB.")


def design_view(area_mm2, power_w, decode_batch, context_len, shards) -> View:
    df, cmp_ = _design_case(float(area_mm2), float(power_w), int(decode_batch), int(context_len), int(shards), 20.0)
    if df.empty:
        raise ValueError("no split fits this die area; raise the area")
    cells = _share_of_best(df)
    opt = cmp_.iloc[:2]
    best = pd.DataFrame({"workload": ["training", "decode"], "matrix_mm2": opt["matrix_mm2"].to_numpy(),
                         "n_hbm_stacks": opt["n_hbm_stacks"].to_numpy(), "design": opt["design"].to_numpy()})
    fig = charts.design_map_chart(cells, best, title=f"{area_mm2:.0f} mm², {power_w:.0f} W: throughput as a share of "
                                                     "each workload's best")
    lines = [f"| {r.design} | {r.matrix_mm2:.0f} | {r.sram_mb:.0f} | {r.n_hbm_stacks} | "
             f"{r.training_vs_best:.0%} of best | {r.decode_vs_best:.0%} of best |" for r in cmp_.iloc[:3].itertuples()]
    summary = (markdown_table(("design", "matrix (mm²)", "SRAM (MB)", "HBM stacks", "training", "decode"), lines)
               + "\n\n" + _published_tpu8() + " Every constant of this model is an estimate "
               "(`accelbook.chip.design.provenance_table()`).")
    return View(cells, fig, summary, table=cmp_)


@catalogue_cache(maxsize=256)
def _decode_runs_somewhere(decode_batch: int, context_len: int) -> bool:
    """Whether any setting of the other sliders gives this decode batch and context a result: the largest
    die and power budget and the most training shards of the grid (the most memory and the least training
    state per chip). Past about 2M tokens of KV cache (batch × context) none does."""
    c = design_spec().controls
    try:
        design_view(c["area_mm2"].max, c["power_w"].max, decode_batch, context_len, c["shards"].options[-1])
    except ValueError:
        return False
    return True


def _decode_limits(values) -> dict[str, list]:
    """The design dashboard's limits: the decode batches and contexts that some die of the grid can run
    together (:func:`_decode_runs_somewhere`); the batch gives way first."""
    c = design_spec().controls
    return {"decode_batch": [b for b in c["decode_batch"].options if _decode_runs_somewhere(b, values["context_len"])],
            "context_len": [x for x in c["context_len"].options if _decode_runs_somewhere(values["decode_batch"], x)]}


@catalogue_cache(maxsize=1)
def design_spec() -> DashboardSpec:
    return DashboardSpec(
        name="design", description="Split a die between matrix units, SRAM and HBM interfaces; training against decode.",
        controls={
            "area_mm2": Slider("die area (mm²)", 400.0, 860.0, 20.0, 820.0),
            "power_w": Slider("power budget (W)", 300.0, 1400.0, 50.0, 700.0),
            "decode_batch": LogSlider("decode batch", 0, 9, 64),
            "context_len": LogSlider("decode context", 10, 17, 8192),
            # from 16 shards: over 8 chips Llama 3.1 70B's weights, gradients and Adam state (about 1.3 TB) need
            # more memory a chip than any split of the die on this grid holds (no setting with 8 has a result)
            "shards": LogSlider("training shards", 4, 8, 32, help="training: chips sharing the model"),
        },
        view=design_view, limits=_decode_limits,
    )


SPECS = (design_spec,)
