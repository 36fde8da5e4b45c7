"""Local attention (sliding windows and chunks) in the KV cache and attention FLOPs, against hand numbers
from the published configs; models without a window keep their numbers exactly."""

from __future__ import annotations

import dataclasses

import pytest

import accelbook as ab
from accelbook import inference
from accelbook.chip.number_formats import serving_memory
from accelbook.chip.roofline import layer_ops
from accelbook.specs.hf_config import from_hf_config
from accelbook.specs.loader import CatalogueError
from accelbook.specs.models import load_models
from accelbook.specs.windows import Window

# google/gemma-3-27b-pt, config.json (text_config): 62 layers, 16 KV heads of 128, sliding window 1024,
# sliding_window_pattern 6 (layers 5, 11, ..., 59 global: 10 global, 52 local)
GEMMA3_27B = dict(model_type="gemma3_text", num_hidden_layers=62, hidden_size=5376, num_attention_heads=32,
                  num_key_value_heads=16, head_dim=128, intermediate_size=21504, vocab_size=262208,
                  sliding_window=1024, sliding_window_pattern=6, max_position_embeddings=131072)
# openai/gpt-oss-120b, config.json: 36 layers, layer_types alternating sliding/full from layer 0, window 128
GPT_OSS_120B = dict(model_type="gpt_oss", num_hidden_layers=36, hidden_size=2880, num_attention_heads=64,
                    num_key_value_heads=8, head_dim=64, intermediate_size=2880, vocab_size=201088,
                    num_local_experts=128, num_experts_per_tok=4, attention_bias=True, sliding_window=128,
                    layer_types=["sliding_attention", "full_attention"] * 18, tie_word_embeddings=False)
# mistralai/Mistral-7B-v0.1, config.json: a 4096-token sliding window on every layer
MISTRAL_7B_V01 = dict(model_type="mistral", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
                      num_key_value_heads=8, intermediate_size=14336, vocab_size=32000, sliding_window=4096,
                      tie_word_embeddings=False)

GEMMA3_KV_LAYER_TOKEN = 2 * 16 * 128 * 2   # K and V, 16 heads of 128, bf16: 8,192 B per layer and token


def test_gemma3_27b_kv_cache_at_32k_by_hand():
    # 10 global layers keep all 32,768 tokens, 52 local layers 1,024:
    # (10 * 32,768 + 52 * 1,024) * 8,192 B = 380,928 * 8,192 = 3,120,562,176 B (full attention: 16.6 GB)
    hand = (10 * 32768 + 52 * 1024) * 8192
    assert hand == 3_120_562_176
    for m in (ab.get_model("gemma-3-27b"), from_hf_config(GEMMA3_27B)):
        assert m.window == Window(1024, "sliding", 6) and m.n_local_layers == 52
        assert m.kv_cache_bytes(32768, "bf16") == hand
        assert m.kv_bytes_per_token_at(32768) == hand / 32768
        assert m.kv_cache_bytes_per_token("bf16") == 62 * GEMMA3_KV_LAYER_TOKEN   # the growth below the window
        assert m.kv_share(32768) == pytest.approx(380_928 / 2_031_616)          # 18.75 %


def test_within_the_window_a_local_layer_keeps_everything():
    m = ab.get_model("gemma-3-27b")
    assert m.kv_cache_bytes(1000) == 1000 * 62 * GEMMA3_KV_LAYER_TOKEN
    assert m.kv_cache_bytes(1024) == 1024 * 62 * GEMMA3_KV_LAYER_TOKEN
    assert m.kv_cache_bytes(1025) == (62 * 1024 + 10) * GEMMA3_KV_LAYER_TOKEN


def test_gpt_oss_120b_kv_cache_at_128k_by_hand():
    # 18 full layers x 131,072 + 18 sliding x 128 = 2,361,600 token-layers; 2 * 8 heads * 64 * 2 B = 2,048 B each
    hand = (18 * 131072 + 18 * 128) * 2048
    assert hand == 4_836_556_800
    for m in (ab.get_model("gpt-oss-120b"), from_hf_config(GPT_OSS_120B)):
        assert m.window == Window(128, "sliding", 2)
        assert m.kv_cache_bytes(131072) == hand


def test_llama4_scout_chunked_kv_cache_by_hand():
    # 48 layers, every 4th global (12), 36 chunked with chunks of 8,192; 2 * 8 heads * 128 * 2 B = 4,096 B
    # at 131,072 tokens: (12 * 131,072 + 36 * 8,192) * 4,096 = 1,867,776 * 4,096 = 7,650,410,496 B
    m = ab.get_model("llama-4-scout")
    assert m.window == Window(8192, "chunked", 4) and m.n_local_layers == 36
    assert m.kv_cache_bytes(131072) == 7_650_410_496


def test_all_layers_local_mistral_7b():
    m = from_hf_config(MISTRAL_7B_V01)
    assert m.window == Window(4096, "sliding", 0) and m.n_local_layers == 32
    # at 8,192 tokens every layer keeps 4,096: 32 * 4,096 * (2 * 8 * 128 * 2 = 4,096 B) = 536,870,912 B
    assert m.kv_cache_bytes(8192) == 32 * 4096 * 4096 == 536_870_912
    assert m.kv_cache_bytes(10**6) == m.kv_cache_bytes(8192)                  # bounded whatever the context


def test_attention_flops_respect_the_window():
    m = ab.get_model("gemma-3-27b")
    d_attn = 2 * 32 * 128                     # d_qk + d_v = 2 * H * d_h = 8,192
    # full convention: from 16,384 to 32,768 tokens only the 10 global layers see more keys (16,384 more each)
    assert m.flops_per_token(32768) - m.flops_per_token(16384) == 2 * 10 * 16384 * d_attn == 2_684_354_560
    assert m.attended_keys(32768) == 10 * 32768 + 52 * 1024 == 380_928
    # causal: a local layer's mean over 32,768 queries is W - W^2/(2s) = 1,024 - 16 = 1,008 keys
    assert m.attended_keys(32768, causal=True) == 10 * 16384 + 52 * 1008 == 216_256
    assert m.flops_per_token(32768, training=True, causal=True) - m.flops_per_token(16384, training=True, causal=True) \
        == pytest.approx(3 * 2 * d_attn * (216_256 - (10 * 8192 + 52 * (1024 - 1024**2 / 32768))), rel=1e-12)


def test_causal_sliding_keys_match_a_brute_force_mean():
    w = Window(1024, "sliding", 0)
    for s in (100, 1024, 3000, 32768):
        brute = sum(min(i, 1024) for i in range(1, s + 1)) / s      # query i sees min(i, W) keys
        # the closed form counts s/2 for a full layer (the module's convention), not (s+1)/2: half a key apart
        assert w.keys(s, causal=True) == pytest.approx(brute, abs=0.5)


def test_chunked_keys_by_hand():
    w = Window(8192, "chunked", 4)
    # s = 20,000 = 2 * 8,192 + 3,616: each query sees its whole chunk, (2 * 8,192^2 + 3,616^2) / 20,000
    assert w.keys(20000, causal=False) == pytest.approx((2 * 8192**2 + 3616**2) / 20000) == pytest.approx(7364.6592)
    assert w.keys(20000, causal=True) == pytest.approx(7364.6592 / 2)
    assert w.keys(5000, causal=False) == 5000                      # one partial chunk: full attention


@pytest.mark.parametrize("mid", ["llama-3.1-70b", "deepseek-v3", "gpt3-175b", "mixtral-8x7b"])
def test_models_without_a_window_are_unchanged(mid):
    m = ab.get_model(mid)
    assert m.window is None and m.n_local_layers == 0
    kvb = m.kv_cache_bytes_per_token("bf16")
    for s in (1, 1000, 131072):
        assert m.kv_cache_bytes(s) == kvb * s
        assert m.kv_bytes_per_token_at(s) == kvb
        assert m.kv_share(s) == 1.0 and m.attention_share(s) == 1.0 and m.attention_share(s, causal=True) == 1.0
        assert m.attended_keys(s) == m.n_layers * s


def test_window_removed_gives_full_attention():
    m = ab.get_model("gemma-3-27b")
    full = dataclasses.replace(m, window=None)
    assert full.kv_cache_bytes(32768) == 62 * 32768 * GEMMA3_KV_LAYER_TOKEN
    assert m.flops_per_token(512) == full.flops_per_token(512)       # context inside the window
    assert m.flops_per_token(32768) < full.flops_per_token(32768)


def test_inference_estimate_sizes_the_windowed_cache():
    # batch 4 at 32,000 + 768 = 32,768 tokens, bf16 KV: 4 * 3,120,562,176 B
    e = inference.estimate("gemma-3-27b", "h200", 1, 4, 32000, 768, "bf16")
    assert e.kv_cache_bytes == pytest.approx(4 * 3_120_562_176, rel=1e-12)
    full = inference.estimate(dataclasses.replace(ab.get_model("gemma-3-27b"), window=None), "h200", 1, 4, 32000, 768,
                              "bf16")
    assert full.kv_cache_bytes == pytest.approx(4 * 62 * 32768 * GEMMA3_KV_LAYER_TOKEN, rel=1e-12)
    assert e.max_batch_size > full.max_batch_size and e.tpot_s < full.tpot_s


def test_other_callers_use_the_context():
    m = ab.get_model("gemma-3-27b")
    mem = serving_memory(m, "bf16", "bf16", 32768, 2)
    assert mem["kv_bytes"] == pytest.approx(2 * 3_120_562_176, rel=1e-12)
    att = next(op for op in layer_ops(m, "decode", 1, 32768) if op.kind == "attention")
    full = next(op for op in layer_ops(dataclasses.replace(m, window=None), "decode", 1, 32768)
                if op.kind == "attention")
    assert att.flops == pytest.approx(full.flops * 380_928 / 2_031_616, rel=1e-12)
    d = inference.variants.disaggregation("gemma-3-27b", "h200", 1, 32768, 256, 1, "bf16")
    assert d["kv_bytes"] == 3_120_562_176


def test_hf_window_keys():
    g2 = dict(GEMMA3_27B, model_type="gemma2")                    # Gemma 2: every other layer, layer 0 local
    g2.pop("sliding_window_pattern")
    assert from_hf_config(g2).window == Window(1024, "sliding", 2)
    typed = dict(GEMMA3_27B, layer_types=["full_attention" if (i + 1) % 6 == 0 else "sliding_attention"
                                          for i in range(62)])
    assert from_hf_config(typed).window == Window(1024, "sliding", 6)
    # Llama 4 style keys on a dense config: chunks of 8,192, no_rope_layers 1 (RoPE, chunked) or 0 (NoPE, global)
    chunked = dict(MISTRAL_7B_V01, sliding_window=None, attention_chunk_size=8192,
                   no_rope_layers=[int((i + 1) % 4 != 0) for i in range(32)])
    assert from_hf_config(chunked).window == Window(8192, "chunked", 4)
    assert from_hf_config(dict(MISTRAL_7B_V01, sliding_window=None)).window is None
    assert from_hf_config(dict(MISTRAL_7B_V01, use_sliding_window=False)).window is None
    with pytest.raises(ValueError, match="layer pattern"):
        from_hf_config(dict(GPT_OSS_120B, layer_types=["full_attention"] * 18 + ["sliding_attention"] * 18))
    with pytest.raises(ValueError, match="layer_types"):
        from_hf_config(dict(GPT_OSS_120B, layer_types=["full_attention"] * 3))


@pytest.mark.parametrize("window, key", [
    ("{ tokens = 0 }", "window.tokens"),
    ('{ tokens = 128, kind = "banded" }', "window.kind"),
    ("{ tokens = 128, global_every = 1 }", "window.global_every"),
    ("{ tokens = 128, every = 2 }", "every"),
    ("128", "window"),
])
def test_bad_windows_in_a_models_file(tmp_path, window, key):
    p = tmp_path / "m.toml"
    p.write_text(f'[tiny]\nname = "Tiny"\nfamily = "T"\nn_layers = 2\nd_model = 64\nn_heads = 4\nd_ff = 128\n'
                 f'vocab_size = 100\nffn = "swiglu"\nwindow = {window}\n')
    with pytest.raises(CatalogueError, match=key):
        load_models(p)


def test_context_is_checked():
    m = ab.get_model("gemma-3-27b")
    with pytest.raises(ValueError, match="context"):
        m.kv_cache_bytes(-1)
    with pytest.raises(ValueError, match="context"):
        m.kv_bytes_per_token_at(0)


def test_training_attention_time_respects_the_window():
    from accelbook import training
    from accelbook.training import records
    m = ab.get_model("gemma-3-27b")
    # causal keys at 32,768 tokens: 216,256 of a full model's 62 * 16,384 = 1,015,808
    assert records.model_record(m, 32768).attention_share == pytest.approx(216_256 / 1_015_808, rel=1e-12)
    assert records.model_record(ab.get_model("llama-3.1-70b"), 32768).attention_share == 1.0
    full = dataclasses.replace(m, window=None)
    kw = dict(tp=8, pp=1, cp=4)
    e, f = (training.estimate(x, "h100", 64, 64 * 32768, 32768, **kw) for x in (m, full))
    assert e.step_time_s < f.step_time_s


def test_context_parallel_exchange_moves_only_the_windows_keys_and_values():
    """Gemma 3 27B at 32,768 tokens keeps 380,928 of 62 * 32,768 = 2,031,616 K/V token-layers (windows.py's
    worked number): its context-parallel all-gather moves that share of a full-attention model's bytes."""
    from accelbook import training
    from accelbook.training import records
    m = ab.get_model("gemma-3-27b")
    assert records.model_record(m, 32768).kv_share == pytest.approx(380_928 / 2_031_616, rel=1e-12)
    assert records.model_record(ab.get_model("llama-3.1-70b"), 32768).kv_share == 1.0
    full = dataclasses.replace(m, window=None)
    kw = dict(tp=8, pp=1, cp=4, cp_comm="allgather")
    e, f = (training.estimate(x, "h100", 64, 64 * 32768, 32768, **kw) for x in (m, full))
    # the bytes part scales by the K/V share; the all-gather steps' latency does not: the exchange is
    # t(share) = bytes·share + latency, a straight line through the three models (windows of 1,024 and
    # 4,096 tokens, and none) with a positive intercept, small beside the full model's exchange
    wide = dataclasses.replace(m, window=dataclasses.replace(m.window, tokens=4096))
    g = training.estimate(wide, "h100", 64, 64 * 32768, 32768, **kw)
    s_e, s_g = 380_928 / 2_031_616, wide.kv_share(32768)
    assert s_e < s_g < 1
    t_e, t_g, t_f = e.time["t_cp_comm_s"], g.time["t_cp_comm_s"], f.time["t_cp_comm_s"]
    slope = (t_f - t_e) / (1 - s_e)
    assert (t_g - t_e) / (s_g - s_e) == pytest.approx(slope, rel=1e-9)
    latency = t_f - slope
    assert 0 < latency < 0.1 * t_f
