"""The wheel a user installs (``pip install .``, ``pip install git+…``, Colab's first cell) works
without the source tree.

An editable install reads the checkout, so it hides a sub-package or data file the wheel leaves out
(once, ``accelbook.ui.exercises``: every notebook's first import failed). Here the tracked files are
copied to a temporary folder, a wheel is built from the copy, installed into a fresh virtual
environment, and used from a folder that holds no ``accelbook/``: every module imports, the
catalogue and the validation data load from the installed copy, and notebook 04 runs top to bottom.

The fresh environment sees the project environment's third-party packages (numpy, numba, jupyter,
nbval: a ``.pth`` line naming its site-packages, which does not run that folder's own ``.pth``
files, so the editable install of the checkout stays invisible) and nothing of the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "04_distributed_training.ipynb"


def _tracked_copy(dest: Path) -> Path:
    """The files git tracks (and untracked ones it does not ignore), copied to ``dest/src``."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    src = dest / "src"
    for rel in filter(None, out.split("\0")):
        p = ROOT / rel
        if p.is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, src / rel)
    return src


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh venv with the wheel installed, a working folder, the wheel's file names)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout (the wheel is built from the tracked files)")
    tmp = tmp_path_factory.mktemp("wheel")
    src = _tracked_copy(tmp)
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "--disable-pip-version-check", "-w", str(dist), str(src)], check=True, capture_output=True)
    (wheel,) = dist.glob("accelbook-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "project_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q",
                    "--disable-pip-version-check", str(wheel)], check=True, capture_output=True)
    work = tmp / "work"
    work.mkdir()
    return py, work, zipfile.ZipFile(wheel).namelist()


def _run(py: Path, work: Path, *args, timeout=600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    env["NUMBA_CACHE_DIR"] = str(work / "numba_cache")
    return subprocess.run([str(py), *args], cwd=work, env=env, capture_output=True, text=True, timeout=timeout)


def test_wheel_ships_every_package_and_data_file(installed):
    _, _, names = installed
    packages = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "accelbook").rglob("__init__.py")}
    shipped = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
    assert packages <= shipped, f"the wheel lacks {sorted(packages - shipped)}"
    data = {f"accelbook/data/{p.relative_to(ROOT / 'data')}" for p in (ROOT / "data").rglob("*") if p.is_file()}
    assert data <= set(names), f"the wheel lacks {sorted(data - set(names))}"


def test_installed_wheel_imports_every_module_without_the_source_tree(installed):
    py, work, _ = installed
    code = (
        "import importlib, pkgutil, accelbook, accelbook.specs.loader as L\n"
        "root = accelbook.__path__[0]\n"
        "assert 'site-packages' in root, root\n"
        "mods = [m.name for m in pkgutil.walk_packages(accelbook.__path__, 'accelbook.')]\n"
        "for m in mods: importlib.import_module(m)\n"
        "from accelbook.specs.chips import get_chip\n"
        "from accelbook.ui.exercises import check\n"
        "from accelbook.ui.exercises.predictions import gap\n"
        "assert gap('predict-v5p-fp8-gain').startswith('**The gap.**')  # gaps.json ships as package data\n"
        "assert str(L.DATA_DIR).startswith(root), L.DATA_DIR\n"
        "print(len(mods), get_chip('h100').hbm_bw_bytes_per_s)\n"
    )
    r = _run(py, work, "-c", code)
    assert r.returncode == 0, r.stderr[-3000:]
    n, bw = r.stdout.split()
    assert int(n) > 100 and float(bw) == 3.35e12


def test_installed_wheel_runs_notebook_04(installed):
    py, work, _ = installed
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, work / NOTEBOOK)
    r = _run(py, work, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
             "--nbval-cell-timeout=300", "--rootdir", str(work), NOTEBOOK)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert " passed" in r.stdout and "failed" not in r.stdout
