"""Measured mechanism terms other than GEMM efficiency: achievable HBM bandwidth
(``data/hbm_bandwidth.toml``), compute slowdown under a concurrent collective
(``data/overlap_interference.toml``) and MoE expert load imbalance (``data/moe_balance.toml``).

Each comes from a published measurement of that one mechanism (BabelStream tables, an overlap
characterisation paper, a router paper), never from the training or inference runs the models are checked
against. A chip without its own measurement borrows a sibling's, or a documented default, and says so.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import statistics
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from .catalogue import catalogue_cache, drops_measurement
from .chips import Chip, base_id, get_chip
from .loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    check_keys,
    load_sources,
    lookup_source,
    parse_quantity,
    read_table_file,
)

# -- achievable HBM bandwidth -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredBandwidth:
    """HBM bandwidth a STREAM-like kernel reaches on ``chip_id``, as a fraction of the catalogue peak.

    ``measured_bytes_per_s`` is the published figure for a measured chip; for a borrowed or default one it
    is ``fraction`` x this chip's catalogue peak. ``provenance`` is None for the default; ``borrowed_from``
    names the sibling whose fraction is used (None when measured on this chip or for the default)."""

    chip_id: str
    fraction: float
    measured_bytes_per_s: float
    provenance: Provenance | None
    borrowed_from: str | None = None
    note: str = ""


# A chip without a measurement uses the closest measured sibling's fraction (same vendor and memory
# generation). Chains are followed (gb200 -> b200 -> h200).
HBM_BORROW: Mapping[str, str] = MappingProxyType(
    {"h800": "h100", "b200": "h200", "gb200": "b200"})


@catalogue_cache(maxsize=4)
def load_hbm_bandwidth(path: Path | str | None = None) -> Mapping[str, MeasuredBandwidth]:
    """Read ``hbm_bandwidth.toml`` (or ``path``): chip id -> :class:`MeasuredBandwidth`, checking that
    each figure is at most the chip's catalogue peak.

    A figure above the peak of a package chip is an error in the data (a :class:`CatalogueError`). Above
    the peak of a chip a user registered under that id (``ab.register(chip, replace=True)`` with a lower
    ``hbm_bw_bytes_per_s``), the measurement is of another part: it is dropped for that chip, with a
    warning naming the chip and both figures, and the chip is treated as unmeasured (a sibling's
    fraction or :func:`default_hbm_fraction`). Read again after every registry change."""
    path = Path(path) if path is not None else DATA_DIR / "hbm_bandwidth.toml"
    sources = load_sources()
    out = {}
    for cid, e in read_table_file(path).items():
        check_keys(path, cid, e, required={"hbm_achievable_tb_s"}, optional=set())
        q = parse_quantity(path, cid, "hbm_achievable_tb_s", e["hbm_achievable_tb_s"], "tb_s", sources)
        try:
            chip = get_chip(cid)
        except KeyError:
            raise CatalogueError(path, cid, None, "not a chip id of chips.toml") from None
        peak = chip.hbm_bw_bytes_per_s
        if peak is None:
            raise CatalogueError(path, cid, "hbm_achievable_tb_s", f"{chip.name} has no HBM bandwidth in chips.toml")
        frac = q.value / peak
        if frac > 1 and drops_measurement(path, chip, f"{peak / 1e12:.2f} TB/s of HBM bandwidth, below the "
                                                      f"{q.value / 1e12:.2f} TB/s measured on {chip.id!r}"):
            continue
        if not 0 < frac <= 1:
            raise CatalogueError(path, cid, "hbm_achievable_tb_s", f"{q.value / 1e12:.2f} TB/s is above the chip's "
                                 f"peak {peak / 1e12:.2f} TB/s; check the figure or the peak")
        out[chip.id] = MeasuredBandwidth(chip.id, frac, q.value, q.provenance, None, q.provenance.note)
    return MappingProxyType(out)


def default_hbm_fraction() -> float:
    """The fraction used for a chip with no measured sibling: the mean of every measured chip's fraction
    (A100 0.83, H100 0.89, H200 0.86, MI300X 0.77 -> 0.84). An assumption, stated as such."""
    return statistics.fmean(m.fraction for m in load_hbm_bandwidth().values())


def achievable_hbm_fraction(chip: Chip | str) -> MeasuredBandwidth:
    """Achievable HBM bandwidth of ``chip`` as a fraction of its catalogue peak, from a STREAM-like
    microbenchmark: ``fraction = measured / hbm_bw_bytes_per_s`` (H100: BabelStream Triad 2.97 / 3.35 TB/s
    = 0.887). A chip without a measurement borrows a sibling's fraction (:data:`HBM_BORROW`); with no sibling,
    :func:`default_hbm_fraction` with ``provenance`` None. A ValueError if the chip has no HBM."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    if c.hbm_bw_bytes_per_s is None:
        raise ValueError(f"{c.name} has no off-chip HBM bandwidth; achievable_hbm_fraction does not apply")
    table, base, seen = load_hbm_bandwidth(), base_id(c), []
    cid: str | None = base
    while cid is not None and cid not in seen:
        seen.append(cid)
        if cid in table:
            m = table[cid]
            if cid == base and c.hbm_bw_bytes_per_s == get_chip(cid).hbm_bw_bytes_per_s:
                return dataclasses.replace(m, chip_id=c.id)
            note = (f"no measurement on {c.name}: {m.fraction:.0%} of peak borrowed from {cid} ({m.note})"
                    if cid != base else f"{m.fraction:.0%} of peak measured on {cid}, applied to this variant's peak")
            return MeasuredBandwidth(c.id, m.fraction, m.fraction * c.hbm_bw_bytes_per_s, m.provenance,
                                     cid if cid != base else None, note)
        cid = HBM_BORROW.get(cid)
    f = default_hbm_fraction()
    return MeasuredBandwidth(c.id, f, f * c.hbm_bw_bytes_per_s, None, None,
                             f"ASSUMED: no STREAM measurement on {c.name} or a sibling; {f:.0%} of peak is the mean "
                             f"of the measured chips ({', '.join(sorted(table))}) in data/hbm_bandwidth.toml")


# -- compute slowdown under a concurrent collective ----------------------------------------------------------


@dataclass(frozen=True)
class OverlapMeasurement:
    """One published measurement of compute slowed by a concurrent collective (``overlap_interference.toml``)."""

    id: str
    chips: tuple[str, ...]
    vendors: tuple[str, ...]
    case: str                      # "typical" or "worst-case"
    conditions: str
    slowdown: float                # compute time overlapped / alone - 1
    provenance: Provenance
    comm_ctas: int | None = None   # CTAs the collective kernel occupied, where reported


OVERLAP_CASES = ("typical", "worst-case")


def _str_list(path, entry, key, raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw or not all(isinstance(x, str) for x in raw):
        raise CatalogueError(path, entry, key, "must be a non-empty list of strings")
    return tuple(raw)


@catalogue_cache(maxsize=4)
def load_overlap_interference(path: Path | str | None = None) -> tuple[OverlapMeasurement, ...]:
    """Read ``overlap_interference.toml`` (or ``path``), in file order."""
    path = Path(path) if path is not None else DATA_DIR / "overlap_interference.toml"
    sources = load_sources()
    out = []
    for mid, e in read_table_file(path).items():
        check_keys(path, mid, e, required={"chips", "vendors", "case", "conditions", "compute_slowdown_fraction"},
                   optional={"comm_ctas_count"})
        chips = _str_list(path, mid, "chips", e["chips"])
        for cid in chips:
            try:
                get_chip(cid)
            except KeyError:
                raise CatalogueError(path, mid, "chips", f"{cid!r} is not a chip id of chips.toml") from None
        if e["case"] not in OVERLAP_CASES:
            raise CatalogueError(path, mid, "case", f"must be one of {OVERLAP_CASES}, got {e['case']!r}")
        q = parse_quantity(path, mid, "compute_slowdown_fraction", e["compute_slowdown_fraction"], "fraction",
                           sources, allow_zero=True)
        ctas = None
        if "comm_ctas_count" in e:
            ctas = int(parse_quantity(path, mid, "comm_ctas_count", e["comm_ctas_count"], "count", sources).value)
        out.append(OverlapMeasurement(mid, chips, _str_list(path, mid, "vendors", e["vendors"]), e["case"],
                                      str(e["conditions"]), q.value, q.provenance, ctas))
    return tuple(out)


def overlap_slowdown(chip: Chip | str, case: str = "typical") -> tuple[float, Provenance]:
    """Fractional slowdown of compute while a collective runs concurrently on ``chip``:
    ``t_compute_overlapped = (1 + fraction) · t_compute_alone`` (Lee et al. 2025: 0.189 on average over
    A100/H100/MI250/MI210). Chosen in order: a ``case`` measurement on this chip, one on the chip's vendor,
    then the first ``case`` measurement of the file (the stated fallback). The returned provenance's note
    starts with which of the three it is."""
    if case not in OVERLAP_CASES:
        raise ValueError(f"case must be one of {OVERLAP_CASES}, got {case!r}")
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    ms = [m for m in load_overlap_interference() if m.case == case]
    base = base_id(c)
    for rule, pick in (("measured on this chip", lambda m: base in m.chips),
                       (f"no measurement on {c.name}; measured on other {c.vendor} GPUs", lambda m: c.vendor in m.vendors),
                       (f"FALLBACK: no measurement on {c.name} or another {c.vendor} chip; GPU measurement used",
                        lambda m: True)):
        hit = next((m for m in ms if pick(m)), None)
        if hit is not None:
            prov = dataclasses.replace(hit.provenance, note=f"{rule} ({hit.id}): {hit.provenance.note}")
            return hit.slowdown, prov
    raise ValueError(f"no {case!r} measurement in data/overlap_interference.toml")


# -- MoE expert load imbalance ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpertImbalance:
    """Busiest expert's load over the mean load for one balancing method (``moe_balance.toml``)."""

    kind: str
    max_over_mean: float
    granularity: str               # "global" or "batch"
    model: str
    provenance: Provenance


GRANULARITIES = ("global", "batch")


@functools.lru_cache(maxsize=4)
def load_moe_balance(path: Path | str | None = None) -> Mapping[str, ExpertImbalance]:
    """Read ``moe_balance.toml`` (or ``path``): balancing method -> :class:`ExpertImbalance`; every ratio >= 1."""
    path = Path(path) if path is not None else DATA_DIR / "moe_balance.toml"
    sources = load_sources()
    out = {}
    for kind, e in read_table_file(path).items():
        check_keys(path, kind, e, required={"granularity", "model", "max_over_mean_ratio"}, optional=set())
        if e["granularity"] not in GRANULARITIES:
            raise CatalogueError(path, kind, "granularity", f"must be one of {GRANULARITIES}, got {e['granularity']!r}")
        q = parse_quantity(path, kind, "max_over_mean_ratio", e["max_over_mean_ratio"], "ratio", sources)
        if q.value < 1:
            raise CatalogueError(path, kind, "max_over_mean_ratio", f"max / mean is at least 1, got {q.value}")
        out[kind] = ExpertImbalance(kind, q.value, e["granularity"], str(e["model"]), q.provenance)
    return MappingProxyType(out)


def expert_load_imbalance(kind: str = "aux_loss_free") -> tuple[float, Provenance]:
    """Measured ``max_e load_e / mean load`` of a trained router balanced by ``kind`` (an entry of
    ``data/moe_balance.toml``: "aux_loss_free" 1.04, "aux_loss" 1.52 in Wang et al. 2024, Table 2, 3B model).
    These are validation-set (global) figures: one training batch on one device is less balanced."""
    table = load_moe_balance()
    if kind not in table:
        raise ValueError(f"kind must be one of {tuple(table)}, got {kind!r}")
    m = table[kind]
    return m.max_over_mean, m.provenance


# -- small-message all-reduce latency ------------------------------------------------------------------------


@dataclass(frozen=True)
class AllReduceLatency:
    """Time of one small all-reduce inside a node (``allreduce_latency.toml``): the latency floor that a
    tensor-parallel layer pays twice, whatever its bytes. ``latency_s = S·2(n-1)/n / busbw`` (nccl-tests'
    definition of bus bandwidth, inverted) at the measured size ``S`` on ``n_gpus``."""

    chip_id: str
    latency_s: float
    n_gpus: int
    message_bytes: int
    provenance: Provenance
    borrowed_from: str | None = None
    curve_bytes: tuple[float, ...] = ()      # a measured busbw table's sizes (bytes), increasing; () if none
    curve_s: tuple[float, ...] = ()          # ... and the all-reduce time at each (s)
    curve_provenance: Provenance | None = None

    def line_at(self, message_bytes: float) -> tuple[float, float]:
        """The measured all-reduce time near ``message_bytes`` on ``n_gpus`` as a line ``t = a + k·S``:
        the segment of the measured curve (``curve_bytes``, ``curve_s``) that holds ``S``, (``t_0``, 0) below
        its first size, its last segment extended past its last. ``(a, k)`` in (s, s/byte). MI300X, 4 MiB on
        8 GPUs: the 4 MiB and 8 MiB points (88.9 and 111.6 µs) give k = 22.7 µs / 4 MiB = 5.40 ps/B, a = 88.9 - 22.7 = 66.3 µs."""
        if not self.curve_bytes:
            raise ValueError(f"{self.chip_id}: no measured all-reduce curve in allreduce_latency.toml")
        xs, ts = self.curve_bytes, self.curve_s
        if message_bytes < xs[0]:
            return ts[0], 0.0
        i = min(bisect.bisect_right(xs, message_bytes), len(xs) - 1)
        k = (ts[i] - ts[i - 1]) / (xs[i] - xs[i - 1])
        return ts[i - 1] - k * xs[i - 1], k


# a chip without a measurement borrows a sibling's (same NVLink generation), as for HBM
ALLREDUCE_BORROW: Mapping[str, str] = MappingProxyType({"h800": "h100", "b200": "h200", "gb200": "b200"})


@catalogue_cache(maxsize=4)
def load_allreduce_latency(path: Path | str | None = None) -> Mapping[str, AllReduceLatency]:
    """Read ``allreduce_latency.toml`` (or ``path``): chip id -> :class:`AllReduceLatency`."""
    path = Path(path) if path is not None else DATA_DIR / "allreduce_latency.toml"
    sources = load_sources()
    out = {}
    for cid, e in read_table_file(path).items():
        check_keys(path, cid, e, required={"n_gpus", "message_bytes", "busbw_gb_s"}, optional={"busbw_curve"})
        try:
            chip = get_chip(cid)
        except KeyError:
            raise CatalogueError(path, cid, None, "not a chip id of chips.toml") from None
        n, S = e["n_gpus"], e["message_bytes"]
        for key, v in (("n_gpus", n), ("message_bytes", S)):
            if not isinstance(v, int) or isinstance(v, bool) or v < (2 if key == "n_gpus" else 1):
                raise CatalogueError(path, cid, key, "must be a whole number (n_gpus at least 2)")
        q = parse_quantity(path, cid, "busbw_gb_s", e["busbw_gb_s"], "gb_s", sources)
        xs, ts, cp = _busbw_curve(path, cid, e.get("busbw_curve"), n, sources)
        out[chip.id] = AllReduceLatency(chip.id, S * 2 * (n - 1) / n / q.value, n, S, q.provenance, None, xs, ts, cp)
    return MappingProxyType(out)


def _busbw_curve(path, cid, raw, n: int, sources) -> tuple[tuple, tuple, Provenance | None]:
    """``busbw_curve = { sizes_bytes = [...], gb_s = [...], src, date, note }``: (sizes, times in s, provenance);
    each time ``S·2(n-1)/n / busbw``, nccl-tests' (and rccl-tests') definition of bus bandwidth, inverted, then
    made non-decreasing in the size."""
    if raw is None:
        return (), (), None
    key = "busbw_curve"
    if not isinstance(raw, dict):
        raise CatalogueError(path, cid, key, "must be a table { sizes_bytes, gb_s, src, date, note }")
    check_keys(path, f"{cid}.{key}", raw, required={"sizes_bytes", "gb_s", "src", "date"}, optional={"note"})
    xs, bw = raw["sizes_bytes"], raw["gb_s"]
    ok = (isinstance(xs, list) and isinstance(bw, list) and len(xs) == len(bw) >= 2
          and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in xs + bw)
          and all(a < b for a, b in zip(xs, xs[1:])))
    if not ok:
        raise CatalogueError(path, cid, key, "sizes_bytes and gb_s: lists of one length (at least 2) of "
                             "positive numbers, sizes increasing")
    src = lookup_source(path, cid, key, raw["src"], sources)
    # a larger message never takes less time: each time is the largest measured at its size or below (the
    # latency floor's noise, 51.2 µs at 2 KB then 47.8 at 4 KB on MI300X, would give a negative bytes term)
    ts = tuple(itertools.accumulate((S * 2 * (n - 1) / n / (b * 1e9) for S, b in zip(xs, bw)), max))
    return tuple(float(S) for S in xs), ts, Provenance(src, str(raw["date"]), str(raw.get("note", "")))


def allreduce_latency(chip: Chip | str) -> AllReduceLatency | None:
    """Measured small-message all-reduce time on ``chip``'s scale-up network (H100: 8 KB at 0.53 GB/s busbw
    on 8 GPUs = 8,192·1.75 / 0.53e9 = 27 µs), a sibling's (``borrowed_from`` set), or None when neither
    was measured (the caller keeps its hop-latency formula and says so)."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    table, cid, seen = load_allreduce_latency(), base_id(c), []
    while cid is not None and cid not in seen:
        seen.append(cid)
        if cid in table:
            m = table[cid]
            return m if cid == base_id(c) else dataclasses.replace(m, chip_id=c.id, borrowed_from=cid)
        cid = ALLREDUCE_BORROW.get(cid)
    return None


# -- kernel launch and host overhead without CUDA graphs -----------------------------------------------------


@dataclass(frozen=True)
class LaunchOverhead:
    """Host and launch time per layer a decode step loses when its kernels are launched one by one
    instead of replayed as one CUDA graph: ``(eager - graph) / n_layers`` (``launch_overhead.toml``)."""

    id: str
    per_layer_s: float
    eager_s: float
    graph_s: float
    n_layers: int
    provenance: Provenance


@functools.lru_cache(maxsize=4)
def load_launch_overhead(path: Path | str | None = None) -> tuple[LaunchOverhead, ...]:
    """Read ``launch_overhead.toml`` (or ``path``), in file order; eager must be slower than graph."""
    path = Path(path) if path is not None else DATA_DIR / "launch_overhead.toml"
    sources = load_sources()
    out = []
    for mid, e in read_table_file(path).items():
        check_keys(path, mid, e, required={"n_layers", "eager_ms", "graph_ms"}, optional=set())
        L = e["n_layers"]
        if not isinstance(L, int) or isinstance(L, bool) or L < 1:
            raise CatalogueError(path, mid, "n_layers", "must be a whole number of layers")
        eager = parse_quantity(path, mid, "eager_ms", e["eager_ms"], "ms", sources)
        graph = parse_quantity(path, mid, "graph_ms", e["graph_ms"], "ms", sources)
        if eager.value <= graph.value:
            raise CatalogueError(path, mid, "eager_ms", "the eager time must exceed the graph time")
        out.append(LaunchOverhead(mid, (eager.value - graph.value) / L, eager.value, graph.value, L,
                                  eager.provenance))
    return tuple(out)


def launch_overhead_per_layer(cuda_graphs: bool = True) -> tuple[float, LaunchOverhead]:
    """Seconds a decode step loses per layer to host work and kernel launches: 0 with CUDA graphs (no
    published figure isolates what a replayed graph still loses), else the first measurement of
    ``launch_overhead.toml`` (metaseq, 175B on 8 × A100: (95 - 66) ms / 96 layers = 0.30 ms)."""
    m = load_launch_overhead()[0]
    return (0.0 if cuda_graphs else m.per_layer_s), m


# -- elementwise kernels at their measured bandwidth ---------------------------------------------------------


@dataclass(frozen=True)
class ElementwiseBandwidth:
    """One published timing of an elementwise kernel (``elementwise_bandwidth.toml``): its achieved bandwidth
    ``bytes_moved / time_s`` and that as a fraction of the chip's STREAM-like bandwidth
    (:func:`achievable_hbm_fraction`'s ``measured_bytes_per_s``)."""

    id: str
    chip_id: str
    kernel: str
    provider: str
    tokens: int
    hidden: int
    bytes_moved: float
    time_s: float
    achieved_bytes_per_s: float
    stream_fraction: float
    provenance: Provenance


@catalogue_cache(maxsize=4)
def load_elementwise_bandwidth(path: Path | str | None = None) -> tuple[ElementwiseBandwidth, ...]:
    """Read ``elementwise_bandwidth.toml`` (or ``path``), in file order; the chip must have a STREAM
    measurement of its own in ``hbm_bandwidth.toml``, and the fraction is against that file's figure (the part
    both were measured on, even where a user's chip registered under that id has dropped it for its own)."""
    path = Path(path) if path is not None else DATA_DIR / "elementwise_bandwidth.toml"
    sources, hbm_path = load_sources(), DATA_DIR / "hbm_bandwidth.toml"
    stream = {cid: parse_quantity(hbm_path, cid, "hbm_achievable_tb_s", e["hbm_achievable_tb_s"], "tb_s",
                                  sources).value for cid, e in read_table_file(hbm_path).items()}
    out = []
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required={"chip", "kernel", "provider", "tokens", "hidden", "bytes_per_element",
                                           "time_ms"}, optional=set())
        for k in ("tokens", "hidden", "bytes_per_element"):
            if not isinstance(e[k], int) or isinstance(e[k], bool) or e[k] < 1:
                raise CatalogueError(path, rid, k, "must be a positive whole number")
        if e["chip"] not in stream:
            raise CatalogueError(path, rid, "chip", f"{e['chip']!r} has no STREAM measurement in hbm_bandwidth.toml")
        t = parse_quantity(path, rid, "time_ms", e["time_ms"], "ms", sources)
        nbytes = float(e["bytes_per_element"] * e["tokens"] * e["hidden"])
        bw = nbytes / t.value
        out.append(ElementwiseBandwidth(rid, e["chip"], e["kernel"], e["provider"], e["tokens"], e["hidden"], nbytes,
                                        t.value, bw, bw / stream[e["chip"]], t.provenance))
    return tuple(out)


@dataclass(frozen=True)
class ElementwiseFraction:
    """The fraction of the STREAM-like bandwidth a chip's elementwise kernels reach
    (:func:`elementwise_stream_fraction`): the rows it is the median of, the chip they were measured on
    (``measured_on``, another chip when borrowed) and a note in words."""

    chip_id: str
    fraction: float
    measured_on: tuple[str, ...]
    rows: tuple[ElementwiseBandwidth, ...]
    note: str


def elementwise_stream_fraction(chip: Chip | str) -> ElementwiseFraction:
    """Achieved bandwidth of the elementwise kernels a training framework runs on ``chip``, as a fraction of
    its STREAM-like bandwidth: the median over that chip's rows of ``elementwise_bandwidth.toml``
    (``bytes / time / STREAM``). H100 (Liger PR 1257: LigerMegatronRMSNorm and torch.nn.RMSNorm forward,
    4,096 tokens at hidden 4,096 / 8,192 / 16,384; 2.31, 2.63, 2.83 and 2.03, 1.81, 1.80 TB/s over BabelStream's
    2.97): median (2.034 + 2.314)/2 = 2.174 TB/s, 0.732.

    FALLBACK: a chip with no row of its own (A100, H200, MI300X, TPUs, …) borrows the median over every row of
    the file (today H100's rows only, so H100's 0.732): a kernel's shortfall from STREAM (reductions across a
    row, a read and a write per element at short rows) is assumed to be a property of the kernels, not of
    the chip. On a TPU, whose compiler fuses much elementwise work into its matrix kernels, a GPU kernel's
    figure is a stand-in until a TPU measurement exists. The note says which chips it was measured on."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    rows = load_elementwise_bandwidth()
    if not rows:
        raise ValueError("elementwise_bandwidth.toml has no rows; elementwise_stream_fraction needs one")
    own = tuple(r for r in rows if r.chip_id == base_id(c))
    use = own or rows
    f = statistics.median(r.stream_fraction for r in use)
    on = tuple(sorted({r.chip_id for r in use}))
    kernels = ", ".join(sorted({f"{r.provider} {r.kernel}" for r in use}))
    note = (f"{c.name}: elementwise kernels at {f:.0%} of the STREAM bandwidth, the median of {len(use)} "
            f"published timings ({kernels}) " + ("on this chip" if own else
                                                f"BORROWED from {', '.join(on)} (no measurement on this chip)"))
    return ElementwiseFraction(c.id, f, on, use, note)
