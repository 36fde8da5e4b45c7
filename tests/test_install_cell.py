"""The notebooks' install cell (tools/install_cell.py): every notebook carries the current one, it does
nothing where the workbook is installed, and in a fresh virtual environment that lacks the package it
makes ``import accelbook`` work, from a checkout (``pip install -e``) and from a git URL (Colab)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import install_cell as ic  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_starts_with_the_install_cell(path):
    """The first code cell is the install cell, with the current code, tagged so the book hides it,
    and no other cell is one; only Markdown (the title and objectives) comes before it."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and ic.TAG in code[0]["metadata"].get("tags", []), \
        f"{path.name}: the first code cell is not the install cell (run tools/install_cell.py)"
    assert "remove-cell" in code[0]["metadata"]["tags"]
    assert _source(code[0]) == ic.cell_source(), f"{path.name}: stale install cell (run tools/install_cell.py)"
    assert not code[0]["outputs"] and code[0]["execution_count"] is None
    assert sum(ic.TAG in c["metadata"].get("tags", []) for c in cells) == 1


def test_the_script_is_idempotent_and_refreshes_a_stale_cell():
    nb = {"cells": [{"cell_type": "markdown", "id": "t", "metadata": {}, "source": ["# Title"]},
                    {"cell_type": "code", "id": "a", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": ["import accelbook"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    once = ic.with_install_cell(nb)
    assert [c["id"] for c in once["cells"]] == ["t", ic.CELL_ID, "a"]
    assert ic.dumps(ic.with_install_cell(once)) == ic.dumps(once)
    # an old version of the cell, moved to the end: replaced by the current one, back in place
    stale = dict(once, cells=[once["cells"][0], once["cells"][2], dict(once["cells"][1], source=["# old"])])
    assert ic.dumps(ic.with_install_cell(stale)) == ic.dumps(once)
    assert ic.TAG in once["cells"][1]["metadata"]["tags"] and "remove-cell" in once["cells"][1]["metadata"]["tags"]


def test_the_cell_does_nothing_where_the_workbook_is_installed(monkeypatch):
    """Here (accelbook installed) it neither runs pip nor prints, and takes well under a millisecond."""
    def no_pip(*args, **kwargs):
        raise AssertionError(f"pip was called: {args}")

    monkeypatch.setattr(subprocess, "run", no_pip)
    code = compile(ic.cell_source(), "install-cell", "exec")
    t0 = time.perf_counter()
    for _ in range(100):
        exec(code, {})
    assert (time.perf_counter() - t0) / 100 < 5e-3


# -- in a fresh virtual environment -----------------------------------------------------------------
def _fresh_venv(where: Path) -> Path:
    """A venv (with pip) without accelbook; the test environment's other packages are visible through a
    .pth line (its own .pth files, among them accelbook's editable-install hook, are not read)."""
    venv.create(where, with_pip=True)
    python = where / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _copy_checkout(dest: Path) -> Path:
    """The files a pip install of the workbook needs, plus one notebook, copied (the real checkout stays
    untouched by the build)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("accelbook", "data"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "LICENSE", "LICENSE-TEXT", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    (dest / "notebooks").mkdir()
    shutil.copy2(NOTEBOOKS[0], dest / "notebooks" / NOTEBOOKS[0].name)
    return dest


def _run_cell_then_import(python: Path, cell: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the cell's code, then (in the same process, as a kernel would) import accelbook and read a chip
    from the catalogue, which must come with the package."""
    script = cell + ("\nimport accelbook\nfrom accelbook.specs.chips import get_chip\n"
                     "print('FILE', accelbook.__file__)\nprint('HBM', get_chip('h100').hbm_bw_bytes_per_s)\n")
    # pip: no dependencies (they are visible already); the build backend comes from pip's usual index
    env = dict(os.environ, PIP_NO_DEPS="1", PYTHONNOUSERSITE="1", NUMBA_CACHE_DIR=str(cwd / ".numba_cache"))
    env.pop("PYTHONPATH", None)
    return subprocess.run([python, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _check(result: subprocess.CompletedProcess) -> str:
    if result.returncode and any(s in result.stderr for s in ("No matching distribution found for setuptools",
                                                              "Could not find a version that satisfies",
                                                              "NewConnectionError", "Temporary failure in name")):
        pytest.skip("pip could not fetch the build backend (setuptools) here: no index reachable")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "HBM 3350000000000.0" in result.stdout, result.stdout  # H100's 3.35 TB/s (data/chips.toml)
    return result.stdout


def test_the_cell_installs_the_workbook_from_a_checkout(tmp_path):
    """A checkout whose Python lacks the package (a fresh Binder, a new environment): ``pip install -e``."""
    python = _fresh_venv(tmp_path / "venv")
    checkout = _copy_checkout(tmp_path / "checkout")
    before = subprocess.run([python, "-c", "import accelbook"], cwd=checkout / "notebooks", capture_output=True)
    assert before.returncode != 0, "the fresh venv already imports accelbook"
    out = _check(_run_cell_then_import(python, ic.cell_source(), checkout / "notebooks"))
    assert f"FILE {checkout / 'accelbook' / '__init__.py'}" in out
    # installed for good: a new process imports it without the cell
    again = subprocess.run([python, "-c", "import accelbook"], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_cell_installs_the_workbook_from_a_git_url_without_a_checkout(tmp_path):
    """Colab: only the notebook is there, so the cell installs from the repository URL (here a local git
    repository made from a copy of the checkout; offline)."""
    python = _fresh_venv(tmp_path / "venv")
    repo = _copy_checkout(tmp_path / "repo")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(git + args, cwd=repo, check=True, capture_output=True)
    content = tmp_path / "content"  # Colab's working folder: no checkout above it
    content.mkdir()
    out = _check(_run_cell_then_import(python, ic.cell_source(repo_url=repo.as_uri()), content))
    assert "site-packages" in out.split("FILE ", 1)[1].splitlines()[0]
