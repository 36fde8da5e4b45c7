"""Speculative decoding with a draft head (EAGLE-2, EAGLE-3, DeepSeek-V3's MTP), as served today: a head of
one decoder layer drafts tokens from the target's own hidden states, the target verifies them in one step.

One draft-and-verify step, per sequence:

- ``steps`` draft passes, each one forward of the head over the ``topk`` tokens it expands (a chain: 1);
  the head is one decoder layer of the target's shape (``data/speculative.toml``: a dense FFN for EAGLE,
  the target's MoE layer for MTP), its own LM head (``draft_vocab`` rows, or the target's), and a
  projection of ``fc_inputs·d`` to ``d``; each pass costs what :func:`~accelbook.inference.estimate.estimate`
  gives that one-layer model at ``tokens_per_seq = topk`` (weights read once, the layer's KV cache, its
  two all-reduces at the measured latency) plus the projection's read;
- one verify pass of the target over ``verify_tokens`` tokens sharing the sequence's context
  (``steps + 1`` for a chain, the tree's nodes for a tree): ``estimate(..., tokens_per_seq=verify_tokens)``;
- ``τ`` tokens out, the average acceptance length measured for the method, model and dataset
  (``data/speculative.toml``, bonus token included).

``t_step = steps·t_draft + t_verify``, ``TPOT = t_step / τ``. For a chain measured at one length and
served at another, ``τ`` is carried over with one acceptance rate ``a`` for every position, from
``τ = (1 - a^(γ+1)) / (1 - a)`` (Leviathan et al. 2023): :func:`chain_tau`.

Not modelled: the tree's construction and the draft's sampling kernels between passes, and verification's
tree-masked attention beyond its FLOPs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from accelbook.checks import instance, output_fields, real, whole
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    check_keys,
    load_sources,
    parse_quantity,
    read_table_file,
)
from accelbook.specs.models import Model, bytes_per_element, get_model

from .estimate import estimate
from .variants import expected_accepted

METHODS = ("eagle2", "eagle3", "mtp")
_PATH = DATA_DIR / "speculative.toml"
_HEAD_KEYS = {"layers", "ffn", "fc_inputs", "note", "src"}
_ACCEPT_KEYS = {"method", "model", "dataset", "temperature", "steps", "topk", "verify_tokens", "tau"}


@dataclass(frozen=True)
class DraftHead:
    """The shape of one method's draft head (``data/speculative.toml``)."""

    method: str
    layers: int
    ffn: str            # "dense" or "target"
    fc_inputs: int
    note: str


@dataclass(frozen=True)
class Acceptance:
    """One measured average acceptance length ``tau`` and the draft configuration it was measured at."""

    id: str
    method: str
    model: str
    dataset: str
    temperature: float
    steps: int
    topk: int
    verify_tokens: int
    draft_vocab: int | None
    tau: float
    provenance: Provenance


@catalogue_cache(maxsize=4)
def _catalogue(path=None) -> tuple[dict, dict]:
    path = path or _PATH
    raw = read_table_file(path)
    check_keys(path, None, raw, required={"head", "accept"}, optional=set())
    sources = load_sources()
    heads = {}
    for m, e in raw["head"].items():
        check_keys(path, f"head.{m}", e, required=_HEAD_KEYS, optional=set())
        if m not in METHODS:
            raise CatalogueError(path, f"head.{m}", None, f"method must be one of {METHODS}")
        if e["ffn"] not in ("dense", "target"):
            raise CatalogueError(path, f"head.{m}", "ffn", "'dense' or 'target'")
        for k in ("layers", "fc_inputs"):
            if isinstance(e[k], bool) or not isinstance(e[k], int) or e[k] < 0 or (k == "layers" and e[k] < 1):
                raise CatalogueError(path, f"head.{m}", k, "a whole number (layers at least 1)")
        heads[m] = DraftHead(m, e["layers"], e["ffn"], e["fc_inputs"], e["note"])
    accepts = {}
    for aid, e in raw["accept"].items():
        name = f"accept.{aid}"
        check_keys(path, name, e, required=_ACCEPT_KEYS, optional={"draft_vocab"})
        if e["method"] not in heads:
            raise CatalogueError(path, name, "method", f"a method with a [head.*] table: {sorted(heads)}")
        get_model(e["model"])
        for k in ("steps", "topk", "verify_tokens", "draft_vocab"):
            v = e.get(k, 1)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise CatalogueError(path, name, k, "a whole number of at least 1")
        if e["verify_tokens"] < e["steps"] + 1 or (e["topk"] == 1 and e["verify_tokens"] != e["steps"] + 1):
            raise CatalogueError(path, name, "verify_tokens", "steps + 1 for a chain (topk 1), at least that for a tree")
        q = parse_quantity(path, name, "tau", e["tau"], "count", sources)
        if not 1 <= q.value <= e["verify_tokens"]:
            raise CatalogueError(path, name, "tau", "between 1 and verify_tokens")
        accepts[aid] = Acceptance(aid, e["method"], e["model"], str(e["dataset"]), float(e["temperature"]),
                                  e["steps"], e["topk"], e["verify_tokens"], e.get("draft_vocab"), q.value,
                                  q.provenance)
    return heads, accepts


def acceptance(acceptance_id: str) -> Acceptance:
    """A measured acceptance length of ``data/speculative.toml`` by id."""
    accepts = _catalogue()[1]
    if acceptance_id not in accepts:
        raise ValueError(f"acceptance must be an [accept.*] id of data/speculative.toml, got {acceptance_id!r}; "
                         f"known: {sorted(accepts)}")
    return accepts[acceptance_id]


def chain_tau(tau: float, gamma_measured: int, gamma: int) -> float:
    """``τ`` of a chain of ``gamma`` draft tokens from one measured at ``gamma_measured``, with one acceptance
    rate ``a`` for every position: solve ``(1 - a^(γm+1)) / (1 - a) = τ`` for ``a`` (bisection), then
    :func:`~accelbook.inference.variants.expected_accepted` ``(a, γ)``. DeepSeek-V3's second token,
    accepted 87.5 % of the time (τ 1.875 at γ 1), gives τ 3.31 at γ 3."""
    gm, g = whole("gamma_measured", gamma_measured, 1), whole("gamma", gamma, 0)
    real("tau", tau, 1.0, gm + 1)
    if tau >= gm + 1:
        raise ValueError(f"tau = {tau} at gamma_measured = {gm} means every token accepted; no rate carries over")
    lo, hi = 0.0, 1.0
    for _ in range(80):
        a = (lo + hi) / 2
        lo, hi = (a, hi) if expected_accepted(a, gm) < tau else (lo, a)
    return expected_accepted((lo + hi) / 2, g)


def draft_head(model: Model | str, method: str, draft_vocab: int | None = None) -> Model:
    """The draft head of ``method`` for ``model`` as a one-layer :class:`Model`: the target's attention
    and width, a dense FFN of the target's ``d_ff`` (EAGLE) or the target's own MoE layer (MTP), and an LM
    head of ``draft_vocab`` rows (None: the target's vocabulary). The ``fc_inputs·d → d`` projection is
    charged apart (:func:`speculative_decode`)."""
    model = instance("model", model, Model, get_model)
    heads = _catalogue()[0]
    if method not in heads:
        raise ValueError(f"method must be one of {sorted(heads)}, got {method!r}")
    h = heads[method]
    vocab = model.vocab_size if draft_vocab is None else whole("draft_vocab", draft_vocab, 1)
    moe = None
    if h.ffn == "target" and model.moe is not None:
        moe = dataclasses.replace(model.moe, n_dense_layers=0)
    return dataclasses.replace(model, id=f"{model.id}-{method}-head", name=f"{model.name} {method} head",
                               n_layers=h.layers, vocab_size=vocab, tied_embeddings=False, moe=moe, window=None,
                               published_params=None, published_active_params=None)


def speculative_decode(model, chip, n_chips: int, batch_size: int, input_len: int, output_len: int,
                       acceptance_id: str, precision: str = "bf16", tp: int | None = None,
                       steps: int | None = None, draft_precision: str | None = None) -> dict:
    """Draft-head speculative decoding on one layout (the module docstring's ``t_step = steps·t_draft +
    t_verify``, ``TPOT = t_step / τ``), with the acceptance length ``acceptance_id`` of
    ``data/speculative.toml``. ``steps``: serve a chain at another length than measured (τ carried over by
    :func:`chain_tau`); None: as measured. ``draft_precision``: the head's weights (None: ``precision``).
    Returns TPOT, tokens/s per user, the baseline without a draft, the speed-up, τ and the step's parts.

    Worked number: Llama 3.1 8B on one H100 in bf16, EAGLE-3 at 5 steps of 8 tokens, 32 verified, τ 4.68:
    see ``tests/test_speculative.py`` for the hand-worked figure."""
    acc = acceptance(acceptance_id)
    model = instance("model", model, Model, get_model)
    if model.id != acc.model:
        raise ValueError(f"acceptance {acceptance_id!r} was measured on {acc.model}, not {model.id}")
    s, k, nv, tau = acc.steps, acc.topk, acc.verify_tokens, acc.tau
    if steps is not None and whole("steps", steps, 1) != s:
        if k != 1:
            raise ValueError(f"steps: {acceptance_id!r} was measured on a tree (topk {k}); only a chain's tau carries over")
        tau, s, nv = chain_tau(tau, s, steps), steps, steps + 1
    dp = draft_precision or precision
    base = estimate(model, chip, n_chips, batch_size, input_len, output_len, precision, tp=tp)
    verify = estimate(model, chip, n_chips, batch_size, input_len, output_len, precision, tp=tp, tokens_per_seq=nv)
    head = draft_head(model, acc.method, acc.draft_vocab)
    d = estimate(head, chip, n_chips, batch_size, input_len, output_len, dp, tp=tp, tokens_per_seq=k)
    h = _catalogue()[0][acc.method]
    fc_bytes = h.fc_inputs * model.d_model * model.d_model * bytes_per_element(dp)
    bw = d.breakdown["memory_share"] * instance("chip", chip, Chip, get_chip).memory_bw_bytes_per_s
    t_fc = fc_bytes / d.config["tp"] / bw if h.fc_inputs else 0.0
    t_draft = d.tpot_s + t_fc
    t_step = s * t_draft + verify.tpot_s
    tpot = t_step / tau
    return output_fields("inference.speculative_decode", {
        "tpot_s": tpot, "tokens_per_s_per_user": 1 / tpot, "baseline_tpot_s": base.tpot_s,
        "speedup": base.tpot_s / tpot, "tau": tau, "steps": s, "topk": k, "verify_tokens": nv,
        "draft_step_s": t_draft, "verify_step_s": verify.tpot_s, "flag": base.flag})

