"""The many-chip roofline paths give what one chip at a time gives; the shared chart rows match each chart's own."""

import numpy as np
import pandas as pd

from accelbook.chip import number_formats as nf
from accelbook.chip.roofline import (
    layer_roofline_columns,
    layers_roofline_columns,
    roofline_curve_columns,
    roofline_curves_columns,
)
from accelbook.ui.charts import layer_time_chart, roofline_chart, stack
from accelbook.ui.charts.chip import roofline_and_layer_time_chart

CHIPS = ("h100", "tpu-v5p", "b200", "tpu-v6e")


def _concat(parts):
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def test_many_chips_equal_one_at_a_time():
    for phase in ("training", "prefill", "decode"):
        many = layers_roofline_columns("llama-3.1-70b", CHIPS, phase, 8, 4096, "bf16")
        one = _concat([layer_roofline_columns("llama-3.1-70b", c, phase, 8, 4096, "bf16") for c in CHIPS])
        pd.testing.assert_frame_equal(pd.DataFrame(many), pd.DataFrame(one), check_exact=True)
    curves = roofline_curves_columns(CHIPS, "bf16", 0.3, 3e4, 48)
    pd.testing.assert_frame_equal(pd.DataFrame(curves), pd.DataFrame(
        _concat([roofline_curve_columns(c, "bf16", 0.3, 3e4, 48) for c in CHIPS])), check_exact=True)


def test_combined_chart_is_the_two_charts_stacked():
    ops = layers_roofline_columns("llama-3.1-70b", CHIPS, "decode", 8, 4096, "bf16")
    curves = roofline_curves_columns(CHIPS, "bf16", 0.3, 3e4, 48)
    frames = pd.DataFrame(ops), pd.DataFrame(curves)
    expected = stack(roofline_chart(frames[1], frames[0], title="t"), layer_time_chart(frames[0])).to_dict()
    assert roofline_and_layer_time_chart(curves, ops, title="t").to_dict() == expected


def test_format_lookup_follows_a_reloaded_catalogue():
    assert nf.bits_per_element("nvfp4") == 4.5
    nf.load_formats.cache_clear()
    assert nf.bits_per_element("NVFP4") == 4.5 and nf.bits_per_element("nvfp4") == 4.5
