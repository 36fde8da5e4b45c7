"""Golden numbers (issue 27): the package's numbers equal the pinned ones, and every pin has its reason.

``tests/golden/numbers.json`` holds every validation table, a fixed grid of estimates from every model
and each dashboard's default view; ``tests/golden/PINS.md`` one dated line per pin with the digest of the
values it wrote. A change that moves numbers on purpose re-pins them in the same commit::

    python tools/golden.py check            # what moved, grouped by key prefix
    python tools/golden.py pin --reason "why the numbers moved"
"""

from __future__ import annotations

import importlib
import math
import pathlib
import sys

import pytest

TOOLS = pathlib.Path(__file__).resolve().parents[1] / "tools"


@pytest.fixture(scope="module")
def golden():
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    return importlib.import_module("golden")


def test_stored_numbers_are_the_last_pin(golden):
    """Numbers edited without ``pin --reason`` (or a pin line edited) fail here."""
    pins = golden.pins()
    assert pins, f"{golden.PINS} records no pin: run python tools/golden.py pin --reason '...'"
    date, digest, n_keys, reason = pins[-1]
    values = golden.load()
    assert golden.digest(values) == digest and len(values) == n_keys, (
        f"{golden.NUMBERS.name} holds values of digest {golden.digest(values)} ({len(values)} keys), but the last "
        f"pin in {golden.PINS.name} ({date}: {reason}) recorded {digest} ({n_keys} keys): re-pin with "
        "python tools/golden.py pin --reason '...' instead of editing the numbers")
    assert golden.NUMBERS.read_text() == golden.dumps(values), "numbers.json is not in the layout pin writes"


def test_computed_numbers_equal_the_pinned_ones(golden):
    n, text = golden.report(golden.load(), golden.compute(), limit=5)
    assert n == 0, text + "\n\nIf the change is on purpose: python tools/golden.py pin --reason '...'"


def test_the_comparison_tolerance_and_exact_strings(golden):
    one = 0.1 + 0.2
    assert golden.diff_key(one, one * (1 + 5e-13)) is None
    d = golden.diff_key([1.0, one, "x"], [1.0, one * (1 + 1e-9), "x"])
    assert d["n_diff"] == 1 and d["n"] == 3 and d["rel"] == pytest.approx(1e-9, rel=1e-3)
    assert golden.diff_key("nan", "nan") is None and golden.diff_key("nan", 1.0)["rel"] == math.inf
    assert golden.diff_key("fits", "fits ") is not None and golden.diff_key(True, 1) is not None
    assert golden.diff_key([1, 2], [1, 2, 3])["what"] == "2 values -> 3"
    diffs = golden.compare({"a.b[1].x": 1.0, "a.c": 2.0, "z": 1}, {"a.b[1].x": 1.5, "a.c": 2.0, "y": 1})
    assert set(diffs) == {"a.b[1].x", "y", "z"}
    assert golden.prefix("training.estimate[llama,h100].mfu") == "training.estimate"
    assert golden.prefix("training.validation_table.mfu") == "training.validation_table"
    lines = golden.summary_lines({"a.b[1].x": 1.0, "a.b[2].x": 2.0}, {"a.b[1].x": 1.5, "a.b[2].x": 2.0},
                                 {"a.b[1].x": golden.diff_key(1.0, 1.5)})
    assert lines == ["a.b: 1 of 2 keys differ (1 of 2 values), max rel 0.33"]


def test_the_file_layout_round_trips_floats_and_non_finite_values(golden, tmp_path):
    from golden_encode import Entries  # beside golden.py, on the path the fixture set

    g = Entries()
    g.put("x", {"a": 0.1 + 0.2, "b": float("nan"), "c": [float("inf"), -float("inf"), 1]})
    text = golden.dumps(g.values)
    assert text.splitlines()[1] == '"x.a": 0.30000000000000004,'
    assert g.values["x.b"] == "nan" and g.values["x.c"] == ["inf", "-inf", 1]
    (tmp_path / "n.json").write_text(text)
    assert golden.load(tmp_path / "n.json") == g.values
