"""Facts of notebooks/04_distributed_training.ipynb, section 4's two sets of runs (keys ``nb04.set_*``,
``nb04.heldout_*``): the *check* rows the model's mechanisms were chosen and checked against, and the
*held-out* rows added afterwards and looked at only to report (``set`` in ``data/training_runs.toml``;
:func:`accelbook.training.error_band` with ``set=``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook import training
from accelbook.specs.models import get_model
from accelbook.ui.facts import fact
from accelbook.ui.facts import nb04_shared as sh


def _target_errors(set_: str):
    t = sh.targets()
    return t.loc[t["set"] == set_, "error"]


def _context_errors(set_: str):
    v = sh.validation()
    return v.loc[(v["role"] == "context") & (v["set"] == set_), "error"].dropna()


@fact("nb04.set_check_n")
def set_check_n() -> str:
    return f"{training.error_band(set='check').n}"


@fact("nb04.set_check_median")
def set_check_median() -> str:
    return sh.signed(training.error_band(set="check").median)


@fact("nb04.set_check_abs_median")
def set_check_abs_median() -> str:
    return sh.pct(_target_errors("check").abs().median())


@fact("nb04.set_check_within_15")
def set_check_within_15() -> str:
    return f"{int((_target_errors('check').abs() <= 0.15).sum())}"


@fact("nb04.set_heldout_n")
def set_heldout_n() -> str:
    return f"{training.error_band(set='held-out').n}"


@fact("nb04.set_heldout_median")
def set_heldout_median() -> str:
    return sh.signed(training.error_band(set="held-out").median)


@fact("nb04.set_heldout_abs_median")
def set_heldout_abs_median() -> str:
    return sh.pct(_target_errors("held-out").abs().median())


@fact("nb04.set_heldout_within_15")
def set_heldout_within_15() -> str:
    return f"{int((_target_errors('held-out').abs() <= 0.15).sum())}"


def _range(e) -> str:
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


def _held_out_targets(moe: bool):
    t = sh.targets()
    t = t[t["set"] == "held-out"]
    runs = training.published_runs()
    keep = [i for i, rid in zip(t.index, t["id"]) if (get_model(runs[rid]["model"]).moe is not None) == moe]
    return t.loc[keep, "error"]


@fact("nb04.heldout_dense_range")
def heldout_dense_range() -> str:
    return _range(_held_out_targets(moe=False))


@fact("nb04.heldout_dense_n")
def heldout_dense_n() -> str:
    return f"{len(_held_out_targets(moe=False))}"


@fact("nb04.heldout_moe_range")
def heldout_moe_range() -> str:
    return _range(_held_out_targets(moe=True))


@fact("nb04.heldout_moe_n")
def heldout_moe_n() -> str:
    return f"{len(_held_out_targets(moe=True))}"


@fact("nb04.heldout_moe_within_15")
def heldout_moe_within_15() -> str:
    return f"{int((_held_out_targets(moe=True).abs() <= 0.15).sum())}"


@fact("nb04.heldout_moe_too_slow_n")
def heldout_moe_too_slow_n() -> str:
    return f"{int((_held_out_targets(moe=True) < -0.15).sum())}"


@fact("nb04.heldout_context_range")
def heldout_context_range() -> str:
    return _range(_context_errors("held-out"))


@fact("nb04.heldout_worst_run")
def heldout_worst_run() -> str:
    t = sh.targets()
    t = t[t["set"] == "held-out"]
    return str(t.loc[t["error"].abs().idxmax(), "run"])


@fact("nb04.heldout_worst_error")
def heldout_worst_error() -> str:
    t = sh.targets()
    e = t.loc[t["set"] == "held-out", "error"]
    return sh.signed(e.loc[e.abs().idxmax()])
