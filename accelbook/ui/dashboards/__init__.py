"""The notebooks' dashboards, one module per notebook, on the pattern of :mod:`accelbook.ui.dashboard`.

Each ``*_spec()`` returns a :class:`~accelbook.ui.dashboard.DashboardSpec`: controls as data and a
pure ``*_view(...)`` function (model calls → DataFrame → chart). A notebook shows one with
``show(roofline_spec())``; ``tests/test_dashboards.py`` renders and ``benchmarks/bench_dashboards.py``
times every spec of :data:`ALL_SPECS`.

- :mod:`.nb00_start_here`: ``catalogue_spec``;
- :mod:`.nb01_gpu_vs_tpu`: ``roofline_spec``, ``training_cost_spec``;
- :mod:`.nb02_inside_the_chip`: ``systolic_spec``, ``animation_spec``, ``shapes_spec``;
- :mod:`.nb03_interconnects`: ``topology_spec``, ``collective_spec``;
- :mod:`.nb04_distributed_training`: ``training_spec``, ``search_spec``, ``scaling_spec``, and
  :func:`layout_label`;
- :mod:`.nb05_moe_all_to_all`: ``moe_routing_spec``, ``moe_network_spec``;
- :mod:`.nb06_inference_prefill_decode`: ``inference_spec``;
- :mod:`.nb07_inference_asics`: ``frontier_spec``;
- :mod:`.nb08_token_economics_and_hybrid`: ``tco_spec``, ``migration_spec``, ``fleet_spec``;
- :mod:`.nb09_design_your_chip`: ``design_spec``;
- :mod:`.nb10_number_formats`: ``precision_spec``;
- :mod:`.nb11_design_spaces_at_scale`: ``slo_spec``;
- :mod:`.common`: the option lists and helpers they share.

To add a dashboard: a view and a spec in its notebook's module, and the spec in that module's ``SPECS``.
"""

from __future__ import annotations

from . import (
    nb00_start_here,
    nb01_gpu_vs_tpu,
    nb02_inside_the_chip,
    nb03_interconnects,
    nb04_distributed_training,
    nb05_moe_all_to_all,
    nb06_inference_prefill_decode,
    nb07_inference_asics,
    nb08_token_economics_and_hybrid,
    nb09_design_your_chip,
    nb10_number_formats,
    nb11_design_spaces_at_scale,
)
from .common import chip_options, existing, markdown_table, model_options, require_some
from .nb00_start_here import catalogue_spec, catalogue_view
from .nb01_gpu_vs_tpu import (
    DEFAULT_COST_CHIPS,
    DEFAULT_ROOFLINE_CHIPS,
    roofline_spec,
    roofline_view,
    training_cost_spec,
    training_cost_view,
)
from .nb02_inside_the_chip import (
    DATAFLOW_OPTIONS,
    TRACE_LIMIT_CYCLES,
    animation_spec,
    animation_view,
    shapes_spec,
    shapes_view,
    systolic_spec,
    systolic_view,
)
from .nb03_interconnects import NETWORKS, SYSTEMS, collective_spec, collective_view, network_stats, topology_spec, topology_view
from .nb04_distributed_training import (
    DEFAULT_TRAINING,
    LAYOUT_KEYS,
    SCALING_SYSTEMS,
    layout_label,
    scaling_spec,
    scaling_view,
    search_spec,
    search_view,
    training_spec,
    training_view,
)
from .nb05_moe_all_to_all import (
    MOE_NETWORKS,
    MOE_TOKEN_GRID,
    moe_network_spec,
    moe_network_view,
    moe_routing_spec,
    moe_routing_view,
    token_copy_bytes,
)
from .nb06_inference_prefill_decode import inference_spec, inference_view
from .nb07_inference_asics import FRONTIER_SYSTEMS, frontier_spec, frontier_view
from .nb08_token_economics_and_hybrid import fleet_spec, fleet_view, migration_spec, migration_view, tco_spec, tco_view
from .nb09_design_your_chip import design_spec, design_view

#: the dashboards' modules, in the notebooks' order
NOTEBOOK_MODULES = (nb00_start_here, nb01_gpu_vs_tpu, nb02_inside_the_chip, nb03_interconnects, nb04_distributed_training,
                    nb05_moe_all_to_all, nb06_inference_prefill_decode, nb07_inference_asics,
                    nb08_token_economics_and_hybrid, nb09_design_your_chip, nb10_number_formats,
                    nb11_design_spaces_at_scale)
#: every dashboard's ``*_spec``, in the notebooks' order (the benchmark and the tests walk this)
ALL_SPECS = tuple(spec for module in NOTEBOOK_MODULES for spec in module.SPECS)

__all__ = [
    "ALL_SPECS", "NOTEBOOK_MODULES", "chip_options", "model_options", "existing", "require_some", "markdown_table",
    "catalogue_spec", "catalogue_view",
    "DEFAULT_ROOFLINE_CHIPS", "DEFAULT_COST_CHIPS", "roofline_spec", "roofline_view", "training_cost_spec",
    "training_cost_view",
    "TRACE_LIMIT_CYCLES", "DATAFLOW_OPTIONS", "systolic_spec", "systolic_view", "animation_spec", "animation_view",
    "shapes_spec", "shapes_view",
    "NETWORKS", "SYSTEMS", "network_stats", "topology_spec", "topology_view", "collective_spec", "collective_view",
    "DEFAULT_TRAINING", "LAYOUT_KEYS", "SCALING_SYSTEMS", "layout_label", "training_spec", "training_view",
    "search_spec", "search_view", "scaling_spec", "scaling_view",
    "MOE_NETWORKS", "MOE_TOKEN_GRID", "token_copy_bytes", "moe_routing_spec", "moe_routing_view", "moe_network_spec",
    "moe_network_view",
    "inference_spec", "inference_view", "FRONTIER_SYSTEMS", "frontier_spec", "frontier_view",
    "tco_spec", "tco_view", "migration_spec", "migration_view", "fleet_spec", "fleet_view",
    "design_spec", "design_view",
]
