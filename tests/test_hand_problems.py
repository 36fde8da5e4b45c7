"""Paper-and-pencil problems and the exam bank (accelbook.ui.course.hand): every worked answer agrees with the
model's function, the generated pages are up to date, and the course has what issue 31 asks: at least five hand
problems a notebook, forty exam questions, and every notebook showing its problems."""

from __future__ import annotations

import math

import pytest

from accelbook.ui.course import hand

ALL = hand.problems()


@pytest.mark.parametrize("p", ALL, ids=[p.id for p in ALL])
def test_hand_arithmetic_matches_the_model(p):
    g = p.given()
    got, want = float(p.hand(g)), float(p.model(g))
    assert math.isfinite(got) and math.isfinite(want), p.id
    assert got == pytest.approx(want, rel=p.rel_tol, abs=0 if p.rel_tol else 1e-12), (
        f"{p.id}: hand arithmetic gives {got}, {p.source} gives {want}")


@pytest.mark.parametrize("p", ALL, ids=[p.id for p in ALL])
def test_the_question_states_its_numbers_and_the_solution_shows_its_work(p):
    text = p.text()
    assert "{" not in text and "}" not in text, f"{p.id}: an unfilled template field"
    assert any(ch.isdigit() for ch in text), f"{p.id}: a hand problem states the numbers to work from"
    steps = p.steps(p.given())
    assert steps and any("=" in s for s in steps), f"{p.id}: a worked solution writes its arithmetic"
    assert p.unit and p.source.startswith("accelbook."), p.id


def test_ids_are_unique_and_named_for_their_use():
    for p in ALL:
        assert p.id.startswith(f"{p.use}-"), f"{p.id} is a {p.use} problem: its id starts '{p.use}-'"


def test_show_has_no_answers_and_solutions_do():
    for nb in hand.NOTEBOOKS:
        shown = hand.show(nb)._repr_html_()
        assert "Answer:" not in shown and "<details" not in shown
        sols = hand.solutions(nb)._repr_html_()
        assert sols.count("<details>") == len(hand.problems(nb, "hand"))


def test_generated_pages_are_up_to_date():
    assert hand.EXAM_BANK_PATH.read_text(encoding="utf-8") == hand.render_exam_bank(), (
        "instructor/exam_bank.md is stale: run `python -m accelbook.ui.course.hand`")
    assert hand.PROBLEMS_PATH.read_text(encoding="utf-8") == hand.render_problems_page(), (
        "instructor/problems.md is stale: run `python -m accelbook.ui.course.hand`")


def test_every_notebook_has_five_hand_problems_and_the_bank_forty_questions():
    for nb in hand.NOTEBOOKS:
        assert len(hand.problems(nb, "hand")) >= 5, f"notebook {nb} has fewer than five hand problems"
    assert len(hand.problems(use="exam")) >= 40


def test_every_notebook_shows_its_problems_and_folds_their_solutions():
    import json

    for nb in hand.NOTEBOOKS:
        (path,) = (hand.REPO_ROOT / "notebooks").glob(f"{nb}_*.ipynb")
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        src = ["".join(c["source"]) for c in cells]
        shows = [i for i, s in enumerate(src) if f'hand.show("{nb}")' in s]
        sols = [i for i, s in enumerate(src) if f'hand.solutions("{nb}")' in s]
        assert len(shows) == 1 and len(sols) == 1, path.name
        assert "answer" in cells[sols[0]]["metadata"].get("tags", []), f"{path.name}: solutions cell not tagged answer"


def test_fmt_writes_numbers_as_a_worked_solution_does():
    assert hand.fmt(10567.3) == "10,567" and hand.fmt(3.4712) == "3.471" and hand.fmt(327680) == "327,680"
    assert hand.fmt(2.5e-5) == "2.500e-05" and hand.fmt(6.74e24) == "6.740e+24"


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="notebook"):
        hand.problems("13")
    with pytest.raises(ValueError, match="use"):
        hand.problems(use="quiz")
