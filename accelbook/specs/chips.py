"""Accelerator specs: the :class:`Chip` dataclass, the chip catalogue and forgiving look-up.

A chip is described by what bounds its speed: dense peak FLOP/s per precision, memory capacity
and bandwidth (HBM, or on-chip SRAM for chips without HBM such as Groq's LPU and Cerebras' WSE),
chip-to-chip links, the scale-up domain, the matrix-unit shape, power and price. Values are SI
(FLOP/s, bytes, bytes/s, s, W, USD/s) and each carries a :class:`~accelbook.specs.loader.Provenance`.
:data:`MEMORY_RESERVE` is the share of HBM every model keeps free for the runtime.

Data: ``data/chips.toml`` (schema in its header); sources in ``data/sources.toml``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import pandas as pd

from accelbook.checks import instance, one_of, positive, real, whole

from .catalogue import Kind
from .fabrics import fabrics
from .loader import (
    STATUSES,
    UNIT_LIMITS,
    CatalogueError,
    Provenance,
    Source,
    check_keys,
    checked_path,
    parse_quantity,
    read_table_file,
    split_unit,
    user_sources,
)

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "fp4")
KINDS = ("gpu", "tpu", "asic", "wafer", "cpu")   # cpu: a computer the measurement kit (accelbook.measure) timed
#: a chips file's optional ``[measured.<chip id>]`` tables: the timings ``accelbook measure`` wrote beside the
#: chip it measured (schema and reader: :mod:`accelbook.measure.writer`); the chip loader only checks that each
#: names a chip of the same file
MEASURED_TABLE = "measured"

#: share of HBM kept free for the runtime, communication buffers and fragmentation. An ESTIMATE
#: (PyTorch and NCCL keep a few GB of an 80 GB card for themselves; vLLM's default
#: ``gpu_memory_utilization`` is 0.9). Training and inference both start from this value.
MEMORY_RESERVE = 0.10


def usable_memory_bytes(capacity_bytes: float, reserve: float = MEMORY_RESERVE) -> float:
    """Bytes a model may fill: ``capacity · (1 - reserve)``."""
    return capacity_bytes * (1 - reserve)

# base key -> units it may be written in; the SI field it fills
_QUANTITIES: dict[str, tuple[tuple[str, ...], str]] = {
    "hbm": (("gb", "gib", "mib", "tb"), "hbm_bytes"),
    "hbm_bw": (("tb_s", "gb_s", "gib_s"), "hbm_bw_bytes_per_s"),
    "sram": (("mb", "mib", "gb", "gib"), "sram_bytes"),
    "sram_bw": (("tb_s", "pb_s"), "sram_bw_bytes_per_s"),
    "link_bw": (("gb_s", "tb_s", "gib_s"), "link_bw_bytes_per_s"),
    "link_latency": (("us", "ns"), "link_latency_s"),
    "scale_up": (("chips",), "scale_up_chips"),
    "tdp": (("w", "kw"), "tdp_w"),
    "price": (("usd_per_hour",), "price_usd_per_s"),
    "compute_units": (("count",), "compute_units"),
}
for _p in PRECISIONS:
    _QUANTITIES[f"peak_dense_{_p}"] = (("tflop_s", "pflop_s", "top_s", "pop_s"), f"peak_dense_{_p}")
    _QUANTITIES[f"peak_sparse_{_p}"] = (("tflop_s", "pflop_s", "top_s", "pop_s"), f"peak_sparse_{_p}")
_BASES = {base: units for base, (units, _) in _QUANTITIES.items()}
_QUANTITY_KEYS = {f"{base}_{unit}" for base, units in _BASES.items() for unit in units}
_REQUIRED = {"name", "vendor", "kind", "status"}
_OPTIONAL = {"aliases", "year", "notes", "what_if", "matrix_unit", "scale_up_fabric"}


@dataclass(frozen=True)
class Chip:
    """One accelerator (per chip; per GPU for multi-GPU boards). All fields SI; None = not published.

    Attributes
    ----------
    peak_dense_flop_s : mapping precision -> FLOP/s (dense, no structured sparsity)
    hbm_bytes, hbm_bw_bytes_per_s : off-chip memory capacity (bytes) and bandwidth (bytes/s)
    sram_bytes, sram_bw_bytes_per_s : on-chip SRAM (bytes) and its bandwidth (bytes/s)
    link_bw_bytes_per_s : chip-to-chip bandwidth per chip, in ``link_bw_direction``
    link_latency_s : one step of a collective on the chip's links (s): the chip's own figure, or the step
        latency of its ``scale_up_fabric`` (``data/fabrics.toml``, which the training clusters and the
        network presets read too, so a link has one description)
    scale_up_fabric : id of the fabric in ``data/fabrics.toml`` the chip's scale-up links are (None: not there)
    scale_up_chips : chips in one scale-up domain (NVLink domain, ICI pod)
    price_usd_per_s : price per chip-second (USD/s); ``price_usd_per_hour`` for humans
    provenance : field name -> :class:`Provenance`
    """

    id: str
    name: str
    vendor: str
    kind: str
    status: str
    year: int | None = None
    aliases: tuple[str, ...] = ()
    notes: str = ""
    what_if: bool = False
    peak_dense_flop_s: Mapping[str, float] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    peak_sparse_flop_s: Mapping[str, float] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    hbm_bytes: float | None = None
    hbm_bw_bytes_per_s: float | None = None
    sram_bytes: float | None = None
    sram_bw_bytes_per_s: float | None = None
    link_bw_bytes_per_s: float | None = None
    link_bw_direction: str | None = None
    link_latency_s: float | None = None
    scale_up_chips: int | None = None
    scale_up_fabric: str | None = None
    compute_units: int | None = None   # SMs on a GPU (what thread blocks are scheduled on)
    tdp_w: float | None = None
    price_usd_per_s: float | None = None
    mxu_rows: int | None = None
    mxu_cols: int | None = None
    mxu_count: int | None = None
    provenance: Mapping[str, Provenance] = dataclasses.field(
        default_factory=lambda: MappingProxyType({}), repr=False, compare=False
    )

    # -- derived quantities -------------------------------------------------------------------
    def peak_flop_s(self, precision: str = "bf16") -> float:
        """Dense peak FLOP/s at ``precision``; a clear error if the vendor published none."""
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
        try:
            return self.peak_dense_flop_s[precision]
        except KeyError:
            have = ", ".join(self.peak_dense_flop_s) or "none"
            raise ValueError(
                f"{self.name} has no published dense {precision} peak (published: {have})"
            ) from None

    @property
    def precisions(self) -> tuple[str, ...]:
        return tuple(p for p in PRECISIONS if p in self.peak_dense_flop_s)

    @property
    def memory_bw_bytes_per_s(self) -> float | None:
        """Bandwidth of the memory that holds the weights: HBM, or SRAM on chips without HBM."""
        return self.hbm_bw_bytes_per_s if self.hbm_bw_bytes_per_s is not None else self.sram_bw_bytes_per_s

    @property
    def memory_bytes(self) -> float | None:
        """Capacity of the memory that holds the weights: HBM, or SRAM on chips without HBM."""
        return self.hbm_bytes if self.hbm_bytes is not None else self.sram_bytes

    @property
    def memory_kind(self) -> str:
        return "HBM" if self.hbm_bw_bytes_per_s is not None else "SRAM"

    def ridge_point(self, precision: str = "bf16") -> float:
        """Arithmetic intensity (FLOP/byte) where the roofline turns: I* = P / B."""
        bw = self.memory_bw_bytes_per_s
        if bw is None:
            raise ValueError(f"{self.name} has no published memory bandwidth")
        return self.peak_flop_s(precision) / bw

    @property
    def price_usd_per_hour(self) -> float | None:
        return None if self.price_usd_per_s is None else self.price_usd_per_s * 3600.0

    def source_of(self, field: str) -> Provenance | None:
        return self.provenance.get(field)

    def what_if_variant(self, label: str = "what-if", **changes: Any) -> "Chip":
        """A copy with some fields changed, labelled as a what-if (e.g. ``hbm_bw_bytes_per_s=2*bw``).

        Changing a peak: pass ``peak_dense_flop_s={"bf16": 2e15, ...}``. Every changed number is
        re-sourced to a what-if source, so a made-up value is never cited to a datasheet.
        """
        fields = {f.name for f in dataclasses.fields(self)}
        bad = set(changes) - fields
        if bad:
            raise ValueError(f"Chip has no field(s) {sorted(bad)}")
        numeric = {f for f in fields if f.endswith(("_bytes", "_per_s", "_w", "_s", "_chips"))
                   and not f.startswith("peak_")}
        for k, v in changes.items():
            if k in numeric and v is not None:
                positive(k, v)
        prov = dict(self.provenance)
        source = Source(f"what-if:{label}", f"what-if: {label}", "", "", "what-if")
        for key in ("peak_dense_flop_s", "peak_sparse_flop_s"):
            if key in changes:
                peaks = dict(changes[key])
                for prec, v in peaks.items():
                    if prec not in PRECISIONS:
                        raise ValueError(f"unknown precision {prec!r} in {key}")
                    positive(f"{key}[{prec!r}]", v)
                    prov[f"{key.removesuffix('_flop_s')}_{prec}"] = Provenance(source, "")
                changes[key] = MappingProxyType(peaks)
        if "scale_up_chips" in changes and changes["scale_up_chips"] is not None:
            if changes["scale_up_chips"] != int(changes["scale_up_chips"]):
                raise ValueError("scale_up_chips must be a whole number of chips")
        for k in changes:
            if k in numeric:
                prov[k] = Provenance(source, "")
        return check_chip(dataclasses.replace(
            self, id=f"{self.id}+{label}", name=f"{self.name} ({label})", what_if=True,
            provenance=MappingProxyType(prov), **changes,
        ))


def parse_chip(path: Path | str, cid: str, entry: Mapping[str, Any], sources: Mapping[str, Source]) -> Chip:
    """Validate one ``[id]`` table of a chips file and build the :class:`Chip`."""
    quantity_keys = {k for k in entry if split_unit(k, _BASES)}
    check_keys(path, cid, {k: v for k, v in entry.items() if k not in quantity_keys},
                required=_REQUIRED, optional=_OPTIONAL | _QUANTITY_KEYS)  # the latter only for "did you mean"
    seen_bases: dict[str, str] = {}
    kw: dict[str, Any] = {}
    prov: dict[str, Provenance] = {}
    dense: dict[str, float] = {}
    sparse: dict[str, float] = {}
    for key in sorted(quantity_keys):
        base, unit = split_unit(key, _BASES)
        if base in seen_bases:
            raise CatalogueError(path, cid, key, f"given twice (also as '{seen_bases[base]}')")
        seen_bases[base] = key
        q = parse_quantity(path, cid, key, entry[key], unit, sources)
        field = _QUANTITIES[base][1]
        if base.startswith("peak_dense_"):
            dense[base.removeprefix("peak_dense_")] = q.value
        elif base.startswith("peak_sparse_"):
            sparse[base.removeprefix("peak_sparse_")] = q.value
        elif base in ("scale_up", "compute_units"):
            if q.value != int(q.value) or q.value < 1:
                raise CatalogueError(path, cid, key, f"must be a whole number of chips >= 1, got {q.value}")
            kw[field] = int(q.value)
        else:
            kw[field] = q.value
        if base == "link_bw":
            if q.provenance.direction is None:
                raise CatalogueError(path, cid, key, "say direction = \"one-way\" or \"bidirectional\"")
            kw["link_bw_direction"] = q.provenance.direction
        prov[field] = q.provenance
    for key in ("name", "vendor", "notes"):
        if key in entry and (not isinstance(entry[key], str) or (key != "notes" and not entry[key].strip())):
            raise CatalogueError(path, cid, key, f"must be a non-empty string, got {entry[key]!r}")
    if not isinstance(entry.get("what_if", False), bool):
        raise CatalogueError(path, cid, "what_if", f"must be true or false (a TOML boolean), got {entry['what_if']!r}")
    if entry["status"] not in STATUSES:
        raise CatalogueError(path, cid, "status", f"must be one of {STATUSES}, got {entry['status']!r}")
    if entry["kind"] not in KINDS:
        raise CatalogueError(path, cid, "kind", f"must be one of {KINDS}, got {entry['kind']!r}")
    if "matrix_unit" in entry:
        mu = entry["matrix_unit"]
        if not isinstance(mu, dict):
            raise CatalogueError(path, cid, "matrix_unit", "must be a table {rows, cols, count, src}")
        check_keys(path, cid + ".matrix_unit", mu, required={"rows", "cols", "src"}, optional={"count", "note"})
        for k in ("rows", "cols", "count"):
            if k in mu and (isinstance(mu[k], bool) or not isinstance(mu[k], int) or mu[k] < 1):
                raise CatalogueError(path, cid, f"matrix_unit.{k}", f"must be a whole number >= 1, got {mu[k]!r}")
        q = parse_quantity(path, cid, "matrix_unit", {"value": mu["rows"], "src": mu["src"],
                                                       **({"note": mu["note"]} if "note" in mu else {})},
                           "count", sources)
        kw.update(mxu_rows=mu["rows"], mxu_cols=mu["cols"], mxu_count=mu.get("count"))
        prov["matrix_unit"] = q.provenance
    if not dense and not entry.get("what_if", False):
        pass  # allowed: e.g. Cerebras, whose peak is published only in an ambiguous form
    if "hbm_bw_bytes_per_s" not in kw and "sram_bw_bytes_per_s" not in kw:
        raise CatalogueError(path, cid, "hbm_bw_tb_s", "a chip needs a memory bandwidth (hbm_bw_* or sram_bw_*)")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise CatalogueError(path, cid, "aliases", "must be a list of strings")
    if "scale_up_fabric" in entry:
        kw["scale_up_fabric"] = fabric_link(path, cid, entry["scale_up_fabric"], kw, prov)
    year = entry.get("year")
    if year is not None and (not isinstance(year, int) or not 1990 < year < 2100):
        raise CatalogueError(path, cid, "year", f"must be a year like 2024, got {year!r}")
    chip = Chip(
        id=cid, name=str(entry["name"]), vendor=str(entry["vendor"]), kind=entry["kind"],
        status=entry["status"], year=year, aliases=tuple(aliases), notes=str(entry.get("notes", "")),
        what_if=entry.get("what_if", False),
        peak_dense_flop_s=MappingProxyType(dense), peak_sparse_flop_s=MappingProxyType(sparse),
        provenance=MappingProxyType(prov), **kw,
    )
    try:
        return check_chip(chip)
    except (TypeError, ValueError) as err:
        raise CatalogueError(path, cid, None, str(err)) from None


def check_chip(chip: Any) -> Chip:
    """``chip`` if it passes the chips file's checks on the object (SI fields): one validation for the
    loader, ``ab.register`` and what-if copies. Names non-empty; kind and status known; every number
    finite, ``> 0`` and at most :data:`~accelbook.specs.loader.UNIT_LIMITS` of the units its key is written
    in; counts whole; a memory bandwidth. Else a ``ValueError``/``TypeError`` naming the field."""
    instance("chip", chip, Chip)
    for key in ("id", "name", "vendor"):
        if not isinstance(getattr(chip, key), str) or not getattr(chip, key).strip():
            raise ValueError(f"chip {key} must be a non-empty string, got {getattr(chip, key)!r}")
    one_of("kind", chip.kind, KINDS)
    one_of("status", chip.status, STATUSES)
    if not isinstance(chip.what_if, bool):
        raise TypeError(f"what_if must be True or False, got {chip.what_if!r}")
    if chip.year is not None and (isinstance(chip.year, bool) or not isinstance(chip.year, int)
                                  or not 1990 < chip.year < 2100):
        raise ValueError(f"year must be a year like 2024, got {chip.year!r}")
    for key in ("peak_dense_flop_s", "peak_sparse_flop_s"):
        instance(key, getattr(chip, key), Mapping)
        for prec, v in getattr(chip, key).items():
            one_of(f"{key} precision", prec, PRECISIONS)
            real(f"{key}[{prec!r}]", v, 0.0, UNIT_LIMITS["tflop_s"], lo_open=True)
    for base, (units, field) in _QUANTITIES.items():
        v = getattr(chip, field, None)
        if v is None or base.startswith("peak_"):
            continue
        if base in ("scale_up", "compute_units"):
            v = whole(field, v)
        real(field, v, 0.0, UNIT_LIMITS[units[0]], lo_open=True)
    for field in ("mxu_rows", "mxu_cols", "mxu_count"):
        if getattr(chip, field) is not None:
            whole(field, getattr(chip, field))
    if chip.memory_bw_bytes_per_s is None:
        raise ValueError(f"chip {chip.id!r} needs a memory bandwidth (hbm_bw_bytes_per_s or sram_bw_bytes_per_s)")
    return chip


def fabric_link(path, cid: str, fid: Any, kw: dict, prov: dict) -> str:
    """The checked fabric id of a chip's ``scale_up_fabric``; fills ``link_latency_s`` (and its provenance)
    from the fabric's step latency, which a chip that names its fabric may not state again."""
    fabs = fabrics()
    if not isinstance(fid, str) or fid not in fabs:
        raise CatalogueError(path, cid, "scale_up_fabric", f"must be a fabric id of data/fabrics.toml ({', '.join(fabs)}), "
                                                           f"got {fid!r}")
    if "link_latency_s" in kw:
        raise CatalogueError(path, cid, "link_latency_us", f"given twice: the chip names scale_up_fabric = {fid!r}, "
                                                           "whose step latency it takes")
    kw["link_latency_s"] = fabs[fid]["hop_latency_s"]
    prov["link_latency_s"] = fabs[fid]["hop_latency_s_provenance"]
    return fid


def load_chips(path: Path | str, sources: Mapping[str, Source] | None = None) -> tuple[Chip, ...]:
    """Load a chips TOML file (the package's own or a user's) into :class:`Chip` objects.

    A user file may define its own sources in a ``[sources.<id>]`` table (same keys as
    ``data/sources.toml``); they are added to the package's sources.
    """
    path = checked_path(path)
    raw = read_table_file(path)
    sources = user_sources(path, raw, sources)
    for mid, timings in raw.pop(MEASURED_TABLE, {}).items():
        if not isinstance(timings, dict) or mid not in raw:
            raise CatalogueError(path, f"{MEASURED_TABLE}.{mid}", None,
                                 "a [measured.<id>] table must name a chip entry of the same file")
    return tuple(parse_chip(path, cid, entry, sources) for cid, entry in raw.items())


#: the chip catalogue: data/chips.toml, the registered chips (``ab.register``), a call's extra files
CHIPS = Kind("chip", "chips.toml", load_chips, registrable=True)


def all_chips(*extra_files: str | Path) -> tuple[Chip, ...]:
    """Every chip of the catalogue (plus those in ``extra_files``) as :class:`Chip` objects."""
    return CHIPS.all(*extra_files)


def get_chip(name: str, *extra_files: str | Path) -> Chip:
    """Find a chip by id, name or alias, forgivingly: ``"h100"``, ``"H100 SXM"``, ``"tpu-v5p"``.

    ``extra_files``: the user's own chips TOML files (same schema); their entries win.

    Raises
    ------
    UnknownNameError
        (a KeyError and ValueError) listing the closest names.
    """
    return CHIPS.get(name, *extra_files)


def base_id(chip: Chip) -> str:
    """The catalogue id a what-if variant was made from ("h100+what-if" -> "h100")."""
    return chip.id.split("+")[0].rstrip("*")


def chip_row(c: Chip) -> dict[str, Any]:
    """One chip as a flat dict of SI columns (used by :func:`chips`)."""
    row: dict[str, Any] = {
        "id": c.id, "name": c.name, "vendor": c.vendor, "kind": c.kind, "status": c.status,
        "year": c.year, "what_if": c.what_if,
    }
    for p in PRECISIONS:
        row[f"peak_{p}_flop_s"] = c.peak_dense_flop_s.get(p)
    row.update(
        hbm_bytes=c.hbm_bytes, hbm_bw_bytes_per_s=c.hbm_bw_bytes_per_s, sram_bytes=c.sram_bytes,
        sram_bw_bytes_per_s=c.sram_bw_bytes_per_s, memory_kind=c.memory_kind,
        memory_bw_bytes_per_s=c.memory_bw_bytes_per_s,
        ridge_bf16_flop_per_byte=(c.ridge_point("bf16") if "bf16" in c.peak_dense_flop_s else None),
        link_bw_bytes_per_s=c.link_bw_bytes_per_s, link_bw_direction=c.link_bw_direction,
        link_latency_s=c.link_latency_s, scale_up_chips=c.scale_up_chips,
        matrix_unit=(f"{c.mxu_count or ''}{'×' if c.mxu_count else ''}{c.mxu_rows}x{c.mxu_cols}"
                     if c.mxu_rows else None),
        tdp_w=c.tdp_w, price_usd_per_hour=c.price_usd_per_hour,
        price_provider=(c.provenance["price_usd_per_s"].provider if "price_usd_per_s" in c.provenance else None),
        price_date=(c.provenance["price_usd_per_s"].date if "price_usd_per_s" in c.provenance else None),
        n_sources=len({p.source.id for p in c.provenance.values()}),
        sources="; ".join(sorted({p.source.id for p in c.provenance.values()})),
        disagreements=sum(len(p.alternatives) for p in c.provenance.values()),
    )
    return row


def chips(*extra_files: str | Path) -> pd.DataFrame:
    """The chip catalogue, one row per chip, SI columns whose names carry the unit."""
    return pd.DataFrame([chip_row(c) for c in all_chips(*extra_files)])


def provenance_table(chip: Chip | str) -> pd.DataFrame:
    """Every number of one chip with its source, date, kind, note and disagreeing values."""
    c = get_chip(chip) if isinstance(chip, str) else chip
    rows = []
    for field, p in c.provenance.items():
        value = _field_value(c, field)
        rows.append({
            "field": field, "value": _display(field, value), "value_si": value, "source": p.source.title, "url": p.source.url,
            "date": p.date, "kind": p.kind, "note": p.note, "direction": p.direction,
            "disagrees": "; ".join(f"{_display(field, v)} ({s.id}{': ' + n if n else ''})" for v, s, n in p.alternatives),
        })
    return pd.DataFrame(rows)


def summary_table(df: pd.DataFrame | None = None, precision: str = "bf16") -> pd.DataFrame:
    """The catalogue in the units people read (TFLOP/s, GB, TB/s, USD/h); blanks = not published."""
    df = chips() if df is None else df
    col = f"peak_{precision}_flop_s"
    return pd.DataFrame({
        "chip": df["name"], "status": df["status"],
        f"{precision} TFLOP/s": df[col] / 1e12,
        "memory": df["memory_kind"],
        "memory GB": df["hbm_bytes"].fillna(df["sram_bytes"]) / 1e9,
        "memory TB/s": df["memory_bw_bytes_per_s"] / 1e12,
        "ridge FLOP/B": df[col] / df["memory_bw_bytes_per_s"],
        "link GB/s": df["link_bw_bytes_per_s"] / 1e9,
        "link dir.": df["link_bw_direction"],
        "TDP W": df["tdp_w"],
        "USD/h": df["price_usd_per_hour"],
    }).reset_index(drop=True)


_DISPLAY_UNITS = (  # field prefix -> (factor, unit) for people
    ("peak_", 1e12, "TFLOP/s"), ("hbm_bw", 1e12, "TB/s"), ("sram_bw", 1e12, "TB/s"), ("link_bw", 1e9, "GB/s"),
    ("hbm_bytes", 1e9, "GB"), ("sram_bytes", 1e6, "MB"), ("link_latency", 1e-6, "µs"), ("tdp", 1, "W"),
    ("price", 1 / 3600, "USD/h"), ("scale_up", 1, "chips"),
)


def _display(field: str, value) -> str:
    if not isinstance(value, (int, float)):
        return str(value)
    for prefix, factor, unit in _DISPLAY_UNITS:
        if field.startswith(prefix):
            return f"{value / factor:,.4g} {unit}"
    return f"{value:.4g}"


def disagreements(*extra_files: str | Path) -> pd.DataFrame:
    """Every number for which published sources disagree: the value used, the others, the spread.

    ``spread`` is (largest - smallest) / value used, over all published values of that number.
    """
    rows = []
    for c in all_chips(*extra_files):
        for field, p in c.provenance.items():
            if not p.alternatives:
                continue
            used = _field_value(c, field)
            values = [used] + [v for v, _, _ in p.alternatives]
            rows.append({
                "chip": c.id, "field": field, "used": _display(field, used), "used_source": p.source.id,
                "others": "; ".join(f"{_display(field, v)} ({s.id}{': ' + n if n else ''})" for v, s, n in p.alternatives),
                "spread": (max(values) - min(values)) / used,
            })
    return pd.DataFrame(rows).sort_values("spread", ascending=False, ignore_index=True)


def _field_value(c: Chip, field: str):
    if field.startswith("peak_dense_"):
        return c.peak_dense_flop_s[field.removeprefix("peak_dense_")]
    if field.startswith("peak_sparse_"):
        return c.peak_sparse_flop_s[field.removeprefix("peak_sparse_")]
    if field == "matrix_unit":
        return f"{c.mxu_rows}x{c.mxu_cols}"
    return getattr(c, field)
