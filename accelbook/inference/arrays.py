"""Numbers or arrays: the few helpers that let one formula of the inference model take either.

:mod:`accelbook.inference.terms` evaluates one layout (plain numbers) or a sweep's every layout and batch
at once (1-D NumPy arrays of equal length) with the same lines. On numbers these are the builtins, so an
estimate's figures are exactly what they were; on arrays, NumPy's element-wise equivalents.
"""

from __future__ import annotations

import math

import numpy as np


def any_array(*xs) -> bool:
    """True when one of ``xs`` is a NumPy array."""
    return any(type(x) is np.ndarray for x in xs)


def maximum(a, b):
    """``max(a, b)``, element-wise when either is an array."""
    return np.maximum(a, b) if any_array(a, b) else max(a, b)


def minimum(a, b):
    """``min(a, b)``, element-wise when either is an array."""
    return np.minimum(a, b) if any_array(a, b) else min(a, b)


def ceil_whole(x):
    """``⌈x⌉`` as a whole number (an int64 array for an array)."""
    return np.ceil(x).astype(np.int64) if any_array(x) else math.ceil(x)


def whole_part(x):
    """``int(x)`` (an int64 array for an array)."""
    return x.astype(np.int64) if any_array(x) else int(x)


def each(fn, *args):
    """``fn(*args)`` on plain numbers; where some of ``args`` are 1-D arrays (of one length), an array of
    ``fn`` at every position, ``fn`` called once per distinct combination of plain values (a sweep's
    layouts share a few tensor-parallel degrees and batch sizes, and ``fn`` may check its arguments)."""
    if not any_array(*args):
        return fn(*args)
    arrays = [a for a in args if type(a) is np.ndarray]
    if len(arrays) == 1:          # one array: its distinct values by sorting (faster than a dict of keys)
        distinct, where = np.unique(arrays[0], return_inverse=True)
        values = [fn(*(v if type(a) is np.ndarray else a for a in args)) for v in distinct.tolist()]
        return np.array(values)[where.ravel()]
    n = len(arrays[0])
    cols = [a.tolist() if type(a) is np.ndarray else [a] * n for a in args]
    memo: dict = {}
    out = []
    for key in zip(*cols):
        v = memo.get(key)
        if v is None:
            v = memo[key] = fn(*key)
        out.append(v)
    return np.array(out)
