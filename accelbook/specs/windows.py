"""Local attention: a sliding window or chunks of ``W`` tokens on some layers, full attention on the rest.

A *local* layer keeps at most ``W`` tokens of K and V per sequence; a *global* layer keeps all ``s``.
Which layers are global is a period: layer ``i`` (from 0) is global when ``(i + 1) % global_every == 0``
(``global_every = 0``: every layer is local). The published models:

- Mistral 7B v0.1: sliding, ``W = 4096``, every layer (arXiv:2310.06825);
- Gemma 2: sliding, ``W = 4096``, every second layer global (arXiv:2408.00118);
- Gemma 3: sliding, ``W = 1024``, 5 local : 1 global, ``global_every = 6`` (arXiv:2503.19786);
- GPT-OSS: sliding, ``W = 128``, alternating (layer 0 local), ``global_every = 2`` (gpt-oss model card);
- Llama 4: chunked, ``W = 8192``, 3 of 4 layers, the fourth global without RoPE (NoPE), ``global_every = 4``.

Symbols: ``s`` context (tokens), ``W`` window, ``L_loc`` local and ``L_glob`` global layers.

- KV cache of one sequence: ``(L_glob·s + L_loc·min(s, W))`` token-layers, times the bytes a layer keeps
  per token (a chunked layer needs room for one whole chunk, ``min(s, W)`` tokens, like a sliding one).
- Keys one query attends to in a local layer, ``K_loc(s)``, with the module's two conventions for FLOPs
  (:meth:`accelbook.specs.models.Model.flops_per_token`): *full* (no causal mask: a full layer's query
  sees ``s`` keys) and *causal* (the mean over the ``s`` queries of a sequence, ``s/2`` for a full layer):

  sliding, full: ``min(s, W)``; causal: ``s/2`` if ``s <= W``, else ``W - W²/(2s)``
  (the first ``W`` queries see ``i`` keys, the others ``W``);
  chunked, full: ``(n·W² + r²)/s`` with ``s = n·W + r`` (each query sees its whole chunk); causal: half that.

Worked number: Gemma 3 27B at 32,768 tokens keeps 10·32,768 + 52·1,024 = 380,928 token-layers of K and V
instead of 62·32,768 = 2,031,616: 18.75 % of a full-attention cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .loader import CatalogueError, check_keys

#: "sliding": a query sees the last W keys; "chunked": the keys of its own W-token chunk
WINDOW_KINDS = ("sliding", "chunked")
WINDOW_KEYS = {"tokens", "kind", "global_every"}


@dataclass(frozen=True)
class Window:
    """Local attention: ``tokens`` = W, ``kind`` sliding or chunked, every ``global_every``-th layer global."""

    tokens: int                # W
    kind: str = "sliding"      # "sliding" | "chunked"
    global_every: int = 0      # layer i global when (i + 1) % global_every == 0; 0: every layer local

    def n_global(self, n_layers: int) -> int:
        """``L_glob``: layers with full attention among ``n_layers``."""
        return 0 if self.global_every == 0 else n_layers // self.global_every

    def n_local(self, n_layers: int) -> int:
        """``L_loc = L - L_glob``."""
        return n_layers - self.n_global(n_layers)

    def is_local(self, layer: int) -> bool:
        """Whether layer ``layer`` (from 0) attends within the window."""
        return self.global_every == 0 or (layer + 1) % self.global_every != 0

    def cached_tokens(self, context: float) -> float:
        """Tokens of K and V one local layer keeps for a sequence of ``context`` tokens: ``min(s, W)``."""
        return min(context, self.tokens)

    def keys(self, context: float, causal: bool) -> float:
        """``K_loc(s)``: keys one query of a local layer attends to (see the module docstring)."""
        s, W = context, self.tokens
        if self.kind == "chunked":
            n, r = divmod(s, W)
            full = (n * W * W + r * r) / s
            return 0.5 * full if causal else full
        if not causal:
            return min(s, W)
        return 0.5 * s if s <= W else W - W * W / (2.0 * s)


def parse_window(path: Any, mid: str, t: Any, max_shape: int) -> Window:
    """``window = { tokens = 1024, kind = "sliding", global_every = 6 }`` of a models file, checked."""
    if not isinstance(t, dict):
        raise CatalogueError(path, mid, "window", f"must be a table like window = {{ tokens = 4096 }}, got {t!r}")
    check_keys(path, mid + ".window", t, required={"tokens"}, optional=WINDOW_KEYS)
    for key, lo in (("tokens", 1), ("global_every", 0)):
        v = t.get(key, lo)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= max_shape:
            raise CatalogueError(path, mid, f"window.{key}", f"must be a whole number in [{lo}, {max_shape:,}], got {v!r}")
    if t.get("global_every") == 1:
        raise CatalogueError(path, mid, "window.global_every", "1 would make every layer global: leave the window out")
    kind = t.get("kind", "sliding")
    if kind not in WINDOW_KINDS:
        raise CatalogueError(path, mid, "window.kind", f"must be one of {WINDOW_KINDS}, got {kind!r}")
    return Window(tokens=t["tokens"], kind=kind, global_every=t.get("global_every", 0))


def window_from_layer_types(tokens: int, kind: str, local: list[bool], where: str) -> Window | None:
    """The :class:`Window` whose period gives exactly the per-layer flags ``local`` (True: local), or a
    ``ValueError`` naming ``where`` when no period fits; None when no layer is local."""
    n = len(local)
    if not any(local):
        return None
    if all(local):
        return Window(tokens, kind, 0)
    p = local.index(False) + 1
    if p > 1 and all(local[i] == ((i + 1) % p != 0) for i in range(n)):
        return Window(tokens, kind, p)
    raise ValueError(f"Hugging Face config ({where}): unsupported layer pattern: local layers "
                     f"{[i for i, x in enumerate(local) if x]} are not 'every layer but each p-th'")


def window_fields(w: Window | None) -> Mapping[str, Any]:
    """The window as table columns (None when the model has none)."""
    if w is None:
        return {"window_tokens": None, "window_kind": None, "window_global_every": None}
    return {"window_tokens": w.tokens, "window_kind": w.kind, "window_global_every": w.global_every}
