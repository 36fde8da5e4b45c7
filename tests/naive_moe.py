"""Vectorised NumPy reference for :func:`accelbook.moe.simulate_routing`, written from the module
docstrings of ``accelbook.moe.router`` and ``accelbook.moe.noise`` (not from the kernel's loops).

Per batch: the shared counter-based Exp(1) noise (``moe.exp_noise``; :func:`splitmix_noise` below is an
independent re-implementation of the same definition, checked equal in the tests), weights
``w = roll(p, round(b·drift))·exp(β)``, affinities ``r = w / x``; node-limited routing keeps, per
token, the M groups with the largest sum of their best ceil(k/M) log-affinities (stable order: ties
to the lower group); top-k by argpartition + a stable sort of the k candidates (ties to the lower
expert index); capacity in (token, slot) order by a stable sort and a cumulative count per expert;
then the bias sign rule. No Python loop over tokens.
"""

from __future__ import annotations

import math

import numpy as np

from accelbook import moe


def splitmix_noise(seed: int, batch: int, n_tokens: int, n_experts: int) -> np.ndarray:
    """x(seed, b, t, e) = -log(u), u = (top 53 bits of SplitMix64(key) + 0.5) / 2^53 with
    key = ((seed·1,000,003 + b)·T + t)·E + e (uint64, wrapping): the docstring's definition."""
    M = (1 << 64) - 1
    base = ((seed * 1_000_003 + batch) * n_tokens) & M          # exact Python ints, then wrap
    key = (np.uint64(base) + np.arange(n_tokens, dtype=np.uint64)[:, None]) * np.uint64(n_experts) \
        + np.arange(n_experts, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        z = key + np.uint64(0x9E3779B97F4A7C15)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    return -np.log(u)


def topk_desc(r: np.ndarray, k: int) -> np.ndarray:
    """Per row, the indices of the k largest values, largest first, ties to the lower index."""
    T, E = r.shape
    if k < E:
        cand = np.argpartition(-r, k - 1, axis=1)[:, :k]
        # argpartition does not order ties at the boundary by index: fix the (rare) rows that have
        # more than k values >= the k-th largest with a full stable sort
        thr = np.take_along_axis(r, cand, axis=1).min(axis=1)
        bad = np.flatnonzero((r >= thr[:, None]).sum(axis=1) > k)
        if bad.size:
            cand[bad] = np.argsort(-r[bad], axis=1, kind="stable")[:, :k]
    else:
        cand = np.broadcast_to(np.arange(E), (T, E))
    cand = np.sort(cand, axis=1)                                # by index, so a stable sort keeps ties low
    vals = np.take_along_axis(r, cand, axis=1)
    return np.take_along_axis(cand, np.argsort(-vals, axis=1, kind="stable"), axis=1)


def node_limit_mask(r: np.ndarray, k: int, n_groups: int, node_limit: int) -> np.ndarray:
    """(T, G) bool: the node_limit groups with the largest sum of their best ceil(k/M) log r."""
    T, E = r.shape
    P = E // n_groups
    pick = -(-k // node_limit)
    lr = np.log(r).reshape(T, n_groups, P)
    if pick < P:
        lr = np.partition(lr, P - pick, axis=2)[:, :, P - pick:]
    best = np.sort(lr, axis=2)[:, :, ::-1]                      # descending
    score = best[:, :, 0].copy()
    for j in range(1, pick):                                    # summed largest first
        score += best[:, :, j]
    keep = np.argsort(-score, axis=1, kind="stable")[:, :node_limit]
    mask = np.zeros((T, n_groups), dtype=bool)
    np.put_along_axis(mask, keep, True, axis=1)
    return mask


def route_batch(w: np.ndarray, x: np.ndarray, k: int, n_groups: int, node_limit: int) -> np.ndarray:
    """(T, k) expert choices, best affinity first."""
    r = w[None, :] / x
    if 0 < node_limit < n_groups:
        mask = node_limit_mask(r, k, n_groups, node_limit)
        r = np.where(np.repeat(mask, r.shape[1] // n_groups, axis=1), r, -1.0)   # r > 0 elsewhere
    return topk_desc(r, k)


def capacity_keep(choices: np.ndarray, n_experts: int, cap: int | None) -> np.ndarray:
    """(T, k) bool: assignment (t, j) kept iff fewer than cap earlier ones (in (t, j) order) went to
    the same expert."""
    flat = choices.ravel()
    if cap is None:
        return np.ones(choices.shape, dtype=bool)
    order = np.argsort(flat, kind="stable")
    counts = np.bincount(flat, minlength=n_experts)
    starts = np.cumsum(counts) - counts
    rank = np.empty(flat.size, dtype=np.int64)
    rank[order] = np.arange(flat.size) - starts[flat[order]]
    return (rank < cap).reshape(choices.shape)


def groups_touched(choices: np.ndarray, per_group: int) -> np.ndarray:
    g = np.sort(choices // per_group, axis=1)
    return 1 + (np.diff(g, axis=1) != 0).sum(axis=1)


def capacity(capacity_factor, n_tokens, n_experts, top_k):
    # the spec rounds the product to 9 decimals before the ceiling (1.1 x 100 is 110)
    return None if capacity_factor is None else math.ceil(round(capacity_factor * n_tokens * top_k / n_experts, 9))


def reference_routing(n_tokens, n_experts, top_k, skew=0.0, capacity_factor=None, n_batches=1, seed=0, drift=0.0,
                      bias_rate=0.0, n_groups=1, node_limit=None, n_shared=0, noise=moe.exp_noise):
    """(loads, processed, dropped, groups_hist, choices, kept, bias), as ``moe.simulate_routing``.
    Shared experts take every token and are not routed: ``n_shared`` changes nothing here."""
    T, E, k, B, G = n_tokens, n_experts, top_k, n_batches, n_groups
    M = node_limit or 0
    p = np.arange(1, E + 1, dtype=np.float64) ** (-float(skew))
    p /= p.sum()
    cap = capacity(capacity_factor, T, E, k)
    loads = np.zeros((B, E), dtype=np.int64)
    processed = np.zeros((B, E), dtype=np.int64)
    dropped = np.zeros(B, dtype=np.int64)
    hist = np.zeros((B, G + 1), dtype=np.int64)
    bias = np.zeros(E)
    mean = T * k / E
    choices = kept = None
    for b in range(B):
        w = np.roll(p, int(round(b * drift)) % E) * np.exp(bias - bias.max())   # relative bias (spec)
        choices = route_batch(w, noise(seed, b, T, E), k, G, M)
        kept = capacity_keep(choices, E, cap)
        flat = choices.ravel()
        loads[b] = np.bincount(flat, minlength=E)
        processed[b] = np.bincount(flat[kept.ravel()], minlength=E)
        dropped[b] = (~kept).sum()
        hist[b] = np.bincount(groups_touched(choices, E // G), minlength=G + 1)
        if bias_rate > 0:
            bias = np.where(loads[b] < mean, bias + bias_rate, np.where(loads[b] > mean, bias - bias_rate, bias))
    return loads, processed, dropped, hist, choices, kept, bias
