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
