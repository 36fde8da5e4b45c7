"""Formatters the fact modules of notebook 03 share; defines no fact."""

from __future__ import annotations


def signed_pct(x: float, digits: int = 0) -> str:
    """``+105`` or ``−35`` (a share as a signed percentage, typographic minus)."""
    s = f"{100 * x:+.{digits}f}"
    return s.replace("-", "−")


def pct(x: float, digits: int = 0) -> str:
    return f"{100 * abs(x):.{digits}f}"
