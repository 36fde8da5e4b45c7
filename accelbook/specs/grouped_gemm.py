"""Grouped GEMMs: a MoE layer's expert GEMMs run as one kernel over the tokens each local expert received,
and the share of the chip's measured large dense GEMM they reach (``data/grouped_gemm_efficiency.toml``).

``ρ_group = achieved / dense``, where ``achieved = gemms·2·G·m·n·k / t`` of a published timing and
``dense`` the chip's measured best-shape GEMM (:func:`accelbook.specs.efficiency.measured_efficiency` ×
peak); :func:`grouped_gemm_fraction` is the median over a chip's rows. The training model runs the routed
experts' GEMMs at ``η_meas·ρ_group`` with its tile model on top. The figures come from kernel benchmarks
(DeepGEMM's README on H800, torchao's MoE-training benchmarks on B200), never from the training runs the
model is checked against. A chip without a timing borrows a sibling's (same matrix-unit generation) and
says so; a chip family without one (A100, MI300X, TPUs) keeps ``ρ_group`` = 1.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .catalogue import catalogue_cache
from .chips import Chip, base_id, get_chip
from .efficiency import measured_efficiency
from .loader import DATA_DIR, CatalogueError, Provenance, check_keys, load_sources, parse_quantity, read_table_file

PRECISIONS = ("bf16", "fp8")
#: a chip without a grouped-GEMM timing uses the one of the same matrix-unit generation (Hopper: H100, H200
#: and H800 share the SM and its FP8/BF16 peaks; Blackwell: GB200 and GB300 the B200's tensor cores)
GROUPED_BORROW: Mapping[str, str] = MappingProxyType(
    {"h100": "h800", "h200": "h800", "gb200": "b200", "gb300": "b200"})
_WHOLE = ("groups", "m_per_group", "n", "k")


@dataclass(frozen=True)
class GroupedGemmTiming:
    """One published grouped-GEMM timing: ``groups`` GEMMs ``[m_per_group × k]·[k × n]`` (``gemms`` 3 when
    forward and both backward GEMMs were timed together), its time, the FLOP/s it reached and that over the
    chip's measured dense GEMM (``fraction``)."""

    id: str
    chip_id: str
    precision: str
    kernel: str
    groups: int
    m_per_group: int
    n: int
    k: int
    gemms: int
    time_s: float
    achieved_flop_s: float
    fraction: float
    provenance: Provenance


@catalogue_cache(maxsize=4)
def load_grouped_gemm_timings(path: Path | str | None = None) -> tuple[GroupedGemmTiming, ...]:
    """Read ``grouped_gemm_efficiency.toml`` (or ``path``), in file order: whole positive shapes, ``gemms`` 1 or
    3, one of ``tflop_s`` or ``time_us`` with its source, and an achieved throughput at most the chip's peak."""
    path = Path(path) if path is not None else DATA_DIR / "grouped_gemm_efficiency.toml"
    sources = load_sources()
    out = []
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required={"chip", "precision", "kernel", *_WHOLE, "gemms"},
                   optional={"tflop_s", "time_us"})
        if e["precision"] not in PRECISIONS:
            raise CatalogueError(path, rid, "precision", f"must be one of {PRECISIONS}, got {e['precision']!r}")
        for key in _WHOLE:
            if not isinstance(e[key], int) or isinstance(e[key], bool) or e[key] < 1:
                raise CatalogueError(path, rid, key, f"must be a positive whole number, got {e[key]!r}")
        if e["gemms"] not in (1, 3) or isinstance(e["gemms"], bool):
            raise CatalogueError(path, rid, "gemms", f"must be 1 (one GEMM) or 3 (forward + backward), got {e['gemms']!r}")
        if ("tflop_s" in e) == ("time_us" in e):
            raise CatalogueError(path, rid, "tflop_s", "give exactly one of tflop_s and time_us")
        chip = get_chip(e["chip"])
        flop = e["gemms"] * 2.0 * e["groups"] * e["m_per_group"] * e["n"] * e["k"]
        if "tflop_s" in e:
            q = parse_quantity(path, rid, "tflop_s", e["tflop_s"], "tflop_s", sources)
            achieved, t = q.value, flop / q.value
        else:
            q = parse_quantity(path, rid, "time_us", e["time_us"], "us", sources)
            achieved, t = flop / q.value, q.value
        if achieved > chip.peak_flop_s(e["precision"]):
            raise CatalogueError(path, rid, "tflop_s" if "tflop_s" in e else "time_us",
                                 f"{achieved / 1e12:.0f} TFLOP/s is above {chip.name}'s {e['precision']} peak")
        dense = measured_efficiency(chip, e["precision"])[0].fraction * chip.peak_flop_s(e["precision"])
        out.append(GroupedGemmTiming(rid, chip.id, e["precision"], e["kernel"], e["groups"], e["m_per_group"], e["n"],
                                     e["k"], e["gemms"], t, achieved, achieved / dense, q.provenance))
    return tuple(out)


@dataclass(frozen=True)
class GroupedGemmFraction:
    """``ρ_group`` of a chip at a precision (:func:`grouped_gemm_fraction`): the rows it is the median of (none:
    1.0, not measured), the chip they were timed on (``measured_on``) and a note in words."""

    chip_id: str
    precision: str
    fraction: float
    measured_on: str | None
    rows: tuple[GroupedGemmTiming, ...]
    note: str


def grouped_gemm_fraction(chip: Chip | str, precision: str = "bf16") -> GroupedGemmFraction:
    """The share of ``chip``'s measured dense GEMM throughput its grouped (MoE expert) GEMMs reach at
    ``precision``: the median of ``achieved / dense`` over the rows of the chip, else of its
    :data:`GROUPED_BORROW` sibling. H800 FP8 (DeepGEMM, contiguous layout, 4,096 and 8,192 tokens per
    expert): 1346 and 1214 TFLOP/s over the 1403 TFLOP/s dense fraction, median (0.866 + 0.960)/2 = 0.913;
    B200 MXFP8 (torchao: forward, input and weight gradients) 0.666; B200 bf16 (torch._grouped_mm, forward +
    backward) 0.433. FALLBACK: no row for the chip, its sibling or that precision: 1.0 (the dense fraction
    and the tile model alone), which the note says."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    rows = load_grouped_gemm_timings()
    base = base_id(c)
    for cid in (base, GROUPED_BORROW.get(base)):
        use = tuple(r for r in rows if r.chip_id == cid and r.precision == precision)
        if cid is not None and use:
            f = statistics.median(r.fraction for r in use)
            where = "on this chip" if cid == base else f"BORROWED from {cid} (no grouped-GEMM timing on this chip)"
            kernels = "; ".join(sorted({r.kernel for r in use}))
            return GroupedGemmFraction(c.id, precision, f, cid, use, (
                f"{c.name}: routed-expert GEMMs at {f:.0%} of the measured dense {precision} GEMM, the median of "
                f"{len(use)} grouped-GEMM timings ({kernels}; {use[0].provenance.source.title}) {where}"))
    return GroupedGemmFraction(c.id, precision, 1.0, None, (), (
        f"{c.name}: no published grouped-GEMM timing at {precision} for this chip or a sibling; routed-expert GEMMs "
        "run as dense GEMMs at the measured dense fraction and the tile model"))
