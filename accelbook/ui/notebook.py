"""Notebook session setup: chart rendering that works offline, and small display helpers.

Altair 6's default renderer loads Vega from a CDN (fails offline) and JupyterLab 4.6 renders only
Vega-Lite 5, so charts are drawn to SVG in the kernel by vl-convert (``alt.renderers.enable("svg")``).
"""

from __future__ import annotations

import html

import altair as alt


def setup() -> None:
    """Call once at the top of a notebook."""
    alt.renderers.enable("svg")
    alt.data_transformers.disable_max_rows()


def takeaway(text: str):
    """A **Takeaway** box (HTML) for the end of a section."""
    from IPython.display import HTML

    try:
        import markdown

        body = markdown.markdown(text)
    except ImportError:  # pragma: no cover
        body = html.escape(text)
    return HTML('<div style="border-left:5px solid #2e7d32;background:#f1f8e9;padding:6px 12px;margin:8px 0">'
                f"<b>Takeaway.</b> {body}</div>")


def table(df, percent=(), scientific=(), shares=()):
    """A DataFrame styled for reading: 4 significant digits, '—' for unpublished values, no index.

    ``percent``: columns shown as signed percentages (errors, changes); ``shares``: unsigned
    percentages (parts of a whole); ``scientific``: columns shown as 1.23e+11.
    """
    fmt = {c: "{:,.4g}" for c in df.select_dtypes("number").columns}
    fmt.update({c: "{:+.2%}" for c in percent})
    fmt.update({c: "{:.1%}" for c in shares})
    fmt.update({c: "{:.3g}" for c in scientific})
    return df.style.hide(axis="index").format(fmt, na_rep="—")
