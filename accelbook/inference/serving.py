"""LLM serving: an iteration-level simulator of continuous batching (how vLLM and TensorRT-LLM run).

**Step cost** (:class:`StepCost`, one serving instance). An iteration in which ``n_dec`` resident
sequences decode, reading ``ctx`` tokens of KV cache in all, and ``p`` prompt tokens are prefilled
processes ``n = n_dec + p`` tokens and takes ``dt = fixed_s + max(weight_read_s, n·per_token_s) +
n·comm_per_token_s + ctx·decode_per_ctx_token_s + p·prefill_attn_per_token_s`` seconds, evaluated
left to right (``n`` and ``p`` converted to floats before they multiply): the weights are read once
whatever the iteration holds and the tokens' matmuls overlap that read, the all-reduces pay their
latency once and their bytes per token. A decoding sequence's context is ``prompt_len + tokens
generated so far``.

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
from collections import namedtuple

import numpy as np
import pandas as pd
from numba import njit

from accelbook.checks import real, whole

from .serving_result import ServingResult
from .step import StepCost
from .workload import LENGTH_KINDS, ServingWorkload, workload

# The docstring's parts live beside this module, one job each: the step cost in ``step``, the
# workload generator in ``workload``, the result in ``serving_result``. They are re-exported here,
# so ``serving.StepCost``, ``serving.workload``, ``serving.simulate`` keep one address.
__all__ = ["StepCost", "ServingWorkload", "workload", "LENGTH_KINDS", "ServingResult", "simulate",
           "load_sweep", "COLOCATED", "PREFILL_ONLY", "DECODE_ONLY", "InstanceRun", "ITERATION_COLUMNS"]

# -- the kernel -------------------------------------------------------------------------------------------
COLOCATED, PREFILL_ONLY, DECODE_ONLY = 0, 1, 2
ITERATION_COLUMNS = ("start_s", "dt_s", "resident", "decoding", "prefill_tokens")
#: what the kernel returns for one instance, by name: the iteration records, then the gaps
InstanceRun = namedtuple("InstanceRun", ITERATION_COLUMNS + ("gap_s", "gap_count"))


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
def _heap_push(key, val, size, k, v):
    """Push (``k``, ``v``) on the binary min-heap ``key``/``val`` of ``size`` entries; returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if key[parent] <= k:
            break
        key[i] = key[parent]
        val[i] = val[parent]
        i = parent
    key[i] = k
    val[i] = v
    return size + 1


@njit(cache=True)
def _heap_pop(key, val, size):
    """Remove the top of the min-heap ``key``/``val`` of ``size`` entries; returns the new size."""
    size -= 1
    k = key[size]
    v = val[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and key[c + 1] < key[c]:
            c += 1
        if key[c] >= k:
            break
        key[i] = key[c]
        val[i] = val[c]
        i = c
    if size > 0:
        key[i] = k
        val[i] = v
    return size


@njit(cache=True)
def _instance(queue, ready, prompt, out, mode, fixed, wread, ptok, comm, dctx, pattn, max_batch, max_kv, chunk,
              pleft, gen, last, first_tok, finish, admit):
    """Run one instance over ``queue`` (request ids, ``ready`` non-decreasing in that order): the
    module docstring's steps 1-4, iteration after iteration, until the queue is served.

    Per-request arrays over all requests: inputs ``ready``, ``prompt``, ``out``; state ``pleft``
    (prompt tokens left), ``gen`` (tokens made), ``last`` (time of the last token), carried from a
    prefill instance to a decode one; results ``first_tok``, ``finish``, ``admit``, written in place.
    ``mode`` is COLOCATED, PREFILL_ONLY or DECODE_ONLY; ``fixed`` .. ``max_kv`` are the StepCost's
    fields in order. Returns an :data:`InstanceRun`: per iteration ``start_s``, ``dt_s``,
    ``resident``, ``decoding``, ``prefill_tokens``; the gaps, ``gap_s`` repeated ``gap_count`` times.

    The work per iteration is the events (admissions, prefill chunks, first tokens, finishes), not the
    residents, from three invariants of the docstring's rules:

    - the requests in prefill form a queue in admission order (``pfq[pf_head:pf_tail]``): the chunk
      budget goes to them in that order, so only a prefix of it completes in an iteration;
    - every decoding request decodes in every iteration, so one with ``g`` tokens at its first decode
      iteration ``k`` finishes at the end of iteration ``k + out - g - 1``: a min-heap on that index
      (``hk``, ``hv``) yields the finishes; the decoders' context ``ctx`` grows by ``ndec`` an iteration;
    - a decoder resident before this iteration made its last token at this iteration's start ``t0``:
      its gap is ``t - t0``, one record for all of them; only one admitted now (decode-only instances)
      can have an older last token, a gap of its own (in admission order, before the shared record).

    Length: one function on purpose. Every step reads and writes the same state: the prefill queue
    (``pfq``, ``pf_head``, ``pf_tail``), the finish heap, the fresh decoders (``fresh``), the growing
    iteration and gap records, and the scalars ``t``, ``head``, ``nres``, ``ndec``, ``ctx``, ``kv``,
    ``n_it``, ``n_g``. Helpers would take a dozen arrays and hand back the grown ones; the steps
    numbered in place read closer to the docstring, and the hot loop stays one compiled unit."""
    n = queue.shape[0]
    cap = 256
    it_t = np.empty(cap)
    it_dt = np.empty(cap)
    it_res = np.empty(cap, dtype=np.int64)
    it_dec = np.empty(cap, dtype=np.int64)
    it_p = np.empty(cap, dtype=np.int64)
    g_v = np.empty(cap)
    g_c = np.empty(cap, dtype=np.int64)
    n_it = 0
    n_g = 0
    pfq = np.empty(max(n, 1), dtype=np.int64)      # requests in prefill, admission order
    hk = np.empty(max_batch, dtype=np.int64)       # finish heap: iteration index of the last token
    hv = np.empty(max_batch, dtype=np.int64)       # ... and the request
    fresh = np.empty(max_batch, dtype=np.int64)    # decoders admitted this iteration
    pf_head = 0
    pf_tail = 0
    nh = 0
    t = 0.0
    head = 0
    nres = 0
    ndec = 0
    ctx = 0
    kv = 0
    while head < n or nres > 0:
        if nres == 0 and ready[queue[head]] > t:
            t = ready[queue[head]]
        # 1. admit
        n_fresh = 0
        while head < n and nres < max_batch:
            r = queue[head]
            if ready[r] > t:
                break
            need = prompt[r] if mode == PREFILL_ONLY else prompt[r] + out[r]
            if kv + need > max_kv:
                break
            kv += need
            admit[r] = t
            head += 1
            nres += 1
            if pleft[r] > 0:
                pfq[pf_tail] = r
                pf_tail += 1
            else:
                ndec += 1
                ctx += prompt[r] + gen[r]
                nh = _heap_push(hk, hv, nh, n_it + out[r] - gen[r] - 1, r)
                fresh[n_fresh] = r
                n_fresh += 1
        # 2. chunked prefill (a prefix of the prefill queue completes)
        budget = chunk
        p = 0
        n_done = 0
        j = pf_head
        while budget > 0 and j < pf_tail:
            r = pfq[j]
            take = min(pleft[r], budget)
            pleft[r] -= take
            budget -= take
            p += take
            if pleft[r] == 0:
                n_done += 1
            j += 1
        # 3. decode: the step's time
        ntok = float(ndec + p)
        dt = fixed + max(wread, ntok * ptok) + ntok * comm + float(ctx) * dctx + float(p) * pattn
        t0 = t
        t = t0 + dt
        if n_it == it_t.shape[0]:
            it_t = _grow_f(it_t)
            it_dt = _grow_f(it_dt)
            it_res = _grow_i(it_res)
            it_dec = _grow_i(it_dec)
            it_p = _grow_i(it_p)
        it_t[n_it] = t0
        it_dt[n_it] = dt
        it_res[n_it] = nres
        it_dec[n_it] = ndec
        it_p[n_it] = p
        # 4. tokens at t: gaps, finishes, first tokens; leave
        same = ndec
        for i in range(n_fresh):
            r = fresh[i]
            if last[r] != t0:
                same -= 1
                if n_g == g_v.shape[0]:
                    g_v = _grow_f(g_v)
                    g_c = _grow_i(g_c)
                g_v[n_g] = t - last[r]
                g_c[n_g] = 1
                n_g += 1
        ctx += ndec
        while nh > 0 and hk[0] == n_it:
            r = hv[0]
            nh = _heap_pop(hk, hv, nh)
            finish[r] = t
            gen[r] = out[r]
            last[r] = t
            kv -= prompt[r] + out[r]
            ctx -= prompt[r] + out[r]
            ndec -= 1
            nres -= 1
        for i in range(pf_head, pf_head + n_done):
            r = pfq[i]
            first_tok[r] = t
            gen[r] = 1
            last[r] = t
            if out[r] == 1 or mode == PREFILL_ONLY:
                if out[r] == 1:
                    finish[r] = t
                kv -= prompt[r] if mode == PREFILL_ONLY else prompt[r] + out[r]
                nres -= 1
            else:
                ndec += 1
                ctx += prompt[r] + 1
                nh = _heap_push(hk, hv, nh, n_it + out[r] - 1, r)
        pf_head += n_done
        n_it += 1
        if same > 0:
            if n_g == g_v.shape[0]:
                g_v = _grow_f(g_v)
                g_c = _grow_i(g_c)
            g_v[n_g] = t - t0
            g_c[n_g] = same
            n_g += 1
    return InstanceRun(it_t[:n_it], it_dt[:n_it], it_res[:n_it], it_dec[:n_it], it_p[:n_it], g_v[:n_g], g_c[:n_g])


# -- simulate ---------------------------------------------------------------------------------------------
def _cost_args(c: StepCost):
    return (c.fixed_s, c.weight_read_s, c.per_token_s, c.comm_per_token_s, c.decode_per_ctx_token_s,
            c.prefill_attn_per_token_s, c.max_batch, c.max_kv_tokens)


def _check_cost(name, c):
    if not isinstance(c, StepCost):
        raise ValueError(f"{name} must be a StepCost, got {type(c).__name__}")
    return c


def _check_fits(name, need, c: StepCost, what):
    worst = int(need.max())
    if worst > c.max_kv_tokens:
        i = int(np.argmax(need))
        raise ValueError(f"{name}.max_kv_tokens = {c.max_kv_tokens} can never hold request {i}: {what} = {worst} tokens")


def _iterations_frame(runs) -> pd.DataFrame:
    """One row per iteration of every instance: ``runs`` is a list of (instance, role, InstanceRun)."""
    roles = ["colocated", "prefill", "decode"]
    return pd.DataFrame({
        "instance": np.concatenate([np.full(len(run.start_s), inst, dtype=np.int64) for inst, _, run in runs]),
        "role": pd.Categorical.from_codes(np.concatenate([np.full(len(run.start_s), roles.index(role), dtype=np.int8)
                                                          for _, role, run in runs]), roles),
        **{c: np.concatenate([getattr(run, c) for _, _, run in runs]) for c in ITERATION_COLUMNS}})


def simulate(workload: ServingWorkload, cost: StepCost, n_instances: int = 1, chunk_tokens: int = 512,
             disaggregated: bool = False, n_prefill: int = 1, n_decode: int = 1, prefill_cost: StepCost | None = None,
             decode_cost: StepCost | None = None, kv_bytes_per_token: float = 0.0,
             link_bytes_per_s: float = math.inf) -> ServingResult:
    """Serve ``workload`` (module docstring). Colocated: ``n_instances`` instances with ``cost``,
    round-robin. Disaggregated: ``n_prefill`` instances with ``prefill_cost`` and ``n_decode`` with
    ``decode_cost`` (both default to ``cost``); KV moves at ``link_bytes_per_s``
    (``kv_bytes_per_token`` bytes per prompt token)."""
    if not isinstance(workload, ServingWorkload):
        raise ValueError(f"workload must be a ServingWorkload (see serving.workload), got {type(workload).__name__}")
    cost = _check_cost("cost", cost)
    chunk = whole("chunk_tokens", chunk_tokens)
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
    runs = []      # (instance, role, InstanceRun), in the order they ran

    def run(queue, ready, c, mode, inst, role):
        adm = admit if mode != DECODE_ONLY else np.empty(N)     # admit_s: admission to the (prefill) instance
        runs.append((inst, role, _instance(queue, ready, prompt, out, mode, *_cost_args(c), chunk, pleft, gen, last,
                                           first, finish, adm)))

    if not disaggregated:
        n_inst = whole("n_instances", n_instances)
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
        npf, ndc = whole("n_prefill", n_prefill), whole("n_decode", n_decode)
        pc = cost if prefill_cost is None else _check_cost("prefill_cost", prefill_cost)
        dc = cost if decode_cost is None else _check_cost("decode_cost", decode_cost)
        kvb = real("kv_bytes_per_token", kv_bytes_per_token, 0.0, 1e15)
        link = real("link_bytes_per_s", link_bytes_per_s, 0.0, lo_open=True, allow_inf=True)
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
    tbt = np.where(out > 1, (finish - first) / np.maximum(out - 1, 1), 0.0)
    return ServingResult(workload, first - arrival, tbt, finish - arrival, finish, first, admit, inst, dec_inst,
                         np.concatenate([run.gap_s for _, _, run in runs]),
                         np.concatenate([run.gap_count for _, _, run in runs]), _iterations_frame(runs),
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
