"""Slow, plain-Python reference for the layout search of :mod:`accelbook.training`.

Enumerates every combination of the candidate values with :func:`itertools.product`, keeps the
valid ones by the rules as the module's documentation states them (written here from the text, not
from the kernel's loop), and evaluates each with the un-jitted Python body of ``kernel._evaluate``, the
formula helpers it calls un-jitted too. The search kernel must return exactly this set of layouts with
the same results.
"""

from __future__ import annotations

import itertools
import types

import numpy as np
from numba.core.registry import CPUDispatcher

from accelbook import training
from accelbook.specs.chips import MEMORY_RESERVE, usable_memory_bytes
from accelbook.training import kernel, slots

FIELDS = ("tp", "cp", "pp", "vp", "ep", "microbatch", "zero_stage", "recompute", "grad_sync", "schedule")


def python_body(fn, _seen=None):
    """The plain-Python version of an ``@njit`` function: its ``py_func``, with every ``@njit``
    function it calls by name replaced by that function's plain-Python version (recursively), so
    that no compiled code runs in the reference."""
    _seen = {} if _seen is None else _seen
    if fn not in _seen:
        py = fn.py_func
        env = dict(py.__globals__)
        _seen[fn] = types.FunctionType(py.__code__, env, py.__name__, py.__defaults__, py.__closure__)
        for name in py.__code__.co_names:
            if isinstance(env.get(name), CPUDispatcher):
                env[name] = python_body(env[name], _seen)
    return _seen[fn]


def is_valid(tp, cp, pp, vp, ep, mb, zero, gsync, sched=0, *, n, B, s, layers, heads, experts, dps):
    """The documented validity rules of a layout; returns (valid, dp)."""
    if tp * cp * pp == 0 or n % (tp * cp * pp) != 0:      # tp·cp·pp·dp = n with a whole dp
        return False, None
    dp = n // (tp * cp * pp)
    if dp not in dps:                                     # dp among its candidates (pinned or every divisor)
        return False, dp
    # ZeRO-0/1 reduce gradients once a step, ZeRO-3 every microbatch, ZeRO-2 either
    if (zero < 2 and gsync != 0) or (zero == 3 and gsync != 1):
        return False, dp
    if heads % tp != 0:                                   # tp | heads
        return False, dp
    if cp > 1 and s % (2 * cp) != 0:                      # load-balanced context parallelism
        return False, dp
    if pp > layers:                                       # no empty stage
        return False, dp
    if dp % ep != 0 or experts % ep != 0:                 # ep | dp and ep | experts
        return False, dp
    if B % (dp * mb) != 0:                                # dp·mb | B
        return False, dp
    m = B // (dp * mb)
    if vp > 1:                                            # interleaving needs pp > 1, m % pp, pp·vp ≤ L
        if pp == 1 or m % pp != 0 or pp * vp > layers:
            return False, dp
    if sched != 0 and (pp == 1 or vp != 1):               # ZB-H1 and DualPipe: a pipeline, no interleaving
        return False, dp
    if sched == 2 and (pp % 2 != 0 or m % 2 != 0):        # DualPipe: even pp and microbatches (both ends)
        return False, dp
    return True, dp


def reference_search(model, chip, cluster, n, B, s, precision="bf16", flash=True, seqpar=True,
                     reserve=MEMORY_RESERVE, tp_overlap=0.0, cp_comm="ring", **fixed):
    """{(tp, cp, pp, vp, dp, ep, microbatch, zero_stage, recompute name, grad_sync name): result vector} over every
    valid layout, each evaluated by the plain-Python body of ``kernel._evaluate`` (:func:`python_body`)."""
    space = training.search_space(model, n, **fixed)
    mv = slots.model_vector(model, s)
    cv, _ = slots.chip_vector(chip, cluster, precision, s, slots.attention_head_dim(model))
    experts = model.moe.n_experts if model.moe is not None else 1
    evaluate = python_body(kernel._evaluate)
    out = {}
    dps = {int(d) for d in space["dp"]}
    for tp, cp, pp, vp, ep, mb, zero, rec, gsync, sched in itertools.product(*(space[k] for k in FIELDS)):
        tp, cp, pp, vp, ep, mb = (int(x) for x in (tp, cp, pp, vp, ep, mb))
        ok, dp = is_valid(tp, cp, pp, vp, ep, mb, int(zero), int(gsync), int(sched), n=n, B=B, s=s, layers=model.n_layers,
                          heads=model.n_heads, experts=experts, dps=dps)
        if not ok:
            continue
        res = np.empty(training.N_RESULTS)
        evaluate(mv=mv, c=cv, B=float(B), s=float(s), tp=float(tp), cp=float(cp), pp=float(pp), vp=float(vp),
                 dp=float(dp), ep=float(ep), mb=float(mb), zero=int(zero), rec=int(rec), gsync=int(gsync), sched=int(sched), flash=flash,
                 seqpar=seqpar, usable_bytes=usable_memory_bytes(chip.hbm_bytes, reserve), opt=slots.options_vector(tp_overlap, cp_comm),
                 out=res)
        key = (tp, cp, pp, vp, dp, ep, mb, int(zero), training.RECOMPUTE[int(rec)], slots.GRAD_SYNC[int(gsync)],
               slots.SCHEDULES[int(sched)])
        assert key not in out
        out[key] = res
    return out
