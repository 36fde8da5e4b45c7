"""Inference model: KV cache, memory fit and min_chips by hand; decode TPOT against the memory
roofline by hand; relations between the returned fields (per user, per chip, static batching,
power, tokens/kW, cost); behaviour (batch, bandwidth, tp, pp, input length, MoE); sweep, search,
Pareto front against a brute-force dominance check; the validation table; errors."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelbook import inference as I
from accelbook.specs.chips import get_chip
from accelbook.specs.loader import DATA_DIR
from accelbook.specs.models import get_model

ETA_MEM = 4.15e12 / 4.8e12   # H200: BabelStream Triad 4.15 TB/s of 4.8 (data/hbm_bandwidth.toml), what reads reach
HBM_USABLE = 0.9        # 10% reserve on HBM chips

# Llama 3.1 70B and Llama 2 70B, from data/models.toml (both: 80 layers, 8 KV heads of 128)
L70, KV_HEADS_70, D_HEAD_70 = 80, 8, 128
# catalogue numbers (data/chips.toml)
# HBM: the drivers' totals, nvidia-smi's 81,559 MiB (H100 80GB, NVIDIA/nccl#1264) and 143,771 MiB (H200 141GB,
# NVIDIA/cuda-samples#311): GPU memory is binary, so not 80e9 and 141e9 bytes (issue 28)
H100_HBM, H200_HBM = 81559 * 2**20, 143771 * 2**20
H200_BW = 4.8e12
LPU_SRAM = 230e6
H200_TDP, H200_PRICE = 700.0, 10.0


def _kv_per_token(bytes_per_el):
    return 2 * L70 * KV_HEADS_70 * D_HEAD_70 * bytes_per_el


def test_catalogue_numbers_used_below():
    for mid in ("llama-3.1-70b", "llama-2-70b"):
        m = get_model(mid)
        assert (m.n_layers, m.kv_heads, m.d_head) == (L70, KV_HEADS_70, D_HEAD_70)
    assert get_chip("h100").hbm_bytes == H100_HBM
    h200 = get_chip("h200")
    assert (h200.hbm_bytes, h200.hbm_bw_bytes_per_s, h200.tdp_w) == (H200_HBM, H200_BW, H200_TDP)
    assert h200.price_usd_per_hour == pytest.approx(H200_PRICE)
    lpu = get_chip("groq-lpu-v1")
    assert lpu.hbm_bytes is None and lpu.sram_bytes == LPU_SRAM and lpu.tdp_w is None


# -- 1. memory by hand -------------------------------------------------------------------------------
@pytest.mark.parametrize("prec,bpe", [("bf16", 2), ("fp8", 1)])
@pytest.mark.parametrize("B,s_in,s_out", [(1, 128, 128), (7, 2048, 512), (64, 4096, 4096)])
def test_kv_cache_bytes_llama31_70b_gqa(prec, bpe, B, s_in, s_out):
    e = I.estimate("llama-3.1-70b", "h200", 8, B, s_in, s_out, prec, tp=8)
    assert e.kv_cache_bytes == pytest.approx(_kv_per_token(bpe) * B * (s_in + s_out), rel=1e-12)
    # 2·80·8·128·2 = 327,680 bytes per token in bf16
    if prec == "bf16":
        assert e.kv_cache_bytes / (B * (s_in + s_out)) == pytest.approx(327_680)


def test_kv_precision_defaults_follow_the_weights_and_can_be_set():
    fp8 = I.estimate("llama-3.1-70b", "h200", 1, 4, 100, 100, "fp8")
    assert fp8.kv_cache_bytes == pytest.approx(4 * 200 * _kv_per_token(1))
    bf = I.estimate("llama-3.1-70b", "h200", 1, 4, 100, 100, "fp8", kv_precision="bf16")
    assert bf.kv_cache_bytes == pytest.approx(4 * 200 * _kv_per_token(2))


def _hand_max_batch(model, hbm, bpe_w, bpe_kv, tp, pp, ctx, reserve=True):
    m = get_model(model)
    usable = Fraction(hbm) * (Fraction(9, 10) if reserve else 1)
    w = Fraction(m.params) * Fraction(bpe_w) / (tp * pp)
    kv_chip = Fraction(_kv_per_token(bpe_kv)) / (min(tp, KV_HEADS_70) * pp)
    return max(0, math.floor((usable - w) / (ctx * kv_chip)))


@settings(max_examples=60, deadline=None)
@given(chip=st.sampled_from([("h100", H100_HBM), ("h200", H200_HBM)]),
       prec=st.sampled_from([("bf16", 2), ("fp8", 1)]),
       tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2]),
       s_in=st.integers(1, 32768), s_out=st.integers(1, 8192))
def test_max_batch_size_is_the_hand_formula_and_fits_flips_there(chip, prec, tp, pp, s_in, s_out):
    (cid, hbm), (p, bpe) = chip, prec
    want = _hand_max_batch("llama-3.1-70b", hbm, bpe, bpe, tp, pp, s_in + s_out)
    e = I.estimate("llama-3.1-70b", cid, tp * pp, 1, s_in, s_out, p, tp=tp, pp=pp)
    assert e.max_batch_size == want
    assert e.memory_capacity_bytes == pytest.approx(HBM_USABLE * hbm)
    if want >= 1:
        assert I.estimate("llama-3.1-70b", cid, tp * pp, want, s_in, s_out, p, tp=tp, pp=pp).fits
    assert not I.estimate("llama-3.1-70b", cid, tp * pp, want + 1, s_in, s_out, p, tp=tp, pp=pp).fits


def test_max_batch_worked_number_h200_fp8():
    # (0.9 · 143,771 MiB − 70.55e9) / (256 · 163,840) = (135.68e9 − 70.55e9) / 41.94e6 = 1,552.7 → 1,552 sequences
    # of 128+128 tokens (1,343 when the H200's "141GB" was read as 141e9 bytes)
    m = get_model("llama-3.1-70b")
    want = math.floor((0.9 * H200_HBM - m.params) / (256 * 163_840))
    assert want == 1552
    e = I.estimate(m, "h200", 1, 1, 128, 128, "fp8")
    assert e.max_batch_size == want
    assert e.breakdown["weights_per_chip_bytes"] == pytest.approx(m.params)


def test_kv_heads_are_replicated_beyond_tp_equal_kv_heads():
    e8 = I.estimate("llama-3.1-70b", "h100", 8, 16, 1000, 1000, "bf16", tp=8)
    e16 = I.estimate("llama-3.1-70b", "h100", 16, 16, 1000, 1000, "bf16", tp=16)
    kv8 = e8.memory_per_chip_bytes - get_model("llama-3.1-70b").params * 2 / 8
    kv16 = e16.memory_per_chip_bytes - get_model("llama-3.1-70b").params * 2 / 16
    assert kv8 == pytest.approx(16 * 2000 * _kv_per_token(2) / 8)
    assert kv16 == pytest.approx(kv8)      # 8 KV heads cannot be split 16 ways


def test_sram_chip_has_no_reserve():
    e = I.estimate("llama-2-70b", "groq-lpu-v1", 640, 1, 128, 128, "fp16", tp=8, pp=80)
    assert e.memory_capacity_bytes == LPU_SRAM
    want = _hand_max_batch("llama-2-70b", LPU_SRAM, 2, 2, 8, 80, 256, reserve=False)
    assert want > 0 and e.max_batch_size == want


def test_min_chips_by_hand():
    m = get_model("llama-2-70b")
    want = math.ceil(m.params * 2 / LPU_SRAM)
    assert want == 600                       # 137.95 GB of fp16 weights in 230 MB chips
    assert I.min_chips("llama-2-70b", "groq-lpu-v1", "fp16") == want
    assert I.min_chips(m, "h100", "bf16") == math.ceil(m.params * 2 / (0.9 * H100_HBM)) == 2
    assert I.min_chips(m, "h100", "fp8") == 1


# -- 2. decode at batch 1 by hand; relations between fields ----------------------------------------
# The elementwise kernels' bytes per token, over all layers (the training model's formula,
# accelbook.training.compute.elementwise_bytes), by hand. Llama 3.1 70B (d 8192, 64 heads, 8 KV heads of 128,
# FFN 28672 SwiGLU, 80 layers) on one chip in fp8, per layer: norms and residual adds 2·(2·2 + 2·3)·d = 163,840;
# RoPE on q and k 2·2·(64 + 8)·128 = 36,864; SwiGLU 2·3·28672 = 172,032; fp8 casts of the four GEMM inputs
# 3·(d + d + d + 28672) = 159,744; in all 532,480 bytes a layer.
ELEM_70B_FP8_TP1 = 80 * (20 * 8192 + 4 * 72 * 128 + 6 * 28672 + 3 * (3 * 8192 + 28672))
# ... over 8 chips: heads, K/V heads (8/8 = 1) and FFN split, norms not: 252,928 bytes a layer
ELEM_70B_FP8_TP8 = 80 * (20 * 8192 + 4 * 9 * 128 + 6 * 28672 // 8 + 3 * (8192 + 1024 + 8192 + 28672 // 8))
# Mixtral 8x7B (d 4096, 32 heads, 8 KV heads, two experts of 14336 a token, 32 layers), one chip, fp8
ELEM_MIXTRAL_FP8_TP1 = 32 * (20 * 4096 + 4 * 40 * 128 + 6 * 28672 + 3 * (3 * 4096 + 28672))


def test_elementwise_bytes_by_hand():
    assert I.elementwise_bytes_per_token(get_model("llama-3.1-70b"), 1, "fp8") == ELEM_70B_FP8_TP1 == 42_598_400
    assert I.elementwise_bytes_per_token(get_model("llama-3.1-70b"), 8, "fp8") == ELEM_70B_FP8_TP8
    assert I.elementwise_bytes_per_token(get_model("mixtral-8x7b"), 1, "fp8") == ELEM_MIXTRAL_FP8_TP1
    # bf16 GEMMs cast nothing
    assert I.elementwise_bytes_per_token(get_model("llama-3.1-70b"), 1, "bf16") == 80 * (
        20 * 8192 + 4 * 72 * 128 + 6 * 28672)


@pytest.mark.parametrize("s_in,s_out", [(128, 128), (2048, 128), (8192, 2048)])
def test_batch1_decode_on_one_h200_is_the_memory_roofline(s_in, s_out):
    m = get_model("llama-3.1-70b")
    e = I.estimate(m, "h200", 1, 1, s_in, s_out, "fp8")
    W = (m.params - m.embedding_params + m.d_model) * 1.0   # fp8: one byte per weight; one embedding row
    kv = _kv_per_token(1)
    bw = ETA_MEM * H200_BW
    assert e.decode_bound == "memory"
    # bounds: the weights alone, and the weights, the elementwise kernels and a cache at full context
    assert W / bw <= e.tpot_s <= (W + ELEM_70B_FP8_TP1 + (s_in + s_out) * kv) / bw * (1 + 1e-12)
    # and the docstring's mean context, prompt + half the output
    assert e.tpot_s == pytest.approx((W + ELEM_70B_FP8_TP1 + (s_in + s_out / 2) * kv) / bw, rel=1e-9)
    if (s_in, s_out) == (128, 128):          # 69.5 GB / 4.15 TB/s (achievable, not the 4.8 peak) ≈ 16.8 ms
        assert e.tpot_s == pytest.approx(0.01675, rel=0.01)
    assert e.tokens_per_s_per_user == pytest.approx(1 / e.tpot_s, rel=1e-12)


_fields_cases = [("llama-3.1-70b", "h200", 1, 1, 1), ("llama-3.1-70b", "h200", 8, 2, 1),
                 ("llama-3.1-70b", "h100", 8, 8, 1), ("llama-3.1-8b", "h100", 8, 1, 1),
                 ("mixtral-8x7b", "h200", 4, 2, 1)]


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(_fields_cases), B=st.integers(1, 256), s_in=st.integers(1, 8192),
       s_out=st.integers(1, 4096))
def test_relations_between_returned_fields(case, B, s_in, s_out):
    model, chip, n, tp, pp = case
    e = I.estimate(model, chip, n, B, s_in, s_out, "fp8", tp=tp, pp=pp)
    replicas = n // (tp * pp)
    assert e.config["replicas"] == replicas
    assert e.tokens_per_s_per_user == pytest.approx(1 / e.tpot_s, rel=1e-12)
    assert e.tokens_per_s_per_chip == pytest.approx(e.tokens_per_s / n, rel=1e-12)
    # static batching: replicas·B·out / (t_prefill(B prompts) + out·TPOT), where at pp = 1 the
    # prefill of B prompts lies between one prompt's TTFT and B of them
    lo = replicas * B * s_out / (B * e.ttft_s + s_out * e.tpot_s)
    hi = replicas * B * s_out / (e.ttft_s + s_out * e.tpot_s)
    assert lo * (1 - 1e-9) <= e.tokens_per_s <= hi * (1 + 1e-9)
    # a replica never makes more than B tokens per TPOT
    assert e.tokens_per_s <= replicas * B / e.tpot_s * (1 + 1e-12)


@pytest.mark.parametrize("model,chip,n,tp", [("llama-3.1-70b", "h200", 1, 1), ("llama-3.1-70b", "h100", 8, 4),
                                              ("llama-3.1-8b", "a100", 4, 1)])
def test_batch1_throughput_is_one_prompt_then_output_len_tokens(model, chip, n, tp):
    e = I.estimate(model, chip, n, 1, 512, 256, "bf16", tp=tp)
    replicas = n // tp
    assert e.tokens_per_s == pytest.approx(replicas * 256 / (e.ttft_s + 256 * e.tpot_s), rel=1e-9)


def test_replicas_multiply_throughput_and_leave_latency():
    one = I.estimate("llama-3.1-70b", "h200", 2, 32, 1024, 256, "fp8", tp=2)
    four = I.estimate("llama-3.1-70b", "h200", 8, 32, 1024, 256, "fp8", tp=2)
    assert four.config["replicas"] == 4
    assert four.tokens_per_s == pytest.approx(4 * one.tokens_per_s, rel=1e-12)
    assert four.tokens_per_s_per_chip == pytest.approx(one.tokens_per_s_per_chip, rel=1e-12)
    assert (four.tpot_s, four.ttft_s) == (one.tpot_s, one.ttft_s)
    assert four.kv_cache_bytes == one.kv_cache_bytes          # per replica


# -- 3. behaviour -------------------------------------------------------------------------------------
@pytest.mark.parametrize("model,chip,n,prec", [("llama-3.1-70b", "h200", 1, "fp8"), ("llama-3.1-70b", "h100", 8, "bf16"),
                                               ("llama-3.1-8b", "a100", 1, "bf16")])
def test_larger_batch_more_tokens_per_chip_fewer_per_user_while_memory_bound(model, chip, n, prec):
    prev = None
    for B in (1, 2, 4, 8, 16, 32):
        e = I.estimate(model, chip, n, B, 128, 512, prec)
        assert e.decode_bound == "memory"
        if prev is not None:
            assert e.tokens_per_s_per_chip > prev.tokens_per_s_per_chip
            assert e.tokens_per_s_per_user < prev.tokens_per_s_per_user
        prev = e


def _faster_hbm(chip, factor=2.0):
    c = get_chip(chip)
    return c.what_if_variant(label="2x HBM", hbm_bw_bytes_per_s=factor * c.hbm_bw_bytes_per_s)


@settings(max_examples=80, deadline=None)
@given(chip=st.sampled_from(["h100", "h200", "a100", "b200"]), tp=st.sampled_from([1, 2, 4, 8]),
       B=st.integers(1, 2048), s_in=st.integers(1, 8192), s_out=st.integers(1, 2048),
       prec=st.sampled_from(["bf16", "fp8"]))
def test_doubling_hbm_bandwidth_never_slows_tpot(chip, tp, B, s_in, s_out, prec):
    base = I.estimate("llama-3.1-70b", chip, tp, B, s_in, s_out, prec, tp=tp)
    fast = I.estimate("llama-3.1-70b", _faster_hbm(chip), tp, B, s_in, s_out, prec, tp=tp)
    assert fast.tpot_s <= base.tpot_s * (1 + 1e-12)
    assert fast.ttft_s <= base.ttft_s * (1 + 1e-12)


def test_doubling_hbm_halves_a_weight_bound_tpot():
    base = I.estimate("llama-3.1-70b", "h200", 1, 1, 128, 128, "fp8")
    fast = I.estimate("llama-3.1-70b", _faster_hbm("h200"), 1, 1, 128, 128, "fp8")
    assert fast.tpot_s == pytest.approx(base.tpot_s / 2, rel=1e-9)


@pytest.mark.parametrize("chip,prec", [("h200", "fp8"), ("h100", "bf16"), ("b200", "fp8")])
def test_more_tensor_parallelism_lowers_batch1_tpot(chip, prec):
    tpots = [I.estimate("llama-3.1-70b", chip, tp, 1, 1024, 256, prec, tp=tp).tpot_s for tp in (1, 2, 4, 8)]
    assert all(a > b for a, b in zip(tpots, tpots[1:])), tpots


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from([("h200", 1, "fp8"), ("h100", 8, "bf16"), ("groq-lpu-v1", 640, "fp16")]),
       s1=st.integers(1, 16384), s2=st.integers(1, 16384))
def test_ttft_grows_with_input_length(case, s1, s2):
    chip, n, prec = case
    kw = dict(tp=8, pp=80) if chip == "groq-lpu-v1" else {}
    a, b = sorted((s1, s2))
    ta = I.estimate("llama-2-70b", chip, n, 1, a, 64, prec, **kw).ttft_s
    tb = I.estimate("llama-2-70b", chip, n, 1, b, 64, prec, **kw).ttft_s
    assert ta <= tb
    if b >= 2 * a and a >= 2048:          # compute-bound prefill: strictly longer
        assert ta < tb


@pytest.mark.parametrize("s_in", [128, 2048, 32768])
@pytest.mark.parametrize("pp", [2, 4])
def test_pipeline_stages_do_not_lower_batch1_tpot(s_in, pp):
    """A single sequence crosses every stage, one after another: splitting the layers into stages
    cannot make its token come sooner (same tp, same total weights and cache to read)."""
    one = I.estimate("llama-3.1-70b", "h200", 1, 1, s_in, 128, "fp8", tp=1, pp=1)
    piped = I.estimate("llama-3.1-70b", "h200", pp, 1, s_in, 128, "fp8", tp=1, pp=pp)
    assert piped.tpot_s >= one.tpot_s


def test_moe_at_batch1_reads_only_the_experts_it_touches():
    m = get_model("mixtral-8x7b")
    e = I.estimate(m, "h200", 1, 1, 128, 128, "fp8")
    bw = ETA_MEM * H200_BW
    # 8 experts, 2 per token: 6 of 8 SwiGLU experts (3·d·d_ff_expert each) per layer stay unread
    unread = m.n_layers * (8 - 2) * 3 * m.d_model * m.moe.d_ff_expert
    assert (m.moe.n_experts, m.moe.top_k, m.ffn) == (8, 2, "swiglu")
    kv = 2 * m.n_layers * m.kv_heads * m.d_head * 1 * (128 + 64)
    assert e.tpot_s < m.params / bw
    W = m.params - m.embedding_params + m.d_model            # one row of the embedding table
    assert e.tpot_s == pytest.approx(((W - unread) + kv + ELEM_MIXTRAL_FP8_TP1) / bw, rel=1e-6)


def test_deepseek_v3_batch1_tpot_is_below_the_dense_read():
    m = get_model("deepseek-v3")
    e = I.estimate(m, "h200", 8, 1, 128, 128, "fp8", tp=8)
    bw = ETA_MEM * H200_BW
    assert e.fits
    assert m.matmul_params_active / 8 / bw < e.tpot_s < m.params / 8 / bw
    # MLA: L·(d_c + d_r) bytes per token in fp8
    assert e.kv_cache_bytes == pytest.approx(m.n_layers * (512 + 64) * 256)


# -- 4. power and cost --------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(chip=st.sampled_from(["h100", "h200", "a100", "b200"]), B=st.integers(1, 4096),
       s_in=st.integers(1, 8192), s_out=st.integers(1, 2048), tp=st.sampled_from([1, 2, 8]))
def test_power_between_idle_and_tdp_and_tokens_per_kw(chip, B, s_in, s_out, tp):
    c = get_chip(chip)
    e = I.estimate("llama-3.1-8b", c, 8, B, s_in, s_out, "bf16", tp=tp)
    # the chip alone: between its idle share and its TDP
    assert 0.3 * c.tdp_w * (1 - 1e-12) <= e.accelerator_power_w <= c.tdp_w * (1 + 1e-12)
    if e.decode_bound == "memory":     # moving bytes draws at most 70% of the dynamic range
        assert e.accelerator_power_w <= c.tdp_w * (0.3 + 0.7 * 0.7) * (1 + 1e-12)
    # at the wall: the whole DGX system's share, scaled alike, times the default PUE 1.2
    system_w = SYSTEM_W_PER_GPU[chip]
    assert e.power_w_per_chip == pytest.approx(e.accelerator_power_w / c.tdp_w * system_w * 1.2, rel=1e-12)
    assert e.tokens_per_s_per_kw == pytest.approx(e.tokens_per_s / (e.power_w_per_chip * 8 / 1000), rel=1e-12)


# DGX user guides: maximum system input power / 8 GPUs (A100 6.5 kW, H100 and H200 10.2 kW, B200 14.3 kW)
SYSTEM_W_PER_GPU = {"a100": 6500 / 8, "h100": 10200 / 8, "h200": 10200 / 8, "b200": 14300 / 8}


def test_one_power_basis_for_every_chip_with_pue_as_an_input():
    """A CS-3's 23 kW is a whole system and a DGX H100's 10.2 kW is one too: tokens per kW compares the same
    thing. A GPU is no longer counted at its board TDP alone (1,275 W per H100 in its DGX, not 700 W)."""
    h = I.estimate("llama-3.1-8b", "h100", 8, 256, 1024, 256, "bf16", tp=1, pue=1.0)
    assert h.power_w_per_chip / h.accelerator_power_w == pytest.approx(10200 / 8 / 700, rel=1e-12)
    h2 = I.estimate("llama-3.1-8b", "h100", 8, 256, 1024, 256, "bf16", tp=1, pue=1.5)
    assert h2.power_w_per_chip == pytest.approx(1.5 * h.power_w_per_chip, rel=1e-12)
    assert h2.tokens_per_s_per_kw == pytest.approx(h.tokens_per_s_per_kw / 1.5, rel=1e-12)
    cs = I.estimate("llama-3.1-8b", "cerebras-cs3", 1, 1, 128, 128, "fp16", pue=1.0)
    assert cs.power_w_per_chip == pytest.approx(cs.accelerator_power_w)      # already a whole system
    assert "published system figure" in h.power_basis and "whole-system" in cs.power_basis
    mi = I.estimate("llama-3.1-8b", "mi300x", 8, 64, 1024, 256, "bf16", tp=1)
    assert "ESTIMATE" in mi.power_basis                                       # no published MI300X system figure
    for bad in (0.9, float("nan"), "1.2", 10.0):
        with pytest.raises(ValueError, match="pue"):
            I.estimate("llama-3.1-8b", "h100", 8, 8, 128, 128, "bf16", tp=1, pue=bad)


def test_usd_per_million_tokens_from_the_catalogue_price():
    e = I.estimate("llama-3.1-70b", "h200", 8, 64, 1024, 256, "fp8", tp=2)
    assert e.usd_per_million_tokens == pytest.approx(H200_PRICE * 8 / 3600 / e.tokens_per_s * 1e6, rel=1e-9)
    own = I.estimate("llama-3.1-70b", "h200", 8, 64, 1024, 256, "fp8", tp=2, price_usd_per_hour=3.5)
    assert own.usd_per_million_tokens == pytest.approx(3.5 * 8 / 3600 / own.tokens_per_s * 1e6, rel=1e-9)


def test_no_tdp_or_price_gives_none():
    e = I.estimate("llama-2-70b", "groq-lpu-v1", 640, 1, 128, 128, "fp16", tp=8, pp=80)
    assert e.power_w_per_chip is None and e.tokens_per_s_per_kw is None and e.usd_per_million_tokens is None
    a = I.estimate("llama-3.1-8b", "a100", 1, 1, 128, 128, "bf16")   # A100: TDP, no price
    assert a.power_w_per_chip is not None and a.usd_per_million_tokens is None
    priced = I.estimate("llama-2-70b", "groq-lpu-v1", 640, 1, 128, 128, "fp16", tp=8, pp=80, price_usd_per_hour=1.0)
    assert priced.usd_per_million_tokens == pytest.approx(640 / 3600 / priced.tokens_per_s * 1e6)


# -- 5. sweep, max_throughput, pareto, frontier --------------------------------------------------------
@pytest.fixture(scope="module")
def h100_sweep():
    return I.sweep("llama-2-70b", "h100", 8, 512, 256, "bf16")


def test_every_sweep_row_fits_and_the_layouts_are_all_there(h100_sweep):
    df = h100_sweep
    assert not df.empty
    for r in df.itertuples():
        e = I.estimate("llama-2-70b", "h100", 8, int(r.batch), 512, 256, "bf16", tp=int(r.tp), pp=int(r.pp))
        assert e.fits
        assert r.tokens_per_s_per_chip == pytest.approx(e.tokens_per_s_per_chip)
        assert r.replicas * r.tp * r.pp == 8
    # brute force: every (tp, pp) with tp·pp | 8 whose batch 1 fits, with its largest batch
    want = set()
    for tp in range(1, 9):
        for pp in range(1, 9):
            if 8 % (tp * pp) == 0:
                e = I.estimate("llama-2-70b", "h100", 8, 1, 512, 256, "bf16", tp=tp, pp=pp)
                if e.fits:
                    want.add((tp, pp, e.max_batch_size))
    got = {(int(r.tp), int(r.pp)) for r in df.itertuples()}
    assert got == {(tp, pp) for tp, pp, _ in want}
    for tp, pp, mb in want:
        sub = df[(df.tp == tp) & (df.pp == pp)]
        assert sub.batch.max() == mb


def test_max_throughput_is_the_best_row_and_respects_the_target(h100_sweep):
    df = h100_sweep
    best = I.max_throughput("llama-2-70b", "h100", 8, 512, 256, "bf16")
    assert best.tokens_per_s_per_chip == pytest.approx(df.tokens_per_s_per_chip.max())
    assert best.fits
    target = float(df.tpot_s.quantile(0.25))
    ok = df[df.tpot_s <= target]
    t = I.max_throughput("llama-2-70b", "h100", 8, 512, 256, "bf16", tpot_target_s=target)
    assert t.tpot_s <= target
    assert t.tokens_per_s_per_chip == pytest.approx(ok.tokens_per_s_per_chip.max())
    assert t.tokens_per_s_per_chip <= best.tokens_per_s_per_chip
    with pytest.raises(ValueError, match="TPOT"):
        I.max_throughput("llama-2-70b", "h100", 8, 512, 256, "bf16", tpot_target_s=1e-6)


def test_max_throughput_when_nothing_fits():
    with pytest.raises(ValueError, match="does not fit"):
        I.max_throughput("llama-3.1-405b", "h100", 1, 128, 128, "bf16")


def _non_dominated(pairs):
    return {p for p in pairs if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pairs)}


@settings(max_examples=200, deadline=None)
@given(pts=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=40),
       floats=st.booleans())
def test_pareto_keeps_exactly_the_non_dominated_points(pts, floats):
    x = np.array([p[0] for p in pts], float) * (1.37 if floats else 1)
    y = np.array([p[1] for p in pts], float) * (0.61 if floats else 1)
    df = pd.DataFrame({"a": x, "b": y, "tag": range(len(pts))}, index=np.arange(len(pts)) * 3 + 5)
    front = I.pareto(df, "a", "b")
    kept = list(zip(front.a, front.b))
    assert set(kept) == _non_dominated(set(zip(x, y)))
    assert list(front.a) == sorted(front.a)
    # rows come back whole, from the input
    for idx, r in front.iterrows():
        assert (df.loc[idx, "a"], df.loc[idx, "b"], df.loc[idx, "tag"]) == (r.a, r.b, r.tag)


def test_pareto_default_columns_on_a_sweep(h100_sweep):
    front = I.pareto(h100_sweep)
    pairs = set(zip(h100_sweep.tokens_per_s_per_user, h100_sweep.tokens_per_s_per_chip))
    assert set(zip(front.tokens_per_s_per_user, front.tokens_per_s_per_chip)) == _non_dominated(pairs)
    assert 1 < len(front) < len(h100_sweep)


def test_frontier_has_both_systems():
    systems = {"H100 x8": ("h100", 8), "LPU x640": ("groq-lpu-v1", 640)}
    fr = I.frontier("llama-2-70b", systems, 128, 128, "fp16")
    assert set(fr.system) == set(systems)
    assert set(fr[fr.system == "LPU x640"].chip) == {get_chip("groq-lpu-v1").name}
    lpu = fr[fr.system == "LPU x640"]
    assert ((lpu.tp * lpu.pp) == 640).all()      # 600 LPUs hold the weights: one replica of all 640
    for label in systems:
        sub = fr[fr.system == label]
        pairs = set(zip(sub.tokens_per_s_per_user, sub.tokens_per_s_per_chip))
        assert pairs == _non_dominated(pairs)
    with pytest.raises(ValueError, match="fits on none"):
        I.frontier("llama-3.1-405b", {"one": ("h100", 1)}, 128, 128)


# -- 6. validation table ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs():
    with open(DATA_DIR / "inference_runs.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def validation():
    return I.validation_table()


def test_validation_table_rows_have_an_error_or_a_note(validation, runs):
    assert set(validation["id"]) == set(runs)
    for r in validation.itertuples():
        err = getattr(r, "error", float("nan"))
        has_err = err is not None and isinstance(err, float) and math.isfinite(err)
        has_note = isinstance(r.note, str) and r.note.strip() != ""
        assert has_err or has_note, r.id
    ev = validation.dropna(subset=["error"])
    for r in ev.itertuples():
        assert r.reported == runs[r.id]["reported"]["value"]
        assert r.error == pytest.approx(r.predicted / r.reported - 1)


@pytest.mark.parametrize("rid", ["trt-h200-tp1-bs512-128-128", "trt-h200-tp8-bs1-ttft-2048", "groq-llama2-70b-user",
                                 "trt-h100-tp2-bs96-2048-128"])
def test_validation_prediction_recomputed_by_hand(validation, runs, rid):
    # the row's prediction is the run's estimated times restated in its metric, by hand: static batching
    # (accelbook.inference.terms' docstring) prefills the batch of B prompts, then decodes s_out tokens each,
    # so tokens/s per chip = replicas·B·s_out / (n·(t_prefill(B) + s_out·TPOT)); with one stage the prompts
    # take B·(max(compute, weights read / B) + elementwise + all-reduces) (the weights read once a batch);
    # TTFT in ms; tokens/s per user = 1 / TPOT
    e = runs[rid]
    est = I.estimate(e["model"], e["chip"], e["n_chips"], e["batch"], e["input_len"], e["output_len"], e["precision"],
                     tp=e.get("tp"), pp=e.get("pp", 1))
    B, s_out, n, c, b = e["batch"], e["output_len"], e["n_chips"], est.config, est.breakdown
    assert c["attention"] == "tp" and c["batch_size"] == B
    if e["metric"] == "tokens_per_s_per_chip":
        assert c["pp"] == 1
    t_prefill = B * (max(b["prefill_compute_s"], b["prefill_memory_s"] / B) + b["prefill_elementwise_s"]
                     + b["prefill_comm_s"])
    want = {"tokens_per_s_per_chip": c["replicas"] * B * s_out / (n * (t_prefill + s_out * est.tpot_s)),
            "ttft_ms": 1000 * est.ttft_s, "tokens_per_s_per_user": 1 / est.tpot_s}[e["metric"]]
    row = validation.set_index("id").loc[rid]
    assert row.metric == e["metric"]
    assert row.predicted == pytest.approx(want, rel=1e-12)
    assert row.fits == est.fits


# -- 7. errors ----------------------------------------------------------------------------------------
_GOOD = dict(model="llama-3.1-8b", chip="h100", n_chips=8, batch_size=4, input_len=128, output_len=128)


@pytest.mark.parametrize("kw,match", [
    (dict(n_chips=6, tp=4), "n_chips"),
    (dict(n_chips=8, tp=3), "n_chips"),
    (dict(n_chips=8, tp=16), "n_chips"),
    (dict(precision="fp32"), "precision"),
    (dict(precision="FP8"), "precision"),
    (dict(batch_size=0), "batch_size"),
    (dict(batch_size=-3), "batch_size"),
    (dict(batch_size=2.0), "batch_size"),
    (dict(input_len=0), "input_len"),
    (dict(output_len=0), "output_len"),
    (dict(n_chips=0), "n_chips"),
    (dict(n_chips=64, tp=1, pp=64), "pp"),                 # Llama 3.1 8B has 32 layers
    (dict(mem_efficiency=0), "mem_efficiency"),
    (dict(mem_efficiency=1.01), "mem_efficiency"),
    (dict(mem_efficiency=float("nan")), "mem_efficiency"),
    (dict(n_chips=True), "n_chips"),
    (dict(batch_size=True), "batch_size"),
    (dict(input_len=True), "input_len"),
    (dict(tp=True), "tp"),
    (dict(pp=True), "pp"),
    (dict(mem_efficiency=True), "mem_efficiency"),
])
def test_estimate_rejects_bad_input(kw, match):
    args = {**_GOOD, **kw}
    with pytest.raises(ValueError, match=match):
        I.estimate(args.pop("model"), args.pop("chip"), args.pop("n_chips"), args.pop("batch_size"),
                   args.pop("input_len"), args.pop("output_len"), **args)


def test_mem_efficiency_one_is_allowed():
    assert I.estimate("llama-3.1-8b", "h100", 1, 1, 128, 128, mem_efficiency=1).tpot_s > 0


def _memoryless():
    return dataclasses.replace(get_chip("h100"), hbm_bytes=None, hbm_bw_bytes_per_s=None, sram_bytes=None,
                               sram_bw_bytes_per_s=None)


def test_chip_without_memory_figures_is_rejected():
    with pytest.raises(ValueError, match="memory"):
        I.estimate("llama-3.1-8b", _memoryless(), 1, 1, 128, 128)


def test_min_chips_rejects_a_chip_without_memory_figures():
    with pytest.raises(ValueError, match="memory"):
        I.min_chips("llama-3.1-8b", _memoryless())


def test_unknown_names_are_value_errors():
    with pytest.raises(ValueError):
        I.estimate("llama-99", "h100", 1, 1, 128, 128)
    with pytest.raises(ValueError):
        I.estimate("llama-3.1-8b", "h1000", 1, 1, 128, 128)
    with pytest.raises(ValueError, match="fp9"):
        I.estimate("llama-3.1-8b", "h100", 1, 1, 128, 128, kv_precision="fp9")


def test_why_not_fit_explains():
    ok = I.estimate("llama-3.1-70b", "h200", 1, 1, 128, 128, "fp8")
    assert ok.why_not_fit() == ""
    over = I.estimate("llama-3.1-70b", "h200", 1, ok.max_batch_size + 1, 128, 128, "fp8")
    assert not over.fits and f"at most batch {ok.max_batch_size}" in over.why_not_fit()
    weights = I.estimate("llama-3.1-405b", "h100", 1, 1, 128, 128, "bf16")
    assert weights.max_batch_size == 0 and "weights alone" in weights.why_not_fit()


def test_usable_memory_is_the_shared_reserve_and_sram_keeps_all():
    from accelbook.specs.chips import MEMORY_RESERVE, usable_memory_bytes

    assert MEMORY_RESERVE == pytest.approx(1 - HBM_USABLE)
    assert I.usable_bytes(get_chip("h100")) == usable_memory_bytes(H100_HBM)
    assert I.usable_bytes(get_chip("groq-lpu-v1")) == LPU_SRAM
    e = I.estimate("llama-3.1-8b", "h100", 1, 1, 128, 128)
    assert e.memory_capacity_bytes == I.usable_bytes(get_chip("h100"))


def test_peak_falls_back_to_the_nearest_published_precision():
    h100 = get_chip("h100")
    assert "fp4" not in h100.peak_dense_flop_s
    assert I.nearest_peak_flop_s(h100, "fp4") == h100.peak_dense_flop_s["fp8"]
    assert I.nearest_peak_flop_s(h100, "bf16") == h100.peak_dense_flop_s["bf16"]


# -- issue 15: speculative decoding, MLA attention, heterogeneous decode, min_chips, tp -------------------------
def test_speculative_verify_step_reads_the_weights_and_kv_once_with_gamma_plus_one_times_the_flops():
    # the example: Llama 3.1 70B with an 8B draft on 8 × H100 in fp8, batch 32, 8K context, γ 4, a 0.7
    args = ("h100", 8, 32, 8192, 256)
    s = I.speculative("llama-3.1-70b", "llama-3.1-8b", *args, gamma=4, acceptance=0.7, precision="fp8")
    b = I.estimate("llama-3.1-70b", *args, "fp8").breakdown
    gemm_mem = b["decode_weights_read_s"]
    attn_mem = b["decode_memory_s"] - gemm_mem                      # the KV cache's read, once
    gemm_mem += 4 * 32 * 8192 / 8 / 2.97e12                         # and 4 more embedding rows a sequence (H100 Triad)
    # the 5·32 = 160 verify rows' matmuls at the shape efficiency of 160 rows (32 rows: that of the decode step)
    m70, h100 = get_model("llama-3.1-70b"), get_chip("h100")
    gemm_cmp = (b["decode_gemm_compute_s"] * I.pass_shape_efficiency(m70, h100, 32, 8)
                / I.pass_shape_efficiency(m70, h100, 160, 8))
    attn_cmp = b["decode_attention_compute_s"]
    verify = (max(gemm_mem, 5 * gemm_cmp) + max(attn_mem, 5 * attn_cmp) + b["allreduce_fixed_s"]
              + 5 * 32 * b["allreduce_per_token_s"] + 5 * 32 * ELEM_70B_FP8_TP8 / 2.97e12)
    assert s["verify_step_s"] == pytest.approx(verify, rel=1e-9)
    assert 1.1 < s["speedup"] < 1.35                                # a speed-up of about 1.2×, not 0.84×


def test_speculative_reserves_the_kv_cache_once_and_counts_the_draft():
    full = I.estimate("llama-3.1-70b", "h100", 8, 1, 8192, 256, "fp8").max_batch_size
    # half the target's largest batch: its KV cache once (not γ+1 = 5 times) plus the draft's weights and cache fit
    s = I.speculative("llama-3.1-70b", "llama-3.1-8b", "h100", 8, full // 2, 8192, 256, gamma=4, precision="fp8")
    assert s["fits"]
    # at the target's own largest batch the draft no longer fits beside it
    assert not I.speculative("llama-3.1-70b", "llama-3.1-8b", "h100", 8, full, 8192, 256, precision="fp8")["fits"]


def test_mla_decode_attention_counts_the_absorbed_flops():
    # absorbed MLA attends over the cached latent: 2·H·(2·d_c + d_r) FLOPs per context token and layer, 3.4× the
    # 2·(d_qk + d_v) = 2·H·(192 + 128) of attention with rebuilt K and V
    from accelbook.specs.efficiency import measured_efficiency

    m, h200 = get_model("deepseek-v3"), get_chip("h200")
    B, s_in, s_out = 64, 4096, 1024
    b = I.estimate(m, h200, 8, B, s_in, s_out, "fp8", tp=8).breakdown
    attn_cmp = b["decode_attention_compute_s"]
    assert b["decode_compute_s"] == pytest.approx(attn_cmp + b["decode_gemm_compute_s"], rel=1e-12)
    rate = measured_efficiency(h200, "attention")[0].fraction * h200.peak_dense_flop_s["bf16"]
    assert (m.n_heads, m.mla.kv_lora_rank, m.mla.qk_rope_head_dim) == (128, 512, 64)
    c = s_in + s_out / 2
    assert attn_cmp == pytest.approx(B * m.n_layers * c * 2 * 128 * (2 * 512 + 64) / 8 / rate, rel=1e-9)


def test_heterogeneous_ffn_flops_use_the_active_experts_only():
    # Mixtral 8x7B: a token goes through 2 of the 8 SwiGLU experts (3·d·d_ff_expert each) and the router;
    # batch 256 in one microbatch makes the LP30s' FFN compute-bound, 256 LP30s give 8 a layer
    m, lp30 = get_model("mixtral-8x7b"), get_chip("groq-lp30")
    r = I.heterogeneous_decode(m, "h200", 8, lp30, 256, 256, 1024, precision="fp8", microbatches=1)
    ffn_active = 2 * 3 * m.d_model * m.moe.d_ff_expert + m.d_model * m.moe.n_experts
    rate = I.gemm_efficiency(lp30, "fp8")[0] * lp30.peak_dense_flop_s["fp8"]
    assert r["ffn_s"] == pytest.approx(m.n_layers * 256 * 2 * ffn_active / 8 / rate, rel=1e-9)


def test_decode_reads_one_embedding_row_per_token_not_the_table():
    # Llama 3.1 8B (untied): the 128,256 × 4,096 embedding table is 6.5 % of the weights; a step reads one row a token
    m = get_model("llama-3.1-8b")
    assert not m.tied_embeddings and m.embedding_params / m.params == pytest.approx(0.065, abs=0.001)
    b = I.estimate(m, "h200", 1, 1, 1024, 128, "fp8").breakdown
    assert b["decode_weights_read_s"] == pytest.approx((m.params - m.embedding_params + m.d_model) / (ETA_MEM * H200_BW),
                                                       rel=1e-12)
    # a tied table is read whole, as the LM head
    tied = dataclasses.replace(m, tied_embeddings=True)
    bt = I.estimate(tied, "h200", 1, 1, 1024, 128, "fp8").breakdown
    assert bt["decode_weights_read_s"] == pytest.approx(tied.params / (ETA_MEM * H200_BW), rel=1e-12)


@pytest.mark.parametrize("chip,used", [("groq-lpu-v1", "fp16"), ("tpu-v5e", "bf16"), ("tpu-v4", "bf16")])
def test_fp8_weights_on_a_chip_without_fp8_run_at_its_16_bit_peak_not_int8(chip, used):
    c = get_chip(chip)
    assert "fp8" not in c.peak_dense_flop_s and "int8" in c.peak_dense_flop_s
    assert I.nearest_peak_flop_s(c, "fp8") == c.peak_dense_flop_s[used]
    assert I.nearest_peak_flop_s(c, "fp4") == c.peak_dense_flop_s[used]
    assert I.nearest_peak_flop_s(c, "int8") == c.peak_dense_flop_s["int8"]
    e = I.estimate("llama-3.1-8b", c, 64, 1, 128, 128, "fp8", tp=32, pp=2)
    assert any(f"no fp8 peak: the math runs at its {used} peak" in a for a in e.assumptions)


def test_min_chips_counts_the_kv_cache_and_matches_the_sweep():
    # Llama 2 70B in fp16 on Groq LPU v1 (230 MB of SRAM, no reserve), 1,024 + 256 tokens at batch 1:
    # 600 chips hold the weights, but the cache (1,280 × 327,680 B = 0.42 GB) needs at least 2 more
    m = get_model("llama-2-70b")
    assert I.min_chips(m, "groq-lpu-v1", "fp16") == 600
    n = I.min_chips(m, "groq-lpu-v1", "fp16", input_len=1024, output_len=256)
    assert n >= math.ceil((m.params * 2 + 1280 * _kv_per_token(2)) / LPU_SRAM) == 602
    assert not I.sweep(m, "groq-lpu-v1", n, 1024, 256, "fp16").empty
    for fewer in range(600, n):
        assert I.sweep(m, "groq-lpu-v1", fewer, 1024, 256, "fp16").empty
    with pytest.raises(ValueError, match=f"at least {n} chips hold the weights and the KV cache"):
        I.max_throughput(m, "groq-lpu-v1", 600, 1024, 256, "fp16")


def test_tensor_parallel_degree_must_divide_the_heads():
    with pytest.raises(ValueError, match=r"tp = 9 .*64 attention heads"):
        I.estimate("llama-2-70b", "groq-lpu-v1", 603, 1, 1024, 256, "fp16", tp=9, pp=67)
    df = I.sweep("llama-2-70b", "groq-lpu-v1", 720, 1024, 256, "fp16", batches=[1])
    assert not df.empty and (64 % df["tp"] == 0).all()


@pytest.mark.parametrize("chip,gib", [("tpu-v5e", 16), ("tpu-v6e", 32)])
def test_tpu_v5e_and_v6e_hbm_is_in_gib(chip, gib):
    # Google's docs print "16 GB" / "32 GB"; JAX's tpu_info gives 17.2e9 / 34.4e9 bytes: the GB are GiB
    c = get_chip(chip)
    assert c.hbm_bytes == gib * 2**30
    assert I.usable_bytes(c) == pytest.approx(HBM_USABLE * gib * 2**30)


def test_sweep_of_one_layout_is_that_layouts_rows_of_the_full_sweep():
    full = I.sweep("llama-3.1-70b", "h200", 8, 2048, 256, "fp8", max_tp=8)
    one = I.sweep("llama-3.1-70b", "h200", 8, 2048, 256, "fp8", max_tp=8, layout=(4, 1))
    want = full[(full["tp"] == 4) & (full["pp"] == 1)].reset_index(drop=True)
    pd.testing.assert_frame_equal(one.reset_index(drop=True), want)
    with pytest.raises(ValueError, match="layout must be one"):
        I.sweep("llama-3.1-70b", "h200", 8, 2048, 256, "fp8", max_tp=8, layout=(3, 1))


def test_tokens_per_kw_restated_at_another_pue_equals_the_model_run_at_it():
    # wall power is linear in PUE, so the frontier dashboard restates per-kW figures instead of re-running
    from accelbook.inference.power import per_kw_at_pue
    at_15 = I.sweep("llama-3.1-8b", "h100", 8, 1024, 256, "fp8", batches=[1, 64], max_tp=2, pue=1.5)
    at_12 = I.sweep("llama-3.1-8b", "h100", 8, 1024, 256, "fp8", batches=[1, 64], max_tp=2)
    assert np.allclose(per_kw_at_pue(at_12["tokens_per_s_per_kw"], 1.5, 1.2), at_15["tokens_per_s_per_kw"], rtol=1e-12)
    with pytest.raises(ValueError, match="pue"):
        per_kw_at_pue(100.0, 0.5, 1.2)
