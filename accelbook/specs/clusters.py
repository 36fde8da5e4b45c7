"""Training clusters: what the training model needs beyond a chip.

A :class:`Cluster` is a chip plus two levels of network, as a collective sees them:

- the *domain*: chips joined by the fast fabric (8 or 72 GPUs on NVSwitch; a TPU pod's ICI torus,
  whose 4×4×4 cubes optical circuit switches join into one torus on v4 and v5p);
- the *network* between domains (InfiniBand/RoCE rails, one NIC per GPU; the TPU data-centre
  network that "multislice" training uses between pods).

Bandwidths are per chip and one direction. On a torus, ``domain_bw_bytes_per_s`` is ONE link: a
collective over ``g`` chips of a ``D``-dimensional torus runs a bidirectional ring along each axis
it spans, so it gets ``2·axes·link`` (scaling-book, "Sharded matrices"); see :meth:`Cluster.domain_bw`.

Measured matrix-unit efficiency lives beside, in :mod:`accelbook.specs.efficiency`.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from accelbook.checks import positive
from accelbook.network.geometry import torus_axes

from .chips import Chip, base_id, get_chip
from .loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    check_keys,
    fuzzy_key,
    load_sources,
    lookup,
    parse_quantity,
    read_table_file,
)

_CLUSTER_KEYS = {
    "domain_chips": ("count", "domain_chips"),
    "domain_bw_gb_s": ("gb_s", "domain_bw_bytes_per_s"),
    "domain_torus_dims": ("count", "torus_dims"),
    "domain_latency_us": ("us", "domain_latency_s"),
    "domain_efficiency_count": ("count", "domain_efficiency"),
    "network_bw_gb_s": ("gb_s", "network_bw_bytes_per_s"),
    "network_latency_us": ("us", "network_latency_s"),
    "network_efficiency_count": ("count", "network_efficiency"),
    "max_chips": ("count", "max_chips"),
}


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
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: MappingProxyType({}), repr=False,
                                                 compare=False)

    @property
    def chip(self) -> Chip:
        return get_chip(self.chip_id)

    def domain_bw(self, group: int) -> float:
        """Bandwidth (bytes/s, one direction, after efficiency) a ring collective over ``group``
        chips of one domain gets per chip: the switch port, or 2 links per torus axis spanned."""
        if self.torus_dims == 0:
            return self.domain_bw_bytes_per_s * self.domain_efficiency
        return 2.0 * torus_axes(group, self.domain_chips, self.torus_dims) * self.domain_bw_bytes_per_s \
            * self.domain_efficiency

    def with_changes(self, **changes) -> "Cluster":
        """A what-if copy ("what if the NIC were 800 Gb/s?"): SI field values, checked >= 0."""
        for k, v in changes.items():
            if k not in _FIELDS:
                raise ValueError(f"unknown cluster field {k!r}; use one of {', '.join(sorted(_FIELDS))}")
            positive(k, v, allow_zero=True)
        return dataclasses.replace(self, id=self.id + "*", name=self.name + " (what-if)", **changes)


_FIELDS = {f for _, f in _CLUSTER_KEYS.values()}


@functools.lru_cache(maxsize=1)
def _clusters() -> Mapping[str, Cluster]:
    path = DATA_DIR / "clusters.toml"
    sources = load_sources()
    out = {}
    for cid, e in read_table_file(path).items():
        check_keys(path, cid, e, required={"name", "chip", *_CLUSTER_KEYS}, optional=set())
        vals, prov = {}, {}
        for key, (unit, name) in _CLUSTER_KEYS.items():
            allow_zero = key == "domain_torus_dims"
            q = parse_quantity(path, cid, key, e[key], unit, sources, allow_zero=allow_zero)
            vals[name], prov[name] = q.value, q.provenance
        for name in ("domain_efficiency", "network_efficiency"):
            if not 0 < vals[name] <= 1:
                raise CatalogueError(path, cid, name, "must be a fraction in (0, 1]")
        for name in ("domain_chips", "torus_dims", "max_chips"):
            if not float(vals[name]).is_integer():
                raise CatalogueError(path, cid, name, "must be a whole number")
            vals[name] = int(vals[name])
        if vals["torus_dims"] not in (0, 2, 3):
            raise CatalogueError(path, cid, "domain_torus_dims", "must be 0 (switched), 2 or 3")
        chip = get_chip(e["chip"])  # a clear error if the chip id is unknown
        out[cid] = Cluster(id=cid, name=e["name"], chip_id=chip.id, provenance=MappingProxyType(prov), **vals)
    return MappingProxyType(out)


def clusters() -> Mapping[str, Cluster]:
    """All cluster presets, id -> :class:`Cluster`."""
    return _clusters()


def get_cluster(name: str | Cluster) -> Cluster:
    """A cluster by id ("dgx-h100", "tpu-v5p-pod"); a clear error lists the ids."""
    if isinstance(name, Cluster):
        return name
    all_ = _clusters()
    if name in all_:
        return all_[name]
    index: dict[str, str] = {}
    for k, v in all_.items():
        index.setdefault(fuzzy_key(k), k)
        index.setdefault(fuzzy_key(v.name), k)
    return all_[lookup(name, index, "cluster", {k: v.name for k, v in all_.items()})]


def cluster_for(chip: Chip | str) -> Cluster:
    """The cluster preset built from ``chip`` (a GPU's DGX system, a TPU's pod)."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    for cl in _clusters().values():
        if cl.chip_id == base_id(c):
            return cl
    have = ", ".join(sorted({cl.chip_id for cl in _clusters().values()}))
    raise ValueError(f"no training cluster preset for {c.name}; presets exist for: {have} "
                     f"(add one to data/clusters.toml, or pass cluster=...)")
