"""Paper-and-pencil problems: numbers a student works out from a formula, then checks against the model.

A :class:`Problem` takes its given numbers from the catalogue (``given()``, so a problem follows the data),
states the question with them, works it by hand (``steps(g)``: the arithmetic a student writes, as lines of
text, and ``hand(g)``: the same arithmetic as a number), and names the package function whose value it must
match (``model(g)``). ``tests/test_hand_problems.py`` asserts that ``hand(g)`` agrees with ``model(g)`` within
``rel_tol`` for every problem: the hand formula is written again here on purpose, from the formula's source,
so that a model that drifts from its published formula fails the test (and a wrong worked solution does too).

``use`` is ``"hand"`` for a notebook's "Work it by hand" problems and ``"exam"`` for the exam bank
(``instructor/exam_bank.md``): at least five hand problems a notebook and forty exam questions, which
``tests/test_hand_problems.py`` asserts. Each notebook shows its problems in a "Work it by hand" section: ``show("06")`` prints the
problems (the student edition keeps it); ``solutions("06")`` prints the worked solutions folded (a cell tagged
``answer``, so only the instructor edition keeps it). ``python -m accelbook.ui.course.hand`` writes the exam
bank and ``instructor/problems.md`` (every problem with its solution).
"""

from __future__ import annotations

import html
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from IPython.display import HTML

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAM_BANK_PATH = REPO_ROOT / "instructor" / "exam_bank.md"
PROBLEMS_PATH = REPO_ROOT / "instructor" / "problems.md"
NOTEBOOKS = ("00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12")
USES = ("hand", "exam")


@dataclass(frozen=True)
class Problem:
    """One paper-and-pencil problem.

    ``given()`` returns the numbers the problem states (a dict, from the catalogue); ``question`` is a
    ``str.format`` template filled with them; ``steps(g)`` returns the worked solution's lines (each a line of
    arithmetic with its numbers); ``hand(g)`` computes the answer as those lines do; ``model(g)`` calls the
    package's function for the same quantity; ``source`` names that function (``accelbook.inference.estimate``)
    and, where the formula is published, its paper. ``unit`` is the answer's unit; the two agree within
    ``rel_tol``.
    """

    id: str
    notebook: str
    use: str
    question: str
    given: Callable[[], dict]
    steps: Callable[[dict], list[str]]
    hand: Callable[[dict], float]
    model: Callable[[dict], float]
    unit: str
    source: str
    rel_tol: float = 0.02

    def __post_init__(self):
        if self.use not in USES:
            raise ValueError(f"problem {self.id!r}: use must be one of {USES}, not {self.use!r}")
        if self.notebook not in NOTEBOOKS:
            raise ValueError(f"problem {self.id!r}: notebook must be one of {', '.join(NOTEBOOKS)}")

    def text(self) -> str:
        """The question with its given numbers."""
        return self.question.format(**self.given())

    def answer(self) -> float:
        return float(self.hand(self.given()))


def fmt(x: Any, digits: int = 4) -> str:
    """A number as a worked solution writes it: thousands separators, ``digits`` significant figures."""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    x = float(x)
    if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-3):
        return f"{x:.{digits - 1}e}"
    if abs(x) >= 10 ** (digits - 1):      # 10,567, not 1.057e+04: the g format turns to e-notation here
        return f"{x:,.0f}"
    return f"{x:,.{digits}g}"


def _modules():
    return [importlib.import_module(f"accelbook.ui.course.problems.nb{nb}") for nb in NOTEBOOKS]


def problems(notebook: str | None = None, use: str | None = None) -> list[Problem]:
    """Every problem (of ``notebook``, of ``use``), in the order their modules list them."""
    if notebook is not None and notebook not in NOTEBOOKS:
        raise ValueError(f"notebook must be one of {', '.join(NOTEBOOKS)}, not {notebook!r}")
    if use is not None and use not in USES:
        raise ValueError(f"use must be one of {USES}, not {use!r}")
    out = [p for m in _modules() for p in m.PROBLEMS]
    ids = [p.id for p in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"problem ids defined twice: {', '.join(dup)}")
    return [p for p in out if (notebook is None or p.notebook == notebook) and (use is None or p.use == use)]


def _solution_lines(p: Problem) -> list[str]:
    g = p.given()
    return [*p.steps(g), f"Answer: {fmt(p.hand(g))} {p.unit}. The model ({p.source}) gives "
                         f"{fmt(p.model(g))} {p.unit}."]


def render_markdown(selected: list[Problem], solutions: bool) -> str:
    """The problems as Markdown, numbered, each with its worked solution when ``solutions``."""
    out = []
    for i, p in enumerate(selected, 1):
        out.append(f"{i}. **{p.id}** (notebook {p.notebook}). {p.text()}")
        if solutions:
            out.append("")
            out.extend(f"   - {line}" for line in _solution_lines(p))
        out.append("")
    return "\n".join(out)


def show(notebook: str) -> HTML:
    """A notebook's "Work it by hand" problems, as the notebook shows them (no answers)."""
    items = "".join(f"<li><b>{html.escape(p.id)}</b>. {html.escape(p.text())} <i>(in {html.escape(p.unit)})</i>"
                    "</li>" for p in problems(notebook, "hand"))
    return HTML(f'<div class="accelbook-hand"><ol>{items}</ol>'
                 "<p>Work each on paper from the formulas above, then check your number against the model.</p></div>")


def solutions(notebook: str) -> HTML:
    """The worked solutions of a notebook's problems, folded (the instructor edition's answer cell)."""
    parts = []
    for p in problems(notebook, "hand"):
        lines = "".join(f"<li>{html.escape(line)}</li>" for line in _solution_lines(p))
        parts.append(f"<details><summary>{html.escape(p.id)}</summary><ul>{lines}</ul></details>")
    return HTML('<div class="accelbook-hand-solutions">' + "".join(parts) + "</div>")


def render_exam_bank() -> str:
    exam = problems(use="exam")
    head = ("# Exam bank\n\nGenerated by `python -m accelbook.ui.course.hand` from `accelbook/ui/course/problems/`: "
            "every given number comes from the catalogue and every answer is computed now, by hand arithmetic that "
            "`tests/test_hand_problems.py` checks against the model. Do not edit by hand.\n\n"
            f"{len(exam)} questions, grouped by notebook.\n")
    body = []
    for nb in NOTEBOOKS:
        sel = [p for p in exam if p.notebook == nb]
        if sel:
            body.append(f"\n## Notebook {nb}\n\n" + render_markdown(sel, solutions=True))
    return head + "".join(body)


def render_problems_page() -> str:
    hand = problems(use="hand")
    head = ("# Work it by hand: every notebook's problems with worked solutions\n\nGenerated by "
            "`python -m accelbook.ui.course.hand`; the notebooks show the questions (`hand.show`), the instructor "
            "edition also the solutions. Do not edit by hand.\n")
    body = [f"\n## Notebook {nb}\n\n" + render_markdown([p for p in hand if p.notebook == nb], solutions=True)
            for nb in NOTEBOOKS if any(p.notebook == nb for p in hand)]
    return head + "".join(body)


def write_all() -> list[Path]:
    EXAM_BANK_PATH.write_text(render_exam_bank(), encoding="utf-8")
    PROBLEMS_PATH.write_text(render_problems_page(), encoding="utf-8")
    return [EXAM_BANK_PATH, PROBLEMS_PATH]


if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path}")
    sys.exit(0)
