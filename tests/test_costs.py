"""The shared cost mechanisms (:mod:`accelbook.costs`) against numbers worked by hand."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_costs import gemm_eta_reference

from accelbook.chip.roofline import layer_ops
from accelbook.costs.elementwise import elementwise_bytes, kv_heads_per_chip, routed_ffn_width
from accelbook.costs.experts import touched_expert_share
from accelbook.costs.gemm import DEFAULT_MXU, DEFAULT_N_MXU, DEFAULT_SMS, chip_gemm_units, gemm_shape_efficiency
from accelbook.costs.hierarchical import (
    ALL_GATHER,
    ALL_REDUCE,
    ALL_TO_ALL,
    SEND,
    collective_time_s,
    domain_ring_bandwidth,
    domain_split,
)
from accelbook.specs.chips import get_chip

H100 = (False, 132.0, 128.0, 4.0)


# -- gemm -----------------------------------------------------------------------------------------------------
def test_split_k_by_hand():
    # 128×1280×8192 on 132 SMs: 1×10 tiles of 128×128, one wave: plain 10/132. Split-K: s = min(132 // 10, 8192 // 64)
    # = 13 slices of ceil(8192/13) = 631: [128×631]·[631×16640] is 130 tiles, η_k = 631/640, η_wave = 130/132
    assert gemm_shape_efficiency(128.0, 1280.0, 8192.0, *H100) == pytest.approx(631 / 640 * 130 / 132, rel=1e-15)


def test_short_tiles_by_hand():
    # one row: 16-row tiles, 64 of them (η_tile 1/16, η_wave 64/132); split 2 ways: 128 tiles, (1/16)·(128/132)
    assert gemm_shape_efficiency(1.0, 8192.0, 8192.0, *H100) == pytest.approx(8 / 132, rel=1e-15)
    # 17 rows take 32-row tiles: 17/32 of one tile on one of 132 SMs; K = 64 leaves nothing to split
    assert gemm_shape_efficiency(17.0, 128.0, 64.0, *H100) == pytest.approx(17 / 32 / 132, rel=1e-15)
    # fractions round up: 0.5 × 2047.5 × 64 is 1 × 2048 × 64, 16 tiles of 16 rows: (1/16)·(16/132)
    assert gemm_shape_efficiency(0.5, 2047.5, 64.0, *H100) == pytest.approx(1 / 132, rel=1e-15)


def test_large_gemm_by_hand():
    # tiling's docstring: 2048³ is 256 tiles of 128×128 in 2 waves of 132: 256/264; no split (tiles > SMs)
    assert gemm_shape_efficiency(2048.0, 2048.0, 2048.0, *H100) == pytest.approx(256 / 264, rel=1e-15)


def test_tpu_folds_by_hand():
    # 128 rows through [256×256] weights on 128×128 MXUs: 4 folds of 2·128 + 128 + 128 - 2 = 510 cycles;
    # 4 MXUs: one wave, η = 128·256·256 / (510·128²·4) = 128/510; 2 MXUs: two waves of 2, the same;
    # 8 MXUs: one wave with 4 idle, 64/510
    assert gemm_shape_efficiency(128.0, 256.0, 256.0, True, 132.0, 128.0, 4.0) == pytest.approx(128 / 510, rel=1e-15)
    assert gemm_shape_efficiency(128.0, 256.0, 256.0, True, 132.0, 128.0, 2.0) == pytest.approx(128 / 510, rel=1e-15)
    assert gemm_shape_efficiency(128.0, 256.0, 256.0, True, 132.0, 128.0, 8.0) == pytest.approx(64 / 510, rel=1e-15)


@settings(max_examples=200, deadline=None)
@given(M=st.integers(1, 20_000), N=st.integers(1, 40_000), K=st.integers(1, 20_000),
       sms=st.sampled_from([108, 132, 148, 304]), tpu=st.booleans())
def test_gemm_shape_efficiency_is_its_docstring_rule(M, N, K, sms, tpu):
    eta = gemm_shape_efficiency(float(M), float(N), float(K), tpu, float(sms), 128.0, 4.0)
    assert 0.0 < eta <= 1.0
    assert eta == pytest.approx(gemm_eta_reference(M, N, K, tpu, sms, 128, 4), rel=1e-12)


def test_chip_gemm_units_and_defaults():
    assert (DEFAULT_SMS, DEFAULT_MXU, DEFAULT_N_MXU) == (132, 128, 4)
    h100 = get_chip("h100")
    assert chip_gemm_units(h100) == (False, h100.compute_units, DEFAULT_MXU, DEFAULT_N_MXU)
    assert chip_gemm_units(dataclasses.replace(h100, compute_units=None))[1] == 132
    v5p = get_chip("tpu-v5p")
    assert chip_gemm_units(v5p) == (True, DEFAULT_SMS, v5p.mxu_rows, v5p.mxu_count)
    assert chip_gemm_units(dataclasses.replace(v5p, mxu_count=None, mxu_rows=None))[2:] == (128, 4)


# -- experts --------------------------------------------------------------------------------------------------
def test_touched_expert_share_by_hand():
    assert touched_expert_share(2, 8, 1) == 0.25                  # one token touches its 2 of 8
    assert touched_expert_share(2, 8, 2) == 1 - 0.75**2 == 0.4375
    assert touched_expert_share(2, 8, 0) == 0.0
    assert touched_expert_share(8, 8, 5) == 1.0
    assert 0.9999 < touched_expert_share(2, 8, 40) < 1.0


def test_roofline_routed_experts_read_the_touched_experts():
    # Mixtral 8x7B decode, one sequence, bf16: 8·0.25 = 2 experts of 3·4096·14336 weights read, plus the
    # routed activations 1·2·(2·4096 + 3·14336) elements, 2 bytes each
    op = next(o for o in layer_ops("mixtral-8x7b", "decode", 1, 128) if o.name == "routed experts")
    assert op.bytes == 2 * 3 * 4096 * 14336 * 2 + 2 * (2 * 4096 + 3 * 14336) * 2


# -- hierarchical collectives ---------------------------------------------------------------------------------
def test_ring_all_reduce_on_8_chips_by_hand():
    # 1 GB over 8 chips of one 8-chip switched domain, 450 GB/s, 5 µs a step: 2·7·5 µs + 2·(7/8)·1e9/450e9
    t = collective_time_s(ALL_REDUCE, 1e9, 8.0, 1.0, 8.0, 450e9, 0.0, 5e-6, 50e9, 10e-6)
    assert t == pytest.approx(70e-6 + 1.75e9 / 450e9, rel=1e-12)
    # an all-gather is one pass: half the steps and bytes
    t = collective_time_s(ALL_GATHER, 1e9, 8.0, 1.0, 8.0, 450e9, 0.0, 5e-6, 50e9, 10e-6)
    assert t == pytest.approx(35e-6 + 0.875e9 / 450e9, rel=1e-12)


def test_two_level_all_reduce_by_hand():
    # 16 ranks on two switched 8-chip domains (NCCL): one ring through all 16 per rail, 2·15 steps at the
    # network's 10 µs; each rail's 1/8 of the data on one 50 GB/s NIC binds (7/8 / 450e9 < 1 / (8·50e9)):
    # 0.3 ms + 2·15/16·1e9 / 400e9 = 0.3 + 4.6875 ms
    t = collective_time_s(ALL_REDUCE, 1e9, 16.0, 1.0, 8.0, 450e9, 0.0, 5e-6, 50e9, 10e-6)
    assert t == pytest.approx(2 * 15 * 10e-6 + 2 * 15 / 16 * 1e9 / (8 * 50e9), rel=1e-12)
    assert t == pytest.approx(4.9875e-3, rel=1e-12)
    # a slow domain binds instead: 100 GB/s links, 7/8 / 100e9 > 1 / (8·50e9)
    t = collective_time_s(ALL_GATHER, 1e9, 16.0, 1.0, 8.0, 100e9, 0.0, 5e-6, 50e9, 10e-6)
    assert t == pytest.approx(15 * 10e-6 + 15 / 16 * 1e9 * 7 / 8 / 100e9, rel=1e-12)
    # two torus domains (TPU slices over the data-centre network) stay hierarchical: a ring of 8 inside
    # (2 links of the one axis it spans), then a ring of 2 domains over S/8 on the network
    t = collective_time_s(ALL_REDUCE, 1e9, 16.0, 1.0, 8.0, 45e9, 1.0, 5e-6, 50e9, 10e-6)
    inner = 2 * 7 * 5e-6 + 2 * 7 / 8 * 1e9 / 90e9
    outer = 2 * 1 * 10e-6 + 2 * 1 / 2 * 1.25e8 / 50e9
    assert t == pytest.approx(inner + outer, rel=1e-12)
    # a group at a whole domain's stride is the network ring either way: 15 steps, 15/16 of S on the NIC
    t = collective_time_s(ALL_GATHER, 1e9, 16.0, 8.0, 8.0, 450e9, 0.0, 5e-6, 50e9, 10e-6)
    assert t == pytest.approx(15 * 10e-6 + 15 / 16 * 1e9 / 50e9, rel=1e-12)
    # stride 4 on 8-chip domains: 2 members a domain, 2 domains for a group of 4
    assert domain_split(4.0, 4.0, 8.0) == (2.0, 2)


def test_all_to_all_send_and_torus_by_hand():
    # DeepSeek-V3, one token's 8 experts of d 7168 in bf16 (114,688 bytes) over 8 ranks: 7/8 of it at 450 GB/s + 7 µs
    S = 8 * 7168 * 2
    t = collective_time_s(ALL_TO_ALL, float(S), 8.0, 1.0, 8.0, 450e9, 0.0, 1e-6, 450e9, 1e-6)
    assert t == pytest.approx(S * 7 / 8 / 450e9 + 7e-6, rel=1e-12)
    # a send to the next domain (stride 8 on 8-chip domains) goes on the network; inside, on the domain
    assert collective_time_s(SEND, 1e6, 2.0, 8.0, 8.0, 450e9, 0.0, 5e-6, 50e9, 10e-6) == pytest.approx(1e6 / 50e9 + 10e-6)
    assert collective_time_s(SEND, 1e6, 2.0, 1.0, 8.0, 450e9, 0.0, 5e-6, 50e9, 10e-6) == pytest.approx(1e6 / 450e9 + 5e-6)
    assert collective_time_s(ALL_REDUCE, 1e9, 1.0, 1.0, 8.0, 450e9, 0.0, 5e-6, 50e9, 10e-6) == 0.0
    # a 16×16×16 torus of 45 GB/s links: 256 chips span 2 axes, 2 links each: 180 GB/s; a switch: the port
    assert domain_ring_bandwidth(256.0, 4096.0, 45e9, 3.0) == pytest.approx(180e9)
    assert domain_ring_bandwidth(256.0, 4096.0, 45e9, 0.0) == 45e9


# -- elementwise ----------------------------------------------------------------------------------------------
def test_elementwise_bytes_by_hand():
    # Llama 3.1 70B (d 8192, 64 heads, 8 K/V heads of 128, d_v 8192, SwiGLU 28,672), one token, one chip, fp8
    one = elementwise_bytes(1.0, 8192.0, 64.0, 8.0, 128.0, 3.0, 8192.0, 28672.0, 1.0, 1.0, True)
    assert one == 20 * 8192 + 4 * 72 * 128 + 6 * 28672 + 3 * (3 * 8192 + 28672) == 532_480
    # over 8 chips, sequence parallel: norms split 8 ways, 8 + 1 heads of RoPE, the FFN and casts split
    eight = elementwise_bytes(1.0, 8192.0, 64.0, 1.0, 128.0, 3.0, 8192.0, 28672.0, 8.0, 8.0, True)
    assert eight == 20 * 8192 / 8 + 4 * 9 * 128 + 6 * 28672 / 8 + 3 * (8192 + 1024 + 8192 + 28672 / 8)
    # bf16 GEMMs cast nothing; T tokens are T times one
    assert elementwise_bytes(3.0, 8192.0, 64.0, 8.0, 128.0, 3.0, 8192.0, 28672.0, 1.0, 1.0, False) == 3 * (
        20 * 8192 + 4 * 72 * 128 + 6 * 28672)


def test_kv_heads_and_routed_width_by_hand():
    assert kv_heads_per_chip(8.0, 16.0) == 1.0 and kv_heads_per_chip(8.0, 4.0) == 2.0
    assert routed_ffn_width(0.0, 28672.0, 1.0, 0.0, 0.0) == 28672.0                 # dense
    assert routed_ffn_width(1.0, 14336.0, 2.0, 0.0, 14336.0) == 28672.0             # Mixtral: 2 of 14,336
    # DeepSeek-V3: 3 dense layers of 18,432 and 58 MoE layers of 8 routed + 1 shared of 2,048
    assert routed_ffn_width(58 / 61, 18432.0, 8.0, 1.0, 2048.0) == pytest.approx((3 * 18432 + 58 * 9 * 2048) / 61)


# -- the layering this package exists for ---------------------------------------------------------------------
_PKG = Path(__file__).resolve().parent.parent / "accelbook"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    out += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
    return out


def test_inference_imports_nothing_from_training():
    bad = [(p.name, m) for p in (_PKG / "inference").rglob("*.py") for m in _imports(p)
           if m == "accelbook.training" or m.startswith("accelbook.training.")]
    assert not bad, bad

