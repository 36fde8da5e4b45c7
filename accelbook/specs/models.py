"""LLM architectures: the :class:`Model` dataclass and every count derived from it.

Parameter counts, FLOPs per token and KV-cache bytes per token are computed from the architecture
(layers, d_model, heads, KV heads, FFN size, vocabulary, experts, top-k, MLA ranks); nothing is typed
in. The published counts in ``data/models.toml`` serve only to check the derivation.

Symbols (as in the docstrings and notebooks):

- ``L`` layers, ``d`` d_model, ``H`` query heads, ``H_kv`` KV heads, ``d_h`` head dim,
  ``d_ff`` FFN hidden size, ``V`` vocabulary, ``E`` routed experts, ``k`` experts per token,
  ``s`` sequence (context) length.
- Forward FLOPs per token: ``C_fwd = 2·N_mm + 4·L·s·H·d_h`` (PaLM, arXiv:2204.02311 App. B),
  where ``N_mm`` counts the weights a token is multiplied with (active experts only, the LM head
  included, the embedding lookup excluded) and the second term is QKᵀ and AV over a context of
  ``s`` tokens without causal masking. Training: ``C_train = 3·C_fwd`` (6N + 12·L·H·d_h·s).
- KV cache per token: ``2·L·H_kv·d_h·b`` for MHA/GQA/MQA; ``L·(d_c + d_r)·b`` for MLA
  (DeepSeek-V2, arXiv:2405.04434), ``b`` bytes per element.
- Local attention (:mod:`accelbook.specs.windows`: a sliding window or chunks of ``W`` tokens on
  ``L_loc`` of the layers): the KV cache of a sequence of ``s`` tokens holds ``L_glob·s + L_loc·min(s, W)``
  token-layers (:meth:`Model.kv_cache_bytes`), and the attention term sums each layer's keys
  (:meth:`Model.attended_keys`). A model without a window gives the formulas above exactly.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import pandas as pd

from accelbook.checks import at_most, instance, integral, one_of, real, whole

from .catalogue import Kind
from .loader import (
    CatalogueError,
    Provenance,
    Source,
    check_keys,
    checked_path,
    parse_quantity,
    read_table_file,
    user_sources,
)
from .windows import Window, parse_window, window_fields

BYTES_PER_ELEMENT: Mapping[str, float] = MappingProxyType(
    {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp6": 0.75, "fp4": 0.5}
)

_INT_KEYS = {"n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size", "max_seq_len"}
_REQUIRED = {"name", "family", "n_layers", "d_model", "n_heads", "d_ff", "vocab_size", "ffn"}
_OPTIONAL = {"aliases", "year", "n_kv_heads", "head_dim", "tied_embeddings", "position", "max_seq_len",
             "bias", "norm", "moe", "mla", "window", "published_params", "published_active_params", "notes"}
#: router balancing methods with a measured load imbalance (data/moe_balance.toml)
BALANCING = ("aux_loss", "aux_loss_free", "forced")
_MOE_KEYS = {"n_experts", "top_k", "d_ff_expert", "n_shared_experts", "n_dense_layers", "balancing", "node_limit"}
_MLA_KEYS = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}


@dataclass(frozen=True)
class MoE:
    n_experts: int           # E, routed experts per MoE layer
    top_k: int               # k, routed experts per token
    d_ff_expert: int         # hidden size of one expert
    n_shared_experts: int = 0
    n_dense_layers: int = 0  # the first layers use a dense FFN of size d_ff (DeepSeek-V3: 3)
    #: how the router is balanced, an entry of data/moe_balance.toml ("aux_loss", "aux_loss_free"); None: not published
    balancing: str | None = None
    #: the most nodes one token's routed experts may span (DeepSeek-V3: 4); 0: no limit
    node_limit: int = 0


@dataclass(frozen=True)
class MLA:
    """Multi-head latent attention (DeepSeek-V2/V3): K and V are rebuilt from a latent of size d_c."""

    q_lora_rank: int        # d_c' (0 = no query compression)
    kv_lora_rank: int       # d_c
    qk_nope_head_dim: int
    qk_rope_head_dim: int   # d_r, decoupled RoPE key shared across heads
    v_head_dim: int


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer. Counts are properties derived from the architecture."""

    id: str
    name: str
    family: str
    n_layers: int
    d_model: int
    n_heads: int
    d_ff: int
    vocab_size: int
    ffn: str = "swiglu"               # "swiglu" (3 matrices) or "gelu" (2 matrices)
    n_kv_heads: int | None = None     # None = n_heads (MHA)
    head_dim: int | None = None       # None = d_model / n_heads
    tied_embeddings: bool = False
    position: str = "rope"            # "rope" or "learned" (learned adds max_seq_len·d params)
    max_seq_len: int = 2048
    bias: bool = False
    norm: str = "rmsnorm"             # "rmsnorm" (d params) or "layernorm" (2d params)
    moe: MoE | None = None
    mla: MLA | None = None
    window: Window | None = None      # local attention (sliding or chunked) on some layers; None: all full
    year: int | None = None
    aliases: tuple[str, ...] = ()
    notes: str = ""
    published_params: float | None = None
    published_active_params: float | None = None
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)

    # -- shapes -------------------------------------------------------------------------------
    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads if self.n_kv_heads is not None else self.n_heads

    @property
    def d_head(self) -> int:
        return self.head_dim if self.head_dim is not None else self.d_model // self.n_heads

    @property
    def attention_kind(self) -> str:
        if self.mla is not None:
            return "MLA"
        if self.kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    @property
    def n_moe_layers(self) -> int:
        return 0 if self.moe is None else self.n_layers - self.moe.n_dense_layers

    @property
    def n_dense_ffn_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def n_local_layers(self) -> int:
        """``L_loc``: layers attending within a window (0 without one)."""
        return 0 if self.window is None else self.window.n_local(self.n_layers)

    # -- parameters per block ------------------------------------------------------------------
    def attention_matrices(self) -> dict[str, tuple[int, int]]:
        """Weight matrices of one attention block, name -> (in, out)."""
        d, H, dh = self.d_model, self.n_heads, self.d_head
        if self.mla is None:
            return {"q": (d, H * dh), "k": (d, self.kv_heads * dh), "v": (d, self.kv_heads * dh), "o": (H * dh, d)}
        m = self.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        mats = {}
        if m.q_lora_rank:
            mats["q_a"] = (d, m.q_lora_rank)
            mats["q_b"] = (m.q_lora_rank, H * qk)
        else:
            mats["q"] = (d, H * qk)
        mats["kv_a"] = (d, m.kv_lora_rank + m.qk_rope_head_dim)
        mats["kv_b"] = (m.kv_lora_rank, H * (m.qk_nope_head_dim + m.v_head_dim))
        mats["o"] = (H * m.v_head_dim, d)
        return mats

    def ffn_matrices(self, d_ff: int) -> int:
        """Weights of one FFN of width ``d_ff``: 3·d·d_ff (SwiGLU: gate, up, down) or 2·d·d_ff."""
        return (3 if self.ffn == "swiglu" else 2) * self.d_model * d_ff

    @property
    def norm_params(self) -> int:
        """Parameters of one norm: 2·d (LayerNorm: scale and shift) or d (RMSNorm)."""
        return (2 if self.norm == "layernorm" else 1) * self.d_model

    def attention_params(self) -> int:
        """Parameters of one attention block: its projections (with biases and MLA's latent norms)."""
        p = sum(i * o for i, o in self.attention_matrices().values())
        if self.bias:
            p += sum(o for _, o in self.attention_matrices().values())
        if self.mla is not None:  # RMSNorms on the two latents
            p += self.mla.kv_lora_rank + (self.mla.q_lora_rank or 0)
        return p

    def dense_ffn_params(self) -> int:
        """Parameters of one dense FFN block (weights and biases)."""
        p = self.ffn_matrices(self.d_ff)
        if self.bias:
            p += self.d_ff + self.d_model
        return p

    def _moe_params(self, active: bool) -> int:
        m = self.moe
        n = (m.top_k if active else m.n_experts) + m.n_shared_experts
        return n * self.ffn_matrices(m.d_ff_expert) + self.d_model * m.n_experts  # + router

    @property
    def embedding_params(self) -> int:
        p = self.vocab_size * self.d_model
        if self.position == "learned":
            p += self.max_seq_len * self.d_model
        return p

    @property
    def lm_head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab_size * self.d_model

    def _layer_params(self, active: bool) -> int:
        attn = self.attention_params() + 2 * self.norm_params
        total = self.n_layers * attn + self.n_dense_ffn_layers * self.dense_ffn_params()
        if self.moe is not None:
            total += self.n_moe_layers * self._moe_params(active)
        return total

    # -- the published-style counts --------------------------------------------------------------
    @functools.cached_property   # a frozen spec: computed once per model (inference sweeps ask often)
    def params(self) -> int:
        """Total parameters N: embeddings, every layer, every expert, final norm, LM head."""
        return self.embedding_params + self._layer_params(False) + self.norm_params + self.lm_head_params

    @functools.cached_property   # a frozen spec: computed once per model (inference sweeps ask often)
    def active_params(self) -> int:
        """Parameters one token uses (top-k routed + shared experts); = params for dense models."""
        return self.embedding_params + self._layer_params(True) + self.norm_params + self.lm_head_params

    @functools.cached_property   # a frozen spec: computed once per model (inference sweeps ask often)
    def matmul_params_active(self) -> int:
        """N_mm: weights one token is multiplied with (no embedding lookup, no norms; LM head in)."""
        attn = sum(i * o for i, o in self.attention_matrices().values())
        n = self.n_layers * attn + self.n_dense_ffn_layers * self.ffn_matrices(self.d_ff)
        if self.moe is not None:
            n += self.n_moe_layers * self._moe_params(True)
        return n + self.vocab_size * self.d_model

    @property
    def attention_dim(self) -> tuple[int, int]:
        """(d_qk, d_v) summed over query heads: H·d_h for both, or H·(nope+rope), H·v for MLA."""
        if self.mla is None:
            return self.n_heads * self.d_head, self.n_heads * self.d_head
        m = self.mla
        return self.n_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim), self.n_heads * m.v_head_dim

    def flops_per_token(self, seq_len: int, training: bool = False, causal: bool = False) -> float:
        """Model FLOPs per token at context ``s`` = seq_len.

        ``C_fwd = 2·N_mm + 2·L·s·(d_qk + d_v)``, which is ``2N + 4·L·s·H·d_h`` for MHA/GQA;
        ``causal=True`` halves the attention term (work a causal kernel actually does).
        ``training=True`` returns ``3·C_fwd`` (backward = 2× forward), PaLM's 6N + 12·L·H·Q·T.
        With a window, ``L·s`` (``L·s/2`` causal) becomes :meth:`attended_keys`, each layer's keys summed.
        """
        seq_len = at_most("seq_len", integral("seq_len", seq_len), MAX_CONTEXT, "accelbook.specs.models.MAX_CONTEXT")
        d_qk, d_v = self.attention_dim
        if self.window is None:
            attn = 2.0 * self.n_layers * seq_len * (d_qk + d_v) * (0.5 if causal else 1.0)
        else:
            attn = 2.0 * self.attended_keys(seq_len, causal) * (d_qk + d_v)
        fwd = 2.0 * self.matmul_params_active + attn
        return 3.0 * fwd if training else fwd

    def kv_cache_bytes_per_token(self, precision: str = "bf16") -> float:
        """KV-cache bytes per token of context: 2·L·H_kv·d_h·b, or L·(d_c + d_r)·b with MLA."""
        b = bytes_per_element(precision)
        if self.mla is not None:
            return self.n_layers * (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim) * b
        return 2.0 * self.n_layers * self.kv_heads * self.d_head * b

    def attended_keys(self, seq_len: float, causal: bool = False) -> float:
        """``Σ_l K_l``: keys one query attends to, summed over the layers, at context ``s`` = seq_len.

        ``L·s`` (``L·s/2`` causal, the mean over the ``s`` queries) without a window; with one
        ``L_glob·s·(½ causal) + L_loc·K_loc(s)`` (:meth:`accelbook.specs.windows.Window.keys`).
        Gemma 3 27B at s = 32,768, full: 10·32,768 + 52·1,024 = 380,928 (62·32,768 = 2,031,616 without).
        """
        s = real("seq_len", seq_len, 0.0, lo_open=True)
        half = 0.5 if causal else 1.0
        if self.window is None:
            return self.n_layers * s * half
        w, L = self.window, self.n_layers
        return w.n_global(L) * s * half + w.n_local(L) * w.keys(s, causal)

    def kv_cache_bytes(self, context: float, precision: str = "bf16") -> float:
        """KV-cache bytes of one sequence of ``s`` = context tokens: ``s·kv_cache_bytes_per_token`` without a
        window; with one, each layer keeps ``min(s, W)`` tokens if local and ``s`` if global:
        ``(L_glob·s + L_loc·min(s, W))·(bytes a layer keeps per token)``.
        Gemma 3 27B, bf16, s = 32,768: (10·32,768 + 52·1,024)·2·16·128·2 B = 3,120,562,176 B.
        """
        s = real("context", context, 0.0)
        if self.window is None:
            return self.kv_cache_bytes_per_token(precision) * s
        w, L = self.window, self.n_layers
        per_layer = self.kv_cache_bytes_per_token(precision) / L
        return (w.n_global(L) * s + w.n_local(L) * w.cached_tokens(s)) * per_layer

    def kv_bytes_per_token_at(self, context: float, precision: str = "bf16") -> float:
        """Mean KV-cache bytes per token of a sequence of ``context`` tokens: ``kv_cache_bytes(s) / s``;
        exactly :meth:`kv_cache_bytes_per_token` for a model without a window (whatever ``s``)."""
        s = real("context", context, 0.0, lo_open=True)
        if self.window is None:
            return self.kv_cache_bytes_per_token(precision)
        return self.kv_cache_bytes(s, precision) / s

    def attention_share(self, seq_len: float, causal: bool = False) -> float:
        """The attention term's share of its full-attention value at context ``s``:
        ``attended_keys(s) / (L·s)`` (``/(L·s/2)`` causal); exactly 1.0 without a window."""
        if self.window is None:
            return 1.0
        return self.attended_keys(seq_len, causal) / (self.n_layers * seq_len * (0.5 if causal else 1.0))

    def kv_share(self, context: float) -> float:
        """The KV cache's share of a full-attention cache at ``context`` tokens:
        ``(L_glob·s + L_loc·min(s, W)) / (L·s)``; exactly 1.0 without a window."""
        if self.window is None:
            return 1.0
        return self.kv_bytes_per_token_at(context) / self.kv_cache_bytes_per_token()

    def weight_bytes(self, precision: str = "bf16") -> float:
        return self.params * bytes_per_element(precision)


def bytes_per_element(precision: str) -> float:
    try:
        return BYTES_PER_ELEMENT[precision]
    except KeyError:
        raise ValueError(f"unknown precision {precision!r}; use one of {', '.join(BYTES_PER_ELEMENT)}") from None


# -- loading ---------------------------------------------------------------------------------------
#: the largest layer count, width, head count, vocabulary or expert count a models file may give (a
#: bound far beyond any published model, so a typo cannot overflow the kernels' integer arithmetic)
MAX_SHAPE = 10**7


def parse_model(path, mid: str, entry: Mapping[str, Any], sources: Mapping[str, Source]) -> Model:
    check_keys(path, mid, entry, required=_REQUIRED, optional=_OPTIONAL)
    kw: dict[str, Any] = {}
    for key in _INT_KEYS & entry.keys():
        v = entry[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_SHAPE:
            raise CatalogueError(path, mid, key, f"must be a whole number in [1, {MAX_SHAPE:,}], got {v!r}")
        kw[key] = v
    for key in ("name", "family", "notes"):
        if key in entry and (not isinstance(entry[key], str) or (key != "notes" and not entry[key].strip())):
            raise CatalogueError(path, mid, key, f"must be a non-empty string, got {entry[key]!r}")
    if entry["ffn"] not in ("swiglu", "gelu"):
        raise CatalogueError(path, mid, "ffn", f"must be 'swiglu' or 'gelu', got {entry['ffn']!r}")
    if entry.get("position", "rope") not in ("rope", "learned", "alibi"):
        raise CatalogueError(path, mid, "position", "must be 'rope', 'learned' or 'alibi'")
    if entry.get("norm", "rmsnorm") not in ("rmsnorm", "layernorm"):
        raise CatalogueError(path, mid, "norm", "must be 'rmsnorm' or 'layernorm'")
    if kw["n_heads"] and "n_kv_heads" in kw and kw["n_heads"] % kw["n_kv_heads"]:
        raise CatalogueError(path, mid, "n_kv_heads", "must divide n_heads")
    if "head_dim" not in kw and kw["d_model"] % kw["n_heads"]:
        raise CatalogueError(path, mid, "head_dim", "d_model is not a multiple of n_heads: give head_dim")
    for key in ("tied_embeddings", "bias"):
        if key in entry and not isinstance(entry[key], bool):
            raise CatalogueError(path, mid, key, f"must be true or false, got {entry[key]!r}")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise CatalogueError(path, mid, "aliases", "must be a list of strings")
    year = entry.get("year")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int) or not 1990 < year < 2100):
        raise CatalogueError(path, mid, "year", f"must be a year like 2024, got {year!r}")
    for key in ("moe", "mla"):
        if key in entry and not isinstance(entry[key], dict):
            raise CatalogueError(path, mid, key, f"must be a table like {key} = {{ ... }}, got {entry[key]!r}")
    moe = mla = None
    window = parse_window(path, mid, entry["window"], MAX_SHAPE) if "window" in entry else None
    if "moe" in entry:
        t = entry["moe"]
        check_keys(path, mid + ".moe", t, required={"n_experts", "top_k", "d_ff_expert"}, optional=_MOE_KEYS)
        if "balancing" in t and t["balancing"] not in BALANCING:
            raise CatalogueError(path, mid, "moe.balancing", f"must be one of {BALANCING}, got {t['balancing']!r}")
        for k, v in t.items():
            if k == "balancing":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SHAPE:
                raise CatalogueError(path, mid, f"moe.{k}", f"must be a whole number in [0, {MAX_SHAPE:,}], got {v!r}")
        if not 1 <= t["top_k"] <= t["n_experts"]:
            raise CatalogueError(path, mid, "moe.top_k", "must be between 1 and n_experts")
        if t.get("n_dense_layers", 0) >= kw["n_layers"]:
            raise CatalogueError(path, mid, "moe.n_dense_layers", "must be fewer than n_layers")
        moe = MoE(**t)
    if "mla" in entry:
        t = entry["mla"]
        check_keys(path, mid + ".mla", t, required=_MLA_KEYS, optional=set())
        if "balancing" in t and t["balancing"] not in BALANCING:
            raise CatalogueError(path, mid, "moe.balancing", f"must be one of {BALANCING}, got {t['balancing']!r}")
        for k, v in t.items():
            if k == "balancing":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SHAPE:
                raise CatalogueError(path, mid, f"mla.{k}", f"must be a whole number in [0, {MAX_SHAPE:,}], got {v!r}")
        mla = MLA(**t)
    prov = {}
    for key in ("published_params", "published_active_params"):
        if key in entry:
            q = parse_quantity(path, mid, key, entry[key], "count", sources)
            kw[key] = q.value
            prov[key] = q.provenance
    model = Model(
        id=mid, name=str(entry["name"]), family=str(entry["family"]), ffn=entry["ffn"],
        tied_embeddings=entry.get("tied_embeddings", False), position=entry.get("position", "rope"),
        bias=entry.get("bias", False), norm=entry.get("norm", "rmsnorm"), moe=moe, mla=mla, window=window,
        year=year, aliases=tuple(aliases), notes=str(entry.get("notes", "")),
        provenance=MappingProxyType(prov), **kw,
    )
    try:
        return check_model(model)
    except (TypeError, ValueError) as err:
        raise CatalogueError(path, mid, None, str(err)) from None


#: the longest max_seq_len a Model object may give (a config's may pass MAX_SHAPE: Llama 4 Scout's 10,485,760)
MAX_CONTEXT = 10**9


def check_model(model: Any) -> Model:
    """``model`` if it passes the models file's checks on the object: one validation for the loader,
    ``ab.register`` and a config reader. Shapes whole in ``[1, MAX_SHAPE]`` (MoE counts from 0, MLA ranks
    that leave a key, a value and a latent), heads that divide, known ``ffn``/``position``/``norm``; else a
    ``ValueError``/``TypeError`` naming the field."""
    instance("model", model, Model)
    for key in ("id", "name", "family"):
        if not isinstance(getattr(model, key), str) or not getattr(model, key).strip():
            raise ValueError(f"model {key} must be a non-empty string, got {getattr(model, key)!r}")
    for key in sorted(_INT_KEYS):
        if getattr(model, key) is not None or key not in ("n_kv_heads", "head_dim"):
            at_most(key, whole(key, getattr(model, key)), MAX_CONTEXT if key == "max_seq_len" else MAX_SHAPE,
                    "accelbook.specs.models.MAX_SHAPE")
    one_of("ffn", model.ffn, ("swiglu", "gelu"))
    one_of("position", model.position, ("rope", "learned", "alibi"))
    one_of("norm", model.norm, ("rmsnorm", "layernorm"))
    for key in ("tied_embeddings", "bias"):
        if not isinstance(getattr(model, key), bool):
            raise TypeError(f"{key} must be True or False, got {getattr(model, key)!r}")
    if model.n_heads % model.kv_heads:
        raise ValueError(f"n_kv_heads ({model.kv_heads}) must divide n_heads ({model.n_heads})")
    if model.head_dim is None and model.d_model % model.n_heads:
        raise ValueError("head_dim: d_model is not a multiple of n_heads: give head_dim")
    for part, cls, keys, ones in (("moe", MoE, _MOE_KEYS - {"balancing"}, ("n_experts", "top_k", "d_ff_expert")),
                                  ("mla", MLA, _MLA_KEYS, ("kv_lora_rank", "v_head_dim"))):
        sub = instance(part, getattr(model, part), (cls, type(None)))
        for k in sorted(keys) if sub is not None else ():
            at_most(f"{part}.{k}", whole(f"{part}.{k}", getattr(sub, k), 1 if k in ones else 0), MAX_SHAPE,
                    "accelbook.specs.models.MAX_SHAPE")
    if model.moe is not None:
        m = model.moe
        if m.top_k > m.n_experts or m.n_dense_layers >= model.n_layers:
            raise ValueError("moe.top_k must be at most n_experts and moe.n_dense_layers fewer than n_layers")
        if m.balancing is not None:
            one_of("moe.balancing", m.balancing, BALANCING)
    if model.mla is not None:
        whole("mla.qk_nope_head_dim + mla.qk_rope_head_dim", model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim)
    if model.window is not None:
        instance("window", model.window, Window)
    for key in ("published_params", "published_active_params"):
        if getattr(model, key) is not None:
            real(key, getattr(model, key), 0.0, 1e18, lo_open=True)
    return model


def load_models(path: Path | str, sources: Mapping[str, Source] | None = None) -> tuple[Model, ...]:
    """Load a models TOML file (the package's own or a user's, same schema as data/models.toml)."""
    path = checked_path(path)
    raw = read_table_file(path)
    sources = user_sources(path, raw, sources)
    return tuple(parse_model(path, mid, entry, sources) for mid, entry in raw.items())


#: the model catalogue: data/models.toml, the registered models (``ab.register``), a call's extra files
MODELS = Kind("model", "models.toml", load_models, registrable=True)


def all_models(*extra_files: str | Path) -> tuple[Model, ...]:
    """Every model of the catalogue (plus those in ``extra_files``)."""
    return MODELS.all(*extra_files)


def get_model(name: str, *extra_files: str | Path) -> Model:
    """Find a model by id, name or alias (``"llama-3.1-70b"``, ``"Llama 3.1 70B"``, ``"gpt3"``)."""
    return MODELS.get(name, *extra_files)


def models(*extra_files: str | Path, seq_len: int = 4096) -> pd.DataFrame:
    """The model catalogue, one row per model, with derived counts (training FLOPs at ``seq_len``)."""
    rows = []
    for m in all_models(*extra_files):
        rows.append({
            "id": m.id, "name": m.name, "family": m.family, "attention": m.attention_kind,
            "n_layers": m.n_layers, "d_model": m.d_model, "n_heads": m.n_heads, "n_kv_heads": m.kv_heads,
            "d_ff": m.d_ff, "vocab_size": m.vocab_size,
            "n_experts": m.moe.n_experts if m.moe else None, "top_k": m.moe.top_k if m.moe else None,
            "params": m.params, "active_params": m.active_params,
            "published_params": m.published_params,
            "params_error": (m.params / m.published_params - 1) if m.published_params else None,
            "train_flop_per_token": m.flops_per_token(seq_len, training=True),
            "kv_bytes_per_token_bf16": m.kv_cache_bytes_per_token("bf16"),
            **window_fields(m.window),
        })
    return pd.DataFrame(rows)
