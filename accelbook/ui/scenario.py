"""Scenarios: a dashboard's whole state (every control) as a short string or a JSON file, and back.

A scenario is the dashboard's name and the value of every control. Its string is readable and
short enough to paste in a chat or an e-mail::

    fleet:interactive_target=512&demand_scale=1.0&tpu_price=4.2&lpu_price=2.0

(``key=value`` pairs, URL-quoted; a multi-select joins its options with ``,``; a toggle is ``0`` or
``1``; a number is written as Python's ``repr``, which reads back as the same float). Its JSON file
holds the same: ``{"accelbook_scenario": 1, "dashboard": "fleet", "values": {...}}``. Reading one
back checks it against the dashboard's controls: a wrong dashboard, an unknown or missing control,
or a value outside a control's range is a ``ValueError`` that names it. ``show(spec, scenario=s)``
opens a dashboard at a scenario; :func:`compare` puts two scenarios' results side by side.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import quote, unquote

import pandas as pd

from accelbook.files import read_text
from accelbook.ui.controls import Choice, DashboardSpec, Toggle, View
from accelbook.ui.tables import markdown_html

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Scenario:
    """One dashboard's state: its name and every control's value (multi-selects as tuples)."""

    dashboard: str
    values: Mapping[str, Any] = field(default_factory=dict)

    # -- text ------------------------------------------------------------------------------------
    def to_string(self) -> str:
        parts = [f"{quote(k, safe='')}={_text(v)}" for k, v in self.values.items()]
        return f"{quote(self.dashboard, safe='')}:" + "&".join(parts)

    @classmethod
    def from_string(cls, text: str) -> "Scenario":
        """Read :meth:`to_string`'s text. Values stay text until :meth:`for_spec` types them."""
        text = text.strip()
        name, sep, body = text.partition(":")
        if not sep or not name:
            raise ValueError(f"not a scenario string (expected 'dashboard:key=value&...'): {text[:60]!r}")
        values: dict[str, Any] = {}
        for part in filter(None, body.split("&")):
            k, eq, v = part.partition("=")
            if not eq:
                raise ValueError(f"scenario string: {part!r} is not key=value")
            values[unquote(k)] = _RawText(v)
        return cls(unquote(name), values)

    # -- JSON ------------------------------------------------------------------------------------
    def to_json(self) -> str:
        vals = {k: list(v) if isinstance(v, tuple) else v for k, v in self.values.items()}
        return json.dumps({"accelbook_scenario": FORMAT_VERSION, "dashboard": self.dashboard, "values": vals},
                          indent=1, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Scenario":
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a scenario file: {exc}") from None
        if not isinstance(d, dict) or d.get("accelbook_scenario") != FORMAT_VERSION or \
                not isinstance(d.get("values"), dict) or not isinstance(d.get("dashboard"), str):
            raise ValueError("not an accelbook scenario (version 1): needs 'accelbook_scenario': 1, "
                             "'dashboard' and 'values'")
        return cls(d["dashboard"], d["values"])

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.to_json() + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        path = Path(path)
        text = read_text(path, what="scenario file")     # missing, a folder, not UTF-8: an error naming the file
        try:
            return cls.from_json(text)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    # -- against a dashboard -----------------------------------------------------------------------
    def for_spec(self, spec: DashboardSpec) -> dict[str, Any]:
        """The values typed and checked against ``spec``'s controls (every control must be there)."""
        if self.dashboard != spec.name:
            raise ValueError(f"this scenario is for the {self.dashboard!r} dashboard, not {spec.name!r}")
        missing = [k for k in spec.controls if k not in self.values]
        if missing:
            raise ValueError(f"scenario for {spec.name!r} lacks control(s) {missing}")
        typed = {}
        for k, v in self.values.items():
            c = spec.controls.get(k)
            typed[k] = v if c is None else _typed(c, v)
        return spec.check(typed)


class _RawText(str):
    """A value read from a scenario string, typed later by its control."""


def _text(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (tuple, list)):
        return ",".join(quote(str(x), safe="") for x in v)
    return quote(repr(v) if isinstance(v, float) else str(v), safe="")


def _typed(c, v):
    if isinstance(v, _RawText):
        if isinstance(c, Choice) and c.multi:
            v = [unquote(x) for x in v.split(",")] if v else []
        else:
            v = unquote(v)
        if isinstance(c, Toggle):
            if v not in ("0", "1"):
                raise ValueError(f"{c.label!r} = {v!r}: write 1 or 0")
            return v == "1"
    if isinstance(c, Choice) and c.multi and isinstance(v, list):
        v = tuple(v)
    try:
        return c.coerce(v)
    except (TypeError, ValueError):
        raise ValueError(f"{c.label!r} = {v!r}: allowed: {c.allowed()}") from None


def scenario_of(spec: DashboardSpec, values: Mapping[str, Any]) -> Scenario:
    """The scenario of ``spec`` at ``values`` (defaults for any control not given)."""
    v = spec.defaults()
    v.update(spec.check(values))
    return Scenario(spec.name, v)


def as_scenario(x: "Scenario | str | Path | Mapping") -> Scenario:
    """A :class:`Scenario` from itself, its string, the path of its JSON file, or its dict."""
    if isinstance(x, Scenario):
        return x
    if isinstance(x, Path) or (isinstance(x, str) and x.strip().endswith(".json")):
        return Scenario.load(x)
    if isinstance(x, str):
        return Scenario.from_json(x) if x.lstrip().startswith("{") else Scenario.from_string(x)
    if isinstance(x, Mapping) and "dashboard" in x and "values" in x:
        return Scenario(x["dashboard"], dict(x["values"]))
    raise TypeError(f"a scenario is a Scenario, its string, a JSON file's path or its dict; got {type(x).__name__}")


@dataclass(frozen=True)
class Comparison:
    """Two scenarios of one dashboard: the controls that differ, the two views, both charts side by side."""

    differences: pd.DataFrame
    views: tuple[View, View]
    labels: tuple[str, str]
    chart: Any = None  # a charts.Figure: A's chart left of B's, each titled with its label

    def _repr_html_(self) -> str:
        diff = self.differences.to_html(index=False, border=0) if len(self.differences) else "<p>No control differs.</p>"
        cells = "".join(f"<td style='vertical-align:top;width:50%'><b>{html.escape(lab)}</b>{markdown_html(v.summary)}</td>"
                        for lab, v in zip(self.labels, self.views))
        svg = self.chart.to_svg() if self.chart is not None else ""
        return f"{diff}<div>{svg}</div><table><tr>{cells}</tr></table>"


def compare(spec: DashboardSpec, a, b, labels: tuple[str, str] = ("A", "B")) -> Comparison:
    """Two scenarios of one dashboard side by side: a table of the controls that differ, the two
    views (each rendered at its scenario) and their charts in one figure, A left of B."""
    from accelbook.ui.charts import Figure, stack

    sa, sb = as_scenario(a), as_scenario(b)
    va, vb = sa.for_spec(spec), sb.for_spec(spec)
    rows = [{"control": spec.controls[k].label, labels[0]: _shown(va[k]), labels[1]: _shown(vb[k])}
            for k in spec.controls if va[k] != vb[k]]
    diff = pd.DataFrame(rows, columns=["control", *labels])
    views = (spec.render(**va), spec.render(**vb))
    chart = None
    if all(isinstance(v.chart, Figure) for v in views):
        titled = []
        for lab, v in zip(labels, views):
            t = v.chart.spec.get("title", "")
            t = t.get("text", "") if isinstance(t, dict) else t
            titled.append(Figure({**v.chart.spec, "title": f"{lab}: {t}" if t else lab}))
        chart = stack(*titled, direction="h")
    return Comparison(diff, views, tuple(labels), chart)


def _shown(v) -> str:
    if isinstance(v, tuple):
        return ", ".join(str(x) for x in v)
    return f"{v:,g}" if isinstance(v, float) else str(v)
