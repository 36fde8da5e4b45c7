"""Number formats by formula, and what a format buys on a chip: peak FLOP/s, memory, decode speed.

Properties of a format, from its bit layout (:mod:`accelbook.specs.formats`, ``data/number_formats.toml``).
A float with ``E`` exponent bits, ``M`` mantissa bits and bias ``b``:

- ``e_max = (2^E - 1) - b`` when the largest exponent code holds numbers (``"nan-only"``, ``"none"``),
  ``(2^E - 2) - b`` when it is reserved (``"ieee"``: infinities and NaNs; ``"nan-code"``: one NaN);
- ``max = (2 - 2^-M) · 2^e_max``, except ``"nan-only"``, whose all-ones mantissa is the NaN:
  ``max = (2 - 2^(1-M)) · 2^e_max``. E4M3: ``e_max = 15 - 7 = 8``, ``max = 1.75 · 256 = 448``;
  E5M2: ``e_max = 30 - 15 = 15``, ``max = 1.75 · 32768 = 57344`` (OCP OFP8); bf16 ``3.39e38``; fp16 65504;
- smallest normal ``2^(1-b)`` (with subnormals: code 0 holds ``0.m · 2^(1-b)``), or ``2^(-b)`` without
  (E8M0: ``2^-127``); smallest positive ``2^(1-b-M)`` with subnormals, else the smallest normal;
- machine epsilon ``eps = 2^-M`` (the gap above 1); dynamic range ``log2(max / smallest positive)``
  binades: E4M3 17.8, E5M2 31.8 (the FP8 paper's 18 and 32).

An ``n``-bit two's-complement integer: ``max = 2^(n-1) - 1``, smallest positive 1, range ``log2(max)``;
its epsilon is not defined (the spacing is 1 at every magnitude; a scale set by software says what 1 is).

A block format stores ``block_size`` elements and one shared scale: ``bits = element bits + scale bits /
block_size`` (MXFP4: ``4 + 8/32 = 4.25``; NVFP4: ``4 + 8/16 = 4.5``; a per-tensor scale adds ~0). Inside a
block the element's range and precision apply; the scale moves whole blocks over its own range.

On a chip (the catalogue's dense peaks, ``Chip.peak_flop_s``): a format runs at the peak of its
``chip_precision``; a chip that publishes none for it runs the weights widened to bf16 (or fp16), as
weight-only kernels do. Decode step (one new token for each of ``B`` sequences at context ``s``), on the
roofline of :func:`accelbook.chip.roofline.time_bounds`:

    F = B · C_fwd(s)                           (Model.flops_per_token, full attention over s)
    D = N · bits_w / 8 + B · s · n_kv · bits_kv / 8
    t_math = F / P,  t_mem = D / B_mem,  t = max(t_math, t_mem)

``N`` every parameter (a dense model reads all its weights each step), ``n_kv`` KV-cache elements per token
(``Model.kv_cache_bytes_per_token`` in elements). Llama 3.1 70B on a B200, batch 1, 8,192 tokens: bf16 reads
141.1 + 2.7 GB, NVFP4 weights 39.7 + 2.7 GB: ``143.8 / 42.4 = 3.39×`` faster, not 4×.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from accelbook.checks import at_most, instance, integral, one_of
from accelbook.chip.roofline import time_bounds
from accelbook.specs.chips import Chip, get_chip, usable_memory_bytes
from accelbook.specs.formats import FormatSpec, get_format, load_formats
from accelbook.specs.models import Model, bytes_per_element, get_model

#: the formats a model is stored and computed in, in the order of the notebook's tables (element-only
#: formats and the E8M0 scale are parts of these)
TEACHING_FORMATS = ("fp32", "tf32", "bf16", "fp16", "fp8-e4m3", "fp8-e5m2", "mxfp8", "mxfp6", "mxfp4", "nvfp4",
                    "int8", "int4")
#: the format a speed-up or a memory saving is measured against
BASELINE = "bf16"
#: what a chip without a peak for a format computes in (weights widened before the multiply)
WIDEN_TO = ("bf16", "fp16")


#: format name -> (the catalogue it was looked up in, its spec): ``get_format`` builds its forgiving index on
#: every call; a name is looked up again when the catalogue is reloaded
_FOUND: dict[str, tuple] = {}


def _spec(fmt: FormatSpec | str) -> FormatSpec:
    if isinstance(fmt, FormatSpec):
        return fmt
    if not isinstance(fmt, str):
        return get_format(fmt)
    formats = load_formats()
    hit = _FOUND.get(fmt)
    if hit is None or hit[0] is not formats:
        if len(_FOUND) >= 256:
            _FOUND.clear()
        hit = _FOUND[fmt] = (formats, get_format(fmt))
    return hit[1]


def _format(name: str, fmt: FormatSpec | str) -> FormatSpec:
    """:func:`_spec`, an unknown or ill-typed format's error led by the argument's name."""
    try:
        return _spec(fmt)
    except KeyError as err:
        raise ValueError(f"{name}: {err.args[0] if err.args else err}") from None
    except TypeError as err:
        raise TypeError(f"{name}: {err}") from None


def _chip(chip: Chip | str) -> Chip:
    return instance("chip", chip, Chip, get_chip)


def _model(model: Model | str) -> Model:
    return instance("model", model, Model, get_model)


def _chips(chips) -> list[Chip]:
    if isinstance(chips, (str, Chip)) or not hasattr(chips, "__iter__"):
        raise TypeError(f"chips must be a list of chips (objects or names), got {chips!r}"[:200])
    return [_chip(c) for c in chips]


def bits_per_element(fmt: FormatSpec | str) -> float:
    """Bits stored per element, the block scale's share included: sign + E + M for a float, n for an
    integer, ``element bits + scale bits / block_size`` for a block format (MXFP4 4.25, NVFP4 4.5)."""
    f = _spec(fmt)
    if f.family == "float":
        return float(int(f.signed) + f.exponent_bits + f.mantissa_bits)
    if f.family == "int":
        return float(f.bits)
    formats = load_formats()
    return bits_per_element(formats[f.element]) + bits_per_element(formats[f.scale]) / f.block_size


def bits_formula(fmt: FormatSpec | str) -> str:
    """:func:`bits_per_element` written out: ``"4 + 8/16"`` for NVFP4, ``"8"`` for fp8."""
    f = _spec(fmt)
    if f.family != "block":
        return f"{bits_per_element(f):g}"
    formats = load_formats()
    return f"{bits_per_element(formats[f.element]):g} + {bits_per_element(formats[f.scale]):g}/{f.block_size}"


def max_exponent(fmt: FormatSpec | str) -> int:
    """``e_max``: ``(2^E - 1) - b`` if the largest exponent code holds numbers, ``(2^E - 2) - b`` if reserved."""
    f = _spec(fmt)
    top = 2**f.exponent_bits - 1
    return (top if f.specials in ("nan-only", "none") else top - 1) - f.bias


def max_finite(fmt: FormatSpec | str) -> float:
    """Largest finite value: ``(2 - 2^-M) · 2^e_max`` (``2 - 2^(1-M)`` for "nan-only"), ``2^(n-1) - 1`` for
    an integer; a block format's element (the scale shifts it by up to the scale's own maximum)."""
    f = _spec(fmt)
    if f.family == "block":
        return max_finite(load_formats()[f.element])
    if f.family == "int":
        return float(2 ** (f.bits - 1) - 1 if f.signed else 2**f.bits - 1)
    frac = 2.0 - 2.0 ** (1 - f.mantissa_bits) if f.specials == "nan-only" else 2.0 - 2.0 ** -f.mantissa_bits
    return frac * 2.0 ** max_exponent(f)


def min_normal(fmt: FormatSpec | str) -> float:
    """Smallest normal value: ``2^(1-b)`` with subnormals, ``2^(-b)`` without; 1 for an integer."""
    f = _spec(fmt)
    if f.family == "block":
        return min_normal(load_formats()[f.element])
    if f.family == "int":
        return 1.0
    return 2.0 ** ((1 if f.subnormals else 0) - f.bias)


def min_positive(fmt: FormatSpec | str) -> float:
    """Smallest positive value: the smallest subnormal ``2^(1-b-M)``, or the smallest normal without subnormals."""
    f = _spec(fmt)
    if f.family == "block":
        return min_positive(load_formats()[f.element])
    if f.family == "float" and f.subnormals:
        return 2.0 ** (1 - f.bias - f.mantissa_bits)
    return min_normal(f)


def machine_epsilon(fmt: FormatSpec | str) -> float:
    """``eps = 2^-M``, the gap between 1 and the next value; NaN for an integer (not defined)."""
    f = _spec(fmt)
    if f.family == "block":
        return machine_epsilon(load_formats()[f.element])
    return 2.0 ** -f.mantissa_bits if f.family == "float" else math.nan


def dynamic_range_binades(fmt: FormatSpec | str) -> float:
    """``log2(max_finite / min_positive)``: powers of two between the smallest and the largest value
    (E4M3 17.8, E5M2 31.8). A block format: one block's range; its scale adds :func:`scale_binades`."""
    return math.log2(max_finite(fmt) / min_positive(fmt))


def scale_binades(fmt: FormatSpec | str) -> float:
    """The block scale's own range, ``log2(max / min_positive)`` of the scale format (E8M0: 254 binades;
    E4M3: 17.8); 0 for a format without a block scale."""
    f = _spec(fmt)
    return dynamic_range_binades(load_formats()[f.scale]) if f.family == "block" else 0.0


@dataclass(frozen=True)
class FormatProperties:
    """Every derived property of one format (see the module docstring for the formulas)."""

    id: str
    name: str
    family: str
    bits_per_element: float
    exponent_bits: int | None
    mantissa_bits: int | None
    max_finite: float
    min_normal: float
    min_positive: float
    machine_epsilon: float
    dynamic_range_binades: float
    scale_binades: float
    chip_precision: str | None


def properties(fmt: FormatSpec | str) -> FormatProperties:
    """:class:`FormatProperties` of ``fmt`` (an id, a name, or a :class:`FormatSpec`)."""
    f = _spec(fmt)
    elem = load_formats()[f.element] if f.family == "block" else f
    return FormatProperties(f.id, f.name, f.family, bits_per_element(f), elem.exponent_bits, elem.mantissa_bits,
                            max_finite(f), min_normal(f), min_positive(f), machine_epsilon(f),
                            dynamic_range_binades(f), scale_binades(f), f.chip_precision)


def format_table(ids=TEACHING_FORMATS) -> pd.DataFrame:
    """One row per format: bits per element (block scale included), exponent and mantissa bits, largest
    finite value, smallest normal and positive values, machine epsilon, dynamic range in binades."""
    rows = [properties(i).__dict__ for i in ids]
    return pd.DataFrame(rows).rename(columns={"name": "format"})


# -- on a chip -------------------------------------------------------------------------------------------------
def peak_flop_s(chip: Chip, fmt: FormatSpec | str) -> float | None:
    """The chip's dense peak for ``fmt`` (that of its ``chip_precision``), or None where the vendor
    published none (TPU v5p has no fp4 peak; no chip in the catalogue has an int4 one). ``chip``: an object
    or a catalogue name."""
    chip, f = _chip(chip), _format("fmt", fmt)
    if f.chip_precision is None or f.chip_precision not in chip.precisions:
        return None
    return chip.peak_flop_s(f.chip_precision)


def peak_table(chips, ids=TEACHING_FORMATS) -> pd.DataFrame:
    """One row per (chip, format): the dense peak (NaN where unpublished) and its ratio to the chip's
    bf16 peak (NaN where either is unpublished)."""
    rows = []
    for c in _chips(chips):
        base = peak_flop_s(c, BASELINE)
        for i in ids:
            p = peak_flop_s(c, i)
            rows.append({"chip": c.name, "format": i, "chip_precision": _spec(i).chip_precision,
                         "peak_flop_s": math.nan if p is None else p,
                         "vs_bf16": math.nan if p is None or base is None else p / base})
    return pd.DataFrame(rows)


def compute_precision(chip: Chip, fmt: FormatSpec | str) -> str:
    """The catalogue precision a matmul on weights in ``fmt`` runs at: the format's own if the chip
    publishes a peak for it, else bf16 (or fp16): the weights are widened before the multiply, as weight-only
    kernels do (int4 on every chip; fp4 on an H100). ValueError if the chip has neither."""
    chip, f = _chip(chip), _format("fmt", fmt)
    if f.chip_precision in chip.precisions:
        return f.chip_precision
    if bits_per_element(f) > 16:   # a wider format cannot be "widened" to 16 bits
        raise ValueError(f"{chip.name} publishes no dense {f.chip_precision} peak, so {f.id} has none")
    for p in WIDEN_TO:
        if p in chip.precisions:
            return p
    raise ValueError(f"{chip.name} publishes no peak for {f.id} and none for {' or '.join(WIDEN_TO)}")


def kv_elements_per_token(model: Model, context: int | None = None) -> float:
    """KV-cache elements per token of context: ``Model.kv_cache_bytes_per_token`` in elements (2·L·H_kv·d_h,
    or L·(d_c + d_r) with MLA); at ``context`` tokens, the mean over a windowed model's layers."""
    model = _model(model)
    kvb = model.kv_cache_bytes_per_token(BASELINE) if context is None else model.kv_bytes_per_token_at(context, BASELINE)
    return kvb / bytes_per_element(BASELINE)


def serving_memory(model: Model, weight_format, kv_format, context: int, batch: int) -> dict[str, float]:
    """Bytes to serve ``model``: ``weights = N · bits_w / 8``, ``kv = B · s · n_kv · bits_kv / 8``, and their sum."""
    _check_whole("context", context)
    _check_whole("batch", batch)
    model, weight_format, kv_format = _model(model), _format("weight_format", weight_format), _format("kv_format", kv_format)
    w = model.params * bits_per_element(weight_format) / 8
    kv = batch * context * kv_elements_per_token(model, context) * bits_per_element(kv_format) / 8
    return {"weights_bytes": w, "kv_bytes": kv, "total_bytes": w + kv}


#: the largest context (tokens) and batch a decode step is computed for: far past any served model
MAX_CONTEXT, MAX_BATCH = 10**9, 10**7


def _check_whole(name: str, v) -> None:
    at_most(name, integral(name, v), MAX_CONTEXT if name == "context" else MAX_BATCH,
            "accelbook.chip.number_formats.MAX_CONTEXT, MAX_BATCH")


@dataclass(frozen=True)
class DecodeStep:
    """One decode step on one chip's roofline (see the module docstring): seconds, bytes, the bound in words."""

    weight_format: str
    kv_format: str
    compute_precision: str
    flops: float
    weights_bytes: float
    kv_bytes: float
    t_math_s: float
    t_mem_s: float
    t_s: float
    bound: str                # "memory" or "compute"
    chips_to_hold: int        # chips whose usable memory holds weights + KV (no room for activations counted)
    why: str


def decode_step(model: Model, chip: Chip, weight_format, kv_format, context: int, batch: int) -> DecodeStep:
    """A decode step's roofline time with weights in ``weight_format`` and the KV cache in ``kv_format``:
    ``t = max(F / P, D / B_mem)``. The bytes are streamed as if through one chip; spread over ``n`` chips each
    reads ``1/n`` and the time divides by ``n`` for every format alike (communication left out). ``model``,
    ``chip``: objects or catalogue names (so in every function of this module)."""
    model, chip = _model(model), _chip(chip)
    wf, kf = _format("weight_format", weight_format), _format("kv_format", kv_format)
    bw = chip.memory_bw_bytes_per_s
    if bw is None:
        raise ValueError(f"{chip.name} has no published memory bandwidth")
    prec = compute_precision(chip, wf)
    mem = serving_memory(model, wf, kf, context, batch)
    flops = batch * model.flops_per_token(context)
    t_math, t_mem, t = (float(x) for x in time_bounds(flops, mem["total_bytes"], chip.peak_flop_s(prec), bw))
    bound = "compute" if t_math > t_mem else "memory"
    widened = "" if prec == wf.chip_precision else f" ({wf.id} weights widened to {prec}: no {wf.id} peak on {chip.name})"
    why = (f"{bound}-bound: reading {mem['total_bytes'] / 1e9:,.1f} GB (weights {mem['weights_bytes'] / 1e9:,.1f}, "
           f"KV {mem['kv_bytes'] / 1e9:,.1f}) takes {t_mem * 1e3:,.3g} ms, the math at the {prec} peak "
           f"{t_math * 1e3:,.3g} ms{widened}")
    hold = math.ceil(mem["total_bytes"] / usable_memory_bytes(chip.memory_bytes)) if chip.memory_bytes else 0
    return DecodeStep(wf.id, kf.id, prec, flops, mem["weights_bytes"], mem["kv_bytes"], t_math, t_mem, t, bound,
                      hold, why)


def decode_speedup(model: Model, chip: Chip, weight_format, kv_format, context: int, batch: int,
                   baseline: str = BASELINE) -> float:
    """``t(baseline weights and KV) / t(weight_format, kv_format)``: what fewer bytes (and a faster peak)
    buy a decode step. 3.39 for Llama 3.1 70B in NVFP4 (bf16 KV) on a B200 at batch 1 and 8K tokens."""
    baseline = _format("baseline", baseline)
    ref = decode_step(model, chip, baseline, baseline, context, batch)
    return ref.t_s / decode_step(model, chip, weight_format, kv_format, context, batch).t_s


def precision_sweep(model: Model, chip: Chip, kv_format=None, context: int = 8192, batch: int = 1,
                    ids=TEACHING_FORMATS) -> pd.DataFrame:
    """One row per weight format: bits per element, weights and KV bytes, chips to hold them, the peak, the
    decode step and its speed-up over bf16 weights and KV. ``kv_format`` None keeps the KV cache in the
    weights' format. Formats a chip cannot compute even widened are left out; an unknown format is an error."""
    model, chip = _model(model), _chip(chip)
    if kv_format is not None:
        kv_format = _format("kv_format", kv_format)
    if isinstance(ids, (str, FormatSpec)) or not hasattr(ids, "__iter__"):
        raise TypeError(f"ids must be a list of format ids, got {ids!r}"[:200])
    ids = list(ids)
    for i in ids:
        _format("ids", i)
    rows = []
    ref = decode_step(model, chip, BASELINE, BASELINE, context, batch)
    for i in ids:
        kf = i if kv_format is None else kv_format
        try:
            compute_precision(chip, i)
        except ValueError:      # the chip cannot compute this format, even widened
            continue
        s = decode_step(model, chip, i, kf, context, batch)
        p = peak_flop_s(chip, i)
        rows.append({"format": i, "kv_format": s.kv_format, "bits_per_element": bits_per_element(i),
                     "weights_bytes": s.weights_bytes, "kv_bytes": s.kv_bytes, "chips_to_hold": s.chips_to_hold,
                     "peak_flop_s": np.nan if p is None else p, "compute_precision": s.compute_precision,
                     "t_step_s": s.t_s, "speedup_vs_bf16": ref.t_s / s.t_s, "bound": s.bound})
    return pd.DataFrame(rows)


def results_table(results) -> pd.DataFrame:
    """Published results (:func:`accelbook.specs.formats.load_quantisation_results`) as a table with the
    change from the baseline, signed so that a loss is negative: ``(reported - baseline)`` if higher is
    better, ``-(reported - baseline)`` otherwise, and its share of the baseline."""
    rows = []
    for r in results:
        sign = 1.0 if r.higher_is_better else -1.0
        change = sign * (r.reported - r.baseline)
        rows.append({"model": r.model, "format": r.format, "baseline_format": r.baseline_format, "phase": r.phase,
                     "metric": r.metric, "baseline": r.baseline, "reported": r.reported, "gain": change,
                     "gain_share": change / r.baseline, "source": r.provenance.source.id})
    return pd.DataFrame(rows)


def peak_ratio_table(chips, fmt="nvfp4", baseline="fp8-e4m3") -> pd.DataFrame:
    """Per chip: the dense peak at ``fmt`` over the peak at ``baseline`` (1 where the chip has no ``fmt``
    peak but runs it at the baseline's, NaN where it publishes neither); ``published`` says which."""
    rows = []
    for c in _chips(chips):
        p, b = peak_flop_s(c, fmt), peak_flop_s(c, baseline)
        rows.append({"chip": c.name, f"{fmt}_flop_s": math.nan if p is None else p,
                     f"{baseline}_flop_s": math.nan if b is None else b,
                     "ratio": math.nan if b is None else (p if p is not None else b) / b,
                     "published": p is not None})
    return pd.DataFrame(rows)


def check_format_id(name: str) -> str:
    """``name`` if it is a teaching format's id, else a ValueError listing them (for dashboards)."""
    one_of("format", name, TEACHING_FORMATS)
    return name
