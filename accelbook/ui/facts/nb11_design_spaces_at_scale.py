"""Facts quoted in the prose of notebooks/11_design_spaces_at_scale.ipynb (keys ``nb11.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

import inspect

from scipy import stats

from accelbook import sweep
from accelbook.sweep import serving_mc
from accelbook.ui.dashboards.nb11_design_spaces_at_scale import slo_spec
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact


def _num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _default(fn, name: str):
    return inspect.signature(fn).parameters[name].default


@fact("nb11.overhead_target_pct")
def overhead_target_pct() -> str:
    """The block-size rule's overhead target (accelbook.sweep.choose_block_size's default)."""
    return _num(100 * _default(sweep.choose_block_size, "target"))


@fact("nb11.ci_level_pct")
def ci_level_pct() -> str:
    return _num(100 * _default(serving_mc.confidence_intervals, "level"))


@fact("nb11.mc_ttft_slo_s")
def mc_ttft_slo_s() -> str:
    return f"{serving_mc.default_grid()['ttft_slo_s'][0]:g}"


@fact("nb11.mc_tbt_slo_ms")
def mc_tbt_slo_ms() -> str:
    return f"{1e3 * serving_mc.default_grid()['tbt_slo_s'][0]:g}"


def _control(name: str) -> float:
    return slo_spec().controls[name].value


@fact("nb11.dash_ttft_slo_s")
def dash_ttft_slo_s() -> str:
    return f"{_control('ttft_slo_s'):g}"


@fact("nb11.dash_tbt_slo_ms")
def dash_tbt_slo_ms() -> str:
    return f"{1e3 * _control('tbt_slo_s'):g}"


@fact("nb11.dash_max_rate")
def dash_max_rate() -> str:
    return f"{_control('max_rate'):g}"


@fact("nb11.slo_half_share_pct")
def slo_half_share_pct() -> str:
    return _num(EXERCISES["predict-slo-ttft-half"].expected())


# -- the block-size rule on exercise 3's numbers (the plan for 64 workers) and the exercises' answers
def _plan(o: float, c: float, threads: int = 64, n: int = 10**6):
    return sweep.plan(n, o, c, threads)


@fact("nb11.plan64_block")
def plan64_block() -> str:
    return _num(_plan(0.02, 0.03).block_size)


@fact("nb11.plan64_tasks")
def plan64_tasks() -> str:
    return _num(_plan(0.02, 0.03).n_tasks)


@fact("nb11.plan64_overhead_pct")
def plan64_overhead_pct() -> str:
    return _num(100 * _plan(0.02, 0.03).overhead_share, 2)


@fact("nb11.plan64_b_min")
def plan64_b_min() -> str:
    """The overhead floor alone: the rule with so many threads that balance never binds."""
    return _num(sweep.choose_block_size(10**6, 0.02, 0.03, threads=10**6, max_task_s=1e9)[0])


@fact("nb11.plan64_work_hours")
def plan64_work_hours() -> str:
    p = _plan(0.02, 0.03)
    return _num(p.n_configs * p.per_config_s / 3600, 1)


@fact("nb11.plan64_wall_minutes")
def plan64_wall_minutes() -> str:
    p = _plan(0.02, 0.03)
    return _num(p.n_configs * p.per_config_s / p.threads / 60, 1)


@fact("nb11.ex_b_min")
def ex_b_min() -> str:
    return _num(EXERCISES["sweep-b-min"].expected())


@fact("nb11.ex_block_64")
def ex_block_64() -> str:
    return _num(EXERCISES["sweep-block-64"].expected())


@fact("nb11.ex_half_width")
def ex_half_width() -> str:
    return _num(EXERCISES["sweep-ci-half-width"].expected(), 2)


@fact("nb11.t_over_z_pct")
def t_over_z_pct() -> str:
    """How much wider Student's t makes a 95 % interval of four seeds than the normal's 1.96 would."""
    return _num(100 * (stats.t.ppf(0.975, 3) / stats.norm.ppf(0.975) - 1))


@fact("nb11.ex_cheap_block")
def ex_cheap_block() -> str:
    return _num(EXERCISES["whatif-cheap-model-tasks"].expected())


@fact("nb11.ex_cheap_tasks")
def ex_cheap_tasks() -> str:
    return _num(_plan(0.02, 20e-6).n_tasks)


@fact("nb11.ex_cheap_idle")
def ex_cheap_idle() -> str:
    p = _plan(0.02, 20e-6)
    return _num(max(0, p.threads - p.n_tasks))


@fact("nb11.ex_cheap_work_s")
def ex_cheap_work_s() -> str:
    p = _plan(0.02, 20e-6)
    return _num(p.n_configs * p.per_config_s)
