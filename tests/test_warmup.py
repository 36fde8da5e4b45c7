"""The warm-up (accelbook.ui.warmup): one task per notebook with dashboards, each making that notebook's calls.
No timing here: benchmarks/bench_cold_start.py measures what it saves."""

from __future__ import annotations

import pytest

from accelbook.ui import warmup
from accelbook.ui.dashboards import NOTEBOOK_MODULES


def test_one_task_per_notebook_slowest_first():
    names = warmup.task_names()
    assert sorted(names) == sorted(m.__name__.rsplit(".", 1)[-1][:4] for m in NOTEBOOK_MODULES)
    assert names[0] == "nb04"                         # the training kernels: the longest compile
    assert set(warmup.SLOW_FIRST) <= set(names)


def test_a_task_renders_its_dashboards_without_error():
    name, seconds, err = warmup.run_task("nb00")      # the catalogue: no kernel, so quick on a cold cache
    assert (name, err) == ("nb00", "") and seconds >= 0


def test_compile_all_in_this_process_and_bad_arguments():
    rows = warmup.compile_all(jobs=1, names=["nb00", "nb99"])
    assert [r[0] for r in rows] == ["nb00", "nb99"]
    assert rows[0][2] == "" and "unknown warm-up task 'nb99'" in rows[1][2]
    with pytest.raises(ValueError, match="jobs"):
        warmup.compile_all(jobs=0)
