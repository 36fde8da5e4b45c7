"""A :class:`~accelbook.specs.models.Model` from a Hugging Face ``config.json`` (read from disk, no network).

The config's shape keys map onto the Model's fields; every count (parameters, FLOPs, KV bytes) is
then derived by :mod:`accelbook.specs.models` as for the catalogue's own entries:

- ``num_hidden_layers`` → ``n_layers`` (L), ``hidden_size`` → ``d_model`` (d),
  ``num_attention_heads`` → ``n_heads`` (H), ``num_key_value_heads`` → ``n_kv_heads`` (H_kv, GQA),
  ``head_dim`` → ``head_dim`` (d_h), ``intermediate_size`` → ``d_ff``, ``vocab_size`` → ``V``,
  ``tie_word_embeddings`` → ``tied_embeddings``.
- MoE (Mixtral, Qwen-MoE, DeepSeek, Kimi K2, GPT-OSS, DBRX: its nested ``attn_config`` / ``ffn_config``
  are read as Mixtral's keys; Llama 4: ``text_config``): routed experts, experts per token, the expert
  width, shared experts and the dense layers (DeepSeek's ``first_k_dense_replace``; Llama 4's layers
  outside ``moe_layers``, of width ``intermediate_size_mlp``, counted as if they led).
- MLA (DeepSeek-V2/V3): ``q_lora_rank``, ``kv_lora_rank``, ``qk_nope_head_dim``, ``qk_rope_head_dim``,
  ``v_head_dim``.

- Local attention (:class:`~accelbook.specs.windows.Window`): ``sliding_window`` (unless
  ``use_sliding_window`` is false) or ``attention_chunk_size`` (chunked, Llama 4 style) gives ``W``;
  which layers are local comes from ``layer_types`` ("sliding_attention" / "chunked_attention" /
  "full_attention"), else ``sliding_window_pattern`` (Gemma 3: every 6th layer global), else
  ``no_rope_layers`` (Llama 4: 1 = local with RoPE, 0 = global NoPE; ``no_rope_layer_interval`` = 4
  when the list is empty), else the family's rule
  (Gemma 2 and GPT-OSS alternate, layer 0 local; Gemma 3 every 6th global; Mistral all local).

Every FFN these families use is gated (SwiGLU, GeGLU: three matrices). What the Model does not hold is
left out and said in its ``notes``: Qwen2's q/k/v biases and Qwen3's q/k norms (under 0.01 % of the
weights), Gemma 2/3's extra norms, GPT-OSS's expert biases and attention sinks (0.04 %), Gemma 3's
vision tower.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from .models import MLA, Model, MoE
from .windows import Window, window_from_layer_types

#: model_type -> the family of architectures it is read as
ARCHITECTURES: Mapping[str, str] = {
    "llama": "dense", "mistral": "dense", "qwen2": "dense", "qwen3": "dense",
    "gemma": "gemma", "gemma2": "gemma", "gemma3": "gemma", "gemma3_text": "gemma",
    "mixtral": "moe", "qwen2_moe": "moe", "qwen3_moe": "moe", "gpt_oss": "moe",
    "deepseek_v2": "deepseek", "deepseek_v3": "deepseek", "kimi_k2": "deepseek", "dbrx": "moe",
    "llama4_text": "llama4",
}


def _get(cfg: Mapping[str, Any], key: str, arch: str, default: Any = ..., kind: type = int) -> Any:
    """``cfg[key]``, checked: a ValueError naming the key and the architecture when missing or bad."""
    if key not in cfg or (cfg[key] is None and default is not ...):
        if default is ...:
            raise ValueError(f"Hugging Face config ({arch}): missing key {key!r}")
        return default
    v = cfg[key]
    if kind is int and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
        raise ValueError(f"Hugging Face config ({arch}): key {key!r} must be a whole number >= 0, got {v!r}")
    if kind is bool and not isinstance(v, bool):
        raise ValueError(f"Hugging Face config ({arch}): key {key!r} must be true or false, got {v!r}")
    return v


def read_hf_config(path_or_dict: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """The config as a dict: a mapping as given, or a ``config.json`` file (or a folder holding one)."""
    if isinstance(path_or_dict, Mapping):
        return dict(path_or_dict)
    if isinstance(path_or_dict, bytes) or not isinstance(path_or_dict, (str, Path)):
        raise ValueError(f"from_hf_config takes a dict or the path of a config.json, got {type(path_or_dict).__name__}")
    path = Path(path_or_dict)
    if path.is_dir():
        path = path / "config.json"
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"cannot read Hugging Face config {str(path)!r}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{str(path)!r} is not valid JSON: {e}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{str(path)!r} must hold a JSON object, got {type(cfg).__name__}")
    return cfg


def _default_id(cfg: Mapping[str, Any], source: Any, arch: str) -> str:
    name = cfg.get("_name_or_path")
    if isinstance(name, str) and name.strip():
        return name.strip().rstrip("/").split("/")[-1].lower()
    if isinstance(source, (str, Path)):
        p = Path(source)
        folder = p if p.is_dir() else p.parent
        if folder.name:
            return folder.name.lower()
    return f"hf-{arch}"


def _flatten_dbrx(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """DBRX's config (``d_model``, ``n_heads``, ``attn_config``, ``ffn_config``) in Mixtral's keys."""
    arch = "dbrx"
    attn, ffn = cfg.get("attn_config"), cfg.get("ffn_config")
    for key, t in (("attn_config", attn), ("ffn_config", ffn)):
        if not isinstance(t, Mapping):
            raise ValueError(f"Hugging Face config ({arch}): missing key {key!r} (a table)")
    return {
        **cfg, "num_hidden_layers": _get(cfg, "n_layers", arch), "hidden_size": _get(cfg, "d_model", arch),
        "num_attention_heads": _get(cfg, "n_heads", arch),
        "num_key_value_heads": _get(attn, "kv_n_heads", arch), "intermediate_size": _get(ffn, "ffn_hidden_size", arch),
        "num_local_experts": _get(ffn, "moe_num_experts", arch), "num_experts_per_tok": _get(ffn, "moe_top_k", arch),
        "max_position_embeddings": _get(cfg, "max_seq_len", arch, default=2048),
    }


def _moe(cfg: Mapping[str, Any], arch: str) -> tuple[MoE, list[str]]:
    """The MoE block of a Mixtral / Qwen-MoE / GPT-OSS config, and what it leaves out."""
    notes = []
    if arch in ("mixtral", "gpt_oss", "dbrx"):
        n_experts = _get(cfg, "num_local_experts", arch)
        d_ff_expert = _get(cfg, "intermediate_size", arch)
        shared = 0
    else:  # qwen2_moe, qwen3_moe
        n_experts = _get(cfg, "num_experts", arch)
        d_ff_expert = _get(cfg, "moe_intermediate_size", arch)
        shared_ff = _get(cfg, "shared_expert_intermediate_size", arch, default=0)
        if shared_ff % d_ff_expert:
            raise ValueError(f"Hugging Face config ({arch}): unsupported 'shared_expert_intermediate_size' "
                             f"{shared_ff}: not a multiple of moe_intermediate_size {d_ff_expert}")
        shared = shared_ff // d_ff_expert
        if _get(cfg, "decoder_sparse_step", arch, default=1) != 1 or cfg.get("mlp_only_layers"):
            raise ValueError(f"Hugging Face config ({arch}): unsupported 'decoder_sparse_step' / 'mlp_only_layers' "
                             "(MoE layers interleaved with dense ones)")
    top_k = _get(cfg, "num_experts_per_tok", arch) if "num_experts_per_tok" in cfg else \
        _get(cfg, "experts_per_token", arch)
    if not 1 <= top_k <= n_experts:
        raise ValueError(f"Hugging Face config ({arch}): 'num_experts_per_tok' {top_k} must be in [1, {n_experts}]")
    if arch == "gpt_oss":
        notes.append("expert biases and attention sinks left out (0.04 % of the weights)")
    return MoE(n_experts=n_experts, top_k=top_k, d_ff_expert=d_ff_expert, n_shared_experts=shared,
               balancing="aux_loss"), notes


def _experts(cfg: Mapping[str, Any], arch: str, key: str) -> tuple[int, int]:
    """(experts, experts per token) from ``key`` and ``num_experts_per_tok``, checked against each other."""
    n_experts = _get(cfg, key, arch)
    top_k = _get(cfg, "num_experts_per_tok", arch)
    if not 1 <= top_k <= n_experts:
        raise ValueError(f"Hugging Face config ({arch}): 'num_experts_per_tok' {top_k} must be in [1, {n_experts}]")
    return n_experts, top_k


def _llama4(cfg: Mapping[str, Any], arch: str, n_layers: int) -> tuple[MoE, int, list[str]]:
    """Llama 4's MoE (a shared expert in every MoE layer; MoE layers every ``interleave_moe_layer_step``-th,
    the others dense of width ``intermediate_size_mlp``), the dense width, and what is left out."""
    step = _get(cfg, "interleave_moe_layer_step", arch, default=1)
    moe_layers = cfg.get("moe_layers")
    if moe_layers is None:
        moe_layers = list(range(step - 1, n_layers, step)) if step >= 1 else []
    if not isinstance(moe_layers, list) or not moe_layers or len(set(moe_layers)) != len(moe_layers) \
            or not all(isinstance(i, int) and 0 <= i < n_layers for i in moe_layers):
        raise ValueError(f"Hugging Face config ({arch}): key 'moe_layers' / 'interleave_moe_layer_step' must "
                         f"give at least one MoE layer among {n_layers}")
    n_experts, top_k = _experts(cfg, arch, "num_local_experts")
    n_dense = n_layers - len(moe_layers)
    moe = MoE(n_experts=n_experts, top_k=top_k, d_ff_expert=_get(cfg, "intermediate_size", arch),
              n_shared_experts=1, n_dense_layers=n_dense, balancing="aux_loss")
    notes = ["the q/k norms have no weights (L2 norms)"]
    if n_dense:
        notes.append(f"{n_dense} dense layers interleaved with the MoE layers (counted as leading dense layers)")
    return moe, _get(cfg, "intermediate_size_mlp", arch), notes


def _unwrap(cfg: dict[str, Any]) -> dict[str, Any]:
    """The text model's keys of a multimodal config (Gemma 3, Llama 4), DBRX's in Mixtral's keys."""
    outer = cfg.get("model_type")
    if isinstance(cfg.get("text_config"), dict) and outer in ("gemma3", "llama4"):
        inner = "gemma3" if outer == "gemma3" else cfg["text_config"].get("model_type", "llama4_text")
        return {**cfg["text_config"], "_name_or_path": cfg.get("_name_or_path"),
                "vision_config": cfg.get("vision_config"), "model_type": inner}
    if outer == "llama4":
        raise ValueError("Hugging Face config (llama4): unsupported without 'text_config' (the text model's keys)")
    return _flatten_dbrx(cfg) if outer == "dbrx" else cfg


def _deepseek(cfg: Mapping[str, Any], arch: str, n_layers: int) -> tuple[MoE, MLA]:
    """DeepSeek-V2/V3's MoE (shared experts, leading dense layers) and MLA."""
    if _get(cfg, "moe_layer_freq", arch, default=1) != 1:
        raise ValueError(f"Hugging Face config ({arch}): unsupported 'moe_layer_freq' {cfg['moe_layer_freq']} (only 1)")
    n_dense = _get(cfg, "first_k_dense_replace", arch, default=0)
    if n_dense >= n_layers:
        raise ValueError(f"Hugging Face config ({arch}): 'first_k_dense_replace' {n_dense} must be below "
                         f"num_hidden_layers {n_layers}")
    n_experts, top_k = _experts(cfg, arch, "n_routed_experts")
    noaux = cfg.get("topk_method") == "noaux_tc"
    moe = MoE(n_experts=n_experts, top_k=top_k, d_ff_expert=_get(cfg, "moe_intermediate_size", arch),
              n_shared_experts=_get(cfg, "n_shared_experts", arch, default=0), n_dense_layers=n_dense,
              balancing="aux_loss_free" if noaux else "aux_loss")
    mla = MLA(q_lora_rank=_get(cfg, "q_lora_rank", arch, default=0),
              kv_lora_rank=_get(cfg, "kv_lora_rank", arch),
              qk_nope_head_dim=_get(cfg, "qk_nope_head_dim", arch),
              qk_rope_head_dim=_get(cfg, "qk_rope_head_dim", arch),
              v_head_dim=_get(cfg, "v_head_dim", arch))
    return moe, mla


#: the layers a family makes local when its config lists none: a period (0: every layer local)
_FAMILY_PERIOD: Mapping[str, int] = {"gemma2": 2, "gemma3": 6, "gemma3_text": 6, "gpt_oss": 2}


def _window(cfg: Mapping[str, Any], arch: str, n_layers: int) -> Window | None:
    """The config's local attention (see the module docstring), or None."""
    kind, tokens = "sliding", _get(cfg, "sliding_window", arch, default=None)
    if tokens is not None and cfg.get("use_sliding_window", True) is False:
        tokens = None
    if tokens is None and _get(cfg, "attention_chunk_size", arch, default=None) is not None:
        kind, tokens = "chunked", cfg["attention_chunk_size"]
    if not tokens:
        return None
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != n_layers:
            raise ValueError(f"Hugging Face config ({arch}): key 'layer_types' must list {n_layers} layers")
        local = [t != "full_attention" for t in types]
    elif cfg.get("no_rope_layers"):                    # Llama 4 (an empty list: the default period)
        flags = cfg["no_rope_layers"]
        if not isinstance(flags, list) or len(flags) != n_layers:
            raise ValueError(f"Hugging Face config ({arch}): key 'no_rope_layers' must list {n_layers} layers")
        local = [bool(f) for f in flags]
    else:
        p = _get(cfg, "sliding_window_pattern", arch, default=_FAMILY_PERIOD.get(arch, 0))
        if kind == "chunked":
            p = _get(cfg, "no_rope_layer_interval", arch, default=4)
        local = [p == 0 or (i + 1) % p != 0 for i in range(n_layers)]
    return window_from_layer_types(tokens, kind, local, arch)


def _notes(cfg: Mapping[str, Any], arch: str, window: Window | None, n_layers: int) -> list[str]:
    notes = []
    if window is not None:
        notes.append(f"{window.kind} window of {window.tokens} tokens on {window.n_local(n_layers)} of "
                     f"{n_layers} layers (counted in the KV cache and attention FLOPs)")
    if arch == "qwen2":
        notes.append("q/k/v biases left out (under 0.01 % of the weights)")
    if arch in ("gemma2", "gemma3", "gemma3_text"):
        notes.append("the post-attention and post-FFN norms left out (under 0.01 % of the weights)")
    if arch in ("gemma3", "llama4_text") and cfg.get("vision_config") is not None:
        notes.append("text decoder only: the vision encoder is not counted")
    return notes


def from_hf_config(path_or_dict: str | Path | Mapping[str, Any], id: str | None = None,
                   name: str | None = None) -> Model:
    """A :class:`Model` from a Hugging Face ``config.json`` (a path, a folder holding one, or a dict).

    Supported ``model_type``: llama, mistral, qwen2, qwen3 (dense, GQA); gemma, gemma2, gemma3,
    gemma3_text (tied embeddings, head_dim); mixtral, qwen2_moe, qwen3_moe, gpt_oss, dbrx (MoE);
    deepseek_v2, deepseek_v3, kimi_k2 (MoE with shared experts and MLA); llama4 / llama4_text (MoE with a
    shared expert, interleaved dense layers, chunked attention). A missing key or an unsupported
    architecture is a ``ValueError`` naming it. Nothing is downloaded.

    Worked number: Llama 3.1 8B's config (L = 32, d = 4096, H = 32, H_kv = 8, d_ff = 14336,
    V = 128256, untied) gives N = 8,030,261,248 parameters (the model card: 8.03B).
    """
    source = path_or_dict
    cfg = _unwrap(read_hf_config(path_or_dict))
    arch = cfg.get("model_type")
    if arch is None:
        raise ValueError("Hugging Face config: missing key 'model_type'")
    if arch not in ARCHITECTURES:
        raise ValueError(f"Hugging Face config: unsupported architecture model_type={arch!r}; "
                         f"supported: {', '.join(sorted(ARCHITECTURES))}")
    kind = ARCHITECTURES[arch]
    n_layers = _get(cfg, "num_hidden_layers", arch)
    d_model = _get(cfg, "hidden_size", arch)
    n_heads = _get(cfg, "num_attention_heads", arch)
    n_kv = _get(cfg, "num_key_value_heads", arch, default=n_heads)
    for key, v in (("num_hidden_layers", n_layers), ("hidden_size", d_model), ("num_attention_heads", n_heads),
                   ("num_key_value_heads", n_kv)):
        if v < 1:
            raise ValueError(f"Hugging Face config ({arch}): key {key!r} must be at least 1, got {v}")
    if n_heads % n_kv:
        raise ValueError(f"Hugging Face config ({arch}): 'num_key_value_heads' {n_kv} must divide "
                         f"num_attention_heads {n_heads}")
    head_dim = _get(cfg, "head_dim", arch, default=None)
    if head_dim is None and d_model % n_heads:
        raise ValueError(f"Hugging Face config ({arch}): missing key 'head_dim' (hidden_size {d_model} is not "
                         f"a multiple of num_attention_heads {n_heads})")
    moe = mla = None
    window = _window(cfg, arch, n_layers)
    notes = _notes(cfg, arch, window, n_layers)
    d_ff = None
    if kind == "llama4":
        moe, d_ff, more = _llama4(cfg, arch, n_layers)
        notes += more
    elif kind == "moe":
        moe, more = _moe(cfg, arch)
        notes += more
    elif kind == "deepseek":
        moe, mla = _deepseek(cfg, arch, n_layers)
    mid = id if id is not None else _default_id(cfg, source, arch)
    return Model(
        id=mid, name=name if name is not None else mid, family=arch, n_layers=n_layers, d_model=d_model,
        n_heads=n_heads, d_ff=d_ff or _get(cfg, "intermediate_size", arch), vocab_size=_get(cfg, "vocab_size", arch),
        ffn="swiglu", n_kv_heads=n_kv, head_dim=head_dim,
        tied_embeddings=_get(cfg, "tie_word_embeddings", arch, default=kind == "gemma", kind=bool),
        max_seq_len=max(1, _get(cfg, "max_position_embeddings", arch, default=2048)),
        bias=_get(cfg, "attention_bias", arch, default=False, kind=bool) and arch == "gpt_oss",
        moe=moe, mla=mla, window=window, notes="; ".join(notes),
    )
