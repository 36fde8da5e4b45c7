"""Models from Hugging Face config.json files (round trips to published parameter counts) and a user's
models and chips registered so that every function finds them by id."""

from __future__ import annotations

import dataclasses
import json

import pytest

import accelbook as ab
from accelbook import economics, inference, training
from accelbook.specs.hf_config import from_hf_config
from accelbook.specs.loader import CatalogueError
from accelbook.ui.dashboards.common import model_options

# -- configs typed from the public config.json files (only the keys the reader uses) ------------------

# meta-llama/Llama-3.1-8B, config.json (huggingface.co/meta-llama/Llama-3.1-8B)
LLAMA_31_8B = dict(model_type="llama", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
                   num_key_value_heads=8, intermediate_size=14336, vocab_size=128256,
                   tie_word_embeddings=False, max_position_embeddings=131072)
# meta-llama/Llama-3.1-70B, config.json
LLAMA_31_70B = dict(LLAMA_31_8B, num_hidden_layers=80, hidden_size=8192, num_attention_heads=64,
                    intermediate_size=28672)
# mistralai/Mixtral-8x7B-v0.1, config.json
MIXTRAL_8X7B = dict(model_type="mixtral", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
                    num_key_value_heads=8, intermediate_size=14336, vocab_size=32000, num_local_experts=8,
                    num_experts_per_tok=2, tie_word_embeddings=False, max_position_embeddings=32768,
                    sliding_window=None)
# deepseek-ai/DeepSeek-V3, config.json
DEEPSEEK_V3 = dict(model_type="deepseek_v3", num_hidden_layers=61, hidden_size=7168, num_attention_heads=128,
                   num_key_value_heads=128, intermediate_size=18432, moe_intermediate_size=2048,
                   vocab_size=129280, n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8,
                   first_k_dense_replace=3, moe_layer_freq=1, q_lora_rank=1536, kv_lora_rank=512,
                   qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, topk_method="noaux_tc",
                   tie_word_embeddings=False, max_position_embeddings=163840)
# Qwen/Qwen2.5-7B, config.json
QWEN25_7B = dict(model_type="qwen2", num_hidden_layers=28, hidden_size=3584, num_attention_heads=28,
                 num_key_value_heads=4, intermediate_size=18944, vocab_size=152064, tie_word_embeddings=False,
                 max_position_embeddings=131072, sliding_window=131072, use_sliding_window=False)
# Qwen/Qwen3-8B, config.json
QWEN3_8B = dict(model_type="qwen3", num_hidden_layers=36, hidden_size=4096, num_attention_heads=32,
                num_key_value_heads=8, head_dim=128, intermediate_size=12288, vocab_size=151936,
                tie_word_embeddings=False, max_position_embeddings=40960)
# Qwen/Qwen3-30B-A3B, config.json
QWEN3_30B_A3B = dict(model_type="qwen3_moe", num_hidden_layers=48, hidden_size=2048, num_attention_heads=32,
                     num_key_value_heads=4, head_dim=128, intermediate_size=6144, moe_intermediate_size=768,
                     num_experts=128, num_experts_per_tok=8, decoder_sparse_step=1, mlp_only_layers=[],
                     vocab_size=151936, tie_word_embeddings=False, max_position_embeddings=40960)
# google/gemma-2-9b, config.json (tie_word_embeddings left to the class default: true)
GEMMA2_9B = dict(model_type="gemma2", num_hidden_layers=42, hidden_size=3584, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=256, intermediate_size=14336, vocab_size=256000,
                 sliding_window=4096, max_position_embeddings=8192)
# openai/gpt-oss-120b, config.json
GPT_OSS_120B = dict(model_type="gpt_oss", num_hidden_layers=36, hidden_size=2880, num_attention_heads=64,
                    num_key_value_heads=8, head_dim=64, intermediate_size=2880, vocab_size=201088,
                    num_local_experts=128, num_experts_per_tok=4, attention_bias=True, sliding_window=128,
                    tie_word_embeddings=False, max_position_embeddings=131072)
# databricks/dbrx-base, config.json (nested attn_config / ffn_config)
DBRX = dict(model_type="dbrx", n_layers=40, d_model=6144, n_heads=48, max_seq_len=32768, vocab_size=100352,
            attn_config={"kv_n_heads": 8}, ffn_config={"ffn_hidden_size": 10752, "moe_num_experts": 16,
                                                        "moe_top_k": 4}, tie_word_embeddings=False)


@pytest.mark.parametrize("cfg, published, rel", [
    (LLAMA_31_8B, 8.03e9, 0.005),      # HF model card: 8.03B
    (LLAMA_31_70B, 70.6e9, 0.005),     # HF model card: 70.6B
    (MIXTRAL_8X7B, 46.7e9, 0.005),     # Mistral AI, "Mixtral of experts": 46.7B total
    (DEEPSEEK_V3, 671e9, 0.005),       # DeepSeek-V3 report: 671B (without the 14B MTP module)
    (QWEN25_7B, 7.61e9, 0.005),        # Qwen2.5-7B model card: 7.61B
    (QWEN3_8B, 8.2e9, 0.005),          # Qwen3-8B model card: 8.2B
    (QWEN3_30B_A3B, 30.5e9, 0.005),    # Qwen3-30B-A3B model card: 30.5B total
    (GEMMA2_9B, 9_241_705_984, 0.005),  # Gemma 2 report (arXiv:2408.00118) Table 2: 8,324,201,984 + 917,504,000
    (GPT_OSS_120B, 116.83e9, 0.005),   # gpt-oss model card (OpenAI, 2025) Table 1: 116.83B total
    (DBRX, 132e9, 0.005),              # Databricks, "Introducing DBRX": 132B total
])
def test_config_round_trip_to_published_count(cfg, published, rel):
    assert from_hf_config(cfg).params == pytest.approx(published, rel=rel)


@pytest.mark.parametrize("cfg, published, rel", [
    (MIXTRAL_8X7B, 12.9e9, 0.005),    # Mistral AI: 12.9B active
    (QWEN3_30B_A3B, 3.3e9, 0.02),     # Qwen3-30B-A3B model card: 3.3B activated (two digits)
    (DEEPSEEK_V3, 37e9, 0.02),        # DeepSeek-V3 report: 37B activated (a rounded figure)
])
def test_config_active_params(cfg, published, rel):
    assert from_hf_config(cfg).active_params == pytest.approx(published, rel=rel)


@pytest.mark.parametrize("cfg, mid", [
    (LLAMA_31_8B, "llama-3.1-8b"), (LLAMA_31_70B, "llama-3.1-70b"), (MIXTRAL_8X7B, "mixtral-8x7b"),
    (DEEPSEEK_V3, "deepseek-v3"), (QWEN3_8B, "qwen3-8b"), (QWEN3_30B_A3B, "qwen3-30b-a3b"), (DBRX, "dbrx"),
])
def test_config_matches_the_catalogue_entry_exactly(cfg, mid):
    m, ref = from_hf_config(cfg), ab.get_model(mid)
    assert (m.params, m.active_params) == (ref.params, ref.active_params)
    assert m.kv_cache_bytes_per_token() == ref.kv_cache_bytes_per_token()
    assert m.flops_per_token(4096, training=True) == ref.flops_per_token(4096, training=True)


def test_shapes_read_from_each_family():
    ds = from_hf_config(DEEPSEEK_V3)
    assert ds.attention_kind == "MLA" and ds.moe.n_shared_experts == 1 and ds.moe.n_dense_layers == 3
    assert ds.moe.balancing == "aux_loss_free" and ds.mla.kv_lora_rank == 512
    assert ds.kv_cache_bytes_per_token("bf16") == 61 * (512 + 64) * 2
    g = from_hf_config(GEMMA2_9B)
    assert g.tied_embeddings and g.d_head == 256 and "sliding window of 4096" in g.notes
    # Gemma 2 9B: GQA KV cache 2 (K, V) * 42 layers * 8 heads * 256 * 2 B = 344,064 B per token
    assert g.kv_cache_bytes_per_token("bf16") == 2 * 42 * 8 * 256 * 2 == 344_064
    q = from_hf_config(QWEN25_7B)
    assert q.attention_kind == "GQA" and "sliding window" not in q.notes  # use_sliding_window = false
    assert from_hf_config(GPT_OSS_120B).moe.top_k == 4
    assert from_hf_config(dict(LLAMA_31_8B, model_type="mistral")).params == from_hf_config(LLAMA_31_8B).params


def test_small_configs_by_hand():
    # a tiny Qwen2-MoE: 2 layers, d=64, 4 heads (d_h 16), 2 KV heads, 8 experts of 32, top 2, one shared
    # expert of 64 (= 2 expert widths), vocab 100, untied. Per layer: attention 2*64*64 + 2*64*32 = 12,288;
    # norms 128; experts (8 + 2) * 3*64*32 = 61,440; router 64*8 = 512. Total 2*74,368 + 2*100*64 + 64.
    cfg = dict(model_type="qwen2_moe", num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
               num_key_value_heads=2, intermediate_size=128, moe_intermediate_size=32, num_experts=8,
               num_experts_per_tok=2, shared_expert_intermediate_size=64, vocab_size=100, tie_word_embeddings=False)
    m = from_hf_config(cfg)
    assert m.moe.n_shared_experts == 2
    assert m.params == 2 * (12_288 + 128 + 61_440 + 512) + 2 * 100 * 64 + 64 == 161_600
    # DeepSeek-V2-Lite style: no query compression (q_lora_rank null)
    lite = dict(DEEPSEEK_V3, model_type="deepseek_v2", q_lora_rank=None, topk_method="greedy")
    m = from_hf_config(lite)
    assert m.mla.q_lora_rank == 0 and "q" in m.attention_matrices() and m.moe.balancing == "aux_loss"


def test_reads_a_file_and_a_folder_and_gemma3_nesting(tmp_path):
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_31_8B))
    by_file, by_folder = from_hf_config(folder / "config.json"), from_hf_config(str(folder))
    assert by_file.id == by_folder.id == "llama-3.1-8b"
    assert by_file.params == 8_030_261_248
    named = from_hf_config(dict(LLAMA_31_8B, _name_or_path="meta-llama/Llama-3.1-8B"), name="Mine")
    assert named.id == "llama-3.1-8b" and named.name == "Mine"
    text = dict(GEMMA2_9B, model_type="gemma3_text")
    wrapped = dict(model_type="gemma3", text_config=text, vision_config={"hidden_size": 1152})
    m = from_hf_config(wrapped, id="g3")
    assert m.params == from_hf_config(text).params and "vision encoder is not counted" in m.notes


@pytest.mark.parametrize("cfg, words", [
    ({k: v for k, v in LLAMA_31_8B.items() if k != "hidden_size"}, ["llama", "hidden_size"]),
    ({k: v for k, v in DEEPSEEK_V3.items() if k != "kv_lora_rank"}, ["deepseek_v3", "kv_lora_rank"]),
    ({k: v for k, v in MIXTRAL_8X7B.items() if k != "num_local_experts"}, ["mixtral", "num_local_experts"]),
    (dict(LLAMA_31_8B, model_type="llama4"), ["unsupported", "llama4"]),
    (dict(LLAMA_31_8B, model_type="grok-1"), ["unsupported", "grok-1"]),
    (dict(LLAMA_31_8B, model_type="dbrx"), ["dbrx", "attn_config"]),
    ({**DBRX, "ffn_config": {"moe_num_experts": 16}}, ["dbrx", "ffn_hidden_size"]),
    ({k: v for k, v in LLAMA_31_8B.items() if k != "model_type"}, ["model_type"]),
    (dict(LLAMA_31_8B, num_key_value_heads=5), ["num_key_value_heads"]),
    (dict(LLAMA_31_8B, hidden_size="4096"), ["hidden_size"]),
    (dict(LLAMA_31_8B, hidden_size=0), ["hidden_size"]),
    (dict(LLAMA_31_8B, tie_word_embeddings="yes"), ["tie_word_embeddings"]),
    (dict(MIXTRAL_8X7B, num_experts_per_tok=9), ["num_experts_per_tok"]),
    (dict(DEEPSEEK_V3, first_k_dense_replace=61), ["first_k_dense_replace"]),
    (dict(DEEPSEEK_V3, moe_layer_freq=2), ["moe_layer_freq"]),
    (dict(QWEN3_30B_A3B, mlp_only_layers=[0]), ["mlp_only_layers"]),
    (dict(QWEN3_30B_A3B, shared_expert_intermediate_size=1000), ["shared_expert_intermediate_size"]),
    (dict(LLAMA_31_8B, hidden_size=4001), ["head_dim"]),
])
def test_clear_errors_name_the_key_and_the_architecture(cfg, words):
    with pytest.raises(ValueError) as e:
        from_hf_config(cfg)
    for w in words:
        assert w in str(e.value)


def test_bad_files(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        from_hf_config(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        from_hf_config(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        from_hf_config(tmp_path / "list.json")
    with pytest.raises(ValueError, match="dict or the path"):
        from_hf_config(42)


# -- a user's models and chips, by id everywhere ------------------------------------------------------

@pytest.fixture
def clean_registry():
    ab.clear_registered()
    yield
    ab.clear_registered()


def test_registered_model_works_by_id_everywhere(clean_registry):
    mine = from_hf_config(QWEN3_8B, id="my-qwen3-8b", name="My Qwen3 8B")
    with pytest.raises(ab.UnknownNameError):
        ab.get_model("my-qwen3-8b")
    ab.register(mine)
    assert ab.get_model("my-qwen3-8b") is mine and ab.get_model("My Qwen3 8B") is mine
    assert ("My Qwen3 8B", "my-qwen3-8b") in model_options()  # the dashboards' pickers
    by_id = training.estimate("my-qwen3-8b", "h100", 64, 2**21, 4096, tp=8)
    by_obj = training.estimate(mine, "h100", 64, 2**21, 4096, tp=8)
    assert by_id.step_time_s == by_obj.step_time_s > 0
    inf_id = inference.estimate("my-qwen3-8b", "h100", 1, 8, 1024, 256)
    inf_obj = inference.estimate(mine, "h100", 1, 8, 1024, 256)
    assert inf_id.tpot_s == inf_obj.tpot_s > 0
    tok = economics.training_tokens_per_s("my-qwen3-8b", "h100", 0.4)
    assert tok == economics.training_tokens_per_s(mine, "h100", 0.4) > 0
    ab.unregister("my-qwen3-8b")
    with pytest.raises(ab.UnknownNameError):
        ab.get_model("my-qwen3-8b")


def test_registered_chip_and_toml_file(clean_registry, tmp_path):
    h100 = ab.get_chip("h100")
    mine = dataclasses.replace(h100, id="my-accel", name="My Accel", aliases=())
    ab.register(mine)
    assert ab.get_chip("my-accel") is mine
    assert economics.training_tokens_per_s("llama-3.1-8b", "my-accel", 0.4) == \
        economics.training_tokens_per_s("llama-3.1-8b", h100, 0.4)
    assert inference.estimate("llama-3.1-8b", "my-accel", 1, 8, 1024, 256).tpot_s == \
        inference.estimate("llama-3.1-8b", mine, 1, 8, 1024, 256).tpot_s
    path = tmp_path / "my_models.toml"
    path.write_text('[tiny-llama]\nname = "Tiny Llama"\nfamily = "Mine"\nn_layers = 2\nd_model = 64\n'
                    'n_heads = 4\nd_ff = 128\nvocab_size = 100\nffn = "swiglu"\n')
    (got,) = ab.register(path)
    assert ab.get_model("tiny-llama") is got and got.params == 2 * (4 * 64 * 64 + 3 * 64 * 128 + 128) + 2 * 100 * 64 + 64


def test_register_collisions_and_replace(clean_registry):
    builtin = ab.get_model("llama-3.1-8b")
    copy = from_hf_config(LLAMA_31_8B, id="llama-3.1-8b", name="My Llama")
    with pytest.raises(ValueError, match="already in the catalogue"):
        ab.register(copy)
    assert ab.get_model("llama-3.1-8b") is builtin  # nothing registered
    # a new id whose name folds to a built-in's name: the catalogue's collision rule names both
    with pytest.raises(CatalogueError, match="llama-3.1-8b"):
        ab.register(from_hf_config(LLAMA_31_8B, id="other", name="Llama 3.1 8B"))
    with pytest.raises(ValueError, match="given twice"):
        ab.register(from_hf_config(QWEN3_8B, id="x1"), from_hf_config(QWEN3_8B, id="x1"))
    ab.register(copy, replace=True)
    assert ab.get_model("llama-3.1-8b") is copy
    ab.clear_registered()
    assert ab.get_model("llama-3.1-8b") is builtin
    with pytest.raises(KeyError):
        ab.unregister("llama-3.1-8b")
    with pytest.raises(TypeError):
        ab.register(42)


# -- bad values the models file refuses are refused here too (issue 33) ------------------------------

@pytest.mark.parametrize("key, value", [
    ("intermediate_size", 0), ("vocab_size", 0), ("sliding_window", 0), ("max_position_embeddings", 0),
    ("head_dim", 0), ("head_dim", -128), ("hidden_size", 10**30), ("num_hidden_layers", 10**8),
    ("vocab_size", -1), ("num_key_value_heads", 0),
])
def test_config_refuses_what_the_models_file_refuses(key, value):
    with pytest.raises(ValueError, match=key):
        from_hf_config(dict(LLAMA_31_8B, **{key: value}))


def test_sliding_window_zero_is_fine_when_switched_off():
    m = from_hf_config(dict(QWEN25_7B, sliding_window=0, use_sliding_window=False))
    assert m.window is None


def test_moe_and_mla_zero_widths_refused():
    with pytest.raises(ValueError, match="moe_intermediate_size"):
        from_hf_config(dict(QWEN3_30B_A3B, moe_intermediate_size=0))
    with pytest.raises(ValueError, match="num_local_experts"):
        from_hf_config(dict(MIXTRAL_8X7B, num_local_experts=0))
    zero_mla = dict(DEEPSEEK_V3, q_lora_rank=0, kv_lora_rank=0, qk_nope_head_dim=0, qk_rope_head_dim=0, v_head_dim=0)
    with pytest.raises(ValueError, match="MLA key 'kv_lora_rank'"):
        from_hf_config(zero_mla)
    # DeepSeek-V2-Lite has no query latent (q_lora_rank null): still a model
    assert from_hf_config(dict(DEEPSEEK_V3, q_lora_rank=None)).mla.q_lora_rank == 0


@pytest.mark.parametrize("kw, word", [({"id": ""}, "id"), ({"id": 8}, "id"), ({"id": "  "}, "id"),
                                      ({"name": ""}, "name"), ({"name": 3.5}, "name")])
def test_empty_or_numeric_id_refused(kw, word):
    with pytest.raises(ValueError, match=f"{word} must be a non-empty string"):
        from_hf_config(LLAMA_31_8B, **kw)


def test_default_id_never_empty():
    assert from_hf_config(dict(LLAMA_31_8B, _name_or_path="/")).id == "hf-llama"
    assert from_hf_config(dict(LLAMA_31_8B, _name_or_path="meta-llama/Llama-3.1-8B/")).id == "llama-3.1-8b"


def test_utf16_and_deeply_nested_files_name_the_file(tmp_path):
    utf16 = tmp_path / "utf16.json"
    utf16.write_text(json.dumps(LLAMA_31_8B), encoding="utf-16")
    with pytest.raises(ValueError, match="utf16.json.*not UTF-8"):
        from_hf_config(utf16)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="deep.json.*too deeply"):
        from_hf_config(deep)
    bom = tmp_path / "bom.json"       # UTF-8 with a byte-order mark (Windows editors) is still UTF-8
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(LLAMA_31_8B).encode())
    assert from_hf_config(bom).params == 8_030_261_248


# -- Hugging Face Hub ids, from a fake cache and with the network refused -----------------------------

HUB_ID = "meta-llama/Llama-3.1-8B"


def _fake_hub_cache(root, repo_id: str, cfg: dict) -> None:
    """huggingface_hub's cache layout: models--owner--name/{refs/main, snapshots/<rev>/config.json}."""
    rev = "0123456789abcdef0123456789abcdef01234567"
    repo = root / ("models--" + repo_id.replace("/", "--"))
    (repo / "snapshots" / rev).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(rev)
    (repo / "snapshots" / rev / "config.json").write_text(json.dumps(cfg))


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty Hugging Face cache under tmp_path, offline, with no token; the working folder tmp_path."""
    pytest.importorskip("huggingface_hub", reason="the hf extra (huggingface_hub) is not installed")
    cache = tmp_path / "hf_cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    return cache


def test_hub_id_read_from_the_cache_offline(hub):
    _fake_hub_cache(hub, HUB_ID, LLAMA_31_8B)
    m = from_hf_config(HUB_ID)
    assert m.params == 8_030_261_248                   # the model card: 8.03B
    assert m.id == "llama-3.1-8b"                      # the repository's name, not the snapshot's hash


def test_hub_id_cache_under_hf_home(hub, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    _fake_hub_cache(tmp_path / "home" / "hub", HUB_ID, LLAMA_31_70B)
    assert from_hf_config(HUB_ID).params == pytest.approx(70.6e9, rel=0.005)


def test_hub_id_offline_and_not_cached(hub):
    with pytest.raises(ValueError, match="'meta-llama/Llama-3.1-8B'.*not in the Hugging Face cache.*HF_HUB_OFFLINE"):
        from_hf_config(HUB_ID)


def _refuse(exc):
    def fake(repo_id, filename, **kw):
        if kw.get("local_files_only"):
            from huggingface_hub.utils import LocalEntryNotFoundError
            raise LocalEntryNotFoundError("not in the cache")
        raise exc
    return fake


def test_hub_id_no_network_names_the_id(hub, monkeypatch):
    import huggingface_hub
    from huggingface_hub.utils import LocalEntryNotFoundError
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", _refuse(LocalEntryNotFoundError("connection refused")))
    with pytest.raises(ValueError, match="'meta-llama/Llama-3.1-8B': cannot reach the Hugging Face Hub"):
        from_hf_config(HUB_ID)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", _refuse(ConnectionError("no route to host")))
    with pytest.raises(ValueError, match="'meta-llama/Llama-3.1-8B'.*ConnectionError"):
        from_hf_config(HUB_ID)


def test_gated_model_says_set_hf_token(hub, monkeypatch):
    import huggingface_hub
    from huggingface_hub.utils import GatedRepoError, RepositoryNotFoundError
    monkeypatch.delenv("HF_HUB_OFFLINE")
    for cls in (GatedRepoError, RepositoryNotFoundError):
        err = cls.__new__(cls)                         # as raised on a 401 (its constructor wants a response)
        Exception.__init__(err, "401 Client Error")
        monkeypatch.setattr(huggingface_hub, "hf_hub_download", _refuse(err))
        with pytest.raises(ValueError, match="'meta-llama/Llama-3.1-8B'.*set HF_TOKEN"):
            from_hf_config(HUB_ID)


def test_existing_path_wins_over_a_hub_id(hub, tmp_path, monkeypatch):
    import huggingface_hub
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", _refuse(AssertionError("the Hub was asked")))
    (tmp_path / "meta-llama" / "Llama-3.1-8B").mkdir(parents=True)
    (tmp_path / "meta-llama" / "Llama-3.1-8B" / "config.json").write_text(json.dumps(LLAMA_31_70B))
    assert from_hf_config(HUB_ID).n_layers == 80       # the local folder's config (70B), not the Hub's


def test_neither_a_path_nor_an_id(hub):
    for bad in ("no such folder", "a/b/c", "-x/y", "owner/na--me", ""):
        with pytest.raises(ValueError, match="neither an existing config.json"):
            from_hf_config(bad)


def test_hub_id_without_huggingface_hub(tmp_path, monkeypatch):
    import sys
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)     # as if the hf extra were not installed
    with pytest.raises(ValueError, match=r"'meta-llama/Llama-3.1-8B'.*pip install 'accelbook\[hf\]'"):
        from_hf_config(HUB_ID)
