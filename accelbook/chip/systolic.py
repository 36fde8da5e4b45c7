"""A cycle-level systolic-array simulator (Numba) and its closed form, matched to SCALE-Sim v2.

A GEMM ``C[M×N] = A[M×K] · B[K×N]`` runs on an ``R×C`` array of multiply-accumulate PEs. Three
dataflows decide which operand stays in the PEs while the others stream through:

- ``"os"`` output stationary: PE (i, j) accumulates one output; rows map M (``S_r = M``), columns
  map N (``S_c = N``), and K streams in time (``T = K``);
- ``"ws"`` weight stationary (the TPU's MXU): B is preloaded; ``S_r = K``, ``S_c = N``, ``T = M``;
- ``"is"`` input stationary: A is preloaded; ``S_r = K``, ``S_c = M``, ``T = N``.

Operands larger than the array are *folded*: ``ceil(S_r/R) · ceil(S_c/C)`` passes. One pass lasts

    L_os = T + R + C - 2                (skewed fill + T MACs + drain)
    L_ws = L_is = 2R + T + C - 2        (R cycles to preload, then the same)

and the simulator counts ``Σ L - 1`` cycles in all (SCALE-Sim reports the index of the last
cycle, not the number of cycles: we follow it). Utilisation is ``M·N·K / (cycles · R · C)``.

Ground truth: SCALE-Sim v2 (scalesim-project/scale-sim-v2, commit 22f88b1) in CALC mode, whose
compute cycles, overall and compute utilisation, mapping efficiency and SRAM access counts this
module reproduces exactly (``data/validation/scalesim_v2_calc.csv`` holds its outputs on the reference grid).
Conventions followed where SCALE-Sim's choice is arbitrary, and documented in notebook 02:

1. total cycles = trace length - 1;
2. output-stationary OFMAP SRAM writes add ``R + C`` per fold to the ``M·N`` writes in the trace
   (SCALE-Sim counts ``rows + cols`` of each padded fold once more); ``ofmap_writes_in_trace``
   gives the trace's own count;
3. the per-fold "compute utilisation" divides by the fold's length ``T + R + C - 2`` for OS but by
   ``2R + 2C + T - 3`` for WS and IS, which is ``C - 1`` cycles more than the fold lasts (SCALE-Sim
   derives it from the shape of its unskewed demand matrix). "Overall utilisation", computed from
   the total cycles, has no such quirk: prefer it.

The per-cycle demand trace (operands entering the array, outputs leaving it, PEs busy) comes from
the Numba kernel :func:`_simulate`, which steps through every cycle; :func:`cycles` and
:func:`closed_form` give the same totals instantly for sliders; :func:`pe_states` gives what each PE
holds at one cycle, for the animation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit

from accelbook.checks import whole, within_budget

DATAFLOWS = ("os", "ws", "is")
_MODE = {"os": 0, "ws": 1, "is": 2}
MAX_TRACE_CYCLES = 20_000_000  # a trace is 4 int32 per cycle: 320 MB at this size


#: the most cycles :func:`simulate` steps through (about 5 s at 4e8 cycles/s); past it, it refuses
#: and points at :func:`closed_form`, which gives the same totals in microseconds
MAX_SIMULATE_CYCLES = 2_000_000_000
#: the largest GEMM dimension and array side accepted (so that M·N·K and the PE counts stay exact)
MAX_DIM, MAX_ARRAY_SIDE = 2**31, 2**16


def _check(M, N, K, rows, cols, dataflow) -> None:
    for name, v in (("M", M), ("N", N), ("K", K), ("rows", rows), ("cols", cols)):
        whole(name, v)
        limit = MAX_ARRAY_SIDE if name in ("rows", "cols") else MAX_DIM
        if v > limit:
            raise ValueError(f"{name} must be at most {limit:,}, got {v!r}")
    if dataflow not in DATAFLOWS:
        raise ValueError(f"dataflow must be one of {DATAFLOWS} (output-, weight-, input-stationary), got {dataflow!r}")


def mapping(M: int, N: int, K: int, dataflow: str) -> tuple[int, int, int]:
    """``(S_r, S_c, T)``: what the array's rows and columns hold, and what streams in time."""
    return {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]


def fold_length(rows: int, cols: int, T: int, dataflow: str) -> int:
    """Cycles of one fold in the trace: ``T + R + C - 2`` (OS) or ``2R + T + C - 2`` (WS, IS)."""
    return T + rows + cols - 2 if dataflow == "os" else 2 * rows + T + cols - 2


# -- the Numba kernel -----------------------------------------------------------------------------
@njit(cache=True)
def _count_in(lo, hi, n):
    """How many integers in [lo, hi] fall in [0, n)."""
    a = max(lo, 0)
    b = min(hi, n - 1)
    return b - a + 1 if b >= a else 0


@njit(cache=True)
def _diag_le(s, ru, cu):
    """#{(i, j): 0 <= i < ru, 0 <= j < cu, i + j <= s}."""
    if s < 0:
        return 0
    total = 0
    # rows i <= s - cu + 1 contribute cu each; rows up to s contribute s - i + 1
    full = min(ru, max(0, s - cu + 2))
    total += full * cu
    i0 = full
    i1 = min(ru - 1, s)
    if i1 >= i0:
        n = i1 - i0 + 1
        # sum over i in [i0, i1] of (s - i + 1)
        total += n * (s + 1) - (i0 + i1) * n // 2
    return total


@njit(cache=True)
def _fold(T, R, C, ru, cu, mode, L, record, start, ifmap_in, filter_in, ofmap_out, busy):
    """Step through the ``L`` cycles of one fold of ``ru × cu`` mapped PEs, filling the trace from cycle
    ``start`` if ``record``. Returns (ifmap_reads, filter_reads, ofmap_trace_writes, busy_pe_cycles)."""
    n_if = 0
    n_fi = 0
    n_of = 0
    n_busy = 0
    for t in range(L):
        if mode == 0:
            # A enters row i at t = k + i; B enters column j at t = k + j (k < T)
            a = _count_in(t - T + 1, t, ru)
            b = _count_in(t - T + 1, t, cu)
            # outputs leave column j at t = T - 1 + r + j for the flipped, padded rows
            # r in [R - ru, R): so j in [t - T - R + 2, t - T + 1 - R + ru]
            o = _count_in(t - T - R + 2, t - T + 1 - R + ru, cu)
            off = 0
        else:
            # the stationary operand is preloaded during t < R (rows flipped and padded)
            pre = cu if (t < R and R - 1 - t < ru) else 0
            stream = _count_in(t - R - T + 1, t - R, ru)
            if mode == 1:
                a = stream
                b = pre
            else:
                a = pre
                b = stream
            o = _count_in(t - (2 * R - 1) - T + 1, t - (2 * R - 1), cu)
            off = R
        # PE (i, j) does its k-th MAC at t = off + k + i + j
        p = _diag_le(t - off, ru, cu) - _diag_le(t - off - T, ru, cu)
        n_if += a
        n_fi += b
        n_of += o
        n_busy += p
        if record:
            ifmap_in[start + t] = a
            filter_in[start + t] = b
            ofmap_out[start + t] = o
            busy[start + t] = p
    return n_if, n_fi, n_of, n_busy


@njit(cache=True)
def _simulate(Sr, Sc, T, R, C, mode, record, ifmap_in, filter_in, ofmap_out, busy, fold_info):
    """Step through every cycle of every fold (:func:`_fold`); fill the per-cycle trace if ``record``.
    Folds of the same shape (full, or the last partial row or column of folds) have the same cycles:
    each shape is stepped through once and copied after.

    Returns (trace_cycles, ifmap_reads, filter_reads, ofmap_trace_writes, busy_pe_cycles,
    sum of per-fold mapping efficiency, sum of per-fold compute utilisation).
    """
    row_fold = (Sr + R - 1) // R
    col_fold = (Sc + C - 1) // C
    if mode == 0:
        L = T + R + C - 2
        util_cycles = L
    else:
        L = 2 * R + T + C - 2
        util_cycles = 2 * R + 2 * C + T - 3
    seen = np.full(4, -1, dtype=np.int64)          # first cycle of each fold shape, once stepped through
    counts = np.zeros((4, 4), dtype=np.int64)      # its (ifmap, filter, ofmap, busy) counts
    totals = np.zeros(4, dtype=np.int64)
    cyc = 0
    map_sum = 0.0
    util_sum = 0.0
    f = 0
    for fc in range(col_fold):
        cu = min(C, Sc - fc * C)
        for fr in range(row_fold):
            ru = min(R, Sr - fr * R)
            if record:
                fold_info[f, 0] = cyc
                fold_info[f, 1] = ru
                fold_info[f, 2] = cu
            f += 1
            map_sum += ru * cu / (R * C)
            util_sum += ru * cu * T / (R * C * util_cycles)
            shape = 2 * (ru != R) + (cu != C)
            if seen[shape] < 0:
                seen[shape] = cyc
                counts[shape, 0], counts[shape, 1], counts[shape, 2], counts[shape, 3] = _fold(
                    T, R, C, ru, cu, mode, L, record, cyc, ifmap_in, filter_in, ofmap_out, busy)
            elif record:
                s0 = seen[shape]
                ifmap_in[cyc:cyc + L] = ifmap_in[s0:s0 + L]
                filter_in[cyc:cyc + L] = filter_in[s0:s0 + L]
                ofmap_out[cyc:cyc + L] = ofmap_out[s0:s0 + L]
                busy[cyc:cyc + L] = busy[s0:s0 + L]
            totals += counts[shape]
            cyc += L
    return cyc, totals[0], totals[1], totals[2], totals[3], map_sum, util_sum


# -- public API -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SystolicResult:
    """What :func:`simulate` returns. Utilisations are fractions in [0, 1] (SCALE-Sim prints %)."""

    M: int
    N: int
    K: int
    rows: int
    cols: int
    dataflow: str
    total_cycles: int            # SCALE-Sim's "Total Cycles": trace length - 1
    trace_cycles: int            # cycles in the demand trace
    n_folds: int
    overall_util: float          # M·N·K / (total_cycles · R · C)
    mapping_efficiency: float    # mean over folds of (PEs mapped / R·C)
    compute_util: float          # mean over folds of MACs / (R·C · fold cycles), SCALE-Sim's definition
    sram_ifmap_reads: int        # A elements read from SRAM (SCALE-Sim's count)
    sram_filter_reads: int       # B elements read from SRAM
    sram_ofmap_writes: int       # C elements written (SCALE-Sim's count; OS adds R + C per fold)
    ofmap_writes_in_trace: int   # C elements leaving the array in the trace
    busy_pe_cycles: int          # Σ over cycles of busy PEs (= M·N·K: every MAC once)
    trace: pd.DataFrame | None = None  # per cycle: cycle, fold, ifmap_in, filter_in, ofmap_out, busy_pes

    @property
    def macs(self) -> int:
        return self.M * self.N * self.K


def _overall_util(M: int, N: int, K: int, total: int, R: int, C: int) -> float:
    """SCALE-Sim's overall utilisation ``M·N·K / (total_cycles · R·C)``, at most 1: its total counts
    one cycle fewer than the trace, so a 1×1 array's one fold would otherwise read 2 (2 MACs in 1 cycle)."""
    return min(1.0, M * N * K / (total * R * C)) if total > 0 else 0.0


def simulate(M: int, N: int, K: int, rows: int, cols: int, dataflow: str = "ws",
             trace: bool = False) -> SystolicResult:
    """Simulate ``A[M×K] · B[K×N]`` on a ``rows × cols`` array, cycle by cycle.

    Parameters
    ----------
    M, N, K : GEMM dimensions (elements)
    rows, cols : array size R × C (PEs)
    dataflow : "os", "ws" or "is"
    trace : also return the per-cycle demand trace (up to ``MAX_TRACE_CYCLES`` cycles)
    """
    _check(M, N, K, rows, cols, dataflow)
    Sr, Sc, T = mapping(M, N, K, dataflow)
    n_folds = math.ceil(Sr / rows) * math.ceil(Sc / cols)
    length = n_folds * fold_length(rows, cols, T, dataflow)
    within_budget(f"simulating a {M}×{K}·{K}×{N} GEMM on {rows}×{cols} ({dataflow})", length, MAX_SIMULATE_CYCLES,
                  "cycles", "accelbook.chip.systolic.MAX_SIMULATE_CYCLES; closed_form gives the same totals at once")
    if trace and length > MAX_TRACE_CYCLES:
        raise ValueError(f"a trace of {length:,} cycles is too long to keep (limit {MAX_TRACE_CYCLES:,}); "
                         "simulate without trace=True, or a smaller GEMM")
    n = length if trace else 1
    arrs = [np.zeros(n, dtype=np.int32) for _ in range(4)]
    fold_info = np.zeros((n_folds if trace else 1, 3), dtype=np.int64)
    cyc, n_if, n_fi, n_of, n_busy, map_sum, util_sum = _simulate(
        Sr, Sc, T, rows, cols, _MODE[dataflow], trace, *arrs, fold_info)
    ofmap_writes = n_of + (n_folds * (rows + cols) if dataflow == "os" else 0)
    df = None
    if trace:
        fold = np.repeat(np.arange(n_folds), fold_length(rows, cols, T, dataflow))
        df = pd.DataFrame({"cycle": np.arange(cyc), "fold": fold, "ifmap_in": arrs[0], "filter_in": arrs[1],
                           "ofmap_out": arrs[2], "busy_pes": arrs[3]}, copy=False)   # fresh arrays: no copy
    total = cyc - 1
    return SystolicResult(
        M, N, K, rows, cols, dataflow, total_cycles=total, trace_cycles=cyc, n_folds=n_folds,
        overall_util=_overall_util(M, N, K, total, rows, cols),
        mapping_efficiency=map_sum / n_folds, compute_util=util_sum / n_folds,
        sram_ifmap_reads=n_if, sram_filter_reads=n_fi, sram_ofmap_writes=ofmap_writes,
        ofmap_writes_in_trace=n_of, busy_pe_cycles=n_busy, trace=df,
    )


def closed_form(M: int, N: int, K: int, rows: int, cols: int, dataflow: str = "ws") -> SystolicResult:
    """The same totals as :func:`simulate`, from formulas (microseconds; for sliders).

    With ``F = ceil(S_r/R)·ceil(S_c/C)`` folds of ``L`` cycles: cycles = F·L - 1; mapping
    efficiency = S_r·S_c / (F·R·C) (every fold's mapped PEs sum to S_r·S_c); SRAM reads of the
    streamed operands = T·S_r·ceil(S_c/C) or T·S_c·ceil(S_r/R); the stationary operand is read once.
    """
    _check(M, N, K, rows, cols, dataflow)
    R, C = rows, cols
    Sr, Sc, T = mapping(M, N, K, dataflow)
    rf, cf = math.ceil(Sr / R), math.ceil(Sc / C)
    F = rf * cf
    L = fold_length(R, C, T, dataflow)
    util_cycles = L if dataflow == "os" else 2 * R + 2 * C + T - 3
    total = F * L - 1
    if dataflow == "os":
        n_if, n_fi, n_of = cf * T * Sr, rf * T * Sc, Sr * Sc
        sram_of = n_of + F * (R + C)
    else:
        streamed_rows, stationary, n_of = cf * T * Sr, Sr * Sc, rf * T * Sc
        n_if, n_fi = (streamed_rows, stationary) if dataflow == "ws" else (stationary, streamed_rows)
        sram_of = n_of
    return SystolicResult(
        M, N, K, R, C, dataflow, total_cycles=total, trace_cycles=F * L, n_folds=F,
        overall_util=_overall_util(M, N, K, total, R, C),
        mapping_efficiency=Sr * Sc / (F * R * C), compute_util=Sr * Sc * T / (F * R * C * util_cycles),
        sram_ifmap_reads=n_if, sram_filter_reads=n_fi, sram_ofmap_writes=sram_of, ofmap_writes_in_trace=n_of,
        busy_pe_cycles=M * N * K,
    )


def cycles(M: int, N: int, K: int, rows: int, cols: int, dataflow: str = "ws") -> int:
    """Total cycles (SCALE-Sim's convention) in O(1): ``F·L - 1``."""
    return closed_form(M, N, K, rows, cols, dataflow).total_cycles


def pe_states(M: int, N: int, K: int, rows: int, cols: int, dataflow: str, cycle: int) -> pd.DataFrame:
    """What every PE does at one cycle: busy or not, which MAC (k), and which operands it holds.

    For arrays up to 16×16 (the animation). Indices are into A (M×K), B (K×N) and C (M×N).
    Columns: row, col, mapped, busy, step, a, b, c.
    """
    _check(M, N, K, rows, cols, dataflow)
    if rows > 16 or cols > 16:
        raise ValueError("the per-PE view is for arrays up to 16×16")
    R, C = rows, cols
    Sr, Sc, T = mapping(M, N, K, dataflow)
    rf = math.ceil(Sr / R)
    L = fold_length(R, C, T, dataflow)
    total = math.ceil(Sc / C) * rf * L
    if not 0 <= cycle < total:
        raise ValueError(f"cycle must be in [0, {total - 1}], got {cycle!r}")
    f, t = divmod(cycle, L)
    fc, fr = divmod(f, rf)
    r0, c0 = fr * R, fc * C
    off = 0 if dataflow == "os" else R
    i, j = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    i, j = i.ravel(), j.ravel()
    mapped = (r0 + i < Sr) & (c0 + j < Sc)
    step = t - off - i - j            # which streamed index this PE works on now
    busy = mapped & (step >= 0) & (step < T)
    s = np.where(busy, step, -1)
    if dataflow == "os":      # PE holds C[m, n]; A[m, k] and B[k, n] pass through
        m, n, k = r0 + i, c0 + j, s
    elif dataflow == "ws":    # PE holds B[k, n]; A[m, k] passes; psum of C[m, n]
        k, n, m = r0 + i, c0 + j, s
    else:                     # PE holds A[m, k]; B[k, n] passes; psum of C[m, n]
        k, m, n = r0 + i, c0 + j, s
    def label(x, y, ok):
        return np.where(ok, np.char.add(np.char.add(np.char.add("[", x.astype(str)), ","), np.char.add(y.astype(str), "]")), "")
    return pd.DataFrame({
        "row": i, "col": j, "mapped": mapped, "busy": busy, "step": s,
        "a": label(m, k, busy), "b": label(k, n, busy), "c": label(m, n, busy),
        "fold": f, "fold_cycle": t,
    })


def simulate_table(M, N, K, rows, cols) -> pd.DataFrame:
    """The three dataflows side by side (closed form): cycles, utilisations and SRAM traffic."""
    out = []
    for df in DATAFLOWS:
        r = closed_form(M, N, K, rows, cols, df)
        out.append({
            "dataflow": df, "cycles": r.total_cycles, "folds": r.n_folds, "overall_util": r.overall_util,
            "mapping_efficiency": r.mapping_efficiency, "compute_util": r.compute_util,
            "sram_ifmap_reads": r.sram_ifmap_reads, "sram_filter_reads": r.sram_filter_reads,
            "sram_ofmap_writes": r.sram_ofmap_writes,
            "sram_accesses_per_mac": (r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes) / r.macs,
        })
    return pd.DataFrame(out)


def scalesim_comparison(path=None) -> pd.DataFrame:
    """Our simulator against SCALE-Sim v2's recorded outputs, case by case, with the differences.

    ``data/validation/scalesim_v2_calc.csv`` was made by running SCALE-Sim v2 (commit 22f88b1,
    CALC mode, one GEMM per run) on a grid of GEMMs, arrays and dataflows; ``seconds`` is its run time.
    """
    from accelbook.specs.loader import DATA_DIR

    ref = pd.read_csv(path if path is not None else DATA_DIR / "validation" / "scalesim_v2_calc.csv")
    rows = []
    for r in ref.itertuples(index=False):
        s = simulate(int(r.M), int(r.N), int(r.K), int(r.rows), int(r.cols), r.dataflow)
        rows.append({
            "M": r.M, "N": r.N, "K": r.K, "array": f"{r.rows}x{r.cols}", "dataflow": r.dataflow,
            "cycles": s.total_cycles, "scalesim_cycles": r.total_cycles,
            "util_pct": s.overall_util * 100, "scalesim_util_pct": r.overall_util_pct,
            "sram_reads": s.sram_ifmap_reads + s.sram_filter_reads,
            "scalesim_sram_reads": r.sram_ifmap_reads + r.sram_filter_reads,
            "ofmap_writes": s.sram_ofmap_writes, "scalesim_ofmap_writes": r.sram_ofmap_writes,
            "mapping_eff_pct": s.mapping_efficiency * 100, "scalesim_mapping_eff_pct": r.mapping_efficiency_pct,
            "compute_util_pct": s.compute_util * 100, "scalesim_compute_util_pct": r.compute_util_pct,
            "scalesim_seconds": r.seconds,
        })
    out = pd.DataFrame(rows)
    out["max_abs_diff"] = np.max(np.abs(np.stack([
        out["cycles"] - out["scalesim_cycles"], out["util_pct"] - out["scalesim_util_pct"],
        out["sram_reads"] - out["scalesim_sram_reads"], out["ofmap_writes"] - out["scalesim_ofmap_writes"],
        out["mapping_eff_pct"] - out["scalesim_mapping_eff_pct"],
        out["compute_util_pct"] - out["scalesim_compute_util_pct"]]).astype(float)), axis=0)
    return out
