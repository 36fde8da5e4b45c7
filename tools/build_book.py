"""Build the static book: every notebook executed fresh, as HTML pages that need no network (``make book``).

    python tools/build_book.py [--out build/book] [--jobs N] [notebooks/NN_name.ipynb ...]

What it does, in order:

1. Executes each notebook in ``notebooks/`` (in its own kernel, N at a time; default: one per core)
   with ``accelbook.ui.book.enable()`` run first, so each dashboard also displays as static HTML: its
   default view, the chart as inline SVG, and a note on opening the live notebook. The repository's
   notebooks are read, never written.
2. Hides the cells a reader need not see (the convention, also in the README): a code cell is removed
   when it only checks numbers (every statement an ``assert`` or a plain assignment, the last an
   ``assert``, no output, and no name it assigns used by a later cell; comments allowed) or when it is
   tagged ``remove-cell``; a cell tagged ``hide-input`` shows its output without its code.
3. Writes one page per notebook with nbconvert's ``lab`` page (``tools/book_template/book``) with
   nothing fetched from the network: MathJax 3 (SVG output, one file, from the ``django-static-mathjax``
   package) is copied into ``_static/``; require.js, the widget manager and Mermaid are left out.
4. Renders ``docs/glossary.md``, ``docs/bibliography.md``, ``docs/claims.md`` and any other Markdown file a notebook
   links to as pages, rewrites links (``../docs/bibliography.md#id`` -> ``bibliography.html#id``,
   ``NN_name.ipynb`` -> ``NN_name.html``), writes ``index.html`` (the contents) and checks that every
   link inside the book reaches an existing page and anchor.

Open ``build/book/index.html`` from disk, or serve the folder from any static host.
"""

from __future__ import annotations

import argparse
import ast
import html
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from urllib.parse import urlsplit

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TEMPLATE_DIR = Path(__file__).resolve().parent / "book_template"
STATIC_CSS = TEMPLATE_DIR / "book.css"
#: Markdown pages always in the book (more are added when a notebook links to them)
DOC_PAGES = [ROOT / "docs" / "glossary.md", ROOT / "docs" / "bibliography.md", ROOT / "docs" / "claims.md"]
HOOK = "from accelbook.ui import book\nbook.enable()"
CELL_TIMEOUT_S = 600
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
LIVE_NOTE = ('<p class="book-note">A static copy of <code>notebooks/{name}</code>, executed when the book was '
             'built. Dashboards show their default settings; to move the sliders, open '
             '<a href="notebooks/{name}">the notebook</a> in JupyterLab (<code>make lab</code> in the repository).</p>')


# -- 1. execute ------------------------------------------------------------------------------------
def execute(path: str) -> tuple[str, str, float]:
    """Run one notebook top to bottom in a fresh kernel; (name, executed notebook as JSON, seconds)."""
    from nbclient import NotebookClient

    t0 = time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(HOOK, metadata={"tags": ["remove-cell"]}))
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(Path(path).parent)}})
    client.execute()
    return Path(path).name, nbformat.writes(nb), time.perf_counter() - t0


# -- 2. hide and clean -----------------------------------------------------------------------------
def checking_cell(source: str, later: str) -> bool:
    """True for a cell that only checks numbers: every statement an ``assert`` or a plain assignment,
    the last an ``assert``, and no name it assigns read by a later cell (``later``: their code)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    if not body or not isinstance(body[-1], ast.Assert):
        return False
    if not all(isinstance(node, (ast.Assert, ast.Assign, ast.AnnAssign)) for node in body):
        return False
    names = {n.id for node in body if not isinstance(node, ast.Assert) for n in ast.walk(node)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return not any(re.search(rf"\b{re.escape(name)}\b", later) for name in names)


def prepare(nb) -> None:
    """Tag the hidden cells, and replace widget outputs by the HTML the book's kernel gave them."""
    nb.metadata.pop("widgets", None)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for i, cell in enumerate(code):
        tags = cell.metadata.setdefault("tags", [])
        later = "\n".join(c.source for c in code[i + 1:])
        if not cell.get("outputs") and checking_cell(cell.source, later) and "remove-cell" not in tags:
            tags.append("remove-cell")
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_MIME not in data:
                continue
            del data[WIDGET_MIME]
            if "text/html" in data:
                data.pop("text/plain", None)
            else:
                data.clear()
                data["text/html"] = ('<p class="book-note">An interactive widget: open the notebook in '
                                     "JupyterLab to use it.</p>")


def title_of(nb, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, flags=re.M)
            if m:
                return m.group(1).strip()
    return fallback


# -- 3. pages --------------------------------------------------------------------------------------
def exporter():
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    c = Config()
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    c.TagRemovePreprocessor.remove_input_tags = {"hide-input"}
    c.HTMLExporter.exclude_input_prompt = True
    c.HTMLExporter.exclude_output_prompt = True
    return HTMLExporter(config=c, template_name="book", extra_template_basedirs=[str(TEMPLATE_DIR)])


def nav_html(order: list[tuple[str, str]], page: str) -> str:
    """Contents, previous and next links; ``order`` is [(file name, title)] in reading order."""
    names = [n for n, _ in order]
    i = names.index(page) if page in names else None
    links = ['<a href="index.html">Contents</a>']
    if i is not None and i > 0:
        links.append(f'<a href="{order[i - 1][0]}" rel="prev">← {html.escape(order[i - 1][1])}</a>')
    if i is not None and i + 1 < len(order):
        links.append(f'<a href="{order[i + 1][0]}" rel="next">{html.escape(order[i + 1][1])} →</a>')
    links += ['<a href="glossary.html">Glossary</a>', '<a href="bibliography.html">Bibliography</a>']
    return '<nav class="book-nav">' + " · ".join(links) + "</nav>"


def markdown_notebook(text: str, title: str):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    nb.metadata["title"] = title
    return nb


def write_page(exp, nb, out: Path, nav: str, note: str = "") -> None:
    body, _ = exp.from_notebook_node(nb, resources={"book": {"nav": nav, "note": note}})
    out.write_text(body, encoding="utf-8")


# -- 4. links, contents, checks --------------------------------------------------------------------
HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^"]*)("[^>]*>)(.*?)(</a>)', flags=re.S)


def rewrite_links(text: str, source_dir: Path, pages: dict[Path, str]) -> str:
    """Point links to repository files at their pages in the book; a link to a file not in the book
    becomes plain text naming the file (no dead links)."""

    def fix(m):
        href = m.group(2)
        parts = urlsplit(html.unescape(href))
        if parts.scheme or parts.netloc or not parts.path:
            return m.group(0)
        target = (source_dir / parts.path).resolve()
        if target in pages:
            new = pages[target] + (f"#{parts.fragment}" if parts.fragment else "")
            return m.group(1) + html.escape(new) + m.group(3) + m.group(4) + m.group(5)
        if target.is_relative_to(ROOT) and target.exists():
            rel = target.relative_to(ROOT).as_posix()
            return f'<span class="book-repo-file" title="in the repository: {html.escape(rel)}">{m.group(4)}</span>'
        return m.group(0)

    return HREF.sub(fix, text)


def linked_markdown(nb_paths: list[Path]) -> list[Path]:
    """Markdown files of the repository that the notebooks link to (they become pages too)."""
    found = []
    for path in nb_paths:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for href in re.findall(r"\]\(([^)\s#]+\.md)(?:#[^)\s]*)?\)", cell.source):
                target = (path.parent / href).resolve()
                if target.is_file() and target.is_relative_to(ROOT) and target not in found:
                    found.append(target)
    return found


def sections(page_html: str) -> list[tuple[str, str]]:
    """(anchor, text) of a page's second-level headings, for the contents."""
    out = []
    for anchor, inner in re.findall(r'<h2 id="([^"]+)"[^>]*>(.*?)</h2>', page_html, flags=re.S):
        text = re.sub(r"<[^>]+>", "", inner).replace("¶", "").strip()
        if text != "Next":  # every notebook ends with a pointer to the next: no need to list it
            out.append((anchor, html.unescape(text)))
    return out


def contents_markdown(entries, extra) -> str:
    """The index page's text: the notebooks with their sections, then the reference pages."""
    lines = ["# accelbook: the workbook as a book", "",
             "Every notebook of the workbook, executed when this book was built, with its tables and charts. "
             "The dashboards show their default settings; open the notebooks in JupyterLab (`make lab` in the "
             "repository) to move the sliders and run the exercises. The pages need no network.", "",
             "## Notebooks", ""]
    lines.append("<ul class=\"book-toc\">")
    for page, title, secs in entries:
        lines.append(f'<li><a href="{page}">{html.escape(title)}</a>')
        if secs:
            lines.append('<ul>' + "".join(f'<li><a href="{page}#{html.escape(a)}">{html.escape(t)}</a></li>'
                                          for a, t in secs) + "</ul>")
        lines.append("</li>")
    lines += ["</ul>", "", "## Reference", "", "<ul>"]
    lines += [f'<li><a href="{page}">{html.escape(title)}</a></li>' for page, title in extra]
    lines += ["</ul>", ""]
    return "\n".join(lines)


def check_links(out: Path) -> list[str]:
    """Every link between the book's pages reaches an existing file and, if it names one, an anchor."""
    ids = {}
    for page in out.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        ids[page.name] = set(re.findall(r'\bid="([^"]+)"', text)) | set(re.findall(r'\bname="([^"]+)"', text))
    broken = []
    for page in sorted(out.glob("*.html")):
        for href in re.findall(r'<a\b[^>]*?\bhref="([^"]*)"', page.read_text(encoding="utf-8")):
            parts = urlsplit(html.unescape(href))
            if parts.scheme or parts.netloc:
                continue
            name = parts.path or page.name
            if not (out / name).exists():
                broken.append(f"{page.name}: {href} (no such file)")
            elif parts.fragment and name in ids and parts.fragment not in ids[name]:
                broken.append(f"{page.name}: {href} (no such anchor)")
    return broken


# -- driver ----------------------------------------------------------------------------------------
def mathjax_file() -> Path:
    import importlib.resources

    path = Path(str(importlib.resources.files("mathjax"))) / "static" / "mathjax" / "es5" / "tex-svg-full.js"
    if not path.is_file():
        raise SystemExit(f"MathJax not found at {path}: pip install -e '.[book]'")
    return path


def execute_all(nb_paths: list[Path], jobs: int) -> dict:
    """Every notebook executed, ``jobs`` at a time; the first failure stops the build and names its notebook."""
    executed = {}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(execute, str(p)): p.name for p in nb_paths}
        for future in as_completed(futures):
            try:
                name, text, seconds = future.result()
            except Exception as exc:  # noqa: BLE001 - reported with the notebook's name, then the build stops
                pool.shutdown(cancel_futures=True)
                raise SystemExit(f"book: {futures[future]} failed to execute:\n{exc}") from exc
            print(f"book: executed {name} in {seconds:.0f} s", flush=True)
            executed[name] = nbformat.reads(text, as_version=4)
    return executed


def build(out: Path, nb_paths: list[Path], jobs: int) -> None:
    t0 = time.perf_counter()
    if out.exists():
        shutil.rmtree(out)
    (out / "_static" / "mathjax").mkdir(parents=True)
    (out / "notebooks").mkdir()
    shutil.copy(mathjax_file(), out / "_static" / "mathjax" / "tex-svg-full.js")
    shutil.copy(STATIC_CSS, out / "_static" / "book.css")
    doc_paths = DOC_PAGES + [p for p in linked_markdown(nb_paths) if p not in DOC_PAGES]
    pages = {p.resolve(): p.stem + ".html" for p in nb_paths + doc_paths}

    executed = execute_all(nb_paths, jobs)

    exp = exporter()
    order = [(p.stem + ".html", title_of(executed[p.name], p.stem)) for p in nb_paths]
    entries = []
    for p in nb_paths:
        nb = executed[p.name]
        prepare(nb)
        nb.metadata["title"] = title_of(nb, p.stem)
        page = out / (p.stem + ".html")
        write_page(exp, nb, page, nav_html(order, page.name), LIVE_NOTE.format(name=html.escape(p.name)))
        page.write_text(rewrite_links(page.read_text(encoding="utf-8"), p.parent, pages), encoding="utf-8")
        shutil.copy(p, out / "notebooks" / p.name)  # the live version, for download
        entries.append((page.name, nb.metadata["title"], sections(page.read_text(encoding="utf-8"))))

    extra = []
    for d in doc_paths:
        text = d.read_text(encoding="utf-8")
        title = title_of(markdown_notebook(text, ""), d.stem)
        page = out / pages[d.resolve()]
        write_page(exp, markdown_notebook(text, title), page, nav_html(order, page.name))
        page.write_text(rewrite_links(page.read_text(encoding="utf-8"), d.parent, pages), encoding="utf-8")
        extra.append((page.name, title))
    write_page(exp, markdown_notebook(contents_markdown(entries, extra), "accelbook"), out / "index.html",
               nav_html(order, "index.html"))

    broken = check_links(out)
    if broken:
        raise SystemExit("book: broken links inside the book:\n  " + "\n  ".join(broken))
    print(f"book: {len(nb_paths)} notebooks and {len(doc_paths)} reference pages in {out} "
          f"({time.perf_counter() - t0:.0f} s); open {out / 'index.html'}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "book")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("BOOK_JOBS", os.cpu_count() or 1)))
    args = ap.parse_args(argv)
    nb_paths = [p.resolve() for p in (args.notebooks or sorted(NOTEBOOKS.glob("[0-9]*.ipynb")))]
    build(args.out.resolve(), nb_paths, max(1, args.jobs))


if __name__ == "__main__":
    sys.exit(main())
