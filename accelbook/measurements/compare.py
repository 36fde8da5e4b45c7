"""A user's measurements beside the model: :func:`validation_table` of a whole file.

Every measured row (:mod:`accelbook.measurements.readers`) is predicted from the configuration it states,
with the functions the package's own validation tables use, and nothing is fitted to the file:

- **serving** (vLLM, SGLang). A run without a rate limit (``request_rate = inf``) keeps ``C`` requests in
  flight (``max_concurrency``, else every prompt at once): the static-batch estimate
  :func:`accelbook.inference.estimate` at ``B = ⌈C / replicas⌉`` sequences a replica (at most the KV cache's
  ``max_batch_size``), as :func:`accelbook.inference.validation.validation_table` predicts TensorRT-LLM's
  tables: output tokens/s, requests/s ``= tokens/s / output_len``, TPOT = ITL = the decode step, TTFT = one
  prompt's prefill at an idle server (the queue behind the other ``C - 1`` is not in it: the note says so).
  A run at a finite rate is served by the simulator (:func:`accelbook.inference.serving.simulate`, step costs
  from :func:`~accelbook.inference.step.step_cost`, ``kv_policy="paged"`` as vLLM and SGLang run) at that
  rate, Poisson or, for vLLM's ``burstiness`` ``k ≠ 1``, gamma arrivals of coefficient of variation ``1/√k``.
- **collectives** (nccl-tests): :func:`accelbook.network.collectives.estimate` on the setup's ``system``
  (a preset of :data:`accelbook.network.systems.PRESETS`, as ``data/collective_measurements.toml`` names one),
  or, from the file's device lines, HGX H100 (one host of 8 H100) or an H100 cluster (hosts of 8).
- **MLPerf** (LoadGen summary): Offline by :func:`accelbook.inference.sweep.max_throughput`; Server as
  :func:`accelbook.inference.mlperf.server_validation_table` does: tokens/s at the highest rate meeting the
  log's own TTFT and TPOT limits (:func:`~accelbook.inference.mlperf.continuous_throughput`), the latencies at
  the log's scheduled rate.
- **training** (the log schema): :func:`accelbook.training.validation.run_estimate`, the log's layout pinned,
  the ``tp``, ``pp``, ``microbatch``, ``zero_stage``, ``recompute`` and ``schedule`` it leaves out chosen by the
  search (the fastest that fits), as the published runs' unpublished values are; ``cp``, ``ep``, ``vp`` left out are 1.

``error = predicted / measured - 1``; ``dominant`` names the model's largest term for that metric (decode
step, prefill, the collective's latency or bytes, the training step's largest part) and its time.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from accelbook.inference.estimate import estimate as inference_estimate
from accelbook.inference.mlperf import continuous_throughput
from accelbook.inference.serving import simulate
from accelbook.inference.step import step_cost
from accelbook.inference.sweep import max_throughput
from accelbook.inference.workload import workload
from accelbook.limits import largest, seconds_words
from accelbook.network.collectives import estimate as collective_estimate
from accelbook.network.systems import PRESETS
from accelbook.training.step import TIME_LABELS
from accelbook.training.validation import SEARCHABLE, predicted_metric, run_estimate

from .readers import load
from .schema import chip_id, file_error, model_id, setup_of

#: rows of a rate-limited serving run the simulator serves by default (the file's count, at most this)
MAX_SIMULATED_REQUESTS = 4096
COLUMNS = ("run", "metric", "measured", "predicted", "error", "dominant", "model", "chip", "n_chips", "note", "source")


def decode_parts(est) -> dict[str, float]:
    """An inference estimate's decode-step parts (s), as :attr:`InferenceEstimate.limit` names them."""
    b = est.breakdown
    return {"reading the weights": b["decode_weights_read_s"],
            "reading the KV cache": b["decode_memory_s"] - b["decode_weights_read_s"],
            "elementwise kernels": b["decode_elementwise_s"], "the math": b["decode_compute_s"],
            "communication": b["decode_comm_s"], "host and launch": b["decode_launch_s"]}


def prefill_parts(est) -> dict[str, float]:
    """An inference estimate's prefill parts (s) for one prompt."""
    b = est.breakdown
    return {"the math": b["prefill_compute_s"], "reading the weights": b["prefill_memory_s"],
            "elementwise kernels": b["prefill_elementwise_s"], "all-reduces": b["prefill_comm_s"]}


def dominant(phase: str, parts: dict[str, float]) -> str:
    """``"decode: reading the weights 4.1 ms"``: the largest part and its time."""
    k = largest(parts)
    return f"{phase}: {k} {seconds_words(max(parts[k], 0.0))}"


def _inference_terms(est) -> dict[str, str]:
    dec, pf = dominant("decode", decode_parts(est)), dominant("prefill", prefill_parts(est))
    return {"ttft": pf, "other": dec}


def _term_for(metric: str, terms: dict) -> str:
    return terms["ttft"] if metric.startswith("ttft") else terms["other"]


def _serving_layout(run: dict) -> tuple[int, int, int]:
    n = run["n_chips"]
    tp = int(run.get("tp") or n // int(run.get("pp") or 1))
    pp = int(run.get("pp") or 1)
    if n % (tp * pp):
        raise ValueError(f"n_chips = {n} is not a whole number of replicas of tp {tp} x pp {pp}")
    return tp, pp, n // (tp * pp)


def predict_serving(run: dict) -> dict[str, tuple[float, str, str]]:
    """metric -> (predicted, dominant term, note) of one serving run (module docstring)."""
    tp, pp, replicas = _serving_layout(run)
    s_in, s_out = max(1, round(run["input_len"])), max(1, round(run["output_len"]))
    kw = dict(tp=tp, pp=pp, kv_precision=run.get("kv_precision"))
    if math.isinf(run["request_rate"]):
        C = int(run.get("concurrency") or run["num_prompts"])
        B = math.ceil(C / replicas)
        est = inference_estimate(run["model"], run["chip"], run["n_chips"], 1, s_in, s_out, run["precision"], **kw)
        note = ""
        if B > est.max_batch_size > 0:
            note, B = f"batch capped at the KV cache's {est.max_batch_size} sequences a replica", est.max_batch_size
        est = inference_estimate(run["model"], run["chip"], run["n_chips"], B, s_in, s_out, run["precision"], **kw)
        ttft_note = f"an idle server's prefill of one prompt; the queue behind the other {C - 1} is not modelled"
        pred = {"output_tokens_per_s": est.tokens_per_s, "requests_per_s": est.tokens_per_s / s_out,
                "tpot_mean_ms": est.tpot_s * 1e3, "tpot_median_ms": est.tpot_s * 1e3,
                "itl_mean_ms": est.tpot_s * 1e3, "itl_median_ms": est.tpot_s * 1e3,
                "ttft_mean_ms": est.ttft_s * 1e3, "ttft_median_ms": est.ttft_s * 1e3}
        terms = _inference_terms(est)
        return {m: (v, _term_for(m, terms), "; ".join(x for x in (f"static batch of {B} a replica", note,
                                                                  ttft_note if m.startswith("ttft") else "") if x))
                for m, v in pred.items()}
    return _simulated_serving(run, tp, pp, replicas, s_in, s_out)


def _simulated_serving(run, tp, pp, replicas, s_in, s_out) -> dict[str, tuple[float, str, str]]:
    if pp != 1:
        raise ValueError("the serving simulator has no pipeline stages: a rate-limited run needs pp = 1")
    n_req = int(run.get("n_requests") or min(run["num_prompts"], MAX_SIMULATED_REQUESTS))
    k = float(run.get("burstiness") or 1.0)
    w = workload(n_req, run["request_rate"], "poisson" if k == 1.0 else "bursty", 1.0 / math.sqrt(k), s_in, s_out)
    cost = step_cost(run["model"], run["chip"], tp, run["precision"], tp=tp, input_len=s_in, output_len=s_out)
    r = simulate(w, cost, n_instances=replicas, kv_policy=run.get("kv_policy") or "paged", records=False)
    in_flight = r.request_rate * float(r.e2e_s.mean())            # Little's law: requests resident on average
    B = max(1, min(cost.max_batch, round(in_flight / replicas)))
    est = inference_estimate(run["model"], run["chip"], tp, B, s_in, s_out, run["precision"], tp=tp,
                             kv_precision=run.get("kv_precision"))
    terms = _inference_terms(est)
    note = f"simulated: {n_req} requests at {run['request_rate']:g}/s, about {in_flight:.0f} in flight"
    pred = {"output_tokens_per_s": r.throughput_tok_s, "requests_per_s": r.request_rate,
            "ttft_mean_ms": float(r.ttft_s.mean()) * 1e3, "ttft_median_ms": float(np.median(r.ttft_s)) * 1e3,
            "tpot_mean_ms": float(r.tbt_mean_s.mean()) * 1e3, "tpot_median_ms": float(np.median(r.tbt_mean_s)) * 1e3,
            "itl_mean_ms": float(r.tbt_mean_s.mean()) * 1e3, "itl_median_ms": float(np.median(r.tbt_mean_s)) * 1e3}
    itl = "; ITL as each request's mean gap"
    return {m: (v, _term_for(m, terms), note + (itl if m.startswith("itl") else "")) for m, v in pred.items()}


def topology_of(run: dict, name):
    """The collective's network: the setup's ``system`` preset and ``args``, else one inferred from nccl-tests'
    device lines (HGX H100 for one host of 8 H100, an H100 cluster for hosts of 8)."""
    if run.get("system"):
        if run["system"] not in PRESETS:
            raise file_error(name, f"unknown system {run['system']!r}; presets: {sorted(PRESETS)}", key="system")
        args = run.get("args") or {}
        if not isinstance(args, dict):
            raise file_error(name, "args must be a table of the preset's arguments", key="args")
        return PRESETS[run["system"]](**args)
    n, nodes = run.get("n_chips"), run.get("nodes") or 1
    if run.get("chip") == "h100" and n == 8 * nodes:
        return PRESETS["hgx_h100"]() if nodes == 1 else PRESETS["h100_cluster"](nodes)
    raise file_error(name, f"no network preset for {n} x {run.get('chip')} on {nodes} host(s): set system = "
                           f"'<preset>' and args (one of {sorted(PRESETS)}) in the setup")


def predict_collective(run: dict, topo) -> dict[str, tuple[float, str, str]]:
    """metric -> (predicted, dominant term, note) for one message size of an nccl-tests run."""
    est = collective_estimate(run["collective"], float(run["message_bytes"]), topo)
    parts = {"the steps' latency": est.latency_s, "moving the bytes": est.bandwidth_s}
    term = dominant("latency" if parts["the steps' latency"] >= parts["moving the bytes"] else "bandwidth", parts)
    note = f"{topo.name}: {est.algorithm}/{est.protocol}"
    return {"time_us": (est.time_s * 1e6, term, note), "busbw_gb_s": (est.busbw_bytes_per_s / 1e9, term, note)}


def predict_mlperf(run: dict) -> dict[str, tuple[float, str, str]]:
    """metric -> (predicted, dominant term, note) of a LoadGen summary (module docstring)."""
    s_in, s_out = round(run["input_len"]), round(run["output_len"])
    scenario = str(run["scenario"]).lower()
    if scenario == "offline":
        est = max_throughput(run["model"], run["chip"], run["n_chips"], s_in, s_out, run["precision"])
        terms, note = _inference_terms(est), f"static batches: best layout tp{est.config['tp']} batch {est.config['batch_size']}"
        return {"tokens_per_s": (est.tokens_per_s, terms["other"], note),
                "samples_per_s": (est.tokens_per_s / s_out, terms["other"], note)}
    if scenario != "server":
        raise ValueError(f"the {run['scenario']} scenario is not modelled (Offline and Server are)")
    if run.get("ttft_limit_s") is None or run.get("tpot_limit_s") is None:
        raise ValueError("a Server summary needs its ttft_latency and tpot_latency (ns) test parameters")
    n_req = int(run.get("n_requests") or MAX_SIMULATED_REQUESTS)
    policy = run.get("kv_policy") or "reserve"
    best = continuous_throughput(run["model"], run["chip"], run["n_chips"], run["precision"], s_in, s_out,
                                 run["ttft_limit_s"], run["tpot_limit_s"], n_requests=n_req, steps=8, kv_policy=policy)
    est = inference_estimate(run["model"], run["chip"], best.tp, 1, s_in, s_out, run["precision"], tp=best.tp)
    terms = _inference_terms(est)
    note = f"highest rate meeting the limits: {best.rate_per_s:.1f}/s, tp{best.tp} x {best.replicas}"
    out = {"tokens_per_s": (best.tokens_per_s, terms["other"], note),
           "samples_per_s": (best.rate_per_s, terms["other"], note)}
    if run.get("request_rate"):
        r = simulate(workload(n_req, run["request_rate"], "poisson", 1.0, s_in, s_out), best.cost,
                     n_instances=best.replicas, chunk_tokens=best.chunk_tokens, kv_policy=policy, records=False)
        at = f"at the log's scheduled {run['request_rate']:.1f}/s"
        for m, v in (("ttft_mean_ms", r.ttft_s.mean()), ("ttft_p99_ms", np.percentile(r.ttft_s, 99)),
                     ("tpot_mean_ms", r.tbt_mean_s.mean()), ("tpot_p99_ms", np.percentile(r.tbt_mean_s, 99))):
            out[m] = (float(v) * 1e3, _term_for(m, terms), at)
    return out


def predict_training(run: dict) -> dict[str, tuple[float, str, str]]:
    """metric -> (predicted, dominant term, note) of one training-log row (module docstring)."""
    s, gbt = int(run["seq_len"]), int(run["global_batch_tokens"])
    if gbt % s:
        raise ValueError(f"global_batch_tokens {gbt:,} is not a whole number of sequences of {s:,}")
    given = {k: run[k] for k in SEARCHABLE if _given(run.get(k))}
    given.update({k: 1 for k in ("cp", "ep", "vp") if k not in given})   # a log that names no cp, ep, vp ran none
    e = {"model": run["model"], "chip": run["chip"], "n_chips": int(run["n_chips"]), "seq_len": s,
         "global_batch_sequences": gbt // s, "precision": run.get("precision") or "bf16",
         **{k: int(v) if k not in ("recompute", "schedule") else v for k, v in given.items()},
         "assumed": [k for k in SEARCHABLE if k not in given]}
    model, chip, est = run_estimate(e)
    k = largest({TIME_LABELS[t]: v for t, v in est.time.items()})
    t = {TIME_LABELS[t]: v for t, v in est.time.items()}[k]
    term = f"{k} {seconds_words(t)} of {seconds_words(est.step_time_s)}"
    c = est.config
    note = (f"tp{c['tp']} cp{c['cp']} pp{c['pp']} dp{c['dp']} mb{c['microbatch']} zero{c['zero_stage']} "
            f"{c['recompute']}" + ("" if est.fits else "; does not fit memory"))
    return {"tokens_per_s": (est.tokens_per_s, term, note),
            "tokens_per_s_per_chip": (predicted_metric(est, model, chip, "tokens_per_s", "model_causal"), term, note),
            "step_time_s": (predicted_metric(est, model, chip, "iteration_s", "model_causal"), term, note)}


def _given(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


#: what each format's rows must state (from the file or the setup) before the model can be run
REQUIRED = {"vllm": ("model", "chip", "n_chips"), "sglang": ("model", "chip", "n_chips"), "nccl": ("collective",),
            "mlperf": ("model", "chip", "n_chips", "input_len", "output_len"), "training": ()}
#: the configuration columns the table shows for each format, after :data:`COLUMNS`
SHOWN = {"vllm": ("concurrency", "request_rate", "input_len", "output_len"),
         "sglang": ("concurrency", "request_rate", "input_len", "output_len"),
         "nccl": ("collective", "message_bytes", "placement"), "mlperf": ("scenario",),
         "training": ("seq_len", "global_batch_tokens")}


def configured(rows: pd.DataFrame, cfg: dict, fmt: str, name) -> pd.DataFrame:
    """``rows`` with the user's setup laid over them, catalogue ids resolved and every required column present."""
    rows = rows.copy()
    for k, v in cfg.items():
        rows[k] = [v] * len(rows) if isinstance(v, (dict, list)) else v
    if fmt in ("vllm", "sglang") and ("n_chips" not in rows or rows["n_chips"].isna().any()) and "tp" in rows:
        n = rows["n_chips"] if "n_chips" in rows else pd.Series(np.nan, index=rows.index)
        rows["n_chips"] = n.fillna(rows["tp"] * rows.get("pp", pd.Series(1, index=rows.index)).fillna(1))
    for k in REQUIRED[fmt]:
        if k not in rows or rows[k].isna().any():
            raise file_error(name, f"the file does not say {k}: give {k}=... or set it in the setup ([setup] {k} = ...)")
    if "precision" not in rows:
        rows["precision"] = "bf16"
    rows["precision"] = rows["precision"].fillna("bf16")
    for col, resolve in (("model", model_id), ("chip", chip_id)):
        if col in rows and rows[col].notna().any():
            ids = {v: resolve(v, name) for v in rows[col].dropna().unique()}
            rows[col] = rows[col].map(lambda v, ids=ids: ids.get(v, v))
    if "n_chips" in rows:
        rows["n_chips"] = rows["n_chips"].astype("Int64")
    rows["source"] = cfg.get("source") or (rows["source"] if "source" in rows else None)
    rows["source"] = rows["source"].fillna(f"your file {Path(str(name)).name}") if "source" in rows else ""
    return rows


def _predictions(rows: pd.DataFrame, fmt: str, name) -> dict:
    """record -> metric -> (predicted, dominant, note), or record -> the reason no prediction was made."""
    topo = None
    if fmt == "nccl":
        first = rows.iloc[0].to_dict()
        topo = topology_of(first, name)
        n = first.get("n_chips")
        if _given(n) and not pd.isna(n) and int(n) != topo.n_endpoints:
            raise file_error(name, f"the file ran on {int(n)} ranks, the system {topo.name} has {topo.n_endpoints}")
    out = {}
    for rec, g in rows.groupby("record", sort=False):
        run = {k: (None if _missing(v) else v) for k, v in g.iloc[0].to_dict().items()}
        try:
            out[rec] = {"nccl": lambda r: predict_collective(r, topo), "mlperf": predict_mlperf,
                        "training": predict_training}.get(fmt, predict_serving)(run)
        except ValueError as err:
            out[rec] = f"not evaluated: {err}"
    return out


def _missing(v) -> bool:
    return v is None or (not isinstance(v, (dict, list, str)) and bool(pd.isna(v)))


def validation_table(path=None, *, text: str | bytes | None = None, name: str | None = None, format: str | None = None,
                     setup=None, model: str | None = None, chip: str | None = None, n_chips: int | None = None,
                     precision: str | None = None, tp: int | None = None, system: str | None = None,
                     collective: str | None = None, **settings) -> pd.DataFrame:
    """A measurement file beside the model: one row per measured number with ``measured``, ``predicted``,
    ``error`` (predicted / measured - 1), ``dominant`` (the model's largest term) and a ``note``.

    ``path`` (or ``text``, pasted, with a ``name`` to quote in errors) is read by the reader of its ``format``
    (detected unless given: :data:`~accelbook.measurements.readers.FORMATS`). What the file does not say comes
    from the arguments (``model``, ``chip``, ``n_chips``, ``precision``, ``tp``, ``system``, ``collective`` and
    any other key of :data:`~accelbook.measurements.schema.SETUP_KEYS` as a keyword), over ``setup`` (a dict or
    a TOML path), over the file's sidecar ``<stem>.setup.toml`` (:mod:`accelbook.measurements.schema`).
    Nothing is fitted to the file. A missing or malformed file, or a configuration the model cannot run
    (an unknown chip, no chip at all), is a ``ValueError`` naming the file; a run the model cannot evaluate
    (it does not fit memory) keeps its row with the reason in ``note``."""
    rows, fmt = load(path, text, name, format)
    name = name or (str(path) if path is not None else "pasted text")
    explicit = dict(model=model, chip=chip, n_chips=n_chips, precision=precision, tp=tp, system=system,
                    collective=collective, **settings)
    cfg = setup_of(explicit, setup, Path(path) if path is not None else None, name)
    rows = configured(rows, cfg, fmt, name)
    preds = _predictions(rows, fmt, name)
    out = []
    for r in rows.to_dict("records"):
        p = preds[r["record"]]
        pred, term, note = (np.nan, "", p) if isinstance(p, str) else p.get(r["metric"], (np.nan, "", "not modelled"))
        out.append({**{k: r.get(k) for k in COLUMNS if k in r}, "predicted": pred, "dominant": term,
                    "note": "; ".join(x for x in (note, cfg.get("note", "")) if x),
                    **{k: r.get(k) for k in SHOWN[fmt]}})
    df = pd.DataFrame(out)
    zero = df["measured"] == 0             # nccl-tests prints 0.00 GB/s below its two decimals
    df["error"] = (df["predicted"] / df["measured"].where(~zero) - 1).astype(float)
    df.loc[zero, "note"] = df.loc[zero, "note"] + "; measured 0 at the file's printed precision: no error"
    df.attrs["format"] = fmt
    return df[[c for c in (*COLUMNS, *SHOWN[fmt]) if c in df]]
