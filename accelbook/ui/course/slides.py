"""One offline HTML slide deck per notebook, generated from the notebook files (``make slides``).

A deck has a title slide with the learning objectives (the first markdown cell), a slide per ``## `` section
(its heading and first paragraph), the key formula (the first ``$$…$$`` block, with the worked number that follows
it when there is one), the prediction question(s) ("**Predict, then look.**"), the takeaways
(``notebook.takeaway(...)`` calls, literal text only) and the charts. Charts come from executed notebooks when
``--executed DIR`` names a folder of executed ``NN_name.ipynb`` files (SVG/PNG outputs) or the static book's
``NN_name.html`` pages (their inline ``<svg class="marks">`` charts); otherwise a slide says the chart is in the
notebook. Each deck is one self-contained HTML file: inline CSS and a little inline JS for arrow-key and click
navigation, nothing loaded from the network.

    python -m accelbook.ui.course.slides build/slides [--executed build/book]
"""

from __future__ import annotations

import argparse
import ast
import html
import re
import sys
from pathlib import Path

from accelbook.ui.course.editions import read_notebook
from accelbook.ui.prose import MARK

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "notebooks"
_CSS = """body{margin:0;font-family:system-ui,sans-serif;background:#fafafa}
.slide{display:none;box-sizing:border-box;width:100vw;height:100vh;padding:6vh 8vw;overflow:auto}
.slide.active{display:block}h1{font-size:2.2em}h2{font-size:1.8em;color:#1f4e79}
.slide p,.slide li{font-size:1.25em;line-height:1.45}pre{font-size:1.1em;white-space:pre-wrap;background:#eef}
.chart svg,.chart img{max-width:100%;max-height:75vh}#n{position:fixed;bottom:1em;right:2em;color:#666}"""
_JS = """(function(){var s=document.querySelectorAll('.slide'),i=0,n=document.getElementById('n');
function go(k){i=Math.max(0,Math.min(s.length-1,k));s.forEach(function(e,j){e.classList.toggle('active',j===i);});
n.textContent=(i+1)+' / '+s.length;location.hash=String(i+1);}
document.addEventListener('keydown',function(e){
 if(e.key==='ArrowRight'||e.key===' '||e.key==='PageDown'){go(i+1);e.preventDefault();}
 else if(e.key==='ArrowLeft'||e.key==='PageUp'){go(i-1);e.preventDefault();}
 else if(e.key==='Home'){go(0);}else if(e.key==='End'){go(s.length-1);}});
document.addEventListener('click',function(e){if(e.target.closest('a'))return;
 go(e.clientX<window.innerWidth/3?i-1:i+1);});
var h=parseInt(location.hash.slice(1),10);go(isNaN(h)?0:h-1);})();"""


def _clean(text: str) -> str:
    return MARK.sub(lambda m: m.group("text"), text).strip()


def _md_html(text: str) -> str:
    """A little Markdown (bold, italics, code, links as their text, lists) as HTML; maths left for reading."""
    out, items = [], []
    for line in _clean(text).splitlines():
        s = html.escape(line.strip())
        s = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", s)
        s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
        s = re.sub(r"(?<!\*)\*([^*]+)\*", r"<i>\1</i>", s)
        s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
        m = re.match(r"^(?:\d+\.|[-*])\s+(.*)", s)
        if m:
            items.append(m.group(1))
        elif items and s:
            items[-1] += " " + s
        elif s:
            out.append(s)
    body = "<p>" + " ".join(out) + "</p>" if out else ""
    return body + ("<ol>" + "".join(f"<li>{x}</li>" for x in items) + "</ol>" if items else "")


def _takeaways(code: str) -> list[str]:
    """The literal text of each ``notebook.takeaway(...)`` call (f-string parts that need the kernel dropped)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "takeaway" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                found.append("".join(v.value if isinstance(v, ast.Constant) else "…" for v in arg.values))
    return found


def _formula(markdown: list[str]) -> tuple[str, str] | None:
    """The first display-maths block and the 'Worked number' sentence near it (same or next cell), if any."""
    for k, text in enumerate(markdown):
        m = re.search(r"\$\$(.+?)\$\$", text, re.S)
        if m:
            near = " ".join(markdown[k:k + 2])
            w = re.search(r"Worked number[^\n]*(?:\n(?!\n)[^\n]*)*", near)
            return m.group(1).strip(), (w.group(0) if w else "")
    return None


def _charts(executed: Path | None, stem: str) -> list[str]:
    """Chart markup from an executed notebook or a book page, if ``executed`` holds one for ``stem``."""
    if executed is None:
        return []
    nb, page = executed / f"{stem}.ipynb", executed / f"{stem}.html"
    if nb.exists():
        charts = []
        for cell in read_notebook(nb)["cells"]:
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if "image/svg+xml" in data:
                    charts.append("".join(data["image/svg+xml"]))
                elif "image/png" in data:
                    charts.append(f'<img alt="chart" src="data:image/png;base64,{"".join(data["image/png"]).strip()}">')
        return charts
    if page.exists():
        return re.findall(r'<svg[^>]*class="marks".*?</svg>', page.read_text(encoding="utf-8"), re.S)
    return []


def slides_of(nb_path: Path, executed: Path | None = None) -> list[str]:
    """The slides of one notebook's deck, each an HTML fragment."""
    cells = read_notebook(nb_path)["cells"]
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    first = _clean(markdown[0])
    title, _, rest = first.partition("\n")
    slides = [f"<h1>{html.escape(title.lstrip('# '))}</h1>{_md_html(rest.split(chr(10) + chr(10) + 'Terms')[0])}"]
    formula = _formula(markdown)
    for text in markdown[1:]:
        for m in re.finditer(r"^## (.+)\n+((?:[^\n]+\n?)+)?", text, re.M):
            para = m.group(2) or ""
            slides.append(f"<h2>{html.escape(m.group(1).strip())}</h2>{_md_html(para)}")
            if formula and formula[0] in text:
                worked = f"<p>{html.escape(_clean(formula[1]))}</p>" if formula[1] else ""
                slides.append(f"<h2>Key formula</h2><pre>$$ {html.escape(formula[0])} $$</pre>{worked}")
                formula = None
        if "**Predict, then look.**" in text:
            slides.append(f"<h2>Predict, then look</h2>{_md_html(text)}")
    slides += [f"<h2>Takeaway</h2><p>{html.escape(t)}</p>" for c in code for t in _takeaways(c)]
    charts = _charts(executed, nb_path.stem)
    slides += [f'<h2>Chart {k + 1}</h2><div class="chart">{c}</div>' for k, c in enumerate(charts)]
    if not charts:
        slides.append(f"<h2>Charts</h2><p>The charts and dashboards are in the notebook: open "
                      f"<code>notebooks/{html.escape(nb_path.name)}</code> and run it.</p>")
    return slides


def deck_html(nb_path: Path, executed: Path | None = None) -> str:
    """One self-contained HTML deck for a notebook."""
    slides = slides_of(nb_path, executed)
    body = "\n".join(f'<section class="slide">{s}</section>' for s in slides)
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(nb_path.stem)}</title>'
            f"<style>{_CSS}</style></head><body>{body}<div id=\"n\"></div><script>{_JS}</script></body></html>\n")


def build(out: Path, executed: Path | None = None, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Write ``NN_name.html`` per notebook and an ``index.html`` listing them; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written, rows = [], []
    for nb in sorted(notebooks.glob("[0-9]*.ipynb")):
        page = out / f"{nb.stem}.html"
        page.write_text(deck_html(nb, executed), encoding="utf-8")
        written.append(page)
        rows.append(f'<li><a href="{page.name}">{html.escape(nb.stem)}</a></li>')
    index = out / "index.html"
    index.write_text('<!doctype html><html><head><meta charset="utf-8"><title>accelbook slides</title></head>'
                     f"<body><h1>accelbook slides</h1><ul>{''.join(rows)}</ul>"
                     "<p>Arrow keys or a click move between slides.</p></body></html>\n", encoding="utf-8")
    return written + [index]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, nargs="?", default=ROOT / "build" / "slides")
    ap.add_argument("--executed", type=Path, default=None, help="executed notebooks or the static book's pages")
    args = ap.parse_args(argv)
    paths = build(args.out, args.executed)
    print(f"slides: {len(paths) - 1} decks in {args.out}")


if __name__ == "__main__":
    sys.exit(main())
