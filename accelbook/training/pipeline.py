"""The pipeline schedule: layers per stage, a microbatch's time through the busiest stage, the bubble.

``pp`` stages of ``L_st = ⌈L/pp⌉`` layers (the last stage takes what is left, ``L_last``, and the LM
head). 1F1B with ``m`` microbatches takes ``(m + (pp-1)/vp)·t_mb``: ``m`` microbatches through the
busiest stage plus a bubble of ``(pp-1)/vp`` of them, ``vp`` interleaved chunks per stage shrinking
it (Narayanan et al. 2021). The first stage holds ``min(m, pp)`` microbatches' activations, times
``1 + (pp-1)/(pp·vp)`` when interleaved (Korthikanti et al. 2022, sec. 4.2.3).

Two more schedules split a microbatch's stage time into forward ``F``, backward for inputs ``B`` and
for weights ``W`` (``t_mb = F + B + W``; ``W`` is the weight-gradient GEMMs, as long as the forward GEMMs):

- ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", ICLR, table 1): ``W`` fills the bubble,
  which becomes ``(pp-1)·(F + B - W) = (pp-1)·(t_mb - 2W)``, with 1F1B's activation memory; vp = 1.
- DualPipe (DeepSeek-V3 report, table 2): microbatches enter from both ends; bubble
  ``(pp/2 - 1)·(F&B + B - 3W)`` with ``F&B = t_mb`` a forward and a backward chunk overlapped, two copies
  of the stage's parameters, ``pp + 1`` microbatches in flight; pp and the microbatch count even, vp = 1.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, inline="always")
def stage_layers(L, pp):
    """(layers of a full stage ``⌈L/pp⌉``, layers left for the last stage, at least 0)."""
    Lst = math.ceil(L / pp)
    return Lst, max(0.0, L - (pp - 1) * Lst)


@njit(cache=True, inline="always")
def microbatch_time(L, Lst, L_last, pp, t_layer, t_head, t_pp):
    """Time (s) of one microbatch through the busiest stage, with its pipeline sends ``t_pp``:
    ``max(L_st·t_layer, L_last·t_layer + t_head) + t_pp``; ``L·t_layer + t_head`` without a pipeline."""
    if pp == 1:
        return L * t_layer + t_head
    return max(Lst * t_layer, L_last * t_layer + t_head) + t_pp


@njit(cache=True, inline="always")
def bubble_time(pp, vp, t_mb, t_b, t_w, sched):
    """Pipeline bubble (s) of schedule ``sched`` (index in SCHEDULES): 1F1B ``(pp - 1)/vp · t_mb``;
    ZB-H1 ``(pp - 1)·(t_mb - 2·t_w)``; DualPipe ``(pp/2 - 1)·(t_mb + t_b - 3·t_w)`` (never below 0).
    ``t_b``, ``t_w``: a microbatch's backward for inputs and for weights on the busiest stage."""
    if sched == 1:
        return (pp - 1.0) * max(0.0, t_mb - 2.0 * t_w)
    if sched == 2:
        return max(0.0, pp / 2.0 - 1.0) * max(0.0, t_mb + t_b - 3.0 * t_w)
    return (pp - 1.0) / vp * t_mb


@njit(cache=True, inline="always")
def microbatches_in_flight(m, pp, vp, sched):
    """Microbatches whose activations the first stage holds: 1 without a pipeline, ``min(m, pp)``
    under 1F1B and ZB-H1, times ``1 + (pp-1)/(pp·vp)`` when interleaved; ``min(m, pp + 1)`` under DualPipe."""
    in_flight = 1.0
    if pp > 1:
        in_flight = min(m, pp + 1.0) if sched == 2 else min(m, pp)
        if vp > 1:
            in_flight *= 1.0 + (pp - 1.0) / (pp * vp)
    return in_flight


@njit(cache=True, inline="always")
def schedule_valid(sched, pp, vp, m):
    """Whether schedule ``sched`` can run: 1F1B always (the only one without a pipeline); ZB-H1 with
    pp > 1 and vp = 1; DualPipe with vp = 1, pp > 1 even and an even number of microbatches ``m``."""
    if sched == 0:
        return True
    if pp <= 1 or vp != 1:
        return False
    if sched == 2:
        return pp % 2 == 0 and m % 2 == 0
    return True
