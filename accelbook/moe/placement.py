"""Where the experts live, and the traffic that routing makes between chips.

**Placement** (:func:`place_experts`): contiguous (expert ``e`` on chip ``e·chips // E``),
round-robin (``e mod chips``), or hot experts replicated on the least-loaded chips (a token uses
replica ``t mod r`` of an expert with ``r`` replicas). With more chips than experts every expert
gets ``chips/E`` copies. :func:`chip_loads` splits each expert's processed load over its replicas.

**Dispatch traffic** (:func:`dispatch_traffic`, kernel ``_dispatch``): tokens live on chips in
contiguous blocks (token ``t`` on chip ``t·chips // T``); a token sends one copy of its hidden
vector (``d_model·bytes``) to each *distinct* chip hosting one of its kept experts (several experts
on one chip share the copy); the combine step sends the results back (the transpose).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from accelbook.checks import instance, one_of, output, positive, whole

from .router import Routing


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
    E, C = whole("n_experts", n_experts), whole("n_chips", n_chips)
    one_of("scheme", scheme, PLACEMENTS)
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
    hot, R = whole("hot", hot, 0), whole("replicas", replicas)
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
    routing = instance("routing", routing, Routing)
    placement = instance("placement", placement, Placement)
    if placement.replicas.shape[0] != routing.n_experts:
        raise ValueError(f"the placement is for {placement.replicas.shape[0]} experts, the routing has {routing.n_experts}")
    b = whole("batch", batch, -routing.loads.shape[0])
    if b >= routing.loads.shape[0]:
        raise ValueError(f"batch must be below the {routing.loads.shape[0]} batches routed (or negative), got {b}")
    w = routing.processed[b].astype(float)
    out = np.zeros(placement.n_chips)
    nrep = placement.n_replicas
    for r in range(placement.replicas.shape[1]):
        has = placement.replicas[:, r] >= 0
        np.add.at(out, placement.replicas[has, r], w[has] / nrep[has])
    return out


# -- dispatch traffic -------------------------------------------------------------------------------------
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
    routing = instance("routing", routing, Routing)
    placement = instance("placement", placement, Placement)
    positive("bytes_per_token", bytes_per_token)
    C = placement.n_chips
    if routing.n_tokens % C:
        raise ValueError(f"{routing.n_tokens} tokens do not split evenly over {C} chips")
    if placement.replicas.shape[0] != routing.n_experts:
        raise ValueError(f"the placement is for {placement.replicas.shape[0]} experts, the routing has {routing.n_experts}")
    demand = np.zeros((C, C))
    distinct = np.zeros(routing.n_tokens, dtype=np.int64)
    _dispatch(routing.choices, routing.kept, placement.replicas, placement.n_replicas, C, demand, distinct)
    with np.errstate(over="ignore"):
        demand *= bytes_per_token
    output(f"dispatch_traffic demand (bytes_per_token = {bytes_per_token!r})", demand)
    total_copies = distinct.sum()
    return {"demand": demand, "sent": demand.sum(axis=1), "received": demand.sum(axis=0),
            "total_bytes": float(demand.sum()), "copies_per_token": float(distinct.mean()),
            "remote_share": float(demand.sum() / bytes_per_token / total_copies) if total_copies else 0.0}
