"""A box for a notebook: load or paste your own measurement file and see it beside the model.

The box holds a file upload, a text area to paste a file's text, the format (or "detect"), the setup fields a
file may not state (chip, model, chips, precision, network preset) and an optional setup TOML
(:mod:`accelbook.measurements.schema`). **Compare** calls :func:`measurement_view`, a pure function: the
file's text and the fields in, the validation table (:func:`accelbook.measurements.validation_table`) as HTML
out, or the reader's error inline (a bad file names itself and, where it can, the line or key). The box opens
on a bundled sample file (hand-written in the tool's format, not a measurement), so a notebook shows it
without a file of yours.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from accelbook.measurements import FORMATS, sample_path, validation_table
from accelbook.measurements.schema import setup_from_text
from accelbook.ui.dashboard import message_html

__all__ = ["MeasurementBox", "measurement_box", "measurement_view", "table_of"]

#: the columns the box shows, in order
SHOWN = ("run", "metric", "measured", "predicted", "error", "dominant", "note")
#: setup fields of the box: key -> label
FIELDS = {"chip": "chip", "model": "model", "n_chips": "chips", "precision": "precision", "system": "network preset"}


def table_of(df: pd.DataFrame) -> str:
    """The validation table as compact HTML: 4 significant digits, the error as a signed percentage."""
    shown = df[[c for c in SHOWN if c in df]].copy()
    for c in ("measured", "predicted"):
        shown[c] = shown[c].map(lambda v: "—" if pd.isna(v) else f"{v:,.4g}")
    shown["error"] = df["error"].map(lambda v: "—" if pd.isna(v) else f"{v:+.1%}".replace("%", " %"))
    return shown.to_html(index=False, border=0, classes="accelbook-df", escape=True)


def summary_of(df: pd.DataFrame, name: str) -> str:
    """One line: the file, its format, the rows compared and the median error, the source."""
    err = df["error"].dropna()
    med = "no row evaluated" if err.empty else f"median error {np.median(err):+.0%}".replace("%", " %")
    src = df["source"].iloc[0] if "source" in df and len(df) else ""
    return (f"<p><b>{html.escape(str(name))}</b> ({html.escape(df.attrs.get('format', '?'))}): {len(df)} measured "
            f"numbers, {med} (predicted / measured - 1; nothing is fitted to your file). "
            f"Source: {html.escape(str(src))}</p>")


def measurement_view(text=None, name: str = "pasted text", format: str = "detect", setup_toml: str = "",
                     path=None, **fields) -> tuple[str, pd.DataFrame | None]:
    """(HTML, table) for a file's ``text`` (or ``path``) and the box's fields; a bad file or setup gives the
    error as HTML and ``None``. Empty fields are not settings; ``n_chips`` is read as a whole number."""
    try:
        setup = setup_from_text(setup_toml, "the setup box") if setup_toml and setup_toml.strip() else None
        given = {k: v for k, v in fields.items() if v not in (None, "")}
        if "n_chips" in given:
            try:
                given["n_chips"] = int(str(given["n_chips"]).strip())
            except ValueError:
                raise ValueError(f"chips must be a whole number, got {given['n_chips']!r}") from None
        fmt = None if format in (None, "detect") else format
        if path is not None:
            df = validation_table(path, format=fmt, setup=setup, **given)
            name = str(getattr(path, "name", path))
        else:
            df = validation_table(text=text, name=name, format=fmt, setup=setup if setup is not None else {}, **given)
    except ValueError as err:
        return message_html(str(err.args[0]) if err.args else str(err)), None
    return summary_of(df, name) + table_of(df), df


class MeasurementBox:
    """The widgets (``.widget``) and the last table shown (``.table``; None after an error)."""

    def __init__(self, sample: str | None = None, **fields):
        import ipywidgets as w

        self.upload = w.FileUpload(accept=".json,.jsonl,.txt,.csv,.toml,.log", multiple=False,
                                   description="Load a file")
        self.paste = w.Textarea(placeholder="… or paste a file's text here", layout=w.Layout(width="100%", height="90px"))
        self.format = w.Dropdown(options=("detect", *FORMATS), value="detect", description="format")
        self.fields = {k: w.Text(value=str(fields.get(k, "")), description=label, layout=w.Layout(width="240px"))
                       for k, label in FIELDS.items()}
        self.setup = w.Textarea(placeholder="optional setup TOML: [setup] chip = \"h100\" … [sources.<id>] …",
                                layout=w.Layout(width="100%", height="60px"))
        self.button = w.Button(description="Compare", button_style="primary")
        self.out = w.HTML()
        self.table = None
        self.button.on_click(lambda _: self.refresh())
        self.upload.observe(lambda _: self.refresh(), names="value")
        self.widget = w.VBox([w.HBox([self.upload, self.format, self.button]), self.paste,
                              w.HBox(list(self.fields.values())[:3]), w.HBox(list(self.fields.values())[3:]),
                              self.setup, self.out])
        if sample is not None:
            self._show(*measurement_view(path=sample_path(sample)))

    def _show(self, html_text: str, table) -> None:
        self.out.value, self.table = html_text, table

    def refresh(self) -> None:
        """Compare the uploaded file (or else the pasted text) with the model, at the fields' settings."""
        fields = {k: f.value.strip() for k, f in self.fields.items()}
        files = self.upload.value
        if files:
            f = files[0]
            text, name = bytes(f["content"]), f["name"]
        elif self.paste.value.strip():
            text, name = self.paste.value, "pasted text"
        else:
            self._show(message_html("Load a file or paste its text first.", "info"), None)
            return
        self._show(*measurement_view(text, name, self.format.value, self.setup.value, **fields))

    def _ipython_display_(self):  # a bare ``MeasurementBox()`` at the end of a cell shows itself
        from IPython.display import display

        display(self.widget)


def measurement_box(sample: str | None = None, **fields) -> MeasurementBox:
    """The box, opened on the bundled ``sample`` of a format (``"vllm"``, ``"nccl"``, ``"training"``) if given;
    ``fields`` fill the setup fields (``chip="h100"``)."""
    return MeasurementBox(sample, **fields)
