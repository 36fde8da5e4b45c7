"""Link fabrics (``data/fabrics.toml``): link bandwidth, step latency, efficiency, and a collective
library's wire protocols. The one description of each link: the network presets
(:mod:`accelbook.network.systems`) and the training clusters (:mod:`accelbook.specs.clusters`, which
name a domain and a scale-out fabric) both read their figures here.

Every figure says what it is (``kind``): ``"measured"`` (a timed run, nccl-tests), ``"vendor"`` (a
datasheet, a vendor's documentation or a vendor library's cost-model constant) or ``"estimate"``
(ours, or an assumption carried over from another fabric). A figure whose source is an estimate
must say ``kind = "estimate"``.

For GPU fabrics the protocols are NCCL's own cost model (``src/graph/tuning.cc``, NCCL 2.30): each
protocol (LL, LL128, Simple) has a fixed latency, a latency per step and a share of the link's
bandwidth. :mod:`accelbook.network.systems` attaches them to the systems it builds and
:mod:`accelbook.network.collectives` costs collectives with them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from .catalogue import Kind
from .loader import (
    CatalogueError,
    Quantity,
    Source,
    check_keys,
    checked_path,
    load_sources,
    lookup_source,
    parse_quantity,
    read_table_file,
)

#: what a figure is: a measurement, a vendor's figure, or an estimate
FIGURE_KINDS = ("measured", "vendor", "estimate")


def parse_figure(path, entry: str, key: str, raw: Any, unit: str, sources: Mapping[str, Source]) -> tuple[Quantity, str]:
    """A ``{ value, src, kind, [note] }`` table: the SI :class:`~accelbook.specs.loader.Quantity` and
    its kind (one of :data:`FIGURE_KINDS`; ``"estimate"`` whenever the source is an estimate)."""
    kind = None   # a figure that is not a table: parse_quantity says so
    if isinstance(raw, dict):
        if "kind" not in raw:
            raise CatalogueError(path, entry, key, f"say kind = one of {FIGURE_KINDS} (measured, a vendor's figure, or an estimate)")
        kind = raw["kind"]
        if kind not in FIGURE_KINDS:
            raise CatalogueError(path, entry, key, f"kind must be one of {FIGURE_KINDS}, got {kind!r}")
        raw = {k: v for k, v in raw.items() if k != "kind"}
    q = parse_quantity(path, entry, key, raw, unit, sources)
    if q.provenance.source.kind == "estimate" and kind != "estimate":
        raise CatalogueError(path, entry, key, f"its source {q.provenance.source.id!r} is an estimate: say kind = \"estimate\"")
    return q, kind


@dataclass(frozen=True)
class Protocol:
    """One of a collective library's wire protocols (NCCL: LL, LL128, Simple).

    A collective in this protocol costs ``base_latency_s`` once plus ``step_latency_s`` per step, and
    moves data at ``bandwidth_share`` of the usable link rate, at most ``max_busbw_bytes_per_s``.
    """

    name: str
    base_latency_s: float
    step_latency_s: float
    bandwidth_share: float = 1.0
    max_busbw_bytes_per_s: float = math.inf

    def scaled(self, latency: float) -> "Protocol":
        return dataclasses.replace(self, base_latency_s=self.base_latency_s * latency,
                                   step_latency_s=self.step_latency_s * latency)



class Fabric(Mapping):
    """One link fabric: its figures by SI name (``f["link_bw_bytes_per_s"]``, ``f["hop_latency_s"]``,
    ``f["efficiency"]``, each with ``f[name + "_provenance"]``; optional ``protocols``,
    ``in_network_latency_s``, ``in_network_efficiency``), its ``id`` and ``name``, and what each figure
    is (``f.kinds["hop_latency_s"]``: one of :data:`FIGURE_KINDS`). Read-only."""

    __slots__ = ("id", "name", "aliases", "kinds", "_figures")

    def __init__(self, fid: str, name: str, figures: Mapping[str, Any], kinds: Mapping[str, str]):
        self.id, self.name, self.aliases = fid, name, ()
        self.kinds = MappingProxyType(dict(kinds))
        self._figures = MappingProxyType({"name": name, **figures})

    def __getitem__(self, key: str) -> Any:
        return self._figures[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._figures)

    def __len__(self) -> int:
        return len(self._figures)

    def __repr__(self) -> str:
        return f"Fabric({self.id!r}, {self.name!r})"


_KEYS = {"link_bw_gb_s": ("gb_s", "link_bw_bytes_per_s"), "step_latency_us": ("us", "hop_latency_s"),
         "efficiency_count": ("count", "efficiency")}
_EXTRA = {"nvls_latency_us": ("us", "in_network_latency_s"), "nvls_efficiency_count": ("count", "in_network_efficiency")}


def load_fabrics(path: Path | str, sources: Mapping[str, Source] | None = None) -> tuple[Fabric, ...]:
    """Read a fabrics file (``data/fabrics.toml``'s schema) into :class:`Fabric` entries."""
    path = checked_path(path)
    sources = load_sources() if sources is None else sources
    out = []
    for fid, e in read_table_file(path).items():
        check_keys(path, fid, e, required={"name", *_KEYS}, optional={"protocols", *_EXTRA})
        f, kinds = {}, {}
        for key, (unit, field_name) in {**_KEYS, **{k: v for k, v in _EXTRA.items() if k in e}}.items():
            q, kinds[field_name] = parse_figure(path, fid, key, e[key], unit, sources)
            f[field_name] = q.value
            f[field_name + "_provenance"] = q.provenance
        for key in ("efficiency", "in_network_efficiency"):
            if key in f and not 0 < f[key] <= 1:
                raise CatalogueError(path, fid, key, "must be a fraction in (0, 1]")
        if "protocols" in e:
            f["protocols"], f["protocols_source"] = _parse_protocols(path, fid, e["protocols"], sources, f["hop_latency_s"])
        out.append(Fabric(fid, e["name"], f, kinds))
    return tuple(out)


#: the fabric catalogue (data/fabrics.toml)
FABRICS = Kind("fabric", "fabrics.toml", load_fabrics)


def fabrics() -> Mapping[str, Fabric]:
    """Link fabrics from ``data/fabrics.toml``, id -> :class:`Fabric`: SI values (bytes/s, s, fraction)
    with provenance.

    A fabric may also give a collective library's ``protocols`` (:class:`Protocol`, latencies in
    seconds) and the in-switch reduction's ``in_network_latency_s`` and ``in_network_efficiency``.
    """
    return MappingProxyType({f.id: f for f in FABRICS.all()})


def get_fabric(name: str) -> Fabric:
    """A fabric by id or name, forgivingly (``"nvlink4"``, ``"NVLink 4"``); the error lists the closest."""
    return FABRICS.get(name)


def _parse_protocols(path, fid, raw, sources, step_latency_s) -> tuple[tuple[Protocol, ...], Any]:
    """``protocols = { src, note, NAME = [base µs, step µs, bandwidth share, busbw cap GB/s or 0] … }``;
    the last protocol is the bulk one and its step latency must equal the fabric's ``step_latency_us``."""
    key = "protocols"
    if not isinstance(raw, dict) or "src" not in raw:
        raise CatalogueError(path, fid, key, "must be a table with src, note and NAME = [base_us, step_us, share, cap_gb_s]")
    source = lookup_source(path, fid, key, raw["src"], sources)
    out = []
    for name, v in raw.items():
        if name in ("src", "note"):
            continue
        if (not isinstance(v, list) or len(v) != 4 or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v)
                or v[0] < 0 or v[1] <= 0 or not 0 < v[2] <= 1 or v[3] < 0):
            raise CatalogueError(path, fid, f"{key}.{name}",
                                 f"must be [base_us >= 0, step_us > 0, share in (0, 1], cap_gb_s >= 0 (0 = none)], got {v!r}")
        out.append(Protocol(name, v[0] * 1e-6, v[1] * 1e-6, float(v[2]), v[3] * 1e9 if v[3] > 0 else math.inf))
    if not out:
        raise CatalogueError(path, fid, key, "lists no protocol")
    if not math.isclose(out[-1].step_latency_s, step_latency_s, rel_tol=1e-9):
        raise CatalogueError(path, fid, key, f"the last (bulk) protocol's step latency {out[-1].step_latency_s * 1e6:g} µs "
                                             f"must equal step_latency_us ({step_latency_s * 1e6:g} µs)")
    return tuple(out), source
