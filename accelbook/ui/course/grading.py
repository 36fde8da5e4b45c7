"""Grade a submitted assignment (:mod:`.assignments`): execute the notebook, read its answers, mark them.

:func:`grade` runs the submission top to bottom in a fresh kernel (nbclient, ``timeout_s`` a cell), reads
``q1`` … ``qN`` from it and marks each against the student's own numbers with two tests: a **public** one (the
answer is a finite number: the student sees it at once) worth nothing, and a **hidden** one (the answer is within
the exercise's tolerance) worth the question's points. A notebook that fails to run still gets the answers it
set before the error. The result is Gradescope's ``results.json`` format (``score``, ``tests`` with
``visibility``).

    python -m accelbook.ui.course.grading release roster.csv build/assignments   # one notebook a student
    python -m accelbook.ui.course.grading grade submission.ipynb ada@uni.edu       # prints results.json
    python -m accelbook.ui.course.grading gradescope build/autograder.zip          # the autograder to upload

On Gradescope the autograder reads the student's e-mail from ``/autograder/submission_metadata.json``, so the
numbers it marks against are that student's.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import zipfile
from pathlib import Path

from accelbook.ui.course.assignments import DEFAULT_SALT, assignment, notebook
from accelbook.ui.course.editions import read_notebook

POINTS = 1.0
_MARK = "ACCELBOOK_ANSWERS="


def _answers_cell(n: int) -> dict:
    names = ", ".join(f"'q{i}'" for i in range(1, n + 1))
    src = ("import json as _j\n"
           f"_a = {{k: globals().get(k) for k in ({names},)}}\n"
           f"print({_MARK!r} + _j.dumps({{k: (v if isinstance(v, (int, float, str, type(None))) else repr(v)) "
           "for k, v in _a.items()}))")
    return {"cell_type": "code", "metadata": {}, "source": src, "outputs": [], "execution_count": None,
            "id": "accelbook-grader"}


def run_submission(nb: dict, n: int, timeout_s: int = 120) -> tuple[dict, str]:
    """Execute ``nb`` and return (its answers q1…qn, the error that stopped it or "")."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    # a cell that raises would stop the run before the answers are read: run the answer cell whatever happens
    body = nbformat.from_dict({**nb, "cells": [*nb["cells"], _answers_cell(n)], "nbformat": 4, "nbformat_minor": 5})
    error = ""
    client = NotebookClient(body, timeout=timeout_s, kernel_name="python3", allow_errors=True)
    try:
        client.execute()
    except (CellExecutionError, TimeoutError, RuntimeError) as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
    for c in body.cells[:len(nb["cells"])]:
        for out in c.get("outputs", []):
            if out.get("output_type") == "error" and not error:
                error = f"{out.get('ename')}: {out.get('evalue')}"[:500]
    answers: dict = {}
    for out in body.cells[-1].get("outputs", []):
        text = out.get("text", "")
        if _MARK in text:
            answers = json.loads(text.split(_MARK, 1)[1].strip().splitlines()[0])
    return answers, error


def mark(student: str, answers: dict, salt: str = DEFAULT_SALT, error: str = "") -> dict:
    """Gradescope's results for ``answers`` (``{"q1": 295.3, …}``) of ``student``."""
    tests, score = [], 0.0
    for inst in assignment(student, salt):
        got = answers.get(inst.variable)
        is_number = isinstance(got, (int, float)) and not isinstance(got, bool) and math.isfinite(float(got))
        tests.append({"name": f"{inst.variable} is a finite number ({inst.question.unit})", "score": 0.0,
                      "max_score": 0.0, "visibility": "visible",
                      "output": "ok" if is_number else f"{inst.variable} = {got!r}: write a number"})
        right = is_number and inst.accepts(got)
        score += POINTS if right else 0.0
        tests.append({"name": f"{inst.variable}: {inst.question.id}", "score": POINTS if right else 0.0,
                      "max_score": POINTS, "visibility": "after_published",
                      "output": (f"within {inst.question.rel_tol:.0%} of the model's {inst.value:,.6g} {inst.question.unit}"
                                 if right else f"not within {inst.question.rel_tol:.0%} of the model's answer")})
    out = {"score": score, "tests": tests, "visibility": "visible"}
    if error:
        out["output"] = f"The notebook stopped with an error; answers set before it were marked. {error}"
    return out


def grade(path: str | Path, student: str, salt: str = DEFAULT_SALT, timeout_s: int = 120) -> dict:
    """Execute the submission at ``path`` and mark it for ``student`` (Gradescope's results.json as a dict)."""
    nb = read_notebook(Path(path))
    answers, error = run_submission(nb, len(assignment(student, salt)), timeout_s)
    return mark(student, answers, salt, error)


def read_roster(path: str | Path) -> list[str]:
    """Student ids from a CSV roster with an ``id`` (or ``email``) column."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: not a readable roster ({exc})") from None
    key = next((k for k in ("id", "email") if rows and k in rows[0]), None)
    if key is None:
        raise ValueError(f"{path}: a roster needs an 'id' or 'email' column and at least one row")
    return [r[key].strip() for r in rows if r[key] and r[key].strip()]


def release(roster: str | Path, out_dir: str | Path, salt: str = DEFAULT_SALT) -> list[Path]:
    """One assignment notebook a student of ``roster``, in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for sid in read_roster(roster):
        p = out / f"assignment_{''.join(ch if ch.isalnum() else '_' for ch in sid)}.ipynb"
        p.write_text(json.dumps(notebook(sid, salt), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        paths.append(p)
    return paths


_RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this with the submission in /autograder/submission and expects results/results.json.
set -u
nb=$(ls /autograder/submission/*.ipynb | head -n 1)
student=$(python3 -c "import json; print(json.load(open('/autograder/submission_metadata.json'))['users'][0]['email'])")
python3 -m accelbook.ui.course.grading grade "$nb" "$student" --salt "$(cat /autograder/source/salt.txt)" \\
  --out /autograder/results/results.json
"""

_SETUP = """#!/usr/bin/env bash
# Gradescope's image setup: Python and the workbook, at the version the course uses.
set -e
apt-get update && apt-get install -y python3 python3-pip
python3 -m pip install --break-system-packages "accelbook @ git+https://github.com/accelbook/accelbook" nbclient ipykernel
"""


def gradescope_zip(path: str | Path, salt: str = DEFAULT_SALT) -> Path:
    """The autograder zip to upload to Gradescope: ``setup.sh``, ``run_autograder`` and the course's salt."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, text, mode in (("run_autograder", _RUN_AUTOGRADER, 0o755), ("setup.sh", _SETUP, 0o755),
                                 ("salt.txt", salt, 0o644)):
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            z.writestr(info, text)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accelbook.ui.course.grading", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("release", help="one assignment notebook a student of a CSV roster")
    r.add_argument("roster", type=Path)
    r.add_argument("out", type=Path)
    g = sub.add_parser("grade", help="execute and mark a submission; results.json to --out or stdout")
    g.add_argument("notebook", type=Path)
    g.add_argument("student")
    g.add_argument("--out", type=Path)
    z = sub.add_parser("gradescope", help="write the autograder zip")
    z.add_argument("zip", type=Path)
    for p in (r, g, z):
        p.add_argument("--salt", default=DEFAULT_SALT, help="the course's secret salt of the per-student seeds")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "release":
            paths = release(args.roster, args.out, args.salt)
            print(f"wrote {len(paths)} assignment notebooks in {args.out}")
        elif args.cmd == "grade":
            text = json.dumps(grade(args.notebook, args.student, args.salt), indent=1)
            if args.out:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(text + "\n", encoding="utf-8")
            else:
                print(text)
        else:
            print(f"wrote {gradescope_zip(args.zip, args.salt)}")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
