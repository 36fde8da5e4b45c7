"""A sample of the independent fuzz of the public API (``tools/fuzz_api.py``, issue 18), fixed seed.

The full fuzz (about 4,200 calls) runs by hand; here a few hundred of its calls, drawn with a fixed
seed, each in a worker process under the 10 s limit and the 4 GiB memory watch: no result with a
NaN, an infinity or a negative number, no call past the limits, and under 1 % of errors that name
neither the argument nor the value.
"""

from __future__ import annotations

import importlib
import pathlib
import sys

import pytest

TOOLS = pathlib.Path(__file__).resolve().parents[1] / "tools"


@pytest.fixture(scope="module")
def fuzz():
    # imported by name from a path on sys.path, so that the worker processes (spawned) import it too
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    return importlib.import_module("fuzz_api")


def test_the_plan_is_reproducible_and_covers_every_function(fuzz):
    la = fuzz.labels_and_args()
    a, b = fuzz.plan(la, 5000, seed=7), fuzz.plan(la, 5000, seed=7)
    assert a == b and len(a) == 5000
    assert {lab for lab, _ in a} == set(la)


def test_a_fuzz_sample_has_no_silent_wrong_result_no_hang_and_clear_errors(fuzz):
    out = fuzz.run(n_calls=600, seed=18, timeout=10.0, mem_gib=4.0, verbose=False)
    counts, n = out["counts"], sum(out["counts"].values())
    assert n == 600
    bad = {k: out["examples"].get(k, [])[:5] for k in ("silent_wrong", "hang", "memory", "crash")}
    assert not any(bad.values()), bad
    assert counts.get("unclear", 0) < 0.01 * n, out["examples"].get("unclear", [])[:10]
    assert counts.get("clear", 0) > 0.5 * n          # most mistakes are refused, by name
