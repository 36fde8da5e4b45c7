"""The pipeline schedule: layers per stage, a microbatch's time through the busiest stage, the bubble.

``pp`` stages of ``L_st = ⌈L/pp⌉`` layers (the last stage takes what is left, ``L_last``, and the LM
head). 1F1B with ``m`` microbatches takes ``(m + (pp-1)/vp)·t_mb``: ``m`` microbatches through the
busiest stage plus a bubble of ``(pp-1)/vp`` of them, ``vp`` interleaved chunks per stage shrinking
it (Narayanan et al. 2021). The first stage holds ``min(m, pp)`` microbatches' activations, times
``1 + (pp-1)/(pp·vp)`` when interleaved (Korthikanti et al. 2022, sec. 4.2.3).
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
def bubble_time(pp, vp, t_mb):
    """Pipeline bubble (s): ``(pp - 1)/vp · t_mb``."""
    return (pp - 1.0) / vp * t_mb


@njit(cache=True, inline="always")
def microbatches_in_flight(m, pp, vp):
    """Microbatches whose activations the first stage holds: 1 without a pipeline, ``min(m, pp)``
    under 1F1B, times ``1 + (pp-1)/(pp·vp)`` when interleaved."""
    in_flight = 1.0
    if pp > 1:
        in_flight = min(m, pp)
        if vp > 1:
            in_flight *= 1.0 + (pp - 1.0) / (pp * vp)
    return in_flight
