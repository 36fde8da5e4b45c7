"""The course map (issue 31): prerequisites form an ordered graph, both plans cover every notebook after its
prerequisites, times are counted from the notebooks, and the generated map is up to date."""

from __future__ import annotations

import pytest

from accelbook.ui.course import course_map as C
from accelbook.ui.course import hand


def test_prerequisites_come_before_and_name_real_notebooks():
    order = list(C.PREREQUISITES)
    assert order == list(hand.NOTEBOOKS)
    for nb, pre in C.PREREQUISITES.items():
        assert all(order.index(p) < order.index(nb) for p in pre), nb
    assert C.layers()["00"] == 0 and C.layers()["12"] == max(C.layers().values())


def test_both_plans_respect_prerequisites_and_the_semester_is_longer():
    C.check_plan(C.SEMESTER)
    C.check_plan(C.QUARTER)
    assert len(C.SEMESTER) == 14 and len(C.QUARTER) == 10
    with pytest.raises(ValueError, match="prerequisites"):
        C.check_plan((("01",), ("00",), *C.QUARTER[1:]))
    with pytest.raises(ValueError, match="leaves out"):
        C.check_plan(C.QUARTER[:-1])


def test_times_are_counted_from_the_notebooks():
    secs = C.sections("04")
    assert [s.title for s in secs][1].startswith("1 ·")
    # the section with the training dashboard holds one dashboard and a prediction, and costs their minutes
    step = next(s for s in secs if s.title.startswith("2 ·"))
    assert step.dashboards >= 1 and step.predictions >= 1
    assert step.minutes == pytest.approx(step.words / C.READING_WPM + step.code_cells * C.MIN_PER_CODE_CELL
                                         + step.dashboards * C.MIN_PER_DASHBOARD
                                         + step.predictions * C.MIN_PER_PREDICTION
                                         + step.exercises * C.MIN_PER_EXERCISE)
    # the hand problems are counted in the section that shows them, and hand.show is not a dashboard
    by_hand = next(s for s in secs if s.title == C.HAND_SECTION)
    assert by_hand.hand_problems == len(hand.problems("04", "hand")) and by_hand.dashboards == 0
    assert C.notebook_minutes("04") == pytest.approx(sum(s.minutes for s in secs))
    # notebook 04 is the longest of the core notebooks, which is why the plans split it
    assert C.notebook_minutes("04") > max(C.notebook_minutes(n) for n in ("00", "01", "02", "03"))
    with pytest.raises(ValueError, match="notebook"):
        C.sections("13")


def test_the_generated_map_is_up_to_date():
    assert C.MAP_PATH.read_text(encoding="utf-8") == C.render_markdown(), (
        "instructor/course_map.md is stale: run `python -m accelbook.ui.course.course_map`")
    assert C.SVG_PATH.read_text(encoding="utf-8") == C.svg()
    text = C.SVG_PATH.read_text(encoding="utf-8")
    assert all(f">{nb} · " in text for nb in C.PREREQUISITES)
    n_edges = sum(len(p) for p in C.PREREQUISITES.values())
    assert text.count("<line ") == n_edges
