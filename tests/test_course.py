"""The course stands alone: the repository scan, generated documents up to date, licences, sources.

- No file points outside the repository (a sibling folder, a path on a build machine).
- Every source id cited in data/*.toml resolves in data/sources.toml (walked here with tomllib, as an
  independent reference to the package's own walk).
- docs/bibliography.md, docs/claims.md and instructor/solutions.md equal what their generators write
  now (regenerate with `make bibliography`, `make claims` and `make solutions`), and every exercise
  has a solution.
- Every relative link in docs/ and instructor/ resolves, anchors included.
- The licence files exist and README.md and pyproject.toml name them.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from accelbook.economics.claims import load_claims
from accelbook.specs import bibliography
from accelbook.specs.loader import load_sources
from accelbook.ui import solutions
from accelbook.ui.exercises import EXERCISES

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

# Built by concatenation so that this file does not match its own scan.
FORBIDDEN = ("../" + "shared", "/" + "work/", "/" + "home/", "/" + "Users/", "/" + "root/", "C:" + "\\Users")


def _repository_text_files() -> list[Path]:
    """Tracked files plus new files git does not ignore; without git, every file outside ignored folders."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                             capture_output=True, check=True).stdout.decode()
        paths = [ROOT / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "build", "artifacts", ".numba_cache", "__pycache__", ".pytest_cache", ".hypothesis"}
        paths = [p for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
                 and not any(part.endswith(".egg-info") for part in p.parts)]
    texts = []
    for p in paths:
        if not p.is_file():   # listed but deleted in the working tree
            continue
        raw = p.read_bytes()
        if b"\0" in raw:
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        texts.append(p)
    return texts


def test_no_file_points_outside_the_repository():
    files = _repository_text_files()
    assert len(files) > 50
    hits = []
    for p in files:
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            for bad in FORBIDDEN:
                if bad in line:
                    hits.append(f"{p.relative_to(ROOT)}:{n}: {bad!r} in {line.strip()[:120]!r}")
    assert not hits, "paths outside the repository:\n" + "\n".join(hits)


def _cited_ids(node, found: list[str]) -> list[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "src" and isinstance(value, str):
                found.append(value)
            elif key == "evidence":
                found.extend(value)
            else:
                _cited_ids(value, found)
    elif isinstance(node, list):
        for item in node:
            _cited_ids(item, found)
    return found


def test_every_cited_source_resolves():
    with open(DATA / "sources.toml", "rb") as fh:
        sources = tomllib.load(fh)
    missing, n = [], 0
    for path in sorted(DATA.glob("*.toml")):
        if path.name == "sources.toml":
            continue
        with open(path, "rb") as fh:
            ids = _cited_ids(tomllib.load(fh), [])
        n += len(ids)
        missing += [f"{path.name}: {sid}" for sid in ids if sid not in sources]
    assert n > 300 and not missing, missing
    # the package's walk (which feeds the bibliography's "cited by") finds the same ids
    assert set(bibliography.cited_by()) <= set(sources)


def test_bibliography_is_up_to_date():
    shipped = bibliography.BIBLIOGRAPHY_PATH.read_text(encoding="utf-8")
    assert shipped == bibliography.render_bibliography(), (
        "docs/bibliography.md differs from data/sources.toml: run `make bibliography` "
        "(python -m accelbook.specs.bibliography)")
    for sid in load_sources():
        assert f'<a id="{sid}"></a>' in shipped, sid


def test_claims_page_is_up_to_date():
    from accelbook.economics import claims

    shipped = claims.CLAIMS_PAGE_PATH.read_text(encoding="utf-8")
    assert shipped == claims.render_claims_page(), (
        "docs/claims.md differs from data/claims.toml and the models: run `make claims` "
        "(python -m accelbook.economics.claims)")


def test_bibliography_escapes_markup():
    src = next(iter(load_sources().values()))
    entry = bibliography.render_entry(type(src)("x", "A $5 *bold* [link] a_b", "https://example.org", "2024", "primary"))
    assert r"\$5 \*bold\* \[link\] a\_b" in entry and "<https://example.org>" in entry


def test_claims_name_a_described_article():
    anchors = {a for a, _, _ in bibliography.ARTICLES}
    for c in load_claims():
        found = re.findall(r"docs/bibliography\.md#(article-\d)", c.origin)
        assert found and set(found) <= anchors, (c.id, c.origin)


def test_solutions_are_up_to_date_and_complete():
    shipped = solutions.SOLUTIONS_PATH.read_text(encoding="utf-8")
    assert shipped == solutions.render_solutions(), (
        "instructor/solutions.md differs from the checker: run `make solutions` (python -m accelbook.ui.solutions)")
    for ex_id in EXERCISES:
        assert f'<a id="ex-{ex_id}"></a>' in shipped, f"no solution for exercise {ex_id}"


@pytest.mark.parametrize("value, unit, text", [
    ({"memory"}, "", "`memory`"), ({"b", "a"}, "", "`a` or `b`"), (24, "hops", "24 hops"),
    (760.0, "GiB", "760 GiB"), (295.3428, "FLOP/byte", "295.343 FLOP/byte"), (327680, "bytes", "327,680 bytes"),
])
def test_format_expected(value, unit, text):
    assert solutions.format_expected(value, unit) == text


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(md: Path) -> set[str]:
    text = md.read_text(encoding="utf-8")
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    ids |= {_slug(h) for h in re.findall(r"^#+\s+(.+)$", text, flags=re.M)}
    return ids


def test_links_in_docs_and_instructor_resolve():
    pages = sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "instructor").glob("*.md"))
    assert pages
    bad = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{page.relative_to(ROOT)}: {target} (no such anchor)")
    assert not bad, "\n".join(bad)


def test_glossary_defines_the_course_terms():
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    for term in ("GEMM", "HBM", "TTFT", "TBT", "SLO", "TDP", "MFU", "HFU", "KV cache", "ZeRO", "MoE", "NCCL",
                 "ICI", "OCS", "SRAM", "Roofline", "Arithmetic intensity", "fp8", "MX"):
        assert re.search(rf"^\*\*{re.escape(term)}", text, flags=re.M | re.I), term


def test_licences_present_and_named():
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Attribution 4.0 International" in (ROOT / "LICENSE-TEXT").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Licence" in readme and "(LICENSE)" in readme and "(LICENSE-TEXT)" in readme and "CC BY 4.0" in readme
    with open(ROOT / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    assert project["license"] == "MIT" and set(project["license-files"]) == {"LICENSE", "LICENSE-TEXT"}


# -- the notebooks' scaffolding ------------------------------------------------------------------------------------
# Notebooks that carry the full scaffolding: every notebook of the course.
SCAFFOLDED = ("00_start_here", "01_gpu_vs_tpu", "02_inside_the_chip", "03_interconnects", "04_distributed_training",
              "05_moe_all_to_all", "06_inference_prefill_decode", "07_inference_asics", "08_token_economics_and_hybrid",
              "09_design_your_chip", "10_number_formats", "11_design_spaces_at_scale", "12_capstone")

# Acronyms a notebook must spell out where it first uses them (its headings aside): the acronym and the words
# that must stand within a few words of that first use.
ACRONYMS = {"GEMM": "general matrix multipl", "GEMV": "matrix-vector product", "HBM": "high-bandwidth memory",
            "SRAM": "static RAM", "TTFT": "time to first token", "SLO": "service-level objective",
            "TDP": "thermal design power", "PUE": "power usage effectiveness", "MFU": "model FLOPs utilisation",
            "GPU": "graphics processing unit", "TPU": "tensor processing unit", "LPU": "language processing unit",
            "ICI": "inter-chip interconnect", "NCCL": "collective communications library", "MXU": "matrix unit",
            "FFN": "feed-forward network", "MoE": "mixture-of-experts", "ASIC": "application-specific",
            "LLM": "large-language-model", "NIC": "network interface card", "PE": "processing element"}


def _notebook(name: str) -> tuple[str, list[dict]]:
    import json

    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    for c in cells:
        c["text"] = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
    prose = "\n".join(c["text"] for c in cells if c["cell_type"] == "markdown")
    return prose, cells


@pytest.mark.parametrize("name", SCAFFOLDED)
def test_notebook_cells_have_unique_ids(name):
    # nbformat 4.5 requires a cell id (a missing one is a warning today, an error in later nbformat versions)
    _, cells = _notebook(name)
    ids = [c.get("id") for c in cells]
    assert None not in ids and len(set(ids)) == len(ids), [i for i, c in enumerate(cells) if "id" not in c]


@pytest.mark.parametrize("name", SCAFFOLDED)
def test_notebook_has_the_scaffolding(name):
    prose, cells = _notebook(name)
    for section in ("**Learning objectives.**", "## Fallacies and pitfalls", "## What these models leave out",
                    "## Exercises", "<summary>Hints</summary>", "<summary>Answer", "## References", "## Next",
                    "(../docs/glossary.md)", "(../docs/bibliography.md#"):
        assert section in prose, f"{name}: no {section!r}"
    assert "**Learning objectives.**" in cells[0]["text"], f"{name}: objectives are not at the top"
    assert any("notebook.takeaway(" in c["text"] for c in cells if c["cell_type"] == "code"), name
    # the answers come after the hints, and the next notebook is linked
    assert prose.index("<summary>Hints</summary>") < prose.index("<summary>Answer"), name
    number = int(name[:2])
    nxt = sorted((ROOT / "notebooks").glob(f"{number + 1:02d}_*.ipynb"))
    if nxt:
        assert f"]({nxt[0].name})" in prose.split("## Next", 1)[1], f"{name}: Next does not link {nxt[0].name}"
    # no development talk in the text
    for bad in ("the issue", "issue 1", "the lead", "the articles"):
        assert bad not in prose.lower(), f"{name}: {bad!r} in the text"


@pytest.mark.parametrize("name", SCAFFOLDED)
def test_notebook_predicts_before_each_dashboard_and_asks_five_exercises(name):
    _, cells = _notebook(name)
    ids = re.findall(r'(?:check|predict)\("([^"]+)"', "\n".join(c["text"] for c in cells if c["cell_type"] == "code"))
    assert set(ids) <= set(EXERCISES), set(ids) - set(EXERCISES)
    mine = {i for i in ids if EXERCISES[i].notebook == name[:2]}
    assert len(mine) >= 5, f"{name}: {len(mine)} exercises"
    assert any(EXERCISES[i].model_answer for i in mine), f"{name}: no open what-if with a model answer"
    last = 0
    for k, c in enumerate(cells):
        if c["cell_type"] == "code" and re.search(r"\bshow\(\w+_spec\(\)\)", c["text"]):
            before = [x["text"] for x in cells[last:k]]
            assert any('predict("predict-' in t for t in before), f"{name}: no prediction before cell {k}"
            assert any("**What to look for.**" in t for t in before), f"{name}: no 'What to look for' before cell {k}"
            assert "**The gap.**" in "".join(x["text"] for x in cells[k + 1:k + 4]), f"{name}: no gap after cell {k}"
            last = k + 1


@pytest.mark.parametrize("name", SCAFFOLDED)
def test_notebook_spells_out_acronyms_on_first_use(name):
    prose, _ = _notebook(name)
    body = "\n".join(line for line in prose.splitlines() if not line.lstrip().startswith("#"))
    for acronym, words in ACRONYMS.items():
        m = re.search(rf"(?<![\w-]){re.escape(acronym)}s?(?![\w-])", body)
        if m is None:
            continue
        near = re.sub(r"\s+", " ", body[max(0, m.start() - 160):m.end() + 160]).lower()
        assert words.lower() in near, f"{name}: {acronym} first used without '{words}': ...{near}..."


@pytest.mark.parametrize("name", SCAFFOLDED)
def test_notebook_links_resolve(name):
    prose, _ = _notebook(name)
    page = ROOT / "notebooks" / f"{name}.ipynb"
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", prose):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{target} (no such anchor)")
    assert not bad, f"{name}: " + ", ".join(bad)
