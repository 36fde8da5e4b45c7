"""Auto-graded assignments (issue 31): per-student numbers from a seed, answers from the package within the
checker's tolerances, and a grader that executes a notebook and gives full marks to a solved copy, partial marks
to a half-solved one and none to an empty one. Expected answers here are written from the formulas, not taken
from the code under test."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from accelbook.ui.course import assignments as A
from accelbook.ui.course import grading as G
from accelbook.ui.exercises import EXERCISES

ROSTER = Path(__file__).resolve().parents[1] / "instructor" / "roster_example.csv"


def test_numbers_differ_between_students_and_repeat_for_one():
    a, b = A.assignment("ada@uni.edu"), A.assignment("bob@uni.edu")
    assert [i.params for i in a] == [i.params for i in A.assignment(" ADA@uni.edu ")]
    assert [i.params for i in a] != [i.params for i in b]
    assert [i.params for i in a] != [i.params for i in A.assignment("ada@uni.edu", salt="another-term")]
    # over a class of 40, every question draws more than one set of numbers
    klass = [A.assignment(f"s{k}@uni.edu") for k in range(40)]
    for n in range(len(A.QUESTIONS)):
        assert len({json.dumps(s[n].params, sort_keys=True) for s in klass}) > 1


def test_answers_follow_the_published_formulas():
    by_id = {i.question.id: i for s in [A.assignment(f"s{k}") for k in range(30)] for i in s}
    ridge = by_id["ridge"]
    from accelbook.specs.chips import get_chip
    c = get_chip(ridge.params["chip"])
    assert ridge.value == pytest.approx(c.peak_dense_flop_s["bf16"] / c.hbm_bw_bytes_per_s)
    bub = by_id["bubble"].params
    assert by_id["bubble"].value == pytest.approx(100 * (bub["pp"] - 1) / (bub["m"] + bub["pp"] - 1))
    kv = by_id["kv-per-token"]
    from accelbook.specs.models import get_model
    m = get_model(kv.params["model"])
    b = {"bf16": 2, "fp8": 1}[kv.params["kv"]]
    assert kv.value == 2 * m.n_layers * m.n_kv_heads * m.d_head * b
    days = by_id["days"].params
    n = get_model(days["model"])
    # 6N per token plus causal attention's 6·L·s·d_attn (half of full attention's 12·L·s·d)
    approx = days["tokens_t"] * 1e12 * 6 * n.params / (days["chips"] * days["mfu"] * get_chip(days["chip"])
                                                         .peak_dense_flop_s["bf16"]) / 86400
    assert by_id["days"].value == pytest.approx(approx, rel=0.12)


def test_tolerances_are_the_checkers():
    for q in A.QUESTIONS:
        assert q.varies in EXERCISES and q.rel_tol == EXERCISES[q.varies].rel_tol
    (inst,) = [i for i in A.assignment("ada@uni.edu") if i.question.id == "kv-per-token"]
    assert inst.accepts(inst.value) and not inst.accepts(inst.value + 1) and not inst.accepts("x")
    (days,) = [i for i in A.assignment("ada@uni.edu") if i.question.id == "days"]
    assert days.accepts(days.value * 1.029) and not days.accepts(days.value * 1.031)
    assert not days.accepts(float("nan")) and not days.accepts(True)


def test_the_notebook_states_the_students_numbers_and_no_answer():
    nb = A.notebook("ada@uni.edu")
    text = "\n".join(c["source"] for c in nb["cells"])
    for inst in A.assignment("ada@uni.edu"):
        assert inst.text in text and f"{inst.variable} = None" in text
        assert f"{inst.value:,.6g}" not in text


def test_grading_a_solved_a_half_solved_and_an_empty_copy(tmp_path):
    sid = "ada@uni.edu"
    insts = A.assignment(sid)
    solved = tmp_path / "solved.ipynb"
    solved.write_text(json.dumps(A.solved(sid)), encoding="utf-8")
    half = {i.variable: i.value for i in insts[:3]} | {insts[3].variable: insts[3].value * 2}
    partial = tmp_path / "half.ipynb"
    nb = A.notebook(sid, answers=half)
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": "1 / 0", "outputs": [],
                        "execution_count": None, "id": "boom"})      # a broken last cell still gets marked
    partial.write_text(json.dumps(nb), encoding="utf-8")
    empty = tmp_path / "empty.ipynb"
    empty.write_text(json.dumps(A.notebook(sid)), encoding="utf-8")
    full, part, none = (G.grade(p, sid) for p in (solved, partial, empty))
    total = len(insts) * G.POINTS
    assert full["score"] == total and "output" not in full
    assert part["score"] == 3 * G.POINTS and "ZeroDivisionError" in part["output"]
    assert none["score"] == 0
    visible = [t for t in none["tests"] if t["visibility"] == "visible"]
    assert len(visible) == len(insts) and all("write a number" in t["output"] for t in visible)
    hidden = [t for t in full["tests"] if t["visibility"] == "after_published"]
    assert sum(t["max_score"] for t in hidden) == total
    # another student's solved copy is marked against this student's numbers
    other = tmp_path / "other.ipynb"
    other.write_text(json.dumps(A.solved("bob@uni.edu")), encoding="utf-8")
    assert G.grade(other, sid)["score"] < total


def test_release_and_the_command_line(tmp_path):
    paths = G.release(ROSTER, tmp_path / "out")
    assert len(paths) == 3 and all(p.is_file() for p in paths)
    z = G.gradescope_zip(tmp_path / "ag.zip", salt="term-1")
    with zipfile.ZipFile(z) as zf:
        assert {"run_autograder", "setup.sh", "salt.txt"} <= set(zf.namelist())
        assert zf.read("salt.txt").decode() == "term-1"
        assert zf.getinfo("run_autograder").external_attr >> 16 == 0o755
    bad = subprocess.run([sys.executable, "-m", "accelbook.ui.course.grading", "grade", str(tmp_path / "no.ipynb"),
                          "ada@uni.edu"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no.ipynb" in bad.stderr and "Traceback" not in bad.stderr


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(ValueError, match="student"):
        A.assignment("")
    with pytest.raises(ValueError, match="student"):
        A.seed_of(None)
    roster = tmp_path / "r.csv"
    roster.write_text("name\nAda\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'id' or 'email'"):
        G.read_roster(roster)
    nb = tmp_path / "x.ipynb"
    nb.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="x.ipynb"):
        G.grade(nb, "ada@uni.edu")


def test_every_chip_and_model_a_question_draws_has_its_numbers():
    from accelbook.specs.chips import get_chip
    for c in A.CHIPS:
        assert get_chip(c).peak_dense_flop_s["bf16"] > 0
    for c in A.PRICED_CHIPS:
        assert get_chip(c).price_usd_per_hour > 0
