"""Plain-Python reference for :func:`accelbook.serving.simulate`, written from the module docstring
(not from the kernel): each instance is a list of request dicts, each iteration admits, prefills,
decodes and retires exactly as the docstring's steps 1-4 say. Slow and readable.

Returns per-request ``first_token_s``, ``finish_s``, ``admit_s`` (lists, arrival order) and every
inter-token gap (a flat list, one entry per gap, ``t_token - t_previous_token``). Pass a dict as
``record`` for the rest: per-request ``preemptions`` and ``cached_tokens``, and ``iterations``, one
tuple per iteration (instance, start, dt, resident, decoding, prefill tokens, kv blocks), instance
by instance.

The paged policy (steps 0-4 of the docstring's **Paged KV**, and **Prefix caching**) is its own
function, :func:`_run_paged_instance`: a pool of blocks counted from the residents' ``own`` blocks and
the cached prefixes, nothing carried between iterations but what the docstring names.
"""

from __future__ import annotations

import math


def _iteration_time(cost, n_dec, ctx, p):
    # the docstring's dt, left to right: one weight read that the n tokens' matmuls overlap, the all-reduces'
    # latency once and their bytes per token, the decoders' KV reads, the prompt tokens' attention
    n = float(n_dec + p)
    return (cost.fixed_s + max(cost.weight_read_s, n * cost.per_token_s) + n * cost.comm_per_token_s
            + float(ctx) * cost.decode_per_ctx_token_s + float(p) * cost.prefill_attn_per_token_s)


def _run_instance(requests, cost, chunk, role, its, prefill_first=False, inflight=False):
    """``requests``: dicts in queue order with keys id, ready, prompt, output, left (prompt tokens to
    prefill), tokens (made so far), last (time of the last token). ``role``: colocated, prefill or
    decode. Mutates the dicts (first, finish, admit) and returns the list of gaps."""
    waiting = list(requests)
    resident = []
    kv_used = 0
    gaps = []
    t = 0.0

    def need(req):
        return req["prompt"] if role == "prefill" else req["prompt"] + req["output"]

    while waiting or resident:
        if not resident and waiting[0]["ready"] > t:
            t = waiting[0]["ready"]
        # 1. admit, strict FCFS
        while waiting and len(resident) < cost.max_batch and waiting[0]["ready"] <= t \
                and kv_used + need(waiting[0]) <= cost.max_kv_tokens:
            req = waiting.pop(0)
            kv_used += need(req)
            req["admit"] = t
            resident.append(req)
        # 2. chunked prefill in admission order; 3. who decodes
        budget = chunk
        prefilled = 0
        completes, decodes = [], []
        if prefill_first and any(req["left"] > 0 for req in resident):
            # whole prompts in admission order while they fit the budget; nobody decodes
            budget, prefilled = _take_whole_prompts(resident, budget, completes)
        if inflight:
            # every decoder decodes and takes a token of the budget; whole prompts within what is left
            decodes = [req for req in resident if req["left"] == 0]
            budget -= len(decodes)
            budget, prefilled = _take_whole_prompts(resident, budget, completes)
        for req in resident if not (prefill_first and prefilled) and not inflight else ():
            if req["left"] == 0:
                decodes.append(req)
            elif budget > 0:
                take = min(req["left"], budget)
                req["left"] -= take
                budget -= take
                prefilled += take
                if req["left"] == 0:
                    completes.append(req)
        ctx = sum(req["prompt"] + req["tokens"] for req in decodes)
        dt = _iteration_time(cost, len(decodes), ctx, prefilled)
        its.append((t, dt, len(resident), len(decodes), prefilled, kv_used))
        end = t + dt
        # 4. tokens at the end of the iteration
        for req in completes:
            req["tokens"] = 1
            req["first"] = end
            req["last"] = end
        for req in decodes:
            gaps.append(end - req["last"])
            req["tokens"] += 1
            req["last"] = end
        leaving = []
        for req in resident:
            if req in completes and role == "prefill":
                leaving.append(req)
            elif req["tokens"] == req["output"] and (req in completes or req in decodes):
                leaving.append(req)
        for req in leaving:
            if req["tokens"] == req["output"]:
                req["finish"] = end
            kv_used -= need(req)
            resident.remove(req)
        t = end
    return gaps


def _blocks(tokens, b):
    return -(-tokens // b)


def _run_paged_instance(requests, cost, chunk, b, caching, its):
    """The docstring's **Paged KV** steps 0-4 and **Prefix caching** on one instance. ``requests``: dicts
    in arrival order (keys as :func:`_run_instance`, plus pid, plen). Returns the gaps."""
    n_blocks = cost.max_kv_tokens // b
    waiting = list(requests)            # preempted requests first (admission order), then never admitted
    resident = []                       # admission order
    cache = {}                          # prefix id -> {"blocks": shared blocks, "refs": residents, "released": tick}
    tick = [0]
    gaps = []
    t = 0.0

    def shared(req):                    # the prefix blocks a request references while resident (0: none)
        return req["plen"] // b if caching and req["pid"] >= 0 else 0

    def used():
        return sum(r["own"] for r in resident) + sum(c["blocks"] for c in cache.values())

    def evictable(but=None):
        return [q for q, c in cache.items() if c["refs"] == 0 and q != but]

    def evict_lru():
        q = min(evictable(), key=lambda q: cache[q]["released"])
        del cache[q]

    def release(req):
        if shared(req) > 0:
            c = cache[req["pid"]]
            c["refs"] -= 1
            if c["refs"] == 0:
                c["released"] = tick[0]
                tick[0] += 1

    def preempt(victim):
        resident.remove(victim)
        release(victim)
        victim["own"] = 0
        victim["left"] = victim["prompt"] + victim["tokens"]
        victim["preemptions"] += 1
        waiting.insert(0, victim)

    while waiting or resident:
        if not resident and waiting[0]["ready"] > t:
            t = waiting[0]["ready"]
        # 0. grow the decoders' blocks, in admission order, preempting the newest when the pool is short
        for req in list(resident):
            if req not in resident or req["left"] > 0:
                continue
            lack = _blocks(req["prompt"] + req["tokens"], b) - shared(req) - req["own"]
            while req in resident and n_blocks - used() < lack:
                if evictable():
                    evict_lru()
                else:
                    preempt(resident[-1])
            if req in resident:
                req["own"] += lack
        # 1. admit, strict FCFS (a preempted request has arrived)
        while waiting and len(resident) < cost.max_batch and waiting[0]["ready"] <= t:
            req = waiting[0]
            T = req["prompt"] + req["tokens"]
            s = shared(req)
            hit = s > 0 and req["pid"] in cache
            need = _blocks(T, b) - (s if hit else 0)
            free = n_blocks - used()
            if need > free + sum(cache[q]["blocks"] for q in evictable(but=req["pid"] if hit else None)):
                break
            waiting.pop(0)
            if hit:
                cache[req["pid"]]["refs"] += 1          # referenced now: not evictable
            while n_blocks - used() < need:
                evict_lru()
            if s > 0 and not hit:
                cache[req["pid"]] = {"blocks": s, "refs": 1, "released": None}
            req["own"] = _blocks(T, b) - s
            req["left"] = T - (s * b if hit else 0)
            req["cached"] += s * b if hit else 0
            if req["admit"] is None:
                req["admit"] = t
            resident.append(req)
        kv = used()
        # 2. chunked prefill in admission order; 3. who decodes
        budget = chunk
        prefilled = 0
        completes, decodes = [], []
        for req in resident:
            if req["left"] == 0:
                decodes.append(req)
            elif budget > 0:
                take = min(req["left"], budget)
                req["left"] -= take
                budget -= take
                prefilled += take
                if req["left"] == 0:
                    completes.append(req)
        ctx = sum(req["prompt"] + req["tokens"] for req in decodes)
        dt = _iteration_time(cost, len(decodes), ctx, prefilled)
        its.append((t, dt, len(resident), len(decodes), prefilled, kv))
        end = t + dt
        # 4. tokens at the end of the iteration; who has all its tokens leaves
        for req in completes + decodes:
            if req["tokens"] == 0:
                req["first"] = end
            else:
                gaps.append(end - req["last"])
            req["tokens"] += 1
            req["last"] = end
            if req["tokens"] == req["output"]:
                req["finish"] = end
                resident.remove(req)
                release(req)
                req["own"] = 0
        t = end
    return gaps


def _batches(arrival_s, window_s, max_batch):
    """The docstring's **Harness batching**, event by event: (release time, batch number) per request."""
    release, batch = [None] * len(arrival_s), [None] * len(arrival_s)
    waiting, nxt, nb = [], 0, 0
    stamp = e = arrival_s[0] if arrival_s else 0.0
    while nxt < len(arrival_s) or waiting:
        timeout = not (nxt < len(arrival_s) and (not waiting or arrival_s[nxt] <= e + window_s))
        if timeout:
            e += window_s
        else:
            e = arrival_s[nxt]
            waiting.append(nxt)
            nxt += 1
        if waiting and (timeout or len(waiting) >= max_batch or e - stamp >= window_s):
            for i in waiting[:max_batch]:
                release[i], batch[i] = e, nb
            waiting = waiting[max_batch:]
            nb += 1
            stamp = e
    return release, batch


def reference_simulate(arrival_s, prompt_len, output_len, cost, n_instances=1, chunk_tokens=512, disaggregated=False,
                       n_prefill=1, n_decode=1, prefill_cost=None, decode_cost=None, kv_bytes_per_token=0.0,
                       link_bytes_per_s=math.inf, kv_policy="reserve", block_tokens=16, prefix_caching=False,
                       prefix_len=None, prefix_id=None, record=None, schedule="chunked", batcher=None):
    """(first_token_s, finish_s, admit_s, gaps) for the workload given as plain sequences; ``record``
    (a dict), if given, receives ``preemptions``, ``cached_tokens`` and ``iterations``."""
    n = len(arrival_s)
    plen = [0] * n if prefix_len is None else [int(x) for x in prefix_len]
    pid = [-1] * n if prefix_id is None else [int(x) for x in prefix_id]
    reqs = [{"id": i, "arrival": float(a), "ready": float(a), "prompt": int(p), "output": int(o), "left": int(p),
             "tokens": 0, "last": 0.0, "first": None, "finish": None, "admit": None, "plen": plen[i], "pid": pid[i],
             "own": 0, "preemptions": 0, "cached": 0}
            for i, (a, p, o) in enumerate(zip(arrival_s, prompt_len, output_len))]
    gaps = []
    its = []
    owner = [r["id"] % n_instances for r in reqs]
    if batcher is not None:
        release, batch = _batches([float(a) for a in arrival_s], *batcher)
        for r in reqs:
            r["ready"] = release[r["id"]]
        owner = [b % n_instances for b in batch]
    if not disaggregated:
        for k in range(n_instances):
            mine = [r for r in reqs if owner[r["id"]] == k]
            mine_its = []
            if kv_policy == "paged":
                gaps += _run_paged_instance(mine, cost, chunk_tokens, block_tokens, prefix_caching, mine_its)
            else:
                gaps += _run_instance(mine, cost, chunk_tokens, "colocated", mine_its, schedule == "prefill_first",
                                      schedule == "inflight")
            its += [(k,) + x for x in mine_its]
    else:
        pc = prefill_cost or cost
        dc = decode_cost or cost
        for k in range(n_prefill):
            mine = [r for r in reqs if r["id"] % n_prefill == k]
            mine_its = []
            gaps += _run_instance(mine, pc, chunk_tokens, "prefill", mine_its)
            its += [(k,) + x for x in mine_its]
        for r in reqs:
            r["ready"] = r["first"] + (r["prompt"] * kv_bytes_per_token) / link_bytes_per_s
        for k in range(n_decode):
            mine = [r for r in reqs if r["id"] % n_decode == k and r["output"] >= 2]
            mine.sort(key=lambda r: (r["ready"], r["id"]))
            prefill_admit = {r["id"]: r["admit"] for r in mine}
            mine_its = []
            gaps += _run_instance(mine, dc, chunk_tokens, "decode", mine_its)
            its += [(k,) + x for x in mine_its]
            for r in mine:                 # admit_s reports admission to the prefill instance
                r["admit"] = prefill_admit[r["id"]]
    if record is not None:
        record.update(preemptions=[r["preemptions"] for r in reqs], cached_tokens=[r["cached"] for r in reqs],
                      iterations=its)
    return ([r["first"] for r in reqs], [r["finish"] for r in reqs], [r["admit"] for r in reqs], gaps)


def _take_whole_prompts(resident, budget, completes):
    """Prefill whole prompts in admission order while each fits what is left of ``budget`` (the first that does
    not stops the pass); each one taken joins ``completes``. Returns (budget left, prompt tokens prefilled)."""
    prefilled = 0
    for req in resident:
        if req["left"] == 0:
            continue
        if req["left"] > budget:
            break
        budget -= req["left"]
        prefilled += req["left"]
        req["left"] = 0
        completes.append(req)
    return budget, prefilled
