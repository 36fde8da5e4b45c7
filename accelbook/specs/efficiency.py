"""Measured matrix-unit efficiency: the fraction of dense peak a large GEMM (or FlashAttention)
reaches on a chip in a published measurement (``data/matmul_efficiency.toml``: Bekman's MAMF table,
the FlashAttention papers, the JAX Pallas tutorial).

The training and inference models apply it on top of their own tile/wave losses
(:mod:`accelbook.chip.tiling`), so it is calibrated from GEMM benchmarks, never from the training
or inference runs it is checked against. A chip without a measurement borrows its closest measured
sibling's fraction, and says so.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from .chips import Chip, base_id, get_chip
from .loader import DATA_DIR, CatalogueError, Provenance, check_keys, load_sources, parse_quantity, read_table_file

_EFF_KEYS = {"gemm_bf16_tflop_s": "bf16", "gemm_fp8_tflop_s": "fp8", "attention_bf16_tflop_s": "attention"}


@dataclass(frozen=True)
class MeasuredEfficiency:
    """Fraction of dense peak reached in a published measurement, with where it comes from."""

    chip_id: str
    kind: str          # "bf16", "fp8" GEMM, or "attention" (FlashAttention, bf16)
    fraction: float
    measured_flop_s: float
    provenance: Provenance | None   # None: not measured on this chip; ``borrowed_from`` says whose


@functools.lru_cache(maxsize=1)
def _efficiencies() -> Mapping[tuple[str, str], MeasuredEfficiency]:
    path = DATA_DIR / "matmul_efficiency.toml"
    sources = load_sources()
    out = {}
    for cid, e in read_table_file(path).items():
        check_keys(path, cid, e, required=set(), optional=set(_EFF_KEYS))
        chip = get_chip(cid)
        for key, kind in _EFF_KEYS.items():
            if key not in e:
                continue
            q = parse_quantity(path, cid, key, e[key], "tflop_s", sources)
            peak = chip.peak_flop_s("fp8" if kind == "fp8" else "bf16")
            frac = q.value / peak
            if not 0 < frac <= 1:
                raise CatalogueError(path, cid, key, f"{q.value / 1e12:.0f} TFLOP/s is above the chip's peak "
                                                     f"{peak / 1e12:.0f}; check the figure or the peak")
            out[(chip.id, kind)] = MeasuredEfficiency(chip.id, kind, frac, q.value, q.provenance)
    return MappingProxyType(out)


# Where a chip has no published measurement, borrow the closest measured sibling's fraction (same
# vendor and matrix-unit design); the estimate's assumptions say so.
_BORROW = {"h200": "h100", "h800": "h100", "gb200": "b200", "b200": "gb200", "rubin": "b200",
           "tpu-v4": "tpu-v5e", "tpu-v5p": "tpu-v5e", "tpu-v6e": "tpu-v5e", "tpu7": "tpu-v5e"}


def measured_efficiency(chip: Chip | str, kind: str = "bf16") -> tuple[MeasuredEfficiency, str]:
    """The measured large-GEMM (or attention) fraction of peak for ``chip``, and a sentence saying
    where it comes from (measured on this chip, or borrowed from a sibling)."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    if kind not in ("bf16", "fp8", "attention"):
        raise ValueError(f"kind must be 'bf16', 'fp8' or 'attention', got {kind!r}")
    effs = _efficiencies()
    base = base_id(c)
    seen = []
    cid = base
    while cid is not None and cid not in seen:
        seen.append(cid)
        for k in ((kind,) if kind != "fp8" else ("fp8",)):
            if (cid, k) in effs:
                m = effs[(cid, k)]
                where = "measured on this chip" if cid == base else f"borrowed from {cid} (no measurement on {c.name})"
                src = m.provenance.source.title if m.provenance else ""
                return m, f"{kind} efficiency {m.fraction:.0%} of peak, {where}: {src}"
        cid = _BORROW.get(cid)
    if kind == "fp8":
        m, why = measured_efficiency(c, "bf16")
        return m, why + " (no FP8 GEMM measurement: the bf16 fraction is used for FP8)"
    if kind == "attention":
        m, why = measured_efficiency(c, "bf16")
        f = 0.75 * m.fraction
        return (MeasuredEfficiency(c.id, "attention", f, f * c.peak_flop_s("bf16"), None),
                f"attention efficiency {f:.0%} of peak, ASSUMED: 75% of the bf16 GEMM fraction (A100: 230/271 = 85%, "
                f"H100: 502/795 = 63% measured) as no FlashAttention measurement was found; the GEMM fraction is {why}")
    raise ValueError(f"no published GEMM measurement for {c.name} or a sibling; add one to "
                     "data/matmul_efficiency.toml")


@dataclass(frozen=True)
class AttentionCurve:
    """Measured FlashAttention forward+backward throughput (FLOP/s) at each sequence length of a
    published table (``data/attention_efficiency.toml``), bf16, at ``head_dim`` and ``causal``."""

    chip_id: str
    head_dim: int
    causal: bool
    seq_lens: tuple[int, ...]
    flop_s: tuple[float, ...]
    provenance: Provenance


@functools.lru_cache(maxsize=1)
def _attention_curves() -> Mapping[str, AttentionCurve]:
    path = DATA_DIR / "attention_efficiency.toml"
    sources = load_sources()
    out = {}
    for cid, e in read_table_file(path).items():
        points = sorted((int(k[1:-len("_tflop_s")]), k) for k in e if re.fullmatch(r"s\d+_tflop_s", k))
        check_keys(path, cid, e, required={"head_dim", "causal"}, optional={k for _, k in points})
        if len(points) < 2:
            raise CatalogueError(path, cid, None, "a table needs at least two sequence lengths (s512_tflop_s, ...)")
        qs = [parse_quantity(path, cid, k, e[k], "tflop_s", sources) for _, k in points]
        chip = get_chip(cid)
        for (s, k), q in zip(points, qs):
            if q.value > chip.peak_flop_s("bf16"):
                raise CatalogueError(path, cid, k, f"{q.value / 1e12:.0f} TFLOP/s is above the chip's bf16 peak")
        out[chip.id] = AttentionCurve(chip.id, int(e["head_dim"]), bool(e["causal"]), tuple(s for s, _ in points),
                                      tuple(q.value for q in qs), qs[0].provenance)
    return MappingProxyType(out)


def interpolate_log(seq_lens, values, seq_len: float) -> float:
    """``values`` at ``seq_len``, linear in ``log(seq_len)`` between the table's points and clamped
    at its ends (no extrapolation). E.g. points (1024, 131), (2048, 155) at 1448: 131 + 24·½ = 143."""
    if seq_len <= seq_lens[0]:
        return float(values[0])
    if seq_len >= seq_lens[-1]:
        return float(values[-1])
    for i in range(1, len(seq_lens)):
        if seq_len <= seq_lens[i]:
            w = math.log(seq_len / seq_lens[i - 1]) / math.log(seq_lens[i] / seq_lens[i - 1])
            return float(values[i - 1] + w * (values[i] - values[i - 1]))
    return float(values[-1])


def attention_efficiency(chip: Chip | str, seq_len: int | None = None) -> tuple[float, str]:
    """FlashAttention forward+backward fraction of the bf16 peak for ``chip`` at ``seq_len`` tokens,
    and a sentence saying where it comes from. With a table for the chip (or a sibling it borrows
    from), ``TFLOP/s(seq_len) / peak_bf16(table's chip)``, interpolated log-linearly in ``seq_len``
    and clamped at the table's ends (FA2 A100, causal, head dim 128: 155/312 = 50 % at 2K, 189/312 =
    61 % from 8K on); without one, or with ``seq_len`` None, :func:`measured_efficiency`'s single figure."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    if seq_len is not None:
        curves, cid, seen = _attention_curves(), base_id(c), []
        while cid is not None and cid not in seen:
            seen.append(cid)
            if cid in curves:
                cv = curves[cid]
                frac = interpolate_log(cv.seq_lens, cv.flop_s, seq_len) / get_chip(cid).peak_flop_s("bf16")
                where = "measured on this chip" if cid == base_id(c) else f"borrowed from {cid}"
                clamp = " (clamped at the table's end)" if not cv.seq_lens[0] <= seq_len <= cv.seq_lens[-1] else ""
                return frac, (f"attention efficiency {frac:.0%} of peak at {seq_len:,} tokens{clamp}, {where}: "
                              f"{'causal' if cv.causal else 'full'} head dim {cv.head_dim} fwd+bwd table "
                              f"{cv.seq_lens[0]}-{cv.seq_lens[-1]}, log-linear in the sequence length; "
                              f"{cv.provenance.source.title}")
            cid = _BORROW.get(cid)
    m, why = measured_efficiency(c, "attention")
    return m.fraction, why + " (one figure whatever the sequence length)"


# Measured memory, overlap and MoE-balance terms live in :mod:`.measured`; re-exported here so that the
# measured mechanism terms can all be found from this module.
from .measured import (  # noqa: E402, F401
    MeasuredBandwidth,
    achievable_hbm_fraction,
    expert_load_imbalance,
    overlap_slowdown,
)
