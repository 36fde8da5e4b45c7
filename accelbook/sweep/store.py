"""A sweep on disk: one Parquet file per task, written atomically, and the sweep read back whole or lazily.

Layout of ``out_dir``::

    sweep.json                  what the sweep is: model function, grid fingerprint, block size, tasks
    part-000000.parquet         task 0's rows (configurations [0, block_size))
    part-000001.parquet         ...

A task writes ``part-NNNNNN.parquet.tmp-<random>`` and renames it to its final name (``os.replace``,
atomic on one file system): a file with the final name is always complete, a worker killed while
writing leaves only a temporary file (removed on the next run), and a task run twice (Dask retries a
task whose worker died) writes the same rows under the same name once. A rerun skips every task whose
file exists, so an interrupted sweep redoes only the unfinished tasks.

Reading: the files' schemas are unified (a column missing from a task, say all its configurations
failed, reads as nulls), then read eagerly into pandas (:func:`read`), lazily as a Dask DataFrame with
one partition per task (``read(..., lazy=True)``, for sweeps larger than memory), or as a pyarrow
dataset (:func:`dataset`) to filter and project before anything is loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from .grid import CONFIG_ID, ERROR

MANIFEST = "sweep.json"
PART = "part-{:06d}.parquet"


def part_path(out_dir, task: int) -> Path:
    return Path(out_dir) / PART.format(task)


def write_part(frame: pd.DataFrame, out_dir, task: int) -> Path:
    """Write one task's rows atomically (module docstring)."""
    final = part_path(out_dir, task)
    tmp = final.with_name(f"{final.name}.tmp-{uuid.uuid4().hex}")
    frame = frame.copy()
    frame[ERROR] = frame[ERROR].astype(object).where(frame[ERROR].notna(), None)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.set_column(table.schema.get_field_index(ERROR), ERROR, table[ERROR].cast(pa.string()))
    pq.write_table(table, tmp)
    os.replace(tmp, final)
    return final


def finished(out_dir, n_tasks: int) -> set[int]:
    """Tasks whose file exists."""
    return {k for k in range(n_tasks) if part_path(out_dir, k).exists()}


def clean_temporary(out_dir) -> int:
    """Remove what killed writers left behind; returns how many files."""
    tmp = list(Path(out_dir).glob("part-*.parquet.tmp-*"))
    for p in tmp:
        p.unlink(missing_ok=True)
    return len(tmp)


def open_manifest(out_dir, manifest: dict, overwrite: bool = False) -> dict:
    """Start or resume the sweep in ``out_dir``. A resumed sweep must be the same sweep (function and
    grid); its block size is the recorded one, so the tasks are the same tasks."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / MANIFEST
    if path.exists() and not overwrite:
        old = json.loads(path.read_text())
        for key in ("function", "per", "grid_hash", "n_configs"):
            if old.get(key) != manifest.get(key):
                raise ValueError(f"{out} holds another sweep ({key}: {old.get(key)!r}, now {manifest.get(key)!r}); "
                                 "use another out_dir, or overwrite=True to start again")
        return old
    if overwrite:
        for p in out.glob("part-*.parquet*"):
            p.unlink()
    tmp = path.with_name(f"{MANIFEST}.tmp-{uuid.uuid4().hex}")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, path)
    return manifest


def parts(out_dir) -> list[Path]:
    """The finished task files, in task order."""
    return sorted(Path(out_dir).glob("part-[0-9][0-9][0-9][0-9][0-9][0-9].parquet"))


def schema(out_dir) -> pa.Schema:
    """Every task file's columns together, in first-seen order, ``error`` last (reads only the footers)."""
    files = parts(out_dir)
    if not files:
        raise ValueError(f"no finished tasks in {out_dir}")
    s = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")
    names = [n for n in s.names if n != ERROR] + [ERROR]
    return pa.schema([s.field(n) for n in names]).remove_metadata()


def _conform(table: pa.Table, s: pa.Schema) -> pa.Table:
    cols = [table[f.name].cast(f.type) if f.name in table.column_names else pa.nulls(len(table), f.type) for f in s]
    return pa.Table.from_arrays(cols, schema=s)


def read_part(path, s: pa.Schema) -> pd.DataFrame:
    return _conform(pq.read_table(path), s).to_pandas()


def read(out_dir, lazy: bool = False):
    """The sweep's rows in configuration order: a pandas DataFrame, or with ``lazy=True`` a Dask
    DataFrame with one partition per task (nothing is read until it is computed)."""
    s = schema(out_dir)
    files = parts(out_dir)
    if lazy:
        import dask.dataframe as dd

        meta = s.empty_table().to_pandas()
        return dd.from_map(read_part, [str(f) for f in files], s=s, meta=meta, enforce_metadata=False)
    table = pa.concat_tables([_conform(pq.read_table(f), s) for f in files])
    return table.to_pandas().sort_values(CONFIG_ID, kind="stable", ignore_index=True)


def dataset(out_dir) -> ds.Dataset:
    """The sweep as a pyarrow dataset over its task files (filter and project before loading)."""
    return ds.dataset([str(f) for f in parts(out_dir)], schema=schema(out_dir), format="parquet")


def remove(out_dir) -> None:
    shutil.rmtree(out_dir, ignore_errors=True)
