"""What a subcommand prints: a readable table, or JSON with the API's field names and SI numbers.

JSON keeps the numbers as the API returns them (seconds, bytes, FLOP/s, W, USD): a dataclass becomes
an object of its fields, a DataFrame a list of row objects, NumPy scalars plain numbers, and a NaN or
an infinity ``null`` (JSON has neither). The table rounds to four significant figures; the field names
keep their unit suffix (``_s``, ``_bytes``, ``_per_s``), so the table and the JSON read alike.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Mapping

import numpy as np
import pandas as pd


def plain(x: Any) -> Any:
    """``x`` as JSON's types: dataclasses, mappings, sequences, NumPy and pandas values, NaN as None."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, pd.DataFrame):
        return [plain(r) for r in x.to_dict(orient="records")]
    if isinstance(x, Mapping):
        return {str(k) if not isinstance(k, tuple) else "/".join(map(str, k)): plain(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return [plain(v) for v in x.tolist()]
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return str(x)


def to_json(x: Any) -> str:
    return json.dumps(plain(x), indent=1, ensure_ascii=False, allow_nan=False)


def cell(v: Any) -> str:
    """One value for a table: numbers to four significant figures, lists joined."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) or v is None:
        return "" if v is None else str(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:,.0f}" if 1e4 <= abs(v) < 1e9 else f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(cell(x) for x in v)
    return str(v)


def fields_table(rows: Mapping[str, Any], title: str = "") -> str:
    """A two-column table: field, value."""
    width = max((len(k) for k in rows), default=0)
    lines = [title] if title else []
    lines += [f"  {k.ljust(width)}  {cell(v)}" for k, v in rows.items()]
    return "\n".join(lines)


def frame_table(df: pd.DataFrame, columns: tuple[str, ...] | None = None, rows: int | None = None) -> str:
    """Some columns (those present) and rows of a frame, as aligned text."""
    if df.empty:
        return "(no rows)"
    cols = [c for c in (columns or df.columns) if c in df.columns]
    d = df[cols].head(rows) if rows else df[cols]
    text = pd.DataFrame({c: [cell(v) for v in d[c].tolist()] for c in cols}).to_string(index=False)
    more = len(df) - len(d)
    return text + (f"\n  ... {more:,} more rows (--json gives them all)" if more > 0 else "")


def show(result_json: Any, text: str, as_json: bool) -> None:
    print(to_json(result_json) if as_json else text)
