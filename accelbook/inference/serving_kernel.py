"""The serving simulator's event loops (:mod:`accelbook.inference.serving`'s docstring is their
specification): :func:`reserve_instance`, one instance under the reserve KV policy, with the
helpers both kernels share (growing record arrays, a binary min-heap); the paged policy's loop is in
:mod:`accelbook.inference.serving_paged`. Internal: call :func:`accelbook.inference.serving.simulate`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .step import iteration_time

# -- shared by both kernels -------------------------------------------------------------------------------------------
COLOCATED, PREFILL_ONLY, DECODE_ONLY = 0, 1, 2
ITERATION_COLUMNS = ("start_s", "dt_s", "resident", "decoding", "prefill_tokens", "kv_blocks")
#: what the kernel returns for one instance, by name: the iteration records, then the gaps
InstanceRun = namedtuple("InstanceRun", ITERATION_COLUMNS + ("gap_s", "gap_count"))


@njit(cache=True)
def grow_f(a):
    b = np.empty(2 * a.shape[0], dtype=np.float64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def grow_i(a):
    b = np.empty(2 * a.shape[0], dtype=np.int64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, inline="always")
def chunk_prefill(order, start, stop, pleft, chunk):
    """Chunked prefill of one iteration over the requests ``order[start:stop]`` in that order: each takes
    ``min(left, budget)`` of its prompt until ``chunk`` tokens are spent. Returns (prompt tokens taken, how
    many requests finished their prompt: a prefix of the order). Both serving kernels call it."""
    budget = chunk
    p = 0
    n_done = 0
    j = start
    while budget > 0 and j < stop:
        r = order[j]
        take = min(pleft[r], budget)
        pleft[r] -= take
        budget -= take
        p += take
        if pleft[r] == 0:
            n_done += 1
        j += 1
    return p, n_done


@njit(cache=True, inline="always")
def whole_prefill(order, start, stop, pleft, budget):
    """The prefill_first policy's prefill of one iteration over ``order[start:stop]`` in that order: whole
    prompts while their sum stays within ``budget`` (the first that does not fit stops it). Returns (prompt
    tokens taken, how many requests finished their prompt: a prefix of the order)."""
    p = 0
    j = start
    while j < stop and p + pleft[order[j]] <= budget:
        p += pleft[order[j]]
        pleft[order[j]] = 0
        j += 1
    return p, j - start


@njit(cache=True)
def record_capacity(queue, pleft, out, chunk):
    """Iteration records to allocate at first: the iterations the reserve policy can take at most (an
    iteration either prefills the oldest prompt in prefill by ``min(left, chunk)`` or decodes a token of
    every resident), up to 2**20. A first size only: the kernels grow their records when full, and pages of
    it never written cost no memory."""
    bound = 1
    for i in range(queue.shape[0]):
        r = queue[i]
        bound += (pleft[r] + chunk - 1) // chunk + max(out[r] - 1, 0)
        if bound >= 2**20:
            return 2**20
    return bound


@njit(cache=True)
def make_room(record, n_it, n_g, room, it_t, it_dt, it_res, it_dec, it_p, it_kv, g_v, g_c):
    """The six iteration-record arrays and the two gap arrays, each twice as long (the first rows kept)
    where it is full: the iteration records when ``n_it`` rows fill them, the gaps when ``room`` more
    would not fit after ``n_g``; as they are otherwise (nothing when ``record`` is off). Both serving
    kernels call it between runs of their inner loop, never inside it (see :func:`reserve_instance`)."""
    if record and n_it == it_t.shape[0]:
        it_t, it_dt, it_res, it_dec = grow_f(it_t), grow_f(it_dt), grow_i(it_res), grow_i(it_dec)
        it_p, it_kv = grow_i(it_p), grow_i(it_kv)
    if record and n_g + room > g_v.shape[0]:
        g_v, g_c = grow_f(g_v), grow_i(g_c)
    return it_t, it_dt, it_res, it_dec, it_p, it_kv, g_v, g_c


@njit(cache=True, inline="always")
def record_iteration(it_t, it_dt, it_res, it_dec, it_p, it_kv, n_it, t0, dt, nres, ndec, p, kv):
    """Write iteration ``n_it``'s record (start, length, residents, decoders, prompt tokens, KV in use) in place;
    the caller has made room (:func:`make_room`). Both serving kernels call it."""
    it_t[n_it] = t0
    it_dt[n_it] = dt
    it_res[n_it] = nres
    it_dec[n_it] = ndec
    it_p[n_it] = p
    it_kv[n_it] = kv


@njit(cache=True)
def heap_push(key, val, size, k, v):
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
def heap_pop(key, val, size):
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
def harness_batches(arrival, window_s, max_batch):
    """Release times and batch numbers of the harness batcher (:mod:`accelbook.inference.serving`'s
    docstring, **Harness batching**) for ``arrival`` (non-decreasing): ``(release, batch)``. Events are
    the arrivals and the timeouts (one ``window_s`` after the previous event if no arrival comes first,
    an arrival winning a tie); at each, if requests wait and (``max_batch`` of them wait, or ``window_s``
    has passed since the last release or the first arrival), the oldest ``max_batch`` of them are released."""
    n = arrival.shape[0]
    release = np.empty(n)
    batch = np.empty(n, dtype=np.int64)
    if n == 0:
        return release, batch
    stamp = arrival[0]
    head = 0          # oldest request not released
    nb = 0
    e = arrival[0]    # the last event's time
    i = 0
    while head < n:
        timeout = not (i < n and (head == i or arrival[i] <= e + window_s))
        if timeout:
            e = e + window_s               # requests wait, and no arrival within window_s: always a release
        else:
            e = arrival[i]                 # an arrival (it wins a tie with a timeout)
            i += 1
        if timeout or i - head >= max_batch or (e - stamp >= window_s and i > head):
            stop = min(i, head + max_batch)
            for j in range(head, stop):
                release[j] = e
                batch[j] = nb
            nb += 1
            head = stop
            stamp = e
    return release, batch


@njit(cache=True)
def reserve_instance(queue, ready, prompt, out, mode, fixed, wread, ptok, comm, dctx, pattn, max_batch, max_kv, chunk,
              pleft, gen, last, first_tok, finish, admit, record, prefill_first=False, inflight=False):
    """Run one instance over ``queue`` (request ids, ``ready`` non-decreasing in that order): the
    serving module docstring's steps 1-4 (the reserve policy), iteration after iteration, until the
    queue is served.

    Per-request arrays over all requests: inputs ``ready``, ``prompt``, ``out``; state ``pleft``
    (prompt tokens left), ``gen`` (tokens made), ``last`` (time of the last token), carried from a
    prefill instance to a decode one; results ``first_tok``, ``finish``, ``admit``, written in place.
    ``mode`` is COLOCATED, PREFILL_ONLY or DECODE_ONLY; ``fixed`` .. ``max_kv`` are the StepCost's
    fields in order. Returns an :data:`InstanceRun`: per iteration ``start_s``, ``dt_s``,
    ``resident``, ``decoding``, ``prefill_tokens``, ``kv_blocks`` (tokens reserved); the gaps, ``gap_s`` repeated ``gap_count`` times.
    Without ``record`` it keeps neither (empty arrays): the per-request results are the same.

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

    The records grow in the outer loop only: the inner loop runs iterations while there is room for one
    more iteration record and ``room`` gap records (one iteration writes at most one per fresh decoder and
    one shared), so no array is re-bound inside it (each re-bound array costs two atomic reference-count
    updates an iteration, which were most of the loop's time).

    Length: one function on purpose. Every step reads and writes the same state: the prefill queue
    (``pfq``, ``pf_head``, ``pf_tail``), the finish heap, the fresh decoders (``fresh``), the growing
    iteration and gap records, and the scalars ``t``, ``head``, ``nres``, ``ndec``, ``ctx``, ``kv``,
    ``n_it``, ``n_g``. Helpers would take a dozen arrays and hand back the grown ones; the steps
    numbered in place read closer to the docstring, and the hot loop stays one compiled unit."""
    n = queue.shape[0]
    cap = record_capacity(queue, pleft, out, chunk) if record else 0
    it_t = np.empty(cap)
    it_dt = np.empty(cap)
    it_res = np.empty(cap, dtype=np.int64)
    it_dec = np.empty(cap, dtype=np.int64)
    it_p = np.empty(cap, dtype=np.int64)
    it_kv = np.empty(cap, dtype=np.int64)
    room = min(max_batch, n) + 1 if record else 0   # the most gap records one iteration writes
    g_v = np.empty(cap + room)
    g_c = np.empty(cap + room, dtype=np.int64)
    n_it = 0
    n_g = 0
    pfq = np.empty(max(n, 1), dtype=np.int64)      # requests in prefill, admission order
    hk = np.empty(max_batch, dtype=np.int64)       # finish heap: iteration index of the last token
    hv = np.empty(max_batch, dtype=np.int64)       # ... and the request
    fresh = np.empty(max_batch, dtype=np.int64)    # decoders admitted this iteration
    coh_t = np.empty(max_batch + 1)               # prefill_first: decoders grouped by their last token's time
    coh_c = np.empty(max_batch + 1, dtype=np.int64)
    n_coh = 0
    n_dit = 0                                      # decode iterations run (every iteration unless prefill_first)
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
        # make room out here, between runs of the loop below (docstring: no array is re-bound in that loop)
        it_t, it_dt, it_res, it_dec, it_p, it_kv, g_v, g_c = make_room(record, n_it, n_g, room, it_t, it_dt, it_res,
                                                                        it_dec, it_p, it_kv, g_v, g_c)
        while (head < n or nres > 0) and (not record or (n_it < it_t.shape[0] and n_g + room <= g_v.shape[0])):
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
                    nh = heap_push(hk, hv, nh, n_dit + out[r] - gen[r] - 1, r)
                    fresh[n_fresh] = r
                    n_fresh += 1
            # 2. prefill: chunked (a prefix of the prefill queue completes), or prefill_first's whole prompts
            if prefill_first:
                p, n_done = whole_prefill(pfq, pf_head, pf_tail, pleft, chunk)
            elif inflight:                            # the decoders take one token each of the budget
                p, n_done = whole_prefill(pfq, pf_head, pf_tail, pleft, max(chunk - ndec, 0))
            else:
                p, n_done = chunk_prefill(pfq, pf_head, pf_tail, pleft, chunk)
            decoding = not prefill_first or p == 0     # prefill_first: an iteration with prompts decodes nothing
            # 3. decode: the step's time
            if decoding:
                dt = iteration_time(ndec, p, ctx, fixed, wread, ptok, comm, dctx, pattn)
            else:
                dt = iteration_time(0, p, 0, fixed, wread, ptok, comm, dctx, pattn)
            t0 = t
            t = t0 + dt
            if record:
                record_iteration(it_t, it_dt, it_res, it_dec, it_p, it_kv, n_it, t0, dt, nres,
                                 ndec if decoding else 0, p, kv)
            # 4. tokens at t: gaps, finishes, first tokens; leave
            same = ndec if decoding and not prefill_first else 0
            for i in range(n_fresh):
                r = fresh[i]
                if last[r] != t0:
                    same -= 1
                    if record:
                        g_v[n_g] = t - last[r]
                        g_c[n_g] = 1
                        n_g += 1
            if prefill_first and decoding:
                for k in range(n_coh):                # each cohort's gap: this token less its last
                    if record and coh_c[k] > 0:
                        g_v[n_g] = t - coh_t[k]
                        g_c[n_g] = coh_c[k]
                        n_g += 1
                n_coh = 0
            if decoding:
                ctx += ndec
            while decoding and nh > 0 and hk[0] == n_dit:
                r = hv[0]
                nh = heap_pop(hk, hv, nh)
                finish[r] = t
                gen[r] = out[r]
                last[r] = t
                kv -= prompt[r] + out[r]
                ctx -= prompt[r] + out[r]
                ndec -= 1
                nres -= 1
            if decoding:
                n_dit += 1
            if prefill_first and decoding:
                coh_t[0] = t                          # the decoders left made their last token now
                coh_c[0] = ndec
                n_coh = 1
            n_new = 0
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
                    n_new += 1
                    ctx += prompt[r] + 1
                    # its first decode is decode iteration n_dit, its last n_dit + out - 2
                    nh = heap_push(hk, hv, nh, n_dit + out[r] - 2, r)
            if prefill_first and n_new > 0:
                if n_coh > 0 and coh_t[n_coh - 1] == t:
                    coh_c[n_coh - 1] += n_new
                else:
                    coh_t[n_coh] = t
                    coh_c[n_coh] = n_new
                    n_coh += 1
            pf_head += n_done
            n_it += 1
            if record and same > 0:
                g_v[n_g] = t - t0
                g_c[n_g] = same
                n_g += 1
    return InstanceRun(it_t[:n_it], it_dt[:n_it], it_res[:n_it], it_dec[:n_it], it_p[:n_it], it_kv[:n_it], g_v[:n_g],
                       g_c[:n_g])
