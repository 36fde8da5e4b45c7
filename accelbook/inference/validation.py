"""The inference model against published results (``data/inference_runs.toml``): each run's stated
configuration through :func:`~accelbook.inference.estimate.estimate`, the prediction next to the
reported number and its relative error; a row whose prediction is out of the model's reach
(:func:`accelbook.inference.dataflow.plausibility`) carries the reason in ``flag`` and its note, and no
error band counts it. Runs are read with the one catalogue loader (``accelbook.specs.loader``) and carry their source; a run the model misses says in ``unmodelled`` what it
did that the model does not represent (shown in the table's ``note``). :func:`error_band` gives the median
and range of the error per metric, to print next to every number a notebook shows."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from accelbook.checks import one_of
from accelbook.specs.loader import DATA_DIR, CatalogueError, check_keys, load_sources, parse_quantity, read_table_file

from .estimate import estimate
from .speculative import speculative_decode

_RUN_KEYS = {"name", "model", "chip", "n_chips", "batch", "input_len", "output_len", "precision", "metric", "reported",
             "role"}
METRICS = ("tokens_per_s_per_chip", "ttft_ms", "tokens_per_s_per_user")
#: ``set`` of a run: "check" (default: the rows the model's mechanisms were chosen and checked on) or
#: "held-out" (added after, or beside, a mechanism's choice and only looked at to check it)
SETS = ("check", "held-out")


def published_results(path=None) -> dict:
    """Every published run by id, with ``reported_value`` (SI count) and ``reported_provenance``."""
    path = path or DATA_DIR / "inference_runs.toml"
    sources = load_sources()
    out = {}
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required=_RUN_KEYS,
                   optional={"tp", "pp", "unmodelled", "attention", "kv_precision", "draft", "set", "batch_cap"})
        if e["metric"] not in METRICS or e["role"] not in ("target", "context"):
            raise CatalogueError(path, rid, "metric", f"metric in {METRICS}, role 'target' or 'context'")
        if e.get("set", "check") not in SETS:
            raise CatalogueError(path, rid, "set", f"one of {SETS}, got {e['set']!r}")
        if "draft" in e:
            d = e["draft"]
            if not isinstance(d, dict) or e["metric"] != "tokens_per_s_per_user":
                raise CatalogueError(path, rid, "draft", "a table { acceptance = id, steps, precision } on a "
                                     "tokens_per_s_per_user row")
            check_keys(path, rid + ".draft", d, required={"acceptance"}, optional={"steps", "precision"})
        q = parse_quantity(path, rid, "reported", e["reported"], "count", sources)
        out[rid] = dict(e, batch=run_batch(path, rid, e), reported_value=q.value, reported_provenance=q.provenance)
    return out


#: ``batch = "kv-capacity"``: a throughput run that queues every request at once and lets the server admit as many
#: as its KV cache holds; the batch is then the model's largest that fits at the run's layout, capped at
#: ``batch_cap`` sequences a rank (each chip of an attention-DP layout is a rank, a TP group is one).
KV_CAPACITY = "kv-capacity"


def run_batch(path, rid: str, e: dict) -> int:
    """The run's batch: ``e["batch"]`` as published, or for ``"kv-capacity"`` the largest batch that fits
    (:attr:`InferenceEstimate.max_batch_size`) capped at ``batch_cap`` a rank."""
    b = e["batch"]
    if b != KV_CAPACITY:
        if "batch_cap" in e:
            raise CatalogueError(path, rid, "batch_cap", f'only with batch = "{KV_CAPACITY}"')
        return b
    cap = e.get("batch_cap")
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
        raise CatalogueError(path, rid, "batch_cap", f'a positive integer (sequences a rank) with batch = "{KV_CAPACITY}"')
    attention = e.get("attention", "tp")
    est = estimate(e["model"], e["chip"], e["n_chips"], 1, e["input_len"], e["output_len"], e["precision"],
                   tp=e.get("tp"), pp=e.get("pp", 1), kv_precision=e.get("kv_precision"), attention=attention)
    ranks = (e.get("tp") or e["n_chips"]) if attention == "dp" else 1
    return min(est.max_batch_size, cap * ranks)


def validation_table(path=None) -> pd.DataFrame:
    """Predicted against reported for every published result, from its stated configuration."""
    rows = []
    for rid, e in published_results(path).items():
        try:
            est = estimate(e["model"], e["chip"], e["n_chips"], e["batch"], e["input_len"], e["output_len"],
                           e["precision"], tp=e.get("tp"), pp=e.get("pp", 1), kv_precision=e.get("kv_precision"),
                           attention=e.get("attention", "tp"))
        except ValueError as err:
            rows.append({"id": rid, "result": e["name"], "role": e["role"], "set": e.get("set", "check"), "chip": e["chip"],
                         "note": f"not evaluated: {err}"})
            continue
        pred = {"tokens_per_s_per_chip": est.tokens_per_s_per_chip, "ttft_ms": est.ttft_s * 1e3,
                "tokens_per_s_per_user": est.tokens_per_s_per_user}[e["metric"]]
        if "draft" in e:          # a draft head's speculative decoding (accelbook.inference.speculative)
            d = e["draft"]
            pred = speculative_decode(e["model"], e["chip"], e["n_chips"], e["batch"], e["input_len"],
                                      e["output_len"], d["acceptance"], e["precision"], tp=e.get("tp"),
                                      steps=d.get("steps"), draft_precision=d.get("precision"))["tokens_per_s_per_user"]
        rep = e["reported_value"]
        rows.append({"id": rid, "result": e["name"], "role": e["role"], "set": e.get("set", "check"), "chip": e["chip"],
                     "draft": e.get("draft", {}).get("acceptance", ""),
                     "metric": e["metric"], "reported": rep,
                     "predicted": pred, "error": pred / rep - 1, "decode_bound": est.decode_bound, "fits": est.fits,
                     "source": e["reported_provenance"].source.title, "flag": est.flag,
                     "note": "; ".join(x for x in (est.flag,
                                                   est.why_not_fit(), e.get("unmodelled", "")) if x)})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class ErrorBand:
    """Median and range of the signed relative error (predicted / reported - 1) over ``n`` runs of one metric."""

    metric: str
    median: float
    lo: float
    hi: float
    n: int

    def text(self) -> str:
        """``median +12 %, range -22 % to +42 % over 12 published runs`` (``+31 % on the one published run``)."""
        if self.n == 1:
            return f"{self.median:+.0%} on the one published run".replace("%", " %")
        return (f"median {self.median:+.0%}, range {self.lo:+.0%} to {self.hi:+.0%} over {self.n} published runs"
                .replace("%", " %"))


_TABLE: list = []


def error_band(metric: str | None = None, table: pd.DataFrame | None = None,
               role: str = "target", drafted: bool = False) -> ErrorBand | dict[str, ErrorBand]:
    """The model's error against the ``role`` rows of the inference validation table for ``metric``
    (one of :data:`METRICS`), or a dict metric -> band of every metric that has such rows. The table is
    :func:`validation_table` of ``data/inference_runs.toml``, computed once per session, unless given.
    ``drafted``: the rows served with a draft head (:mod:`accelbook.inference.speculative`) instead of
    those decoding one token a step (the default: a plain estimate's band)."""
    one_of("role", role, ("target", "context"))
    if not isinstance(drafted, bool):
        raise ValueError(f"drafted must be True or False, got {drafted!r}")
    if table is not None and not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a DataFrame (validation_table()) or None, got {type(table).__name__}")
    if table is None:
        if not _TABLE:
            _TABLE.append(validation_table())
        table = _TABLE[0]
    t = table[(table["role"] == role) & table["error"].notna()] if "error" in table else table.iloc[0:0]
    if "flag" in t:
        t = t[t["flag"].fillna("") == ""]      # out of the model's reach: not a prediction
    if "draft" in t:
        t = t[(t["draft"].fillna("") != "") == drafted]
    elif drafted:
        t = t.iloc[0:0]
    if metric is None:
        return {mt: error_band(mt, table, role, drafted) for mt in METRICS if (t["metric"] == mt).any()}
    one_of("metric", metric, METRICS)
    err = t.loc[t["metric"] == metric, "error"]
    if err.empty:
        raise ValueError(f"the inference validation table has no evaluated {role!r} rows of {metric!r}")
    return ErrorBand(metric, float(err.median()), float(err.min()), float(err.max()), int(err.size))
