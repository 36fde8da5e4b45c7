"""Facts quoted in the prose of notebooks/08_token_economics_and_hybrid.ipynb (keys ``nb08.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from dataclasses import replace

from accelbook import economics
from accelbook.economics import fleet, migration
from accelbook.economics.tco import HOURS_PER_YEAR
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.system_power import system_power
from accelbook.ui.dashboards.nb08_token_economics_and_hybrid import fleet_spec, migration_spec, tco_spec
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact


def _num(x: float, digits: int = 0) -> str:
    """``x`` with thousands separators and ``digits`` decimals (negative: rounded to tens, thousands...)."""
    return f"{round(x, digits):,.0f}" if digits < 0 else f"{x:,.{digits}f}"


def _pct(x: float, digits: int = 0) -> str:
    return _num(100 * x, digits)


# -- owning an H100 (data/tco.toml, the DGX H100's power per GPU), as cell 4 computes it
def _inputs() -> dict:
    return economics.tco_inputs()


def _purchase() -> float:
    return _inputs()["purchase_usd"]["h100"]


def _server():
    return system_power("h100")


@catalogue_cache(maxsize=None)
def _own(utilisation: float = 1.0, **change) -> dict:
    inp = {k: v for k, v in _inputs().items() if k != "purchase_usd"} | change
    return economics.own_cost_per_hour(_purchase(), _server().system_w, utilisation=utilisation, **inp)


def _tco_default(name: str) -> float:
    return tco_spec().controls[name].value


@fact("nb08.h100_purchase_usd")
def h100_purchase_usd() -> str:
    return _num(_purchase())


@fact("nb08.lifetime_years")
def lifetime_years() -> str:
    return _num(_inputs()["lifetime_years"])


@fact("nb08.cost_of_capital_pct")
def cost_of_capital_pct() -> str:
    return _pct(_inputs()["cost_of_capital"])


@fact("nb08.capex_usd_per_year")
def capex_usd_per_year() -> str:
    return _num(_own()["capex_usd_per_hour"] * HOURS_PER_YEAR)


@fact("nb08.server_w")
def server_w() -> str:
    return _num(_server().system_w)


@fact("nb08.h100_tdp_w")
def h100_tdp_w() -> str:
    return _num(_server().accelerator_w)


@fact("nb08.load_power_share")
def load_power_share() -> str:
    return _num(_inputs()["load_power_share"], 2)


@fact("nb08.pue")
def pue() -> str:
    return _num(_inputs()["pue"], 1)


@fact("nb08.hours_per_year")
def hours_per_year() -> str:
    return _num(HOURS_PER_YEAR)


@fact("nb08.electricity_usd_per_kwh")
def electricity_usd_per_kwh() -> str:
    return _num(_inputs()["electricity_usd_per_kwh"], 2)


@fact("nb08.power_usd_per_year")
def power_usd_per_year() -> str:
    return _num(_own()["power_usd_per_hour"] * HOURS_PER_YEAR)


@fact("nb08.power_usd_per_wall_hour")
def power_usd_per_wall_hour() -> str:
    return _num(_own()["power_usd_per_hour"], 3)


@fact("nb08.capex_usd_per_wall_hour")
def capex_usd_per_wall_hour() -> str:
    return _num(_own()["capex_usd_per_hour"], 2)


@fact("nb08.default_utilisation_pct")
def default_utilisation_pct() -> str:
    return _pct(_tco_default("utilisation"))


def _own_default() -> dict:
    return _own(_tco_default("utilisation"))


@fact("nb08.own_usd_per_useful_hour")
def own_usd_per_useful_hour() -> str:
    return _num(_own_default()["usd_per_hour"], 2)


@fact("nb08.power_usd_per_useful_hour")
def power_usd_per_useful_hour() -> str:
    return _num(_own_default()["power_usd_per_hour"], 3)


@fact("nb08.power_share_pct")
def power_share_pct() -> str:
    o = _own_default()
    return _pct(o["power_usd_per_hour"] / o["usd_per_hour"], 1)


@fact("nb08.capex_share_pct")
def capex_share_pct() -> str:
    o = _own_default()
    return _pct(o["capex_usd_per_hour"] / o["usd_per_hour"])


@fact("nb08.own_usd_per_useful_hour_util35")
def own_usd_per_useful_hour_util35() -> str:
    return _num(EXERCISES["predict-own-h100-util35"].expected(), 2)


@fact("nb08.util35_ratio")
def util35_ratio() -> str:
    """The owned cost per useful hour at 35 % over that at the default utilisation."""
    return _num(EXERCISES["predict-own-h100-util35"].expected() / _own_default()["usd_per_hour"], 2)


def _rent_price() -> float:
    return get_chip("h100").price_usd_per_hour


@fact("nb08.h100_list_usd_per_hour")
def h100_list_usd_per_hour() -> str:
    return _num(_rent_price(), 2)


@fact("nb08.rent_usd_per_useful_hour")
def rent_usd_per_useful_hour() -> str:
    return _num(economics.rent_cost_per_hour(_rent_price(), _tco_default("utilisation")), 2)


def _listings() -> list[float]:
    return sorted(v * 3600 for v, _, _ in get_chip("h100").provenance["price_usd_per_s"].alternatives)


@fact("nb08.h100_listing_low_usd")
def h100_listing_low_usd() -> str:
    return _num(_listings()[0], 2)


@fact("nb08.h100_listing_high_usd")
def h100_listing_high_usd() -> str:
    return _num(_listings()[-1], 2)


# -- the electricity what-if (exercise whatif-electricity-2x)
@fact("nb08.electricity_2x_rise_pct")
def electricity_2x_rise_pct() -> str:
    return _num(EXERCISES["whatif-electricity-2x"].expected(), 1)


@fact("nb08.own_usd_per_useful_hour_2x_power")
def own_usd_per_useful_hour_2x_power() -> str:
    u = _tco_default("utilisation")
    return _num(_own(u, electricity_usd_per_kwh=2 * _inputs()["electricity_usd_per_kwh"])["usd_per_hour"], 2)


# -- the migration dashboard's defaults
def _mig_default(name: str) -> float:
    return migration_spec().controls[name].value


@catalogue_cache(maxsize=None)
def _dash_migration() -> migration.Migration:
    d = _mig_default
    return migration.Migration(d("cost_old"), d("cost_new"), d("volume_m"), d("growth") / 100,
                               engineer_months=d("engineer_months"), churn_per_month=d("churn") / 100,
                               horizon_months=int(d("horizon")))


@fact("nb08.mig_cost_old")
def mig_cost_old() -> str:
    return _num(_mig_default("cost_old"), 1)


@fact("nb08.mig_cost_new")
def mig_cost_new() -> str:
    return _num(_mig_default("cost_new"), 1)


@fact("nb08.mig_saving_per_m")
def mig_saving_per_m() -> str:
    m = _dash_migration()
    return _num(m.usd_per_m_tokens_old - m.usd_per_m_tokens_new, 1)


@fact("nb08.mig_volume_m")
def mig_volume_m() -> str:
    return _num(_mig_default("volume_m"))


@fact("nb08.mig_growth_pct")
def mig_growth_pct() -> str:
    return _num(_mig_default("growth"))


@fact("nb08.mig_engineer_months")
def mig_engineer_months() -> str:
    return _num(_mig_default("engineer_months"))


@fact("nb08.mig_usd_per_engineer_month")
def mig_usd_per_engineer_month() -> str:
    return _num(_dash_migration().usd_per_engineer_month)


@fact("nb08.mig_churn_pct")
def mig_churn_pct() -> str:
    return _num(_mig_default("churn"))


@fact("nb08.mig_port_months")
def mig_port_months() -> str:
    return _num(_dash_migration().port_months)


@fact("nb08.mig_payback_months")
def mig_payback_months() -> str:
    return _num(EXERCISES["predict-payback"].expected())


@fact("nb08.port_cost_usd")
def port_cost_usd() -> str:
    return _num(_dash_migration().port_cost_usd)


@fact("nb08.mig_first_month_savings_usd")
def mig_first_month_savings_usd() -> str:
    m = _dash_migration()
    return _num(migration.cash_flow(replace(m, port_months=0, churn_per_month=0.0))["savings_usd"].iloc[0])


@fact("nb08.mig_quick_payback_months")
def mig_quick_payback_months() -> str:
    """Port cost over the first month's savings: the payback without growth, churn or porting time."""
    m = _dash_migration()
    return _num(migration.payback_months(replace(m, growth_per_month=0.0, churn_per_month=0.0, port_months=0)))


# -- the cases of cell 17 (the notebook's own base: 20,000M tokens a month, 5 % growth and churn)
@catalogue_cache(maxsize=None)
def _base() -> migration.Migration:
    return migration.Migration(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=20_000,
                               growth_per_month=0.05, churn_per_month=0.05)


def _case(**kw) -> dict:
    return migration.verdict(replace(_base(), **kw))


@fact("nb08.case_base_payback_months")
def case_base_payback_months() -> str:
    return _num(_case()["payback_months"])


@fact("nb08.case_x4_payback_months")
def case_x4_payback_months() -> str:
    return _num(_case(volume_m_tokens_per_month=80_000)["payback_months"])


@fact("nb08.case_flat_pays_back")
def case_flat_pays_back() -> str:
    pb = _case(growth_per_month=0.0)["payback_months"]
    return "does not pay back within the horizon" if pb == float("inf") else f"pays back in {pb:.0f} months"


@fact("nb08.case_flat_break_even_m")
def case_flat_break_even_m() -> str:
    return _num(_case(growth_per_month=0.0)["break_even_m_tokens_per_month"], -3)


@fact("nb08.case_no_churn_payback_months")
def case_no_churn_payback_months() -> str:
    return _num(_case(growth_per_month=0.0, churn_per_month=0.0)["payback_months"])


@fact("nb08.case_no_churn_savings_usd")
def case_no_churn_savings_usd() -> str:
    """A live month's savings, flat volume, no churn."""
    return _num(migration.cash_flow(replace(_base(), growth_per_month=0.0, churn_per_month=0.0))["savings_usd"].max())


@fact("nb08.case_growth_pct")
def case_growth_pct() -> str:
    return _pct(_base().growth_per_month)


@fact("nb08.case_horizon_months")
def case_horizon_months() -> str:
    return _num(_base().horizon_months)


@fact("nb08.case_cost_old")
def case_cost_old() -> str:
    return _num(_base().usd_per_m_tokens_old, 1)


@fact("nb08.case_cost_new")
def case_cost_new() -> str:
    return _num(_base().usd_per_m_tokens_new, 1)


@fact("nb08.case_saving_pct")
def case_saving_pct() -> str:
    return _pct(1 - _base().usd_per_m_tokens_new / _base().usd_per_m_tokens_old)


@fact("nb08.case_port_months")
def case_port_months() -> str:
    return _num(_base().port_months)


@fact("nb08.case_churn_pct")
def case_churn_pct() -> str:
    return _pct(_base().churn_per_month)


# -- the fleet (accelbook.economics.fleet.example_fleet at the dashboard's default target)
def _target() -> float:
    return fleet_spec().controls["interactive_target"].value


@catalogue_cache(maxsize=None)
def _placed(target: float):
    return fleet.place(*fleet.example_fleet(target))


@fact("nb08.fleet_target")
def fleet_target() -> str:
    return _num(_target())


@fact("nb08.pretrain_tpu_chip_hours")
def pretrain_tpu_chip_hours() -> str:
    return _num(_placed(_target()).hours.loc["pre-training", "TPU (v5p)"], -4)


def _slider_targets() -> list[float]:
    c = fleet_spec().controls["interactive_target"]
    return [float(c.base**e) for e in range(c.min_exp, c.max_exp + 1)]


def _interactive_pool(target: float) -> str | None:
    pl = _placed(target)
    if not pl.feasible:
        return None
    return str(pl.hours.loc["interactive inference"].idxmax())


@fact("nb08.lpu_from_target")
def lpu_from_target() -> str:
    """The smallest target on the dashboard's slider at which the least-cost fleet serves interactive from LPUs."""
    return _num(next(t for t in _slider_targets() if (_interactive_pool(t) or "").startswith("LPU")))


@fact("nb08.gpu_up_to_target")
def gpu_up_to_target() -> str:
    """The largest slider target at which interactive traffic still goes to the GPUs."""
    return _num(max(t for t in _slider_targets() if (_interactive_pool(t) or "").startswith("GPU")))


@fact("nb08.no_pool_target")
def no_pool_target() -> str:
    """The smallest slider target no pool can meet."""
    return _num(next(t for t in _slider_targets() if _interactive_pool(t) is None))


# -- the exercises' answers
@fact("nb08.ex_capex_per_hour")
def ex_capex_per_hour() -> str:
    return _num(EXERCISES["capex-per-hour"].expected(), 2)


@fact("nb08.ex_payback_savings_usd")
def ex_payback_savings_usd() -> str:
    """Exercise payback-simple's savings a month (its port: USD 300,000, USD 0.5 saved per M tokens at 100,000M)."""
    m = migration.Migration(1.0, 0.5, 100_000, engineer_months=0, validation_usd=300_000, tooling_usd=0,
                            port_months=0, churn_per_month=0.0)
    return _num(migration.cash_flow(m)["savings_usd"].iloc[0])


@fact("nb08.ex_payback_simple")
def ex_payback_simple() -> str:
    return _num(EXERCISES["payback-simple"].expected())
