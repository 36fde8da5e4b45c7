"""Open every page of the static book (``make book``) from disk in headless Chromium, as a reader would.

For each page: no console error, no failed load and no uncaught exception; nothing requested outside
file:// and localhost (every request is intercepted, and any other is refused and fails the test);
MathJax has typeset the maths (SVG output present where the page has maths, no raw ``$$`` and no TeX
error left); every chart is an ``<svg>`` of non-zero size, and each dashboard of the notebook is
there as its static default view with a chart. A full-page screenshot of each page is saved under
``artifacts/book/``.

The book is read from ``build/book/`` (``ACCELBOOK_BOOK_DIR`` overrides it); ``make test`` builds it
first. If it is missing, the test builds it (``tools/build_book.py``, a few minutes).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from legibility import LEGIBILITY_JS

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK = Path(os.environ.get("ACCELBOOK_BOOK_DIR", REPO_ROOT / "build" / "book"))
ARTIFACTS = REPO_ROOT / "artifacts" / "book"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("[0-9]*.ipynb"))
#: the pages every book has, and any other the build made (pages for Markdown files the notebooks link to)
PAGES = sorted({"index.html", "glossary.html", "bibliography.html"} | {p.stem + ".html" for p in NOTEBOOKS}
               | {p.name for p in BOOK.glob("*.html")})
#: keep in step with accelbook/ui/book.py
STATIC_DASHBOARD_CSS = ".accelbook-static-dashboard"
#: a chart: an SVG drawn by vl-convert (Altair/Vega-Lite output), inline in the page
CHART_JS = """() => Array.from(document.querySelectorAll('svg.marks')).map(s => {
    const r = s.getBoundingClientRect(); return [r.width, r.height]; })"""
PAGE_TIMEOUT_MS = 60_000


def _dashboards_in(nb_path: Path) -> int:
    """How many dashboards a notebook shows (``show(...)`` calls in its code cells)."""
    nb = nbformat.read(nb_path, as_version=4)
    return sum(len(re.findall(r"(?<![\w.])show\(", c.source)) for c in nb.cells if c.cell_type == "code")


def _has_maths(nb_path: Path) -> bool:
    nb = nbformat.read(nb_path, as_version=4)
    return any(c.cell_type == "markdown" and re.search(r"\$[^$\s][^$]*\$", c.source) for c in nb.cells)


def _local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("file", "data", "blob", "about"):
        return True
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname in ("localhost", "127.0.0.1", "::1")


@pytest.fixture(scope="module")
def book() -> Path:
    if not (BOOK / "index.html").exists():
        subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "build_book.py"), "--out", str(BOOK)],
                       check=True, cwd=REPO_ROOT)
    return BOOK


@pytest.fixture(scope="module")
def browser():
    from playwright import sync_api

    chromium = shutil.which(CHROMIUM)
    if chromium is None:
        pytest.fail(f"no Chromium at {CHROMIUM!r}: run `make browser`, or set CHROMIUM=/path/to/chromium")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    """A page that refuses (and records) every request leaving file:// and localhost, and records errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.outside, pg.errors = [], []

    def route(r):
        if _local(r.request.url):
            r.continue_()
        else:
            pg.outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    pg.on("console", lambda m: pg.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(f"uncaught: {e}"))
    pg.on("requestfailed", lambda r: pg.errors.append(f"failed to load {r.url}: {r.failure}"))
    try:
        yield pg
    finally:
        context.close()


@pytest.mark.parametrize("name", PAGES)
def test_book_page_renders_offline(book, page, name):
    path = book / name
    assert path.exists(), f"{name} missing from the book in {book}"
    page.goto(path.as_uri(), wait_until="load", timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                           timeout=PAGE_TIMEOUT_MS)
    page.evaluate("() => MathJax.startup.promise")  # resolves once the page is typeset
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / (Path(name).stem + ".png")), full_page=True)

    assert not page.outside, f"{name} requested outside localhost: {page.outside}"
    assert not page.errors, f"{name}: " + "\n".join(page.errors)

    text = page.evaluate("() => document.body.innerText")
    assert "$$" not in text, f"{name}: raw $$ left (maths not typeset)"
    assert page.locator("mjx-merror, [data-mjx-error]").count() == 0, f"{name}: a TeX error in the maths"

    charts = page.evaluate(CHART_JS)
    assert all(w > 0 and h > 0 for w, h in charts), f"{name}: a chart of zero size: {charts}"
    illegible = [c for c in page.evaluate(LEGIBILITY_JS) if c["clipped"] or c["overlapping"]]
    assert not illegible, f"{name}: text clipped at a chart's edge or drawn over other text: {illegible}"

    nb_path = REPO_ROOT / "notebooks" / (Path(name).stem + ".ipynb")
    if not nb_path.exists():
        return
    if _has_maths(nb_path):
        assert page.locator("mjx-container svg").count() > 0, f"{name}: maths in the notebook, none typeset"
    dashboards = page.locator(STATIC_DASHBOARD_CSS)
    assert dashboards.count() == _dashboards_in(nb_path), f"{name}: not every dashboard is in the page"
    for i in range(dashboards.count()):
        d = dashboards.nth(i)
        assert d.locator("svg.marks").count() >= 1, f"{name}: dashboard {i + 1} has no chart"
        assert d.locator(".accelbook-error, .accelbook-bug").count() == 0, f"{name}: dashboard {i + 1} shows an error"
        # a long scenario string or setting wraps inside the box instead of running past its right edge
        width = d.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert width[0] <= width[1] + 1, f"{name}: dashboard {i + 1} runs past its box ({width[0]} > {width[1]} px)"
    assert page.locator("svg.marks").count() >= dashboards.count()


def test_legibility_check_catches_clipped_and_overlapping_text(page):
    """The check above on a hand-made chart: one label past the right edge, two labels drawn over each other,
    one label hidden the way Vega thins axis labels (opacity 0), and one clear label."""
    page.set_content("""<svg class="marks" width="200" height="100" style="font: 12px sans-serif">
        <text x="150" y="20">cut off at the edge</text>
        <text x="10" y="50">first label</text><text x="14" y="52">second label</text>
        <text x="10" y="50" opacity="0">thinned</text>
        <text x="10" y="90">clear</text></svg>""")
    (chart,) = page.evaluate(LEGIBILITY_JS)
    assert chart["clipped"] == ["cut off at the edge"]
    assert chart["overlapping"] == ["first label / second label"]


@pytest.fixture(scope="module")
def slides(book, tmp_path_factory) -> Path:
    """The slide decks, built from the notebooks with the book's charts (what `make slides` writes)."""
    from accelbook.ui.course import slides as S

    out = tmp_path_factory.mktemp("slides")
    S.build(out, executed=book)
    return out


@pytest.mark.parametrize("name", ["index.html", *[p.stem + ".html" for p in NOTEBOOKS]])
def test_slide_deck_opens_offline_and_steps_with_the_keys(slides, page, name):
    page.goto((slides / name).as_uri(), wait_until="load", timeout=PAGE_TIMEOUT_MS)
    assert not page.outside, f"slides {name} requested outside localhost: {page.outside}"
    assert not page.errors, f"slides {name}: " + "\n".join(page.errors)
    if name == "index.html":
        assert page.locator("a").count() == len(NOTEBOOKS)
        return
    n = page.locator("section.slide").count()
    assert n >= 4 and page.locator("section.slide.active").count() == 1
    assert page.inner_text("#n") == f"1 / {n}"
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#n") == f"2 / {n}" and page.locator("section.slide.active h2").count() == 1
    page.keyboard.press("End")
    assert page.inner_text("#n") == f"{n} / {n}"
    # the deck's charts are the book's, drawn at a visible size on their slide (the capstone's page has none:
    # its deck then says where the charts are)
    charts = page.locator("section.slide .chart svg")
    if 'class="marks"' not in (BOOK / name).read_text(encoding="utf-8"):
        assert charts.count() == 0 and "in the notebook" in page.locator("section.slide").last.text_content()
        return
    assert charts.count() >= 1, f"slides {name}: no chart from the book"
    page.evaluate("() => document.querySelectorAll('section.slide').forEach(s => s.classList.remove('active'))")
    chart_slide = page.locator("section.slide").filter(has=page.locator(".chart svg")).first
    chart_slide.evaluate("e => e.classList.add('active')")
    box = chart_slide.locator(".chart svg").first.bounding_box()
    assert box and box["width"] > 0 and box["height"] > 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"slides_{Path(name).stem}.png"))
