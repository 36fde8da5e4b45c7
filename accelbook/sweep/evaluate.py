"""Running the model function over configurations, in this process: the body of every sweep task.

A **per-configuration** function is called as ``fn(**config)`` and returns a dict (one row), a
DataFrame (any number of rows, e.g. one per layout), or ``None`` (no row). A **per-block** function
(``per="block"``, for vectorised or Numba models) is called as ``fn(configs)`` with a DataFrame of
configurations (``config_id`` included) and returns a DataFrame with a ``config_id`` column.

The result is tidy: ``config_id``, the configuration's columns, the model's columns (a model column
that repeats a configuration's name gets the suffix ``_result``), then ``error``: empty for a good
row, and for a configuration whose function raised, the one row that says ``Type: message``. A
block that raises is evaluated again one configuration at a time, so only its bad ones fail.
"""

from __future__ import annotations

import pandas as pd

from .grid import CONFIG_ID, ERROR

PER = ("config", "block")


def _message(exc: BaseException) -> str:
    """An error row's text. A ``ValueError`` is the model declining a configuration with its reason (a layout that
    does not fit, a batch over the KV cache): ``skipped: <reason>``, in words. Anything else is a fault in the
    model function, not a property of the configuration: ``failed: <type>: <message>``."""
    if isinstance(exc, ValueError):
        return f"skipped: {exc}"
    return f"failed: {type(exc).__name__}: {exc}"


def _as_frame(out, config_id: int) -> pd.DataFrame:
    if out is None:
        return pd.DataFrame({CONFIG_ID: pd.Series([], dtype="int64")})
    if isinstance(out, dict):
        out = pd.DataFrame([out])
    elif isinstance(out, pd.Series):
        out = out.to_frame().T
    if not isinstance(out, pd.DataFrame):
        raise TypeError(f"the model function returned a {type(out).__name__}; return a dict, a DataFrame or None")
    out = out.reset_index(drop=True)
    out.insert(0, CONFIG_ID, config_id)
    return out


def _one(fn, config: dict) -> tuple[pd.DataFrame, str | None]:
    cid = config[CONFIG_ID]
    kwargs = {k: v for k, v in config.items() if k != CONFIG_ID}
    try:
        return _as_frame(fn(**kwargs), cid), None
    except Exception as exc:   # a bad configuration is a row, not a failed sweep
        return pd.DataFrame({CONFIG_ID: [cid]}), _message(exc)


def _per_config(fn, configs: pd.DataFrame) -> pd.DataFrame:
    parts = []
    for config in configs.to_dict("records"):
        frame, err = _one(fn, config)
        frame[ERROR] = err
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def _per_block(fn, configs: pd.DataFrame) -> pd.DataFrame:
    try:
        out = fn(configs.copy())
        if not isinstance(out, pd.DataFrame) or CONFIG_ID not in out.columns:
            raise TypeError("a per-block function returns a DataFrame with a 'config_id' column")
        unknown = set(out[CONFIG_ID]) - set(configs[CONFIG_ID])
        if unknown:
            raise ValueError(f"the block function returned config_id values it was not given: {sorted(unknown)[:5]}")
        out = out.reset_index(drop=True)
        out[ERROR] = None
        return out
    except Exception:
        if len(configs) == 1:
            raise
    parts = []
    for k in range(len(configs)):   # find the bad ones
        row = configs.iloc[k:k + 1]
        try:
            parts.append(_per_block(fn, row))
        except Exception as exc:
            parts.append(pd.DataFrame({CONFIG_ID: [int(row[CONFIG_ID].iloc[0])], ERROR: [_message(exc)]}))
    return pd.concat(parts, ignore_index=True)


def evaluate(fn, configs: pd.DataFrame, per: str = "config") -> pd.DataFrame:
    """The tidy result of ``fn`` over ``configs`` (from :func:`~accelbook.sweep.grid.configurations`),
    in configuration order (module docstring)."""
    if per not in PER:
        raise ValueError(f"per must be one of {PER}, got {per!r}")
    if per == "block":
        try:
            out = _per_block(fn, configs)
        except Exception as exc:   # a block of one configuration that raised
            out = pd.DataFrame({CONFIG_ID: [int(configs[CONFIG_ID].iloc[0])], ERROR: [_message(exc)]})
    else:
        out = _per_config(fn, configs)
    return tidy(out, configs)


def tidy(out: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """Join the model's rows to their configurations: config_id, configuration, model columns, error."""
    keys = [c for c in configs.columns if c != CONFIG_ID]
    model_cols = [c for c in out.columns if c not in (CONFIG_ID, ERROR)]
    out = out.rename(columns={c: f"{c}_result" for c in model_cols if c in keys})
    model_cols = [f"{c}_result" if c in keys else c for c in model_cols]
    order = pd.Series(range(len(configs)), index=configs[CONFIG_ID].to_numpy())
    out = out.assign(_order=order.reindex(out[CONFIG_ID].to_numpy()).to_numpy())
    out = out.sort_values("_order", kind="stable").drop(columns="_order")
    merged = out.merge(configs, on=CONFIG_ID, how="left", sort=False)
    merged[ERROR] = merged[ERROR].astype(object).where(merged[ERROR].notna(), None)
    return merged[[CONFIG_ID, *keys, *model_cols, ERROR]].reset_index(drop=True)
