"""Model architectures: derived parameter counts, FLOPs and KV-cache bytes vs published and hand numbers."""

from __future__ import annotations

import dataclasses

import pytest

import accelbook as ab


@pytest.mark.parametrize("mid, published, rel", [
    ("llama-3.1-8b", 8.03e9, 0.01),      # Meta / HF model card: 8.03B
    ("llama-3.1-70b", 70.6e9, 0.01),     # HF model card: 70.6B
    ("llama-3.1-405b", 405.9e9, 0.01),   # HF model card: 405.9B (rounded)
    ("gpt3-175b", 174.6e9, 0.01),        # Narayanan et al. 2021, Table 2 (GPT-3 175B row)
    ("palm-540b", 540.35e9, 0.01),       # Chowdhery et al. 2022 (PaLM), Table 1
    ("megatron-1t", 1008.1e9, 0.01),     # Narayanan et al. 2021, Table 1 (1T row)
    ("mixtral-8x7b", 46.7e9, 0.01),      # Mistral AI, "Mixtral of experts" blog: 46.7B total
    ("deepseek-v3", 671e9, 0.01),        # DeepSeek-V3 technical report: 671B total (excl. 14B MTP module)
    ("mixtral-8x22b", 141e9, 0.005),     # Mistral AI, "Cheaper, Better, Faster, Stronger": 141B total
    ("qwen3-8b", 8.2e9, 0.005),          # Qwen3-8B model card: 8.2B
    ("qwen3-32b", 32.8e9, 0.005),        # Qwen3-32B model card: 32.8B
    ("qwen3-30b-a3b", 30.5e9, 0.005),    # Qwen3-30B-A3B model card: 30.5B total
    ("dbrx", 132e9, 0.005),              # Databricks, "Introducing DBRX": 132B total
])
def test_total_params_match_published(mid, published, rel):
    assert ab.get_model(mid).params == pytest.approx(published, rel=rel)


@pytest.mark.parametrize("mid, published, rel", [
    ("mixtral-8x7b", 12.9e9, 0.01),   # Mistral AI: 12.9B active per token
    ("deepseek-v3", 37e9, 0.02),      # DeepSeek-V3 report: 37B activated (a rounded figure)
    ("mixtral-8x22b", 39e9, 0.005),   # Mistral AI: 39B active
    ("qwen3-30b-a3b", 3.3e9, 0.02),   # Qwen3-30B-A3B model card: 3.3B activated (two digits)
    ("dbrx", 36e9, 0.02),             # Databricks: 36B active (two digits)
])
def test_active_params_match_published(mid, published, rel):
    assert ab.get_model(mid).active_params == pytest.approx(published, rel=rel)


def test_dense_models_use_all_their_params():
    for mid in ("llama-3.1-70b", "gpt3-175b", "palm-540b"):
        m = ab.get_model(mid)
        assert m.active_params == m.params


def test_llama2_70b_hand_count_and_nominal_name():
    # 80 layers x (q,o: 2*8192^2 + k,v: 2*8192*1024 (8 KV heads x 128) + SwiGLU: 3*8192*28672 + 2 RMSNorms: 2*8192)
    #   = 80 x (134,217,728 + 16,777,216 + 704,643,072 + 16,384) = 80 x 855,654,400 = 68,452,352,000
    # + untied embedding and LM head 2*32000*8192 = 524,288,000 + final norm 8192
    # = 68,976,648,192
    hand = 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) + 2 * 32000 * 8192 + 8192
    assert hand == 68_976_648_192
    m = ab.get_model("llama-2-70b")
    assert m.params == pytest.approx(68.98e9, rel=1e-3)
    assert m.params == hand
    # the name says 70B: the nominal count is ~1.5% above the weights (68.98/70 - 1 = -1.46%), and the
    # catalogue says so in the note of the published figure
    assert m.params / 70e9 - 1 == pytest.approx(-0.0146, abs=5e-4)
    assert "nominal" in m.provenance["published_params"].note


def test_mixtral_hand_count():
    # per layer: attention 2*4096^2 + 2*4096*1024 = 41,943,040; 2 RMSNorms 8,192; router 4096*8 = 32,768;
    # one SwiGLU expert 3*4096*14336 = 176,160,768.
    # total  = 32*(41,943,040 + 8,192 + 32,768 + 8*176,160,768) + 2*32000*4096 + 4096 = 46,702,792,704
    # active = 32*(41,943,040 + 8,192 + 32,768 + 2*176,160,768) + 2*32000*4096 + 4096 = 12,879,925,248
    m = ab.get_model("mixtral-8x7b")
    assert m.params == 32 * (41_943_040 + 8_192 + 32_768 + 8 * 176_160_768) + 2 * 32000 * 4096 + 4096
    assert m.active_params == 32 * (41_943_040 + 8_192 + 32_768 + 2 * 176_160_768) + 2 * 32000 * 4096 + 4096


def test_gpt3_per_layer_params_are_12d2_plus_13d():
    # GPT-3 block: QKV+O 4d^2 + biases 4d; FFN (4d hidden) 8d^2 + biases 4d + d; two LayerNorms 2*2d
    # = 12d^2 + 13d  (Narayanan et al. 2021 count 12*l*h^2 and leave out the O(h) terms)
    m = ab.get_model("gpt3-175b")
    d = 12288
    one = dataclasses.replace(m, n_layers=1)
    two = dataclasses.replace(m, n_layers=2)
    assert two.params - one.params == 12 * d**2 + 13 * d == 1_812_099_072
    # whole model: 96 layers + token embedding 50257*d + learned positions 2048*d + final LayerNorm 2d (tied head)
    assert m.params == 96 * (12 * d**2 + 13 * d) + 50257 * d + 2048 * d + 2 * d == 174_604_259_328


@pytest.mark.parametrize("mid, hand", [
    ("llama-3.1-70b", 2 * 80 * 8 * 128 * 2),       # GQA: 2 (K,V) * 80 layers * 8 KV heads * 128 * 2 B = 327,680
    ("deepseek-v3", 61 * (512 + 64) * 2),          # MLA: 61 layers * (d_c 512 + d_r 64) * 2 B = 70,272
    ("palm-540b", 2 * 118 * 1 * 256 * 2),          # MQA: 2 * 118 layers * 1 KV head * 256 * 2 B = 120,832
    ("gpt3-175b", 2 * 96 * 96 * 128 * 2),          # MHA: 2 * 96 * 96 heads * 128 * 2 B = 4,718,592
])
def test_kv_cache_bytes_per_token_bf16(mid, hand):
    assert ab.get_model(mid).kv_cache_bytes_per_token("bf16") == hand


def test_kv_cache_scales_with_element_size():
    m = ab.get_model("llama-3.1-70b")
    assert m.kv_cache_bytes_per_token("fp8") == 2 * 80 * 8 * 128 * 1       # 163,840
    assert m.kv_cache_bytes_per_token("fp32") == 2 * 80 * 8 * 128 * 4      # 655,360
    with pytest.raises(ValueError, match="unknown precision 'fp7'"):
        m.kv_cache_bytes_per_token("fp7")


@pytest.mark.parametrize("mid, kind", [
    ("llama-3.1-70b", "GQA"), ("palm-540b", "MQA"), ("gpt3-175b", "MHA"), ("deepseek-v3", "MLA"),
])
def test_attention_kind(mid, kind):
    assert ab.get_model(mid).attention_kind == kind


def test_megatron_1t_training_flops_match_narayanan_formula():
    # Narayanan et al. 2021, FLOPs per iteration without activation recomputation, divided by B*s tokens:
    # 72 * l * h^2 * (1 + s/(6h) + V/(12*h*l)) per token, l = 128, h = 25600, V = 51200, s = 2048.
    l, h, V, s = 128, 25600, 51200, 2048
    paper = 72 * l * h**2 * (1 + s / (6 * h) + V / (12 * h * l))  # 72*128*25600^2 = 6.040e12; x (1 + 0.01333 + 0.00130) = 6.128e12 FLOP/token
    assert paper == pytest.approx(6.128e12, rel=1e-3)
    assert ab.get_model("megatron-1t").flops_per_token(s, training=True) == pytest.approx(paper, rel=0.005)


def test_llama31_70b_flops_by_hand():
    # N_mm = 80 * (2*8192^2 + 2*8192*1024 + 3*8192*28672) + LM head 128256*8192
    #      = 80 * 855,638,016 + 1,050,673,152 = 69,501,714,432
    # C_fwd = 2*N_mm + 4*L*s*H*d_h = 139,003,428,864 + 4*80*4096*8192 (= 10,737,418,240) = 149,740,847,104
    n_mm = 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) + 128256 * 8192
    assert n_mm == 69_501_714_432
    fwd = 2 * n_mm + 4 * 80 * 4096 * 8192
    m = ab.get_model("llama-3.1-70b")
    assert m.flops_per_token(4096) == pytest.approx(fwd, rel=1e-12)
    assert m.flops_per_token(4096, training=True) == pytest.approx(3 * fwd, rel=1e-12)  # 4.49e11
    # causal halves only the attention term: 139,003,428,864 + 5,368,709,120
    assert m.flops_per_token(4096, causal=True) == pytest.approx(2 * n_mm + 2 * 80 * 4096 * 8192, rel=1e-12)


@pytest.mark.parametrize("mid", ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "palm-540b", "gpt3-175b"])
@pytest.mark.parametrize("s", [1, 2048, 32768])
def test_training_flops_are_three_times_forward(mid, s):
    m = ab.get_model(mid)
    assert m.flops_per_token(s, training=True) == pytest.approx(3 * m.flops_per_token(s), rel=1e-12)


def test_flops_grow_with_context():
    m = ab.get_model("llama-3.1-8b")
    # attention term 4*L*s*H*d_h: doubling s from 1024 to 2048 adds 4*32*1024*4096 FLOPs
    assert m.flops_per_token(2048) - m.flops_per_token(1024) == pytest.approx(4 * 32 * 1024 * 4096)


@pytest.mark.parametrize("s", [0, -1])
def test_bad_seq_len(s):
    with pytest.raises(ValueError, match="seq_len"):
        ab.get_model("llama-3.1-8b").flops_per_token(s)


def test_weight_bytes():
    # Llama 2 70B in bf16: 68,976,648,192 * 2 B = 137.95 GB: does not fit one 80 GB H100
    assert ab.get_model("llama-2-70b").weight_bytes("bf16") == 2 * 68_976_648_192


@pytest.mark.parametrize("name, mid", [
    ("gpt3", "gpt3-175b"), ("GPT-3", "gpt3-175b"), ("Llama 3.1 70B", "llama-3.1-70b"),
    ("llama-3.1-70b", "llama-3.1-70b"), ("Mixtral", "mixtral-8x7b"), ("DeepSeek V3", "deepseek-v3"),
])
def test_forgiving_model_names(name, mid):
    assert ab.get_model(name).id == mid


def test_unknown_model_lists_close_matches():
    with pytest.raises(ab.UnknownNameError, match="llama-3.1-70b"):
        ab.get_model("llama-3.1-7b")


def test_models_dataframe():
    df = ab.models()
    assert df["id"].is_unique and len(df) == len(ab.specs.models.all_models())
    row = df.set_index("id").loc["llama-2-70b"]
    assert row["params_error"] == pytest.approx(68_976_648_192 / 70e9 - 1)
    assert row["kv_bytes_per_token_bf16"] == 327_680
