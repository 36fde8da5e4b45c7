"""Mixture-of-experts routing, expert placement, and the all-to-all traffic it makes.

``from accelbook import moe`` gives the whole public API; the modules, in the order a token meets them:

- :mod:`~accelbook.moe.noise`: the router's Exp(1) noise, a counter-based hash (SplitMix64 of
  (seed, batch, token, expert)) that the kernel and NumPy draw identically (:func:`exp_noise`);
- :mod:`~accelbook.moe.router`: the Numba router (:func:`simulate_routing`, returning a
  :class:`Routing`): Zipf popularity (:func:`popularity`) that may drift, top-k by an exponential
  race, DeepSeek-V3's bias balancing and node limit, expert capacity;
  :func:`expected_load_stats` for uniform routing;
- :mod:`~accelbook.moe.placement`: experts onto chips (:func:`place_experts`, :class:`Placement`,
  :data:`PLACEMENTS`), load per chip (:func:`chip_loads`), the chip-to-chip bytes of one dispatch
  (:func:`dispatch_traffic`);
- :mod:`~accelbook.moe.alltoall`: that traffic timed on a network (:func:`all_to_all_time`,
  :class:`AllToAll`), uniform routing's expected traffic (:func:`uniform_demand`), where latency
  gives way to bandwidth (:func:`crossover_sweep`), networks with equal injection bandwidth
  (:func:`equal_injection`, :func:`chip_degree`).
"""

from __future__ import annotations

from .alltoall import (
    CAE_OVERHEAD_S,
    MESSAGE_OVERHEAD_S,
    AllToAll,
    all_to_all_time,
    chip_degree,
    crossover_sweep,
    equal_injection,
    uniform_demand,
)
from .noise import GOLDEN, MIX1, MIX2, SEED_MULT, exp_noise
from .placement import PLACEMENTS, Placement, chip_loads, dispatch_traffic, place_experts
from .router import Routing, expected_load_stats, popularity, simulate_routing

__all__ = [
    "exp_noise", "GOLDEN", "MIX1", "MIX2", "SEED_MULT", "popularity", "simulate_routing", "Routing", "expected_load_stats",
    "PLACEMENTS", "Placement", "place_experts", "chip_loads", "dispatch_traffic",
    "MESSAGE_OVERHEAD_S", "CAE_OVERHEAD_S", "AllToAll", "all_to_all_time", "uniform_demand", "crossover_sweep",
    "equal_injection", "chip_degree",
]
