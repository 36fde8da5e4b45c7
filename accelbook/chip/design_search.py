"""Searching the chip-design space: every fitting split on a grid, the best one per workload, and
the training/decode specialists against one compromise (the direction of Google's TPU 8t and 8i).

The grid steps matrix and SRAM area in absolute ``grid_mm2`` steps (so a larger budget's grid
contains a smaller one's) over every HBM stack count the die edge allows, with the I/O area held
fixed. Ties go to the lower full power, then the smaller area. Each split is evaluated by the same
vectorised model as a single design (:func:`accelbook.chip.design_die.throughput`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from accelbook.checks import instance, positive, within_budget

from .design_die import Design, components, design, throughput
from .design_params import Params, builtin_params
from .design_workloads import DecodeWorkload, TrainingWorkload, need

#: the most splits (matrix steps × SRAM steps × stack counts) a search evaluates: each takes about
#: 200 bytes across the model's arrays, so this is about 1 GiB (the default 814 mm² die on a 10 mm²
#: grid is about 70,000 splits)
MAX_GRID_POINTS = 5e6


def _grid(p: Params, area_mm2: float, power_w: float, grid_mm2: float, io_mm2: float):
    """Every fitting split on a grid of ``grid_mm2`` steps (absolute, so a larger budget's grid
    contains a smaller one's), all stack counts the die edge allows."""
    n_steps = math.floor(area_mm2 / grid_mm2) + 1
    max_stacks = int(4 * math.sqrt(area_mm2) // p.hbm_shoreline_mm)
    within_budget(f"a design grid of {area_mm2:g} mm² in {grid_mm2:g} mm² steps", n_steps**2 * (max_stacks + 1.0),
                  MAX_GRID_POINTS, "splits", "accelbook.chip.design_search.MAX_GRID_POINTS; raise grid_mm2")
    steps = np.arange(0.0, area_mm2 + 1e-9, grid_mm2)
    M, S, N = np.meshgrid(steps, steps, np.arange(max_stacks + 1), indexing="ij")
    M, S, N = M.ravel(), S.ravel(), N.ravel()
    comp = components(p, M, S, N, io_mm2)
    ok = ((comp["area_mm2"] <= area_mm2 * (1 + 1e-12)) & (comp["shoreline_mm"] <= comp["perimeter_mm"] * (1 + 1e-12))
          & (M > 0))
    comp = {k: np.broadcast_to(v, M.shape)[ok] for k, v in comp.items()}
    return M[ok], S[ok], N[ok], comp


def _budgets(p, area_mm2, power_w, grid_mm2, io_mm2):
    A = p.area_mm2 if area_mm2 is None else positive("area_mm2", area_mm2)
    P = p.power_w if power_w is None else positive("power_w", power_w)
    g = positive("grid_mm2", grid_mm2)
    io = p.h100_split["io_mm2"] if io_mm2 is None else positive("io_mm2", io_mm2, allow_zero=True)
    if A <= p.uncore_mm2 + io:
        raise ValueError(f"area_mm2 = {A:g} leaves no room for any design: the uncore ({p.uncore_mm2:g} mm²) and "
                         f"the I/O (io_mm2 = {io:g} mm²) take it all")
    if g > A - p.uncore_mm2 - io:
        raise ValueError(f"grid_mm2 = {g:g} is coarser than the room area_mm2 = {A:g} leaves for matrix and SRAM "
                         f"({A - p.uncore_mm2 - io:g} mm²): no step of the grid fits; use a smaller grid_mm2")
    return A, P, g, io


def _params(params) -> Params:
    return builtin_params() if params is None else instance("params", params, Params)


def sweep(workloads, area_mm2: float | None = None, power_w: float | None = None, grid_mm2: float = 10.0,
          io_mm2: float | None = None, params: Params | None = None) -> pd.DataFrame:
    """Evaluate every fitting split of the grid on each workload: one row per split, one
    ``<name>_tokens_per_s_per_chip`` and ``<name>_limit`` column per workload. ``io_mm2`` is held
    fixed (default: the H100 split's)."""
    p = _params(params)
    A, P, g, io = _budgets(p, area_mm2, power_w, grid_mm2, io_mm2)
    ws = workloads if isinstance(workloads, (list, tuple)) else [workloads]
    M, S, N, comp = _grid(p, A, P, g, io)
    cols = {
        "matrix_mm2": M, "sram_mm2": S, "n_hbm_stacks": N.astype(int), "io_mm2": io, "area_mm2": comp["area_mm2"],
        "peak_flop_s": comp["peak_flop_s"], "sram_bytes": comp["sram_bytes"], "hbm_bytes": comp["hbm_bytes"],
        "hbm_bw_bytes_per_s": comp["hbm_bw_bytes_per_s"], "full_power_w": comp["full_power_w"],
    }
    for w in ws:   # all columns into one frame at once (adding them one by one costs a copy each)
        r = throughput(p, comp, need(w, p), P)
        cols.update({f"{w.name}_tokens_per_s_per_chip": r["tokens_per_s_per_chip"], f"{w.name}_limit": r["limit"],
                     f"{w.name}_power_w": r["power_w"], f"{w.name}_clock": r["clock"]})
    return pd.DataFrame(cols)


def _pick(df: pd.DataFrame, score: np.ndarray) -> int:
    """Row with the best score; ties go to the lower full power, then the smaller area."""
    order = np.lexsort((df["area_mm2"].to_numpy(), df["full_power_w"].to_numpy(), -score))
    return int(order[0])


def _row_design(row, p, A, P) -> Design:
    return design(float(row["matrix_mm2"]), float(row["sram_mm2"]), int(row["n_hbm_stacks"]), float(row["io_mm2"]),
                  p, area_mm2=A, power_w=P)


def best_design(workload: TrainingWorkload | DecodeWorkload, area_mm2: float | None = None,
                power_w: float | None = None, grid_mm2: float = 10.0, io_mm2: float | None = None,
                params: Params | None = None) -> tuple[Design, pd.DataFrame]:
    """The split with the highest tokens/s per chip on ``workload``, and the table of all fitting
    splits (sorted best first). Grid: matrix and SRAM in ``grid_mm2`` steps, every stack count."""
    p = _params(params)
    need(workload, p)  # validates the workload first
    A, P, _, _ = _budgets(p, area_mm2, power_w, grid_mm2, io_mm2)
    df = sweep([workload], area_mm2, power_w, grid_mm2, io_mm2, p)
    if df.empty:
        raise ValueError(f"area_mm2={A} leaves no room for any design (uncore {p.uncore_mm2} mm² + I/O)")
    col = f"{workload.name}_tokens_per_s_per_chip"
    best = df.iloc[_pick(df, df[col].to_numpy())]
    table = df.sort_values(col, ascending=False, kind="stable", ignore_index=True)
    return _row_design(best, p, A, P), table


def compare_8t_8i(training: TrainingWorkload | None = None, decode: DecodeWorkload | None = None,
                  area_mm2: float | None = None, power_w: float | None = None, grid_mm2: float = 10.0,
                  io_mm2: float | None = None, params: Params | None = None) -> pd.DataFrame:
    """The training optimum, the decode optimum and the best single compromise (highest geometric
    mean of the two throughputs, each relative to its specialist) on the same grid, plus Google's
    TPU 8t / 8i stack counts and SRAM for the direction. Columns: matrix_mm2, sram_mb,
    n_hbm_stacks, training/decode tokens/s per chip and each as a share of the specialist's."""
    p = _params(params)
    training = TrainingWorkload() if training is None else instance("training", training, TrainingWorkload)
    decode = DecodeWorkload() if decode is None else instance("decode", decode, DecodeWorkload)
    _budgets(p, area_mm2, power_w, grid_mm2, io_mm2)
    return compare_in_sweep(sweep([training, decode], area_mm2, power_w, grid_mm2, io_mm2, p), p)


def compare_in_sweep(df: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """:func:`compare_8t_8i`'s table from a :func:`sweep` of a training and a decode workload already
    made (``sweep([training, decode], ...)``), so a caller that shows the sweep too need not make it twice."""
    p = _params(params)
    df = instance("df", df, pd.DataFrame)
    if df.empty or "training_tokens_per_s_per_chip" not in df or "decode_tokens_per_s_per_chip" not in df:
        raise ValueError("df must be a non-empty sweep([training, decode], ...) of a training and a decode workload")
    t, d = df["training_tokens_per_s_per_chip"].to_numpy(), df["decode_tokens_per_s_per_chip"].to_numpy()
    it, id_ = _pick(df, t), _pick(df, d)
    if t[it] <= 0 or d[id_] <= 0:
        raise ValueError("no design on this grid runs both workloads (memory capacity or power); "
                         "raise area_mm2 or power_w, or shard the workloads over more chips")
    ic = _pick(df, np.sqrt((t / t[it]) * (d / d[id_])))
    rows = []
    col = {k: df[k].to_numpy() for k in ("matrix_mm2", "sram_bytes", "n_hbm_stacks", "peak_flop_s", "training_limit",
                                         "decode_limit")}
    for label, i in (("training optimum (8t-like)", it), ("decode optimum (8i-like)", id_), ("compromise", ic)):
        r = {k: v[i] for k, v in col.items()}
        rows.append({"design": label, "matrix_mm2": r["matrix_mm2"], "sram_mb": r["sram_bytes"] / 1e6,
                     "n_hbm_stacks": int(r["n_hbm_stacks"]), "peak_tflop_s": r["peak_flop_s"] / 1e12,
                     "training_tokens_per_s_per_chip": t[i], "decode_tokens_per_s_per_chip": d[i],
                     "training_vs_best": t[i] / t[it], "decode_vs_best": d[i] / d[id_],
                     "training_limit": r["training_limit"], "decode_limit": r["decode_limit"]})
    for label, pre in (("TPU 8t (published)", "t"), ("TPU 8i (published)", "i")):
        rows.append({"design": label, "n_hbm_stacks": int(p.tpu8[f"{pre}_hbm_stacks"]),
                     "sram_mb": p.tpu8[f"{pre}_sram_mb"]})
    return pd.DataFrame(rows)
