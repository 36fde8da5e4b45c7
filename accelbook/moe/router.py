"""Mixture-of-experts routing: which experts each token picks (a Numba kernel), batch after batch.

``n_batches`` batches of ``n_tokens`` tokens each pick ``top_k`` of ``n_experts`` routed experts
(:func:`simulate_routing`). Expert popularity is Zipf: ``p_e ∝ (e + 1)^(-skew)`` (``skew = 0`` is
uniform; expert 0 is the hottest), rolled by ``round(b·drift)`` places in batch ``b`` (hot experts
that drift). A token's affinity for expert ``e`` is ``r_e = w_e / x_e`` with
``w_e = p_e·exp(β_e - max β)`` and ``x_e`` Exp(1) noise (:mod:`accelbook.moe.noise`); its top-k (the
k largest ``r_e``, listed best first) is a draw of k experts without replacement in proportion to
``w`` (an exponential race, the same as the Gumbel-top-k trick on ``log w_e - log x_e``; top-1
picks ``e`` with probability exactly ``w_e / Σw``). Ties in affinity go to the lower expert index.

- **Balancing bias**: ``β_e`` only steers selection. With ``bias_rate = γ > 0``, after each batch
  ``β_e += γ·sign(mean load - load_e)`` (DeepSeek-V3's auxiliary-loss-free balancing).
- **Node limit**: with ``node_limit = M`` the experts form ``n_groups`` equal contiguous groups
  (nodes); each token first keeps the ``M`` groups with the largest sum of their best ``ceil(k/M)``
  log-affinities ``log r_e`` (ties to the lower group), then takes its top-k among those groups'
  experts (DeepSeek-V3's node-limited routing).
- **Capacity**: with ``capacity_factor = c`` each expert takes at most
  ``C = ceil(c·n_tokens·k/n_experts)`` assignments per batch (the product rounded to 9 decimals
  first, so 1.1 × 100 is 110, not 111), first come first served in the order (token, rank of the
  pick); the rest are dropped. The groups histogram counts the groups of every routed pick,
  dropped or not.
- Shared experts take every token and are not routed.

``tests/naive_moe.py`` is a vectorised NumPy reference written from this docstring; the kernel
agrees with it exactly. :func:`expected_load_stats` gives uniform routing's loads analytically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

from accelbook.checks import output, real, whole, within_budget

from .noise import token_key, uniform

#: the most experts, and the most router work (tokens × experts × batches) and memory (bytes) that
#: :func:`simulate_routing` takes on (about 10 s and 1 GiB); past them it refuses, saying so
MAX_EXPERTS = 2**20
MAX_ROUTING_WORK = 2e9
MAX_ROUTING_MEMORY_BYTES = 2**30


def popularity(n_experts: int, skew: float = 0.0) -> np.ndarray:
    """Zipf popularity ``p_e ∝ (e+1)^(-skew)``, summing to 1 (uniform at skew 0)."""
    E = whole("n_experts", n_experts)
    within_budget(f"popularity of {E:,} experts", E, MAX_EXPERTS, "experts", "accelbook.moe.router.MAX_EXPERTS")
    p = np.arange(1, E + 1, dtype=np.float64) ** (-real("skew", skew, 0.0, 10.0))
    return p / p.sum()


# -- the router kernel ---------------------------------------------------------------------------------------
# Bounds that spare most logarithms: 1 - u <= -log(u) <= (1 - u)/u, so
#   L_e = w·u/(1 - u)  <=  r_e = w/(-log u)  <=  U_e = w/(1 - u).
# The n-th largest L is a floor for the n-th largest r; an expert whose U is below that floor cannot
# be among the n best and needs no logarithm. SAFE absorbs rounding (it only keeps more candidates).
_SAFE = 1.0 + 1e-9


@njit(cache=True, inline="always")
def _insert(v, e, top, idx, n):
    """Insert value v (index e) into the descending top-n list if it beats the last (ties keep the earlier)."""
    if v > top[n - 1]:
        j = n - 1
        while j > 0 and v > top[j - 1]:
            top[j] = top[j - 1]
            idx[j] = idx[j - 1]
            j -= 1
        top[j] = v
        idx[j] = e


@njit(cache=True)
def _best(w, u, lo, hi, n, top, idx, floor, fidx):
    """The n largest affinities r_e = w_e/(-log u_e) over experts lo..hi-1, best first, into top/idx
    (ties to the lower index). Exact; a first pass finds the floor (the n-th largest lower bound),
    the second takes logarithms only for experts whose upper bound reaches it."""
    for j in range(n):
        floor[j] = -1.0
        top[j] = -1.0
        idx[j] = -1
    for e in range(lo, hi):
        if w[e] * u[e] > floor[n - 1] * (1.0 - u[e]):     # a division only for those that enter
            _insert(w[e] * u[e] / (1.0 - u[e]), e, floor, fidx, n)
    cut = floor[n - 1] / _SAFE
    for e in range(lo, hi):
        if w[e] * _SAFE < cut * (1.0 - u[e]):             # upper bound below the floor: cannot qualify
            continue
        _insert(w[e] / -math.log(u[e]), e, top, idx, n)


@njit(cache=True)
def _best_running(w, u, lo, hi, n, top, idx, allowed, n_groups_kept):
    """As :func:`_best`, in one pass against the running n-th best (cheaper for small n); experts of
    groups not kept (``allowed[e // per] == False``, when ``n_groups_kept`` > 0) are skipped."""
    per = (hi - lo) // allowed.shape[0] if n_groups_kept > 0 else 1
    for j in range(n):
        top[j] = -1.0
        idx[j] = -1
    for e in range(lo, hi):
        if n_groups_kept > 0 and not allowed[(e - lo) // per]:
            continue
        if w[e] * _SAFE <= top[n - 1] * (1.0 - u[e]):
            continue
        _insert(w[e] / -math.log(u[e]), e, top, idx, n)


@njit(cache=True)
def _best_above(w, u, lo, hi, n, top, idx, cut, cand, allowed, n_groups_kept):
    """As :func:`_best` (or, with ``n_groups_kept`` > 0, :func:`_best_running`'s groups filter) given a
    guess ``cut`` of the n-th largest affinity: logarithms only for experts whose upper bound
    ``w/(1 - u)`` reaches ``cut``. True if at least n affinities reach ``cut``: then every expert of the
    best n was a candidate and top/idx hold them exactly; False: the caller must redo it without a cut."""
    n_blocks = allowed.shape[0] if n_groups_kept > 0 else 1
    per = (hi - lo) // n_blocks
    m = 0
    for g in range(n_blocks):                             # the kept groups only, in expert order
        if n_groups_kept > 0 and not allowed[g]:
            continue
        for e in range(lo + g * per, lo + (g + 1) * per):  # branch-free gather of the candidates
            cand[m] = e
            m += w[e] * _SAFE >= cut * (1.0 - u[e])
    for j in range(n):
        top[j] = -1.0
        idx[j] = -1
    hits = 0
    for i in range(m):
        e = cand[i]
        r = w[e] / -math.log(u[e])
        if r >= cut:
            hits += 1
            _insert(r, e, top, idx, n)
    return hits >= n


@njit(cache=True, inline="always")
def _track(cuts, i, ok, nth):
    """Update guess ``cuts[i]`` of the n-th largest affinity so that about 3% of tokens miss it (a
    miss costs a second pass; a low guess costs logarithms). Only speed depends on it, never results."""
    if not ok:
        cuts[i] *= 0.9
    elif cuts[i] == 0.0:
        cuts[i] = 0.9 * nth
    else:
        cuts[i] *= 1.003


@njit(cache=True)
def _best_guessed(w, u, lo, hi, n, top, idx, allowed, n_groups_kept, cand, cuts, i, floor, fidx):
    """The n largest affinities over lo..hi-1 (exactly :func:`_best` / :func:`_best_running`), first
    trying the guess ``cuts[i]`` (:func:`_best_above`), which it updates."""
    ok = _best_above(w, u, lo, hi, n, top, idx, cuts[i], cand, allowed, n_groups_kept)
    if not ok:
        if n_groups_kept > 0:
            _best_running(w, u, lo, hi, n, top, idx, allowed, n_groups_kept)
        else:
            _best(w, u, lo, hi, n, top, idx, floor, fidx)
    _track(cuts, i, ok, top[n - 1])


@njit(cache=True)
def _pick(w, kb, k, n_groups, node_limit, out, u, top, best, besti, gscore, keep, floor, fidx, cand, cuts):
    """One token's top-k (module docstring): affinities r_e = w_e / x_e, x_e = -log(u_e); with a
    node limit, first keep the node_limit groups with the largest sum of their best ceil(k/M)
    log-affinities. The other arguments are scratch buffers; ``cuts`` holds guesses
    (:func:`_best_guessed`) of the k-th best (0), of each group's best (1 + g) and of the final pick."""
    E = w.shape[0]
    for e in range(E):
        u[e] = uniform(kb + np.uint64(e))
    if not (node_limit > 0 and node_limit < n_groups):
        _best_guessed(w, u, 0, E, k, top, out, keep, 0, cand, cuts, 0, floor, fidx)
        return
    per_group = E // n_groups
    pick = (k + node_limit - 1) // node_limit
    for g in range(n_groups):
        _best_running(w, u, g * per_group, (g + 1) * per_group, pick, best, besti, keep, 0)
        acc = 0.0
        for j in range(pick):
            acc += math.log(best[j])
        gscore[g] = acc
    for g in range(n_groups):
        keep[g] = False
    for m in range(node_limit):
        bg = -1
        for g in range(n_groups):
            if not keep[g] and (bg < 0 or gscore[g] > gscore[bg]):
                bg = g
        keep[bg] = True
    _best_guessed(w, u, 0, E, k, top, out, keep, node_limit, cand, cuts, 1 + n_groups, floor, fidx)


@njit(cache=True, parallel=True)
def _route(logp, n_tokens, k, n_batches, seed, drift, cap, bias_rate, n_groups, node_limit,
           loads, processed, dropped, groups_hist, choices, kept, bias):
    """Route ``n_batches`` batches (module docstring): each batch's picks in parallel over tokens,
    then capacity, loads and the groups histogram in token order. Fills, per batch b: loads[b, e]
    (assignments routed to e), processed[b, e] (kept after the capacity), dropped[b], groups_hist[b, j]
    (tokens touching j distinct groups); choices/kept (n_tokens, k) end with the last batch; bias."""
    E = logp.shape[0]
    per_group = E // n_groups
    p = np.exp(logp)
    w = np.empty(E)
    gseen = np.zeros(n_groups, dtype=np.int64)
    for b in range(n_batches):
        shift = int(np.round(b * drift)) % E
        bmax = bias.max()
        for e in range(E):
            w[e] = p[(e - shift) % E] * math.exp(bias[e] - bmax)   # only relative bias matters
        n_chunks = min(n_tokens, 32)
        for c in prange(n_chunks):          # each chunk of tokens with its own scratch buffers
            u = np.empty(E)
            top = np.empty(k)
            best = np.empty(k)
            besti = np.empty(k, dtype=np.int64)
            gscore = np.empty(n_groups)
            keep = np.zeros(n_groups, dtype=np.bool_)
            floor = np.empty(k)
            fidx = np.empty(k, dtype=np.int64)
            cand = np.empty(E, dtype=np.int64)
            cuts = np.zeros(n_groups + 2)
            for t in range(c * n_tokens // n_chunks, (c + 1) * n_tokens // n_chunks):
                _pick(w, token_key(seed, b, n_tokens, t, E), k, n_groups, node_limit, choices[t],
                      u, top, best, besti, gscore, keep, floor, fidx, cand, cuts)
        count = np.zeros(E, dtype=np.int64)
        gseen[:] = -1
        for t in range(n_tokens):
            n_seen = 0
            for j in range(k):
                e = choices[t, j]
                loads[b, e] += 1
                g = e // per_group
                if gseen[g] != t:
                    gseen[g] = t
                    n_seen += 1
                ok = cap < 0 or count[e] < cap
                if ok:
                    count[e] += 1
                    processed[b, e] += 1
                else:
                    dropped[b] += 1
                kept[t, j] = ok
            groups_hist[b, n_seen] += 1
        if bias_rate > 0.0:
            mean = n_tokens * k / E
            for e in range(E):
                if loads[b, e] < mean:
                    bias[e] += bias_rate
                elif loads[b, e] > mean:
                    bias[e] -= bias_rate


@dataclass(frozen=True)
class Routing:
    """What :func:`simulate_routing` returns (arrays per batch; ``choices``/``kept`` for the last)."""

    n_tokens: int
    n_experts: int
    top_k: int
    popularity: np.ndarray = field(repr=False)
    loads: np.ndarray = field(repr=False)          # (n_batches, E) assignments routed to each expert
    processed: np.ndarray = field(repr=False)      # (n_batches, E) kept after the capacity
    dropped: np.ndarray = field(repr=False)        # (n_batches,) assignments dropped
    groups_hist: np.ndarray = field(repr=False)    # (n_batches, n_groups + 1) tokens by groups touched
    choices: np.ndarray = field(repr=False)        # (n_tokens, k) expert ids, last batch
    kept: np.ndarray = field(repr=False)           # (n_tokens, k) bool, last batch
    bias: np.ndarray = field(repr=False)           # final balancing bias per expert
    capacity: int | None = None
    n_groups: int = 1
    n_shared: int = 0

    @property
    def n_batches(self) -> int:
        return self.loads.shape[0]

    @property
    def dropped_fraction(self) -> np.ndarray:
        """Per batch: dropped assignments / (tokens · k)."""
        return self.dropped / (self.n_tokens * self.top_k)

    @property
    def imbalance(self) -> np.ndarray:
        """Per batch: busiest expert's routed load / mean load (1 = perfectly balanced)."""
        return self.loads.max(axis=1) / (self.n_tokens * self.top_k / self.n_experts)

    @property
    def mean_groups_per_token(self) -> np.ndarray:
        j = np.arange(self.groups_hist.shape[1])
        return (self.groups_hist * j).sum(axis=1) / self.n_tokens

    def summary(self) -> dict:
        return {"imbalance_mean": float(self.imbalance.mean()), "imbalance_p95": float(np.quantile(self.imbalance, 0.95)),
                "dropped_fraction": float(self.dropped_fraction.mean()),
                "groups_per_token": float(self.mean_groups_per_token.mean()),
                "max_groups_per_token": int(np.flatnonzero(self.groups_hist.sum(axis=0)).max())}


def simulate_routing(n_tokens: int, n_experts: int, top_k: int, skew: float = 0.0,
                     capacity_factor: float | None = None, n_batches: int = 1, seed: int = 0, drift: float = 0.0,
                     bias_rate: float = 0.0, n_groups: int = 1, node_limit: int | None = None,
                     n_shared: int = 0) -> Routing:
    """Monte Carlo routing of ``n_batches`` batches of ``n_tokens`` tokens (module docstring).

    ``skew``: Zipf exponent of expert popularity (0 = uniform). ``capacity_factor``: None = no
    limit. ``drift``: experts the popularity ranking moves per batch. ``bias_rate``: γ of the
    bias-based balancing (0 = off). ``n_groups``/``node_limit``: node-limited routing (each token to
    experts on at most ``node_limit`` of ``n_groups`` groups). ``n_shared``: shared experts (every
    token; reported, not routed).
    """
    T, E, k = whole("n_tokens", n_tokens), whole("n_experts", n_experts), whole("top_k", top_k)
    B = whole("n_batches", n_batches)
    if k > E:
        raise ValueError(f"top_k = {k} cannot exceed n_experts = {E}")
    skew = real("skew", skew, 0.0, 10.0)
    drift = real("drift", drift, 0.0, float(E))
    bias_rate = real("bias_rate", bias_rate, 0.0, 10.0)
    seed = whole("seed", seed, 0)
    if seed >= 2**63:
        raise ValueError(f"seed must be below 2**63, got {seed}")
    G = whole("n_groups", n_groups)
    if E % G:
        raise ValueError(f"n_groups = {G} must divide n_experts = {E} (equal groups of experts per node)")
    M = 0
    if node_limit is not None:
        M = whole("node_limit", node_limit)
        if M > G:
            raise ValueError(f"node_limit = {M} cannot exceed n_groups = {G}")
        if M * (E // G) < k:
            raise ValueError(f"node_limit = {M} groups of {E // G} experts hold fewer than top_k = {k} experts")
    cap = -1
    if capacity_factor is not None:
        cf = real("capacity_factor", capacity_factor, 0.0, 1e6, lo_open=True)
        cap = math.ceil(round(cf * T * k / E, 9))
    whole("n_shared", n_shared, 0)
    within_budget(f"routing {T:,} tokens × {E:,} experts × {B:,} batches", float(T) * E * B, MAX_ROUTING_WORK,
                  "token-expert scores", "accelbook.moe.router.MAX_ROUTING_WORK")
    within_budget(f"routing {T:,} tokens (top-{k}) over {E:,} experts × {B:,} batches",
                  T * k * 9.0 + B * (2 * E + G + 2) * 8.0, MAX_ROUTING_MEMORY_BYTES, "bytes",
                  "accelbook.moe.router.MAX_ROUTING_MEMORY_BYTES")
    p = popularity(E, skew)
    loads = np.zeros((B, E), dtype=np.int64)
    processed = np.zeros((B, E), dtype=np.int64)
    dropped = np.zeros(B, dtype=np.int64)
    hist = np.zeros((B, G + 1), dtype=np.int64)
    choices = np.zeros((T, k), dtype=np.int64)
    kept = np.zeros((T, k), dtype=np.bool_)
    bias = np.zeros(E)
    _route(np.log(p), T, k, B, seed, drift, cap, bias_rate, G, M, loads, processed, dropped, hist, choices, kept, bias)
    return Routing(T, E, k, p, loads, processed, dropped, hist, choices, kept, bias,
                   None if cap < 0 else cap, G, n_shared)


def expected_load_stats(n_tokens: int, n_experts: int, top_k: int) -> dict:
    """Uniform routing, analytic: each expert is picked by each token with probability k/E,
    independently across tokens, so its load is Binomial(T, k/E): mean T·k/E, variance
    T·(k/E)·(1 - k/E). ``top_k`` may not exceed ``n_experts`` (a token picks distinct experts)."""
    T, E, k = whole("n_tokens", n_tokens), whole("n_experts", n_experts), whole("top_k", top_k)
    if k > E:
        raise ValueError(f"top_k = {k} cannot exceed n_experts = {E}: a token picks {k} distinct experts")
    q = k / E
    return {"mean": output("expected_load_stats mean", T * q), "var": output("expected_load_stats var", T * q * (1 - q))}
