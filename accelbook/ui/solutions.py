"""Worked solutions to every exercise, generated from the checker itself so that they cannot drift.

For each exercise of :data:`accelbook.ui.exercises.EXERCISES` the solution gives the question, the
method (the checker's hint), the code that computes the expected answer (the very function the checker
calls, with the private helpers of its notebook's module, ``accelbook.ui.exercises.nbNN_*``, that it uses) and the answer it computes now from the catalogue, with the
tolerance the checker accepts. ``instructor/solutions.md`` is written by :func:`write_solutions` and
shipped; ``tests/test_course.py`` checks that it equals what this module generates now and that every
exercise has a solution. After changing an exercise, the catalogue or a model, regenerate:

    python -m accelbook.ui.solutions        (or: make solutions)

Each exercise gets an anchor ``ex-<id>``: ``instructor/solutions.md#ex-ridge-h100``.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

from accelbook.ui.exercises import EXERCISES, Exercise

REPO_ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS_PATH = REPO_ROOT / "instructor" / "solutions.md"

# Optional text fields an exercise may carry (an open what-if's model answer, say); shown when present.
_EXTRA_FIELDS = (("model_answer", "Model answer"), ("solution", "Solution"), ("explanation", "Why"))


def format_expected(value: Any, unit: str = "") -> str:
    """The expected answer in words: accepted words for a set, else the number to 6 significant figures."""
    if isinstance(value, (set, frozenset)):
        return " or ".join(f"`{w}`" for w in sorted(value))
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e15):
        text = f"{int(value):,}"
    else:
        text = f"{float(value):,.6g}"
    return f"{text} {unit}".strip()


def tolerance_text(ex: Exercise, value: Any) -> str:
    """What the checker accepts, in words."""
    if isinstance(value, (set, frozenset)):
        return "the word, in any case"
    if ex.rel_tol == 0:
        return "exactly this number"
    return f"within ±{ex.rel_tol:.0%} of this number"


def _module_tree(fn: Callable) -> tuple[str, ast.Module]:
    path = inspect.getsourcefile(fn)
    text = Path(path).read_text(encoding="utf-8")
    return text, ast.parse(text)


def _lambda_source(fn: Callable) -> str:
    """The body of a lambda, found in its module by line number."""
    text, tree = _module_tree(fn)
    line = fn.__code__.co_firstlineno
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and node.lineno == line:
            body = (ast.get_source_segment(text, node.body) or "").splitlines()
            if len(body) <= 1:
                return "".join(body)
            # a body over several lines: keep its continuation lines' relative indentation, in parentheses
            rest = textwrap.indent(textwrap.dedent("\n".join(body[1:])), "    ")
            return f"({body[0]}\n{rest})"
    return inspect.getsource(fn).strip()


def _helpers(fn: Callable, code: str) -> list[str]:
    """Sources of the module's private functions that ``code`` calls (one level deep)."""
    module = inspect.getmodule(fn)
    names = {n.id for n in ast.walk(ast.parse(textwrap.dedent(code))) if isinstance(n, ast.Name)}
    out = []
    for name in sorted(names):
        obj = getattr(module, name, None)
        if name.startswith("_") and inspect.isfunction(obj) and obj is not fn:
            out.append(textwrap.dedent(inspect.getsource(obj)).strip())
    return out


def expected_code(ex: Exercise) -> str:
    """The Python the checker runs for ``ex.expected``, preceded by the private helpers it calls."""
    fn = ex.expected
    if fn.__name__ == "<lambda>":
        code = _lambda_source(fn)
    else:
        code = textwrap.dedent(inspect.getsource(fn)).strip()
    return "\n\n".join([*_helpers(fn, code), code])


def render_solution(ex: Exercise) -> str:
    """One exercise's worked solution as Markdown."""
    value = ex.expected()
    lines = [
        f'<a id="ex-{ex.id}"></a>',
        "",
        f"### `{ex.id}`",
        "",
        f"**Question.** {ex.question}",
        "",
        f"**Answer.** {format_expected(value, ex.unit)} ({tolerance_text(ex, value)}).",
        "",
    ]
    if ex.hint:
        lines += [f"**Method.** {ex.hint}", ""]
    for field, label in _EXTRA_FIELDS:
        text = getattr(ex, field, None)
        text = text() if callable(text) else text
        if isinstance(text, str) and text:
            lines += [f"**{label}.** {text}", ""]
    lines += ["**The checker computes it as**", "", "```python", expected_code(ex), "```", ""]
    return "\n".join(lines)


def _notebook_title(number: str) -> str:
    found = sorted((REPO_ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    return f"Notebook {number}" + (f" (`notebooks/{found[0].name}`)" if found else "")


def render_solutions(exercises: dict[str, Exercise] | None = None) -> str:
    """The whole of ``instructor/solutions.md``: every exercise, grouped by notebook, in checker order."""
    exercises = EXERCISES if exercises is None else exercises
    by_nb: dict[str, list[Exercise]] = {}
    for ex in exercises.values():
        by_nb.setdefault(ex.notebook, []).append(ex)
    lines = [
        "# Worked solutions",
        "",
        "<!-- Generated by `python -m accelbook.ui.solutions` (make solutions) from accelbook/ui/exercises/;",
        "     do not edit by hand: tests/test_course.py checks that this file is up to date. -->",
        "",
        f"Every exercise the checker (`accelbook.exercises.check`) marks: {len(exercises)} in "
        f"{len(by_nb)} notebooks. Each answer is the value `EXERCISES[id].expected()` computes now from the "
        "catalogue and the models, with the tolerance the checker accepts; the code is the checker's own. "
        "If a number in `data/` changes, the answers change with it when this file is regenerated. "
        "For instructors: the student notebooks show hints, never these answers.",
        "",
    ]
    for nb in sorted(by_nb):
        lines += [f"## {_notebook_title(nb)}", ""]
        lines += [render_solution(ex) for ex in by_nb[nb]]
    return "\n".join(lines).rstrip() + "\n"


def write_solutions(path: Path | str | None = None) -> Path:
    """Write :func:`render_solutions` to ``path`` (default ``instructor/solutions.md``); returns the path."""
    path = Path(path) if path is not None else SOLUTIONS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_solutions(), encoding="utf-8")
    return path


if __name__ == "__main__":
    out = write_solutions(sys.argv[1] if len(sys.argv) > 1 else None)
    print(f"wrote {out.relative_to(REPO_ROOT) if out.is_relative_to(REPO_ROOT) else out}")
