"""Two editions from one source (issue 31): the student edition holds no answer, no worked solution, no gap and
no stored output; the instructor edition is the source with the instructor's files; gaps.json follows the
notebooks' gap cells."""

from __future__ import annotations

import json
import re

import pytest

from accelbook.ui.course import editions as E
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.exercises import predictions as P


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    E.write_edition("student", out)
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "notebooks").glob("*.ipynb"))}


def _text(nb):
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def test_the_student_edition_has_every_notebook_and_no_answer(student):
    assert sorted(student) == [p.name for p in E.notebooks()]
    for name, nb in student.items():
        text = _text(nb)
        assert not re.search(r"<summary>\s*(Answer|Solution)", text, re.I), f"{name}: an answer block is left"
        assert "**The gap.**" not in text, f"{name}: a gap explanation is left"
        assert "hand.solutions(" not in text and "solutions.md" not in text.replace("instructor/solutions.md", ""), name
        for cell in nb["cells"]:
            tags = cell.get("metadata", {}).get("tags", [])
            assert "answer" not in tags and "gap" not in tags, name
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, f"{name}: a stored output"


def test_the_student_edition_keeps_the_questions_the_hints_and_the_prediction_cells(student):
    for name, nb in student.items():
        text = _text(nb)
        nn = name[:2]
        for ex in EXERCISES.values():
            if ex.notebook == nn and ex.id.startswith(P.PREFIX):
                assert f'predict("{ex.id}"' in text, f"{name}: the prediction cell of {ex.id} is gone"
            elif ex.notebook == nn:
                assert f'check("{ex.id}"' in text, f"{name}: the exercise cell of {ex.id} is gone"
        src = _text(E.read_notebook(E.NOTEBOOK_DIR / name))
        if "<summary>Hints</summary>" in src:
            assert "<summary>Hints</summary>" in text, f"{name}: the hints were cut with the answers"


def test_an_answer_block_is_cut_but_the_next_question_in_its_cell_stays():
    cell = {"cell_type": "markdown", "metadata": {"tags": ["answer"]}, "source":
            "<details><summary>Hints</summary>one scale per block</details>\n"
            "<details><summary>Answer 1</summary>4.25 bits</details>\n\n2. Bits of NVFP4?\n"}
    (out,) = E.student_cells({"cells": [cell]})
    assert "4.25" not in "".join(out["source"]) and "2. Bits of NVFP4?" in "".join(out["source"])
    assert "Hints" in "".join(out["source"]) and out["metadata"]["tags"] == []
    only_answer = {"cell_type": "markdown", "metadata": {"tags": ["answer"]},
                   "source": "<details><summary>Answer 2</summary>448</details>"}
    assert E.student_cells({"cells": [only_answer]}) == []


def test_the_instructor_edition_is_the_source_and_carries_the_guide(tmp_path):
    E.write_edition("instructor", tmp_path)
    for path in E.notebooks():
        got = json.loads((tmp_path / "notebooks" / path.name).read_text(encoding="utf-8"))
        src = E.read_notebook(path)
        assert got["cells"] == src["cells"]
    for name in ("solutions.md", "exam_bank.md", "problems.md", "README.md"):
        assert (tmp_path / "instructor" / name).is_file()


def test_gaps_json_follows_the_notebooks():
    assert P.GAPS_PATH.read_text(encoding="utf-8") == E.render_gaps(), (
        "accelbook/ui/exercises/gaps.json is stale: run `python -m accelbook.ui.course.editions gaps`")
    for ex_id, text in E.gaps().items():
        assert text.startswith("**The gap.**") and "<!--" not in text and "<details" not in text, ex_id


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="edition"):
        E.edition({"cells": []}, "teacher")
    with pytest.raises(ValueError, match="edition"):
        E.write_edition("teacher", tmp_path)
    with pytest.raises(ValueError, match="no notebooks"):
        E.notebooks(tmp_path)
    bad = tmp_path / "00_x.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="00_x.ipynb"):
        E.read_notebook(bad)
