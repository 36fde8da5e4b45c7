"""Held-out runs (issue 29, "more runs, kept honestly"): the ``set`` key of data/training_runs.toml, the
``set`` column of the validation table, each set's error band, and the sources of the held-out rows."""

from __future__ import annotations

import pandas as pd
import pytest

from accelbook import training as T
from accelbook.specs.chips import get_chip
from accelbook.specs.loader import CatalogueError, load_sources
from accelbook.specs.models import get_model
from accelbook.training.validation import SETS, published_runs

# two fully pinned runs (one layout each: fast); the second is held out
RUN = '''
[{rid}]
name = "Llama 3.1 8B on 8 H100 ({rid})"
model = "llama-3.1-8b"
chip = "h100"
n_chips = 8
seq_len = 4096
global_batch_sequences = 64
tp = 1
pp = 1
zero_stage = 1
recompute = "full"
metric = "mfu"
convention = "model_causal"
reported = {{ value = {value}, src = "llama3-paper", note = "made up for the test" }}
role = "target"
{extra}
'''


def _two_runs(tmp_path, held_out_set='set = "held-out"'):
    path = tmp_path / "runs.toml"
    path.write_text(RUN.format(rid="run-a", value=0.40, extra="")
                    + RUN.format(rid="run-b", value=0.50, extra=held_out_set))
    return path


def test_set_column_defaults_to_check(tmp_path):
    t = T.validation_table(_two_runs(tmp_path)).set_index("id")
    assert t.loc["run-a", "set"] == "check"          # no key: the tuning/check set
    assert t.loc["run-b", "set"] == "held-out"


def test_held_out_band_of_a_two_run_file(tmp_path):
    t = T.validation_table(_two_runs(tmp_path)).set_index("id")
    # the two runs are the same configuration: one prediction p; errors p/0.40 - 1 and p/0.50 - 1
    p = t.loc["run-a", "predicted"]
    assert t.loc["run-b", "predicted"] == pytest.approx(p)
    table = t.reset_index()
    held = T.error_band(table, set="held-out")
    check = T.error_band(table, set="check")
    both = T.error_band(table)
    assert (held.n, check.n, both.n) == (1, 1, 2)
    assert held.median == pytest.approx(p / 0.50 - 1) and held.set == "held-out"
    assert check.median == pytest.approx(p / 0.40 - 1)
    # both sets: the median of two errors is their mean, p·(1/0.4 + 1/0.5)/2 - 1 = 2.25·p - 1
    assert both.median == pytest.approx(2.25 * p - 1)
    assert (both.low, both.high) == (pytest.approx(p / 0.50 - 1), pytest.approx(p / 0.40 - 1))


def test_each_sets_band_on_a_hand_made_table():
    t = pd.DataFrame({"role": ["target", "target", "target", "target", "target", "context"],
                      "set": ["check", "check", "held-out", "held-out", "held-out", "held-out"],
                      "error": [0.10, 0.30, -0.10, 0.40, 0.60, 5.0]})
    assert (T.error_band(t, set="check").median, T.error_band(t, set="check").n) == (pytest.approx(0.20), 2)
    h = T.error_band(t, set="held-out")
    assert (h.median, h.low, h.high, h.n) == (pytest.approx(0.40), -0.10, 0.60, 3)   # the context row is out
    assert T.error_band(t).median == pytest.approx(0.30)    # -0.1, 0.1, 0.3, 0.4, 0.6
    assert T.error_band(t, role="context", set="held-out").n == 1
    with pytest.raises(ValueError, match="no evaluated"):
        T.error_band(t[t["set"] == "check"], set="held-out")


def test_a_table_without_a_set_column_is_all_check():
    t = pd.DataFrame({"role": ["target", "target"], "error": [0.1, 0.3]})
    assert T.error_band(t, set="check").n == 2
    with pytest.raises(ValueError, match="no evaluated"):
        T.error_band(t, set="held-out")


def test_bad_set_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="set"):
        T.error_band(pd.DataFrame({"role": ["target"], "error": [0.1]}), set="tuning")
    with pytest.raises(CatalogueError, match="'set'"):
        T.validation_table(_two_runs(tmp_path, held_out_set='set = "test"'))


def test_the_held_out_rows_are_ten_or_more_and_cover_the_issues_kinds():
    runs = published_runs()
    held = {rid: e for rid, e in runs.items() if e["set"] == "held-out"}
    assert set(e["set"] for e in runs.values()) <= set(SETS)
    assert len(held) >= 10
    assert {e.get("precision", "bf16") for e in held.values()} == {"bf16", "fp8"}
    assert {get_model(e["model"]).moe is not None for e in held.values()} == {True, False}
    assert {get_chip(e["chip"]).kind for e in held.values()} >= {"gpu", "tpu"}
    # the rows that were there before issue 29's held-out set are the check set
    for rid in ("llama31-405b-8k", "mb-llama3-70b-h100", "maxtext-mixtral-v5p"):
        assert runs[rid]["set"] == "check"


def test_every_held_out_row_has_a_source_that_resolves():
    sources = load_sources()
    for rid, e in published_runs().items():
        if e["set"] != "held-out":
            continue
        src = e["reported"]["src"]
        assert src in sources, rid
        assert e["reported_provenance"].source.url.startswith("https://"), rid
        assert "shared" not in sources[src].url and not sources[src].url.startswith("/")
