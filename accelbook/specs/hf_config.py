"""A :class:`~accelbook.specs.models.Model` from a Hugging Face ``config.json``: a file, a folder, a dict,
or a Hub id (``"meta-llama/Llama-3.1-8B"``, fetched with ``huggingface_hub``, the optional ``hf`` extra).

An existing path always wins over an id. An id is looked up in the Hugging Face cache first
(``HF_HUB_CACHE``, else ``HF_HOME/hub``), then, unless ``HF_HUB_OFFLINE=1``, downloaded; ``HF_TOKEN``
opens gated models (huggingface_hub reads it). Every way this fails is a ``ValueError`` naming the id.

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

import os
import re
from pathlib import Path
from typing import Any, Mapping

from accelbook.files import UserFileError, read_json

from .models import MAX_SHAPE, MLA, Model, MoE
from .windows import Window, window_from_layer_types

#: model_type -> the family of architectures it is read as
ARCHITECTURES: Mapping[str, str] = {
    "llama": "dense", "mistral": "dense", "qwen2": "dense", "qwen3": "dense",
    "gemma": "gemma", "gemma2": "gemma", "gemma3": "gemma", "gemma3_text": "gemma",
    "mixtral": "moe", "qwen2_moe": "moe", "qwen3_moe": "moe", "gpt_oss": "moe",
    "deepseek_v2": "deepseek", "deepseek_v3": "deepseek", "kimi_k2": "deepseek", "dbrx": "moe",
    "llama4_text": "llama4",
}


#: the longest context a config may give (Llama 4 Scout's is 10,485,760 tokens, past MAX_SHAPE)
MAX_CONTEXT = 10**9


def _get(cfg: Mapping[str, Any], key: str, arch: str, default: Any = ..., kind: type = int, lo: int = 0,
         hi: int = MAX_SHAPE) -> Any:
    """``cfg[key]``, checked: a ValueError naming the key and the architecture when missing or bad (a
    whole number in ``[lo, hi]``; ``hi`` is the models file's bound, far past any published model)."""
    if key not in cfg or (cfg[key] is None and default is not ...):
        if default is ...:
            raise ValueError(f"Hugging Face config ({arch}): missing key {key!r}")
        return default
    v = cfg[key]
    if kind is int and (isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi):
        raise ValueError(f"Hugging Face config ({arch}): key {key!r} must be a whole number in [{lo}, {hi:,}], "
                         f"got {v!r}")
    if kind is bool and not isinstance(v, bool):
        raise ValueError(f"Hugging Face config ({arch}): key {key!r} must be true or false, got {v!r}")
    return v


#: a Hub repository id: ``owner/name``, each part letters, digits, ``-``, ``_`` or ``.`` (huggingface_hub's rule)
HUB_ID = re.compile(r"[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9_])?/[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9_])?")


def is_hub_id(s: Any) -> bool:
    """Whether ``s`` is a well-formed Hugging Face Hub id ``owner/name`` (no ``--`` or ``..``)."""
    return isinstance(s, str) and HUB_ID.fullmatch(s) is not None and "--" not in s and ".." not in s


def _hf_cache_dir() -> str | None:
    """The Hub cache the environment names now (``HF_HUB_CACHE``, else ``HF_HOME/hub``), else None: the
    library's default (read when it was imported)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    return str(Path(os.environ["HF_HOME"]) / "hub") if os.environ.get("HF_HOME") else None


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def fetch_hub_config(repo_id: str) -> Path:
    """The local path of ``repo_id``'s ``config.json``: from the Hugging Face cache, else downloaded
    (unless ``HF_HUB_OFFLINE=1``). A ``ValueError`` naming the id when neither works."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub import utils as errors  # the errors' home in every version >= 0.24 (not .errors)
    except ImportError:
        raise ValueError(f"{repo_id!r} is not a file or folder here, and reading a Hugging Face Hub id needs "
                         f"huggingface_hub: pip install 'accelbook[hf]'") from None
    cache = _hf_cache_dir()
    try:
        return Path(hf_hub_download(repo_id, "config.json", cache_dir=cache, local_files_only=True))
    except errors.LocalEntryNotFoundError:
        pass                                   # not in the cache: download it, if we may
    except Exception as e:                     # noqa: BLE001 - a corrupt cache is the user's to hear about
        raise ValueError(f"cannot read {repo_id!r}'s config.json from the Hugging Face cache: {e}") from None
    if _offline():
        raise ValueError(f"{repo_id!r}: config.json is not in the Hugging Face cache ({cache or 'the default'}) "
                         f"and HF_HUB_OFFLINE=1 forbids downloading it; run once online, or pass a path")
    try:
        return Path(hf_hub_download(repo_id, "config.json", cache_dir=cache))
    except errors.GatedRepoError:
        raise ValueError(f"{repo_id!r} is a gated model: accept its licence on https://huggingface.co/{repo_id} "
                         f"and set HF_TOKEN to an access token of that account") from None
    except errors.RepositoryNotFoundError:
        raise ValueError(f"{repo_id!r} is not a model on the Hugging Face Hub (or it is private or gated, "
                         f"401: set HF_TOKEN to an access token that may read it)") from None
    except errors.LocalEntryNotFoundError:
        raise ValueError(f"{repo_id!r}: cannot reach the Hugging Face Hub and config.json is not in the cache "
                         f"({cache or 'the default'}); connect, or pass the path of a config.json") from None
    except errors.EntryNotFoundError:
        raise ValueError(f"{repo_id!r} has no config.json on the Hugging Face Hub") from None
    except Exception as e:                     # noqa: BLE001 - network and HTTP errors, named with the id
        raise ValueError(f"cannot fetch {repo_id!r}'s config.json from the Hugging Face Hub "
                         f"({type(e).__name__}: {e})") from None


def _config_path(source: str | Path) -> tuple[Path, str | None]:
    """The config.json a path or a Hub id names, and the id (None for a path). A path wins."""
    if isinstance(source, bytes) or not isinstance(source, (str, Path)):
        raise ValueError("from_hf_config takes a dict or the path of a config.json (or a Hugging Face Hub id "
                         f"'owner/name'), got {type(source).__name__}")
    path = Path(source)
    try:
        exists = bool(str(source).strip()) and path.exists()
    except (OSError, ValueError):                      # a name too long, a NUL byte: not a path here
        exists = False
    if exists:
        return (path / "config.json" if path.is_dir() else path), None
    if isinstance(source, str) and is_hub_id(source):
        return fetch_hub_config(source), source
    shown = str(source) if len(str(source)) <= 200 else str(source)[:200] + "..."
    raise ValueError(f"cannot read Hugging Face config {shown!r}: neither an existing config.json (or a "
                     f"folder holding one) nor a Hugging Face Hub id like 'meta-llama/Llama-3.1-8B'")


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; a missing file, bad UTF-8, bad JSON or absurd nesting a ValueError naming it
    (:func:`accelbook.files.read_json`)."""
    try:
        cfg = read_json(path)
    except UserFileError as e:
        raise ValueError(f"cannot read Hugging Face config {e}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{str(path)!r} must hold a JSON object, got {type(cfg).__name__}")
    return cfg


def read_hf_config(path_or_dict: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """The config as a dict: a mapping as given, a ``config.json`` file (or a folder holding one), or a
    Hugging Face Hub id ``owner/name`` (see the module docstring; a path that exists wins)."""
    if isinstance(path_or_dict, Mapping):
        return dict(path_or_dict)
    return _read_json(_config_path(path_or_dict)[0])


def _default_id(cfg: Mapping[str, Any], source: Any, arch: str, hub_id: str | None) -> str:
    """The id a config gets when none is given: the Hub repository's name, the config's ``_name_or_path``,
    the folder's name, else ``hf-<model_type>``."""
    name = cfg.get("_name_or_path")
    for cand in (hub_id, name if isinstance(name, str) else None):
        if cand and cand.strip().rstrip("/"):
            return cand.strip().rstrip("/").split("/")[-1].lower()
    if isinstance(source, (str, Path)):
        p = Path(source)
        folder = p if p.is_dir() else p.parent
        if folder.name:
            return folder.name.lower()
    return f"hf-{arch}"


def _label(key: str, v: Any) -> str:
    """An ``id`` or ``name`` argument, checked: a non-empty string."""
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"from_hf_config: {key} must be a non-empty string, got {v!r}")
    return v


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
        "max_position_embeddings": _get(cfg, "max_seq_len", arch, default=2048, lo=1, hi=MAX_CONTEXT),
    }


def _moe(cfg: Mapping[str, Any], arch: str) -> tuple[MoE, list[str]]:
    """The MoE block of a Mixtral / Qwen-MoE / GPT-OSS config, and what it leaves out."""
    notes = []
    if arch in ("mixtral", "gpt_oss", "dbrx"):
        n_experts = _get(cfg, "num_local_experts", arch, lo=1)
        d_ff_expert = _get(cfg, "intermediate_size", arch, lo=1)
        shared = 0
    else:  # qwen2_moe, qwen3_moe
        n_experts = _get(cfg, "num_experts", arch, lo=1)
        d_ff_expert = _get(cfg, "moe_intermediate_size", arch, lo=1)
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
    n_experts = _get(cfg, key, arch, lo=1)
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
    moe = MoE(n_experts=n_experts, top_k=top_k, d_ff_expert=_get(cfg, "intermediate_size", arch, lo=1),
              n_shared_experts=1, n_dense_layers=n_dense, balancing="aux_loss")
    notes = ["the q/k norms have no weights (L2 norms)"]
    if n_dense:
        notes.append(f"{n_dense} dense layers interleaved with the MoE layers (counted as leading dense layers)")
    return moe, _get(cfg, "intermediate_size_mlp", arch, lo=1), notes


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
    moe = MoE(n_experts=n_experts, top_k=top_k, d_ff_expert=_get(cfg, "moe_intermediate_size", arch, lo=1),
              n_shared_experts=_get(cfg, "n_shared_experts", arch, default=0), n_dense_layers=n_dense,
              balancing="aux_loss_free" if noaux else "aux_loss")
    mla = MLA(q_lora_rank=_get(cfg, "q_lora_rank", arch, default=0),
              kv_lora_rank=_get(cfg, "kv_lora_rank", arch),
              qk_nope_head_dim=_get(cfg, "qk_nope_head_dim", arch),
              qk_rope_head_dim=_get(cfg, "qk_rope_head_dim", arch),
              v_head_dim=_get(cfg, "v_head_dim", arch))
    # the latent, the value heads and the query-key dims carry the attention: none may be empty
    for key, v in (("kv_lora_rank", mla.kv_lora_rank), ("v_head_dim", mla.v_head_dim),
                   ("qk_nope_head_dim + qk_rope_head_dim", mla.qk_nope_head_dim + mla.qk_rope_head_dim)):
        if v < 1:
            raise ValueError(f"Hugging Face config ({arch}): MLA key {key!r} must be at least 1, got {v}")
    return moe, mla


#: the layers a family makes local when its config lists none: a period (0: every layer local)
_FAMILY_PERIOD: Mapping[str, int] = {"gemma2": 2, "gemma3": 6, "gemma3_text": 6, "gpt_oss": 2}


def _window(cfg: Mapping[str, Any], arch: str, n_layers: int) -> Window | None:
    """The config's local attention (see the module docstring), or None."""
    off = cfg.get("use_sliding_window", True) is False
    kind, tokens = "sliding", _get(cfg, "sliding_window", arch, default=None, lo=0 if off else 1, hi=MAX_CONTEXT)
    if off:
        tokens = None
    if tokens is None and _get(cfg, "attention_chunk_size", arch, default=None, lo=1, hi=MAX_CONTEXT) is not None:
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
            p = _get(cfg, "no_rope_layer_interval", arch, default=4, lo=1)
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
    architecture is a ``ValueError`` naming it. A string that is not an existing path but a Hub id
    (``"meta-llama/Llama-3.1-8B"``) is read from the Hugging Face cache or downloaded (the module docstring).

    Worked number: Llama 3.1 8B's config (L = 32, d = 4096, H = 32, H_kv = 8, d_ff = 14336,
    V = 128256, untied) gives N = 8,030,261,248 parameters (the model card: 8.03B).
    """
    if id is not None:
        _label("id", id)
    if name is not None:
        _label("name", name)
    source, hub_id = path_or_dict, None
    if isinstance(path_or_dict, Mapping):
        cfg = dict(path_or_dict)
    else:
        path, hub_id = _config_path(path_or_dict)
        cfg = _read_json(path)
    cfg = _unwrap(cfg)
    arch = cfg.get("model_type")
    if arch is None:
        raise ValueError("Hugging Face config: missing key 'model_type'")
    if arch not in ARCHITECTURES:
        raise ValueError(f"Hugging Face config: unsupported architecture model_type={arch!r}; "
                         f"supported: {', '.join(sorted(ARCHITECTURES))}")
    kind = ARCHITECTURES[arch]
    n_layers = _get(cfg, "num_hidden_layers", arch, lo=1)
    d_model = _get(cfg, "hidden_size", arch, lo=1)
    n_heads = _get(cfg, "num_attention_heads", arch, lo=1)
    n_kv = _get(cfg, "num_key_value_heads", arch, default=n_heads, lo=1)
    if n_heads % n_kv:
        raise ValueError(f"Hugging Face config ({arch}): 'num_key_value_heads' {n_kv} must divide "
                         f"num_attention_heads {n_heads}")
    head_dim = _get(cfg, "head_dim", arch, default=None, lo=1)
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
    mid = id if id is not None else _default_id(cfg, source, arch, hub_id)
    return Model(
        id=mid, name=name if name is not None else mid, family=arch, n_layers=n_layers, d_model=d_model,
        n_heads=n_heads, d_ff=d_ff or _get(cfg, "intermediate_size", arch, lo=1),
        vocab_size=_get(cfg, "vocab_size", arch, lo=1),
        ffn="swiglu", n_kv_heads=n_kv, head_dim=head_dim,
        tied_embeddings=_get(cfg, "tie_word_embeddings", arch, default=kind == "gemma", kind=bool),
        max_seq_len=_get(cfg, "max_position_embeddings", arch, default=2048, lo=1, hi=MAX_CONTEXT),
        bias=_get(cfg, "attention_bias", arch, default=False, kind=bool) and arch == "gpt_oss",
        moe=moe, mla=mla, window=window, notes="; ".join(notes),
    )
