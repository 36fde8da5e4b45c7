"""Plain-Python reference for :func:`accelbook.serving.simulate`, written from the module docstring
(not from the kernel): each instance is a list of request dicts, each iteration admits, prefills,
decodes and retires exactly as the docstring's steps 1-4 say. Slow and readable.

Returns per-request ``first_token_s``, ``finish_s``, ``admit_s`` (lists, arrival order) and every
inter-token gap (a flat list, one entry per gap, ``t_token - t_previous_token``).
"""

from __future__ import annotations

import math


def _iteration_time(cost, n_dec, ctx, p):
    # the docstring's dt, left to right: one weight read that the n tokens' matmuls overlap, the all-reduces'
    # latency once and their bytes per token, the decoders' KV reads, the prompt tokens' attention
    n = float(n_dec + p)
    return (cost.fixed_s + max(cost.weight_read_s, n * cost.per_token_s) + n * cost.comm_per_token_s
            + float(ctx) * cost.decode_per_ctx_token_s + float(p) * cost.prefill_attn_per_token_s)


def _run_instance(requests, cost, chunk, role):
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
        end = t + _iteration_time(cost, len(decodes), ctx, prefilled)
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


def reference_simulate(arrival_s, prompt_len, output_len, cost, n_instances=1, chunk_tokens=512, disaggregated=False,
                       n_prefill=1, n_decode=1, prefill_cost=None, decode_cost=None, kv_bytes_per_token=0.0,
                       link_bytes_per_s=math.inf):
    """(first_token_s, finish_s, admit_s, gaps) for the workload given as plain sequences."""
    reqs = [{"id": i, "arrival": float(a), "ready": float(a), "prompt": int(p), "output": int(o), "left": int(p),
             "tokens": 0, "last": 0.0, "first": None, "finish": None, "admit": None}
            for i, (a, p, o) in enumerate(zip(arrival_s, prompt_len, output_len))]
    gaps = []
    if not disaggregated:
        for k in range(n_instances):
            mine = [r for r in reqs if r["id"] % n_instances == k]
            gaps += _run_instance(mine, cost, chunk_tokens, "colocated")
    else:
        pc = prefill_cost or cost
        dc = decode_cost or cost
        for k in range(n_prefill):
            mine = [r for r in reqs if r["id"] % n_prefill == k]
            gaps += _run_instance(mine, pc, chunk_tokens, "prefill")
        for r in reqs:
            r["ready"] = r["first"] + (r["prompt"] * kv_bytes_per_token) / link_bytes_per_s
        for k in range(n_decode):
            mine = [r for r in reqs if r["id"] % n_decode == k and r["output"] >= 2]
            mine.sort(key=lambda r: (r["ready"], r["id"]))
            prefill_admit = {r["id"]: r["admit"] for r in mine}
            gaps += _run_instance(mine, dc, chunk_tokens, "decode")
            for r in mine:                 # admit_s reports admission to the prefill instance
                r["admit"] = prefill_admit[r["id"]]
    return ([r["first"] for r in reqs], [r["finish"] for r in reqs], [r["admit"] for r in reqs], gaps)
