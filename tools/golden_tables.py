"""The golden validation tables, catalogue summaries and dashboards' default views.

Every table that checks the model against a published number (training runs, TensorRT-LLM and
MLPerf inference, nccl-tests collectives, article claims, SCALE-Sim, FLOP accounting), the derived
catalogue counts, and each dashboard of ``accelbook.ui.dashboards.ALL_SPECS`` at its default
settings: the view's ``data``, ``table`` and ``summary`` (not its chart, which is drawn from
``data``). A view holds no wall-clock time (the update time is the ``Dashboard``'s, not its view's).
"""

from __future__ import annotations

from golden_encode import Entries

import accelbook as ab
from accelbook import inference as inf
from accelbook import training as tr
from accelbook.chip import systolic
from accelbook.economics import claims, cost
from accelbook.inference import mlperf
from accelbook.network import validation as network_validation

#: key -> the call that builds the table
TABLES = {
    "training.validation_table": tr.validation_table,
    "training.error_band": tr.error_band,
    "training.term_validation_table": tr.term_validation_table,
    "inference.validation_table": inf.validation_table,
    "inference.error_band": inf.error_band,
    "mlperf.server_validation_table": mlperf.server_validation_table,
    "collectives.validation_table": network_validation.validation_table,
    "claims.claims_table": claims.claims_table,
    "systolic.scalesim_comparison": systolic.scalesim_comparison,
    "cost.flop_accounting_table": cost.flop_accounting_table,
    "catalogue.models": ab.models,
    "catalogue.chips": ab.chips,
}


def section_validation(g: Entries) -> None:
    for key, make in TABLES.items():
        g.call(key, make)


def _view_numbers(v) -> dict:
    out = {"data": v.data, "summary": v.summary}
    if v.table is not None:
        out["table"] = v.table
    return out


def section_dashboards(g: Entries) -> None:
    from accelbook.ui.dashboards import ALL_SPECS

    for make in ALL_SPECS:
        spec = make()
        g.call(f"dashboards.{spec.name}", lambda s=spec: s.view(**s.defaults()), post=_view_numbers)
