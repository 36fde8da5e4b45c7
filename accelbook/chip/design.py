"""Designing a chip: split one die's area and power among matrix units, SRAM, HBM and I/O.

A **design** spends a die-area budget ``A`` (mm², default 814 = H100's die) on

- matrix units: ``matrix_mm2 · d_mm`` FLOP/s at the nominal clock (bf16 dense);
- on-chip SRAM: ``sram_mm2 · d_sram`` bytes, read at ``sram_mm2 · b_sram`` bytes/s;
- ``n`` HBM stacks: each needs ``phy`` mm² of PHY/controller and ``shoreline`` mm of die edge,
  and gives a stack's capacity and bandwidth;
- chip-to-chip I/O: ``io_mm2`` mm² gives ``io_mm2 / a_io`` bytes/s (and uses die edge);
- a fixed uncore area.

It **fits** when the areas sum to at most ``A`` and the HBM PHYs plus the I/O fit on the die's
edge, ``4·sqrt(area)`` (a square die). ``why_not`` says which limit a design breaks.

**Power** (budget ``P``, default 700 W = H100 TDP, HBM included): static ``s_w · area`` + I/O at
full rate (links stay up) + HBM and SRAM traffic at their energy per byte + the matrix units.
At relative clock ``s ≤ 1`` the matrix units' energy per FLOP is ``w · max(s, s_v)^k`` (``k`` the
energy-clock exponent, ``s_v`` the voltage floor). This is **dark silicon**: when everything at
full clock would draw more than ``P`` the matrix units are clocked down until the power fits, and
a wider, slower array does the same work for less energy, so extra matrix area still helps, by
less and less.

**A workload** is a unit of work per chip: ``F`` FLOPs, ``M`` bytes streamed from memory, ``R``
bytes resident per chip. The SRAM holds the share ``f = min(1, sram/R)`` of the resident bytes
and so serves that share of the stream (the rest comes from HBM; the two stream in parallel).
Units per second are the roofline ``x = min(C/F, BW_hbm/((1-f)M), BW_sram/(fM))``, lowered until
power ≤ P (clock ``s = xF/C``; the matrix units never idle faster than needed); 0 if ``R`` does
not fit in HBM + SRAM. The binding limit is ``"compute"``, ``"memory bandwidth"``,
``"memory capacity"`` or ``"power"``.

- :class:`Training`: a token of a dense LLM's training step. ``F`` = model FLOPs per token
  (6N + causal attention), ``M`` = weights streamed per microbatch / microbatch tokens + the
  activation traffic, ``R`` = optimizer state sharded over ``shards`` chips + activation
  checkpoints (full recompute) + one layer's working activations. Metric: tokens/s per chip.
- :class:`Decode`: one decode step of a replica on ``n_chips`` chips (weights and KV cache split
  evenly). ``F`` = ``B·(2N_mm + 2L·c·(d_qk+d_v)) / n``, ``M`` = ``R`` = (weights + B·c·KV)/n.
  Metric: tokens/s per chip = ``x·B/n`` (tokens/s per user = ``x``).

Every constant lives in ``data/chipdesign.toml`` with its source; most are round ESTIMATES,
calibrated once so that an H100-like split reproduces the H100 datasheet within ~20%.
Everything is a roofline upper bound: no kernel efficiency, no communication time.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import numpy as np
import pandas as pd

from accelbook.specs.loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    Source,
    check_keys,
    load_sources,
    parse_quantity,
    read_table_file,
)
from accelbook.specs.models import Model, bytes_per_element, get_model

LIMITS = ("compute", "memory bandwidth", "memory capacity", "power")

# (section, key in the TOML) -> (Params field, factor to the field's unit)
_PJ_PER_BIT = 8e-12   # pJ/bit -> J/byte
_KEYS: dict[tuple[str, str], tuple[str, float]] = {
    ("die", "area_mm2"): ("area_mm2", 1.0),
    ("die", "power_w"): ("power_w", 1.0),
    ("die", "uncore_mm2"): ("uncore_mm2", 1.0),
    ("die", "static_w_per_mm2"): ("static_w_per_mm2", 1.0),
    ("matrix", "tflop_s_per_mm2"): ("flop_s_per_mm2", 1e12),
    ("matrix", "w_per_tflop_s"): ("j_per_flop", 1e-12),
    ("matrix", "energy_clock_exponent"): ("energy_clock_exponent", 1.0),
    ("matrix", "voltage_floor_clock"): ("voltage_floor_clock", 1.0),
    ("sram", "mb_per_mm2"): ("sram_bytes_per_mm2", 1e6),
    ("sram", "tb_s_per_mm2"): ("sram_bytes_per_s_per_mm2", 1e12),
    ("sram", "pj_per_bit"): ("sram_j_per_byte", _PJ_PER_BIT),
    ("hbm", "phy_mm2"): ("hbm_phy_mm2", 1.0),
    ("hbm", "stack_gb"): ("hbm_stack_bytes", 1e9),
    ("hbm", "stack_tb_s"): ("hbm_stack_bytes_per_s", 1e12),
    ("hbm", "pj_per_bit"): ("hbm_j_per_byte", _PJ_PER_BIT),
    ("hbm", "shoreline_mm"): ("hbm_shoreline_mm", 1.0),
    ("io", "mm2_per_tb_s"): ("io_mm2_per_byte_s", 1e-12),
    ("io", "pj_per_bit"): ("io_j_per_byte", _PJ_PER_BIT),
    ("io", "shoreline_mm_per_tb_s"): ("io_shoreline_mm_per_byte_s", 1e-12),
    ("training", "state_bytes_per_param"): ("state_bytes_per_param", 1.0),
    ("training", "weight_traffic_bytes_per_param"): ("weight_traffic_bytes_per_param", 1.0),
    ("training", "act_traffic_bytes_per_d"): ("act_traffic_bytes_per_d", 1.0),
    ("training", "act_checkpoint_bytes_per_d"): ("act_checkpoint_bytes_per_d", 1.0),
    ("training", "act_working_bytes_per_d"): ("act_working_bytes_per_d", 1.0),
}
_REFERENCE_KEYS = {
    "h100": {"matrix_mm2", "sram_mm2", "n_hbm_stacks", "io_mm2"},
    "tpu8": {"t_hbm_stacks", "i_hbm_stacks", "t_sram_mb", "i_sram_mb"},
}


@dataclass(frozen=True)
class Params:
    """The technology constants of ``data/chipdesign.toml``: SI, except areas in mm² (named so).

    ``h100_split`` and ``tpu8`` are reference values (the calibration split; Google's choice).
    """

    area_mm2: float
    power_w: float
    uncore_mm2: float
    static_w_per_mm2: float
    flop_s_per_mm2: float
    j_per_flop: float
    energy_clock_exponent: float
    voltage_floor_clock: float
    sram_bytes_per_mm2: float
    sram_bytes_per_s_per_mm2: float
    sram_j_per_byte: float
    hbm_phy_mm2: float
    hbm_stack_bytes: float
    hbm_stack_bytes_per_s: float
    hbm_j_per_byte: float
    hbm_shoreline_mm: float
    io_mm2_per_byte_s: float
    io_j_per_byte: float
    io_shoreline_mm_per_byte_s: float
    state_bytes_per_param: float
    weight_traffic_bytes_per_param: float
    act_traffic_bytes_per_d: float
    act_checkpoint_bytes_per_d: float
    act_working_bytes_per_d: float
    h100_split: Mapping[str, float] = dataclasses.field(default_factory=lambda: MappingProxyType({}), compare=False)
    tpu8: Mapping[str, float] = dataclasses.field(default_factory=lambda: MappingProxyType({}), compare=False)
    provenance: Mapping[str, Provenance] = dataclasses.field(
        default_factory=lambda: MappingProxyType({}), repr=False, compare=False)

    def replace(self, **changes: float) -> "Params":
        """A copy with some constants changed (a what-if: their provenance says so)."""
        names = {f.name for f in dataclasses.fields(self)} - {"h100_split", "tpu8", "provenance"}
        bad = sorted(set(changes) - names)
        if bad:
            raise ValueError(f"Params has no field(s) {bad}; fields: {sorted(names)}")
        for k, v in changes.items():
            _positive(k, v)
        if "voltage_floor_clock" in changes and changes["voltage_floor_clock"] > 1:
            raise ValueError(f"voltage_floor_clock must be in (0, 1], got {changes['voltage_floor_clock']!r}")
        src = Source("what-if:chipdesign", "what-if: chip-design parameter changed by the user", "", "", "what-if")
        prov = dict(self.provenance)
        prov.update({k: Provenance(src, "") for k in changes})
        return dataclasses.replace(self, provenance=MappingProxyType(prov), **{k: float(v) for k, v in changes.items()})


def load_params(path: Path | str, sources: Mapping[str, Source] | None = None) -> Params:
    """Read a chip-design TOML file (schema: ``data/chipdesign.toml``) into :class:`Params`."""
    path = Path(path)
    raw = read_table_file(path)
    sources = sources if sources is not None else load_sources()
    sections: dict[str, set[str]] = {}
    for sec, key in _KEYS:
        sections.setdefault(sec, set()).add(key)
    sections.update(_REFERENCE_KEYS)
    check_keys(path, None, raw, required=set(sections), optional=set())
    kw: dict[str, float] = {}
    prov: dict[str, Provenance] = {}
    refs: dict[str, dict[str, float]] = {s: {} for s in _REFERENCE_KEYS}
    for sec, keys in sections.items():
        entry = raw[sec]
        check_keys(path, sec, entry, required=keys, optional=set())
        for key in sorted(keys):
            q = parse_quantity(path, sec, key, entry[key], "count", sources)
            if sec in refs:
                refs[sec][key] = q.value
                prov[f"{sec}.{key}"] = q.provenance
                continue
            field, factor = _KEYS[(sec, key)]
            kw[field] = q.value * factor
            prov[field] = q.provenance
    if not 0 < kw["voltage_floor_clock"] <= 1:
        raise CatalogueError(path, "matrix", "voltage_floor_clock", f"must be in (0, 1], got {kw['voltage_floor_clock']}")
    if refs["h100"]["n_hbm_stacks"] != int(refs["h100"]["n_hbm_stacks"]):
        raise CatalogueError(path, "h100", "n_hbm_stacks", "must be a whole number")
    return Params(**kw, h100_split=MappingProxyType(refs["h100"]), tpu8=MappingProxyType(refs["tpu8"]),
                  provenance=MappingProxyType(prov))


@functools.lru_cache(maxsize=None)
def _builtin() -> Params:
    return load_params(DATA_DIR / "chipdesign.toml")


def params(**changes: float) -> Params:
    """The package's chip-design constants (``data/chipdesign.toml``), optionally with what-if changes."""
    return _builtin().replace(**changes) if changes else _builtin()


def provenance_table(p: Params | None = None) -> pd.DataFrame:
    """Every constant with its value, source, kind and note."""
    p = p or params()
    rows = []
    for field, prov in p.provenance.items():
        if "." in field:
            sec, key = field.split(".", 1)
            value = (p.h100_split if sec == "h100" else p.tpu8)[key]
        else:
            value = getattr(p, field)
        rows.append({"field": field, "value_si": value, "source": prov.source.id, "kind": prov.kind, "note": prov.note})
    return pd.DataFrame(rows)


# -- checks -----------------------------------------------------------------------------------------
def _positive(name: str, v, allow_zero: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite number {'>= 0' if allow_zero else '> 0'}, got {v!r}")
    return float(v)


def _whole(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    return int(v)


# -- designs ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Design:
    """One split of the die. Areas in mm²; everything else SI. ``full_power_w``: all units at full rate."""

    matrix_mm2: float
    sram_mm2: float
    n_hbm_stacks: int
    io_mm2: float
    uncore_mm2: float
    hbm_phy_mm2: float
    area_mm2: float
    area_budget_mm2: float
    power_budget_w: float
    peak_flop_s: float
    sram_bytes: float
    sram_bw_bytes_per_s: float
    hbm_bytes: float
    hbm_bw_bytes_per_s: float
    io_bytes_per_s: float
    static_power_w: float          # leakage etc. + links, drawn whatever the workload
    full_power_w: float            # static + matrix at nominal clock + HBM, SRAM at full bandwidth
    shoreline_mm: float
    perimeter_mm: float
    params: Params = dataclasses.field(repr=False, compare=False, default=None)

    @property
    def fits(self) -> bool:
        return not self.why_not

    @property
    def why_not(self) -> str:
        """Empty if the design fits; otherwise which budget it breaks, with numbers."""
        why = []
        if self.area_mm2 > self.area_budget_mm2 * (1 + 1e-12):
            why.append(f"area {self.area_mm2:.0f} mm² > budget {self.area_budget_mm2:.0f} mm²")
        if self.shoreline_mm > self.perimeter_mm * (1 + 1e-12):
            why.append(f"HBM PHYs + I/O need {self.shoreline_mm:.0f} mm of die edge, a {self.area_mm2:.0f} mm² die "
                       f"has {self.perimeter_mm:.0f} mm")
        return "; ".join(why)

    @property
    def matrix_tflop_s(self) -> float:
        return self.peak_flop_s / 1e12

    @property
    def sram_mb(self) -> float:
        return self.sram_bytes / 1e6

    @property
    def io_tb_s(self) -> float:
        return self.io_bytes_per_s / 1e12


def _components(p: Params, matrix_mm2, sram_mm2, n_stacks, io_mm2) -> dict:
    """The derived quantities of designs (numpy-broadcast over arrays)."""
    io_bw = io_mm2 / p.io_mm2_per_byte_s
    phy = n_stacks * p.hbm_phy_mm2
    area = matrix_mm2 + sram_mm2 + phy + io_mm2 + p.uncore_mm2
    peak = matrix_mm2 * p.flop_s_per_mm2
    sram_bw = sram_mm2 * p.sram_bytes_per_s_per_mm2
    hbm_bw = n_stacks * p.hbm_stack_bytes_per_s
    static = p.static_w_per_mm2 * area + io_bw * p.io_j_per_byte
    return dict(
        hbm_phy_mm2=phy, area_mm2=area, peak_flop_s=peak, sram_bytes=sram_mm2 * p.sram_bytes_per_mm2,
        sram_bw_bytes_per_s=sram_bw, hbm_bytes=n_stacks * p.hbm_stack_bytes, hbm_bw_bytes_per_s=hbm_bw,
        io_bytes_per_s=io_bw, static_power_w=static,
        full_power_w=static + peak * p.j_per_flop + hbm_bw * p.hbm_j_per_byte + sram_bw * p.sram_j_per_byte,
        shoreline_mm=n_stacks * p.hbm_shoreline_mm + io_bw * p.io_shoreline_mm_per_byte_s,
        perimeter_mm=4.0 * np.sqrt(area),
    )


def design(matrix_mm2: float, sram_mm2: float, n_hbm_stacks: int, io_mm2: float, params: Params | None = None,
           area_mm2: float | None = None, power_w: float | None = None) -> Design:
    """A split of the die (mm² per component, whole HBM stacks) under an area and power budget
    (defaults: ``params.area_mm2``, ``params.power_w``). It may not fit: see ``fits``/``why_not``."""
    p = params if params is not None else _builtin()
    m = _positive("matrix_mm2", matrix_mm2, allow_zero=True)
    s = _positive("sram_mm2", sram_mm2, allow_zero=True)
    n = _whole("n_hbm_stacks", n_hbm_stacks, 0)
    io = _positive("io_mm2", io_mm2, allow_zero=True)
    A = p.area_mm2 if area_mm2 is None else _positive("area_mm2", area_mm2)
    P = p.power_w if power_w is None else _positive("power_w", power_w)
    c = {k: float(v) for k, v in _components(p, m, s, n, io).items()}
    return Design(matrix_mm2=m, sram_mm2=s, n_hbm_stacks=n, io_mm2=io, uncore_mm2=p.uncore_mm2,
                  area_budget_mm2=A, power_budget_w=P, params=p, **c)


def h100_like(params: Params | None = None) -> Design:
    """The calibration split of ``data/chipdesign.toml`` ([h100]) at the default budgets."""
    p = params if params is not None else _builtin()
    h = p.h100_split
    return design(h["matrix_mm2"], h["sram_mm2"], int(h["n_hbm_stacks"]), h["io_mm2"], p)


# -- workloads ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Training:
    """Training a dense LLM: ``shards`` chips share the optimizer state (FSDP x TP x PP);
    each chip works on ``microbatch_tokens`` at a time with full activation recompute."""

    model: str = "llama-3.1-70b"
    seq_len: int = 8192
    microbatch_tokens: int = 8192
    shards: int = 32

    def __post_init__(self):
        _whole("seq_len", self.seq_len, 1)
        _whole("microbatch_tokens", self.microbatch_tokens, 1)
        _whole("shards", self.shards, 1)

    @property
    def name(self) -> str:
        return "training"


@dataclass(frozen=True)
class Decode:
    """Decoding ``batch_size`` sequences at context ``context_len`` on a replica of ``n_chips`` chips."""

    model: str = "llama-3.1-70b"
    batch_size: int = 64
    context_len: int = 8192
    n_chips: int = 8
    precision: str = "bf16"

    def __post_init__(self):
        _whole("batch_size", self.batch_size, 1)
        _whole("context_len", self.context_len, 1)
        _whole("n_chips", self.n_chips, 1)
        bytes_per_element(self.precision)  # raises on an unknown precision

    @property
    def name(self) -> str:
        return "decode"


@dataclass(frozen=True)
class Need:
    """What one unit of a workload asks of one chip (unit: a token for training, a step for decode)."""

    flops: float            # F
    stream_bytes: float     # M, read from memory (HBM or SRAM)
    resident_bytes: float   # R, must fit in HBM + SRAM
    tokens_per_unit: float  # tokens per chip per unit
    unit: str


def _model(m) -> Model:
    return m if isinstance(m, Model) else get_model(m)


def need(workload: Training | Decode, params: Params | None = None) -> Need:
    """F, M, R of one unit of ``workload`` on one chip (module docstring)."""
    p = params if params is not None else _builtin()
    if isinstance(workload, Training):
        m = _model(workload.model)
        N, d, L, T = m.params, m.d_model, m.n_layers, workload.microbatch_tokens
        flops = m.flops_per_token(workload.seq_len, training=True, causal=True)
        stream = p.weight_traffic_bytes_per_param * N / T + p.act_traffic_bytes_per_d * d * L
        resident = (p.state_bytes_per_param * N / workload.shards
                    + p.act_checkpoint_bytes_per_d * d * L * T + p.act_working_bytes_per_d * d * T)
        return Need(flops, stream, resident, 1.0, "token")
    if isinstance(workload, Decode):
        m = _model(workload.model)
        B, c, n = workload.batch_size, workload.context_len, workload.n_chips
        flops = B * m.flops_per_token(c) / n
        resident = (m.weight_bytes(workload.precision) + B * c * m.kv_cache_bytes_per_token(workload.precision)) / n
        return Need(flops, resident, resident, B / n, "step")
    raise ValueError(f"workload must be a Training or Decode, got {type(workload).__name__}")


# -- evaluation (vectorised) --------------------------------------------------------------------------
def _matrix_power(p: Params, x, F, C):
    """Matrix-unit power at x units/s: clock s = xF/C, energy/FLOP = J·max(s, s_v)^k."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(C > 0, x * F / np.where(C > 0, C, 1.0), 0.0)
    return p.j_per_flop * x * F * np.maximum(s, p.voltage_floor_clock) ** p.energy_clock_exponent


def _evaluate(p: Params, comp: dict, nd: Need, power_w) -> dict:
    C = np.asarray(comp["peak_flop_s"], float)
    S, R = comp["sram_bytes"], nd.resident_bytes
    f = np.minimum(1.0, S / R)
    Mh, Ms = (1.0 - f) * nd.stream_bytes, f * nd.stream_bytes
    inf = np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        x_c = C / nd.flops
        x_h = np.where(Mh > 0, comp["hbm_bw_bytes_per_s"] / np.where(Mh > 0, Mh, 1.0), inf)
        x_s = np.where(Ms > 0, comp["sram_bw_bytes_per_s"] / np.where(Ms > 0, Ms, 1.0), inf)
    roofs = np.stack(np.broadcast_arrays(x_c, x_h, x_s))
    x_roof = roofs.min(axis=0)
    roof_limit = np.where(roofs.argmin(axis=0) == 0, "compute", "memory bandwidth")
    e_mem = Mh * p.hbm_j_per_byte + Ms * p.sram_j_per_byte
    static = comp["static_power_w"]

    def power(x):
        return static + x * e_mem + _matrix_power(p, x, nd.flops, C)

    over = power(x_roof) > power_w
    lo, hi = np.zeros_like(x_roof), np.where(over, x_roof, 0.0)
    if np.any(over):   # bisection on the power curve, monotone in x
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            ok = power(mid) <= power_w
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    x = np.where(over, lo, x_roof)
    limit = np.where(over, "power", roof_limit)
    cap_ok = R <= comp["hbm_bytes"] + S
    x = np.where(cap_ok, x, 0.0)
    limit = np.where(cap_ok, limit, "memory capacity")
    with np.errstate(divide="ignore", invalid="ignore"):
        clock = np.where(C > 0, x * nd.flops / np.where(C > 0, C, 1.0), 0.0)
    return dict(units_per_s=x, tokens_per_s_per_chip=x * nd.tokens_per_unit, limit=limit,
                power_w=np.where(x > 0, power(x), static), clock=clock,
                flop_utilisation=clock, sram_share=f)


def evaluate(design: Design, workload: Training | Decode) -> dict:
    """Throughput of ``design`` on ``workload`` at its power budget.

    Returns ``tokens_per_s_per_chip``, ``tokens_per_s_per_user`` (decode; None for training),
    ``limit`` (one of :data:`LIMITS`), ``power_w`` drawn, ``clock`` (matrix clock relative to
    nominal = FLOP utilisation of the peak), ``sram_share`` (share of memory traffic served from
    SRAM), ``fits`` and ``why_not``.
    """
    if not isinstance(design, Design):
        raise ValueError(f"design must be a Design (from chipdesign.design), got {type(design).__name__}")
    p = design.params if design.params is not None else _builtin()
    nd = need(workload, p)
    comp = {k: getattr(design, k) for k in ("peak_flop_s", "sram_bytes", "sram_bw_bytes_per_s", "hbm_bytes",
                                            "hbm_bw_bytes_per_s", "static_power_w")}
    r = _evaluate(p, comp, nd, design.power_budget_w)
    out = {k: (str(v) if k == "limit" else float(v)) for k, v in r.items()}
    out["tokens_per_s_per_user"] = out["units_per_s"] if isinstance(workload, Decode) else None
    out.update(workload=workload.name, fits=design.fits, why_not=design.why_not)
    return out


# -- search -----------------------------------------------------------------------------------------
def _grid(p: Params, area_mm2: float, power_w: float, grid_mm2: float, io_mm2: float):
    """Every fitting split on a grid of ``grid_mm2`` steps (absolute, so a larger budget's grid
    contains a smaller one's), all stack counts the die edge allows."""
    steps = np.arange(0.0, area_mm2 + 1e-9, grid_mm2)
    max_stacks = int(4 * math.sqrt(area_mm2) // p.hbm_shoreline_mm)
    M, S, N = np.meshgrid(steps, steps, np.arange(max_stacks + 1), indexing="ij")
    M, S, N = M.ravel(), S.ravel(), N.ravel()
    comp = _components(p, M, S, N, io_mm2)
    ok = ((comp["area_mm2"] <= area_mm2 * (1 + 1e-12)) & (comp["shoreline_mm"] <= comp["perimeter_mm"] * (1 + 1e-12))
          & (M > 0))
    comp = {k: np.broadcast_to(v, M.shape)[ok] for k, v in comp.items()}
    return M[ok], S[ok], N[ok], comp


def _budgets(p, area_mm2, power_w, grid_mm2, io_mm2):
    A = p.area_mm2 if area_mm2 is None else _positive("area_mm2", area_mm2)
    P = p.power_w if power_w is None else _positive("power_w", power_w)
    g = _positive("grid_mm2", grid_mm2)
    io = p.h100_split["io_mm2"] if io_mm2 is None else _positive("io_mm2", io_mm2, allow_zero=True)
    return A, P, g, io


def sweep(workloads, area_mm2: float | None = None, power_w: float | None = None, grid_mm2: float = 10.0,
          io_mm2: float | None = None, params: Params | None = None) -> pd.DataFrame:
    """Evaluate every fitting split of the grid on each workload: one row per split, one
    ``<name>_tokens_per_s_per_chip`` and ``<name>_limit`` column per workload. ``io_mm2`` is held
    fixed (default: the H100 split's)."""
    p = params if params is not None else _builtin()
    A, P, g, io = _budgets(p, area_mm2, power_w, grid_mm2, io_mm2)
    ws = workloads if isinstance(workloads, (list, tuple)) else [workloads]
    M, S, N, comp = _grid(p, A, P, g, io)
    df = pd.DataFrame({
        "matrix_mm2": M, "sram_mm2": S, "n_hbm_stacks": N.astype(int), "io_mm2": io, "area_mm2": comp["area_mm2"],
        "peak_flop_s": comp["peak_flop_s"], "sram_bytes": comp["sram_bytes"], "hbm_bytes": comp["hbm_bytes"],
        "hbm_bw_bytes_per_s": comp["hbm_bw_bytes_per_s"], "full_power_w": comp["full_power_w"],
    })
    for w in ws:
        r = _evaluate(p, comp, need(w, p), P)
        df[f"{w.name}_tokens_per_s_per_chip"] = r["tokens_per_s_per_chip"]
        df[f"{w.name}_limit"] = r["limit"]
        df[f"{w.name}_power_w"] = r["power_w"]
        df[f"{w.name}_clock"] = r["clock"]
    return df


def _pick(df: pd.DataFrame, score: np.ndarray) -> int:
    """Row with the best score; ties go to the lower full power, then the smaller area."""
    order = np.lexsort((df["area_mm2"].to_numpy(), df["full_power_w"].to_numpy(), -score))
    return int(order[0])


def _row_design(row, p, A, P) -> Design:
    return design(float(row["matrix_mm2"]), float(row["sram_mm2"]), int(row["n_hbm_stacks"]), float(row["io_mm2"]),
                  p, area_mm2=A, power_w=P)


def best_design(workload: Training | Decode, area_mm2: float | None = None, power_w: float | None = None,
                grid_mm2: float = 10.0, io_mm2: float | None = None,
                params: Params | None = None) -> tuple[Design, pd.DataFrame]:
    """The split with the highest tokens/s per chip on ``workload``, and the table of all fitting
    splits (sorted best first). Grid: matrix and SRAM in ``grid_mm2`` steps, every stack count."""
    p = params if params is not None else _builtin()
    need(workload, p)  # validates the workload first
    A, P, _, _ = _budgets(p, area_mm2, power_w, grid_mm2, io_mm2)
    df = sweep([workload], area_mm2, power_w, grid_mm2, io_mm2, p)
    if df.empty:
        raise ValueError(f"area_mm2={A} leaves no room for any design (uncore {p.uncore_mm2} mm² + I/O)")
    col = f"{workload.name}_tokens_per_s_per_chip"
    best = df.iloc[_pick(df, df[col].to_numpy())]
    table = df.sort_values(col, ascending=False, kind="stable", ignore_index=True)
    return _row_design(best, p, A, P), table


def compare_8t_8i(training: Training | None = None, decode: Decode | None = None, area_mm2: float | None = None,
                  power_w: float | None = None, grid_mm2: float = 10.0, io_mm2: float | None = None,
                  params: Params | None = None) -> pd.DataFrame:
    """The training optimum, the decode optimum and the best single compromise (highest geometric
    mean of the two throughputs, each relative to its specialist) on the same grid, plus Google's
    TPU 8t / 8i stack counts and SRAM for the direction. Columns: matrix_mm2, sram_mb,
    n_hbm_stacks, training/decode tokens/s per chip and each as a share of the specialist's."""
    p = params if params is not None else _builtin()
    training, decode = training or Training(), decode or Decode()
    A, P, _, _ = _budgets(p, area_mm2, power_w, grid_mm2, io_mm2)
    df = sweep([training, decode], area_mm2, power_w, grid_mm2, io_mm2, p)
    t, d = df["training_tokens_per_s_per_chip"].to_numpy(), df["decode_tokens_per_s_per_chip"].to_numpy()
    it, id_ = _pick(df, t), _pick(df, d)
    if t[it] <= 0 or d[id_] <= 0:
        raise ValueError("no design on this grid runs both workloads (memory capacity or power); "
                         "raise area_mm2 or power_w, or shard the workloads over more chips")
    ic = _pick(df, np.sqrt((t / t[it]) * (d / d[id_])))
    rows = []
    for label, i in (("training optimum (8t-like)", it), ("decode optimum (8i-like)", id_), ("compromise", ic)):
        r = df.iloc[i]
        rows.append({"design": label, "matrix_mm2": r["matrix_mm2"], "sram_mb": r["sram_bytes"] / 1e6,
                     "n_hbm_stacks": int(r["n_hbm_stacks"]), "peak_tflop_s": r["peak_flop_s"] / 1e12,
                     "training_tokens_per_s_per_chip": t[i], "decode_tokens_per_s_per_chip": d[i],
                     "training_vs_best": t[i] / t[it], "decode_vs_best": d[i] / d[id_],
                     "training_limit": r["training_limit"], "decode_limit": r["decode_limit"]})
    for label, pre in (("TPU 8t (published)", "t"), ("TPU 8i (published)", "i")):
        rows.append({"design": label, "n_hbm_stacks": int(p.tpu8[f"{pre}_hbm_stacks"]),
                     "sram_mb": p.tpu8[f"{pre}_sram_mb"]})
    return pd.DataFrame(rows)
