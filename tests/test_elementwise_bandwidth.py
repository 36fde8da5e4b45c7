"""Elementwise kernels at their measured bandwidth (data/elementwise_bandwidth.toml, issue 29).

Expected values are worked out by hand from the published figures: Liger-Kernel PR 1257 (H100 80GB, 4,096
tokens, bf16 RMSNorm forward, read x and write y: 4 bytes an element) and BabelStream's 2.97 TB/s Triad on
H100 (data/hbm_bandwidth.toml).
"""

from __future__ import annotations

import pytest

from accelbook import training as T
from accelbook.specs.loader import CatalogueError
from accelbook.specs.measured import elementwise_stream_fraction, load_elementwise_bandwidth

STREAM_H100 = 2.97e12
# the two middle of the six achieved bandwidths (TB/s): torch.nn.RMSNorm at hidden 4096 (0.033 ms) and
# Liger's at hidden 4096 (0.029 ms); the others are 1.80, 1.81 (torch 16K, 8K) and 2.63, 2.83 (Liger 8K, 16K)
TORCH_4K = 4 * 4096 * 4096 / 0.033e-3     # 2.0336 TB/s
LIGER_4K = 4 * 4096 * 4096 / 0.029e-3     # 2.3141 TB/s
H100_FRACTION = (TORCH_4K + LIGER_4K) / 2 / STREAM_H100   # 0.7319


def test_h100_fraction_is_the_median_of_the_published_rmsnorm_timings():
    f = elementwise_stream_fraction("h100")
    assert f.fraction == pytest.approx(0.7319, abs=1e-4)
    assert f.fraction == pytest.approx(H100_FRACTION, rel=1e-12)
    assert f.measured_on == ("h100",) and len(f.rows) == 6


def test_each_row_is_bytes_over_time():
    r = {x.id: x for x in load_elementwise_bandwidth()}["h100-rmsnorm-fwd-torch-h16384"]
    assert r.bytes_moved == 4 * 4096 * 16384
    assert r.achieved_bytes_per_s == pytest.approx(268435456 / 0.149e-3, rel=1e-12)   # 1.80 TB/s
    assert r.stream_fraction == pytest.approx(1.8016e12 / STREAM_H100, rel=1e-4)     # 0.607
    assert r.provenance.source.id == "liger-pr-1257-megatron-rmsnorm"


@pytest.mark.parametrize("cid", ["a100", "h200", "mi300x", "tpu-v5p"])
def test_chips_without_a_measurement_borrow_h100s_and_say_so(cid):
    f = elementwise_stream_fraction(cid)
    assert f.fraction == pytest.approx(H100_FRACTION, rel=1e-12)
    assert f.measured_on == ("h100",)
    assert "BORROWED from h100" in f.note


def test_training_elementwise_time_is_bytes_over_the_elementwise_bandwidth():
    # Llama 3.1 8B on 8 H100, tp 1 (no sequence split), one 2,048-token microbatch a rank, 32 layers.
    # Bytes a token a layer: norms 2·2·2·4096 + residuals 2·3·2·4096 = 81,920; RoPE 2·2·(32 + 8)·128 = 20,480;
    # SwiGLU 6·14,336 = 86,016; total 188,416. Forward + backward: ×3.
    e = T.estimate("llama-3.1-8b", "h100", 8, 8 * 2048, 2048, tp=1, pp=1, zero_stage=0, recompute="none")
    nbytes = 3 * 32 * 2048 * 188_416
    assert e.time["t_elementwise_s"] == pytest.approx(nbytes / (STREAM_H100 * H100_FRACTION), rel=1e-9)
    # the same bytes at the STREAM bandwidth would be 1/0.732 = 1.37x faster
    assert e.time["t_elementwise_s"] * STREAM_H100 / nbytes == pytest.approx(1 / 0.7319, rel=1e-4)


def test_malformed_elementwise_file(tmp_path):
    p = tmp_path / "e.toml"
    p.write_text('[x]\nchip = "nochip"\nkernel = "k"\nprovider = "p"\ntokens = 1\nhidden = 1\nbytes_per_element = 4\n'
                 'time_ms = { value = 1, src = "liger-pr-1257-megatron-rmsnorm" }\n')
    with pytest.raises(CatalogueError, match="chip"):
        load_elementwise_bandwidth(p)
    p.write_text('[x]\nchip = "h100"\nkernel = "k"\nprovider = "p"\ntokens = 0\nhidden = 1\nbytes_per_element = 4\n'
                 'time_ms = { value = 1, src = "liger-pr-1257-megatron-rmsnorm" }\n')
    with pytest.raises(CatalogueError, match="tokens"):
        load_elementwise_bandwidth(p)
