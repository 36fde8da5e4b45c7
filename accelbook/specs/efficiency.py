"""Measured matrix-unit efficiency: the fraction of dense peak a large GEMM (or FlashAttention)
reaches on a chip in a published measurement (``data/matmul_efficiency.toml``: Bekman's MAMF table,
the FlashAttention papers, the JAX Pallas tutorial (TPU v5e), Google's TPU matmul microbenchmarks (v6e, TPU7x)).

The training and inference models apply it on top of their own tile/wave losses
(:mod:`accelbook.chip.tiling`), so it is calibrated from GEMM benchmarks, never from the training
or inference runs it is checked against. A chip without a measurement borrows its closest measured
sibling's fraction, and says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from .catalogue import catalogue_cache, drops_measurement
from .chips import CHIPS, Chip, base_id, get_chip
from .loader import DATA_DIR, CatalogueError, Provenance, check_keys, load_sources, parse_quantity, read_table_file

_EFF_KEYS = {"gemm_bf16_tflop_s": "bf16", "gemm_fp8_tflop_s": "fp8", "attention_bf16_tflop_s": "attention"}
#: the shape ``[M, N, K]`` a GEMM figure was measured at (MAMF's best shape), by the figure's kind
_SHAPE_KEYS = {"gemm_bf16_shape": "bf16", "gemm_fp8_shape": "fp8"}


@dataclass(frozen=True)
class MeasuredEfficiency:
    """Fraction of dense peak reached in a published measurement, with where it comes from."""

    chip_id: str
    kind: str          # "bf16", "fp8" GEMM, or "attention" (FlashAttention, bf16)
    fraction: float
    measured_flop_s: float
    provenance: Provenance | None   # None: not measured on this chip; ``borrowed_from`` says whose
    shape: tuple[int, int, int] | None = None   # (M, N, K) it was measured at, where the file says


@catalogue_cache(maxsize=1)
def _efficiencies() -> Mapping[tuple[str, str], MeasuredEfficiency]:
    path = DATA_DIR / "matmul_efficiency.toml"
    sources = load_sources()
    out = {}
    for cid, e in read_table_file(path).items():
        check_keys(path, cid, e, required=set(), optional=set(_EFF_KEYS) | set(_SHAPE_KEYS))
        chip = get_chip(cid)
        shapes = {kind: _shape(path, cid, key, e[key]) for key, kind in _SHAPE_KEYS.items() if key in e}
        for key, kind in _EFF_KEYS.items():
            if key not in e:
                continue
            q = parse_quantity(path, cid, key, e[key], "tflop_s", sources)
            peak = chip.peak_flop_s("fp8" if kind == "fp8" else "bf16")
            frac = q.value / peak
            if frac > 1:   # a registered chip slower than the part measured: that part's fraction, as for a variant
                part = next((c for c in CHIPS.builtin() if c.id == chip.id), chip)
                part_frac = q.value / part.peak_flop_s("fp8" if kind == "fp8" else "bf16")
                if drops_measurement(path, chip, f"a {kind} peak of {peak / 1e12:.0f} TFLOP/s, below the "
                                                 f"{q.value / 1e12:.0f} TFLOP/s GEMM measured on {chip.id!r}",
                                     f"the fraction of peak measured on the package's part ({part_frac:.0%}) is applied "
                                     "to the registered peak"):
                    frac = part_frac
            if not 0 < frac <= 1:
                raise CatalogueError(path, cid, key, f"{q.value / 1e12:.0f} TFLOP/s is above the chip's peak "
                                                     f"{peak / 1e12:.0f}; check the figure or the peak")
            out[(chip.id, kind)] = MeasuredEfficiency(chip.id, kind, frac, q.value, q.provenance, shapes.get(kind))
    return MappingProxyType(out)


def _shape(path, cid: str, key: str, raw) -> tuple[int, int, int]:
    """A measured GEMM's ``[M, N, K]``: three whole numbers > 0."""
    if not (isinstance(raw, list) and len(raw) == 3
            and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in raw)):
        raise CatalogueError(path, cid, key, f"must be [M, N, K], three whole numbers > 0, got {raw!r}")
    return (raw[0], raw[1], raw[2])


@dataclass(frozen=True)
class KOverhead:
    """A GPU GEMM tile's fixed cost (pipeline fill, epilogue) as a length of K: ``k0_fp8`` elements of one
    byte (:func:`gemm_k_overhead`)."""

    k0_fp8: float
    provenance: Provenance


@catalogue_cache(maxsize=1)
def gemm_k_overhead_record() -> KOverhead:
    """``data/gemm_k_overhead.toml``: the measured per-tile overhead of GPU GEMMs, checked at load."""
    path = DATA_DIR / "gemm_k_overhead.toml"
    table = read_table_file(path)
    check_keys(path, "file", table, required={"gpu"}, optional=set())
    check_keys(path, "gpu", table["gpu"], required={"k_overhead_fp8_count"}, optional=set())
    q = parse_quantity(path, "gpu", "k_overhead_fp8_count", table["gpu"]["k_overhead_fp8_count"], "count",
                       load_sources(), allow_zero=True)
    return KOverhead(q.value, q.provenance)


def gemm_k_overhead(precision: str) -> float:
    """``K0`` (elements of K) of a GPU GEMM at ``precision``: each output tile costs ``K + K0`` slices'
    time for ``K`` slices' work. The file gives it for fp8; a tile's fill and epilogue take the same time
    at any precision while a bf16 slice of K takes twice an fp8 one, so bf16 (and fp16) take ``K0/2``.
    500 fp8 elements (DeepGEMM's H800 table) are 250 bf16 ones."""
    if precision not in ("bf16", "fp16", "fp8"):
        raise ValueError(f"precision must be 'bf16', 'fp16' or 'fp8', got {precision!r}")
    k0 = gemm_k_overhead_record().k0_fp8
    return k0 if precision == "fp8" else k0 / 2.0


# Where a chip has no published measurement, borrow the closest measured sibling's fraction (same
# vendor and matrix-unit design); the estimate's assumptions say so. GB300 (Blackwell Ultra: the same dense
# BF16 and FP8 peaks as GB200) borrows GB200's. TPUs: v5e, v6e and TPU7x are measured; no GEMM timing was found
# for v4 or v5p, which borrow v5e's (128x128 MXUs, as theirs), nor for the announced TPU 8t and 8i, which
# borrow TPU7x's (256x256 MXUs, the generation before them).
_BORROW = {"h200": "h100", "h800": "h100", "gb200": "b200", "b200": "gb200", "gb300": "gb200", "rubin": "b200",
           "tpu-v4": "tpu-v5e", "tpu-v5p": "tpu-v5e", "tpu-8t": "tpu7", "tpu-8i": "tpu7"}


def measured_efficiency(chip: Chip | str, kind: str = "bf16") -> tuple[MeasuredEfficiency, str]:
    """The measured large-GEMM (or attention) fraction of peak for ``chip``, and a sentence saying
    where it comes from (measured on this chip, or borrowed from a sibling). A chip a user registered
    under a measured id with a peak below the measured TFLOP/s takes the fraction measured on the
    package's part, with a warning (as a what-if variant does)."""
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
    published table (``data/attention_efficiency.toml``), bf16, at ``head_dim`` (query/key; value
    ``head_dim_v``) and ``causal``. ``label`` is the table's section name."""

    chip_id: str
    head_dim: int
    causal: bool
    seq_lens: tuple[int, ...]
    flop_s: tuple[float, ...]
    provenance: Provenance
    label: str = ""
    head_dim_v: int = 0


_CURVE_KEYS = {"chip", "head_dim", "head_dim_v", "causal"}


def _parse_curve(path, label: str, e: Mapping, sources) -> AttentionCurve | None:
    points = sorted((int(k[1:-len("_tflop_s")]), k) for k in e if re.fullmatch(r"s\d+_tflop_s", k))
    check_keys(path, label, e, required={"head_dim", "causal"}, optional=(_CURVE_KEYS | {k for _, k in points}))
    if not points:
        raise CatalogueError(path, label, None, "a table needs at least one sequence length (s8192_tflop_s, ...)")
    for key in ("head_dim", "head_dim_v"):
        if key in e and not (isinstance(e[key], int) and not isinstance(e[key], bool) and e[key] > 0):
            raise CatalogueError(path, label, key, f"must be a positive whole number, got {e[key]!r}")
    if not isinstance(e["causal"], bool):
        raise CatalogueError(path, label, "causal", f"must be true or false, got {e['causal']!r}")
    if "chip" in e and not isinstance(e["chip"], str):
        raise CatalogueError(path, label, "chip", f"must be a chip name, got {e['chip']!r}")
    try:
        chip = get_chip(e.get("chip", label))
    except (KeyError, ValueError) as err:
        raise CatalogueError(path, label, "chip", f"unknown chip: {err}") from None
    qs = [parse_quantity(path, label, k, e[k], "tflop_s", sources) for _, k in points]
    for (_, k), q in zip(points, qs):
        if q.value > chip.peak_flop_s("bf16"):
            if drops_measurement(path, chip, f"a bf16 peak of {chip.peak_flop_s('bf16') / 1e12:.0f} TFLOP/s, below "
                                             f"the {q.value / 1e12:.0f} TFLOP/s attention measured on {chip.id!r}"):
                return None   # a registered chip slower than the measured part: no curve for it
            raise CatalogueError(path, label, k, f"{q.value / 1e12:.0f} TFLOP/s is above the chip's bf16 peak")
    return AttentionCurve(chip.id, e["head_dim"], e["causal"], tuple(s for s, _ in points),
                          tuple(q.value for q in qs), qs[0].provenance, label, e.get("head_dim_v", e["head_dim"]))


def load_attention_curves(path) -> Mapping[str, tuple[AttentionCurve, ...]]:
    """Every table of an attention-efficiency file, grouped by chip id, sorted by (causal, head dim).
    A malformed table raises :class:`CatalogueError` naming the file, the table and the key."""
    sources = load_sources()
    out: dict[str, list[AttentionCurve]] = {}
    for label, e in read_table_file(path).items():
        cv = _parse_curve(path, label, e, sources)
        if cv is None:
            continue
        same = [c for c in out.get(cv.chip_id, []) if (c.causal, c.head_dim) == (cv.causal, cv.head_dim)]
        if same:
            raise CatalogueError(path, label, "head_dim", f"a second {'causal' if cv.causal else 'full-mask'} "
                                                          f"head-dim {cv.head_dim} table for {cv.chip_id} "
                                                          f"(first: [{same[0].label}])")
        out.setdefault(cv.chip_id, []).append(cv)
    return MappingProxyType({k: tuple(sorted(v, key=lambda c: (c.causal, c.head_dim))) for k, v in out.items()})


@catalogue_cache(maxsize=1)
def _attention_curves() -> Mapping[str, tuple[AttentionCurve, ...]]:
    return load_attention_curves(DATA_DIR / "attention_efficiency.toml")


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


def _curve_fraction(cv: AttentionCurve, seq_len: float) -> float:
    return interpolate_log(cv.seq_lens, cv.flop_s, seq_len) / get_chip(cv.chip_id).peak_flop_s("bf16")


def _describe(cv: AttentionCurve) -> str:
    hd = f"{cv.head_dim}" if cv.head_dim_v == cv.head_dim else f"{cv.head_dim}/{cv.head_dim_v} (q,k/v)"
    span = f"{cv.seq_lens[0]}-{cv.seq_lens[-1]}" if len(cv.seq_lens) > 1 else f"one point at {cv.seq_lens[0]}"
    kind = "DERIVED " if cv.provenance.source.kind == "derived" else ""
    return (f"{'causal' if cv.causal else 'full-mask'} head dim {hd} {kind}fwd+bwd table [{cv.label}] {span}: "
            f"{cv.provenance.source.title}")


def _by_head_dim(curves, seq_len: float, head_dim: float) -> tuple[float, str]:
    """Fraction of peak from tables of one chip and mask (sorted by head dim): the exact head dim, else
    linear in log(head_dim) between the two tables around it, else the nearest one (clamped)."""
    dims = [c.head_dim for c in curves]
    if head_dim in dims:
        cv = curves[dims.index(head_dim)]
        return _curve_fraction(cv, seq_len), f"head dim {head_dim} in the tables; {_describe(cv)}"
    if head_dim < dims[0] or head_dim > dims[-1]:
        cv = curves[0] if head_dim < dims[0] else curves[-1]
        return (_curve_fraction(cv, seq_len),
                f"head dim {head_dim:g} outside the tables' {dims}: nearest, {cv.head_dim}, used; {_describe(cv)}")
    hi = next(i for i, d in enumerate(dims) if d > head_dim)
    lo_c, hi_c = curves[hi - 1], curves[hi]
    w = math.log(head_dim / lo_c.head_dim) / math.log(hi_c.head_dim / lo_c.head_dim)
    f = (1 - w) * _curve_fraction(lo_c, seq_len) + w * _curve_fraction(hi_c, seq_len)
    return f, (f"head dim {head_dim:g} log-linear between the tables' {lo_c.head_dim} and {hi_c.head_dim} "
               f"(weight {w:.2f}); {_describe(lo_c)}; {_describe(hi_c)}")


def attention_efficiency(chip: Chip | str, seq_len: int | None = None, head_dim: float = 128,
                         causal: bool = True) -> tuple[float, str]:
    """FlashAttention forward+backward fraction of the bf16 peak for ``chip`` at ``seq_len`` tokens and
    query/key head dimension ``head_dim``, and a sentence saying where it comes from.

    With tables for the chip (or a sibling it borrows from): those with the requested mask (``causal``;
    if the chip has none, the other mask, said so), ``TFLOP/s(seq_len) / peak_bf16(table's chip)``,
    log-linear in ``seq_len`` and clamped at each table's ends, then linear in ``log(head_dim)`` between
    the two measured head dims around ``head_dim`` (the nearest one outside them). E.g. FA2 on A100,
    causal, head dim 128: 155/312 = 50 % at 2K, 189/312 = 61 % from 8K on. Without a table, or with
    ``seq_len`` None, :func:`measured_efficiency`'s single figure (whatever the head dim)."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    if seq_len is not None:
        if not head_dim > 0:
            raise ValueError(f"head_dim must be positive, got {head_dim!r}")
        tables, cid, seen = _attention_curves(), base_id(c), []
        while cid is not None and cid not in seen:
            seen.append(cid)
            if cid in tables:
                same = [cv for cv in tables[cid] if cv.causal == causal]
                mask = "" if same else (f" (no {'causal' if causal else 'full-mask'} table for {cid}: the "
                                        f"{'full-mask' if causal else 'causal'} one is used)")
                frac, why = _by_head_dim(same or list(tables[cid]), seq_len, head_dim)
                where = "table for this chip" if cid == base_id(c) else f"borrowed from {cid}"
                span = [s for cv in (same or tables[cid]) for s in cv.seq_lens]
                clamp = " (clamped at the table's end)" if not min(span) <= seq_len <= max(span) else ""
                return frac, (f"attention efficiency {frac:.0%} of peak at {seq_len:,} tokens{clamp}{mask}, "
                              f"{where}, log-linear in the sequence length; {why}")
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
