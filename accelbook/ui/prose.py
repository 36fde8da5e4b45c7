"""Prose bound to the models: render every marked figure from its fact, and find figures that are neither.

A marked figure is ``<!--f:KEY-->TEXT<!--/f-->`` (:mod:`accelbook.ui.facts`): :func:`render_text`
replaces ``TEXT`` with the fact's value now. The files rendered (:func:`targets`) are the notebooks'
Markdown cells, the README, ``instructor/*.md`` (but ``solutions.md``, which
:mod:`accelbook.ui.solutions` writes whole) and ``docs/*.md`` (but the generated bibliography and
claims pages)::

    python -m accelbook.ui.prose            write every file (make prose)
    python -m accelbook.ui.prose --check    list what differs, exit 1 if anything does

:func:`unbound_figures` is the audit ``tests/test_prose.py`` runs on every notebook: a *figure* is a
number with a unit (``15 µs``, ``369 GB/s``, ``+12 %``, ``2.1×``, ``USD 5.06``, ``16 hops``; see
:data:`FIGURE`), and each must be either marked, or in a block (paragraph, list item, table row) that
cites its source: a link to ``docs/bibliography.md#<id>`` with ``<id>`` in ``data/sources.toml`` or an
article's anchor, or to a claim of ``docs/claims.md``. A figure the text itself sets (an exercise's
input, a what-if's premise: "suppose the link is 2× faster") is marked ``<!--given-->2×<!--/given-->``,
so a reader of the source sees that nobody computed it. Years, counts and list numbers carry no unit
and are not figures. Numbers in code spans and in link targets are not prose.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from accelbook.ui import facts

REPO_ROOT = Path(__file__).resolve().parents[2]
MARK = re.compile(r"<!--f:(?P<key>[A-Za-z0-9_.\-]+)-->(?P<text>.*?)<!--/f-->", re.S)
GIVEN = re.compile(r"<!--given-->(?P<text>.*?)<!--/given-->", re.S)
_GENERATED = {"solutions.md", "bibliography.md", "claims.md", "exam_bank.md", "problems.md", "course_map.md"}

_NUMBER = r"[~≈<>≤≥+\-−]?\s?\d[\d,]*(?:\.\d+)?(?:\s?[×x]\s?10\^?\{?-?\d+\}?|e[+\-]?\d+)?"
_UNIT = (r"(?:µs|us|ms|ns|s|%|percent|[kMGTPE]?B/s|[KMGT]iB/s|GiB|MiB|KiB|TiB|[kKMGTP]B|bytes?|"
         r"[kMGTP]?FLOP/s|[kMGTPE]?FLOPS|FLOP/byte|FLOP|[kMGTP]?W|TOPS|tokens/s(?:/user)?|tok/s|"
         r"[×x]|hops?|months?|years?|days?|hours?|h|GHz|MHz|nm|mm²|°C|"
         r"USD|cents?|\$)")
#: a number (or a range of two) followed by a unit; or a currency sign in front
FIGURE = re.compile(
    rf"(?<![\w.^/#])(?:(?:USD|US\$|\$|€)\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKMB]n?\b)?"
    rf"|{_NUMBER}(?:\s?(?:–|-|to|…|/)\s?{_NUMBER})?\s?{_UNIT}(?![\w/²]|\s?\d|\.\d)(?<!×(?=\s[A-Z])))")
_CITE = re.compile(r"\]\((?:\.\./)?docs/(?:bibliography|claims)\.md#(?P<id>[a-z0-9][a-z0-9_.\-]*)\)"
                   r"|\]\((?:bibliography|claims)\.md#(?P<id2>[a-z0-9][a-z0-9_.\-]*)\)")
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]+>")


def render_text(text: str, value: Callable[[str], str] = facts.value) -> str:
    """``text`` with each marked figure's text replaced by its fact's value now."""
    return MARK.sub(lambda m: f"<!--f:{m['key']}-->{value(m['key'])}<!--/f-->", text)


def marked_keys(text: str) -> list[str]:
    return [m["key"] for m in MARK.finditer(text)]


def targets(root: Path = REPO_ROOT) -> list[Path]:
    """The files whose prose is rendered: notebooks, README, instructor/ and docs/."""
    files = sorted((root / "notebooks").glob("*.ipynb"))
    files += [p for p in (root / "README.md",) if p.exists()]
    for folder in ("instructor", "docs"):
        files += [p for p in sorted((root / folder).glob("*.md")) if p.name not in _GENERATED]
    return files


def _notebook_markdown(nb: dict) -> list[tuple[int, str]]:
    return [(i, "".join(c["source"])) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"]


def markdown_blocks(path: Path) -> list[tuple[str, str]]:
    """(where, Markdown) for a file: each Markdown cell of a notebook (``cell N``), or the whole file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return [(f"cell {i}", src) for i, src in _notebook_markdown(json.loads(text))]
    return [("", text)]


def rendered(path: Path, value: Callable[[str], str] = facts.value) -> str:
    """The file's text as it should be, every marked figure rendered now."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return render_text(text, value)
    nb = json.loads(text)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            src = "".join(cell["source"])
            new = render_text(src, value)
            if new != src:
                cell["source"] = new.splitlines(keepends=True)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Stale:
    path: Path
    key: str
    shipped: str
    now: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(REPO_ROOT)}: {self.key} reads {self.shipped!r}, the model gives {self.now!r}"


def stale(paths: list[Path] | None = None) -> list[Stale]:
    """Every marked figure whose text differs from its fact's value now."""
    out = []
    for path in targets() if paths is None else paths:
        for _, md in markdown_blocks(path):
            for m in MARK.finditer(md):
                now = facts.value(m["key"])
                if m["text"] != now:
                    out.append(Stale(path, m["key"], m["text"], now))
    return out


def write_all(paths: list[Path] | None = None) -> list[Path]:
    """Render every target file in place; the files that changed."""
    changed = []
    for path in targets() if paths is None else paths:
        new = rendered(path)
        if new != path.read_text(encoding="utf-8"):
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def _blocks(markdown: str) -> list[str]:
    """Paragraphs, list items and table rows: the units a citation covers."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", markdown):
        lines = para.split("\n")
        if all(ln.lstrip().startswith("|") for ln in lines if ln.strip()):
            out += lines
            continue
        item: list[str] = []
        for ln in lines:
            if re.match(r"\s{0,3}(?:[-*+]|\d+[.)])\s", ln) and item:
                out.append("\n".join(item))
                item = []
            item.append(ln)
        out.append("\n".join(item))
    return out


def _known_anchors() -> set[str]:
    from accelbook.specs import bibliography
    from accelbook.specs.loader import load_sources

    return set(load_sources()) | {a for a, _, _ in bibliography.ARTICLES} | _claim_anchors()


def _claim_anchors() -> set[str]:
    from accelbook.economics.claims import load_claims

    return {c.id for c in load_claims()}


def unbound_figures(markdown: str, anchors: set[str] | None = None) -> list[str]:
    """The figures of ``markdown`` that are neither marked, given, nor in a block that cites a source."""
    anchors = _known_anchors() if anchors is None else anchors
    found = []
    for block in _blocks(_CODE.sub(" ", markdown)):
        cited = [m["id"] or m["id2"] for m in _CITE.finditer(block)]
        if any(c in anchors for c in cited):
            continue
        text = GIVEN.sub(" ", MARK.sub(" ", block))
        text = _HTML_TAG.sub(" ", _LINK_TARGET.sub("]", text)).replace("$", " ").replace("\\,", "")
        text = re.sub(r"\\(?:times|approx|sim|cdot|text\{[^}]*\}|mathrm\{[^}]*\})", lambda m: {
            "\\times": "×", "\\approx": "≈", "\\sim": "~", "\\cdot": "·"}.get(m[0], " "), text)
        text = re.sub(r"[ \t]+", " ", text)
        found += [m[0].strip() for m in FIGURE.finditer(text)]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accelbook.ui.prose", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="list the figures that differ; change nothing")
    args = ap.parse_args(argv)
    if args.check:
        diffs = stale()
        print("\n".join(map(str, diffs)) or "every marked figure is up to date")
        return 1 if diffs else 0
    for path in write_all():
        print(f"wrote {path.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
