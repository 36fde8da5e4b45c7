"""Prose bound to the models (accelbook.ui.prose): every marked figure is what its fact computes now,
every fact is quoted, and no figure in a notebook, the README, instructor/ or docs/ is typed by hand
without a source."""

from __future__ import annotations

import pytest

from accelbook.ui import facts, prose

TARGETS = prose.targets()

# Files whose figures are not all bound yet (issue 28): each must still have an unbound figure, so that
# the set shrinks as they are done and a finished file cannot slip back.
PENDING = {
}


def _name(path):
    rel = path.relative_to(prose.REPO_ROOT)
    return str(rel) if str(rel) == "instructor/README.md" else path.name


def test_every_marked_figure_is_what_its_fact_computes():
    diffs = prose.stale(TARGETS)
    assert not diffs, ("prose differs from the models: run `make prose` (python -m accelbook.ui.prose)\n"
                       + "\n".join(map(str, diffs)))


def test_every_fact_is_quoted_and_every_quote_has_a_fact():
    quoted = {k for p in TARGETS for _, md in prose.markdown_blocks(p) for k in prose.marked_keys(md)}
    defined = set(facts.load())
    assert not defined - quoted, f"facts no file quotes: {sorted(defined - quoted)}"
    for key in quoted:
        facts.value(key)  # raises KeyError for a quote without a fact


def test_fact_keys_carry_their_module_prefix():
    for key, fn in facts.load().items():
        module = fn.__module__.rsplit(".", 1)[-1]
        prefix = "course" if module == "course" else module.split("_")[0]
        assert key.startswith(prefix + "."), (key, fn.__module__)


@pytest.mark.parametrize("path", TARGETS, ids=_name)
def test_no_figure_is_typed_without_a_source(path):
    loose = [(where, f) for where, md in prose.markdown_blocks(path) for f in prose.unbound_figures(md)]
    if _name(path) in PENDING:
        assert loose, f"{_name(path)} has no unbound figure left: take it off PENDING in tests/test_prose.py"
    else:
        assert not loose, ("figures neither rendered from a fact nor cited (accelbook.ui.prose):\n"
                           + "\n".join(f"{where}: {f}" for where, f in loose))


def test_render_replaces_only_the_marked_text():
    text = "a <!--f:k-->15<!--/f--> µs step, <!--f:k-->old<!--/f--> again, 20 µs typed"
    assert prose.render_text(text, {"k": "27"}.__getitem__) == (
        "a <!--f:k-->27<!--/f--> µs step, <!--f:k-->27<!--/f--> again, 20 µs typed")
    assert prose.marked_keys(text) == ["k", "k"]


@pytest.mark.parametrize("text, loose", [
    ("a step of 15 µs and 370 GB/s", ["15 µs", "370 GB/s"]),
    ("about <!--f:x-->15<!--/f--> µs", []),
    ("suppose <!--given-->2×<!--/given--> the bandwidth", []),
    ("measured 370 GB/s ([nccl-tests](../docs/bibliography.md#nccl-tests-issue-212))", []),
    ("measured 370 GB/s ([made up](../docs/bibliography.md#no-such-source))", ["370 GB/s"]),
    ("USD 5.06 an hour, +12 % and 19–45 %", ["USD 5.06", "+12 %", "19–45 %"]),
    ("in 2024, 8 H100s, Llama 3.1 70B, notebook 06, step 3", []),
    ("`t = 15 µs` in code and $0.82 \\times 450 = 369$ GB/s in math", ["369 GB/s"]),
    ("a 4×4×64 torus of 8 × H100", []),
    ("the README's form: 370 GB/s ([s](docs/bibliography.md#nccl-tests-issue-212))", []),
    ("| 6.6 µs | x |\n|---|---|\n| 1.9 µs ([s](../docs/bibliography.md#nccl-tests-issue-212)) |", ["6.6 µs"]),
])
def test_audit_finds_typed_figures(text, loose):
    assert prose.unbound_figures(text, anchors={"nccl-tests-issue-212"}) == loose
