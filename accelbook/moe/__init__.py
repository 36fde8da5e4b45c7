"""Mixture-of-experts routing, expert placement, and the all-to-all traffic it makes.

**Routing** (:func:`simulate_routing`, a Numba kernel). ``n_batches`` batches of ``n_tokens``
tokens each pick ``top_k`` of ``n_experts`` routed experts. Expert popularity is Zipf:
``p_e ∝ (e + 1)^(-skew)`` (``skew = 0`` is uniform; expert 0 is the hottest), rolled by
``round(b·drift)`` places in batch ``b`` (hot experts that drift). A token's affinity for expert
``e`` is ``r_e = w_e / x_e`` with ``w_e = p_e·exp(β_e - max β)`` and ``x_e`` Exp(1) noise; its top-k
(the k largest ``r_e``, listed best first) is a draw of k experts without replacement in proportion
to ``w`` (an exponential
race, the same as the Gumbel-top-k trick on ``log w_e - log x_e``; top-1 picks ``e`` with
probability exactly ``w_e / Σw``). The bias ``β_e`` only steers selection: with ``bias_rate = γ > 0``,
after each batch ``β_e += γ·sign(mean load - load_e)`` (DeepSeek-V3's auxiliary-loss-free
balancing). With ``node_limit = M`` the experts form ``n_groups`` equal contiguous groups (nodes);
each token first keeps the ``M`` groups with the largest sum of their best ``ceil(k/M)``
log-affinities ``log r_e`` (ties to the lower group), then takes its top-k among those groups'
experts (DeepSeek-V3's node-limited routing).
With ``capacity_factor = c`` each expert takes at most ``C = ceil(c·n_tokens·k/n_experts)``
assignments per batch (the product rounded to 9 decimals first, so 1.1 × 100 is 110, not 111),
first come first served in the order (token, rank of the pick); the rest are dropped. The
groups histogram counts the groups of every routed pick, dropped or not.
Shared experts take every token and are not routed.

The noise is a counter-based hash, not a random stream: ``x(seed, b, t, e) = -log(u)`` with ``u``
from SplitMix64 of the key ``((seed·1,000,003 + b)·n_tokens + t)·n_experts + e`` (uint64
arithmetic, wrapping), ``u = (top 53 bits + 0.5) / 2^53``. The kernel and a vectorised
NumPy reference therefore draw identical numbers and must give identical results; notebooks are
reproducible from the seed. Ties in affinity go to the lower expert index.

**Placement** (:func:`place_experts`): contiguous (experts ``e·chips/E``), round-robin
(``e mod chips``), or hot experts replicated on the least-loaded chips (a token uses replica
``t mod r`` of an expert with ``r`` replicas).

**Traffic** (:func:`dispatch_traffic`): tokens live on chips in contiguous blocks; a token sends one
copy of its hidden vector (``d_model·bytes``) to each *distinct* chip hosting one of its kept
experts (several experts on one chip share the copy); the combine step sends the results back (the
transpose). All-to-all time on a network (:func:`all_to_all_time`) is the busiest link's bytes over
its bandwidth, routed over all shortest paths (``topology.link_loads`` with a demand matrix), plus
the diameter times the per-hop latency plus a per-message software overhead for each peer a chip
talks to. A collective acceleration engine (``cae=True``) cuts the per-message overhead and
reduces the combine in the network, so each token's results arrive as one vector.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit, prange

from accelbook.network import topology as _topology

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
SEED_MULT = 1_000_003


# -- the noise: a counter-based hash shared by the kernel and the NumPy reference ---------------------------
def exp_noise(seed: int, batch: int, n_tokens: int, n_experts: int) -> np.ndarray:
    """The (n_tokens, n_experts) Exp(1) noise ``x = -log(u)`` of one batch, vectorised: the same
    numbers the kernel draws (SplitMix64 of the key, module docstring)."""
    base = (np.uint64(seed) * np.uint64(SEED_MULT) + np.uint64(batch)) * np.uint64(n_tokens)
    t = np.arange(n_tokens, dtype=np.uint64)[:, None]
    e = np.arange(n_experts, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        z = (base + t) * np.uint64(n_experts) + e + GOLDEN
        z = (z ^ (z >> np.uint64(30))) * MIX1
        z = (z ^ (z >> np.uint64(27))) * MIX2
        z = z ^ (z >> np.uint64(31))
    u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 9007199254740992.0)
    return -np.log(u)


def popularity(n_experts: int, skew: float = 0.0) -> np.ndarray:
    """Zipf popularity ``p_e ∝ (e+1)^(-skew)``, summing to 1 (uniform at skew 0)."""
    p = np.arange(1, n_experts + 1, dtype=np.float64) ** (-float(skew))
    return p / p.sum()


# -- the router kernel ---------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _uniform(key):
    """u in (0, 1) from SplitMix64 of ``key`` (the noise is x = -log(u); see :func:`exp_noise`)."""
    z = key + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (float(z >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)


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
def _pick(w, kb, k, n_groups, node_limit, out, u, top, best, besti, gscore, keep, floor, fidx):
    """One token's top-k (module docstring): affinities r_e = w_e / x_e, x_e = -log(u_e); with a
    node limit, first keep the node_limit groups with the largest sum of their best ceil(k/M)
    log-affinities. The other arguments are scratch buffers."""
    E = w.shape[0]
    for e in range(E):
        u[e] = _uniform(kb + np.uint64(e))
    if not (node_limit > 0 and node_limit < n_groups):
        _best(w, u, 0, E, k, top, out, floor, fidx)
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
    _best_running(w, u, 0, E, k, top, out, keep, node_limit)


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
        base = (np.uint64(seed) * np.uint64(1000003) + np.uint64(b)) * np.uint64(n_tokens)
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
            for t in range(c * n_tokens // n_chunks, (c + 1) * n_tokens // n_chunks):
                _pick(w, (base + np.uint64(t)) * np.uint64(E), k, n_groups, node_limit, choices[t],
                      u, top, best, besti, gscore, keep, floor, fidx)
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


def _whole(name, v, lo=1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    return int(v)


def _real(name, v, lo=0.0, hi=math.inf, lo_open=False) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < lo or v > hi \
            or (lo_open and v == lo):
        rng = f"({lo}, {hi}]" if lo_open else f"[{lo}, {hi}]"
        raise ValueError(f"{name} must be a number in {rng}, got {v!r}")
    return float(v)


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
    T, E, k = _whole("n_tokens", n_tokens), _whole("n_experts", n_experts), _whole("top_k", top_k)
    B = _whole("n_batches", n_batches)
    if k > E:
        raise ValueError(f"top_k = {k} cannot exceed n_experts = {E}")
    skew = _real("skew", skew, 0.0, 10.0)
    drift = _real("drift", drift, 0.0, float(E))
    bias_rate = _real("bias_rate", bias_rate, 0.0, 10.0)
    seed = _whole("seed", seed, 0)
    if seed >= 2**63:
        raise ValueError(f"seed must be below 2**63, got {seed}")
    G = _whole("n_groups", n_groups)
    if E % G:
        raise ValueError(f"n_groups = {G} must divide n_experts = {E} (equal groups of experts per node)")
    M = 0
    if node_limit is not None:
        M = _whole("node_limit", node_limit)
        if M > G:
            raise ValueError(f"node_limit = {M} cannot exceed n_groups = {G}")
        if M * (E // G) < k:
            raise ValueError(f"node_limit = {M} groups of {E // G} experts hold fewer than top_k = {k} experts")
    cap = -1
    if capacity_factor is not None:
        cf = _real("capacity_factor", capacity_factor, 0.0, 1e6, lo_open=True)
        cap = math.ceil(round(cf * T * k / E, 9))
    _whole("n_shared", n_shared, 0)
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
    T·(k/E)·(1 - k/E)."""
    q = top_k / n_experts
    return {"mean": n_tokens * q, "var": n_tokens * q * (1 - q)}


# -- placement ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    """Which chips hold each expert: ``replicas[e, r]`` (−1 pads experts with fewer replicas)."""

    scheme: str
    n_chips: int
    replicas: np.ndarray = field(repr=False)

    @property
    def n_replicas(self) -> np.ndarray:
        return (self.replicas >= 0).sum(axis=1)

    def experts_per_chip(self) -> np.ndarray:
        return np.bincount(self.replicas[self.replicas >= 0], minlength=self.n_chips)


PLACEMENTS = ("contiguous", "round_robin", "replicate_hot")


def place_experts(n_experts: int, n_chips: int, scheme: str = "contiguous", hot: int = 0, replicas: int = 2,
                  loads: np.ndarray | None = None) -> Placement:
    """Experts onto ``n_chips`` chips (the expert-parallel group).

    ``contiguous``: expert e on chip ``e·chips // E`` (a node holds a block of experts, as
    node-limited routing assumes); ``round_robin``: ``e mod chips``; ``replicate_hot``: contiguous,
    plus ``replicas - 1`` extra copies of each of the ``hot`` most loaded experts (by ``loads``,
    default: expert index order) on the chips with the least load so far. With more chips than
    experts (a multiple of them), every expert gets chips/E copies and ``scheme``, ``hot`` and
    ``replicas`` do not apply.
    """
    E, C = _whole("n_experts", n_experts), _whole("n_chips", n_chips)
    if scheme not in PLACEMENTS:
        raise ValueError(f"scheme must be one of {PLACEMENTS}, got {scheme!r}")
    if C > E:   # more chips than experts: every expert on C/E chips (serving's "redundant experts")
        if C % E:
            raise ValueError(f"{C} chips for {E} experts: with more chips than experts the chip count must be "
                             "a multiple of the expert count, so that every expert gets the same number of copies")
        r = C // E
        return Placement("replicated x" + str(r), C, (np.arange(E)[:, None] + E * np.arange(r)[None, :]).astype(np.int64))
    e = np.arange(E)
    home = (e * C) // E if scheme != "round_robin" else e % C
    if scheme != "replicate_hot":
        return Placement(scheme, C, home[:, None].copy())
    hot, R = _whole("hot", hot, 0), _whole("replicas", replicas)
    if hot > E:
        raise ValueError(f"hot = {hot} exceeds the {E} experts")
    if R > C:
        raise ValueError(f"replicas = {R} exceeds the {C} chips: each copy needs its own chip")
    w = np.ones(E) if loads is None else np.asarray(loads, dtype=float)
    if w.shape != (E,):
        raise ValueError(f"loads must have one value per expert ({E}), got shape {w.shape}")
    order = np.argsort(-w, kind="stable")[:hot]
    rep = np.full((E, R), -1, dtype=np.int64)
    rep[:, 0] = home
    chip_load = np.bincount(home, weights=w, minlength=C).astype(float)
    for x in order:
        share = w[x] / R
        chip_load[home[x]] -= w[x] - share
        for r in range(1, R):
            cands = np.argsort(chip_load, kind="stable")
            c = next(c for c in cands if c not in rep[x, :r])
            rep[x, r] = c
            chip_load[c] += share
    return Placement(scheme, C, rep)


def chip_loads(routing: Routing, placement: Placement, batch: int = -1) -> np.ndarray:
    """Assignments processed per chip in one batch (an expert's load split over its replicas)."""
    w = routing.processed[batch].astype(float)
    out = np.zeros(placement.n_chips)
    nrep = placement.n_replicas
    for r in range(placement.replicas.shape[1]):
        has = placement.replicas[:, r] >= 0
        np.add.at(out, placement.replicas[has, r], w[has] / nrep[has])
    return out


# -- traffic ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _dispatch(choices, kept, replicas, n_rep, n_chips, demand, distinct):
    """Dispatch copies between chips: token t on chip t·chips//T sends one copy to each distinct
    chip hosting one of its kept experts (replica t mod r). demand[src, dst] counts copies;
    distinct[t] = distinct destination chips of token t (itself included)."""
    T, k = choices.shape
    seen = np.full(n_chips, -1, dtype=np.int64)
    for t in range(T):
        src = (t * n_chips) // T
        nd = 0
        for j in range(k):
            if not kept[t, j]:
                continue
            e = choices[t, j]
            dst = replicas[e, t % n_rep[e]]
            if seen[dst] != t:
                seen[dst] = t
                nd += 1
                if dst != src:
                    demand[src, dst] += 1.0
        distinct[t] = nd


def dispatch_traffic(routing: Routing, placement: Placement, bytes_per_token: float) -> dict:
    """Bytes between chips for one dispatch (the last batch); combine is its transpose.

    Returns ``demand`` (chips × chips bytes), ``sent``/``received`` per chip, ``total_bytes``,
    ``copies_per_token`` (mean distinct destination chips) and ``remote_share`` (copies that
    leave their chip / all copies)."""
    if not (isinstance(bytes_per_token, numbers.Real) and bytes_per_token > 0):
        raise ValueError(f"bytes_per_token must be > 0, got {bytes_per_token!r}")
    C = placement.n_chips
    if routing.n_tokens % C:
        raise ValueError(f"{routing.n_tokens} tokens do not split evenly over {C} chips")
    if placement.replicas.shape[0] != routing.n_experts:
        raise ValueError(f"the placement is for {placement.replicas.shape[0]} experts, the routing has {routing.n_experts}")
    demand = np.zeros((C, C))
    distinct = np.zeros(routing.n_tokens, dtype=np.int64)
    _dispatch(routing.choices, routing.kept, placement.replicas, placement.n_replicas, C, demand, distinct)
    demand *= bytes_per_token
    total_copies = distinct.sum()
    return {"demand": demand, "sent": demand.sum(axis=1), "received": demand.sum(axis=0),
            "total_bytes": float(demand.sum()), "copies_per_token": float(distinct.mean()),
            "remote_share": float(demand.sum() / bytes_per_token / total_copies) if total_copies else 0.0}


# -- all-to-all time on a network ---------------------------------------------------------------------------
MESSAGE_OVERHEAD_S = 2e-6      # software cost per peer message (order of magnitude; see the notebook)
CAE_OVERHEAD_S = 0.2e-6        # the what-if: an engine that issues messages in hardware


@dataclass(frozen=True)
class AllToAll:
    time_s: float
    bandwidth_s: float
    latency_s: float
    overhead_s: float
    max_link_bytes: float
    diameter: int
    peers: int


def chip_degree(topo) -> float:
    """Mean number of links at a chip (a torus chip has 6, a switched one 1)."""
    deg = np.diff(topo.indptr)[: topo.n_endpoints]
    return float(deg.mean())


def equal_injection(topo, chip_bw_bytes_per_s: float, hop_latency_s: float = 1e-6):
    """The network with every link at ``chip_bw / (links per chip)``: each chip can inject the same
    total bandwidth whatever the topology, so a comparison is of topology, not of link budget."""
    return topo.with_links(chip_bw_bytes_per_s / chip_degree(topo), hop_latency_s, 1.0)


def all_to_all_time(demand: np.ndarray, topo, message_overhead_s: float = MESSAGE_OVERHEAD_S) -> AllToAll:
    """Time of one all-to-all with ``demand[src, dst]`` bytes: busiest link's bytes ÷ (η·B) over
    minimal routing, plus diameter × hop latency, plus a per-peer message overhead × the most
    peers any chip talks to."""
    demand = np.asarray(demand, dtype=float)
    if demand.shape != (topo.n_endpoints, topo.n_endpoints):
        raise ValueError(f"demand must be {topo.n_endpoints}×{topo.n_endpoints} for {topo.name}, got {demand.shape}")
    if topo.link_bw_bytes_per_s is None:
        raise ValueError(f"{topo.name} has no link bandwidth: use topology.with_links(...)")
    load = _topology.link_loads(topo, demand)
    diam = _topology.hop_stats(topo)["diameter"]
    peers = int(((demand > 0).sum(axis=1)).max()) if demand.any() else 0
    bw = float(load.max()) / (topo.efficiency * topo.link_bw_bytes_per_s)
    lat = diam * topo.hop_latency_s if peers else 0.0
    ovh = peers * message_overhead_s
    return AllToAll(bw + lat + ovh, bw, lat, ovh, float(load.max()), int(diam), peers)


def uniform_demand(n_chips: int, tokens_per_chip: float, top_k: int, bytes_per_token: float,
                   experts_per_chip: float = 1.0) -> np.ndarray:
    """Expected dispatch demand with uniform routing: each token's copies spread evenly over the
    other chips (``copies`` = expected distinct chips of k picks among the experts)."""
    C = n_chips
    if experts_per_chip >= 1:
        # expected distinct chips hit by k draws without replacement among E experts, epc per chip
        E, epc = int(round(C * experts_per_chip)), int(round(experts_per_chip))
        miss = math.comb(E - epc, top_k) / math.comb(E, top_k) if E - epc >= top_k else 0.0
        copies = C * (1 - miss)
    else:   # fewer experts than chips: each of the k experts is reached on one of its replicas
        copies = float(top_k)
    per_pair = tokens_per_chip * copies / C * bytes_per_token
    d = np.full((C, C), per_pair)
    np.fill_diagonal(d, 0.0)
    return d


def crossover_sweep(networks: dict, tokens_per_chip, top_k: int, bytes_per_token: float,
                    experts_per_chip: float = 1.0, cae: bool = False,
                    message_overhead_s: float | None = None) -> pd.DataFrame:
    """All-to-all (dispatch + combine) time against tokens per chip on each network, with uniform
    routing (expected traffic): where the latency terms (diameter × hop latency, plus a per-message
    overhead for each peer actually sent to) give way to bandwidth (the busiest link's bytes).
    ``networks``: name -> Topology with links. ``cae``: the collective-acceleration what-if."""
    from accelbook.network.collectives import uniform_all_to_all_load_and_diameter  # cached per graph

    rows = []
    o = message_overhead_s if message_overhead_s is not None else MESSAGE_OVERHEAD_S
    if cae:
        o = min(o, CAE_OVERHEAD_S)
    for name, topo in networks.items():
        C = topo.n_endpoints
        unit = uniform_demand(C, 1.0, top_k, bytes_per_token, experts_per_chip)
        per_pair = unit[0, 1] if C > 1 else 0.0                  # bytes per pair per token per chip
        remote_copies = unit.sum() / (C * bytes_per_token)       # copies a token sends off its chip
        load, diam = uniform_all_to_all_load_and_diameter(topo)            # busiest link, one unit per pair
        bw1 = load * per_pair / (topo.efficiency * topo.link_bw_bytes_per_s)
        for tpc in tokens_per_chip:
            bw = bw1 * tpc
            # in-network reduction: a token's results arrive as one vector instead of one per chip
            comb = bw / max(remote_copies, 1.0) if cae else bw
            # peers a chip talks to: distinct chips hit by tpc·copies uniform picks among the C-1 others
            peers = (C - 1) * (1.0 - (1.0 - 1.0 / (C - 1)) ** (tpc * remote_copies)) if C > 1 else 0.0
            fixed = diam * topo.hop_latency_s + peers * o
            t = 2 * fixed + bw + comb
            rows.append({"network": name, "tokens_per_chip": float(tpc), "time_s": t, "bandwidth_s": bw + comb,
                         "latency_s": 2 * fixed, "peers": peers, "diameter": int(diam),
                         "bound": "bandwidth" if bw + comb > 2 * fixed else "latency"})
    return pd.DataFrame(rows)
