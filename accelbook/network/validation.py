"""The collective cost model against published measurements (``data/collective_measurements.toml``).

Each entry names a system (a preset of :mod:`accelbook.network.systems` and its arguments), a
collective, a message size and exactly one published figure: busbw, busbw per NIC (clusters: the
collective's busbw over the NICs of a node), algbw or time, as a table ``{ value, src, note }``
read by the one catalogue loader (:func:`accelbook.specs.loader.parse_quantity`: the source must be
in ``data/sources.toml``). ``kind`` says whether the figure was measured (nccl-tests, a timed run)
or is a vendor's or a book's calculation. Notebook 03 shows each row with the model's error
``model / measured - 1``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from accelbook.specs.loader import DATA_DIR, CatalogueError, check_keys, load_sources, parse_quantity, read_table_file

from .collectives import estimate
from .systems import PRESETS

#: key -> (label in the table, unit of the published figure)
METRICS = {"measured_busbw_gb_s": ("busbw GB/s", "gb_s"), "measured_busbw_per_nic_gb_s": ("busbw per NIC GB/s", "gb_s"),
           "measured_algbw_gb_s": ("algbw GB/s", "gb_s"), "measured_time_us": ("time µs", "us")}


def _model_figure(metric: str, est, nics: int) -> float:
    """The model's number for ``metric``, in the unit the measurement is written in."""
    return {"measured_busbw_gb_s": est.busbw_bytes_per_s / 1e9, "measured_algbw_gb_s": est.algbw_bytes_per_s / 1e9,
            "measured_busbw_per_nic_gb_s": est.busbw_bytes_per_s / nics / 1e9,
            "measured_time_us": est.time_s * 1e6}[metric]


def validation_table(path=None) -> pd.DataFrame:
    """Model against ``data/collective_measurements.toml``: measured, predicted, error (model/measured - 1).

    The default table also holds the small-message floor of ``data/allreduce_latency.toml`` for each chip
    with a node preset here (8 H100s, 8 KB: :func:`latency_floor_rows`), the row where the model misses most.
    """
    default = path is None
    path = Path(path) if path is not None else DATA_DIR / "collective_measurements.toml"
    sources = load_sources()
    rows = []
    for cid, e in read_table_file(path).items():
        check_keys(path, cid, e, required={"system", "args", "collective", "message_bytes", "kind"},
                   optional={"algorithm", *METRICS})
        given = [m for m in METRICS if m in e]
        if len(given) != 1:
            raise CatalogueError(path, cid, None, f"give exactly one of {sorted(METRICS)}")
        m = given[0]
        label, unit = METRICS[m]
        figure = parse_quantity(path, cid, m, e[m], unit, sources)
        if e["system"] not in PRESETS:
            raise CatalogueError(path, cid, "system", f"unknown preset; have {sorted(PRESETS)}")
        topo = PRESETS[e["system"]](**e["args"])
        est = estimate(e["collective"], float(e["message_bytes"]), topo, e.get("algorithm"))
        if m == "measured_busbw_per_nic_gb_s" and topo.kind != "cluster":
            raise CatalogueError(path, cid, m, "a per-NIC figure needs a GPU cluster preset")
        model = _model_figure(m, est, topo.params.get("gpus_per_node", 1))      # one NIC per GPU
        measured = float(e[m]["value"])      # as published, in the unit of its key (checked above)
        rows.append({
            "case": cid, "system": topo.name, "nvls": topo.in_network_reduction,
            "collective": e["collective"], "message_bytes": float(e["message_bytes"]),
            "algorithm": est.algorithm, "protocol": est.protocol, "metric": label, "measured": measured, "model": model,
            "error": model / measured - 1, "kind": e["kind"], "note": figure.provenance.note,
            "source": figure.provenance.source.title,
        })
    return pd.DataFrame(rows + (latency_floor_rows() if default else []))


#: chips of ``data/allreduce_latency.toml`` with a node preset: (preset, its arguments)
_FLOOR_PRESETS = {"h100": ("hgx_h100", {"nvls": False})}


def latency_floor_rows() -> list[dict]:
    """The measured small-message all-reduce floor (``data/allreduce_latency.toml``, the figure the inference
    model charges per tensor-parallel all-reduce) against this collective model, one row per chip with a node
    preset: the same measurement, so the two layers can be compared on it (notebooks 03 and 06)."""
    from accelbook.specs.measured import load_allreduce_latency

    rows = []
    for chip, m in load_allreduce_latency().items():
        if chip not in _FLOOR_PRESETS:
            continue
        preset, args = _FLOOR_PRESETS[chip]
        topo = PRESETS[preset](**args)
        if topo.n_endpoints != m.n_gpus:
            raise ValueError(f"{chip}: the floor was measured on {m.n_gpus} GPUs, the preset {preset} has "
                             f"{topo.n_endpoints}")
        est = estimate("all_reduce", float(m.message_bytes), topo)
        measured_us = m.latency_s * 1e6
        rows.append({
            "case": f"allreduce-{m.message_bytes // 1024}kib-{m.n_gpus}x{chip}", "system": topo.name,
            "nvls": topo.in_network_reduction, "collective": "all_reduce", "message_bytes": float(m.message_bytes),
            "algorithm": est.algorithm, "protocol": est.protocol, "metric": "time µs", "measured": measured_us,
            "model": est.time_s * 1e6, "error": est.time_s * 1e6 / measured_us - 1, "kind": "measured",
            "note": m.provenance.note + " (data/allreduce_latency.toml)", "source": m.provenance.source.title,
        })
    return rows
