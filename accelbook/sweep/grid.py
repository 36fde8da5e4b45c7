"""A sweep's configurations: a grid (a dict of lists, every combination) or a DataFrame of rows, numbered.

``configurations({"chip": ["h100", "b200"], "batch": [1, 8]})`` is four rows in the order of
``itertools.product`` (the last key varies fastest), each with a ``config_id`` from 0. A DataFrame
is taken as it is, row by row. Values must be scalars (str, int, float, bool): they are columns of
the tidy result and of its Parquet files, and they are what a task ships to a worker.
"""

from __future__ import annotations

import hashlib
import itertools
import numbers

import numpy as np
import pandas as pd

from accelbook.checks import whole

#: the column that numbers the configurations (and orders the result)
CONFIG_ID = "config_id"
#: the column that holds a failed configuration's error message (empty for a good one)
ERROR = "error"
RESERVED = (CONFIG_ID, ERROR)


def _check_scalar(key, v):
    if isinstance(v, (str, bool, numbers.Number, np.generic)) and not isinstance(v, complex):
        return v.item() if isinstance(v, np.generic) else v
    raise ValueError(f"grid value {v!r} of {key!r} is a {type(v).__name__}: use str, int, float or bool "
                     "(put a tuple or an object behind a name the model function looks up)")


def configurations(grid) -> pd.DataFrame:
    """The grid as one row per configuration, ``config_id`` first (module docstring)."""
    if isinstance(grid, pd.DataFrame):
        df = grid.reset_index(drop=True).copy()
        if df.empty:
            raise ValueError("the grid has no configurations")
        for key in df.columns:
            for v in df[key].head(1000):
                _check_scalar(key, v)
    elif isinstance(grid, dict):
        if not grid:
            raise ValueError("the grid has no keys")
        values = {}
        for key, vs in grid.items():
            vs = [vs] if isinstance(vs, (str, numbers.Number)) else list(vs)
            if not vs:
                raise ValueError(f"grid key {key!r} has no values")
            values[key] = [_check_scalar(key, v) for v in vs]
        df = pd.DataFrame(list(itertools.product(*values.values())), columns=list(values))
    else:
        raise ValueError(f"a grid is a dict of lists or a DataFrame of configurations, got {type(grid).__name__}")
    bad = [c for c in df.columns if not isinstance(c, str) or c in RESERVED]
    if bad:
        raise ValueError(f"grid keys must be strings other than {RESERVED}: {bad}")
    df.insert(0, CONFIG_ID, np.arange(len(df), dtype=np.int64))
    return df


def grid_hash(configs: pd.DataFrame) -> str:
    """A fingerprint of the configurations (values, columns and order): a resumed sweep must match it."""
    h = hashlib.sha1(",".join(map(str, configs.columns)).encode())
    h.update(pd.util.hash_pandas_object(configs.astype(str), index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def blocks(n_configs: int, block_size: int) -> list[tuple[int, int]]:
    """Task ``k`` runs configurations ``[k·block_size, min((k+1)·block_size, n))``."""
    n_configs, block_size = whole("n_configs", n_configs, lo=0), whole("block_size", block_size)
    return [(a, min(a + block_size, n_configs)) for a in range(0, n_configs, block_size)]
