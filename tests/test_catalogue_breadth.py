"""The wider catalogue (issue 20): at least 30 models and 30 accelerators, every added model's derived
parameter count against its published one, its Hugging Face config round-tripped to the catalogue entry,
and KV bytes per token by hand. Published numbers are typed from the sources cited next to them."""

from __future__ import annotations

import pytest

import accelbook as ab
from accelbook.specs.chips import all_chips
from accelbook.specs.hf_config import from_hf_config
from accelbook.specs.models import all_models

# -- configs typed from the public config.json files (only the keys the reader uses) ------------------
GEMMA2_9B = dict(model_type="gemma2", num_hidden_layers=42, hidden_size=3584, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=256, intermediate_size=14336, vocab_size=256000,
                 sliding_window=4096, max_position_embeddings=8192)
GEMMA2_27B = dict(GEMMA2_9B, num_hidden_layers=46, hidden_size=4608, num_attention_heads=32, num_key_value_heads=16,
                  head_dim=128, intermediate_size=36864)
_G3 = dict(model_type="gemma3_text", vocab_size=262208, sliding_window=1024, sliding_window_pattern=6,
           max_position_embeddings=131072)
GEMMA3_4B = dict(_G3, num_hidden_layers=34, hidden_size=2560, num_attention_heads=8, num_key_value_heads=4,
                 head_dim=256, intermediate_size=10240)
GEMMA3_12B = dict(_G3, num_hidden_layers=48, hidden_size=3840, num_attention_heads=16, num_key_value_heads=8,
                  head_dim=256, intermediate_size=15360)
GEMMA3_27B = dict(_G3, num_hidden_layers=62, hidden_size=5376, num_attention_heads=32, num_key_value_heads=16,
                  head_dim=128, intermediate_size=21504)
GPT_OSS_120B = dict(model_type="gpt_oss", num_hidden_layers=36, hidden_size=2880, num_attention_heads=64,
                    num_key_value_heads=8, head_dim=64, intermediate_size=2880, vocab_size=201088,
                    num_local_experts=128, num_experts_per_tok=4, attention_bias=True, sliding_window=128,
                    tie_word_embeddings=False, max_position_embeddings=131072)
GPT_OSS_20B = dict(GPT_OSS_120B, num_hidden_layers=24, num_local_experts=32)
_L4 = dict(model_type="llama4_text", hidden_size=5120, intermediate_size=8192, intermediate_size_mlp=16384,
           num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8, head_dim=128, vocab_size=202048,
           num_experts_per_tok=1, attention_chunk_size=8192, no_rope_layers=[], tie_word_embeddings=False)
LLAMA4_SCOUT = dict(model_type="llama4", vision_config={"hidden_size": 1408},
                    text_config=dict(_L4, num_local_experts=16, interleave_moe_layer_step=1,
                                     max_position_embeddings=10485760))
LLAMA4_MAVERICK = dict(model_type="llama4", vision_config={"hidden_size": 1408},
                       text_config=dict(_L4, num_local_experts=128, interleave_moe_layer_step=2,
                                        max_position_embeddings=1048576))
_DS = dict(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
           moe_layer_freq=1, tie_word_embeddings=False, max_position_embeddings=131072)
KIMI_K2 = dict(_DS, model_type="kimi_k2", num_hidden_layers=61, hidden_size=7168, num_attention_heads=64,
               num_key_value_heads=64, intermediate_size=18432, moe_intermediate_size=2048, vocab_size=163840,
               n_routed_experts=384, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=1,
               topk_method="noaux_tc")
DEEPSEEK_V2 = dict(_DS, model_type="deepseek_v2", num_hidden_layers=60, hidden_size=5120, num_attention_heads=128,
                   num_key_value_heads=128, intermediate_size=12288, moe_intermediate_size=1536, vocab_size=102400,
                   n_routed_experts=160, n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1,
                   topk_method="greedy")
MISTRAL_LARGE_2 = dict(model_type="mistral", num_hidden_layers=88, hidden_size=12288, num_attention_heads=96,
                       num_key_value_heads=8, head_dim=128, intermediate_size=28672, vocab_size=32768,
                       sliding_window=None, tie_word_embeddings=False, max_position_embeddings=131072)
QWEN3_235B = dict(model_type="qwen3_moe", num_hidden_layers=94, hidden_size=4096, num_attention_heads=64,
                  num_key_value_heads=4, head_dim=128, intermediate_size=12288, moe_intermediate_size=1536,
                  num_experts=128, num_experts_per_tok=8, decoder_sparse_step=1, mlp_only_layers=[],
                  vocab_size=151936, tie_word_embeddings=False, max_position_embeddings=40960)
QWEN3_14B = dict(model_type="qwen3", num_hidden_layers=40, hidden_size=5120, num_attention_heads=40,
                 num_key_value_heads=8, head_dim=128, intermediate_size=17408, vocab_size=151936,
                 tie_word_embeddings=False, max_position_embeddings=40960)
LLAMA32_1B = dict(model_type="llama", num_hidden_layers=16, hidden_size=2048, num_attention_heads=32,
                  num_key_value_heads=8, intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True,
                  max_position_embeddings=131072)
LLAMA32_3B = dict(LLAMA32_1B, num_hidden_layers=28, hidden_size=3072, num_attention_heads=24)
PHI_4 = dict(model_type="llama", num_hidden_layers=40, hidden_size=5120, num_attention_heads=40,
             num_key_value_heads=10, intermediate_size=17920, vocab_size=100352, tie_word_embeddings=False,
             max_position_embeddings=16384)   # phi3 model_type on the hub; the same shapes as a Llama block

# (config, catalogue id, published total, tolerance, where the published figure is from)
ROUND_TRIPS = [
    (GEMMA2_9B, "gemma-2-9b", 9_241_705_984, 0.005),      # Gemma 2 report, Table 2: 917,504,000 + 8,324,201,984
    (GEMMA2_27B, "gemma-2-27b", 27_228_373_504, 0.005),   # Table 2: 1,180,893,184 + 26,047,480,320
    (GEMMA3_4B, "gemma-3-4b", 3_884e6, 0.005),           # Gemma 3 report, Table 1: 675M + 3,209M (no vision)
    (GEMMA3_12B, "gemma-3-12b", 11_771e6, 0.005),        # Table 1: 1,012M + 10,759M
    (GEMMA3_27B, "gemma-3-27b", 27_016e6, 0.005),        # Table 1: 1,416M + 25,600M
    (GPT_OSS_120B, "gpt-oss-120b", 116.83e9, 0.005),     # gpt-oss model card, Table 1
    (GPT_OSS_20B, "gpt-oss-20b", 20.91e9, 0.005),        # gpt-oss model card, Table 1
    (LLAMA4_MAVERICK, "llama-4-maverick", 400e9, 0.005),  # Meta, "The Llama 4 herd": 400B total
    (DEEPSEEK_V2, "deepseek-v2", 236e9, 0.005),          # DeepSeek-V2 report: 236B total
    (MISTRAL_LARGE_2, "mistral-large-2", 123e9, 0.005),  # Mistral AI, "Large Enough": 123B
    (QWEN3_235B, "qwen3-235b-a22b", 235e9, 0.005),       # Qwen3-235B-A22B model card: 235B
    (QWEN3_14B, "qwen3-14b", 14.8e9, 0.005),             # Qwen3-14B model card: 14.8B
    (LLAMA32_1B, "llama-3.2-1b", 1.23e9, 0.005),         # Llama 3.2 model card: 1.23B
    (LLAMA32_3B, "llama-3.2-3b", 3.21e9, 0.005),         # Llama 3.2 model card: 3.21B
    (PHI_4, "phi-4", 14.7e9, 0.005),                     # phi-4 on the hub: 14.7B in the safetensors
    # not within 0.5 %, and why (the notes of the catalogue entries say so too):
    (LLAMA4_SCOUT, "llama-4-scout", 109e9, 0.015),       # 109B includes the ~0.9B vision encoder: derived 107.8B
    (KIMI_K2, "kimi-k2", 1.04e12, 0.015),                # report 1.04T; the config's shapes give 1.026T
]


def test_at_least_thirty_models_and_thirty_accelerators():
    assert len(all_models()) >= 30
    assert len(all_chips()) >= 30


@pytest.mark.parametrize("cfg, mid, published, rel", ROUND_TRIPS, ids=[r[1] for r in ROUND_TRIPS])
def test_config_round_trip_to_the_catalogue_and_the_published_count(cfg, mid, published, rel):
    m, ref = from_hf_config(cfg), ab.get_model(mid)
    assert (m.params, m.active_params) == (ref.params, ref.active_params)
    assert m.kv_cache_bytes_per_token() == ref.kv_cache_bytes_per_token()
    assert m.window == ref.window
    assert m.kv_cache_bytes(131072) == ref.kv_cache_bytes(131072)
    assert ref.params == pytest.approx(published, rel=rel)
    assert ref.published_params == published


@pytest.mark.parametrize("mid, published, rel", [
    ("llama-4-scout", 17e9, 0.02),        # Meta: 17B active (two digits)
    ("llama-4-maverick", 17e9, 0.02),     # Meta: 17B active
    ("deepseek-v2", 21e9, 0.02),          # DeepSeek-V2 report: 21B activated (two digits)
    ("qwen3-235b-a22b", 22e9, 0.01),      # Qwen3 card: 22B activated
    ("kimi-k2", 32e9, 0.03),              # Kimi K2 report: 32B activated (two digits)
])
def test_active_params_match_published(mid, published, rel):
    assert ab.get_model(mid).active_params == pytest.approx(published, rel=rel)


@pytest.mark.parametrize("mid, published", [("gpt-oss-120b", 5.13e9), ("gpt-oss-20b", 3.61e9)])
def test_gpt_oss_active_count_leaves_out_the_embedding(mid, published):
    # gpt-oss model card Table 1 counts active parameters without the 201,088 x 2,880 embedding
    m = ab.get_model(mid)
    assert m.embedding_params == 201_088 * 2_880 == 579_133_440
    assert m.active_params - m.embedding_params == pytest.approx(published, rel=0.005)


@pytest.mark.parametrize("mid, hand", [
    ("llama-3.2-1b", 2 * 16 * 8 * 64 * 2),       # GQA: d_h = 2048/32 = 64: 32,768 B
    ("phi-4", 2 * 40 * 10 * 128 * 2),            # 204,800 B
    ("mistral-large-2", 2 * 88 * 8 * 128 * 2),   # 360,448 B
    ("qwen3-235b-a22b", 2 * 94 * 4 * 128 * 2),   # 192,512 B
    ("deepseek-v2", 60 * (512 + 64) * 2),        # MLA: 69,120 B
    ("kimi-k2", 61 * (512 + 64) * 2),            # MLA: 70,272 B
    ("gemma-3-27b", 2 * 62 * 16 * 128 * 2),      # below the window every layer grows: 507,904 B
])
def test_kv_bytes_per_token_by_hand(mid, hand):
    assert ab.get_model(mid).kv_cache_bytes_per_token("bf16") == hand


@pytest.mark.parametrize("mid", ["gemma-2-9b", "gemma-3-27b", "gpt-oss-120b", "llama-4-scout", "kimi-k2",
                                 "deepseek-v2", "mistral-large-2", "qwen3-235b-a22b", "phi-4", "llama-3.2-1b"])
def test_added_models_cite_a_dated_source(mid):
    m = ab.get_model(mid)
    prov = m.provenance["published_params"]
    assert prov.source.title and prov.source.url and prov.date[:4] in ("2024", "2025")


# memory in bytes as the catalogue holds it: a GPU's HBM in the unit its stacks have (the datasheet's "GB" read as
# GiB) unless a driver total is published (L40S: nvidia-smi's 46,068 MiB); the ASICs' figures as printed
GIB, MIB = 2**30, 2**20


@pytest.mark.parametrize("cid, bf16_tflop_s, mem_bytes, bw_tb_s", [
    ("gh200", 989.4, 96 * GIB, 4.0),        # NVIDIA GH200 datasheet (96 GB HBM3 version), dense = sparse / 2
    ("b300", 2250, 288 * GIB, 8.0),         # HGX B300 per GPU (Klockwood after NVIDIA)
    ("gb300", 2500, 288 * GIB, 8.0),        # GB300 NVL72 per GPU (Verda): rack 180 PF bf16 / 72
    ("mi325x", 1307.4, 256 * GIB, 6.0),     # AMD MI325X specifications
    ("mi355x", 2516.6, 288 * GIB, 8.0),     # 8,192 FP8 FLOP/CU/clock x 256 CUs x 2.4 GHz / 2
    ("gaudi3", 1835, 128e9, 3.67),          # Intel, Hot Chips 2024
    ("maia100", 800, 64e9, 1.8),            # Microsoft, Hot Chips 2024
    ("sn40l", 638, 64e9, 1.6),              # SambaNova, Hot Chips 2024 (25.6 TB/s per 16 sockets)
    ("l40s", 362.05, 46068 * MIB, 0.864),   # NVIDIA L40S datasheet (GDDR6); nvidia-smi total
])
def test_added_chips_hold_their_published_numbers(cid, bf16_tflop_s, mem_bytes, bw_tb_s):
    c = ab.get_chip(cid)
    assert c.status == "shipping"
    assert c.peak_flop_s("bf16") == pytest.approx(bf16_tflop_s * 1e12)
    assert c.memory_bytes == pytest.approx(mem_bytes)
    assert c.memory_bw_bytes_per_s == pytest.approx(bw_tb_s * 1e12)


def test_trainium3_memory_is_in_gib_and_mxfp8_doubles_trainium2():
    t3, t2 = ab.get_chip("trainium3"), ab.get_chip("trainium2")
    assert t3.memory_bytes == 144 * 2**30                         # AWS Neuron docs: 144 GiB
    assert t3.peak_flop_s("fp8") == pytest.approx(2517e12)        # 2,517 MXFP8 TFLOPS
    assert t3.peak_flop_s("fp8") / t2.peak_flop_s("fp8") == pytest.approx(2517 / 1299)


def test_mi355x_peaks_follow_the_per_cu_rate():
    # AMD at ISSCC: 8,192 FP8 FLOP per CU per clock; 256 CUs at 2.4 GHz = 5.033 PF; FP4 twice, BF16 half
    c = ab.get_chip("mi355x")
    assert c.peak_flop_s("fp8") == pytest.approx(8192 * 256 * 2.4e9, rel=1e-4)
    assert c.peak_flop_s("fp4") == pytest.approx(2 * 8192 * 256 * 2.4e9, rel=1e-4)


@pytest.mark.parametrize("name, cid", [("GH200", "gh200"), ("Blackwell Ultra", "b300"), ("GB300 NVL72", "gb300"),
                                       ("MI355X", "mi355x"), ("Gaudi 3", "gaudi3"), ("Trn3", "trainium3"),
                                       ("Maia 100", "maia100"), ("SN40L", "sn40l"), ("L40S", "l40s")])
def test_added_chips_found_by_their_usual_names(name, cid):
    assert ab.get_chip(name).id == cid


def test_pickers_list_the_added_entries():
    from accelbook.ui.dashboards.common import chip_options, model_options
    models = {i for _, i in model_options()}
    chips = {i for _, i in chip_options()}
    assert {"gemma-3-27b", "llama-4-maverick", "kimi-k2", "gpt-oss-120b", "qwen3-235b-a22b"} <= models
    assert {"gh200", "b300", "mi355x", "gaudi3", "trainium3", "maia100", "sn40l", "l40s"} <= chips
