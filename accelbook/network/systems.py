"""Systems with published link figures: the builders' graphs with a fabric from ``data/fabrics.toml``.

- :func:`hgx_h100`: 8 H100 SXM on NVSwitch (NVLink 4, NCCL's protocols, NVLS in-switch reduction);
- :func:`h100_cluster`: HGX H100 nodes on NDR InfiniBand rails, one 400 Gb/s NIC per GPU;
- :func:`tpu_slice`, :func:`tpu_axis`: TPU slices and single axes on ICI;
- :func:`tpu_multislice`: TPU slices joined by the data-centre network (DCN share per chip from
  ``data/clusters.toml``).

:data:`PRESETS` names them for ``data/collective_measurements.toml`` (notebook 03's validation).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from accelbook.checks import one_of, whole
from accelbook.specs.clusters import cluster_for
from accelbook.specs.fabrics import fabrics

from .builders import gpu_cluster, switched, torus, tpu_pod
from .graph import Topology, check_size, from_edges

#: TPU generation -> its ICI fabric in data/fabrics.toml
_ICI = {"v4": "ici-v4-v5e", "v5e": "ici-v4-v5e", "v5p": "ici-v5p-v6e", "v6e": "ici-v5p-v6e"}
#: TPU generation -> the axis length whose ring the wraparound closes (v4/v5p: whole 4-chip cubes, by OCS;
#: v5e/v6e: full 16-chip axes)
_WRAP_LENGTH = {"v4": 4, "v5p": 4, "v5e": 16, "v6e": 16}


def _links(fabric: str) -> dict:
    """A fabric's link figures as :class:`Topology` fields."""
    f = fabrics()[fabric]
    d = {"link_bw_bytes_per_s": f["link_bw_bytes_per_s"], "hop_latency_s": f["hop_latency_s"],
         "efficiency": f["efficiency"], "protocols": f.get("protocols", ())}
    for k in ("in_network_latency_s", "in_network_efficiency"):
        if k in f:
            d[k] = f[k]
    return d


def _generation(generation: str) -> str:
    return one_of("generation", generation, sorted(_ICI))


def hgx_h100(nvls: bool = True) -> Topology:
    """8 H100 SXM on NVSwitch, NVLink 4 figures and NCCL's protocols from data/fabrics.toml."""
    return dataclasses.replace(switched(8, "HGX H100"), **_links("nvlink4"), in_network_reduction=nvls)


def h100_cluster(nodes: int) -> Topology:
    """HGX H100 nodes on NDR InfiniBand rails (one 400 Gb/s NIC per GPU), from data/fabrics.toml."""
    ib = fabrics()["ndr-infiniband"]
    c = gpu_cluster(nodes, 8, ib["link_bw_bytes_per_s"], ib["hop_latency_s"])
    params = {**c.params, "nic_protocols": ib.get("protocols", ()), "nic_efficiency": ib["efficiency"]}
    return dataclasses.replace(c, **_links("nvlink4"), params=params)


def tpu_slice(generation: str, shape) -> Topology:
    """A TPU slice: ICI links of 45 GB/s (v4, v5e) or 90 GB/s (v5p, v6e) per direction, ~1 µs a hop.

    v4/v5p slices wrap along whole 4-chip cubes; v5e/v6e 2D slices wrap only along full 16-chip axes.
    """
    _generation(generation)
    if generation in ("v4", "v5p"):
        t = tpu_pod(tuple(shape))
    else:
        dims = tuple(whole("each dimension", d) for d in shape)
        t = torus(dims, wraparound=tuple(d == _WRAP_LENGTH[generation] for d in dims))
    return dataclasses.replace(t, name=f"TPU {generation} {'×'.join(map(str, t.dims))}", **_links(_ICI[generation]))


def tpu_axis(generation: str, length: int) -> Topology:
    """One axis of a TPU slice (a ring if it spans a full wraparound, else a line)."""
    _generation(generation)
    length = whole("length", length)
    full = length % _WRAP_LENGTH[generation] == 0
    return dataclasses.replace(torus((length,), wraparound=full), name=f"TPU {generation} axis of {length}",
                               **_links(_ICI[generation]))


def tpu_multislice(generation: str, slice_shape, slices: int) -> Topology:
    """``slices`` TPU slices of ``slice_shape`` (ICI inside each, as :func:`tpu_slice`) joined by the
    data-centre network (DCN, "multislice"): each chip's share of its host's NICs, from the pod's
    entry in ``data/clusters.toml``. The DCN is drawn as one non-blocking switch node.
    """
    one = tpu_slice(generation, slice_shape)
    slices = whole("slices", slices)
    dcn = cluster_for(f"tpu-{generation}")
    n = one.n_endpoints
    p = n * slices
    check_size(f"tpu_multislice({generation!r}, {tuple(one.dims)}, {slices})", p + 1, (one.n_links + 1) * slices)
    inside = one.edges()
    edges = np.concatenate([inside + k * n for k in range(slices)] +
                           ([np.stack([np.arange(p), np.full(p, p)], axis=1)] if slices > 1 else []))
    t = from_edges(f"{slices} × TPU {generation} slice {'×'.join(map(str, one.dims))} (DCN)", "multislice", p,
                   p + (1 if slices > 1 else 0), edges,
                   params={"slice": one, "slices": slices,
                           "dcn_bw_bytes_per_s": dcn.network_bw_bytes_per_s * dcn.network_efficiency,
                           "dcn_latency_s": dcn.network_latency_s},
                   assumptions=f"ICI inside each slice; {dcn.name}: DCN per chip as in data/clusters.toml, "
                               "shown as one non-blocking switch")
    return dataclasses.replace(t, **_links(_ICI[generation]))


#: name -> builder, for data files that name a system (``system = "hgx_h100"``, ``args = {...}``)
PRESETS = {"hgx_h100": hgx_h100, "h100_cluster": h100_cluster, "tpu_slice": tpu_slice, "tpu_axis": tpu_axis,
           "tpu_multislice": tpu_multislice}
