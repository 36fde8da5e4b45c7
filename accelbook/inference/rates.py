"""What one chip delivers to inference: the peak at a precision, the measured GEMM efficiency, and the
shares and defaults the inference model assumes where the catalogue is silent (each marked ESTIMATE).

- ``nearest_peak_flop_s``: the dense peak at the weights' precision, or the nearest one the vendor
  published (fp4 falls back to fp8, then 16 bits; a chip with only sparse figures gives half its
  best sparse one). Floating-point weights never take an int8 peak: integer units do not compute fp8,
  so on a chip without fp8 (Groq LPU v1, TPU v4, v5e) fp8 weights are widened and run at its 16-bit
  peak; ``peak_precision`` says which peak was taken.
- ``gemm_efficiency``: the measured share of peak a large GEMM reaches (``accelbook.specs.efficiency``,
  fp8 for the 8- and 4-bit formats, bf16 otherwise), or 70 % of peak ASSUMED when neither the chip
  nor a sibling has a measurement.
- ``pass_shape_efficiency``: what the GEMMs' shapes lose on top of that (tile, wave and split-K
  quantisation on GPUs, MXU folds on TPUs: :func:`accelbook.costs.gemm.gemm_shape_efficiency`, the training
  model's too), FLOP-weighted over a forward pass.
- ``elementwise_bytes_per_token``: the HBM bytes of a token's elementwise kernels between the GEMMs
  (:func:`accelbook.costs.elementwise.elementwise_bytes`, the training model's too).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from accelbook.checks import at_most, instance, one_of, output, reals, whole, wholes
from accelbook.costs.elementwise import elementwise_bytes, kv_heads_per_chip, routed_ffn_width
from accelbook.costs.gemm import chip_gemm_units, gemm_shape_efficiency
from accelbook.specs.chips import Chip, base_id, get_chip
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.models import Model, get_model

from .arrays import any_array, maximum, minimum

WEIGHT_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4")
MEM_EFFICIENCY = 0.85          # share of memory bandwidth decode reaches (ESTIMATE; Azure measured 92% on GB200 HBM)
IDLE_POWER_SHARE = 0.30        # ESTIMATE
MEMORY_BOUND_POWER = 0.70      # ESTIMATE
DEFAULT_HOP_S = 2e-6           # chip-to-chip hop when the catalogue has no latency (estimate-link-latency)
DEFAULT_LINK_BYTES_S = 100e9   # ... and no link bandwidth (ESTIMATE)
ASSUMED_GEMM_EFFICIENCY = 0.7  # share of peak when no GEMM was measured on the chip or a sibling (ASSUMED)

# the precisions tried, in order, for the peak at each weight precision
_PEAK_FALLBACK = {"fp4": ("fp4", "fp8", "bf16", "fp16"), "fp8": ("fp8", "bf16", "fp16"),
                  "int8": ("int8", "fp8", "bf16", "fp16"), "bf16": ("bf16", "fp16"), "fp16": ("fp16", "bf16")}


def peak_precision(chip: Chip, precision: str) -> str:
    """The precision whose dense peak :func:`nearest_peak_flop_s` takes for weights in ``precision``
    (``"sparse/2"`` when the chip publishes only sparse figures). Groq LPU v1 at ``"fp8"``: ``"fp16"``.

    Raises ``ValueError`` when the chip publishes no peak at all for it.
    """
    chip = instance("chip", chip, Chip, get_chip)
    for p in _PEAK_FALLBACK[one_of("precision", precision, WEIGHT_PRECISIONS)]:
        if p in chip.peak_dense_flop_s:
            return p
    if chip.peak_sparse_flop_s:
        return "sparse/2"
    raise ValueError(f"{chip.name} publishes no peak for {precision}")


def nearest_peak_flop_s(chip: Chip, precision: str) -> float:
    """Dense peak FLOP/s at the weights' ``precision``, falling back to the nearest the vendor published
    (:func:`peak_precision`); half the best sparse figure when no dense one is published.

    Raises ``ValueError`` when the chip publishes no peak at all for it.
    """
    chip = instance("chip", chip, Chip, get_chip)
    p = peak_precision(chip, precision)
    if p == "sparse/2":
        return max(chip.peak_sparse_flop_s.values()) / 2   # no dense figure: half the sparse one
    return chip.peak_dense_flop_s[p]


_GEMM_EFF: dict = {}


def gemm_efficiency(chip: Chip, precision: str) -> tuple[float, str]:
    """Measured GEMM efficiency ``η_gemm`` (share of peak) at ``precision`` and the sentence that says
    where it comes from; ``ASSUMED_GEMM_EFFICIENCY`` when there is no measurement."""
    # the answer depends on the chip's catalogue lineage and name only (not on what-if peaks): cached,
    # as sweeps ask it for every layout and batch
    chip = instance("chip", chip, Chip, get_chip)
    one_of("precision", precision, WEIGHT_PRECISIONS)
    key = (base_id(chip), chip.name, precision)
    if key not in _GEMM_EFF:
        try:
            m, why = measured_efficiency(chip, "fp8" if precision in ("fp8", "int8", "fp4") else "bf16")
            _GEMM_EFF[key] = (m.fraction, why)
        except ValueError:
            _GEMM_EFF[key] = (ASSUMED_GEMM_EFFICIENCY,
                              f"{chip.name}: no GEMM measurement for it or a sibling; "
                              f"{ASSUMED_GEMM_EFFICIENCY:.0%} of peak ASSUMED")
    return _GEMM_EFF[key]


# -- GEMM efficiency by shape ------------------------------------------------------------------------------

_SHAPE_ETA: dict = {}


@njit(cache=True)
def _gemm_etas(M, N, K, is_tpu, sms, mxu, n_mxu):
    """:func:`accelbook.costs.gemm.gemm_shape_efficiency` of each GEMM of the float arrays ``M, N, K``."""
    out = np.empty(len(M))
    for i in range(len(M)):
        out[i] = gemm_shape_efficiency(M[i], N[i], K[i], is_tpu, sms, mxu, n_mxu)
    return out


@njit(cache=True)
def _flop_weighted(starts, count, M, N, K, eta):
    """``Σ F_i / Σ (F_i / η_i)``, ``F_i = count_i·2·M_i·N_i·K_i``, over each group of GEMMs
    ``starts[g]:starts[g+1]`` (the sums in order, as a Python loop would make them)."""
    out = np.empty(len(starts) - 1)
    for g in range(len(starts) - 1):
        flops = 0.0
        time = 0.0
        for i in range(starts[g], starts[g + 1]):
            f = count[i] * 2.0 * M[i] * N[i] * K[i]
            flops += f
            time += f / eta[i]
        out[g] = flops / time
    return out


def layer_gemms(model: Model, M: int, tp: int) -> list[tuple[int, float, float, float]]:
    """The GEMMs of one forward pass over ``M`` tokens on one of ``tp`` chips, as (count, M, N, K):
    attention projections (the output projection split along K, the others along N), the FFN (dense
    layers, and on MoE layers each active expert with ``M·top_k/E`` rows, shared experts with ``M``),
    the LM head; ``count`` is how many such GEMMs the model runs. ``M`` and ``tp`` may be arrays (of one
    length): then each entry that depends on them is an array, one figure per (M, tp)."""
    model = instance("model", model, Model, get_model)
    reals("M", M, 1.0, 2.0**40)
    wholes("tp", tp)
    L, d = model.n_layers, model.d_model
    out = [(L, M, o, i / tp) if name == "o" else (L, M, o / tp, i) for name, (i, o) in model.attention_matrices().items()]
    up = 2 if model.ffn == "swiglu" else 1
    if model.n_dense_ffn_layers:
        out += [(model.n_dense_ffn_layers * up, M, model.d_ff / tp, d), (model.n_dense_ffn_layers, M, d, model.d_ff / tp)]
    if model.moe is not None:
        mo, Lm = model.moe, model.n_moe_layers
        m_e = maximum(1.0, M * mo.top_k / mo.n_experts)
        routed, shared = (minimum(mo.n_experts, M * mo.top_k), m_e), (mo.n_shared_experts, M)   # routed: >= 1
        for n_exp, rows in (routed, shared) if mo.n_shared_experts else (routed,):
            out += [(Lm * n_exp * up, rows, mo.d_ff_expert / tp, d), (Lm * n_exp, rows, d, mo.d_ff_expert / tp)]
    return out + [(1, M, model.vocab_size / tp, d)]


def pass_shape_efficiency(model: Model, chip: Chip, tokens: int, tp: int) -> float:
    """η_shape of a forward pass over ``tokens`` tokens: the FLOP-weighted efficiency of its GEMMs
    (:func:`layer_gemms`), ``Σ F_i / Σ (F_i / η_i)`` with ``F_i = 2·M·N·K`` and ``η_i`` one GEMM's shape
    efficiency, :func:`accelbook.costs.gemm.gemm_shape_efficiency` (GPU tiles of 16 to 128 rows, split-K
    when the tiles do not fill the SMs; TPU MXU folds), the function the training model uses; 1 on other
    chips (no tiling model). Llama 2 70B, 128 tokens on one of 8 H100s: 0.90 (the QKV projection, 1,280 columns,
    is 10 tiles, split 13 ways); 32 rows on one of 4: 0.90 (16-row tiles); one row: 0.06 (the weights' read
    binds long before); the compute time is divided by it. ``tokens`` and ``tp``: numbers, or arrays of
    them (one figure each, each distinct pair worked out once)."""
    model, chip = instance("model", model, Model, get_model), instance("chip", chip, Chip, get_chip)
    reals("tokens", tokens, 1.0, 2.0**40)
    at_most("tp", np.max(wholes("tp", tp)), 2**40, "the tokens' bound: the GEMMs' shapes are int64")
    if chip.kind not in ("gpu", "tpu"):
        return 1.0
    chip_key = (model.id, base_id(chip), chip.compute_units, chip.mxu_rows, chip.mxu_count)
    if not any_array(tokens, tp):
        return _shape_eta(model, chip, chip_key, tokens, tp)
    pairs = list(zip(*(np.broadcast_to(x, np.broadcast(tokens, tp).shape).tolist() for x in (tokens, tp))))
    known = {}
    for t, p in pairs:
        if (t, p) not in known:
            known[t, p] = _SHAPE_ETA.get(chip_key + (int(t), int(p)))
    missing = [k for k, eta in known.items() if eta is None]
    for (t, p), eta in zip(missing, _shape_etas(model, chip, missing) if missing else ()):   # all at once
        known[t, p] = _SHAPE_ETA[chip_key + (int(t), int(p))] = eta
    return np.array([known[k] for k in pairs])


def _shape_eta(model: Model, chip: Chip, chip_key: tuple, tokens, tp: int) -> float:
    """:func:`pass_shape_efficiency` of checked plain numbers, remembered by ``chip_key``, tokens and tp."""
    key = chip_key + (int(tokens), int(tp))
    eta = _SHAPE_ETA.get(key)
    if eta is None:
        eta = _SHAPE_ETA[key] = _shape_etas(model, chip, [(tokens, tp)])[0]
    return eta


def _shape_etas(model: Model, chip: Chip, pairs: list) -> list[float]:
    """η_shape of each ``(tokens, tp)`` of ``pairs`` on a GPU or TPU: the GEMMs of :func:`layer_gemms`, each
    one's η (:func:`accelbook.costs.gemm.gemm_shape_efficiency`; ``M`` cut to a whole number, since an expert's
    mean rows ``M·top_k/E`` need not be whole, ``N`` and ``K`` rounded up, all at least 1), FLOP-weighted
    (:func:`_flop_weighted`)."""
    t, p = (np.array(c) for c in zip(*pairs))
    gemms = layer_gemms(model, t, p.astype(np.int64))         # every pair at once
    starts = np.arange(len(pairs) + 1) * len(gemms)
    # (field, pair, gemm) -> each field's values pair after pair, a pair's GEMMs in layer_gemms' order
    table = np.empty((4, len(pairs), len(gemms)))
    for i, g in enumerate(gemms):
        for f in range(4):
            table[f, :, i] = g[f]          # a plain number fills the column; an array, pair by pair
    count, M, N, K = (table[f].ravel() for f in range(4))
    Mi, Ni, Ki = (np.maximum(1.0, x) for x in (np.trunc(M), np.ceil(N), np.ceil(K)))
    is_tpu, sms, mxu, n_mxu = chip_gemm_units(chip)
    eta = _gemm_etas(Mi, Ni, Ki, is_tpu, float(sms), float(mxu), float(n_mxu))   # floats: training's signature
    etas = _flop_weighted(starts, count, M, N, K, eta).tolist()
    return [output("pass_shape_efficiency", v, lo=0.0, hi=1.0 + 1e-9) for v in etas]


#: GEMM input precisions whose activations are cast before every GEMM (W8A8 FP8, W4A4 FP4)
CAST_PRECISIONS = ("fp8", "fp4")


@functools.lru_cache(maxsize=512)
def elementwise_bytes_per_token(model: Model, tp: int, precision: str) -> float:
    """HBM bytes one token's elementwise kernels move on one chip, over all the model's layers: two
    norms, two residual adds, RoPE on q and k, the FFN activation, and, when the GEMMs take ``fp8`` or
    ``fp4`` inputs, the casts of those inputs (:func:`accelbook.costs.elementwise.elementwise_bytes`, no
    sequence parallelism, the heads and FFN split over ``tp`` chips). They are separate kernels between
    the GEMMs, so their time adds to the step's; at a batch of 512 on Llama 2 70B in fp8 they move 21 GB
    a step against 70 GB of weights."""
    t = float(whole("tp", tp))
    _, d_v = model.attention_dim
    n_mats = 3.0 if model.ffn == "swiglu" else 2.0
    mo = model.moe
    if mo is None:   # a dense model: every layer's FFN is d_ff wide
        dff_eff = routed_ffn_width(0.0, float(model.d_ff), 1.0, 0.0, 0.0)
    else:
        dff_eff = routed_ffn_width(model.n_moe_layers / model.n_layers, float(model.d_ff), float(mo.top_k),
                                   float(mo.n_shared_experts), float(mo.d_ff_expert))
    return model.n_layers * elementwise_bytes(1.0, float(model.d_model), float(model.n_heads),
                                              kv_heads_per_chip(float(model.kv_heads), t), float(model.d_head),
                                              n_mats, float(d_v), dff_eff, t, 1.0, precision in CAST_PRECISIONS)
