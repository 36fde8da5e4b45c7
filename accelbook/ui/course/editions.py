"""Two editions of the notebooks from one source, and the gaps a prediction reveals.

The notebooks in ``notebooks/`` are the source. Two tags mark what an edition keeps:

- ``answer``: a markdown cell holding the folded ``<details><summary>Answer N</summary>…</details>`` blocks of an
  exercise list (with its hints), or a code cell that prints worked solutions (``hand.solutions``);
- ``gap``: the explanation of a prediction ("**The gap.**"), folded under the dashboard.

The **instructor edition** is the source as it is. The **student edition** cuts every Answer block out of the
``answer`` cells (the hints stay), drops ``answer`` code cells and ``gap`` cells, and clears every output (a
student runs the notebook; a stored output could show an answer). A prediction's gap is not lost: the
``predict`` cell shows it once the prediction is recorded (:data:`GAPS_PATH`, generated here from the gap cells,
shipped with the package). ``tests/test_editions.py`` builds the student edition and finds no answer in it.

    python -m accelbook.ui.course.editions student build/student        (make student)
    python -m accelbook.ui.course.editions instructor build/instructor  (make instructor)
    python -m accelbook.ui.course.editions gaps                         (rewrite gaps.json)
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import shutil
import sys
from pathlib import Path

from accelbook.files import read_json
from accelbook.ui.prose import GIVEN, MARK

REPO_ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
GAPS_PATH = Path(__file__).resolve().parents[1] / "exercises" / "gaps.json"
EDITIONS = ("student", "instructor")

ANSWER_BLOCK = re.compile(r"<details>\s*<summary>\s*(?:Answer|Solution|Worked solution)[^<]*</summary>.*?</details>\s*",
                          re.S | re.I)
_PREDICT_CALL = re.compile(r"\bpredict\(\s*[\"'](?P<id>predict-[a-z0-9\-]+)[\"']")
_GAP_FOLD = re.compile(r"^\s*<details>\s*<summary>[^<]*</summary>\s*(?P<body>.*?)\s*</details>\s*$", re.S)


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def notebooks(directory: Path = NOTEBOOK_DIR) -> list[Path]:
    paths = sorted(directory.glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise ValueError(f"no notebooks (NN_name.ipynb) in {directory}")
    return paths


def read_notebook(path: Path) -> dict:
    """A notebook's JSON (accelbook.files: a missing or broken file is a ValueError naming it)."""
    nb = read_json(path, what="notebook")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError(f"{path}: not a notebook (no list of cells)")
    return nb


def _clear_outputs(cell: dict) -> dict:
    if cell.get("cell_type") == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    return cell


def student_cells(nb: dict) -> list[dict]:
    """The student edition's cells: Answer blocks cut, answer code and gap cells dropped, outputs cleared."""
    out = []
    for cell in nb.get("cells", []):
        tags = _tags(cell)
        if "gap" in tags:
            continue
        cell = copy.deepcopy(cell)
        if "answer" in tags:
            if cell.get("cell_type") != "markdown":
                continue
            # a blank line where a block was: Markdown ends an HTML block (the hints' <details>) only at one
            text = re.sub(r"\n{3,}", "\n\n", ANSWER_BLOCK.sub("\n\n", _source(cell))).strip()
            if not text:
                continue
            cell["source"] = text + "\n"
            cell["metadata"]["tags"] = [t for t in tags if t != "answer"]
        out.append(_clear_outputs(cell))
    return out


def edition(nb: dict, which: str) -> dict:
    """``nb`` as the ``which`` edition ("student" or "instructor") has it."""
    if which not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, not {which!r}")
    out = copy.deepcopy(nb)
    if which == "student":
        out["cells"] = student_cells(nb)
        out.setdefault("metadata", {})["accelbook_edition"] = "student"
    else:
        out.setdefault("metadata", {})["accelbook_edition"] = "instructor"
    return out


def write_edition(which: str, out_dir: Path, src_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Write every notebook of ``src_dir`` as the ``which`` edition into ``out_dir`` (emptied first). The
    instructor edition also carries ``instructor/`` (guide, solutions, problems, exam bank)."""
    if which not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, not {which!r}")
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    (out_dir / "notebooks").mkdir(parents=True)
    written = []
    for path in notebooks(src_dir):
        target = out_dir / "notebooks" / path.name
        text = json.dumps(edition(read_notebook(path), which), indent=1, ensure_ascii=False) + "\n"
        target.write_text(text, encoding="utf-8")
        written.append(target)
    if which == "instructor":
        shutil.copytree(REPO_ROOT / "instructor", out_dir / "instructor")
    return written


def gap_text(cell_source: str) -> str:
    """A gap cell's explanation as the reveal shows it: the fold removed, fact marks reduced to their values."""
    m = _GAP_FOLD.match(cell_source)
    body = m.group("body") if m else cell_source
    body = MARK.sub(lambda f: f.group("text"), body)
    return GIVEN.sub(lambda f: f.group("text"), body).strip()


def gaps(directory: Path = NOTEBOOK_DIR) -> dict[str, str]:
    """Each prediction's gap, by exercise id: the gap cell that follows the ``predict`` cell of that id."""
    out: dict[str, str] = {}
    for path in notebooks(directory):
        current = None
        for cell in read_notebook(path).get("cells", []):
            src = _source(cell)
            if cell.get("cell_type") == "code":
                ids = _PREDICT_CALL.findall(src)
                current = ids[-1] if ids else current
            elif "gap" in _tags(cell):
                if current is None:
                    raise ValueError(f"{path.name}: a gap cell with no predict() cell before it")
                if current in out:
                    raise ValueError(f"{path.name}: two gap cells for {current}")
                out[current] = gap_text(src)
    return out


def render_gaps() -> str:
    return json.dumps(gaps(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m accelbook.ui.course.editions", description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=[*EDITIONS, "gaps"])
    ap.add_argument("out", nargs="?", type=Path, help="output folder of an edition (build/student)")
    args = ap.parse_args(argv)
    if args.what == "gaps":
        GAPS_PATH.write_text(render_gaps(), encoding="utf-8")
        print(f"wrote {GAPS_PATH}")
        return 0
    if args.out is None:
        ap.error(f"the {args.what} edition needs an output folder")
    written = write_edition(args.what, args.out)
    print(f"wrote the {args.what} edition: {len(written)} notebooks in {args.out / 'notebooks'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
