"""Torus geometry in closed form: axes, distances, diameter, the busiest link under all-to-all.

An axis of ``k`` chips is a *ring* when it wraps around and ``k > 2`` (with ``k = 2`` the wraparound
link would join the two chips a second time), else a *line*. Per axis:

    diameter       ⌊k/2⌋ (ring),  k - 1 (line)
    mean distance  m_ring = (1/k)·Σ_{d<k} min(d, k-d),   m_line = (k² - 1)/(3k)

over ordered pairs of positions, identical ones included. Summed over the axes of a torus of
``N = Π k`` chips: the diameter, and the mean hop count over pairs of *distinct* chips,
``Σ m · N/(N-1)``. Uniform all-to-all on a torus with wraparound loads every link of axis ``d``
with ``N·m_d/2`` messages (:func:`torus_all_to_all_max_load`); the link-load kernels of
:mod:`accelbook.network.paths` are checked against these numbers.

A ``dims``-D torus of ``domain_chips`` chips has axes of length ``k = domain_chips**(1/dims)``
(rounded). A group of ``g`` consecutive chips fills axes one after another, so it spans

    n_axes = min(dims, ⌈log(g) / log(k)⌉)      (at least 1)

axes; a collective over the group can drive all of them at once (scaling-book, "How to think about
TPUs": a ring on a torus gets bandwidth × n_axes). Used by the cluster specs and the training kernel.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from accelbook.checks import at_most, whole

#: chips in a torus the closed forms accept: far past any built pod (TPU v5p: 8,960), and sums over axes stay fast
MAX_TORUS_CHIPS = 2**24


@njit(cache=True)
def axis_is_ring(k, wraps):
    """Whether an axis of ``k`` chips is a ring: it wraps around and ``k > 2``.

    ``@njit``: callable from Python and from kernels alike.
    """
    return k > 2 and bool(wraps)


@njit(cache=True)
def axis_diameter(k, wraps):
    """Hops between the farthest two chips of one axis: ``⌊k/2⌋`` on a ring, ``k - 1`` on a line."""
    return k // 2 if axis_is_ring(k, wraps) else k - 1


def mean_ring_distance(k: int) -> float:
    """Mean distance between two positions of a ring of ``k``: ``(1/k)·Σ_{d<k} min(d, k-d)``."""
    return sum(min(d, k - d) for d in range(k)) / k


def mean_line_distance(k: int) -> float:
    """Mean ``|i - j|`` over ordered pairs of positions ``0..k-1`` of a line: ``(k² - 1)/(3k)``."""
    return (k * k - 1) / (3 * k)


def _dims(dims) -> tuple[int, ...]:
    """``dims`` checked: a non-empty sequence of whole numbers >= 1, at most MAX_TORUS_CHIPS chips in all."""
    if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
        raise TypeError(f"dims must be a sequence of axis lengths such as (8, 8, 16), got {dims!r}")
    dims = tuple(whole("each dimension of dims", d) for d in dims)
    if not dims:
        raise ValueError("dims must name at least one dimension")
    at_most("the chips of dims", math.prod(dims), MAX_TORUS_CHIPS, "accelbook.network.geometry.MAX_TORUS_CHIPS")
    return dims


def _wrap_flags(dims, wraparound) -> tuple:
    """``wraparound`` as one flag per dimension (one bool applies to all)."""
    if isinstance(wraparound, bool):
        return (wraparound,) * len(dims)
    if isinstance(wraparound, (str, bytes)) or not hasattr(wraparound, "__iter__"):
        raise TypeError(f"wraparound must be True/False or one flag per dimension, got {wraparound!r}")
    flags = tuple(wraparound)
    if len(flags) != len(dims) or not all(isinstance(f, (bool, np.bool_)) for f in flags):
        raise ValueError(f"wraparound must be one True/False flag per dimension ({len(dims)}), got {wraparound!r}")
    return tuple(bool(f) for f in flags)


def torus_mean_hops(dims, wraparound=True) -> float:
    """Analytic mean hops over ordered pairs of distinct nodes of a torus/mesh (sum over dimensions).

    Example: an 8×8×16 torus, ``(2 + 2 + 4)·1024/1023 = 8.008`` hops.
    """
    dims = _dims(dims)
    wrap = _wrap_flags(dims, wraparound)
    n = math.prod(dims)
    if n < 2:
        raise ValueError(f"dims {dims} hold one chip: there is no pair of distinct chips to average over")
    total = 0.0  # mean over all ordered pairs including identical ones, then rescaled
    for k, w in zip(dims, wrap):
        total += mean_ring_distance(k) if axis_is_ring(k, w) else mean_line_distance(k)
    return total * n / (n - 1)


def torus_diameter(dims, wraparound=True) -> int:
    """Hops between the farthest two chips of a torus/mesh: the sum of the axes' diameters.

    Example: an 8×8×16 torus, ``4 + 4 + 8 = 16`` hops.
    """
    dims = _dims(dims)
    wrap = _wrap_flags(dims, wraparound)
    return sum(axis_diameter(k, w) for k, w in zip(dims, wrap))


def torus_all_to_all_max_load(dims) -> float:
    """Analytic busiest-link flow for uniform all-to-all on a torus with wraparound: max over
    dimensions of ``N·m_d / 2``, with ``m_d`` the mean ring distance of dimension d (k > 2).

    Example: an 8×8×16 torus, ``1024 · 4 / 2 = 2048`` messages on each link along the 16-chip axis.
    """
    dims = _dims(dims)
    if not any(k > 2 for k in dims):
        raise ValueError(f"dims {dims} has no ring (an axis of more than 2 chips): the formula is for a torus")
    n = math.prod(dims)
    return max(n * mean_ring_distance(k) / 2 for k in dims if k > 2)


@njit(cache=True)
def torus_axes(group, domain_chips, dims):
    """How many axes of a ``dims``-D torus of ``domain_chips`` chips a group of ``group`` spans.

    Example: 64 chips of a 4×4×4 (``domain_chips=64``, ``dims=3``) span 3 axes; 16 span 2; 4 span 1.
    ``@njit``: callable from Python and from kernels alike.
    """
    if group <= 1:
        return 1
    side = max(2, round(domain_chips ** (1.0 / dims)))
    return max(1, min(dims, math.ceil(math.log(group) / math.log(side) - 1e-9)))
