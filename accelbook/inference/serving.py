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
``prefix=(length, share[, n_prefixes])`` then draws a uniform per request (it shares a prefix if
below ``share``), then a prefix id per request, uniform in ``[0, n_prefixes)`` (default 1; -1 for a
request that does not share): a sharing request's
prompt is ``length`` tokens of system prompt before its drawn prompt (``prompt_len = length +
drawn``, ``prefix_len = length``); without ``prefix`` nothing more is drawn.

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

**Scheduling** (``schedule``; colocated serving under the reserve policy only for the two whole-prompt
schedules).
"chunked" (the default) is steps 2-3 above: decodes and a chunk of prompts share every iteration.
"prefill_first" is vLLM's scheduler without chunked prefill (its V0 default): step 2 takes *whole*
prompts of the residents in prefill, in admission order, while their sum stays within
``chunk_tokens`` (the first that does not fit stops it; a prompt longer than ``chunk_tokens`` is a
ValueError before simulating), and an iteration that prefills decodes nothing (``n_dec = 0``,
``ctx = 0``); only an iteration with no prompt to take decodes every decoder. A request's first
token is at the end of its prefill iteration, its second at the end of the next iteration that
decodes. "inflight" is TensorRT-LLM's in-flight batching without chunked context: every decoder
decodes every iteration and takes one token of the ``chunk_tokens`` budget (its ``max_num_tokens``),
and step 2 takes whole prompts in admission order within what is left, ``chunk_tokens - n_dec``
(the first that does not fit stops it; a prompt longer than ``chunk_tokens`` is a ValueError).

**Harness batching** (``batcher=(window_s, max_batch)``, colocated only): the load generator's
queries reach the instances in batches, as the harness of AMD's MLPerf submissions releases them.
Events are the arrivals and the timeouts (a timeout ``window_s`` after the previous event if
requests wait and no arrival comes first; an arrival wins a tie). At each event, if requests wait
and a timeout fired, ``max_batch`` of them wait, or ``window_s`` has passed since the last release
(or since the first arrival), the oldest ``max_batch`` waiting are released at the event's time.
Batch ``b`` (0, 1, ...) goes to instance ``b mod n_instances`` (round-robin by batch); a request's
``ready`` is its release, its TTFT still counts from its arrival. Without ``batcher``, ``ready`` =
arrival and request ``i`` goes to instance ``i mod n_instances``.

These steps are the **reserve** KV policy (``kv_policy="reserve"``, the default): TensorRT-LLM's
default scheduler (``GUARANTEED_NO_EVICT``) reserves prompt plus output at admission and never
evicts; here it is counted in tokens and knows each request's real ``output_len`` (a server reserves
its ``max_tokens``, so this is the policy's best case).

**Paged KV** (``kv_policy="paged"``, vLLM's scheduler; colocated serving only). The cache is a pool
of ``n_blocks = max_kv_tokens // block_tokens`` blocks (``block_tokens``, default 16 as vLLM's); a
request whose KV holds ``k`` tokens needs ``⌈k / block_tokens⌉`` blocks. A request's *tokens* are
``T = prompt_len + generated`` (``generated`` = tokens emitted so far). Each iteration at ``t``:

0. *Grow*: the resident requests whose prefill is complete, in admission order, each make their
   ``own`` blocks ``⌈T / block_tokens⌉ - shared`` (``shared``: its prefix blocks it references,
   below; 0 without one), the KV of the ``T`` tokens the coming decode reads. While the free blocks
   (``n_blocks`` less every resident's ``own`` blocks and every cached prefix's blocks) are fewer
   than it lacks: evict the least recently released unreferenced cached prefix if there is one,
   else *preempt* the newest resident request (the last admitted, possibly the grower itself): it
   frees its ``own`` blocks, releases its prefix, and re-enters the queue (recomputation: vLLM's
   default). A preempted grower does not grow.
1. *Admit* as above. A preempted request re-enters the queue at its front, so the queue stays in
   arrival order (the newest resident is younger than every other resident and older than every
   request never admitted). A request needs ``⌈T / block_tokens⌉`` blocks
   less its prefix blocks if they are cached (a *hit*), and fits if that is at most the free blocks
   plus the blocks of unreferenced cached prefixes other than its own; admitting it evicts such
   prefixes (least recently released first) until the free blocks cover its need. It must prefill
   ``T`` tokens, less ``shared·block_tokens`` on a hit: a preempted request recomputes its prompt and
   every token it generated; its first admission time is ``admit_s``.
2. - 3. as above (the recomputed tokens are prompt tokens of ``p``; decoders are the requests whose
   prefill was complete before this iteration, context ``T``).
4. At ``t + dt``: each request whose prefill completes emits its next token (its first, or after a
   recomputation the one after its last, with a gap ``t + dt - last token``); each decoder emits one.
   One that has produced ``output_len`` tokens leaves, freeing its ``own`` blocks and releasing its
   prefix. The next iteration starts at ``t + dt``; if nothing is resident and no preempted request
   waits, at ``max(t + dt, ready of the next queued request)``.

A request that could not fit an empty pool at its last decode, ``⌈(prompt_len + output_len - 1) /
block_tokens⌉ > n_blocks``, is a ValueError before simulating (so the oldest resident always fits
and every request finishes). Not modelled: vLLM's 1 % free-block watermark at admission, swapping
to host memory (its cost is host-link bytes, not in the step cost), blocks allocated per chunk.

**Prefix caching** (``prefix_caching=True``, paged only). A request may start with a shared prefix
(``prefix_id ≥ 0``, ``prefix_len`` tokens; the workload generator's ``prefix``). Its first
``shared = prefix_len // block_tokens`` full blocks are the prefix's, held in the pool once per
instance for every request that references them. Admitting a request with ``shared > 0``: if the
prefix is cached, a hit (above); if not, it is cached now (its ``shared`` blocks taken from the
pool with the request's) and the request prefills every token. Either way the request references
it while resident. A prefix is usable from the moment its blocks are taken (vLLM shares a block by
its content's hash when it is allocated; a request admitted while another still computes the prefix
skips it too: slightly optimistic). A prefix no resident references stays cached until evicted,
whole, least recently released first (a counter ticks at every release; vLLM evicts block by block).

**Colocated** (``disaggregated=False``): ``n_instances`` identical, independent instances; request
``i`` (in arrival order) goes to instance ``i mod n_instances`` (round-robin; ``ready`` = arrival),
or by batch with ``batcher`` (above).

**Disaggregated**: request ``i`` is prefilled on prefill instance ``i mod n_prefill`` (steps 1, 2
and the first token only; it leaves that instance, freeing its KV, when it emits the first token, so
TTFT is counted there). A request with ``output_len ≥ 2`` then moves its KV,
``(prompt_len·kv_bytes_per_token) / link_bytes_per_s`` seconds (a fixed delay, no contention), and
queues at decode instance ``i mod n_decode``, ordered by ``ready = first token + delay`` (ties by
request index), where it only decodes (``need = prompt_len + output_len``, context from
``prompt_len + 1``). The gap between its first and second token includes the transfer and queueing.

**Results** (:class:`ServingResult`): per request ``ttft_s``, ``tbt_mean_s = (finish - first
token)/(output_len - 1)`` (0 for a single token), ``e2e_s = finish - arrival``, ``finish_s``,
``admit_s``, ``preemptions`` (times preempted) and ``cached_tokens`` (prompt tokens skipped on prefix
hits, over all its admissions); every inter-token gap as weighted samples (``gap_s`` with
``gap_count`` repeats: all colocated decoders of one iteration share one gap); every iteration
(instance, start, dt, resident, decoding, prefill tokens, and ``kv_blocks``: blocks in use after
steps 0 and 1, cached prefixes included; under the reserve policy a block is one token). The span is
first arrival to last finish. TTFT/e2e percentiles are NumPy's linear ones; TBT percentiles are over
all gaps with ``method="inverted_cdf"`` (an observed gap).

The event loops are Numba kernels over flat arrays, one per KV policy (:mod:`.serving_kernel`,
:mod:`.serving_paged`); ``tests/naive_serving.py`` is a plain-Python reference written from this
docstring, and they agree exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from accelbook.checks import at_most, one_of, output, positive_array, real, whole

from .serving_kernel import (
    COLOCATED,
    DECODE_ONLY,
    ITERATION_COLUMNS,
    PREFILL_ONLY,
    InstanceRun,
    harness_batches,
    reserve_instance,
)
from .serving_paged import paged_instance
from .serving_result import ServingResult
from .step import StepCost
from .workload import LENGTH_KINDS, ServingWorkload, workload

# The docstring's parts live beside this module, one job each: the step cost in ``step``, the
# workload generator in ``workload``, the result in ``serving_result``, the event loops in ``serving_kernel``
# (reserve) and ``serving_paged``. They are re-exported here,
# so ``serving.StepCost``, ``serving.workload``, ``serving.simulate`` keep one address.
__all__ = ["StepCost", "ServingWorkload", "workload", "LENGTH_KINDS", "ServingResult", "simulate",
           "load_sweep", "COLOCATED", "PREFILL_ONLY", "DECODE_ONLY", "InstanceRun", "ITERATION_COLUMNS", "KV_POLICIES",
           "SCHEDULES"]

#: the KV-cache policies of :func:`simulate` (module docstring)
KV_POLICIES = ("reserve", "paged")
#: the schedules of :func:`simulate` (module docstring, **Scheduling**)
SCHEDULES = ("chunked", "prefill_first", "inflight")

#: the most instances one simulation runs (each is a loop of its own; a fleet past this is many simulations)
MAX_INSTANCES = 4096
_MAX_WHERE = "accelbook.inference.serving.MAX_INSTANCES"


# -- simulate ---------------------------------------------------------------------------------------------
def _instances(name: str, v) -> int:
    """A number of instances: a whole number in [1, :data:`MAX_INSTANCES`]."""
    return at_most(name, whole(name, v), MAX_INSTANCES, _MAX_WHERE)


def _cost_args(c: StepCost):
    return (c.fixed_s, c.weight_read_s, c.per_token_s, c.comm_per_token_s, c.decode_per_ctx_token_s,
            c.prefill_attn_per_token_s, c.max_batch, c.max_kv_tokens)


def _check_cost(name, c):
    if not isinstance(c, StepCost):
        raise ValueError(f"{name} must be a StepCost (see inference.step_cost), got {type(c).__name__}")
    return c


def _check_fits(name, need, c: StepCost, what):
    worst = int(need.max())
    if worst > c.max_kv_tokens:
        i = int(np.argmax(need))
        raise ValueError(f"{name}.max_kv_tokens = {c.max_kv_tokens} can never hold request {i}: {what} = {worst} tokens")


def _check_policy(kv_policy, disaggregated, prefix_caching) -> bool:
    """Whether ``kv_policy`` is "paged"; a ValueError for a policy or combination not simulated."""
    paged = one_of("kv_policy", kv_policy, KV_POLICIES) == "paged"
    if paged and disaggregated:
        raise ValueError("kv_policy='paged' is simulated for colocated serving only (disaggregated=False)")
    if prefix_caching is not False and not paged:
        raise ValueError("prefix_caching needs kv_policy='paged' (the reserve policy counts tokens, not blocks)")
    return paged


def _check_every_mode(n_instances, n_prefill, n_decode, block_tokens, kv_bytes_per_token, link_bytes_per_s,
                      records) -> None:
    """:func:`simulate`'s arguments that only one mode uses, checked in every mode: a typo in an argument a
    mode ignores is still a typo (``block_tokens='x'`` with the reserve policy); and ``records``."""
    if not isinstance(records, bool):
        raise ValueError(f"records must be True or False, got {records!r}")
    for name, v in (("n_instances", n_instances), ("n_prefill", n_prefill), ("n_decode", n_decode)):
        _instances(name, v)
    at_most("block_tokens", whole("block_tokens", block_tokens), 2**26, "a block of at most 2**26 tokens")
    real("kv_bytes_per_token", kv_bytes_per_token, 0.0, 1e15)
    real("link_bytes_per_s", link_bytes_per_s, 1.0, allow_inf=True)


def _paged_args(workload, cost: StepCost, block_tokens, prefix_caching):
    """The paged kernel's pool and prefix arguments, checked: ``(n_blocks, block_tokens, pid,
    shared, n_prefixes)``; a ValueError if a request could not fit an empty pool at its last decode."""
    bt = whole("block_tokens", block_tokens)
    if not isinstance(prefix_caching, bool):
        raise ValueError(f"prefix_caching must be True or False, got {prefix_caching!r}")
    n_blocks = cost.max_kv_tokens // bt
    last = -(-(workload.prompt_len + workload.output_len - 1) // bt)
    if int(last.max()) > n_blocks:
        i = int(np.argmax(last))
        raise ValueError(f"cost.max_kv_tokens = {cost.max_kv_tokens} ({n_blocks} blocks of {bt} tokens) can never "
                         f"hold request {i}: its last decode needs {int(last[i])} blocks")
    pid = workload.prefix_id
    shared = np.where(pid >= 0, workload.prefix_len // bt, 0) if prefix_caching else np.zeros(workload.n, np.int64)
    return n_blocks, bt, pid, shared.astype(np.int64), int(pid.max()) + 1 if pid.size else 0


def _schedule_args(workload, schedule, batcher, paged, disaggregated, chunk):
    """``(schedule, ready, batch)``: the schedule checked, each request's ready
    time and harness batch (None without ``batcher``), checked (module docstring, **Scheduling** and
    **Harness batching**)."""
    schedule = one_of("schedule", schedule, SCHEDULES)
    if schedule != "chunked" and (paged or disaggregated):
        raise ValueError(f"schedule={schedule!r} is simulated for colocated serving under kv_policy='reserve' only")
    if schedule != "chunked" and workload.n and int(workload.prompt_len.max()) > chunk:
        raise ValueError(f"schedule={schedule!r} takes whole prompts: chunk_tokens = {chunk} is below the longest "
                         f"prompt, {int(workload.prompt_len.max())} tokens")
    if batcher is None:
        return schedule, workload.arrival_s, None
    if disaggregated:
        raise ValueError("batcher applies to colocated serving only (disaggregated=False)")
    if not isinstance(batcher, (tuple, list)) or len(batcher) != 2:
        raise ValueError(f"batcher must be (window_s, max_batch) or None, got {batcher!r}")
    window = real("batcher window_s", batcher[0], 0.0, 3600.0, lo_open=True)
    return (schedule, *harness_batches(workload.arrival_s, window, whole("batcher max_batch", batcher[1])))


def simulate(workload: ServingWorkload, cost: StepCost, n_instances: int = 1, chunk_tokens: int = 512,
             disaggregated: bool = False, n_prefill: int = 1, n_decode: int = 1, prefill_cost: StepCost | None = None,
             decode_cost: StepCost | None = None, kv_bytes_per_token: float = 0.0,
             link_bytes_per_s: float = math.inf, kv_policy: str = "reserve", block_tokens: int = 16,
             prefix_caching: bool = False, records: bool = True, schedule: str = "chunked", batcher=None) -> ServingResult:
    """Serve ``workload`` (module docstring). Colocated: ``n_instances`` instances with ``cost``,
    round-robin. Disaggregated: ``n_prefill`` instances with ``prefill_cost`` and ``n_decode`` with
    ``decode_cost`` (both default to ``cost``); KV moves at ``link_bytes_per_s``
    (``kv_bytes_per_token`` bytes per prompt token). ``kv_policy``: "reserve" (prompt + output at
    admission, the default: TensorRT-LLM's default scheduler) or "paged" (vLLM's: the prompt's
    blocks of ``block_tokens`` tokens at admission, one block at a time as tokens are made,
    preemption by recomputation; colocated only), with ``prefix_caching`` of the workload's shared
    prefixes (paged only). ``records=False`` keeps neither the iterations nor the gaps, only the per-request
    times (TTFT, mean TBT, goodput: the same numbers), for callers that read nothing else; the result's
    TBT percentiles and iterations then raise a ValueError. ``schedule``: one of :data:`SCHEDULES`
    (**Scheduling**); ``batcher``: ``(window_s, max_batch)`` or None (**Harness batching**)."""
    if not isinstance(workload, ServingWorkload):
        raise ValueError(f"workload must be a ServingWorkload (see serving.workload), got {type(workload).__name__}")
    cost = _check_cost("cost", cost)
    chunk = at_most("chunk_tokens", whole("chunk_tokens", chunk_tokens), 2**26, "a chunk of at most 2**26 tokens")
    if not isinstance(disaggregated, bool):
        raise ValueError(f"disaggregated must be True or False, got {disaggregated!r}")
    paged = _check_policy(kv_policy, disaggregated, prefix_caching)
    _check_every_mode(n_instances, n_prefill, n_decode, block_tokens, kv_bytes_per_token, link_bytes_per_s, records)
    schedule, ready_in, batch_of = _schedule_args(workload, schedule, batcher, paged, disaggregated, chunk)
    N = workload.n
    arrival, prompt, out = workload.arrival_s, workload.prompt_len, workload.output_len
    pleft, gen, last = prompt.copy(), np.zeros(N, dtype=np.int64), np.zeros(N)
    first, finish, admit = np.full(N, np.nan), np.full(N, np.nan), np.full(N, np.nan)
    preempt, cached_tok = np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64)
    idx = np.arange(N, dtype=np.int64)
    dec_inst = np.full(N, -1, dtype=np.int64)
    runs = []      # (instance, role, InstanceRun), in the order they ran

    def run(queue, ready, c, mode, inst, role):
        adm = admit if mode != DECODE_ONLY else np.empty(N)     # admit_s: admission to the (prefill) instance
        runs.append((inst, role, reserve_instance(queue, ready, prompt, out, mode, *_cost_args(c), chunk, pleft, gen, last,
                                                  first, finish, adm, records, *(schedule == s for s in SCHEDULES[1:]))))

    bt = 1
    if not disaggregated:
        n_inst = _instances("n_instances", n_instances)
        for name, v in (("prefill_cost", prefill_cost), ("decode_cost", decode_cost)):
            if v is not None:
                raise ValueError(f"{name} applies only with disaggregated=True")
        inst = idx % n_inst if batch_of is None else batch_of % n_inst
        if paged:
            n_blocks, bt, pid, shared, n_pref = _paged_args(workload, cost, block_tokens, prefix_caching)
            for k in range(n_inst):
                runs.append((k, "colocated", paged_instance(
                    idx[inst == k], ready_in, prompt, out, pid, shared, n_pref, *_cost_args(cost)[:-1], n_blocks, bt,
                    chunk, pleft, gen, last, first, finish, admit, preempt, cached_tok, records)))
        else:
            _check_fits("cost", prompt + out, cost, "prompt_len + output_len")
            for k in range(n_inst):
                run(idx[inst == k], ready_in, cost, COLOCATED, k, "colocated")
    else:
        if n_instances != 1:
            raise ValueError("n_instances applies to colocated serving; with disaggregated=True use n_prefill and n_decode")
        npf, ndc = _instances("n_prefill", n_prefill), _instances("n_decode", n_decode)
        pc = cost if prefill_cost is None else _check_cost("prefill_cost", prefill_cost)
        dc = cost if decode_cost is None else _check_cost("decode_cost", decode_cost)
        kvb = real("kv_bytes_per_token", kv_bytes_per_token, 0.0, 1e15)
        link = real("link_bytes_per_s", link_bytes_per_s, 1.0, allow_inf=True)
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
    return _result(workload, first, finish, admit, inst, dec_inst, runs, (npf + ndc) if disaggregated else n_inst,
                   disaggregated, preempt, cached_tok, bt, kv_policy, records)


def _result(workload, first, finish, admit, inst, dec_inst, runs, n_instances, disaggregated, preempt, cached_tok, bt,
            kv_policy, records) -> ServingResult:
    """:func:`simulate`'s result from the kernels' per-request arrays and ``runs`` (instance, role, InstanceRun),
    its times checked (finite, >= 0)."""
    out = workload.output_len
    tbt = np.where(out > 1, (finish - first) / np.maximum(out - 1, 1), 0.0)
    ttft = first - workload.arrival_s
    for what, v in (("TTFT", ttft), ("TBT", tbt), ("finish", finish)):
        if not (v.min() >= 0.0 and v.max() < math.inf):    # all finite and >= 0 (NaN fails both): output()'s check
            output(f"serving.simulate {what} (s)", v)        # ... which names what is wrong
    gap_s, gap_count = ((runs[0][2].gap_s, runs[0][2].gap_count) if len(runs) == 1 else
                        (np.concatenate([run.gap_s for _, _, run in runs]),
                         np.concatenate([run.gap_count for _, _, run in runs])))
    return ServingResult(workload, ttft, tbt, finish - workload.arrival_s, finish, first, admit, inst, dec_inst,
                         gap_s, gap_count, tuple(runs), n_instances, disaggregated, preempt, cached_tok, bt, kv_policy,
                         records)


# -- load sweep -------------------------------------------------------------------------------------------
def load_sweep(cost: StepCost, rates, n_requests: int = 2000, prompt=("lognormal", 512, 0.5),
               output=("lognormal", 128, 0.5), arrival: str = "poisson", burstiness: float = 1.0, seed: int = 0,
               ttft_slo_s: float = 1.0, tbt_slo_s: float = 0.1, prefix=None, **simulate_kw) -> pd.DataFrame:
    """One row per rate (requests/s): percentiles, throughput and goodput. The same seed at every
    rate (the arrivals rescale), so the curves are smooth. ``simulate_kw`` go to :func:`simulate`."""
    rates = np.atleast_1d(positive_array("rates", rates)).ravel()
    if rates.size == 0 or rates.size > 1000 or np.any(rates > 1e12):
        raise ValueError(f"rates must be 1 to 1,000 request rates in (0, 1e12] per second, got {rates.size} "
                         f"of them, up to {rates.max(initial=0):g}")
    rows = []
    for rate in rates:
        w = workload(n_requests, float(rate), arrival, burstiness, prompt, output, seed, prefix)
        r = simulate(w, cost, **simulate_kw)
        p = r.percentiles()
        rows.append({"rate_per_s": float(rate), "ttft_p50_s": p["ttft_p50_s"], "ttft_p99_s": p["ttft_p99_s"],
                     "tbt_p50_s": p["tbt_p50_s"], "tbt_p99_s": p["tbt_p99_s"], "e2e_p50_s": p["e2e_p50_s"],
                     "throughput_tok_s": r.throughput_tok_s, "request_rate": r.request_rate,
                     "goodput_req_s": r.goodput(ttft_slo_s, tbt_slo_s),
                     "slo_attainment": float(r.meets_slo(ttft_slo_s, tbt_slo_s).mean())})
    return pd.DataFrame(rows)
