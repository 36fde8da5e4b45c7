"""The static book's build rules (tools/build_book.py), without executing notebooks or a browser."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def build_book():
    spec = importlib.util.spec_from_file_location("build_book", ROOT / "tools" / "build_book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checking_cells_are_hidden_and_others_kept(build_book):
    hidden = build_book.checking_cell
    assert hidden("assert x == 1", later="")
    assert hidden("# the numbers the text quotes\nerr = v['error']\nassert (err < 0.1).all()", later="print(v)")
    assert not hidden("err = v['error']\nassert (err < 0.1).all()", later="display(err)")  # a later cell needs err
    assert not hidden("print(x)\nassert x == 1", later="")
    assert not hidden("x = 1", later="")
    assert not hidden("assert x ==", later="")  # not Python: shown as it is


def test_links_point_at_book_pages(build_book, tmp_path):
    pages = {(ROOT / "docs" / "bibliography.md").resolve(): "bibliography.html",
             (ROOT / "notebooks" / "01_gpu_vs_tpu.ipynb").resolve(): "01_gpu_vs_tpu.html"}
    text = ('<a href="../docs/bibliography.md#palm-2022">PaLM</a> <a href="01_gpu_vs_tpu.ipynb">next</a> '
            '<a href="https://example.org/x">web</a> <a href="../ARCHITECTURE.md">arch</a>')
    out = build_book.rewrite_links(text, ROOT / "notebooks", pages)
    assert '<a href="bibliography.html#palm-2022">PaLM</a>' in out
    assert '<a href="01_gpu_vs_tpu.html">next</a>' in out
    assert '<a href="https://example.org/x">web</a>' in out
    assert 'title="in the repository: ARCHITECTURE.md">arch</span>' in out  # not in the book: no dead link


def test_broken_anchor_is_reported(build_book, tmp_path):
    (tmp_path / "index.html").write_text('<a href="bibliography.html#nope">x</a> <a href="gone.html">y</a>')
    (tmp_path / "bibliography.html").write_text('<a id="palm-2022"></a>')
    broken = build_book.check_links(tmp_path)
    assert any("#nope" in b and "no such anchor" in b for b in broken)
    assert any("gone.html" in b and "no such file" in b for b in broken)
