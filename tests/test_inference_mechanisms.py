"""The four measured mechanisms of the inference model (issue 15), each checked by hand against its
published figure: achievable HBM bandwidth, GEMM shape efficiency, small-message all-reduce latency, and
host/launch time without CUDA graphs."""

import pytest

from accelbook import inference as I
from accelbook.chip.tiling import gpu_gemm
from accelbook.specs.chips import get_chip
from accelbook.specs.measured import allreduce_latency, launch_overhead_per_layer
from accelbook.specs.models import get_model


def test_decode_reads_the_weights_at_the_measured_hbm_bandwidth_not_the_peak():
    m = get_model("llama-3.1-8b")
    b = I.estimate(m, "h100", 1, 1, 1024, 128, "fp8")
    W = m.params - m.embedding_params + m.d_model                    # fp8, one embedding row
    assert b.breakdown["decode_weights_read_s"] == pytest.approx(W / 2.97e12, rel=1e-12)   # BabelStream Triad
    assert b.breakdown["memory_share"] == pytest.approx(2.97 / 3.35, rel=1e-12)
    assert any("achievable HBM bandwidth" in a for a in b.assumptions)
    what_if = I.estimate(m, "h100", 1, 1, 1024, 128, "fp8", mem_efficiency=0.5)
    assert what_if.breakdown["decode_weights_read_s"] == pytest.approx(W / (0.5 * 3.35e12), rel=1e-12)


def test_one_gemm_shape_by_hand_with_split_k():
    # Llama 2 70B's QKV projection on one of 8 H100s at 128 rows: N = (64 + 2·8)·128 / 8 = 1,280, K = 8,192.
    # 10 tiles of 128×128 on 132 SMs waste the wave (10/132); split 13 ways: 130 tiles, K slices of 631
    assert gpu_gemm(128, 1280, 8192, 132)["efficiency"] == pytest.approx(10 / 132)
    split = 1.0 * (631 / 640) * (130 / 132)
    m, h100 = get_model("llama-2-70b"), get_chip("h100")
    gemms = I.layer_gemms(m, 128, 8)
    assert gemms[0][1:] == (128, 64 * 128 / 8, 8192)                  # q
    eta = I.pass_shape_efficiency(m, h100, 128, 8)
    assert 0.85 < eta < 1.0
    assert gpu_gemm(128, 1280 * 13, 631, 132)["efficiency"] == pytest.approx(split)


def test_prefill_compute_is_divided_by_the_shape_efficiency():
    m, h100 = get_model("llama-2-70b"), get_chip("h100")
    e = I.estimate(m, h100, 8, 1, 2048, 128, "fp8", tp=8)
    eta_gemm = I.gemm_efficiency(h100, "fp8")[0]
    eta = I.pass_shape_efficiency(m, h100, 2048, 8)
    assert e.breakdown["prefill_gemm_shape_efficiency"] == eta
    assert e.breakdown["decode_per_seq_s"] == pytest.approx(
        2 * m.matmul_params_active / 8 / (eta_gemm * h100.peak_dense_flop_s["fp8"] * eta), rel=1e-12)


def test_small_batch_decode_stays_memory_bound_with_short_tiles():
    # one sequence: a 16-row tile, not a 128-row one; the weights' read still binds
    for chip, prec in (("a100", "fp16"), ("h100", "fp8"), ("h200", "fp8")):
        e = I.estimate("llama-2-70b", chip, 4, 1, 128, 128, prec, tp=4)
        assert e.decode_bound == "memory"


def test_allreduce_floor_is_the_nccl_tests_small_message_time():
    # Azure ND H100 v5: busbw 0.53 GB/s at 8 KB on 8 GPUs -> 8,192·2·7/8 / 0.53e9 = 27.05 µs
    ar = allreduce_latency("h100")
    assert ar.latency_s == pytest.approx(8192 * 1.75 / 0.53e9, rel=1e-12) and ar.latency_s == pytest.approx(27.05e-6, rel=1e-3)
    e = I.estimate("llama-2-70b", "h100", 8, 1, 128, 128, "fp8", tp=8)
    assert e.breakdown["allreduce_fixed_s"] == pytest.approx(80 * 2 * ar.latency_s, rel=1e-12)   # 4.33 ms
    assert e.breakdown["allreduce_latency_s"] == ar.latency_s
    # tp 1: nothing to reduce; a chip without a measurement keeps the hop formula and says so
    assert I.estimate("llama-3.1-8b", "h100", 1, 1, 128, 128, "fp8").breakdown["allreduce_fixed_s"] == 0
    assert allreduce_latency("tpu-v5e") is None
    t = I.estimate("llama-3.1-8b", "tpu-v5e", 4, 1, 128, 128, "bf16", tp=4)
    assert any("2(tp-1) hops" in a for a in t.assumptions)
    assert allreduce_latency("h800").borrowed_from == "h100"


def test_cuda_graphs_off_adds_the_measured_host_time_per_layer():
    per_layer, m = launch_overhead_per_layer(False)
    assert per_layer == pytest.approx((95e-3 - 66e-3) / 96, rel=1e-12)   # metaseq: 0.30 ms a layer
    assert launch_overhead_per_layer(True)[0] == 0.0
    on = I.estimate("llama-2-70b", "h100", 8, 1, 128, 128, "fp8", tp=8)
    off = I.estimate("llama-2-70b", "h100", 8, 1, 128, 128, "fp8", tp=8, cuda_graphs=False)
    assert off.tpot_s - on.tpot_s == pytest.approx(80 * per_layer, rel=1e-9)
    assert off.ttft_s - on.ttft_s == pytest.approx(80 * per_layer, rel=1e-9)
    assert any("CUDA graphs on" in a for a in on.assumptions) and any("CUDA graphs off" in a for a in off.assumptions)
    with pytest.raises(ValueError, match="cuda_graphs"):
        I.estimate("llama-2-70b", "h100", 8, 1, 128, 128, "fp8", cuda_graphs="yes")


def test_error_band_of_the_inference_validation():
    band = I.error_band()
    assert set(band) >= {"tokens_per_s_per_chip", "ttft_ms"}
    thr = band["tokens_per_s_per_chip"]
    # 12 TensorRT-LLM rows, 9 vLLM-on-MI300X rows (the tenth, 8B at 2048/2048, is context: it does not fit) and
    # 3 DP-attention rows, and 7 MoE rows of TensorRT-LLM's v1.0 performance overview
    assert thr.n == 31 and thr.lo <= thr.median <= thr.hi
    assert I.error_band("ttft_ms").n == 3 and "over 3 published runs" in I.error_band("ttft_ms").text()
    from accelbook.inference.validation import ErrorBand
    assert ErrorBand("tokens_per_s_per_user", 0.31, 0.31, 0.31, 1).text() == "+31 % on the one published run"
    with pytest.raises(ValueError):
        I.error_band("tokens_per_s_per_user")             # context rows only
