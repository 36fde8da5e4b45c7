"""Training clusters: what the training model needs beyond a chip.

A :class:`Cluster` is a chip plus two levels of network, as a collective sees them:

- the *domain*: chips joined by the fast fabric (8 or 72 GPUs on NVSwitch; a TPU pod's ICI torus,
  whose 4×4×4 cubes optical circuit switches join into one torus on v4 and v5p);
- the *network* between domains (InfiniBand/RoCE rails, one NIC per GPU; the TPU data-centre
  network that "multislice" training uses between pods).

Each level names a fabric of ``data/fabrics.toml`` (:mod:`accelbook.specs.fabrics`), whose link
bandwidth, step latency and efficiency it takes: one description per link, shared with the network
presets. A cluster whose chips get other than one link of that fabric says so with its own
``domain_bw_gb_s`` (H800: NVLink 4 cut to fewer links) or ``network_bw_gb_s`` (a TPU host's NICs
shared by its chips), with its source and kind.

Bandwidths are per chip and one direction. On a torus, ``domain_bw_bytes_per_s`` is ONE link: a
collective over ``g`` chips of a ``D``-dimensional torus runs a bidirectional ring along each axis
it spans, so it gets ``2·axes·link`` (scaling-book, "Sharded matrices");
:func:`accelbook.training.communication.ring_bandwidth` computes it.

Measured matrix-unit efficiency lives beside, in :mod:`accelbook.specs.efficiency`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from accelbook.checks import at_most, fraction, positive, real, whole

from .catalogue import Kind
from .chips import Chip, base_id, get_chip
from .fabrics import Fabric, get_fabric, parse_figure
from .loader import (
    UNIT_LIMITS,
    CatalogueError,
    Provenance,
    check_keys,
    checked_path,
    load_sources,
    parse_quantity,
    read_table_file,
)

#: counts written in the cluster's own table: key -> (unit, field)
_COUNT_KEYS = {
    "domain_chips": ("count", "domain_chips"),
    "domain_torus_dims": ("count", "torus_dims"),
    "max_chips": ("count", "max_chips"),
}
#: figures taken from a fabric: fabric field -> the cluster's field, per level
_FROM_FABRIC = {
    "domain": {"link_bw_bytes_per_s": "domain_bw_bytes_per_s", "hop_latency_s": "domain_latency_s",
               "efficiency": "domain_efficiency"},
    "network": {"link_bw_bytes_per_s": "network_bw_bytes_per_s", "hop_latency_s": "network_latency_s",
                "efficiency": "network_efficiency"},
}
#: what a cluster may state itself instead of its fabric's figure
_OVERRIDES = {"domain_bw_gb_s": ("gb_s", "domain_bw_bytes_per_s"), "network_bw_gb_s": ("gb_s", "network_bw_bytes_per_s")}


@dataclass(frozen=True)
class Cluster:
    """A chip in a two-level network (SI units; bandwidths per chip, one direction)."""

    id: str
    name: str
    chip_id: str
    domain_chips: int
    domain_bw_bytes_per_s: float
    torus_dims: int
    domain_latency_s: float
    domain_efficiency: float
    network_bw_bytes_per_s: float
    network_latency_s: float
    network_efficiency: float
    max_chips: int
    domain_fabric: str = ""
    network_fabric: str = ""
    aliases: tuple[str, ...] = ()
    #: the kind of each fabric figure ("measured", "vendor", "estimate"), by field
    kinds: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: MappingProxyType({}), repr=False,
                                                 compare=False)

    @property
    def chip(self) -> Chip:
        return get_chip(self.chip_id)

    def with_changes(self, **changes) -> "Cluster":
        """A what-if copy ("what if the NIC were 800 Gb/s?"): SI field values, checked as the clusters
        file's are (:func:`check_cluster`: bandwidths > 0, efficiencies in (0, 1], whole counts)."""
        for k, v in changes.items():
            if k not in _FIELDS:
                raise ValueError(f"unknown cluster field {k!r}; use one of {', '.join(sorted(_FIELDS))}")
            positive(k, v, allow_zero=True)
        return check_cluster(dataclasses.replace(self, id=self.id + "*", name=self.name + " (what-if)", **changes))


def check_cluster(c: Cluster) -> Cluster:
    """``c`` if its figures pass the clusters file's checks (one validation for the loader and
    :meth:`Cluster.with_changes`): counts whole (chips in a domain and in all at most 10^8, the
    loader's bound), ``torus_dims`` 0, 2 or 3, bandwidths finite and > 0, latencies >= 0, efficiencies
    in (0, 1]; else a ``ValueError`` naming the field."""
    for k in ("domain_chips", "max_chips"):
        at_most(k, whole(k, getattr(c, k)), UNIT_LIMITS["chips"], "accelbook.specs.loader.UNIT_LIMITS")
    if type(c.torus_dims) is not int or c.torus_dims not in (0, 2, 3):
        raise ValueError(f"torus_dims must be 0 (switched), 2 or 3, got {c.torus_dims!r}")
    for level in ("domain", "network"):
        real(f"{level}_bw_bytes_per_s", getattr(c, f"{level}_bw_bytes_per_s"), 0.0, UNIT_LIMITS["gb_s"], lo_open=True)
        real(f"{level}_latency_s", getattr(c, f"{level}_latency_s"), 0.0, UNIT_LIMITS["s"])
        fraction(f"{level}_efficiency", getattr(c, f"{level}_efficiency"), zero_ok=False)
    return c


_FIELDS = {f for _, f in _COUNT_KEYS.values()} | {f for level in _FROM_FABRIC.values() for f in level.values()}


def _fabric(path, cid: str, key: str, name) -> Fabric:
    if not isinstance(name, str):
        raise CatalogueError(path, cid, key, f"must be a fabric id of data/fabrics.toml, got {name!r}")
    try:
        return get_fabric(name)
    except KeyError as err:
        raise CatalogueError(path, cid, key, str(err.args[0])) from None


def parse_cluster(path, cid: str, e: Mapping, sources) -> Cluster:
    """One ``[id]`` table of a clusters file: its counts, its two fabrics' figures, its overrides."""
    check_keys(path, cid, e, required={"name", "chip", "domain_fabric", "network_fabric", *_COUNT_KEYS},
               optional=set(_OVERRIDES))
    vals, prov, kinds = {}, {}, {}
    for level, fields in _FROM_FABRIC.items():
        fab = _fabric(path, cid, f"{level}_fabric", e[f"{level}_fabric"])
        vals[f"{level}_fabric"] = fab.id
        for fabric_field, name in fields.items():
            vals[name], prov[name], kinds[name] = fab[fabric_field], fab[fabric_field + "_provenance"], fab.kinds[fabric_field]
    for key, (unit, name) in _OVERRIDES.items():
        if key in e:
            q, kinds[name] = parse_figure(path, cid, key, e[key], unit, sources)
            vals[name], prov[name] = q.value, q.provenance
    for key, (unit, name) in _COUNT_KEYS.items():
        q = parse_quantity(path, cid, key, e[key], unit, sources, allow_zero=key == "domain_torus_dims")
        if not float(q.value).is_integer():
            raise CatalogueError(path, cid, name, "must be a whole number")
        vals[name], prov[name] = int(q.value), q.provenance
    if vals["torus_dims"] not in (0, 2, 3):
        raise CatalogueError(path, cid, "domain_torus_dims", "must be 0 (switched), 2 or 3")
    chip = get_chip(e["chip"])  # a clear error if the chip id is unknown
    try:
        return check_cluster(Cluster(id=cid, name=e["name"], chip_id=chip.id, kinds=MappingProxyType(kinds),
                                     provenance=MappingProxyType(prov), **vals))
    except ValueError as err:
        raise CatalogueError(path, cid, None, str(err)) from None


def load_clusters(path: Path | str) -> tuple[Cluster, ...]:
    """Read a clusters file (``data/clusters.toml``'s schema) into :class:`Cluster` entries."""
    path = checked_path(path)
    sources = load_sources()
    return tuple(parse_cluster(path, cid, e, sources) for cid, e in read_table_file(path).items())


#: the cluster catalogue (data/clusters.toml)
CLUSTERS = Kind("cluster", "clusters.toml", load_clusters)


def clusters() -> Mapping[str, Cluster]:
    """All cluster presets, id -> :class:`Cluster`."""
    return MappingProxyType({c.id: c for c in CLUSTERS.all()})


def get_cluster(name: str | Cluster) -> Cluster:
    """A cluster by id ("dgx-h100", "tpu-v5p-pod") or name, forgivingly; a clear error lists the ids."""
    if isinstance(name, Cluster):
        return name
    return CLUSTERS.get(name)


def cluster_for(chip: Chip | str) -> Cluster:
    """The cluster preset built from ``chip`` (a GPU's DGX system, a TPU's pod)."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    for cl in CLUSTERS.all():
        if cl.chip_id == base_id(c):
            return cl
    have = ", ".join(sorted({cl.chip_id for cl in CLUSTERS.all()}))
    raise ValueError(f"no training cluster preset for {c.name}; presets exist for: {have} "
                     f"(add one to data/clusters.toml, or pass cluster=...)")
