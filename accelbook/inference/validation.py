"""The inference model against published results (``data/inference_runs.toml``): each run's stated
configuration through :func:`~accelbook.inference.estimate.estimate`, the prediction next to the
reported number and its relative error. Runs are read with the one catalogue loader
(``accelbook.specs.loader``) and carry their source."""

from __future__ import annotations

import pandas as pd

from accelbook.specs.loader import DATA_DIR, CatalogueError, check_keys, load_sources, parse_quantity, read_table_file

from .estimate import estimate

_RUN_KEYS = {"name", "model", "chip", "n_chips", "batch", "input_len", "output_len", "precision", "metric", "reported",
             "role"}
METRICS = ("tokens_per_s_per_chip", "ttft_ms", "tokens_per_s_per_user")


def published_results(path=None) -> dict:
    """Every published run by id, with ``reported_value`` (SI count) and ``reported_provenance``."""
    path = path or DATA_DIR / "inference_runs.toml"
    sources = load_sources()
    out = {}
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required=_RUN_KEYS, optional={"tp", "pp"})
        if e["metric"] not in METRICS or e["role"] not in ("target", "context"):
            raise CatalogueError(path, rid, "metric", f"metric in {METRICS}, role 'target' or 'context'")
        q = parse_quantity(path, rid, "reported", e["reported"], "count", sources)
        out[rid] = dict(e, reported_value=q.value, reported_provenance=q.provenance)
    return out


def validation_table(path=None) -> pd.DataFrame:
    """Predicted against reported for every published result, from its stated configuration."""
    rows = []
    for rid, e in published_results(path).items():
        try:
            est = estimate(e["model"], e["chip"], e["n_chips"], e["batch"], e["input_len"], e["output_len"],
                           e["precision"], tp=e.get("tp"), pp=e.get("pp", 1))
        except ValueError as err:
            rows.append({"id": rid, "result": e["name"], "role": e["role"], "note": f"not evaluated: {err}"})
            continue
        pred = {"tokens_per_s_per_chip": est.tokens_per_s_per_chip, "ttft_ms": est.ttft_s * 1e3,
                "tokens_per_s_per_user": est.tokens_per_s_per_user}[e["metric"]]
        rep = e["reported_value"]
        rows.append({"id": rid, "result": e["name"], "role": e["role"], "metric": e["metric"], "reported": rep,
                     "predicted": pred, "error": pred / rep - 1, "decode_bound": est.decode_bound, "fits": est.fits,
                     "source": e["reported_provenance"].source.title, "note": est.why_not_fit()})
    return pd.DataFrame(rows)
