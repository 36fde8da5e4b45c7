"""The measurement kit's file: a chip entry that ``ab.register`` loads, and the timings beside it, as TOML.

One file holds, per measured device:

* ``[sources.<id>]``: the run itself as a source (kind ``"primary"``: a first-hand measurement), dated.
* ``[<chip id>]``: a chip entry in the schema of ``data/chips.toml``. Its peaks are the fastest GEMM of the
  sweep at each catalogue precision (``peak_dense_fp32_tflop_s`` on a CPU; bf16, fp16, fp8 on a GPU) and its
  memory bandwidth is STREAM Triad's (``hbm_bw_gb_s``: on a CPU that is DRAM, not HBM; the note says so). They
  are measured figures, not a vendor's peaks: a roofline drawn from them is the one this machine reached.
* ``[measured.<chip id>]``: how and where (``kind = "measured"``, date, host, CPU model, library versions,
  repeats) and every timing, each an array of inline tables in SI units::

      gemm      = [{ m, k, n, dtype, seconds, flop_s, fraction_of_peak }, ...]  fraction of the fastest at dtype
      stream    = [{ kernel, n, itemsize, bytes_moved, seconds, bytes_per_s }, ...]
      allreduce = [{ message_bytes, ranks, seconds, algbw_bytes_per_s, busbw_bytes_per_s }, ...]
      skipped   = ["one sentence per part that did not run", ...]

The catalogue's measured-efficiency files (``data/matmul_efficiency.toml``, ``data/hbm_bandwidth.toml``) hold
published bf16/fp8 GEMMs and HBM Triads against a datasheet peak; a kit run has no datasheet peak, so its
fractions are of its own fastest GEMM and live here. The chip loader skips ``[measured]`` after checking that
each table names a chip of the file (:data:`accelbook.specs.chips.MEASURED_TABLE`); :func:`read_measurements`
reads it back with exact key checks.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from accelbook.specs.chips import MEASURED_TABLE, PRECISIONS
from accelbook.specs.loader import CatalogueError, check_keys, read_table_file

from .results import AllReduceTiming, GemmTiming, Measurement, StreamTiming

_ROWS = {"gemm": (GemmTiming, ("fraction_of_peak",)), "stream": (StreamTiming, ()),
         "allreduce": (AllReduceTiming, ())}
_PROVENANCE_REQUIRED = {"kind", "date", "host", "backend", "device"}


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"a measured value must be finite, got {v!r}")
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    return k if k.replace("-", "").replace("_", "").isalnum() else _toml_value(k)


def source_id(m: Measurement) -> str:
    """The id of the run's own source: ``<chip id>-<date>``."""
    return f"{m.chip_id}-{m.provenance['date']}"


def chip_entry(m: Measurement) -> dict[str, Any]:
    """The ``[<chip id>]`` table: name, vendor, kind, status, notes, measured peaks and memory bandwidth."""
    sid, p = source_id(m), m.provenance
    how = f"median of {p.get('repeats', '?')} after {p.get('warmup', '?')} warm-up"
    entry: dict[str, Any] = {
        "name": m.name, "vendor": m.vendor, "kind": "cpu" if m.device == "cpu" else "gpu", "status": "shipping",
        "notes": (f"Measured by accelbook measure ({m.backend}) on {p['host']}, {p['date']}: peaks are the fastest "
                  "GEMM of the sweep, not a vendor's peak; "
                  + ("the memory bandwidth (hbm_bw) is STREAM Triad on DRAM (a CPU has no HBM)."
                     if m.device == "cpu" else "the memory bandwidth is STREAM Triad on the GPU's memory.")),
    }
    for dtype in (d for d in PRECISIONS if d in m.dtypes):
        best = max((g for g in m.gemm if g.dtype == dtype), key=lambda g: g.flop_s)
        entry[f"peak_dense_{dtype}_tflop_s"] = {
            "value": best.flop_s / 1e12, "src": sid,
            "note": f"fastest {dtype} GEMM of the sweep, M x K x N = {best.m} x {best.k} x {best.n}, {how}"}
    triad = max((s for s in m.stream if s.kernel == "triad"), key=lambda s: s.bytes_per_s)
    entry["hbm_bw_gb_s"] = {
        "value": triad.bytes_per_s / 1e9, "src": sid,
        "note": (f"{'DRAM, not HBM: ' if m.device == 'cpu' else ''}STREAM Triad a = b + q*c over {triad.n:,} "
                 f"elements of {triad.itemsize} bytes per array, 3 arrays counted as STREAM does (McCalpin), {how}")}
    return entry


def measured_entry(m: Measurement) -> dict[str, Any]:
    """The ``[measured.<chip id>]`` table: provenance and every timing (schema in the module docstring)."""
    rows: dict[str, list] = {"gemm": [], "stream": [], "allreduce": []}
    for g in m.gemm:
        rows["gemm"].append({**vars(g), "fraction_of_peak": g.flop_s / m.peak_flop_s(g.dtype)})
    rows["stream"] = [dict(vars(s)) for s in m.stream]
    rows["allreduce"] = [dict(vars(a)) for a in m.allreduce]
    return {**m.provenance, "kind": "measured", "device": m.device, "skipped": list(m.skipped), **rows}


def to_toml(measurements) -> str:
    """The TOML text of one or more :class:`Measurement` (sources, chip entries, ``[measured]`` tables)."""
    ms = list(measurements)
    lines = ["# Written by accelbook measure (accelbook.measure). Measured, not published: every figure is this",
             "# machine's, on the date below. Load it with ab.register(path); schema: accelbook/measure/writer.py.", ""]
    for m in ms:
        p = m.provenance
        lines += [f"[sources.{_key(source_id(m))}]",
                  f"title = {_toml_value(_title(m))}",
                  'url = ""', f"date = {_toml_value(p['date'])}", 'kind = "primary"', ""]
    for m in ms:
        lines.append(f"[{_key(m.chip_id)}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in chip_entry(m).items()] + [""]
    for m in ms:
        lines.append(f"[{MEASURED_TABLE}.{_key(m.chip_id)}]")
        for k, v in measured_entry(m).items():
            if isinstance(v, list) and v and isinstance(v[0], dict):
                lines.append(f"{k} = [\n" + "".join(f"  {_toml_value(r)},\n" for r in v) + "]")
            else:
                lines.append(f"{k} = {_toml_value(v)}")
        lines.append("")
    return "\n".join(lines)


def _title(m: Measurement) -> str:
    p = m.provenance
    libs = ", ".join(f"{k} {p[k]}" for k in ("numpy", "blas", "torch", "cuda", "rocm", "cupy") if k in p)
    return f"accelbook measure: {m.device} on {p['host']} ({p.get('cpu_model', '?')}), {p['date']}; {libs}"


def write(measurements, path: Path | str) -> Path:
    """Write :func:`to_toml` of ``measurements`` to ``path`` (parents created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_toml(measurements), encoding="utf-8")
    return path


def _row(path, where: str, raw: Any, kind: str):
    cls, extra = _ROWS[kind]
    fields = list(cls.__dataclass_fields__)
    if not isinstance(raw, dict):
        raise CatalogueError(path, where, None, f"each {kind} row must be an inline table")
    check_keys(path, where, raw, required=set(fields), optional=set(extra))
    for k in fields:
        v = raw[k]
        if k in ("kernel", "dtype"):
            if not isinstance(v, str):
                raise CatalogueError(path, where, k, f"must be a string, got {v!r}")
        elif isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise CatalogueError(path, where, k, f"must be a finite number > 0, got {v!r}")
    return cls(**{k: raw[k] for k in fields})


def read_measurements(path: Path | str) -> dict[str, Measurement]:
    """The ``[measured.<id>]`` tables of a kit file as :class:`Measurement` objects, by chip id, checked
    (exact keys, positive finite numbers); a :class:`~accelbook.specs.loader.CatalogueError` names the key."""
    raw = read_table_file(path)
    out = {}
    for cid, e in raw.get(MEASURED_TABLE, {}).items():
        where = f"{MEASURED_TABLE}.{cid}"
        chip = raw.get(cid)
        if not isinstance(chip, dict) or not isinstance(e, dict):
            raise CatalogueError(path, where, None, "must name a chip entry of the same file")
        missing = sorted((_PROVENANCE_REQUIRED | {"gemm", "stream"}) - e.keys())
        if missing:
            raise CatalogueError(path, where, missing[0], "required key is missing")
        rows = {kind: tuple(_row(path, f"{where}.{kind}[{i}]", r, kind) for i, r in enumerate(e.get(kind, [])))
                for kind in _ROWS}
        skipped = e.get("skipped", [])
        if not isinstance(skipped, list) or not all(isinstance(s, str) for s in skipped):
            raise CatalogueError(path, where, "skipped", "must be a list of strings")
        prov = {k: v for k, v in e.items() if k not in _ROWS and k != "skipped"}
        out[cid] = Measurement(cid, str(chip.get("name", cid)), str(chip.get("vendor", "")), str(e["backend"]),
                               str(e["device"]), prov, rows["gemm"], rows["stream"], rows["allreduce"], tuple(skipped))
    return out
