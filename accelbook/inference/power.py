"""Power per chip at the wall, on one basis for every chip (``accelbook.specs.system_power``).

``P_wall = PUE·P_system·(s_idle + (1 - s_idle)·activity)``: ``P_system`` the whole server's or system's
power per accelerator; ``activity`` the decode step's busy share of its binding unit (``t_cmp / t_stage``
when compute-bound, ``MEMORY_BOUND_POWER·t_mem / t_stage`` when memory-bound: moving bytes draws less
than the math); ``s_idle`` = ``IDLE_POWER_SHARE``. Both shares are ESTIMATES (few vendors publish a
power curve); the host, network and fans are scaled with the chip, as its fans and power stages follow
its heat.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from accelbook.checks import real
from accelbook.specs.chips import Chip
from accelbook.specs.system_power import system_power

from .rates import IDLE_POWER_SHARE, MEMORY_BOUND_POWER


class PowerDraw(NamedTuple):
    """``bound``: the decode step's binding unit; ``chip_w``: the accelerator alone at the step's activity;
    ``wall_w``: the whole system's share per chip at that activity, times PUE (None for both without a
    published power); ``basis``: how the system's power was found, in words."""

    bound: str
    chip_w: float | None
    wall_w: float | None
    basis: str


def decode_power(chip: Chip, t_mem: float, t_cmp: float, t_stage: float, pue: float) -> PowerDraw:
    """The power per chip of a decode step whose memory traffic takes ``t_mem``, math ``t_cmp``, and the
    whole step ``t_stage`` seconds (see the module docstring); on numbers, or on arrays of steps (a sweep's
    every layout and batch: ``bound``, ``chip_w`` and ``wall_w`` are then arrays too)."""
    mem = np.asarray(t_mem >= t_cmp)
    bound = np.where(mem, "memory", "compute")
    bound = str(bound) if mem.ndim == 0 else bound
    sp = system_power(chip)
    if sp is None:
        return PowerDraw(bound, None, None, f"no published power for {chip.name}: no tokens per kW")
    activity = np.where(mem, MEMORY_BOUND_POWER * (t_mem / t_stage), t_cmp / t_stage)
    share = IDLE_POWER_SHARE + (1 - IDLE_POWER_SHARE) * np.minimum(1.0, activity)
    share = float(share) if mem.ndim == 0 else share
    return PowerDraw(bound, sp.accelerator_w * share, sp.system_w * share * pue, f"{sp.text()}; PUE {pue:.2f}")


def per_kw_at_pue(tokens_per_s_per_kw, pue: float, computed_at: float):
    """Tokens/s per kW computed at PUE ``computed_at``, restated at ``pue``: wall power is linear in PUE
    (:func:`decode_power`), so the figure scales by ``computed_at / pue``; the model is not run again.
    Works on a number or an array/column (NaN where a chip has no published power stays NaN)."""
    real("pue", pue, lo=1.0, hi=3.0)
    return tokens_per_s_per_kw * (real("computed_at", computed_at, lo=1.0, hi=3.0) / pue)
