"""Put the install cell at the top of every notebook: it installs the workbook where it is missing.

    python tools/install_cell.py [notebooks/NN_name.ipynb ...]     (default: every notebook in notebooks/)

A notebook opened on its own (Colab, which fetches only the ``.ipynb``), in a fresh Binder whose build
failed to install the package, or in a checkout whose Python lacks it, cannot ``import accelbook``.
The cell, the first code cell of each notebook (after the title and objectives), fixes that:

- the package is importable (``make lab``, Binder after ``postBuild``, nbval, the book): it looks the
  module up with ``importlib.util.find_spec`` (no import, microseconds) and does nothing, silently;
- the notebook sits in a checkout (a folder above it holds ``pyproject.toml`` and ``accelbook/``):
  ``pip install -e <checkout>``, and the checkout goes on ``sys.path`` at once (an editable install's
  ``.pth`` file is read only when Python starts, so without it the kernel would need a restart);
- anywhere else (Colab): ``pip install git+REPO_URL``, the repository's default branch; the
  catalogue (``data/*.toml``) ships inside the package, so no clone is left behind.

The cell is tagged ``remove-cell`` (the book hides it, like the book's own set-up cell; see
``tools/build_book.py``) and ``install-cell`` (how this script finds it again). Running the script again
replaces the cell's code with the current template and moves it back to the top: it is idempotent.
``tests/test_install_cell.py`` checks every notebook carries the current cell and runs it in a fresh
virtual environment.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
#: where Colab (or any Python without a checkout) installs the workbook from: the one place to change it
REPO_URL = "https://github.com/accelbook/accelbook"
TAG = "install-cell"
TAGS = ["remove-cell", TAG]
CELL_ID = "install-accelbook"

TEMPLATE = '''\
# Installs the workbook where it is missing (Colab, a fresh environment); silent and instant when it is there.
import importlib
import importlib.util
import pathlib
import subprocess
import sys

REPO_URL = "{repo_url}"
if importlib.util.find_spec("accelbook") is None:
    checkout = next((p for p in (pathlib.Path.cwd(), *pathlib.Path.cwd().parents)
                     if (p / "pyproject.toml").is_file() and (p / "accelbook" / "__init__.py").is_file()), None)
    print("Installing accelbook from", checkout or REPO_URL, "(a minute or two) ...")
    target = ["-e", str(checkout)] if checkout else [f"git+{{REPO_URL}}"]
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *target], check=True)
    if checkout:
        sys.path.insert(0, str(checkout))  # an editable install's .pth is read only when Python starts
    importlib.invalidate_caches()
    print("Installed. If the next cell fails to import, restart the kernel (Colab: Runtime > Restart session).")'''


def cell_source(repo_url: str = REPO_URL) -> str:
    """The install cell's code, installing from ``repo_url`` when no checkout is found."""
    return TEMPLATE.format(repo_url=repo_url)


def _lines(text: str) -> list[str]:
    """Source as notebooks store it: a list of lines, each but the last ending in a newline."""
    return text.splitlines(keepends=True)


def is_install_cell(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and TAG in cell.get("metadata", {}).get("tags", [])


def with_install_cell(nb: dict, repo_url: str = REPO_URL) -> dict:
    """The notebook with exactly one install cell, holding the current code, just before its first other
    code cell (after the title and objectives). Other cells are kept as they are."""
    cells = [c for c in nb["cells"] if not is_install_cell(c)]
    cell = {"cell_type": "code", "execution_count": None, "id": CELL_ID,
            "metadata": {"tags": list(TAGS)}, "outputs": [], "source": _lines(cell_source(repo_url))}
    first_code = next((i for i, c in enumerate(cells) if c.get("cell_type") == "code"), len(cells))
    return dict(nb, cells=cells[:first_code] + [cell] + cells[first_code:])


def dumps(nb: dict) -> str:
    """JSON the way Jupyter and nbformat write notebooks (one-space indent, sorted keys, UTF-8)."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def update(path: Path, repo_url: str = REPO_URL) -> bool:
    """Insert or refresh the install cell of the notebook at ``path``; True if the file changed."""
    text = path.read_text(encoding="utf-8")
    new = dumps(with_install_cell(json.loads(text), repo_url))
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    parser.add_argument("--repo-url", default=REPO_URL, help=f"where to pip install from off a checkout ({REPO_URL})")
    args = parser.parse_args(argv)
    for path in args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb")):
        print(("updated  " if update(path, args.repo_url) else "current  ") + str(path))


if __name__ == "__main__":
    main()
