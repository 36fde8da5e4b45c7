"""Torus geometry in closed form: how many axes a group of chips spans.

A ``dims``-D torus of ``domain_chips`` chips has axes of length ``k = domain_chips**(1/dims)``
(rounded). A group of ``g`` consecutive chips fills axes one after another, so it spans

    n_axes = min(dims, ⌈log(g) / log(k)⌉)      (at least 1)

axes; a collective over the group can drive all of them at once (scaling-book, "How to think about
TPUs": a ring on a torus gets bandwidth × n_axes). Used by the cluster specs and the training kernel.
"""

from __future__ import annotations

import math

from numba import njit


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
