"""The many-chip roofline paths against hand-worked rooflines; the shared chart rows match each chart's own."""

import numpy as np
import pandas as pd
import pytest

from accelbook.chip import number_formats as nf
from accelbook.chip.roofline import layers_roofline_columns, roofline_curves_columns
from accelbook.ui.charts import layer_time_chart, roofline_chart, stack
from accelbook.ui.charts.chip import roofline_and_layer_time_chart

CHIPS = ("h100", "tpu-v5p", "b200", "tpu-v6e")
# dense bf16 peak (FLOP/s) and HBM bandwidth (bytes/s) from the datasheets data/chips.toml cites:
# H100 SXM 989.4 TFLOP/s, 3.35 TB/s; TPU v5p 459 TFLOP/s, 2.765 TB/s; B200 2.25 PFLOP/s, 8 TB/s;
# TPU v6e 918 TFLOP/s, 1.638 TB/s. Ridge = peak / bandwidth, by hand:
RIDGE = {"h100": 295.34, "tpu-v5p": 166.00, "b200": 281.25, "tpu-v6e": 560.44}
BW = {"h100": 3.35e12, "tpu-v5p": 2.765e12, "b200": 8e12, "tpu-v6e": 1.638e12}
PEAK = {"h100": 989.4e12, "tpu-v5p": 459e12, "b200": 2.25e15, "tpu-v6e": 918e12}

# Llama 3.1 70B (d = 8192, d_ff = 28672, 8 K/V heads of 128, bf16), batch 8, context 4096, by hand:
# decode FFN down, T = 8 tokens: F = 2·8·28672·8192 = 3,758,096,384 FLOP,
#   D = (8·28672 + 28672·8192 + 8·8192)·2 = 470,351,872 B: memory-bound on every chip (intensity 8)
# training FFN down, T = 32,768 tokens, ×3 (forward + backward): F = 46,179,488,366,592 FLOP,
#   D = 3·(32768·28672 + 28672·8192 + 32768·8192)·2 = 8,657,043,456 B: intensity 5334, compute-bound
# decode attention: F = 2·8·4096·(8192 + 8192) = 1,073,741,824 FLOP; D = the K/V cache of 8 sequences
#   (8·4096·2·8·128·2 = 134,217,728 B) + q and the output (8·16384·2 = 262,144 B) = 134,479,872 B
HAND = {  # (phase, op) -> chip -> (t_math_s, t_mem_s): F / peak, D / bandwidth
    ("decode", "FFN down"): {"h100": (3.7984e-6, 1.40404e-4), "tpu-v5p": (8.1876e-6, 1.70109e-4),
                             "b200": (1.67027e-6, 5.87940e-5), "tpu-v6e": (4.0938e-6, 2.87150e-4)},
    ("training", "FFN down"): {"h100": (4.66742e-2, 2.58419e-3), "tpu-v5p": (1.006089e-1, 3.13094e-3),
                               "b200": (2.05242e-2, 1.082130e-3), "tpu-v6e": (5.03045e-2, 5.28513e-3)},
    ("decode", "attention (QK^T, softmax, AV)"): {"h100": (1.08525e-6, 4.01432e-5)},
}


def test_many_chips_roofline_is_the_hand_worked_roofline():
    for phase in ("training", "decode"):
        cols = pd.DataFrame(layers_roofline_columns("llama-3.1-70b", CHIPS, phase, 8, 4096, "bf16"))
        n_ops = len(cols) // len(CHIPS)
        for (ph, op), want in HAND.items():
            if ph != phase:
                continue
            for i, chip in enumerate(CHIPS):    # one chip's rows after the other's, in the order asked
                rows = cols.iloc[i * n_ops:(i + 1) * n_ops]
                row = rows[rows.op == op].iloc[0]
                if chip not in want:
                    continue
                t_math, t_mem = want[chip]
                assert row.t_math_s == pytest.approx(t_math, rel=1e-4), (phase, op, chip)
                assert row.t_mem_s == pytest.approx(t_mem, rel=1e-4), (phase, op, chip)
                assert row.t_s == max(row.t_math_s, row.t_mem_s)
                assert row.bound == ("compute" if t_math >= t_mem else "memory")
                # attainable = min(peak, intensity · bandwidth)
                assert row.attainable_flop_s == pytest.approx(min(PEAK[chip], row.intensity_flop_per_byte * BW[chip]),
                                                              rel=1e-12)
        assert cols.chip.iloc[0] == "NVIDIA H100 SXM5 80GB" and cols.chip.iloc[-1] == "Google TPU v6e (Trillium)"


def test_many_chips_roofline_curves_are_the_hand_worked_ridges():
    curves = pd.DataFrame(roofline_curves_columns(CHIPS, "bf16", 0.3, 3e4, 48))
    names = list(dict.fromkeys(curves.chip))
    assert len(names) == len(CHIPS)
    for name, chip in zip(names, CHIPS):
        c = curves[curves.chip == name]
        assert len(c) == 49                                     # 48 points and the ridge, which lies inside
        assert c.ridge_flop_per_byte.iloc[0] == pytest.approx(RIDGE[chip], abs=0.005)
        assert np.all(np.diff(c.intensity_flop_per_byte) > 0)
        assert c.attainable_flop_s.iloc[0] == pytest.approx(0.3 * BW[chip], rel=1e-12)    # memory roof at 0.3
        assert c.attainable_flop_s.iloc[-1] == pytest.approx(PEAK[chip], rel=1e-12)        # flat roof at 3e4
        at_ridge = c[np.isclose(c.intensity_flop_per_byte, RIDGE[chip], rtol=1e-4)]
        assert len(at_ridge) == 1 and at_ridge.attainable_flop_s.iloc[0] == pytest.approx(PEAK[chip], rel=1e-12)


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
