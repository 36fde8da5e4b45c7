"""One die in the chip-design calculator: a split's area, power and edge, and its speed on a workload.

A :class:`Design` spends the area budget ``A`` on matrix units, SRAM, ``n`` HBM stacks, chip-to-chip
I/O and a fixed uncore (:func:`components` has the sums). It fits when the areas sum to at most
``A`` and the HBM PHYs plus the I/O fit on the die's edge, ``4·sqrt(area)``.

:func:`throughput` (vectorised over designs) and :func:`evaluate` (one design) run a workload's
``F``, ``M``, ``R`` (:mod:`accelbook.chip.design_workloads`) on it: units per second are the roofline

    x = min(C/F, BW_hbm/((1-f)M), BW_sram/(fM)),   f = min(1, sram/R)

lowered by bisection until the power ``static + x·e_mem + J·x·F·max(s, s_v)^k`` fits the budget
``P`` (clock ``s = xF/C``), and 0 if ``R`` does not fit in HBM + SRAM. The binding limit is one of
:data:`LIMITS`. The full model is described in :mod:`accelbook.chip.design`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from accelbook.checks import positive, whole

from .design_params import Params, builtin_params
from .design_workloads import DecodeWorkload, Need, TrainingWorkload, need

LIMITS = ("compute", "memory bandwidth", "memory capacity", "power")


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


def components(p: Params, matrix_mm2, sram_mm2, n_stacks, io_mm2) -> dict:
    """The derived quantities of designs (numpy-broadcast over arrays): areas, peak, capacities,
    bandwidths, static and full power, shoreline and perimeter (the fields of :class:`Design`)."""
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
    p = params if params is not None else builtin_params()
    m = positive("matrix_mm2", matrix_mm2, allow_zero=True)
    s = positive("sram_mm2", sram_mm2, allow_zero=True)
    n = whole("n_hbm_stacks", n_hbm_stacks, 0)
    io = positive("io_mm2", io_mm2, allow_zero=True)
    A = p.area_mm2 if area_mm2 is None else positive("area_mm2", area_mm2)
    P = p.power_w if power_w is None else positive("power_w", power_w)
    c = {k: float(v) for k, v in components(p, m, s, n, io).items()}
    return Design(matrix_mm2=m, sram_mm2=s, n_hbm_stacks=n, io_mm2=io, uncore_mm2=p.uncore_mm2,
                  area_budget_mm2=A, power_budget_w=P, params=p, **c)


def h100_like(params: Params | None = None) -> Design:
    """The calibration split of ``data/chipdesign.toml`` ([h100]) at the default budgets."""
    p = params if params is not None else builtin_params()
    h = p.h100_split
    return design(h["matrix_mm2"], h["sram_mm2"], int(h["n_hbm_stacks"]), h["io_mm2"], p)


def matrix_power(p: Params, x, F, C):
    """Matrix-unit power (W) at ``x`` units/s: clock ``s = xF/C``, energy/FLOP = ``J·max(s, s_v)^k``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(C > 0, x * F / np.where(C > 0, C, 1.0), 0.0)
    return p.j_per_flop * x * F * np.maximum(s, p.voltage_floor_clock) ** p.energy_clock_exponent


def _bisect_power(p: Params, nd: Need, x_hi, power_w, static, e_mem, C):
    """The units/s at which ``static + x·e_mem + matrix_power`` meets ``power_w``: 200 halvings of
    [0, x_hi] (elementwise; stops early once no interval changes, as every later halving would not)."""
    lo, hi = np.zeros_like(x_hi), x_hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        ok = static + mid * e_mem + matrix_power(p, mid, nd.flops, C) <= power_w
        lo2, hi2 = np.where(ok, mid, lo), np.where(ok, hi, mid)
        if np.array_equal(lo2, lo) and np.array_equal(hi2, hi):
            break
        lo, hi = lo2, hi2
    return lo


def throughput(p: Params, comp: dict, nd: Need, power_w) -> dict:
    """Units/s of designs (``comp``: :func:`components`' arrays) on one workload's :class:`Need`
    under ``power_w`` (module docstring): units_per_s, tokens_per_s_per_chip, limit, power_w,
    clock, flop_utilisation (= clock), sram_share; arrays broadcast over the designs."""
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
        return static + x * e_mem + matrix_power(p, x, nd.flops, C)

    over = power(x_roof) > power_w
    x = x_roof
    if np.any(over):   # bisection on the power curve, monotone in x
        x = np.array(x_roof, dtype=float)
        x[over] = _bisect_power(p, nd, x_roof[over], *(np.broadcast_to(a, over.shape)[over]
                                                       for a in (power_w, static, e_mem, C)))
    limit = np.where(over, "power", roof_limit)
    cap_ok = R <= comp["hbm_bytes"] + S
    x = np.where(cap_ok, x, 0.0)
    limit = np.where(cap_ok, limit, "memory capacity")
    with np.errstate(divide="ignore", invalid="ignore"):
        clock = np.where(C > 0, x * nd.flops / np.where(C > 0, C, 1.0), 0.0)
    return dict(units_per_s=x, tokens_per_s_per_chip=x * nd.tokens_per_unit, limit=limit,
                power_w=np.where(x > 0, power(x), static), clock=clock,
                flop_utilisation=clock, sram_share=f)


def evaluate(design: Design, workload: TrainingWorkload | DecodeWorkload) -> dict:
    """Throughput of ``design`` on ``workload`` at its power budget.

    Returns ``tokens_per_s_per_chip``, ``tokens_per_s_per_user`` (decode; None for training),
    ``limit`` (one of :data:`LIMITS`), ``power_w`` drawn, ``clock`` (matrix clock relative to
    nominal = FLOP utilisation of the peak), ``sram_share`` (share of memory traffic served from
    SRAM), ``fits`` and ``why_not``.
    """
    if not isinstance(design, Design):
        raise ValueError(f"design must be a Design (from accelbook.chip.design.design), got {type(design).__name__}")
    p = design.params if design.params is not None else builtin_params()
    nd = need(workload, p)
    comp = {k: getattr(design, k) for k in ("peak_flop_s", "sram_bytes", "sram_bw_bytes_per_s", "hbm_bytes",
                                            "hbm_bw_bytes_per_s", "static_power_w")}
    r = throughput(p, comp, nd, design.power_budget_w)
    out = {k: (str(v) if k == "limit" else float(v)) for k, v in r.items()}
    out["tokens_per_s_per_user"] = out["units_per_s"] if isinstance(workload, DecodeWorkload) else None
    out.update(workload=workload.name, fits=design.fits, why_not=design.why_not)
    return out
