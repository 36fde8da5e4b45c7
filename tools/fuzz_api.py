"""An independent fuzz of accelbook's public API with a careful user's mistakes (issue 18).

Each call takes a valid baseline call of a public function and replaces one or two arguments by a
mistake: zero, negative, tiny, NaN, infinite, huge, fractional where a whole number belongs, text where a
number belongs (and a number where a name belongs), ``None``, a list, a boolean, an unknown name.
Every call runs in a worker process under a time limit (``--timeout``, 10 s) and a memory watch
(``--mem-gib``, 4 GiB of resident memory, polled); the outcome is one of

- ``ok``: a result with no NaN, infinity or negative number in it;
- ``clear``: a ``ValueError`` or ``TypeError`` whose message names the changed argument (or, for an
  unknown name, quotes it);
- ``unclear``: any other exception, or a message that names neither;
- ``silent_wrong``: a result with a NaN, an infinity or a negative number in it;
- ``hang``: past the time limit; ``memory``: past the memory limit; ``crash``: the worker died.

Run (about 4,000 calls, a few minutes on one core)::

    NUMBA_CACHE_DIR=.numba_cache/fuzz .venv/bin/python tools/fuzz_api.py --calls 4200 --seed 0

It prints the counts per outcome and per function and the first few examples of each bad outcome;
``--json FILE`` writes every call. ``tests/test_fuzz_api.py`` runs a small sample with a fixed seed.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import multiprocessing as mp
import os
import random
import signal
import sys
import time

#: the mistakes, by name (values are built in the worker: some are not picklable)
JUNK = ["zero", "neg", "neg_frac", "half", "tiny", "nan", "inf", "neg_inf", "huge_float", "huge_int", "big_int",
        "text", "numeric_text", "none", "list", "true", "unknown_name"]


def junk_value(key: str):
    return {"zero": 0, "neg": -1, "neg_frac": -1.5, "half": 0.5, "tiny": 1e-300, "nan": math.nan, "inf": math.inf,
            "neg_inf": -math.inf, "huge_float": 1e300, "huge_int": 10**30, "big_int": 10**9, "text": "abc",
            "numeric_text": "8", "none": None, "list": [1, 2], "true": True, "unknown_name": "no-such-name"}[key]


def _inference_targets(m8, h100, df) -> dict:
    from accelbook import inference as inf

    base = dict(model="llama-3.1-8b", chip="h100")
    est = dict(base, n_chips=8, batch_size=8, input_len=1024, output_len=256, precision="bf16", tp=None, pp=1,
               kv_precision=None, mem_efficiency=None, hop_latency_s=None, price_usd_per_hour=None,
               weight_streaming_bytes_per_s=None, tokens_per_seq=1, cuda_graphs=True, attention="tp")
    sweep_kw = dict(base, n_chips=8, input_len=1024, output_len=256, precision="bf16", max_tp=64)
    sc_fields = dict(fixed_s=1e-4, weight_read_s=5e-3, per_token_s=1e-5, comm_per_token_s=1e-7,
                     decode_per_ctx_token_s=1e-8, prefill_attn_per_token_s=1e-8, max_batch=64, max_kv_tokens=100000)
    return {
        # -- inference --------------------------------------------------------------------------------
        "inference.estimate": (inf.estimate, est),
        "inference.min_chips": (inf.min_chips, dict(base, precision="bf16", input_len=1024, output_len=256,
                                                    batch_size=1, max_tp=64)),
        "inference.sweep": (inf.sweep, dict(sweep_kw, batches=[1, 8])),
        "inference.max_throughput": (inf.max_throughput, dict(sweep_kw, tpot_target_s=None, ttft_target_s=None)),
        "inference.layouts": (lambda model, n, max_tp, attention: list(inf.layouts(model, n, max_tp, attention)),
                              dict(model=m8, n=8, max_tp=64, attention="tp")),
        "inference.pareto": (inf.pareto, dict(df=df, x="tokens_per_s_per_user", y="tokens_per_s_per_chip")),
        "inference.frontier": (inf.frontier, dict(model="llama-3.1-8b", chips={"a": ("h100", 8)}, input_len=1024,
                                                  output_len=256, precision="bf16")),
        "inference.expected_accepted": (inf.expected_accepted, dict(acceptance=0.7, gamma=4)),
        "inference.speculative": (inf.speculative, dict(model="llama-3.1-70b", draft="llama-3.1-8b", chip="h100",
                                                        n_chips=8, batch_size=8, input_len=1024, output_len=256,
                                                        gamma=4, acceptance=0.7, precision="fp8", tp=None)),
        "inference.heterogeneous_decode": (inf.heterogeneous_decode, dict(
            model="llama-3.1-70b", gpu="h200", n_gpus=8, lpu="groq-lp30", n_lpus=256, batch_size=64,
            context_len=4096, precision="fp8", link_bytes_per_s=100e9, link_latency_s=5e-6, microbatches=4)),
        "inference.disaggregation": (inf.disaggregation, dict(base, chips_per_instance=8, input_len=1024,
                                                              output_len=256, decode_batch=32, precision="fp8",
                                                              link_bytes_per_s=50e9)),
        "inference.step_cost": (inf.step_cost, dict(base, n_chips=1, precision="fp8", tp=None, input_len=1024,
                                                    output_len=256)),
        "inference.StepCost": (inf.StepCost, sc_fields),
        "inference.plausibility": (inf.plausibility, dict(chip="cerebras-cs3", model="llama-3.1-8b",
                                                          tokens_per_s_per_user=1000.0)),
        "inference.published_speeds": (inf.published_speeds, dict(chip="cerebras-cs3")),
        "inference.link_terms": (inf.link_terms, dict(chip="groq-lpu-v1")),
        "inference.nearest_peak_flop_s": (inf.nearest_peak_flop_s, dict(chip=h100, precision="fp8")),
        "inference.peak_precision": (inf.peak_precision, dict(chip=h100, precision="fp8")),
        "inference.gemm_efficiency": (inf.gemm_efficiency, dict(chip=h100, precision="fp8")),
        "inference.pass_shape_efficiency": (inf.pass_shape_efficiency, dict(model=m8, chip=h100, tokens=128, tp=2)),
        "inference.layer_gemms": (inf.layer_gemms, dict(model=m8, M=128, tp=2)),
        "inference.usable_bytes": (inf.usable_bytes, dict(chip=h100)),
        "inference.weights_read_bytes": (inf.weights_read_bytes, dict(model=m8, bpe=2.0, tokens=8.0)),
        "inference.decode_attention_flops_per_context_token": (inf.decode_attention_flops_per_context_token,
                                                               dict(model=m8)),
        "inference.error_band": (inf.error_band, dict(metric=None, table=None, role="target")),
        "inference.published_results": (inf.published_results, dict(path=None)),
        "inference.validation_table": (inf.validation_table, dict(path=None)),
    }


def _serving_targets(sc, wl, res) -> dict:
    from accelbook.inference import mlperf, serving

    return {
        # -- the serving simulator ------------------------------------------------------------------------
        "serving.workload": (serving.workload, dict(n_requests=100, rate_per_s=20.0, arrival="poisson",
                                                    burstiness=1.0, prompt=("fixed", 256), output=("fixed", 64),
                                                    seed=0, prefix=None)),
        "serving.simulate": (serving.simulate, dict(workload=wl, cost=sc, n_instances=1, chunk_tokens=512,
                                                    kv_policy="reserve", block_tokens=16)),
        "serving.simulate_disaggregated": (serving.simulate, dict(
            workload=wl, cost=sc, disaggregated=True, n_prefill=1, n_decode=1, kv_bytes_per_token=1e5,
            link_bytes_per_s=50e9)),
        "serving.load_sweep": (serving.load_sweep, dict(cost=sc, rates=[5.0, 20.0], n_requests=100, seed=0,
                                                        ttft_slo_s=1.0, tbt_slo_s=0.1)),
        "serving.ServingResult.goodput": (res.goodput, dict(ttft_slo_s=1.0, tbt_slo_s=0.1)),
        "serving.ServingResult.tbt_percentile": (res.tbt_percentile, dict(q=99.0)),
        "mlperf.rate_meets_limits": (mlperf.rate_meets_limits, dict(result=res, ttft_limit_s=2.0, tpot_limit_s=0.2,
                                                                    percentile=99.0)),
        "mlperf.highest_rate": (mlperf.highest_rate, dict(cost=sc, replicas=1, prompt=("fixed", 256),
                                                          output=("fixed", 64), ttft_limit_s=2.0, tpot_limit_s=0.2,
                                                          percentile=99.0, n_requests=100, seed=0, steps=3,
                                                          max_seconds=5.0)),
    }


def _training_and_lower_targets(m8, h100) -> dict:
    from accelbook import training as tr
    from accelbook.chip import roofline
    from accelbook.economics import cost
    from accelbook.network import collectives
    from accelbook.network import topology as tp

    base = dict(model="llama-3.1-8b", chip="h100")
    return {
        # -- training -------------------------------------------------------------------------------------
        "training.estimate": (tr.estimate, dict(base, n_chips=8, global_batch_tokens=2**21, seq_len=4096, tp=1,
                                                pp=1, dp=None, ep=1, cp=1, zero_stage=1, recompute="selective",
                                                microbatch=1, vp=1, precision="bf16", cluster=None,
                                                flash_attention=True, sequence_parallel=True, memory_reserve=0.1,
                                                tp_overlap=0.0, grad_sync=None, cp_comm="ring", schedule="1f1b")),
        "training.search": (tr.search, dict(base, n_chips=8, global_batch_tokens=2**21, seq_len=4096,
                                            precision="bf16", memory_reserve=0.1, tp_overlap=0.0, top=5)),
        "training.scaling": (tr.scaling, dict(base, chip_counts=[8, 16], seq_len=4096,
                                              batch_tokens_per_chip=2**18, precision="bf16")),
        "training.model_flops_utilisation": (tr.model_flops_utilisation, dict(
            tokens_per_s_per_chip=3000.0, model=m8, chip=h100, seq_len=4096, precision="bf16", attention="full",
            peak="bf16")),
        "training.counted_flops_per_token": (tr.counted_flops_per_token, dict(model=m8, seq_len=4096,
                                                                             attention="full")),
        "training.reference_peak_flop_s": (tr.reference_peak_flop_s, dict(chip=h100, precision="bf16",
                                                                         peak="bf16")),
        "training.time_to_train_words": (tr.time_to_train_words, dict(ideal_s=86400.0, goodput=None)),
        "training.check_goodput": (tr.check_goodput, dict(goodput=0.9)),
        "training.error_band": (tr.error_band, dict(table=None, role="target")),
        # -- a few of the layers below, for the record ------------------------------------------------------
        "roofline.time_bounds": (roofline.time_bounds, dict(flops=1e12, bytes_moved=1e9, peak_flop_s=1e15,
                                                            bw_bytes_per_s=3e12)),
        "roofline.layer_roofline": (roofline.layer_roofline, dict(base, phase="decode", batch=8, seq_len=1024)),
        "collectives.estimate": (collectives.estimate, dict(collective="all_reduce", message_bytes=1e9,
                                                            topology=tp.ring(8))),
        "cost.usd_per_token": (cost.usd_per_token, dict(tokens_per_s=1000.0, chip="h100")),
        "cost.training_tokens_per_s": (cost.training_tokens_per_s, dict(model="llama-3.1-8b", chip="h100",
                                                                        mfu=0.4)),
    }


def targets() -> dict:
    """label -> (callable, baseline kwargs). Built in the worker; objects the calls need made once."""
    import accelbook as ab
    from accelbook import inference as inf
    from accelbook.inference import serving

    m8, h100 = ab.get_model("llama-3.1-8b"), ab.get_chip("h100")
    sc = inf.step_cost("llama-3.1-8b", "h100", 1, input_len=512, output_len=128)
    wl = serving.workload(100, 20.0, prompt=("uniform", 64, 512), output=("uniform", 16, 128), seed=1)
    res = serving.simulate(wl, sc)
    df = inf.sweep("llama-3.1-8b", "h100", 8, 1024, 256)
    return {**_inference_targets(m8, h100, df), **_serving_targets(sc, wl, res), **_training_and_lower_targets(m8, h100)}


# -- the worker -------------------------------------------------------------------------------------------
#: fields that may be negative: an error band's signed errors (the model is optimistic or pessimistic)
SIGNED = {"median", "lo", "hi", "low", "high"}


def _bad_numbers(v, depth=0):
    """The first NaN, infinite or negative number inside a result (dataclass, dict, sequence, array,
    DataFrame), or None. DataFrame columns named like an error or a difference, and :data:`SIGNED`
    fields, may be negative."""
    import dataclasses

    import numpy as np
    import pandas as pd
    if depth > 6 or v is None or isinstance(v, (bool, str, bytes, np.bool_)):
        return None
    if isinstance(v, (int, float, np.integer, np.floating)):
        x = float(v)
        return None if math.isfinite(x) and x >= 0 else x
    if isinstance(v, pd.DataFrame):
        for c in v.columns:
            col = v[c]
            if col.dtype.kind in "if" and not any(w in str(c) for w in ("error", "delta", "diff")):
                vals = col.to_numpy(dtype=float)
                bad = vals[~(np.isfinite(vals) & (vals >= 0)) & ~np.isnan(vals) | np.isinf(vals)]
                if bad.size:
                    return float(bad[0])
        return None
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "f":          # integer arrays hold ids, with -1 for "none" (a request's prefix)
            a = v.astype(float).ravel()
            bad = a[~(np.isfinite(a) & (a >= 0))]
            return float(bad[0]) if bad.size else None
        return None
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        items = [getattr(v, f.name) for f in dataclasses.fields(v) if f.name not in SIGNED]
    elif isinstance(v, dict):
        items = [x for k, x in v.items() if k not in SIGNED]
    elif isinstance(v, (list, tuple)):
        items = list(v)
    else:
        return None
    for x in items:
        b = _bad_numbers(x, depth + 1)
        if b is not None:
            return b
    return None


def _names(msg: str, changed: dict) -> bool:
    """Whether an error message names a changed argument, quotes a changed text value (an unknown
    name), or, for a file, starts with the path it could not read."""
    return (any(a in msg for a in changed)
            or any(isinstance(v, str) and v and (repr(v) in msg or msg.startswith(f"{v}:")) for v in changed.values()))


def _classify(fn, kwargs: dict, changed: dict) -> tuple[str, str]:
    try:
        r = fn(**kwargs)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        return ("clear" if _names(msg, changed) else "unclear"), f"{type(exc).__name__}: {msg[:200]}"
    except Exception as exc:  # noqa: BLE001 - the fuzz records every kind of failure
        return "unclear", f"{type(exc).__name__}: {str(exc)[:200]}"
    bad = _bad_numbers(r)
    return ("silent_wrong", f"result holds {bad!r}") if bad is not None else ("ok", "")


#: arguments that send a function to another compiled kernel than its base call does, warmed up too (a
#: search for more than 64 layouts, or all of them, evaluates every layout instead of ranking them)
WARM_EXTRA = {"training.search": dict(top=None)}


def _worker(conn, warm: bool):
    import warnings
    warnings.simplefilter("ignore")
    table = targets()
    if warm:                                    # compile (or load) the Numba kernels outside the timed calls
        for label, (fn, kw) in table.items():
            for extra in ({}, WARM_EXTRA.get(label)):
                try:
                    if extra is not None:
                        fn(**{**kw, **extra})
                except Exception:  # noqa: BLE001
                    pass
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        label, muts = job
        fn, kw = table[label]
        kw = dict(kw)
        changed = {a: junk_value(j) for a, j in muts}
        kw.update(changed)
        conn.send(_classify(fn, kw, changed))


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


class Runner:
    """A worker process, restarted after a hang, a memory overrun or a crash."""

    def __init__(self, timeout: float, mem_bytes: float):
        self.timeout, self.mem_bytes, self.proc, self.first = timeout, mem_bytes, None, True

    def _start(self):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, True), daemon=True)
        self.proc.start()
        child.close()                   # so that a dead worker reads as end-of-file here
        t0 = time.perf_counter()
        while not self.conn.poll(0.2):
            if not self.proc.is_alive() or time.perf_counter() - t0 > 600:
                raise RuntimeError(f"the fuzz worker did not start (exit code {self.proc.exitcode})")
        self.conn.recv()

    def _kill(self):
        if self.proc is not None and self.proc.is_alive():
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.join(5)
        self.proc = None

    def call(self, label: str, muts: list) -> tuple[str, str, float]:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        t0 = time.perf_counter()
        self.conn.send((label, muts))
        while True:
            if self.conn.poll(0.05):
                try:
                    kind, detail = self.conn.recv()
                except (EOFError, OSError):
                    code = self.proc.exitcode if self.proc is not None else None
                    self._kill()
                    return "crash", f"the worker died (exit code {code})", time.perf_counter() - t0
                return kind, detail, time.perf_counter() - t0
            dt = time.perf_counter() - t0
            if not self.proc.is_alive():
                code = self.proc.exitcode
                self._kill()
                return "crash", f"the worker died (exit code {code})", dt
            if dt > self.timeout:
                self._kill()
                return "hang", f"still running after {self.timeout:g} s", dt
            rss = _rss_bytes(self.proc.pid)
            if rss > self.mem_bytes:
                self._kill()
                return "memory", f"{rss / 2**30:.1f} GiB resident", dt

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(5)
        self._kill()


def plan(labels_args: dict, n_calls: int, seed: int) -> list:
    """Every (function, argument, mistake) once, then random pairs of mistakes up to ``n_calls`` (all
    with a fixed seed); with fewer calls than single mistakes, a seeded sample of them."""
    rng = random.Random(seed)
    singles = [(lab, [(a, j)]) for lab, args in labels_args.items() for a in args for j in JUNK]
    if n_calls <= len(singles):
        return rng.sample(singles, n_calls)
    calls = list(singles)
    multi = [lab for lab, args in labels_args.items() if len(args) >= 2]
    while len(calls) < n_calls:
        lab = rng.choice(multi)
        a, b = rng.sample(labels_args[lab], 2)
        calls.append((lab, [(a, rng.choice(JUNK)), (b, rng.choice(JUNK))]))
    return calls


def labels_and_args() -> dict:
    """label -> the names of its arguments (from the baseline kwargs), computed in a throwaway worker-free way."""
    return {lab: list(kw) for lab, (_, kw) in targets().items()}


def run(n_calls: int = 4200, seed: int = 0, timeout: float = 10.0, mem_gib: float = 4.0, only=None,
        verbose: bool = True) -> dict:
    """Run the fuzz; returns ``{"counts": {...}, "by_function": {...}, "examples": {...}, "calls": [...]}``."""
    la = labels_and_args()
    if only:
        la = {k: v for k, v in la.items() if any(k.startswith(o) for o in only)}
    calls = plan(la, n_calls, seed)
    runner = Runner(timeout, mem_gib * 2**30)
    records, t0 = [], time.perf_counter()
    try:
        for i, (lab, muts) in enumerate(calls):
            kind, detail, dt = runner.call(lab, muts)
            records.append(dict(function=lab, mistakes=muts, outcome=kind, detail=detail, seconds=round(dt, 3)))
            if verbose and kind in ("hang", "memory", "crash"):
                print(f"  {kind}: {lab} {muts}: {detail}", file=sys.stderr, flush=True)
            if verbose and (i + 1) % 500 == 0:
                print(f"  {i + 1} calls, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    finally:
        runner.close()
    counts = collections.Counter(r["outcome"] for r in records)
    by_fn = collections.defaultdict(collections.Counter)
    for r in records:
        by_fn[r["function"]][r["outcome"]] += 1
    examples = collections.defaultdict(list)
    for r in records:
        if r["outcome"] not in ("ok", "clear") and len(examples[r["outcome"]]) < 200:
            examples[r["outcome"]].append(r)
    return dict(counts=dict(counts), by_function={k: dict(v) for k, v in by_fn.items()}, examples=dict(examples),
                calls=records, seconds=time.perf_counter() - t0)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=4200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--mem-gib", type=float, default=4.0)
    p.add_argument("--only", nargs="*", help="function label prefixes (e.g. inference. training.estimate)")
    p.add_argument("--json", help="write every call's record here")
    p.add_argument("--show", type=int, default=8, help="examples shown per bad outcome")
    a = p.parse_args(argv)
    out = run(a.calls, a.seed, a.timeout, a.mem_gib, a.only)
    n = sum(out["counts"].values())
    print(f"{n} calls in {out['seconds']:.0f} s")
    for k in ("ok", "clear", "unclear", "silent_wrong", "hang", "memory", "crash"):
        c = out["counts"].get(k, 0)
        print(f"  {k:13s} {c:6d}  {100 * c / max(n, 1):5.1f} %")
    for k, rs in out["examples"].items():
        print(f"\n{k} (first {a.show}):")
        for r in rs[: a.show]:
            print(f"  {r['function']} {r['mistakes']}: {r['detail']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return out


if __name__ == "__main__":
    main()
