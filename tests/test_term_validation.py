"""The per-term validation table (accelbook.training.term_validation) against data/term_measurements.toml.

Published values are the sources' figures, typed here by hand (Korthikanti et al. 2022, Table 4 and Sec. 6.2;
the QuACK blog post; nccl-tests busbw turned into time by nccl-tests' definition); each model value is compared
with the call the row names, made directly here, or with the ring formula worked by hand.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from accelbook import training
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import get_cluster
from accelbook.specs.loader import CatalogueError
from accelbook.specs.measured import achievable_hbm_fraction
from accelbook.specs.models import get_model
from accelbook.training.communication import data_parallel_collectives
from accelbook.training.records import chip_record

# row id -> the published time in seconds, from the sources' own numbers
HAND = {
    "korthikanti-22b-baseline": 19.6e-3,        # Table 4: 7.7 + 11.9 ms
    "korthikanti-22b-sp": 19.0e-3,              # 7.2 + 11.8
    "korthikanti-22b-full-recompute": 27.2e-3,  # 7.7 + 19.5
    "korthikanti-22b-selective": 20.9e-3,       # 7.7 + 13.2
    "korthikanti-22b-selective-sp": 20.3e-3,    # 7.2 + 13.1
    "korthikanti-22b-full-recompute-overhead": 7.6e-3,   # Sec. 6.2: "7.6ms"
    "korthikanti-22b-selective-overhead": 1.3e-3,        # Sec. 6.2: "1.3ms"
    # QuACK: 16,384 x 131,072 fp32 read + written = 17,179,869,184 B at 3.01 TB/s -> 5.7076 ms
    "quack-softmax-fp32-16k-131k": 17_179_869_184 / 3.01e12,
    "torch-compile-softmax-fp32-16k-131k": 17_179_869_184 / 2.0e12,   # ~2.0 TB/s -> 8.5899 ms
    "liger-softmax-fp32-16k-65k": 8_589_934_592 / 2.0e12,             # ~2.0 TB/s at 65,536 wide
    # collectives: t = f·S / busbw, f = (p-1)/p (all-gather), 2(p-1)/p (all-reduce)
    "nccl-allgather-16g-8xh100": 7 / 8 * 16 * 2**30 / 360e9,                    # 41.76 ms
    "scaling-book-allgather-512mib-8xh100": 1.5e-3,                            # 'about 1.5ms'
    "scaling-book-allreduce-58mb-8xh100": 2 * 7 / 8 * 58_720_256 / 150e9,      # 685 us
    "azure-nvls-allreduce-8k-8xh100": 2 * 7 / 8 * 8192 / 0.53e9,               # 27 us
    "azure-nvls-allreduce-16m-8xh100": 2 * 7 / 8 * 2**24 / 234.45e9,
    "azure-nvls-allreduce-134m-8xh100": 2 * 7 / 8 * 2**27 / 400.61e9,
    "azure-nvls-allreduce-8g-8xh100": 2 * 7 / 8 * 2**33 / 478.87e9,
    "nccl-ring-allreduce-2-nodes-h100": 2 * 15 / 16 * 2**33 / (47e9 * 8),      # 47 GB/s per NIC x 8
    "nccl-allgather-2g-256xh100": 255 / 256 * 2**31 / 200e9,
}
# DeepGEMM README (2025-04-09), H800 FP8: groups x M per group, N, K and TFLOPS; time = 2 G M N K / TFLOPS
DEEPGEMM = {"masked-1x1024-n4096-k7168": (1, 1024, 4096, 7168, 1233), "masked-1x1024-n7168-k2048": (1, 1024, 7168, 2048, 925),
            "masked-2x512-n4096-k7168": (2, 512, 4096, 7168, 1040), "masked-2x512-n7168-k2048": (2, 512, 7168, 2048, 916),
            "masked-4x256-n4096-k7168": (4, 256, 4096, 7168, 932), "masked-4x256-n7168-k2048": (4, 256, 7168, 2048, 815),
            "contiguous-4x8192-n4096-k7168": (4, 8192, 4096, 7168, 1346),
            "contiguous-4x8192-n7168-k2048": (4, 8192, 7168, 2048, 1214),
            "contiguous-8x4096-n4096-k7168": (8, 4096, 4096, 7168, 1346),
            "contiguous-8x4096-n7168-k2048": (8, 4096, 7168, 2048, 1214)}
for _k, (_g, _m, _n, _kk, _tf) in DEEPGEMM.items():
    HAND[f"deepgemm-h800-{_k}"] = 2 * _g * _m * _n * _kk / (_tf * 1e12)
# its CUTLASS 3.6 baseline: DeepGEMM's TFLOPS over the speedup (1.3x, 1.3x, 1.3x, 1.2x), rounded to a TFLOPS
for _k, _tf in (("4x8192-n4096-k7168", 1035), ("4x8192-n7168-k2048", 934), ("8x4096-n4096-k7168", 1035),
                ("8x4096-n7168-k2048", 1012)):
    _g, _m, _n, _kk, _ = DEEPGEMM["contiguous-" + _k]
    HAND[f"cutlass36-h800-contiguous-{_k}"] = 2 * _g * _m * _n * _kk / (_tf * 1e12)
# torchao README, one B200: the times themselves
HAND.update({"torchao-b200-mxfp8-fprop": 1671.2e-6, "torchao-b200-mxfp8-dgrad": 1683.4e-6,
             "torchao-b200-mxfp8-wgrad": 2103.3e-6, "torchao-b200-bf16-fwd-bwd-g1": 13064.8e-6,
             "torchao-b200-bf16-fwd-bwd-g2": 14900.2e-6, "torchao-b200-bf16-fwd-bwd-g4": 15823.6e-6,
             "torchao-b200-bf16-fwd-bwd-g8": 14966.8e-6})
# TileOPs PR 2125, one H200: the permute times themselves (4,096 tokens x top-8, hidden 7,168, bf16)
HAND.update({"tileops-h200-permute-4096x8-h7168": 220.384e-6, "vllm-h200-permute-4096x8-h7168": 274.944e-6})
# DeepEP README (2025-04-22), H800: 4,096 tokens x destinations x 7,168 x bytes (FP8 dispatch 1 + 4/128, bf16 combine 2)
# over the bandwidth; destinations 8 (1 - C(224,8)/C(256,8)) = 5.295 ranks, 1.993 / 3.614 / 3.983 nodes
for _name, _ep, _dst, _bw_d, _bw_c in (("intranode-ep8", 8, 5.295, 153, 158), ("internode-ep16", 16, 1.993, 43, 43),
                                       ("internode-ep32", 32, 3.614, 58, 57), ("internode-ep64", 64, 3.983, 51, 50)):
    HAND[f"deepep-h800-{_name}-dispatch"] = 4096 * _dst * 7168 * 1.03125 / (_bw_d * 1e9)
    HAND[f"deepep-h800-{_name}-combine"] = 4096 * _dst * 7168 * 2 / (_bw_c * 1e9)


@pytest.fixture(scope="module")
def table():
    return training.term_validation_table().set_index("id")


def _22b():
    return dataclasses.replace(get_model("gpt3-175b"), n_layers=48, d_model=6144, n_heads=64, d_ff=24576,
                               vocab_size=51200)


def _layer_s(recompute, sp):
    e = training.estimate(_22b(), "a100", 8, 4 * 2048, 2048, tp=8, microbatch=4, recompute=recompute,
                          sequence_parallel=sp, flash_attention=False)
    parts = ("t_gemm_s", "t_attention_s", "t_elementwise_s", "t_recompute_s", "t_tp_comm_s")
    return sum(e.time[k] for k in parts) / 48


def test_published_values_are_the_sources_figures(table):
    # the gemm, tpu_gemm and fp8_cast rows' figures are checked in their own test files
    assert set(table.index[~table["term"].isin(("gemm", "tpu_gemm", "fp8_cast"))]) == set(HAND)
    for rid, want in HAND.items():
        assert table.loc[rid, "published_s"] == pytest.approx(want, rel=1e-12), rid
    assert table.loc["quack-softmax-fp32-16k-131k", "published_s"] == pytest.approx(5.7076e-3, rel=1e-4)


def test_at_least_six_rows_over_three_terms_with_sources(table):
    assert len(table) >= 6 and set(table["term"]) >= {"layer", "recompute", "elementwise", "gemm", "tpu_gemm", "fp8_cast",
                                                           "collective", "grouped_gemm", "all_to_all", "permute"}
    assert table["source"].str.len().gt(10).all() and table["case"].str.len().gt(10).all()


def test_layer_rows_are_the_estimate_of_the_published_layout(table):
    for rid, rec, sp in (("korthikanti-22b-baseline", "none", False), ("korthikanti-22b-sp", "none", True),
                         ("korthikanti-22b-full-recompute", "full", False),
                         ("korthikanti-22b-selective", "selective", False),
                         ("korthikanti-22b-selective-sp", "selective", True)):
        assert table.loc[rid, "model_s"] == pytest.approx(_layer_s(rec, sp), rel=1e-12), rid


def test_recompute_rows_are_the_difference_of_two_estimates(table):
    base = _layer_s("none", False)
    assert table.loc["korthikanti-22b-full-recompute-overhead", "model_s"] == pytest.approx(
        _layer_s("full", False) - base, rel=1e-12)
    assert table.loc["korthikanti-22b-selective-overhead", "model_s"] == pytest.approx(
        _layer_s("selective", False) - base, rel=1e-12)
    assert (table.loc[table["term"] == "recompute", "model_s"] > 0).all()


def test_elementwise_rows_stream_at_the_training_kernels_bandwidth(table):
    h100 = get_chip("h100")
    bw = h100.hbm_bw_bytes_per_s * achievable_hbm_fraction(h100).fraction
    assert bw == pytest.approx(2.97e12, rel=1e-3)     # BabelStream Triad on H100 (data/hbm_bandwidth.toml)
    # elementwise kernels at 0.732 of it: the median of Liger PR 1257's six H100 RMSNorm forward timings,
    # (4·4096² B / 0.033 ms + 4·4096² B / 0.029 ms) / 2 = 2.174 TB/s (data/elementwise_bandwidth.toml)
    elem = (4 * 4096 * 4096 / 0.033e-3 + 4 * 4096 * 4096 / 0.029e-3) / 2
    assert table.loc["quack-softmax-fp32-16k-131k", "model_s"] == pytest.approx(17_179_869_184 / elem, rel=1e-3)
    # against QuACK's 3.01 TB/s: 3.01 / 2.174 - 1 = +38.5 %; against torch.compile's 2.0 TB/s: -8.0 %
    assert table.loc["quack-softmax-fp32-16k-131k", "error"] == pytest.approx(3.01e12 / elem - 1, abs=2e-3)
    assert table.loc["torch-compile-softmax-fp32-16k-131k", "error"] == pytest.approx(-0.080, abs=2e-3)


def test_collective_rows_are_the_training_rings_worked_by_hand(table):
    # dgx-h100: NVLink 450 GB/s x 0.82 = 369 GB/s a GPU, 3.4 us a ring step; NDR 50 GB/s x 0.82 = 41 GB/s, 14 us
    b_dom, a_dom, b_net, a_net = 450e9 * 0.82, 3.4e-6, 50e9 * 0.82, 14e-6
    # 512 MiB all-gather on one node: 7 steps + 7/8 of S over the link: 23.8 us + 1.2731 ms = 1.2969 ms
    S = 2**29
    assert table.loc["scaling-book-allgather-512mib-8xh100", "model_s"] == pytest.approx(
        7 * a_dom + 7 / 8 * S / b_dom, rel=1e-12)
    assert table.loc["scaling-book-allgather-512mib-8xh100", "model_s"] == pytest.approx(1.2969e-3, rel=1e-4)
    # all-reduce of 8 GiB over 2 nodes: one ring through all 16 GPUs per rail (NCCL), 2·15 steps at the
    # network's 14 us; each rail's 1/8 of the data leaves through one 41 GB/s NIC, which binds
    # (7/8 / 369e9 = 2.37e-12 < 1 / (8·41e9) = 3.05e-12 s/B): 0.42 ms + 2·15/16·S·3.05e-12 = 49.52 ms
    # (NCCL's measured ring: 42.8 ms; a node ring then a network ring, one after the other, was 67.0 ms)
    S = 2**33
    flat = 2 * 15 * a_net + 2 * 15 / 16 * S / (8 * b_net)
    assert table.loc["nccl-ring-allreduce-2-nodes-h100", "model_s"] == pytest.approx(flat, rel=1e-12)
    assert table.loc["nccl-ring-allreduce-2-nodes-h100", "model_s"] == pytest.approx(49.52e-3, rel=1e-3)
    # 256 ranks, 8 in each of 32 nodes: 255 steps of 14 us (3.57 ms) + 255/256·S at 8 NICs: 10.09 ms
    S = 2**31
    assert table.loc["nccl-allgather-2g-256xh100", "model_s"] == pytest.approx(
        255 * a_net + 255 / 256 * S / (8 * b_net), rel=1e-12)
    assert table.loc["nccl-allgather-2g-256xh100", "model_s"] == pytest.approx(10.09e-3, rel=1e-3)


def test_zero3_gathers_layer_by_layer_by_hand():
    # 1e9 parameters a chip over 16 H100s of two DGX nodes (stride 1), bf16 weights: one layer-sized gather of
    # 2e9/80 = 25 MB is 15 steps of 14 us + 15/16·25e6 B over 8 NICs of 41 GB/s = 210 + 71.46 us; 80 of them
    # 22.52 ms, against 5.93 ms for the whole 2 GB at once (the same bytes, 79 more rings' latency)
    cl = get_cluster("dgx-h100")
    c, _ = chip_record(cl.chip, cl, "bf16")
    one = data_parallel_collectives(c, 1e9, 0.0, 16.0, 1.0, 1.0, 1.0, 1.0, 3, 1.0)[1]
    per_layer = data_parallel_collectives(c, 1e9, 0.0, 16.0, 1.0, 1.0, 1.0, 1.0, 3, 80.0)[1]
    assert one == pytest.approx(15 * 14e-6 + 15 / 16 * 2e9 / (8 * 41e9), rel=1e-12)
    assert per_layer == pytest.approx(80 * (15 * 14e-6 + 15 / 16 * 25e6 / (8 * 41e9)), rel=1e-12)
    assert per_layer == pytest.approx(22.52e-3, rel=1e-3)
    # ZeRO-1 and ZeRO-2 reduce buckets as they come: n_units does not apply
    assert data_parallel_collectives(c, 1e9, 0.0, 16.0, 1.0, 1.0, 1.0, 1.0, 1, 80.0)[1] == pytest.approx(one, rel=1e-12)


def test_error_is_model_over_published_minus_one(table):
    for rid, r in table.iterrows():
        assert r["error"] == pytest.approx(r["model_s"] / r["published_s"] - 1, rel=1e-12), rid
        assert math.isfinite(r["error"])


def test_worst_term_is_the_largest_median_abs_error(table):
    t = table.reset_index()
    med = {term: t.loc[t["term"] == term, "error"].abs().median() for term in set(t["term"])}
    assert training.worst_term(t) == max(med, key=med.get)
    assert training.term_errors(t).iloc[0] == pytest.approx(max(med.values()))


def _write(tmp_path, body: str):
    p = tmp_path / "terms.toml"
    p.write_text(body, encoding="utf-8")
    return p


GOOD_ELEMENTWISE = '''[k]
term = "elementwise"
case = "a kernel"
chip = "h100"
bytes_moved = 1e9
published_tb_s = { value = 2.5, src = "quack-membound-blog" }
'''


GOOD_COLLECTIVE = '''[k]
term = "collective"
case = "an all-gather"
chip = "h100"
collective = "all_gather"
message_bytes = 1e9
ranks = 8
published_busbw_gb_s = { value = 350, src = "nccl-tests-issue-326" }
'''


def test_a_collective_row_turns_busbw_into_nccl_tests_time(tmp_path):
    t = training.term_validation_table(_write(tmp_path, GOOD_COLLECTIVE))
    assert t["published_s"].iloc[0] == pytest.approx(7 / 8 * 1e9 / 350e9, rel=1e-12)   # 2.5 ms
    assert t["model_s"].iloc[0] == pytest.approx(7 * 3.4e-6 + 7 / 8 * 1e9 / 369e9, rel=1e-12)


def test_a_users_file_is_read(tmp_path):
    t = training.term_validation_table(_write(tmp_path, GOOD_ELEMENTWISE))
    assert t["published_s"].iloc[0] == pytest.approx(1e9 / 2.5e12)


@pytest.mark.parametrize("bad, key", [
    (GOOD_ELEMENTWISE.replace('term = "elementwise"', 'term = "bubble"'), "term"),
    (GOOD_ELEMENTWISE.replace("bytes_moved = 1e9", "bytes_moved = -1"), "bytes_moved"),
    (GOOD_ELEMENTWISE.replace("bytes_moved = 1e9\n", ""), "bytes_moved"),
    (GOOD_ELEMENTWISE.replace('src = "quack-membound-blog"', 'src = "nowhere"'), "published_tb_s"),
    (GOOD_ELEMENTWISE.replace("published_tb_s = { value = 2.5, src = \"quack-membound-blog\" }", "published_tb_s = 2.5"),
     "published_tb_s"),
    (GOOD_ELEMENTWISE + "extra_ms = 1\n", "extra_ms"),
    (GOOD_COLLECTIVE.replace('"all_gather"', '"broadcast"'), "collective"),
    (GOOD_COLLECTIVE.replace("ranks = 8", "ranks = 1"), "ranks"),
    (GOOD_COLLECTIVE.replace("ranks = 8", "ranks = 8.5"), "ranks"),
    (GOOD_COLLECTIVE.replace("message_bytes = 1e9", "message_bytes = 0"), "message_bytes"),
    (GOOD_COLLECTIVE + 'published_ms = { value = 1, src = "nccl-tests-issue-326" }\n', "published_busbw_gb_s"),
    (GOOD_COLLECTIVE.replace('published_busbw_gb_s = { value = 350, src = "nccl-tests-issue-326" }\n', ""),
     "published_busbw_gb_s"),
    ('[k]\nterm = "layer"\ncase = "x"\nchip = "a100"\nmodel = "gpt3-175b"\nlayout = { tp = 8 }\n'
     'published_ms = { value = 1, src = "korthikanti-2022-table4" }\n', "layout"),
])
def test_a_malformed_row_names_its_key(tmp_path, bad, key):
    with pytest.raises(CatalogueError) as err:
        training.term_measurements(_write(tmp_path, bad))
    assert err.value.key == key and "[k]" in str(err.value)
