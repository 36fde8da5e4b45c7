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

Two workloads, :class:`TrainingWorkload` (a token of a dense LLM's training step) and
:class:`DecodeWorkload` (one decode step of a replica), say what ``F``, ``M`` and ``R`` are for
each: :mod:`accelbook.chip.design_workloads` holds their formulas.

Every constant lives in ``data/chipdesign.toml`` with its source; most are round ESTIMATES,
calibrated once so that an H100-like split reproduces the H100 datasheet within ~20%.
Everything is a roofline upper bound: no kernel efficiency, no communication time.

This module is the calculator's one entry point (``from accelbook.chip import design as cd``);
the code lives by job in

- :mod:`accelbook.chip.design_params`: the constants (:class:`Params`, :func:`params`,
  :func:`load_params`, :func:`provenance_table`);
- :mod:`accelbook.chip.design_workloads`: the workloads and their ``F``, ``M``, ``R`` (:func:`need`);
- :mod:`accelbook.chip.design_die`: a split's sums (:class:`Design`, :func:`design`,
  :func:`h100_like`) and its speed on a workload (:func:`evaluate`);
- :mod:`accelbook.chip.design_search`: the grid search (:func:`sweep`, :func:`best_design`,
  :func:`compare_8t_8i`, :func:`compare_in_sweep`).
"""

from .design_die import LIMITS, Design, design, evaluate, h100_like
from .design_params import Params, load_params, params, provenance_table
from .design_search import best_design, compare_8t_8i, compare_in_sweep, sweep
from .design_workloads import DecodeWorkload, Need, TrainingWorkload, need

__all__ = [
    "LIMITS", "Params", "load_params", "params", "provenance_table", "TrainingWorkload", "DecodeWorkload",
    "Need", "need", "Design", "design", "h100_like", "evaluate", "sweep", "best_design", "compare_8t_8i", "compare_in_sweep",
]
