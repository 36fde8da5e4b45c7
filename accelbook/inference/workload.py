"""Serving workloads: requests in arrival order (:class:`ServingWorkload`) and the seeded generator
:func:`workload` (gamma inter-arrivals, fixed, uniform or lognormal prompt and output lengths). The
rules are in :mod:`accelbook.inference.serving`'s docstring, under **Workload**."""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from accelbook.checks import at_most, positive_array, real, whole


@dataclass(frozen=True)
class ServingWorkload:
    """Requests in arrival order: ``arrival_s`` (non-decreasing, >= 0), ``prompt_len`` and
    ``output_len`` (whole numbers >= 1); optionally a shared prefix per request, ``prefix_id``
    (-1 for none, else 0, 1, ...) and ``prefix_len`` (its tokens, below ``prompt_len``; 0 for none;
    one length per id). Without them no request shares a prefix."""

    arrival_s: np.ndarray = field(repr=False)
    prompt_len: np.ndarray = field(repr=False)
    output_len: np.ndarray = field(repr=False)
    prefix_len: np.ndarray | None = field(default=None, repr=False)
    prefix_id: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        a = positive_array("arrival_s", self.arrival_s, allow_zero=True).ravel()   # text, None: named
        if a.size == 0:
            raise ValueError("arrival_s must hold at least one request")
        if not np.all(np.isfinite(a)) or a.min() < 0:
            raise ValueError("arrival_s must be finite and >= 0")
        if np.any(np.diff(a) < 0):
            raise ValueError("arrival_s must be non-decreasing (requests in arrival order)")
        arrays = {"arrival_s": a}
        for name in ("prompt_len", "output_len"):
            raw = np.asarray(getattr(self, name)).ravel()
            if raw.dtype == object:
                raise ValueError(f"{name} must hold whole numbers >= 1, got {getattr(self, name)!r}"[:200])
            if raw.shape != a.shape:
                raise ValueError(f"{name} must have one value per request ({a.size}), got shape {raw.shape}")
            if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating)):
                raise ValueError(f"{name} must hold whole numbers >= 1")
            if np.issubdtype(raw.dtype, np.floating) and (not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw))):
                raise ValueError(f"{name} must hold whole numbers >= 1")
            v = raw.astype(np.int64)
            if v.min() < 1:
                raise ValueError(f"{name} must hold whole numbers >= 1, got {v.min()}")
            arrays[name] = v
        arrays.update(_prefixes(self.prefix_len, self.prefix_id, arrays["prompt_len"]))
        for k, v in arrays.items():
            v.setflags(write=False)
            object.__setattr__(self, k, v)

    @classmethod
    def _generated(cls, arrival_s, prompt_len, output_len, prefix_len, prefix_id) -> ServingWorkload:
        """The generator's workload (:func:`workload`): lengths, prefixes and their dtypes are right by
        construction, so only the arrivals are checked (a tiny rate can make them overflow)."""
        if not np.all(np.isfinite(arrival_s)):
            raise ValueError("arrival_s must be finite and >= 0")
        w = object.__new__(cls)
        for k, v in (("arrival_s", arrival_s), ("prompt_len", prompt_len), ("output_len", output_len),
                     ("prefix_len", prefix_len), ("prefix_id", prefix_id)):
            v.setflags(write=False)
            object.__setattr__(w, k, v)
        return w

    @property
    def n(self) -> int:
        return int(self.arrival_s.size)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"arrival_s": self.arrival_s, "prompt_len": self.prompt_len, "output_len": self.output_len,
                             "prefix_len": self.prefix_len, "prefix_id": self.prefix_id})


def _prefixes(prefix_len, prefix_id, prompt):
    """Checked ``prefix_len`` and ``prefix_id`` arrays (zeros and -1 when both are None)."""
    n = prompt.size
    if prefix_len is None and prefix_id is None:
        return {"prefix_len": np.zeros(n, dtype=np.int64), "prefix_id": np.full(n, -1, dtype=np.int64)}
    out = {}
    for name, v in (("prefix_len", prefix_len), ("prefix_id", prefix_id)):
        raw = np.asarray(v).ravel() if v is not None else None
        if raw is None or raw.shape != prompt.shape or not np.issubdtype(raw.dtype, np.integer) or raw.dtype == bool:
            raise ValueError(f"{name} must hold one whole number per request ({n}), given with the other")
        out[name] = raw.astype(np.int64)
    L, q = out["prefix_len"], out["prefix_id"]
    if q.min() < -1 or np.any((q == -1) != (L == 0)) or L.min() < 0 or np.any(L >= prompt):
        raise ValueError("prefix_len must be 0 where prefix_id is -1, and between 1 and prompt_len - 1 where "
                         "prefix_id >= 0")
    for pid in np.unique(q[q >= 0]):
        if np.unique(L[q == pid]).size > 1:
            raise ValueError(f"prefix_id {pid} has more than one prefix_len")
    return out


LENGTH_KINDS = ("fixed", "uniform", "lognormal")
#: bounds on a workload (memory: a few int64 arrays of ``n_requests``; lengths: far past any context)
MAX_REQUESTS = 2**22
MAX_LEN = 2**26
_WHERE = "accelbook.inference.workload.MAX_LEN"


def _lengths(name, spec, n, rng) -> np.ndarray:
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        spec = ("fixed", spec)
    if not isinstance(spec, (tuple, list)) or not spec or spec[0] not in LENGTH_KINDS:
        raise ValueError(f"{name} must be ('fixed', n), ('uniform', lo, hi) or ('lognormal', mean, sigma[, max]), "
                         f"got {spec!r}")
    kind, args = spec[0], tuple(spec[1:])
    if kind == "fixed":
        if len(args) != 1:
            raise ValueError(f"{name}: ('fixed', n) takes one number, got {spec!r}")
        return np.full(n, at_most(f"{name} length", whole(f"{name} length", args[0]), MAX_LEN, _WHERE), dtype=np.int64)
    if kind == "uniform":
        if len(args) != 2:
            raise ValueError(f"{name}: ('uniform', lo, hi) takes two numbers, got {spec!r}")
        lo = at_most(f"{name} lo", whole(f"{name} lo", args[0]), MAX_LEN, _WHERE)
        hi = at_most(f"{name} hi", whole(f"{name} hi", args[1]), MAX_LEN, _WHERE)
        if hi < lo:
            raise ValueError(f"{name}: hi = {hi} is below lo = {lo}")
        return rng.integers(lo, hi + 1, size=n).astype(np.int64)
    if len(args) not in (2, 3):
        raise ValueError(f"{name}: ('lognormal', mean, sigma[, max]) takes two or three numbers, got {spec!r}")
    mean = real(f"{name} mean", args[0], 1.0, 1e9)
    sigma = real(f"{name} sigma", args[1], 0.0, 5.0)
    mx = at_most(f"{name} max", whole(f"{name} max", args[2]), MAX_LEN, _WHERE) if len(args) == 3 else MAX_LEN
    x = rng.lognormal(math.log(mean) - sigma**2 / 2, sigma, size=n)
    return np.clip(np.rint(x), 1, mx).astype(np.int64)


def _draw(n: int, shape: float, prompt, output, seed: int, prefix):
    """The generator's random draws in its order (inter-arrival times of mean ``shape``, i.e. before
    dividing by ``shape·rate``; prompt and output lengths; then the prefix shares and ids), as read-only
    arrays ``(gamma, prompt_len, output_len, prefix_len, prefix_id)``: the same at every rate."""
    rng = np.random.default_rng(seed)
    gamma = rng.standard_gamma(shape, size=n)
    p = _lengths("prompt", prompt, n, rng)
    o = _lengths("output", output, n, rng)
    if prefix is None:
        out = (gamma, p, o, np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64))
    else:
        if not isinstance(prefix, (tuple, list)) or len(prefix) not in (2, 3):
            raise ValueError(f"prefix must be (length, share[, n_prefixes]), got {prefix!r}")
        length = at_most("prefix length", whole("prefix length", prefix[0]), MAX_LEN, _WHERE)
        share = real("prefix share", prefix[1], 0.0, 1.0)
        k = at_most("prefix n_prefixes", whole("prefix n_prefixes", prefix[2]), MAX_REQUESTS,
                    "accelbook.inference.workload.MAX_REQUESTS") if len(prefix) == 3 else 1
        shares = rng.random(n) < share
        ids = np.where(shares, rng.integers(0, k, size=n), -1).astype(np.int64)
        plen = np.where(shares, length, 0).astype(np.int64)
        out = (gamma, p + plen, o, plen, ids)
    for v in out:
        v.setflags(write=False)
    return out


#: runs of at most this many requests keep their draws (by seed and specs), a few hundred kB at most
_REMEMBER_UP_TO = 4096
_draw_remembered = functools.lru_cache(maxsize=64)(_draw)


def workload(n_requests: int, rate_per_s: float, arrival: str = "poisson", burstiness: float = 1.0,
             prompt=("fixed", 512), output=("fixed", 128), seed: int = 0, prefix=None) -> ServingWorkload:
    """``n_requests`` requests at ``rate_per_s`` (:mod:`accelbook.inference.serving`'s docstring).
    ``arrival``: "poisson" or "bursty" (gamma inter-arrivals with coefficient of variation
    ``burstiness``). ``prompt`` / ``output``: a whole number, ``("fixed", n)``, ``("uniform", lo, hi)``
    or ``("lognormal", mean, sigma[, max])``. ``prefix``: ``(length, share[, n_prefixes])``, a system
    prompt of ``length`` tokens before the drawn prompt of a fraction ``share`` of the requests, one
    of ``n_prefixes`` (default 1) at random. Small runs remember their draws by seed and specs (a load
    sweep redraws nothing: the same seed at another rate only rescales the arrivals)."""
    n = at_most("n_requests", whole("n_requests", n_requests), MAX_REQUESTS,
                "accelbook.inference.workload.MAX_REQUESTS")
    rate = real("rate_per_s", rate_per_s, 0.0, 1e12, lo_open=True)
    if arrival not in ("poisson", "bursty"):
        raise ValueError(f"arrival must be 'poisson' or 'bursty', got {arrival!r}")
    cv = real("burstiness", burstiness, 0.0, 100.0, lo_open=True)
    if arrival == "poisson" and cv != 1.0:
        raise ValueError(f"burstiness = {cv} needs arrival='bursty' (Poisson has cv = 1)")
    seed = whole("seed", seed, 0)
    shape = 1.0 / cv**2
    key = (n, shape, prompt, output, seed, prefix)
    try:
        remember = n <= _REMEMBER_UP_TO and hash(key) is not None
    except TypeError:                               # a spec given as a list: draw afresh
        remember = False
    gamma, p, o, plen, ids = _draw_remembered(*key) if remember else _draw(*key)
    return ServingWorkload._generated(np.cumsum(gamma / (shape * rate)), p, o, plen, ids)
