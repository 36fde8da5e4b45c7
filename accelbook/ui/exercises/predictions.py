"""Predict, then look: a prediction is recorded before the model's answer is shown, and never marked.

``predict("predict-v5p-fp8-gain", 1.5)`` writes the prediction (exercise id, notebook, value, time) to a
JSON log the student owns and only then shows the model's answer beside it. ``predict(id, "skip")`` records a
skip and shows the answer; ``predict(id, None)`` (a cell not yet filled in, as in the static book) records
nothing and shows the question's instruction, not a mark. Unlike :func:`accelbook.ui.exercises.check`, it never
says "too high" or "too low", so a prediction cannot be bisected towards the answer: the first record of an
exercise in the log is the prediction, and every later one is kept with its time.

The log is ``$ACCELBOOK_PREDICTIONS`` if set, else ``~/.accelbook/predictions.json``: a JSON list of records.
:func:`read_log` returns it as a table for the instructor (one row a record, ``first`` marking each exercise's
first).
"""

from __future__ import annotations

import html
import json
import math
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import markdown
import pandas as pd

from accelbook.ui.exercises.core import Exercise

PREFIX = "predict-"
SKIP = "skip"
LOG_ENV = "ACCELBOOK_PREDICTIONS"
# Each prediction's gap, generated from the notebooks' gap cells (python -m accelbook.ui.course.editions gaps).
GAPS_PATH = Path(__file__).with_name("gaps.json")


def gap(exercise_id: str) -> str:
    """The gap of prediction ``exercise_id`` (Markdown), as its notebook explains it; "" when it has none."""
    try:
        gaps = json.loads(GAPS_PATH.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{GAPS_PATH} is missing or broken ({exc}): reinstall accelbook") from None
    return gaps.get(exercise_id, "")


def log_path() -> Path:
    """Where predictions are recorded: ``$ACCELBOOK_PREDICTIONS``, else ``~/.accelbook/predictions.json``."""
    env = os.environ.get(LOG_ENV)
    return Path(env) if env else Path.home() / ".accelbook" / "predictions.json"


def read_log(path: str | Path | None = None) -> pd.DataFrame:
    """Every record in the log (exercise, notebook, value, skipped, time), oldest first; ``first`` is True on
    each exercise's first record: the prediction made before the answer was seen."""
    path = Path(path) if path is not None else log_path()
    cols = ["exercise", "notebook", "value", "skipped", "time"]
    if not path.exists():
        return pd.DataFrame(columns=[*cols, "first"])
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a predictions log (not JSON: {exc.msg}); move it away to start a new one") \
            from None
    if not isinstance(records, list) or not all(isinstance(r, dict) and set(cols) <= set(r) for r in records):
        raise ValueError(f"{path} is not a predictions log (a JSON list of records with {', '.join(cols)})")
    df = pd.DataFrame(records, columns=cols)
    return df.assign(first=~df["exercise"].duplicated())


def _append(path: Path, record: dict) -> None:
    records = read_log(path).drop(columns="first").to_dict("records")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps([*records, record], indent=1), encoding="utf-8")
    tmp.replace(path)


@dataclass(frozen=True)
class Reveal:
    """What a prediction cell shows: ``recorded`` (the log's record, or None when nothing was recorded) and
    ``message``; ``answer`` is the model's answer once a prediction or a skip is recorded, else None; ``gap`` is
    the notebook's explanation of the gap (Markdown), revealed with the answer, else ""."""

    exercise: Exercise
    recorded: dict | None
    answer: Any
    message: str
    gap: str = ""

    def _repr_html_(self) -> str:
        colour = "#1565c0" if self.recorded else "#616161"
        shown = f'<div style="border-left:4px solid {colour};padding:4px 10px">{html.escape(self.message)}</div>'
        if self.gap:
            shown += f'<div class="accelbook-gap" style="padding:4px 14px">{markdown.markdown(self.gap)}</div>'
        return shown

    def __repr__(self) -> str:
        return self.message


def _value(ex: Exercise, expected: Any, value: Any):
    """The prediction as recorded (a float or a lower-case word), or None when it is not one."""
    if isinstance(expected, set):
        return value.strip().lower() if isinstance(value, str) and value.strip() else None
    if isinstance(value, bool):
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _shown(x: Any, unit: str) -> str:
    if isinstance(x, set):
        return " or ".join(f"'{w}'" for w in sorted(x))
    if isinstance(x, str):
        return f"'{x}'"
    return f"{x:,.4g}{(' ' + unit) if unit else ''}"


def predict(ex: Exercise, value: Any, path: str | Path | None = None) -> Reveal:
    """Record ``value`` as the prediction to ``ex`` (``"skip"`` records a skip), then reveal the model's answer.
    ``None`` records nothing and says what to write; a value that is not a prediction (a word for a number)
    records nothing and says what is expected."""
    if not ex.id.startswith(PREFIX):
        raise ValueError(f"{ex.id!r} is an exercise, not a prediction: mark it with check()")
    expected = ex.expected()
    kind = "one word" if isinstance(expected, set) else f"a number{(' in ' + ex.unit) if ex.unit else ''}"
    ask = f"Write your prediction ({kind}) or \"{SKIP}\" in my_prediction, then run this cell: the model's answer " \
          "appears once it is recorded."
    if value is None:
        return Reveal(ex, None, None, ask)
    skipped = isinstance(value, str) and value.strip().lower() == SKIP
    v = None if skipped else _value(ex, expected, value)
    if v is None and not skipped:
        return Reveal(ex, None, None, f"{value!r} is not {kind}; nothing recorded. {ask}")
    record = {"exercise": ex.id, "notebook": ex.notebook, "value": v, "skipped": skipped,
              "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    p = Path(path) if path is not None else log_path()
    _append(p, record)
    said = "Skip recorded" if skipped else f"Recorded your prediction, {_shown(v, ex.unit)}"
    explained = gap(ex.id)
    return Reveal(ex, record, expected, f"{said} ({p.name}, {record['time']}). The model's answer: "
                                        f"{_shown(expected, ex.unit)}." + (" The gap:" if explained else ""),
                  explained)
