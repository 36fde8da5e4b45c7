"""Slow, obviously-correct reference for accelbook.systolic: build the demand matrices explicitly.

This follows the procedure SCALE-Sim v2 documents for its compute model (operand tiles per fold,
padded with empty slots to the array size, preload prefixes, drain gaps, then skewed so that
column c starts c cycles late) with plain NumPy arrays, and reads the per-cycle counts off them.
Busy PEs come from an explicit loop over every PE of every cycle. Written independently of the
Numba kernel; nothing here is shared with it.
"""

from __future__ import annotations

import math

import numpy as np

EMPTY = -1


def _skew(mat: np.ndarray) -> np.ndarray:
    rows, cols = mat.shape
    out = np.full((rows + cols - 1, cols), EMPTY)
    for c in range(cols):
        out[c:c + rows, c] = mat[:, c]
    return out


def _pad(mat: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = np.full((rows, cols), EMPTY)
    out[: mat.shape[0], : mat.shape[1]] = mat
    return out


def demand_matrices(M, N, K, R, C, dataflow):
    """Per fold (column folds outer, row folds inner): the ifmap, filter and ofmap demand matrices.

    Entries are element ids (>= 0) or EMPTY. Returns the three matrices stacked over folds, plus the
    per-fold (rows used, cols used).
    """
    A = np.arange(M * K).reshape(M, K)             # ifmap ids
    B = np.arange(K * N).reshape(K, N) + M * K     # filter ids
    Cm = np.arange(M * N).reshape(M, N)            # ofmap ids
    if dataflow == "os":
        Sr, Sc, T = M, N, K
    elif dataflow == "ws":
        Sr, Sc, T = K, N, M
    else:
        Sr, Sc, T = K, M, N
    ifm, fil, ofm, used = [], [], [], []
    for fc in range(math.ceil(Sc / C)):
        for fr in range(math.ceil(Sr / R)):
            rs, re_ = fr * R, min(fr * R + R, Sr)
            cs, ce = fc * C, min(fc * C + C, Sc)
            used.append((re_ - rs, ce - cs))
            gap = lambda n, w: np.full((n, w), EMPTY)  # noqa: E731
            if dataflow == "os":
                a = _pad(A[rs:re_, :].T, T, R)                          # T x R: row i gets A[m, k] at t = k
                b = _pad(B[:, cs:ce], T, C)                             # T x C
                o = np.flip(_pad(Cm[rs:re_, cs:ce], R, C), axis=0)     # drains from the bottom edge
                ifm.append(_skew(np.vstack([a, gap(C - 1, R)])))
                fil.append(_skew(np.vstack([b, gap(R - 1, C)])))
                ofm.append(_skew(np.vstack([gap(T - 1, C), o])))
            else:
                if dataflow == "ws":
                    stat = B[rs:re_, cs:ce]                             # weights, K x N tile
                    stream = A[:, rs:re_]                               # T(=M) x rows
                    out = Cm[:, cs:ce]                                  # M x cols
                else:
                    stat = A[cs:ce, rs:re_].T                           # inputs, K x M tile
                    stream = B[rs:re_, :].T                             # T(=N) x rows
                    out = Cm[cs:ce, :].T                                # N x cols
                pre = np.vstack([np.flip(_pad(stat, R, C), axis=0), gap(R + C + T - 2, C)])
                streamed = _skew(np.vstack([gap(R, R), _pad(stream, T, R), gap(C - 1, R)]))
                o = _skew(np.vstack([gap(2 * R - 1, C), _pad(out, T, C)]))
                if dataflow == "ws":
                    ifm.append(streamed)
                    fil.append(pre)
                else:
                    ifm.append(pre)
                    fil.append(streamed)
                ofm.append(o)
    return np.vstack(ifm), np.vstack(fil), np.vstack(ofm), used


def reference_trace(M, N, K, R, C, dataflow):
    """Per-cycle (ifmap_in, filter_in, ofmap_out, busy_pes) and the trace length, the slow way."""
    ifm, fil, ofm, used = demand_matrices(M, N, K, R, C, dataflow)
    assert ifm.shape[0] == fil.shape[0] == ofm.shape[0], "operand demands out of step"
    count = lambda mat: (mat != EMPTY).sum(axis=1)  # noqa: E731
    T = {"os": K, "ws": M, "is": N}[dataflow]
    L = ifm.shape[0] // len(used)
    off = 0 if dataflow == "os" else R
    busy = np.zeros(ifm.shape[0], dtype=int)
    for f, (ru, cu) in enumerate(used):
        for t in range(L):
            n = 0
            for i in range(ru):
                for j in range(cu):
                    if 0 <= t - off - i - j < T:   # PE (i, j) does its (t - off - i - j)-th MAC
                        n += 1
            busy[f * L + t] = n
    return count(ifm), count(fil), count(ofm), busy
