"""Number formats as data: the bit layouts of ``data/number_formats.toml`` and the published accuracy
results of ``data/quantisation_results.toml``.

This module reads and checks the definitions only (bits, bias, what the largest exponent code means,
block size, which scale); :mod:`accelbook.chip.number_formats` computes every property from them by
formula. A float format is ``(-1)^s · 1.m · 2^(e - bias)``; a block format stores ``block_size``
elements and one shared scale; an integer format is two's complement.

Sources: IEEE 754-2019 (fp16, fp32), Google's bfloat16 note, NVIDIA's TF32 note, the OCP 8-bit floating
point specification (E4M3, E5M2), the OCP Microscaling (MX) specification v1.0 (FP6, FP4, E8M0, blocks of
32) and NVIDIA's NVFP4 description (blocks of 16, E4M3 scale, FP32 tensor scale).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from .chips import PRECISIONS
from .loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    Source,
    check_keys,
    fuzzy_key,
    load_sources,
    lookup,
    parse_quantity,
    read_table_file,
)

FAMILIES = ("float", "int", "block")
#: what the largest exponent code of a float format means (see the header of data/number_formats.toml)
SPECIALS = ("ieee", "nan-only", "nan-code", "none")
PHASES = ("pre-training", "post-training quantisation", "quantisation-aware distillation")

_COMMON = {"name", "family"}
_OPTIONAL = {"note", "chip_precision"}
_FAMILY_KEYS = {
    "float": ({"exponent_bits", "mantissa_bits", "bias", "signed", "specials", "subnormals"}, set()),
    "int": ({"bits", "signed"}, set()),
    "block": ({"element", "scale", "block_size"}, {"tensor_scale"}),
}


@dataclass(frozen=True)
class FormatSpec:
    """One format's definition, as the standard gives it (no derived property: see
    :mod:`accelbook.chip.number_formats`). Bit counts are ints; ``None`` where the family has none."""

    id: str
    name: str
    family: str                      # "float", "int" or "block"
    exponent_bits: int | None = None
    mantissa_bits: int | None = None
    bias: int | None = None
    signed: bool = True
    specials: str | None = None      # one of SPECIALS (floats)
    subnormals: bool = False
    bits: int | None = None          # integer formats
    element: str | None = None       # block formats: ids of other entries
    scale: str | None = None
    tensor_scale: str | None = None
    block_size: int | None = None
    chip_precision: str | None = None
    note: str = ""
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)


def _whole(path, fid, key, raw, sources, *, allow_zero=False) -> tuple[int, Provenance]:
    q = parse_quantity(path, fid, key, raw, "count", sources, allow_zero=allow_zero)
    if not float(q.value).is_integer():
        raise CatalogueError(path, fid, key, f"must be a whole number, got {q.value}")
    return int(q.value), q.provenance


def _flag(path, fid, key, entry) -> bool:
    value = entry[key]
    if not isinstance(value, bool):
        raise CatalogueError(path, fid, key, f"must be true or false, got {value!r}")
    return value


def parse_format(path, fid: str, entry: Mapping[str, Any], sources: Mapping[str, Source]) -> FormatSpec:
    """Validate one ``[id]`` table of a formats file (references to other entries are checked by
    :func:`load_formats`, which sees the whole file)."""
    family = entry.get("family")
    if family not in FAMILIES:
        raise CatalogueError(path, fid, "family", f"must be one of {FAMILIES}, got {family!r}")
    required, optional = _FAMILY_KEYS[family]
    check_keys(path, fid, entry, required=_COMMON | required, optional=_OPTIONAL | optional)
    cp = entry.get("chip_precision")
    if cp is not None and cp not in PRECISIONS:
        raise CatalogueError(path, fid, "chip_precision", f"must be one of {PRECISIONS}, got {cp!r}")
    kw: dict[str, Any] = {"id": fid, "name": str(entry["name"]), "family": family, "chip_precision": cp,
                          "note": str(entry.get("note", ""))}
    prov: dict[str, Provenance] = {}
    if family == "float":
        for key in ("exponent_bits", "mantissa_bits", "bias"):
            kw[key], prov[key] = _whole(path, fid, key, entry[key], sources, allow_zero=key == "mantissa_bits")
        if entry["specials"] not in SPECIALS:
            raise CatalogueError(path, fid, "specials", f"must be one of {SPECIALS}, got {entry['specials']!r}")
        kw.update(specials=entry["specials"], signed=_flag(path, fid, "signed", entry),
                  subnormals=_flag(path, fid, "subnormals", entry))
    elif family == "int":
        kw["bits"], prov["bits"] = _whole(path, fid, "bits", entry["bits"], sources)
        kw["signed"] = _flag(path, fid, "signed", entry)
    else:
        kw["block_size"], prov["block_size"] = _whole(path, fid, "block_size", entry["block_size"], sources)
        for key in ("element", "scale", "tensor_scale"):
            if key in entry and not isinstance(entry[key], str):
                raise CatalogueError(path, fid, key, f"must name another entry of this file, got {entry[key]!r}")
            kw[key] = entry.get(key)
    return FormatSpec(**kw, provenance=MappingProxyType(prov))


@functools.lru_cache(maxsize=4)
def load_formats(path: Path | str | None = None) -> Mapping[str, FormatSpec]:
    """Read ``number_formats.toml`` (or ``path``): id -> :class:`FormatSpec`, in file order. A block
    format's element and scales must be float or int entries of the same file."""
    path = Path(path) if path is not None else DATA_DIR / "number_formats.toml"
    sources = load_sources()
    out = {fid: parse_format(path, fid, e, sources) for fid, e in read_table_file(path).items()}
    for f in out.values():
        for key in ("element", "scale", "tensor_scale"):
            ref = getattr(f, key)
            if ref is None:
                continue
            if ref not in out:
                raise CatalogueError(path, f.id, key, f"{ref!r} is not an entry of this file")
            if out[ref].family == "block":
                raise CatalogueError(path, f.id, key, f"{ref!r} is itself a block format")
    return MappingProxyType(out)


def get_format(name: str) -> FormatSpec:
    """A format by id or name, forgivingly (``"E4M3"`` is not enough: ``"fp8-e4m3"``, ``"FP8 E4M3 (OCP OFP8)"``)."""
    formats = load_formats()
    index: dict[str, str] = {}
    for f in formats.values():
        index.setdefault(fuzzy_key(f.id), f.id)
        index.setdefault(fuzzy_key(f.name), f.id)
    return formats[lookup(name, index, "format", {f.id: f.name for f in formats.values()})]


# -- published results ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QuantisationResult:
    """One published result of a format against a wider baseline (``quantisation_results.toml``)."""

    id: str
    model: str
    format: str
    baseline_format: str
    phase: str
    metric: str
    higher_is_better: bool
    baseline: float
    reported: float
    baseline_provenance: Provenance
    provenance: Provenance


_RESULT_KEYS = {"model", "format", "baseline_format", "phase", "metric", "higher_is_better", "baseline", "reported"}


@functools.lru_cache(maxsize=4)
def load_quantisation_results(path: Path | str | None = None) -> tuple[QuantisationResult, ...]:
    """Read ``quantisation_results.toml`` (or ``path``), in file order; formats must be ids of
    ``number_formats.toml``."""
    path = Path(path) if path is not None else DATA_DIR / "quantisation_results.toml"
    sources, formats = load_sources(), load_formats()
    out = []
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required=_RESULT_KEYS, optional=set())
        for key in ("format", "baseline_format"):
            if e[key] not in formats:
                raise CatalogueError(path, rid, key, f"{e[key]!r} is not a format of number_formats.toml")
        if e["phase"] not in PHASES:
            raise CatalogueError(path, rid, "phase", f"must be one of {PHASES}, got {e['phase']!r}")
        better = _flag(path, rid, "higher_is_better", e)
        base = parse_quantity(path, rid, "baseline", e["baseline"], "ratio", sources)
        rep = parse_quantity(path, rid, "reported", e["reported"], "ratio", sources)
        out.append(QuantisationResult(rid, str(e["model"]), e["format"], e["baseline_format"], e["phase"],
                                      str(e["metric"]), better, base.value, rep.value, base.provenance, rep.provenance))
    return tuple(out)
