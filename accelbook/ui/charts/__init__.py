"""Chart functions: tidy DataFrames in, a :class:`~.base.Figure` (a Vega-Lite chart) out. No model code.

Each chart is written once in Altair over *named* datasets and turned into a Vega-Lite dict once per
process (the ``_template_*`` functions, cached); a call then copies that dict and fills in the data,
about a millisecond, fast enough for a slider. One module per topic, as the notebooks go:

- :mod:`.base`: :class:`Figure`, sizes, shared colour scales, ``stack``, ``message_figure``,
  ``save_for_slides`` (SVG and PNG at a slide's resolution, offline);
- :mod:`.chip` (notebooks 00-02, 09), :mod:`.network` (03), :mod:`.training` (04), :mod:`.moe` (05),
  :mod:`.inference` (06, 07), :mod:`.economics` (01, 08).
"""

from __future__ import annotations

from .base import (
    BOUND_COLOURS,
    HEIGHT,
    SLIDE_PX,
    STATUS_SHAPES,
    WIDTH,
    Figure,
    message_figure,
    named_data,
    records,
    save_for_slides,
    stack,
    vl_version,
)
from .chip import (
    dataflow_chart,
    design_map_chart,
    efficiency_sweep_chart,
    layer_time_chart,
    pe_grid_chart,
    peak_bandwidth_chart,
    roofline_chart,
    trace_chart,
)
from .economics import fleet_chart, payback_chart, tornado_chart, training_cost_chart
from .inference import batch_sweep_chart, frontier_chart, serving_chart, throughput_interactivity_chart
from .moe import crossover_chart, moe_load_chart
from .network import collective_chart, hop_histogram_chart
from .training import MEM_ORDER, TIME_COLOURS, TIME_ORDER, scaling_chart, step_chart, validation_chart, waterfall_chart

__all__ = ['BOUND_COLOURS', 'Figure', 'HEIGHT', 'SLIDE_PX', 'save_for_slides', 'MEM_ORDER', 'STATUS_SHAPES', 'TIME_COLOURS', 'TIME_ORDER', 'WIDTH', 'batch_sweep_chart', 'collective_chart', 'crossover_chart', 'dataflow_chart', 'design_map_chart', 'efficiency_sweep_chart', 'fleet_chart', 'frontier_chart', 'hop_histogram_chart', 'layer_time_chart', 'message_figure', 'moe_load_chart', 'named_data', 'payback_chart', 'pe_grid_chart', 'peak_bandwidth_chart', 'records', 'roofline_chart', 'scaling_chart', 'serving_chart', 'stack', 'step_chart', 'throughput_interactivity_chart', 'tornado_chart', 'trace_chart', 'training_cost_chart', 'validation_chart', 'vl_version', 'waterfall_chart']
