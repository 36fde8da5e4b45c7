"""Tables for people: readable column names and numbers, never snake_case or scientific notation.

A dashboard's table is a DataFrame whose columns are named as the model names them
(``tokens_per_s_per_chip``, ``memory_bw_bytes_per_s``). :func:`readable` renames them in words and
writes each number in the unit a reader expects: a column whose name ends in a unit
(``_s``, ``_bytes``, ``_bytes_per_s``, ``_flop_s``, ``_w``) is shown with an SI prefix
(``3.35 TB/s``, ``250 µs``) and the unit leaves the header; shares and efficiencies as percentages;
other numbers with thousands separators and at most four significant digits.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd

#: name endings that carry a unit, longest first: (ending, unit written after an SI prefix)
UNIT_SUFFIXES = (("_bytes_per_s", "B/s"), ("_flop_per_s", "FLOP/s"), ("_flop_s", "FLOP/s"), ("_flops", "FLOP/s"),
                 ("_bytes", "B"), ("_flop", "FLOP"), ("_s", "s"), ("_w", "W"), ("_j", "J"))
#: name endings whose unit already has its prefix (``peak_tflop_s``): the unit goes into the header
PREFIXED_UNITS = (("_tflop_s", "TFLOP/s"), ("_pflop_s", "PFLOP/s"), ("_gb_s", "GB/s"), ("_tb_s", "TB/s"),
                  ("_gib", "GiB"), ("_gb", "GB"), ("_mb", "MB"), ("_kb", "kB"), ("_mm2", "mm²"), ("_us", "µs"),
                  ("_ms", "ms"), ("_kw", "kW"), ("_pct", "%"), ("_req_s", "requests/s"), ("_tok_s", "tokens/s"))
#: columns shown as percentages: these names, or names ending in ``_share``/``_fraction``/``_efficiency``
PERCENT_NAMES = {"share", "mfu", "hfu", "efficiency", "utilisation", "utilization", "error", "fraction",
                 "share_of_best", "dropped", "comm_share"}
PERCENT_ENDINGS = ("_share", "_fraction", "_efficiency", "_vs_best", "_error", "_utilisation")
#: words a snake_case name is spelled with, in a header
WORDS = {"usd": "USD", "per": "per", "mfu": "MFU", "hfu": "HFU", "tp": "TP", "pp": "PP", "dp": "DP", "cp": "CP",
         "ep": "EP", "vp": "VP", "hbm": "HBM", "sram": "SRAM", "bw": "bandwidth", "tdp": "TDP", "pue": "PUE",
         "kv": "KV", "mm2": "mm²", "m": "M", "k": "k", "tco": "TCO", "gpu": "GPU", "tpu": "TPU", "lpu": "LPU",
         "ttft": "TTFT", "tpot": "TPOT", "n": "number of", "num": "number of", "kwh": "kWh", "id": "id"}


def fmt_si(x: float, unit: str = "", digits: int = 3) -> str:
    """``fmt_si(2.765e12, 'B/s') -> '2.77 TB/s'``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    prefixes = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""),
                (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
    ax = abs(x)
    for f, p in prefixes:
        if ax >= f:
            return f"{x / f:.{digits}g} {p}{unit}".strip()
    return f"{x:.{digits}g} {unit}".strip()


def fmt_number(x) -> str:
    """Four significant digits with thousands separators, never e-notation: ``12,346``, ``0.1235``."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—" if x is None or math.isnan(x) else str(x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return f"{int(x):,}"
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax == 0 or ax >= 1e-3:
        return f"{x:.4g}"
    digits = 3 - int(math.floor(math.log10(ax)))  # 0.000012345 -> 0.00001235: still no e-notation
    return f"{x:.{digits}f}"


def column_unit(name: str) -> tuple[str, str | None, bool]:
    """(header words, SI unit or None, is a percentage) for a column name."""
    name = str(name)
    if not re.fullmatch(r"[a-z0-9_]+", name):  # already written for people
        return name, None, False
    low = name.lower()
    pct = low in PERCENT_NAMES or low.endswith(PERCENT_ENDINGS)
    for ending, u in PREFIXED_UNITS:
        if low.endswith(ending) and len(low) > len(ending):
            words = " ".join(WORDS.get(w, w) for w in low[: -len(ending)].split("_") if w)
            return f"{words} ({u})", None, pct
    unit = None
    low = re.sub(r"_per_s(?=_|$)", "/s", low) if not low.endswith(("_bytes_per_s", "_flop_per_s")) else low
    for ending, u in UNIT_SUFFIXES:
        if low.endswith(ending) and len(low) > len(ending):
            unit, low = u, low[: -len(ending)]
            break
    words = " ".join(WORDS.get(w, w) for w in low.split("_") if w)
    return words, unit, pct


def readable(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its columns in words and every number as text in its unit (a copy)."""
    out = {}
    for col in df.columns:
        words, unit, pct = column_unit(col)
        s = df[col]
        if pd.api.types.is_bool_dtype(s):
            vals = s.map({True: "yes", False: "no"})
        elif pd.api.types.is_numeric_dtype(s):
            if pct:
                form = "{:+.1%}" if "error" in str(col).lower() else "{:.1%}"  # errors keep their sign
                vals = s.map(lambda v, f=form: "—" if pd.isna(v) else f.format(v))
            elif unit:
                vals = s.map(lambda v, u=unit: "—" if pd.isna(v) else fmt_si(float(v), u))
            else:
                vals = s.map(lambda v: "—" if pd.isna(v) else fmt_number(v))
        else:
            vals = s.map(lambda v: "—" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
        out[words if words not in out else f"{words} ({col})"] = vals
    return pd.DataFrame(out, index=df.index)


def table_html(df: pd.DataFrame) -> str:
    """A DataFrame as a compact HTML table, readable (:func:`readable`), '—' for unpublished values."""
    return readable(df).to_html(index=False, na_rep="—", border=0, classes="accelbook-df", escape=True)


def markdown_html(text: str) -> str:
    """A summary's Markdown as HTML (plain lines when the ``markdown`` package is missing)."""
    if not text:
        return ""
    try:
        import markdown  # optional nicety

        return markdown.markdown(text, extensions=["tables"])
    except ImportError:
        return "<br>".join(html.escape(line) for line in text.splitlines())
