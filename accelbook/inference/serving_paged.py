"""The serving simulator's event loop under the paged KV policy, with prefix caching
(:mod:`accelbook.inference.serving`'s docstring, **Paged KV** steps 0-4 and **Prefix caching**, is
its specification): :func:`paged_instance`. Internal: call
:func:`accelbook.inference.serving.simulate` with ``kv_policy="paged"``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .serving_kernel import (
    InstanceRun,
    chunk_prefill,
    make_room,
    record_capacity,
    record_iteration,
)
from .step import iteration_time


@njit(cache=True)
def _evict_lru(c_cached, c_refs, c_rel, c_blocks):
    """Evict the unreferenced cached prefix released longest ago; returns its blocks (0 if none)."""
    best = -1
    for q in range(c_cached.shape[0]):
        if c_cached[q] and c_refs[q] == 0 and (best < 0 or c_rel[q] < c_rel[best]):
            best = q
    if best < 0:
        return 0
    c_cached[best] = False
    return c_blocks[best]


@njit(cache=True, inline="always")
def _release(v, own, shared, pid, c_refs, c_rel, c_blocks, used, tick, evictable):
    """Request ``v`` gives back its own KV blocks and its hold on a cached prefix (finished or preempted); a
    prefix nobody holds becomes evictable, stamped with ``tick`` for least-recently-released eviction.
    Returns (blocks in use, tick, evictable blocks)."""
    used -= own[v]
    own[v] = 0
    if shared[v] > 0:
        q = pid[v]
        c_refs[q] -= 1
        if c_refs[q] == 0:
            c_rel[q] = tick
            tick += 1
            evictable += c_blocks[q]
    return used, tick, evictable


@njit(cache=True)
def paged_instance(queue, ready, prompt, out, pid, shared, n_prefixes, fixed, wread, ptok, comm, dctx, pattn, max_batch,
                   n_blocks, bt, chunk, pleft, gen, last, first_tok, finish, admit, preempt, cached_tok, record):
    """Run one instance over ``queue`` (request ids in arrival order) under the paged policy: the
    docstring's steps 0-4, iteration after iteration, until the queue is served.

    Per-request arrays over all requests: inputs ``ready``, ``prompt``, ``out``, ``pid`` (prefix id,
    -1 for none) and ``shared`` (its prefix blocks if caching, else 0); state ``pleft`` (tokens to
    prefill), ``gen`` (tokens made), ``last`` (time of the last token); results ``first_tok``,
    ``finish``, ``admit``, ``preempt`` (times preempted), ``cached_tok`` (prefill tokens skipped),
    written in place. ``fixed`` .. ``pattn`` are the StepCost's times, ``n_blocks`` the pool,
    ``bt`` the tokens a block. Returns an :data:`~accelbook.inference.serving_kernel.InstanceRun` (empty without
    ``record``: the per-request results are the same).

    The loop walks the decoding residents each iteration. Three invariants keep it short: the
    residents (``res[:nres]``) are the decoders ``res[:ndc]`` then those in prefill (admissions and
    victims are at the end, and the chunk budget completes prefills in admission order), so the
    prefill budget walks only the prefix it completes; every decoder's last token was at the
    iteration's start, one gap record for all; the residents are in arrival order and a preempted request is the newest of them,
    older than every request waiting, so preempting writes it to ``queue[head - 1]`` and steps ``head``
    back (that slot held the last request admitted: the victim itself, or one that has left, and no
    slot before ``head`` is read again; ``queue`` is the caller's copy); and
    ``used`` (blocks held: residents' ``own`` and cached prefixes) and ``evictable`` (blocks of
    unreferenced cached prefixes) are kept as running sums.

    The records grow between runs of the inner loop, as in
    :func:`~accelbook.inference.serving_kernel.reserve_instance` (an iteration writes at most one gap record
    per request completing its prefill and one shared).

    Length: one function on purpose, as :func:`~accelbook.inference.serving_kernel.reserve_instance`:
    the steps share the residents, the queue head, the pool sums and the growing records, and
    numbered in place they read as the docstring's steps."""
    n = queue.shape[0]
    cap = record_capacity(queue, pleft, out, chunk) if record else 0   # a first size (preemptions can take more)
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
    res = np.empty(max_batch, dtype=np.int64)       # residents, admission order
    own = np.zeros(prompt.shape[0], dtype=np.int64)
    c_cached = np.zeros(n_prefixes, dtype=np.bool_)
    c_refs = np.zeros(n_prefixes, dtype=np.int64)
    c_rel = np.zeros(n_prefixes, dtype=np.int64)
    c_blocks = np.zeros(n_prefixes, dtype=np.int64)
    used = 0
    evictable = 0
    tick = 0
    nres = 0
    head = 0
    t = 0.0
    ndc = 0                                         # res[:ndc] decode, res[ndc:nres] are in prefill
    while head < n or nres > 0:
        # make room out here, between runs of the loop below (no array is re-bound in that loop: see
        # reserve_instance)
        it_t, it_dt, it_res, it_dec, it_p, it_kv, g_v, g_c = make_room(record, n_it, n_g, room, it_t, it_dt, it_res,
                                                                        it_dec, it_p, it_kv, g_v, g_c)
        while (head < n or nres > 0) and (not record or (n_it < it_t.shape[0] and n_g + room <= g_v.shape[0])):
            if nres == 0 and ready[queue[head]] > t:
                t = ready[queue[head]]
            # 0. grow the decoders' blocks in admission order; evict, else preempt the newest
            i = 0
            ctx = 0
            while i < ndc:
                r = res[i]
                # ⌈T/bt⌉ - shared - own without a division: T grew by one token since its blocks held T - 1
                lack = 1 if prompt[r] + gen[r] > (own[r] + shared[r]) * bt else 0
                grows = True
                while n_blocks - used < lack:
                    if evictable > 0:
                        freed = _evict_lru(c_cached, c_refs, c_rel, c_blocks)
                        used -= freed
                        evictable -= freed
                        continue
                    nres -= 1
                    ndc = min(ndc, nres)
                    v = res[nres]
                    head -= 1                            # the newest resident re-enters the queue's front
                    queue[head] = v
                    used, tick, evictable = _release(v, own, shared, pid, c_refs, c_rel, c_blocks, used, tick, evictable)
                    pleft[v] = prompt[v] + gen[v]
                    preempt[v] += 1
                    if v == r:
                        grows = False
                        break
                if grows:
                    own[r] += lack
                    used += lack
                    ctx += prompt[r] + gen[r]
                    i += 1
            # 1. admit, strict FCFS
            while head < n and nres < max_batch:
                r = queue[head]
                if ready[r] > t:
                    break
                T = prompt[r] + gen[r]
                s = shared[r]
                q = pid[r]
                hit = s > 0 and c_cached[q]
                need = (T + bt - 1) // bt - (s if hit else 0)
                mine = c_blocks[q] if hit and c_refs[q] == 0 else 0
                if need > n_blocks - used + evictable - mine:
                    break
                if hit:
                    evictable -= mine
                    c_refs[q] += 1
                while n_blocks - used < need:
                    freed = _evict_lru(c_cached, c_refs, c_rel, c_blocks)
                    used -= freed
                    evictable -= freed
                if s > 0 and not hit:
                    c_cached[q] = True
                    c_refs[q] = 1
                    c_blocks[q] = s
                    used += s
                own[r] = (T + bt - 1) // bt - s
                used += own[r]
                pleft[r] = T - s * bt if hit else T
                if hit:
                    cached_tok[r] += s * bt
                if np.isnan(admit[r]):
                    admit[r] = t
                res[nres] = r
                nres += 1
                head += 1
            # 2. chunked prefill in admission order (a prefix of the prefilling residents completes); 3. the time
            p, n_done = chunk_prefill(res, ndc, nres, pleft, chunk)
            dt = iteration_time(ndc, p, ctx, fixed, wread, ptok, comm, dctx, pattn)
            t0 = t
            t = t0 + dt
            if record:
                record_iteration(it_t, it_dt, it_res, it_dec, it_p, it_kv, n_it, t0, dt, nres, ndc, p, used)
            n_it += 1
            # 4. tokens at t (every decoder's last token was at t0: one gap record); leave; compact in order
            if record and ndc > 0:
                g_v[n_g] = t - t0
                g_c[n_g] = ndc
                n_g += 1
            keep = 0
            for i in range(ndc + n_done):
                r = res[i]
                if i >= ndc:
                    if gen[r] == 0:
                        first_tok[r] = t
                    elif record:
                        g_v[n_g] = t - last[r]
                        g_c[n_g] = 1
                        n_g += 1
                gen[r] += 1
                last[r] = t
                if gen[r] == out[r]:
                    finish[r] = t
                    used, tick, evictable = _release(r, own, shared, pid, c_refs, c_rel, c_blocks, used, tick, evictable)
                    continue
                res[keep] = r
                keep += 1
            for i in range(ndc + n_done, nres):           # the residents still in prefill follow
                res[keep + i - ndc - n_done] = res[i]
            nres = keep + nres - ndc - n_done
            ndc = keep
    return InstanceRun(it_t[:n_it], it_dt[:n_it], it_res[:n_it], it_dec[:n_it], it_p[:n_it], it_kv[:n_it], g_v[:n_g],
                       g_c[:n_g])
