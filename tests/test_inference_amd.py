"""Off-NVIDIA serving (issue 30): the all-reduce on 8 MI300X charged at RCCL's measured time for its message
size, and the MI300X GEMMs at hipBLASLt's measured FP8 rate. Expected values worked out by hand from the
published tables (data/allreduce_latency.toml, data/matmul_efficiency.toml: Azure ND MI300X v5)."""

import pytest

from accelbook import inference as I
from accelbook.inference.validation import published_results
from accelbook.specs.loader import CatalogueError
from accelbook.specs.measured import allreduce_latency, load_allreduce_latency


def _t(size, busbw_gb_s):
    """rccl-tests' busbw inverted for 8 GPUs: t = S·2·7/8 / busbw."""
    return size * 1.75 / (busbw_gb_s * 1e9)


def test_mi300x_floor_is_rccl_tests_8_kb_time():
    ar = allreduce_latency("mi300x")
    assert (ar.n_gpus, ar.message_bytes) == (8, 8192)
    assert ar.latency_s == pytest.approx(8192 * 1.75 / 0.29e9, rel=1e-12)     # 49.4 µs
    assert len(ar.curve_bytes) == 24 and ar.curve_bytes[0] == 1024 and ar.curve_bytes[-1] == 2**33


def test_line_at_is_the_segment_holding_the_size():
    ar = allreduce_latency("mi300x")
    # 6 MiB lies between the 4 MiB (82.53 GB/s) and 8 MiB (131.57 GB/s) points
    t4, t8 = _t(4 * 2**20, 82.53), _t(8 * 2**20, 131.57)                   # 88.9 and 111.6 µs
    a, k = ar.line_at(6 * 2**20)
    assert k == pytest.approx((t8 - t4) / (4 * 2**20), rel=1e-12)
    assert a + k * 6 * 2**20 == pytest.approx((t4 + t8) / 2, rel=1e-12)
    a, k = ar.line_at(4 * 2**20)                                              # a measured size: its own time
    assert a + k * 4 * 2**20 == pytest.approx(t4, rel=1e-12)
    assert ar.line_at(512) == (pytest.approx(_t(1024, 0.04), rel=1e-12), 0.0)  # below the table: its first time
    a, k = ar.line_at(2**34)                                                  # above: the last segment extended
    assert k == pytest.approx((_t(2**33, 316.82) - _t(2**32, 314.85)) / 2**32, rel=1e-12)
    with pytest.raises(ValueError, match="no measured all-reduce curve"):
        allreduce_latency("h100").line_at(1e6)


def test_decode_all_reduce_on_8_mi300x_at_its_message_size():
    # Llama 3.1 70B (80 layers, d = 8,192) on 8 MI300X at 256 sequences: each of 160 all-reduces a step
    # carries 256·8,192·2 B = 4 MiB, 88.9 µs on the curve: 14.2 ms
    e = I.estimate("llama-3.1-70b", "mi300x", 8, 256, 128, 2048, "fp8", tp=8)
    assert e.breakdown["decode_comm_s"] == pytest.approx(160 * _t(4 * 2**20, 82.53), rel=1e-9)
    assert any("measured time at its message size" in a for a in e.assumptions)
    # a prompt of 128 tokens: 2 MiB per all-reduce, 84.5 µs
    assert e.breakdown["prefill_comm_s"] == pytest.approx(160 * _t(2 * 2**20, 43.41), rel=1e-9)


def test_fewer_mi300x_than_measured_keep_the_floor_and_link_rate():
    # tp = 2 is not the 8-GPU group measured: the 49.4 µs floor plus the bytes at 448 GB/s a direction
    e = I.estimate("llama-3.1-70b", "mi300x", 2, 16, 128, 128, "fp8", tp=2)
    per_tok = 160 * 2 * (1 / 2) * 8192 * 2 / 448e9
    assert e.breakdown["allreduce_fixed_s"] == pytest.approx(160 * 8192 * 1.75 / 0.29e9, rel=1e-12)
    assert e.breakdown["allreduce_per_token_s"] == pytest.approx(per_tok, rel=1e-12)


def test_mi300x_fp8_gemms_at_hipblaslt_rate():
    e = I.estimate("llama-3.1-8b", "mi300x", 1, 1, 128, 128, "fp8")
    assert any("fp8 efficiency 44% of peak, measured on this chip" in a for a in e.assumptions)   # 1159.23 / 2614.9


def test_amd_rows_are_marked_check_or_held_out():
    runs = published_results()
    amd = {k: v for k, v in runs.items() if v["chip"] == "mi300x"}
    assert len(amd) >= 3
    assert {v.get("set") for v in amd.values()} == {"check", "held-out"}
    assert runs["vllm-mi300x-70b-tp8-128-2048"]["reported_value"] == pytest.approx(12204 / 8)


def _err(tmp_path, text):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(CatalogueError) as e:
        load_allreduce_latency(p)
    assert str(p) in str(e.value)
    return e.value


def test_malformed_curve_names_the_key(tmp_path):
    head = ('[mi300x]\nn_gpus = 8\nmessage_bytes = 8192\n'
            'busbw_gb_s = { value = 0.29, src = "azure-aibench-nd-mi300x-v5" }\n')
    e = _err(tmp_path, head + 'busbw_curve = { sizes_bytes = [2048, 1024], gb_s = [0.1, 0.2], '
             'src = "azure-aibench-nd-mi300x-v5", date = "2025-02" }\n')
    assert (e.entry, e.key) == ("mi300x", "busbw_curve") and "increasing" in e.problem
    e = _err(tmp_path, head + 'busbw_curve = { sizes_bytes = [1024, 2048], gb_s = [0.1], '
             'src = "azure-aibench-nd-mi300x-v5", date = "2025-02" }\n')
    assert e.key == "busbw_curve"
    e = _err(tmp_path, head + 'busbw_curve = { sizes_bytes = [1024, 2048], gb_s = [0.1, 0.2], '
             'src = "no-such-source", date = "2025-02" }\n')
    assert e.key == "busbw_curve" and "sources.toml" in e.problem
    e = _err(tmp_path, head + 'busbw_curve = [1, 2]\n')
    assert e.key == "busbw_curve"


def test_curve_times_never_fall_with_size():
    # the table's 2 KB time (2048·1.75/0.07e9 = 51.2 µs) is above its 4 KB and 8 KB times (47.8, 49.4 µs):
    # those are read as 51.2 µs, so no segment has a negative bytes term
    ar = allreduce_latency("mi300x")
    assert ar.curve_s[2] == ar.curve_s[3] == pytest.approx(_t(2048, 0.07), rel=1e-12)
    assert all(b >= a for a, b in zip(ar.curve_s, ar.curve_s[1:]))
    assert all(ar.line_at(S)[1] >= 0 for S in (1e3, 5e3, 1.2e4, 1e6, 1e9, 1e11))
