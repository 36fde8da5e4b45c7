"""The checker's parts: an exercise, a marked answer, and the marking itself.

:class:`Exercise` holds one question and the function that computes its answer from the catalogue and the
models; :func:`mark` compares a student's answer with it. :mod:`accelbook.ui.exercises` gathers every
notebook's exercises into ``EXERCISES`` and looks them up by id in ``check``.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Exercise:
    """One checked question. ``expected()`` returns the answer the checker compares with (a number in
    ``unit``, accepted within ``rel_tol``; or a set of accepted lower-case words); ``hint`` is what a
    wrong answer shows; ``notebook`` is the two-digit number of the notebook that asks it; ``model_answer``
    is the reasoning an open what-if expects, for the instructor's guide (never shown by ``check``): a text, or a
    function of no arguments that writes it with the figures computed now (so the guide follows the model)."""

    id: str
    notebook: str
    question: str
    expected: Callable[[], Any]    # a number, or a set of accepted lower-case words
    rel_tol: float = 0.02
    hint: str = ""
    unit: str = ""
    model_answer: str | Callable[[], str] = ""   # an open what-if's model answer, in instructor/solutions.md


@dataclass(frozen=True)
class Result:
    exercise: Exercise
    answer: Any
    correct: bool
    message: str

    def _repr_html_(self) -> str:
        colour, mark = ("#2e7d32", "✔ Correct") if self.correct else ("#b00020", "✘ Not yet")
        return (f'<div style="border-left:4px solid {colour};padding:4px 10px"><b style="color:{colour}">{mark}.</b> '
                f"{html.escape(self.message)}</div>")

    def __repr__(self) -> str:
        return ("Correct. " if self.correct else "Not yet. ") + self.message

    def __bool__(self) -> bool:
        return self.correct


def mark(ex: Exercise, answer: Any) -> Result:
    """Mark ``answer`` to ``ex``: a word must be one of the accepted words (any case); a number must lie within
    ``ex.rel_tol`` of the expected value, relatively (exactly when ``rel_tol`` is 0). A wrong answer gets the hint
    and whether it is too high or too low, never the expected value."""
    expected = ex.expected()
    if isinstance(expected, set):
        ok = isinstance(answer, str) and answer.strip().lower() in expected
        msg = "" if ok else f"Hint: {ex.hint}"
        if ok:
            msg = f"'{answer}' is right."
        return Result(ex, answer, ok, msg)
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return Result(ex, answer, False, f"Give a number{(' in ' + ex.unit) if ex.unit else ''}. Hint: {ex.hint}")
    if not math.isfinite(value):
        return Result(ex, answer, False, f"Give a finite number{(' in ' + ex.unit) if ex.unit else ''}. Hint: {ex.hint}")
    ok = abs(value - expected) <= ex.rel_tol * abs(expected)
    if ok:
        if ex.rel_tol == 0:
            return Result(ex, answer, True, f"{value:,.4g} {ex.unit} is exactly right.")
        return Result(ex, answer, True, f"{value:,.4g} {ex.unit} is within {ex.rel_tol:.0%} of the model's "
                                        f"{expected:,.4g} {ex.unit}.")
    direction = "too high" if value > expected else "too low"
    return Result(ex, answer, False, f"{value:,.4g} {ex.unit} is {direction}. Hint: {ex.hint}")
