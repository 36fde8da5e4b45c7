"""The router's noise: a counter-based hash, not a random stream, shared by the kernel and NumPy.

Token ``t`` of batch ``b`` draws Exp(1) noise for expert ``e`` as ``x(seed, b, t, e) = -log(u)``,
with ``u`` from SplitMix64 (Vigna's ``splitmix64.c``) of the key

    key = ((seed·1,000,003 + b)·n_tokens + t)·n_experts + e        (uint64 arithmetic, wrapping)

    z = key + 0x9E3779B97F4A7C15
    z = (z ^ (z >> 30)) · 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) · 0x94D049BB133111EB
    z =  z ^ (z >> 31)
    u = (top 53 bits of z + 0.5) / 2^53                              (in (0, 1), never 0 or 1)

Any (batch, token, expert) is drawn without drawing the others, in any order or in parallel, so
the Numba router (:mod:`accelbook.moe.router`) and a vectorised NumPy reference draw identical
numbers and must give identical results; notebooks are reproducible from the seed.

:func:`token_key` and :func:`uniform` are written once, as ``@njit`` functions: the router calls
them compiled, one token and one expert at a time; :func:`exp_noise` runs the same Python source
(``.py_func``) on whole NumPy arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from accelbook.checks import at_most, whole, within_budget

#: SplitMix64's increment (the golden ratio · 2^64) and its two multipliers
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
#: the seed's stride in the key, so that seeds do not share batches
SEED_MULT = 1_000_003
#: 2^-53: the top 53 bits of z as a fraction
UNIT = 1.0 / 9007199254740992.0


@njit(cache=True, inline="always")
def token_key(seed, batch, n_tokens, token, n_experts):
    """The key of (batch, token, expert 0), ``((seed·1,000,003 + b)·n_tokens + t)·n_experts`` in uint64
    (wrapping); expert ``e``'s key is this plus ``e``. ``token`` may be a uint64 array (``.py_func``)."""
    base = (np.uint64(seed) * np.uint64(SEED_MULT) + np.uint64(batch)) * np.uint64(n_tokens)
    return (base + np.uint64(token)) * np.uint64(n_experts)


@njit(cache=True, inline="always")
def uniform(key):
    """``u`` in (0, 1) from SplitMix64 of ``key`` (uint64); the noise is ``x = -log(u)``.

    ``key`` may be a uint64 array when run as NumPy (``uniform.py_func``), as :func:`exp_noise` does.
    """
    z = key + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    z = z ^ (z >> np.uint64(31))
    return (np.float64(z >> np.uint64(11)) + 0.5) * UNIT


#: the most noise values one exp_noise call makes (8 bytes each: 1 GiB at the limit)
MAX_NOISE_ELEMENTS = 2**27


def exp_noise(seed: int, batch: int, n_tokens: int, n_experts: int) -> np.ndarray:
    """The (n_tokens, n_experts) Exp(1) noise ``x = -log(u)`` of one batch, vectorised: the same
    numbers the kernel draws (module docstring). ``seed``, ``batch``: whole numbers in [0, 2**63); ``n_tokens``,
    ``n_experts``: whole numbers >= 1, their product at most :data:`MAX_NOISE_ELEMENTS`."""
    for name, v, lo in (("seed", seed, 0), ("batch", batch, 0), ("n_tokens", n_tokens, 1), ("n_experts", n_experts, 1)):
        at_most(name, whole(name, v, lo), 2**63 - 1, "the key is uint64 arithmetic")
    within_budget(f"exp_noise of {n_tokens:,} tokens × {n_experts:,} experts", float(n_tokens) * n_experts,
                  MAX_NOISE_ELEMENTS, "elements", "accelbook.moe.noise.MAX_NOISE_ELEMENTS")
    with np.errstate(over="ignore"):        # uint64 arithmetic wraps, by definition
        t = np.arange(n_tokens, dtype=np.uint64)[:, None]
        key = token_key.py_func(seed, batch, n_tokens, t, n_experts) + np.arange(n_experts, dtype=np.uint64)[None, :]
        u = uniform.py_func(key)
    return -np.log(u)
