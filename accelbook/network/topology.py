"""Network topologies of accelerator systems, and their hop statistics: the names users reach as
``topology.X`` (``from accelbook.network import topology as tp``, or ``accelbook.topology``).

This module defines nothing; it gathers the network layer's public names from where they live:

- :mod:`~accelbook.network.graph`: :class:`Topology` (a graph in CSR form with link figures) and
  :func:`from_edges`;
- :mod:`~accelbook.network.builders`: :func:`ring`, :func:`torus` (and :func:`mesh`;
  ``twisted=True`` for a twisted 2D/3D torus), :func:`full_mesh`, :func:`switched` (an NVSwitch
  node, :func:`nvl72`), :func:`fat_tree` (k-ary, with oversubscription), :func:`dragonfly`,
  :func:`boardfly` (a labelled guess at TPU 8i's network), :func:`tpu_pod` (4×4×4 cubes joined by
  optical switches) and :func:`gpu_cluster` (NVSwitch nodes on InfiniBand rails);
- :mod:`~accelbook.network.systems`: systems with published link figures (``data/fabrics.toml``):
  :func:`hgx_h100`, :func:`h100_cluster`, :func:`tpu_slice`, :func:`tpu_axis`,
  :func:`tpu_multislice` (pods joined by the data-centre network), and :data:`PRESETS`;
- :mod:`~accelbook.network.paths`: :func:`hop_stats` and :func:`hop_histogram` (a bit-parallel
  Numba BFS from every chip), :func:`link_loads` and :func:`all_to_all_load` (shortest-path
  splitting), :func:`dor_link_loads` (dimension-ordered routing);
- :mod:`~accelbook.network.geometry`: the closed forms for tori (:func:`torus_mean_hops`,
  :func:`torus_diameter`, :func:`torus_all_to_all_max_load`) the kernels are checked against;
- :mod:`~accelbook.network.bisection`: :func:`bisection_links` (counted on the graph) and
  :func:`bisection_links_analytic` (the textbook count);
- :func:`fabrics`, the link fabrics of ``data/fabrics.toml``, and a collective library's wire
  :class:`Protocol` (:mod:`accelbook.specs.fabrics`).

Analytic check: a k×k×k torus with wraparound has diameter ``3·⌊k/2⌋`` and, for even k, mean hops
``3·(k/4)·k³/(k³-1)``.
"""

from __future__ import annotations

from accelbook.specs.fabrics import Protocol, fabrics

from .bisection import bisection_links, bisection_links_analytic
from .builders import boardfly, dragonfly, fat_tree, full_mesh, gpu_cluster, mesh, nvl72, ring, switched, torus, tpu_pod
from .geometry import torus_all_to_all_max_load, torus_diameter, torus_mean_hops
from .graph import Topology, from_edges
from .paths import all_to_all_load, dor_link_loads, hop_histogram, hop_stats, link_loads
from .systems import PRESETS, h100_cluster, hgx_h100, tpu_axis, tpu_multislice, tpu_slice

__all__ = [
    "Topology", "from_edges",
    "ring", "torus", "mesh", "full_mesh", "switched", "nvl72", "fat_tree", "dragonfly", "boardfly", "tpu_pod",
    "gpu_cluster",
    "hgx_h100", "h100_cluster", "tpu_slice", "tpu_axis", "tpu_multislice", "PRESETS",
    "hop_histogram", "hop_stats", "link_loads", "all_to_all_load", "dor_link_loads",
    "torus_mean_hops", "torus_diameter", "torus_all_to_all_max_load",
    "bisection_links", "bisection_links_analytic",
    "fabrics", "Protocol",
]
