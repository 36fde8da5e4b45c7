"""Rooflines: how fast can an operation run on a chip, and what bounds it?

The roofline model (Williams, Waterman & Patterson, CACM 2009) bounds an operation that does
``F`` FLOPs and moves ``D`` bytes to or from memory on a chip with peak ``P`` FLOP/s and memory
bandwidth ``B`` bytes/s:

    t_math = F / P,   t_mem = D / B,   t >= max(t_math, t_mem)

Arithmetic intensity ``I = F / D`` (FLOP/byte); attainable throughput ``min(P, I·B)``; the ridge
point ``I* = P / B`` is the intensity above which the math units, not memory, set the time.
Worked number: H100 bf16, ``I* = 989.4e12 / 3.35e12 = 295 FLOP/byte``; TPU v5p,
``459e12 / 2.765e12 = 166 FLOP/byte``.

:func:`layer_ops` lists the operations of one transformer layer with their FLOPs and bytes in
training, prefill and decode; :func:`layer_roofline` places them on a chip's roofline.
Assumptions (stated in notebook 01 too): every operand crosses memory once per op (no reuse across
ops, so ``D`` is a lower bound for the op and the time a lower bound too); attention is fused
(FlashAttention: no s×s matrix in memory) and causal (half the QKᵀ/AV work); training = forward ×3
in FLOPs and bytes (the backward of ``Y = XW`` computes ``dX`` and ``dW``, each the forward's size).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from accelbook.checks import instance, one_of, output, positive, positive_array, whole
from accelbook.costs.experts import touched_expert_share
from accelbook.limits import binding_sentence, seconds_words
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.models import Model, bytes_per_element, get_model

PHASES = ("training", "prefill", "decode")
#: the most tokens (batch · seq_len) one step of :func:`layer_ops` may hold: far past any real step,
#: so FLOP and byte counts stay finite and exact
MAX_TOKENS = 1e15


def ridge_point(peak_flop_s, bw_bytes_per_s):
    """Ridge point ``I* = P / B`` in FLOP/byte."""
    return positive_array("peak_flop_s", peak_flop_s) / positive_array("bw_bytes_per_s", bw_bytes_per_s)


def attainable_flop_s(intensity_flop_per_byte, peak_flop_s, bw_bytes_per_s):
    """Attainable FLOP/s ``min(P, I·B)`` at arithmetic intensity ``I`` (FLOP/byte)."""
    i = positive_array("intensity_flop_per_byte", intensity_flop_per_byte)
    return np.minimum(positive_array("peak_flop_s", peak_flop_s), i * positive_array("bw_bytes_per_s", bw_bytes_per_s))


def time_bounds(flops, bytes_moved, peak_flop_s, bw_bytes_per_s):
    """``(t_math, t_mem, t)`` in seconds with ``t = max(t_math, t_mem)``; arrays broadcast."""
    f = positive_array("flops", flops, allow_zero=True)
    d = positive_array("bytes_moved", bytes_moved, allow_zero=True)
    t_math = output("time_bounds t_math = flops / peak_flop_s", f / positive_array("peak_flop_s", peak_flop_s))
    t_mem = output("time_bounds t_mem = bytes_moved / bw_bytes_per_s", d / positive_array("bw_bytes_per_s", bw_bytes_per_s))
    return t_math, t_mem, np.maximum(t_math, t_mem)


@dataclass(frozen=True)
class Op:
    """One operation: FLOPs it does and bytes it moves to/from memory."""

    name: str
    kind: str      # "gemm", "attention" or "elementwise"
    flops: float
    bytes: float

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes


def _gemm(name: str, T: float, k: int, n: int, b: float, weight_bytes: float | None = None) -> Op:
    """``Y[T×n] = X[T×k] · W[k×n]``: F = 2·T·k·n, D = (T·k + k·n + T·n)·b."""
    w = k * n * b if weight_bytes is None else weight_bytes
    return Op(name, "gemm", 2.0 * T * k * n, T * k * b + w + T * n * b)


def layer_ops(model: Model | str, phase: str, batch: int, seq_len: int, precision: str = "bf16") -> list[Op]:
    """Operations of one transformer layer (an MoE layer for MoE models) for one step.

    Parameters
    ----------
    model : the architecture (a Model or its catalogue name)
    phase : "training" (forward+backward over B·s tokens), "prefill" (forward over B·s tokens) or
        "decode" (one new token for each of B sequences, attending to a context of s tokens)
    batch : B, sequences per step (>= 1)
    seq_len : s, tokens per sequence (context length in decode), >= 1
    precision : element type of weights, activations and KV cache ("bf16", "fp8", ...)
    """
    model = instance("model", model, Model, get_model)
    one_of("phase", phase, PHASES)
    for name, v in (("batch", batch), ("seq_len", seq_len)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not float(v).is_integer() or not 1 <= v <= MAX_TOKENS:
            raise ValueError(f"{name} must be a whole number in [1, {MAX_TOKENS:.0e}], got {v!r}")
    B, s = int(batch), int(seq_len)
    if B * s > MAX_TOKENS:
        raise ValueError(f"batch · seq_len = {B * s:.3g} tokens is past the limit of {MAX_TOKENS:.0e} "
                         "(accelbook.chip.roofline.MAX_TOKENS)")
    b = bytes_per_element(precision)
    d = model.d_model
    T = B if phase == "decode" else B * s  # tokens processed by the weight GEMMs this step
    ops: list[Op] = []
    # two norms and two residual adds: read/write T·d each, a few FLOPs per element
    ops.append(Op("norms + residual", "elementwise", 10.0 * T * d, 10.0 * T * d * b))

    mats = model.attention_matrices()
    proj = {k: v for k, v in mats.items() if k != "o"}
    f = sum(2.0 * T * i * o for i, o in proj.values())
    w = sum(i * o for i, o in proj.values()) * b
    # x is read once; every output is written; MLA's latents are also read back by the up-projections
    act = T * b * (d + sum(o for _, o in proj.values()) + sum(i for i, _ in proj.values() if i != d))
    ops.append(Op("QKV projection", "gemm", f, w + act))

    d_qk, d_v = model.attention_dim
    if phase == "decode":
        if model.mla is not None:  # absorbed MLA: attend over the cached latent directly
            m = model.mla
            f = 2.0 * B * s * model.n_heads * (2 * m.kv_lora_rank + m.qk_rope_head_dim)
        else:
            f = 2.0 * B * s * (d_qk + d_v) * model.attention_share(s)   # a window's share (1.0 without)
        kv_read = B * s * model.kv_bytes_per_token_at(s, precision) / model.n_layers
        ops.append(Op("attention (QK^T, softmax, AV)", "attention", f, kv_read + B * (d_qk + d_v) * b))
    else:
        f = 2.0 * B * s * s * (d_qk + d_v) * 0.5 * model.attention_share(s, causal=True)  # causal: half
        if model.mla is None:
            kv = 2 * model.kv_heads * model.d_head
        else:
            kv = d_qk + d_v  # K and V are rebuilt per head from the latent
        ops.append(Op("attention (QK^T, softmax, AV)", "attention", f, B * s * (d_qk + kv + d_v) * b))

    i, o = mats["o"]
    ops.append(_gemm("output projection", T, i, o, b))

    gate = 2 if model.ffn == "swiglu" else 1
    if model.moe is None:
        ops.append(_gemm("FFN up + gate", T, d, gate * model.d_ff, b))
        ops.append(_gemm("FFN down", T, model.d_ff, d, b))
    else:
        moe = model.moe
        ops.append(_gemm("router", T, d, moe.n_experts, b))
        # expected number of distinct experts hit by T·k routed tokens under uniform routing
        touched = moe.n_experts * touched_expert_share(moe.top_k, moe.n_experts, T)
        per_expert = (gate + 1) * d * moe.d_ff_expert
        f = 2.0 * T * moe.top_k * per_expert
        act = T * moe.top_k * (2 * d + (gate + 1) * moe.d_ff_expert) * b
        ops.append(Op("routed experts", "gemm", f, touched * per_expert * b + act))
        if moe.n_shared_experts:
            ff = moe.n_shared_experts * moe.d_ff_expert
            ops.append(_gemm("shared expert up + gate", T, d, gate * ff, b))
            ops.append(_gemm("shared expert down", T, ff, d, b))

    if phase == "training":
        ops = [Op(op.name, op.kind, 3.0 * op.flops, 3.0 * op.bytes) for op in ops]
    return ops


def layer_roofline(model: Model | str, chip: Chip | str, phase: str, batch: int, seq_len: int,
                   precision: str = "bf16") -> pd.DataFrame:
    """One row per operation of a layer on ``chip``: FLOPs, bytes, intensity, bounds, time.

    Columns: op, kind, flops, bytes, intensity_flop_per_byte, t_math_s, t_mem_s, t_s, bound,
    attainable_flop_s, phase, chip, precision.
    """
    return pd.DataFrame(layer_roofline_columns(model, chip, phase, batch, seq_len, precision))


def layer_roofline_columns(model: Model | str, chip: Chip | str, phase: str, batch: int, seq_len: int,
                           precision: str = "bf16") -> dict[str, np.ndarray]:
    """:func:`layer_roofline` as a dict of equal-length arrays (cheap to concatenate for many chips)."""
    return layers_roofline_columns(model, [chip], phase, batch, seq_len, precision)


def _peak_and_bw(chip: Chip, precision: str) -> tuple[float, float]:
    peak, bw = chip.peak_flop_s(precision), chip.memory_bw_bytes_per_s
    if bw is None:
        raise ValueError(f"{chip.name} has no published memory bandwidth")
    return peak, bw


def layers_roofline_columns(model: Model | str, chips, phase: str, batch: int, seq_len: int,
                            precision: str = "bf16") -> dict[str, np.ndarray]:
    """:func:`layer_roofline_columns` of several chips at once, one chip's rows after the other's (the
    same arrays as concatenating each chip's): the layer's operations are counted once."""
    chips = [instance("chip", c, Chip, get_chip) for c in chips]
    if not chips:
        raise ValueError("need at least one chip")
    first = _peak_and_bw(chips[0], precision)   # the first chip is checked before the layer, as one chip alone
    ops = layer_ops(model, phase, batch, seq_len, precision)
    peak_bw = np.array([first] + [_peak_and_bw(c, precision) for c in chips[1:]])
    peak, bw = peak_bw[:, :1], peak_bw[:, 1:]   # one row per chip: every operation's bounds at once
    k, n = len(chips), len(ops)
    flops = np.array([op.flops for op in ops])
    nbytes = np.array([op.bytes for op in ops])
    t_math, t_mem, t = time_bounds(flops, nbytes, peak, bw)
    output("layer_roofline times (s)", t)
    intensity = flops / nbytes
    return {
        "op": np.tile(np.array([op.name for op in ops], dtype=object), k),
        "kind": np.tile(np.array([op.kind for op in ops], dtype=object), k),
        "flops": np.tile(flops, k), "bytes": np.tile(nbytes, k), "intensity_flop_per_byte": np.tile(intensity, k),
        "t_math_s": t_math.ravel(), "t_mem_s": t_mem.ravel(), "t_s": t.ravel(),
        "bound": np.where(t_math >= t_mem, "compute", "memory").astype(object).ravel(),
        "attainable_flop_s": attainable_flop_s(intensity, peak, bw).ravel(),
        "phase": np.full(k * n, phase, dtype=object),
        "chip": np.repeat(np.array([c.name for c in chips], dtype=object), n),
        "precision": np.full(k * n, precision, dtype=object),
    }


def roofline_curve(chip: Chip | str, precision: str = "bf16", i_min: float = 0.1, i_max: float = 1e5,
                   n: int = 64) -> pd.DataFrame:
    """Points of the roofline ``min(P, I·B)`` on a log grid of intensity, plus the exact ridge."""
    return pd.DataFrame(roofline_curve_columns(chip, precision, i_min, i_max, n))


def roofline_curve_columns(chip: Chip | str, precision: str = "bf16", i_min: float = 0.1, i_max: float = 1e5,
                           n: int = 64) -> dict[str, np.ndarray]:
    """:func:`roofline_curve` as a dict of equal-length arrays."""
    return roofline_curves_columns([chip], precision, i_min, i_max, n)


def roofline_curves_columns(chips, precision: str = "bf16", i_min: float = 0.1, i_max: float = 1e5,
                            n: int = 64) -> dict[str, np.ndarray]:
    """:func:`roofline_curve_columns` of several chips, one chip's points after the other's."""
    chips = [instance("chip", c, Chip, get_chip) for c in chips]
    if not chips:
        raise ValueError("need at least one chip")
    i_min = positive("i_min", i_min)
    i_max = positive("i_max", i_max)
    n = whole("n", n, 2)
    if not i_min < i_max or n > 100_000:
        raise ValueError(f"need i_min < i_max and n <= 100,000, got i_min={i_min}, i_max={i_max}, n={n}")
    grid = np.geomspace(i_min, i_max, n)
    grids, peaks, bws, ridges, names = [], [], [], [], []
    for chip in chips:
        peak, bw = _peak_and_bw(chip, precision)
        ridge = peak / bw
        g = np.sort(np.append(grid, ridge)) if i_min < ridge < i_max else grid
        grids.append(g)
        peaks.append(np.full(len(g), peak))
        bws.append(np.full(len(g), bw))
        ridges.append(np.full(len(g), ridge))
        names.append(np.full(len(g), chip.name, dtype=object))
    g, m = np.concatenate(grids), sum(len(x) for x in grids)
    return {
        "chip": np.concatenate(names), "precision": np.full(m, precision, dtype=object),
        "intensity_flop_per_byte": g, "attainable_flop_s": attainable_flop_s(g, np.concatenate(peaks), np.concatenate(bws)),
        "ridge_flop_per_byte": np.concatenate(ridges),
    }


def layer_limit(model: Model | str, chip: Chip | str, phase: str, batch: int, seq_len: int,
                precision: str = "bf16") -> str:
    """Which limit binds one layer on ``chip``, in plain words: the layer's time is the sum of each
    operation's ``max(t_math, t_mem)``; the sentence names the side that takes most of it and the
    largest operations with their times (:func:`accelbook.limits.binding_sentence`), e.g.
    ``"one decode layer (516 µs) is memory-bound: FFN up + gate 280 µs, ... (all its math alone would take
    1.6 µs, all its bytes alone 516 µs)"``."""
    return columns_limit(layer_roofline_columns(model, chip, phase, batch, seq_len, precision))


def columns_limit(cols: dict[str, np.ndarray]) -> str:
    """:func:`layer_limit` from :func:`layer_roofline_columns`' result (one chip, one phase)."""
    phase = cols["phase"][0]
    mem = float(cols["t_s"][cols["bound"] == "memory"].sum())
    cmp_ = float(cols["t_s"][cols["bound"] == "compute"].sum())
    bound = "memory" if mem >= cmp_ else "compute"
    order = np.argsort(-cols["t_s"])[:3]
    parts = {str(cols["op"][i]): float(cols["t_s"][i]) for i in order}
    return (binding_sentence(bound, parts, f"one {phase} layer ({seconds_words(mem + cmp_)}) is ")
            + f" (all its math alone would take {seconds_words(float(cols['t_math_s'].sum()))}, all its bytes "
              f"alone {seconds_words(float(cols['t_mem_s'].sum()))})")
