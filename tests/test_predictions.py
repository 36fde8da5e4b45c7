"""Predict, then look (issue 31): a prediction is recorded before the model's answer is shown and is never marked
high or low; a skip is recorded as a skip; an empty cell records nothing. Expected answers are the hand values of
tests/test_exercises.py, not the code's."""

import json

import pytest

from accelbook.ui.exercises import predict, read_log
from accelbook.ui.exercises import predictions as P


def test_an_empty_cell_records_nothing_and_shows_no_mark_and_no_answer(tmp_path):
    log = tmp_path / "p.json"
    r = predict("predict-v5p-fp8-gain", None, log)
    assert r.recorded is None and r.answer is None and not log.exists()
    assert "my_prediction" in r.message and "Not yet" not in r._repr_html_() and "1.0" not in r.message


def test_a_prediction_is_recorded_first_then_the_answer_shown_unmarked(tmp_path):
    log = tmp_path / "sub" / "p.json"
    r = predict("predict-v5p-fp8-gain", 1.5, log)         # the v5p has no fp8 mode: the answer is 1.0
    assert r.answer == pytest.approx(1.0, rel=0.02)
    assert "too high" not in r.message and "too low" not in r.message and "1.5" in r.message
    rec = json.loads(log.read_text())
    assert len(rec) == 1 and rec[0]["exercise"] == "predict-v5p-fp8-gain" and rec[0]["notebook"] == "00"
    assert rec[0]["value"] == 1.5 and rec[0]["skipped"] is False and rec[0]["time"].endswith("+00:00")
    # a second try after the reveal is kept, but the first record stays the prediction
    predict("predict-v5p-fp8-gain", 1.0, log)
    df = read_log(log)
    assert df["value"].tolist() == [1.5, 1.0] and df["first"].tolist() == [True, False]


def test_a_skip_is_recorded_as_a_skip_and_reveals(tmp_path):
    log = tmp_path / "p.json"
    r = predict("predict-torus-mean-hops", " Skip ", log)
    assert r.answer == pytest.approx(8.008, rel=0.02)
    (rec,) = read_log(log).to_dict("records")
    assert rec["skipped"] and rec["value"] is None


def test_a_word_prediction_is_recorded_lower_case(tmp_path):
    log = tmp_path / "p.json"
    r = predict("predict-pretrain-pool", "GPU", log)       # the answer is 'tpu': shown, not judged
    assert r.answer == {"tpu"} and read_log(log)["value"].tolist() == ["gpu"] and "'tpu'" in r.message


@pytest.mark.parametrize("bad", ["lots", float("nan"), True, [1]])
def test_what_is_not_a_prediction_records_nothing_and_says_what_is_expected(tmp_path, bad):
    log = tmp_path / "p.json"
    r = predict("predict-v5p-fp8-gain", bad, log)
    assert r.recorded is None and r.answer is None and not log.exists() and "a number in ×" in r.message


def test_an_exercise_is_not_a_prediction_and_an_unknown_id_is_named(tmp_path):
    with pytest.raises(ValueError, match="check"):
        predict("ridge-h100", 295, tmp_path / "p.json")
    with pytest.raises(ValueError, match="no exercise 'predict-nothing'"):
        predict("predict-nothing", 1, tmp_path / "p.json")


def test_a_log_that_is_not_one_is_a_clear_error_and_is_not_overwritten(tmp_path):
    log = tmp_path / "p.json"
    log.write_text("{not json")
    with pytest.raises(ValueError, match="not a predictions log"):
        predict("predict-v5p-fp8-gain", 1.0, log)
    assert log.read_text() == "{not json"
    log.write_text('[{"exercise": "x"}]')
    with pytest.raises(ValueError, match="not a predictions log"):
        read_log(log)


def test_the_log_defaults_to_the_environment_then_the_home_directory(tmp_path, monkeypatch):
    monkeypatch.setenv(P.LOG_ENV, str(tmp_path / "mine.json"))
    assert P.log_path() == tmp_path / "mine.json"
    monkeypatch.delenv(P.LOG_ENV)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert P.log_path() == tmp_path / ".accelbook" / "predictions.json"
    assert read_log().empty                                     # no log yet: an empty table


def test_the_gap_is_revealed_only_once_a_prediction_is_recorded(tmp_path):
    log = tmp_path / "p.json"
    empty = predict("predict-v5p-fp8-gain", None, log)
    assert empty.gap == "" and "The gap" not in empty._repr_html_()
    wrong_kind = predict("predict-v5p-fp8-gain", "lots", log)
    assert wrong_kind.gap == "" and not log.exists()
    r = predict("predict-v5p-fp8-gain", 2.0, log)
    # notebook 00's gap cell explains that the v5p has no fp8 mode: the reveal carries that text, as HTML
    assert r.gap.startswith("**The gap.**") and "fp8" in r.gap
    shown = r._repr_html_()
    assert "<strong>The gap.</strong>" in shown and "<details" not in shown
    skipped = predict("predict-torus-mean-hops", "skip", log)
    assert skipped.gap.startswith("**The gap.**")


def test_every_prediction_has_a_gap_and_no_gap_belongs_to_an_unknown_exercise():
    from accelbook.ui.exercises import EXERCISES

    stored = json.loads(P.GAPS_PATH.read_text(encoding="utf-8"))
    ids = {e.id for e in EXERCISES.values() if e.id.startswith(P.PREFIX)}
    assert set(stored) == ids
