"""The static book's picture of a dashboard: its default view as plain HTML, no widgets, no JavaScript.

``tools/build_book.py`` (``make book``) executes every notebook with :func:`enable` called first, in
a cell it removes afterwards. From then on a dashboard that a notebook shows with ``show(spec)`` also
displays as HTML: a note on how to open the live version, its control settings, its chart as inline
SVG (drawn in the kernel by vl-convert, as ``Dashboard(renderer="svg")`` does), and its message,
summary and table. Notebooks, ``show`` and the live dashboards are unchanged: this runs only in the
book's kernels.
"""

from __future__ import annotations

import html
import os

#: the CSS class :class:`accelbook.ui.dashboard.Dashboard` gives its outer box
DASHBOARD_CLASS = "accelbook-dashboard"
#: the CSS class of the HTML that :func:`dashboard_html` returns (the book's browser test looks for it)
STATIC_CLASS = "accelbook-static-dashboard"
NOTE = ("<b>Live dashboard, shown here at its default settings.</b> In the notebook these controls move the "
        "chart: open it in JupyterLab (<code>make lab</code> in the repository) to change them.")


def enable() -> None:
    """In a notebook kernel: draw dashboards' charts in the kernel and give every dashboard an HTML form."""
    import ipywidgets as W
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("accelbook.ui.book.enable() runs inside an IPython kernel")
    os.environ["ACCELBOOK_RENDERER"] = "svg"  # Dashboard reads it when built: charts as inline SVG
    shell.display_formatter.formatters["text/html"].for_type(W.VBox, dashboard_html)


def _walk(widget):
    """The widget and its descendants, depth first, in display order."""
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)


def _setting(widget) -> tuple[str, str] | None:
    """(label, value shown) for a control; None for anything that is not one (HTML, buttons, boxes)."""
    import ipywidgets as W

    if isinstance(widget, (W.HTML, W.Box, W.Button)) or not getattr(widget, "description", ""):
        return None
    if not hasattr(widget, "value") or widget.value in ("", None):
        return None
    shown = _option_label(widget)  # selections: the option's label, not its value
    shown = widget.value if shown is None else shown
    if isinstance(shown, (tuple, list)):
        shown = ", ".join(map(str, shown))
    elif isinstance(shown, float):
        shown = f"{shown:,.6g}"
    return widget.description, str(shown)


def _option_label(widget):
    """A selection widget's label(s) of its value, read from its options and index (None for a widget
    without options). Not its ``label``: a SelectionSlider left at its first option has ``label == ""``
    (ipywidgets fills it in only when the index changes), which printed "context parallel = ;"."""
    options, index = getattr(widget, "options", None), getattr(widget, "index", None)
    if options is None or index is None:
        return None
    labels = [str(o[0]) if isinstance(o, tuple) else str(o) for o in options]
    return tuple(labels[i] for i in index) if isinstance(index, tuple) else labels[index]


def dashboard_html(box) -> str | None:
    """A dashboard's outer box as static HTML (None for a box that is not a dashboard)."""
    import ipywidgets as W

    if DASHBOARD_CLASS not in box.get_state().get("_dom_classes", ()):
        return None
    settings = [s for s in map(_setting, _walk(box)) if s is not None]
    parts = [html.escape(f"{label} = {value}") for label, value in settings]
    body = [w.value for w in _walk(box) if isinstance(w, W.HTML) and w.value and w.layout.display != "none"]
    return (f'<div class="{STATIC_CLASS}">'
            f'<div class="accelbook-static-note">{NOTE}</div>'
            f'<div class="accelbook-static-settings" style="overflow-wrap:anywhere">Settings: {"; ".join(parts)}</div>'
            + "".join(body) + "</div>")
