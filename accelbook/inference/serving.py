"""LLM serving: an iteration-level simulator of continuous batching (how vLLM and TensorRT-LLM run).

**Step cost** (:class:`StepCost`, one serving instance). An iteration in which ``n_dec`` resident
sequences decode, reading ``ctx`` tokens of KV cache in all, and ``p`` prompt tokens are prefilled
takes ``dt = d + q`` seconds, evaluated left to right, with
``d = decode_base_s + n_dec·decode_per_seq_s + ctx·decode_per_ctx_token_s`` (``d = 0`` when
``n_dec = 0``) and ``q = prefill_base_s + p·prefill_per_token_s`` (``q = 0`` when ``p = 0``). A
decoding sequence's context is ``prompt_len + tokens generated so far``.

**Workload** (:func:`workload`). Arrivals from time 0 with gamma inter-arrival times of mean
``1/rate`` and coefficient of variation ``cv`` (shape ``1/cv²``; Poisson is ``cv = 1``, and
``arrival="poisson"`` is exactly ``"bursty"`` with ``burstiness=1``); prompt and output lengths
``("fixed", n)``, ``("uniform", lo, hi)`` (inclusive) or ``("lognormal", mean, sigma[, max])``
(log-space sigma, ``mu = ln(mean) - sigma²/2``, rounded, clipped to ``[1, max]``). One seeded
``numpy`` Generator draws inter-arrivals, then prompts, then outputs: reproducible, and the same
seed at another rate gives the same arrivals rescaled (common random numbers for load sweeps).

**One instance, each iteration** (time ``t`` is the iteration's start):

1. *Admit* queued requests with ``ready ≤ t`` in queue order while fewer than ``max_batch`` are
   resident and the request's KV fits: ``kv_used + need ≤ max_kv_tokens``, with ``need =
   prompt_len + output_len`` reserved at admission (prefill-only instances: ``prompt_len``).
   Strict FCFS: the first request that does not fit blocks those behind it. A request that could
   never fit an empty instance is a ValueError before simulating.
2. *Chunked prefill*: a budget of ``chunk_tokens`` prompt tokens goes to resident requests still in
   prefill, in admission order (each takes ``min(left, budget)``); ``p`` is the total.
3. *Decode*: every resident request whose prefill was complete *before* this iteration decodes one
   token (``n_dec``, ``ctx`` above). A request whose prefill completes in this iteration emits its
   first token at the iteration's end ``t + dt`` (``TTFT = t + dt - arrival``), with no decode
   cost; then one token per later iteration.
4. At ``t + dt``: a request that has produced ``output_len`` tokens leaves and frees its KV. The next
   iteration starts at ``t + dt``; if nothing is resident, at ``max(t + dt, ready of the next
   queued request)``.

**Colocated** (``disaggregated=False``): ``n_instances`` identical, independent instances; request
``i`` (in arrival order) goes to instance ``i mod n_instances`` (round-robin; ``ready`` = arrival).

**Disaggregated**: request ``i`` is prefilled on prefill instance ``i mod n_prefill`` (steps 1, 2
and the first token only; it leaves that instance, freeing its KV, when it emits the first token, so
TTFT is counted there). A request with ``output_len ≥ 2`` then moves its KV,
``(prompt_len·kv_bytes_per_token) / link_bytes_per_s`` seconds (a fixed delay, no contention), and
queues at decode instance ``i mod n_decode``, ordered by ``ready = first token + delay`` (ties by
request index), where it only decodes (``need = prompt_len + output_len``, context from
``prompt_len + 1``). The gap between its first and second token includes the transfer and queueing.

**Results** (:class:`ServingResult`): per request ``ttft_s``, ``tbt_mean_s = (finish - first
token)/(output_len - 1)`` (0 for a single token), ``e2e_s = finish - arrival``, ``finish_s``,
``admit_s``; every inter-token gap as weighted samples (``gap_s`` with ``gap_count`` repeats: all
colocated decoders of one iteration share one gap); every iteration (instance, start, dt, resident,
decoding, prefill tokens). The span is first arrival to last finish. TTFT/e2e percentiles are NumPy's
linear ones; TBT percentiles are over all gaps with ``method="inverted_cdf"`` (an observed gap).

The event loop is a Numba kernel over flat arrays (``tests/naive_serving.py`` is a plain-Python
reference written from this docstring; they agree exactly).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit


# -- validation helpers ----------------------------------------------------------------------------------
def _whole(name, v, lo=1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    return int(v)


def _real(name, v, lo=0.0, hi=math.inf, lo_open=False, allow_inf=False) -> float:
    ok = not isinstance(v, bool) and isinstance(v, numbers.Real) and not math.isnan(v) \
        and (allow_inf or math.isfinite(v)) and lo <= v <= hi and not (lo_open and v == lo)
    if not ok:
        rng = f"({lo}, {hi}]" if lo_open else f"[{lo}, {hi}]"
        raise ValueError(f"{name} must be a number in {rng}, got {v!r}")
    return float(v)


# -- step cost ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepCost:
    """One serving instance's step-time model (module docstring); SI units."""

    decode_base_s: float            # per iteration that decodes: reading the weights once
    decode_per_seq_s: float         # per sequence decoding in the iteration
    decode_per_ctx_token_s: float   # per token of KV cache read
    prefill_base_s: float           # per iteration that contains prefill work
    prefill_per_token_s: float      # per prompt token prefilled in the iteration
    max_batch: int                  # most sequences resident at once
    max_kv_tokens: int              # KV-cache capacity in tokens

    def __post_init__(self):
        for name in ("decode_base_s", "decode_per_seq_s", "decode_per_ctx_token_s", "prefill_base_s",
                     "prefill_per_token_s"):
            object.__setattr__(self, name, _real(name, getattr(self, name)))
        object.__setattr__(self, "max_batch", _whole("max_batch", self.max_batch))
        object.__setattr__(self, "max_kv_tokens", _whole("max_kv_tokens", self.max_kv_tokens))
        if self.decode_base_s + self.decode_per_seq_s <= 0:
            raise ValueError("decode_base_s + decode_per_seq_s must be > 0 (a decode iteration takes time)")
        if self.prefill_base_s + self.prefill_per_token_s <= 0:
            raise ValueError("prefill_base_s + prefill_per_token_s must be > 0 (a prefill iteration takes time)")

    def iteration_s(self, n_dec: int = 0, ctx_tokens: int = 0, prefill_tokens: int = 0) -> float:
        """Duration of one iteration (module docstring)."""
        d = self.decode_base_s + n_dec * self.decode_per_seq_s + ctx_tokens * self.decode_per_ctx_token_s if n_dec > 0 else 0.0
        q = self.prefill_base_s + prefill_tokens * self.prefill_per_token_s if prefill_tokens > 0 else 0.0
        return d + q

    def decode_bound_tok_s(self) -> float:
        """Most decode tokens per second one instance can make: a full batch, no context, no prefill."""
        return self.max_batch / (self.decode_base_s + self.max_batch * self.decode_per_seq_s)


# -- workload -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Workload:
    """Requests in arrival order: ``arrival_s`` (non-decreasing, >= 0), ``prompt_len`` and
    ``output_len`` (whole numbers >= 1)."""

    arrival_s: np.ndarray = field(repr=False)
    prompt_len: np.ndarray = field(repr=False)
    output_len: np.ndarray = field(repr=False)

    def __post_init__(self):
        a = np.asarray(self.arrival_s, dtype=np.float64).ravel()
        if a.size == 0:
            raise ValueError("arrival_s must hold at least one request")
        if not np.all(np.isfinite(a)) or a.min() < 0:
            raise ValueError("arrival_s must be finite and >= 0")
        if np.any(np.diff(a) < 0):
            raise ValueError("arrival_s must be non-decreasing (requests in arrival order)")
        arrays = {"arrival_s": a}
        for name in ("prompt_len", "output_len"):
            raw = np.asarray(getattr(self, name)).ravel()
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
        for k, v in arrays.items():
            v.setflags(write=False)
            object.__setattr__(self, k, v)

    @property
    def n(self) -> int:
        return int(self.arrival_s.size)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"arrival_s": self.arrival_s, "prompt_len": self.prompt_len, "output_len": self.output_len})


LENGTH_KINDS = ("fixed", "uniform", "lognormal")


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
        return np.full(n, _whole(f"{name} length", args[0]), dtype=np.int64)
    if kind == "uniform":
        if len(args) != 2:
            raise ValueError(f"{name}: ('uniform', lo, hi) takes two numbers, got {spec!r}")
        lo, hi = _whole(f"{name} lo", args[0]), _whole(f"{name} hi", args[1])
        if hi < lo:
            raise ValueError(f"{name}: hi = {hi} is below lo = {lo}")
        return rng.integers(lo, hi + 1, size=n).astype(np.int64)
    if len(args) not in (2, 3):
        raise ValueError(f"{name}: ('lognormal', mean, sigma[, max]) takes two or three numbers, got {spec!r}")
    mean = _real(f"{name} mean", args[0], 1.0, 1e9)
    sigma = _real(f"{name} sigma", args[1], 0.0, 5.0)
    mx = _whole(f"{name} max", args[2]) if len(args) == 3 else 2**40
    x = rng.lognormal(math.log(mean) - sigma**2 / 2, sigma, size=n)
    return np.clip(np.rint(x), 1, mx).astype(np.int64)


def workload(n_requests: int, rate_per_s: float, arrival: str = "poisson", burstiness: float = 1.0,
             prompt=("fixed", 512), output=("fixed", 128), seed: int = 0) -> Workload:
    """``n_requests`` requests at ``rate_per_s`` (module docstring). ``arrival``: "poisson" or
    "bursty" (gamma inter-arrivals with coefficient of variation ``burstiness``). ``prompt`` /
    ``output``: a whole number, ``("fixed", n)``, ``("uniform", lo, hi)`` or ``("lognormal", mean,
    sigma[, max])``."""
    n = _whole("n_requests", n_requests)
    rate = _real("rate_per_s", rate_per_s, 0.0, 1e12, lo_open=True)
    if arrival not in ("poisson", "bursty"):
        raise ValueError(f"arrival must be 'poisson' or 'bursty', got {arrival!r}")
    cv = _real("burstiness", burstiness, 0.0, 100.0, lo_open=True)
    if arrival == "poisson" and cv != 1.0:
        raise ValueError(f"burstiness = {cv} needs arrival='bursty' (Poisson has cv = 1)")
    seed = _whole("seed", seed, 0)
    rng = np.random.default_rng(seed)
    shape = 1.0 / cv**2
    gaps = rng.standard_gamma(shape, size=n) / (shape * rate)
    p = _lengths("prompt", prompt, n, rng)
    o = _lengths("output", output, n, rng)
    return Workload(np.cumsum(gaps), p, o)


# -- the kernel -------------------------------------------------------------------------------------------
COLOCATED, PREFILL_ONLY, DECODE_ONLY = 0, 1, 2


@njit(cache=True)
def _grow_f(a):
    b = np.empty(2 * a.shape[0], dtype=np.float64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _grow_i(a):
    b = np.empty(2 * a.shape[0], dtype=np.int64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _instance(queue, ready, prompt, out, mode, dbase, dseq, dctx, pbase, ptok, max_batch, max_kv, chunk,
              pleft, gen, last, first_tok, finish, admit):
    """Run one instance over ``queue`` (request ids, ``ready`` non-decreasing in that order).
    Per-request state (``pleft`` prompt tokens left, ``gen`` tokens made, ``last`` time of the last
    token) and results (``first_tok``, ``finish``, ``admit``) are arrays over all requests.
    Returns the iteration records (start, dt, resident, decoding, prefill tokens) and the gaps
    (value, count)."""
    n = queue.shape[0]
    cap = 256
    it_t = np.empty(cap)
    it_dt = np.empty(cap)
    it_res = np.empty(cap, dtype=np.int64)
    it_dec = np.empty(cap, dtype=np.int64)
    it_p = np.empty(cap, dtype=np.int64)
    gcap = 256
    g_v = np.empty(gcap)
    g_c = np.empty(gcap, dtype=np.int64)
    n_it = 0
    n_g = 0
    # per-slot copies of the residents' state, compacted in admission order (contiguous access)
    res = np.empty(max_batch, dtype=np.int64)
    s_left = np.empty(max_batch, dtype=np.int64)
    s_gen = np.empty(max_batch, dtype=np.int64)
    s_last = np.empty(max_batch)
    s_prompt = np.empty(max_batch, dtype=np.int64)
    s_out = np.empty(max_batch, dtype=np.int64)
    kind = np.empty(max_batch, dtype=np.int64)     # 0 prefilling, 1 first token now, 2 decoding
    t = 0.0
    head = 0
    nres = 0
    kv = 0
    while head < n or nres > 0:
        if nres == 0 and ready[queue[head]] > t:
            t = ready[queue[head]]
        # 1. admit
        while head < n and nres < max_batch:
            r = queue[head]
            if ready[r] > t:
                break
            need = prompt[r] if mode == PREFILL_ONLY else prompt[r] + out[r]
            if kv + need > max_kv:
                break
            kv += need
            res[nres] = r
            s_left[nres] = pleft[r]
            s_gen[nres] = gen[r]
            s_last[nres] = last[r]
            s_prompt[nres] = prompt[r]
            s_out[nres] = out[r]
            nres += 1
            admit[r] = t
            head += 1
        # 2. chunked prefill, 3. decode
        budget = chunk
        p = 0
        ndec = 0
        ctx = 0
        for j in range(nres):
            if s_left[j] > 0:
                kind[j] = 0
                if budget > 0:
                    take = min(s_left[j], budget)
                    s_left[j] -= take
                    budget -= take
                    p += take
                    if s_left[j] == 0:
                        kind[j] = 1
            else:
                kind[j] = 2
                ndec += 1
                ctx += s_prompt[j] + s_gen[j]
        d = dbase + ndec * dseq + ctx * dctx if ndec > 0 else 0.0
        q = pbase + p * ptok if p > 0 else 0.0
        t0 = t
        t = t0 + (d + q)
        if n_it == it_t.shape[0]:
            it_t = _grow_f(it_t)
            it_dt = _grow_f(it_dt)
            it_res = _grow_i(it_res)
            it_dec = _grow_i(it_dec)
            it_p = _grow_i(it_p)
        it_t[n_it] = t0
        it_dt[n_it] = d + q
        it_res[n_it] = nres
        it_dec[n_it] = ndec
        it_p[n_it] = p
        n_it += 1
        # 4. tokens at t; leave
        same = 0
        keep = 0
        for j in range(nres):
            r = res[j]
            leave = False
            k = kind[j]
            if k == 1:
                s_gen[j] = 1
                first_tok[r] = t
                s_last[j] = t
                if s_out[j] == 1:
                    finish[r] = t
                    leave = True
                elif mode == PREFILL_ONLY:
                    leave = True
            elif k == 2:
                if s_last[j] == t0:
                    same += 1
                else:
                    if n_g == g_v.shape[0]:
                        g_v = _grow_f(g_v)
                        g_c = _grow_i(g_c)
                    g_v[n_g] = t - s_last[j]
                    g_c[n_g] = 1
                    n_g += 1
                s_gen[j] += 1
                s_last[j] = t
                if s_gen[j] == s_out[j]:
                    finish[r] = t
                    leave = True
            if leave:
                kv -= s_prompt[j] if mode == PREFILL_ONLY else s_prompt[j] + s_out[j]
                pleft[r] = s_left[j]
                gen[r] = s_gen[j]
                last[r] = s_last[j]
            elif keep < j:
                res[keep] = r
                s_left[keep] = s_left[j]
                s_gen[keep] = s_gen[j]
                s_last[keep] = s_last[j]
                s_prompt[keep] = s_prompt[j]
                s_out[keep] = s_out[j]
                keep += 1
            else:
                keep += 1
        nres = keep
        if same > 0:
            if n_g == g_v.shape[0]:
                g_v = _grow_f(g_v)
                g_c = _grow_i(g_c)
            g_v[n_g] = t - t0
            g_c[n_g] = same
            n_g += 1
    return it_t[:n_it], it_dt[:n_it], it_res[:n_it], it_dec[:n_it], it_p[:n_it], g_v[:n_g], g_c[:n_g]


# -- results ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ServingResult:
    """What :func:`simulate` returns: per-request arrays (arrival order), gaps, iterations."""

    workload: Workload = field(repr=False)
    ttft_s: np.ndarray = field(repr=False)
    tbt_mean_s: np.ndarray = field(repr=False)
    e2e_s: np.ndarray = field(repr=False)
    finish_s: np.ndarray = field(repr=False)
    first_token_s: np.ndarray = field(repr=False)
    admit_s: np.ndarray = field(repr=False)          # admission to its (prefill) instance
    instance: np.ndarray = field(repr=False)         # colocated or prefill instance
    decode_instance: np.ndarray = field(repr=False)  # -1 when colocated or output_len == 1
    gap_s: np.ndarray = field(repr=False)            # inter-token gaps, each repeated gap_count times
    gap_count: np.ndarray = field(repr=False)
    iterations: pd.DataFrame = field(repr=False)     # instance, role, start_s, dt_s, resident, decoding, prefill_tokens
    n_instances: int = 1
    disaggregated: bool = False

    @property
    def n(self) -> int:
        return self.workload.n

    @property
    def span_s(self) -> float:
        """First arrival to last finish."""
        return float(self.finish_s.max() - self.workload.arrival_s[0])

    @property
    def output_tokens(self) -> int:
        return int(self.workload.output_len.sum())

    @property
    def throughput_tok_s(self) -> float:
        """Output tokens per second over the span."""
        return self.output_tokens / self.span_s

    @property
    def request_rate(self) -> float:
        """Requests completed per second over the span."""
        return self.n / self.span_s

    def gaps(self) -> np.ndarray:
        """All inter-token gaps, expanded (sum(output_len - 1) values; large for big runs)."""
        return np.repeat(self.gap_s, self.gap_count)

    def tbt_percentile(self, q) -> float:
        """Percentile ``q`` (0-100) of all inter-token gaps (inverted CDF; 0 if there are none)."""
        if self.gap_s.size == 0:
            return 0.0
        return float(np.percentile(self.gap_s, q, weights=self.gap_count, method="inverted_cdf"))

    def percentiles(self) -> dict:
        """p50/p90/p99 of TTFT, TBT (all gaps) and e2e, seconds."""
        out = {}
        for q in (50, 90, 99):
            out[f"ttft_p{q}_s"] = float(np.percentile(self.ttft_s, q))
        for q in (50, 90, 99):
            out[f"tbt_p{q}_s"] = self.tbt_percentile(q)
        for q in (50, 90, 99):
            out[f"e2e_p{q}_s"] = float(np.percentile(self.e2e_s, q))
        return out

    def meets_slo(self, ttft_slo_s: float, tbt_slo_s: float) -> np.ndarray:
        """Per request: TTFT <= ttft_slo_s and mean TBT <= tbt_slo_s."""
        a = _real("ttft_slo_s", ttft_slo_s, 0.0, allow_inf=True)
        b = _real("tbt_slo_s", tbt_slo_s, 0.0, allow_inf=True)
        return (self.ttft_s <= a) & (self.tbt_mean_s <= b)

    def goodput(self, ttft_slo_s: float, tbt_slo_s: float) -> float:
        """Requests per second (over the span) that meet both SLOs."""
        return int(self.meets_slo(ttft_slo_s, tbt_slo_s).sum()) / self.span_s

    def mean_resident(self) -> float:
        """Time-average number of resident requests (all instances together) over the span."""
        it = self.iterations     # disaggregated: a request in transfer or queued is not resident
        return float((it["dt_s"] * it["resident"]).sum() / self.span_s)

    def summary(self) -> dict:
        return {"n": self.n, "span_s": self.span_s, "request_rate": self.request_rate,
                "throughput_tok_s": self.throughput_tok_s, **self.percentiles(),
                "ttft_mean_s": float(self.ttft_s.mean()), "tbt_mean_s": float(self.tbt_mean_s.mean()),
                "mean_resident": self.mean_resident(), "iterations": len(self.iterations)}

    def to_frame(self) -> pd.DataFrame:
        """One row per request."""
        w = self.workload
        return pd.DataFrame({"arrival_s": w.arrival_s, "prompt_len": w.prompt_len, "output_len": w.output_len,
                             "instance": self.instance, "decode_instance": self.decode_instance,
                             "admit_s": self.admit_s, "first_token_s": self.first_token_s, "finish_s": self.finish_s,
                             "ttft_s": self.ttft_s, "tbt_mean_s": self.tbt_mean_s, "e2e_s": self.e2e_s})


# -- simulate ---------------------------------------------------------------------------------------------
def _cost_args(c: StepCost):
    return (c.decode_base_s, c.decode_per_seq_s, c.decode_per_ctx_token_s, c.prefill_base_s, c.prefill_per_token_s,
            c.max_batch, c.max_kv_tokens)


def _check_cost(name, c):
    if not isinstance(c, StepCost):
        raise ValueError(f"{name} must be a StepCost, got {type(c).__name__}")
    return c


def _check_fits(name, need, c: StepCost, what):
    worst = int(need.max())
    if worst > c.max_kv_tokens:
        i = int(np.argmax(need))
        raise ValueError(f"{name}.max_kv_tokens = {c.max_kv_tokens} can never hold request {i}: {what} = {worst} tokens")


def simulate(workload: Workload, cost: StepCost, n_instances: int = 1, chunk_tokens: int = 512,
             disaggregated: bool = False, n_prefill: int = 1, n_decode: int = 1, prefill_cost: StepCost | None = None,
             decode_cost: StepCost | None = None, kv_bytes_per_token: float = 0.0,
             link_bytes_per_s: float = math.inf) -> ServingResult:
    """Serve ``workload`` (module docstring). Colocated: ``n_instances`` instances with ``cost``,
    round-robin. Disaggregated: ``n_prefill`` instances with ``prefill_cost`` and ``n_decode`` with
    ``decode_cost`` (both default to ``cost``); KV moves at ``link_bytes_per_s``
    (``kv_bytes_per_token`` bytes per prompt token)."""
    if not isinstance(workload, Workload):
        raise ValueError(f"workload must be a Workload (see serving.workload), got {type(workload).__name__}")
    cost = _check_cost("cost", cost)
    chunk = _whole("chunk_tokens", chunk_tokens)
    if not isinstance(disaggregated, bool):
        raise ValueError(f"disaggregated must be True or False, got {disaggregated!r}")
    N = workload.n
    arrival, prompt, out = workload.arrival_s, workload.prompt_len, workload.output_len
    pleft = prompt.copy()
    gen = np.zeros(N, dtype=np.int64)
    last = np.zeros(N)
    first = np.full(N, np.nan)
    finish = np.full(N, np.nan)
    admit = np.full(N, np.nan)
    idx = np.arange(N, dtype=np.int64)
    dec_inst = np.full(N, -1, dtype=np.int64)
    recs = []
    gaps_v, gaps_c = [], []

    def run(queue, ready, c, mode, inst, role):
        adm = admit if mode != DECODE_ONLY else np.empty(N)     # admit_s: admission to the (prefill) instance
        it = _instance(queue, ready, prompt, out, mode, *_cost_args(c), chunk, pleft, gen, last, first, finish, adm)
        recs.append((inst, role) + it[:5])
        gaps_v.append(it[5])
        gaps_c.append(it[6])

    if not disaggregated:
        n_inst = _whole("n_instances", n_instances)
        for name, v in (("prefill_cost", prefill_cost), ("decode_cost", decode_cost)):
            if v is not None:
                raise ValueError(f"{name} applies only with disaggregated=True")
        _check_fits("cost", prompt + out, cost, "prompt_len + output_len")
        inst = idx % n_inst
        for k in range(n_inst):
            run(idx[inst == k], arrival, cost, COLOCATED, k, "colocated")
    else:
        if n_instances != 1:
            raise ValueError("n_instances applies to colocated serving; with disaggregated=True use n_prefill and n_decode")
        npf, ndc = _whole("n_prefill", n_prefill), _whole("n_decode", n_decode)
        pc = cost if prefill_cost is None else _check_cost("prefill_cost", prefill_cost)
        dc = cost if decode_cost is None else _check_cost("decode_cost", decode_cost)
        kvb = _real("kv_bytes_per_token", kv_bytes_per_token, 0.0, 1e15)
        link = _real("link_bytes_per_s", link_bytes_per_s, 0.0, lo_open=True, allow_inf=True)
        _check_fits("prefill_cost", prompt, pc, "prompt_len")
        two = out >= 2
        if two.any():
            _check_fits("decode_cost", np.where(two, prompt + out, 0), dc, "prompt_len + output_len")
        inst = idx % npf
        for k in range(npf):
            run(idx[inst == k], arrival, pc, PREFILL_ONLY, k, "prefill")
        ready = first + (prompt * kvb) / link
        for k in range(ndc):
            mine = idx[two & (idx % ndc == k)]
            dec_inst[mine] = k
            queue = mine[np.argsort(ready[mine], kind="stable")]
            run(queue, ready, dc, DECODE_ONLY, k, "decode")
    roles = ["colocated", "prefill", "decode"]
    iters = pd.DataFrame({
        "instance": np.concatenate([np.full(len(r[2]), r[0], dtype=np.int64) for r in recs]),
        "role": pd.Categorical.from_codes(np.concatenate([np.full(len(r[2]), roles.index(r[1]), dtype=np.int8)
                                                          for r in recs]), roles),
        **{c: np.concatenate([r[i] for r in recs])
           for i, c in enumerate(("start_s", "dt_s", "resident", "decoding", "prefill_tokens"), start=2)}})
    tbt = np.where(out > 1, (finish - first) / np.maximum(out - 1, 1), 0.0)
    return ServingResult(workload, first - arrival, tbt, finish - arrival, finish, first, admit, inst, dec_inst,
                         np.concatenate(gaps_v), np.concatenate(gaps_c), iters,
                         (npf + ndc) if disaggregated else n_inst, disaggregated)


# -- load sweep -------------------------------------------------------------------------------------------
def load_sweep(cost: StepCost, rates, n_requests: int = 2000, prompt=("lognormal", 512, 0.5),
               output=("lognormal", 128, 0.5), arrival: str = "poisson", burstiness: float = 1.0, seed: int = 0,
               ttft_slo_s: float = 1.0, tbt_slo_s: float = 0.1, **simulate_kw) -> pd.DataFrame:
    """One row per rate (requests/s): percentiles, throughput and goodput. The same seed at every
    rate (the arrivals rescale), so the curves are smooth. ``simulate_kw`` go to :func:`simulate`."""
    rates = np.atleast_1d(np.asarray(rates, dtype=float)) if not isinstance(rates, str) else None
    if rates is None or rates.size == 0 or not np.all(np.isfinite(rates)) or np.any(rates <= 0):
        raise ValueError("rates must be one or more finite numbers > 0")
    rows = []
    for rate in rates:
        w = workload(n_requests, float(rate), arrival, burstiness, prompt, output, seed)
        r = simulate(w, cost, **simulate_kw)
        p = r.percentiles()
        rows.append({"rate_per_s": float(rate), "ttft_p50_s": p["ttft_p50_s"], "ttft_p99_s": p["ttft_p99_s"],
                     "tbt_p50_s": p["tbt_p50_s"], "tbt_p99_s": p["tbt_p99_s"], "e2e_p50_s": p["e2e_p50_s"],
                     "throughput_tok_s": r.throughput_tok_s, "request_rate": r.request_rate,
                     "goodput_req_s": r.goodput(ttft_slo_s, tbt_slo_s),
                     "slo_attainment": float(r.meets_slo(ttft_slo_s, tbt_slo_s).mean())})
    return pd.DataFrame(rows)
