"""Exercises of notebook 08: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.economics import own_cost_per_hour, tco_inputs
from accelbook.economics.fleet import example_fleet, place
from accelbook.economics.migration import Migration, payback_months, verdict
from accelbook.specs.system_power import system_power
from accelbook.ui.exercises.core import Exercise


def _payback_simple() -> float:
    return payback_months(Migration(1.0, 0.5, 100_000, engineer_months=0, validation_usd=300_000, tooling_usd=0,
                                    port_months=0, churn_per_month=0.0))


def _own_h100(utilisation: float = 0.7, **change) -> dict:
    inp = {k: v for k, v in tco_inputs().items() if k != "purchase_usd"} | change
    return own_cost_per_hour(35000, system_power("h100").system_w, utilisation=utilisation, **inp)


def _electricity_answer() -> str:
    inp = tco_inputs()
    base, w = _own_h100(), system_power("h100").system_w
    wall = base["power_usd_per_hour"] * 0.7    # per useful hour at 70 % -> per wall-clock hour
    share = base["power_usd_per_hour"] / base["usd_per_hour"]
    capex, over = base["capex_usd_per_hour"] / base["usd_per_hour"], base["overhead_usd_per_hour"] / base["usd_per_hour"]
    return (f"Power, for the whole DGX H100 server per GPU, is {w:,.0f} W × {inp['load_power_share']:.2f} × "
            f"{inp['pue']:.1f} × USD {inp['electricity_usd_per_kwh']:.2f}/kWh = USD {wall:.3f} per wall-clock hour, "
            f"{base['power_usd_per_hour']:.3f} per useful hour at 70 %: {100 * share:.1f} % of USD "
            f"{base['usd_per_hour']:.2f}. Doubling the tariff adds that {100 * share:.1f} % again. The purchase "
            f"({100 * capex:.0f} %) and overheads ({100 * over:.0f} %) dominate, so utilisation and price, not "
            "electricity, decide an owned token's cost.")


def _pretrain_pool() -> set[str]:
    hours = place(*example_fleet(64)).hours
    return {hours.loc["pre-training"].idxmax().split()[0].lower()}


EXERCISES: list[Exercise] = [
    Exercise("capex-per-hour", "08", "Straight-line capex per useful hour: USD 40,000 over 4 years at 50% utilisation?",
             lambda: 40000 / (4 * 8760 * 0.5), 0.01, "Purchase ÷ (years × 8,760 h × utilisation).", "USD/h"),
    Exercise("payback-simple", "08", "Months to pay back USD 300,000 saving USD 0.5/M tokens at 100,000M tokens a month?",
             _payback_simple, 0.0,
             "Savings per month = 0.5 × 100,000; divide the port cost by it and round up.", "months"),
    Exercise("predict-own-h100-util35", "08", "Predict before moving the utilisation slider: an owned H100 costs USD "
             f"{_own_h100(0.7)['usd_per_hour']:.2f} per useful hour at 70 % utilisation; what at 35 %?", lambda: _own_h100(0.35)["usd_per_hour"], 0.05,
             "Which parts of the cost are paid per wall-clock hour, busy or not?", "USD/h"),
    Exercise("predict-payback", "08", "Predict before reading the migration dashboard: months to pay back at its "
             "defaults (USD 2.0 → 1.2 per M tokens, 16,384M tokens a month growing 5 %, 12 engineer-months, 5 % "
             "churn)?", lambda: verdict(Migration(2.0, 1.2, 16384, 0.05, churn_per_month=0.05))["payback_months"], 0.2,
             "Port cost USD 450,000; savings 0.8 × volume a month once the port is live, less churn's rework.",
             "months"),
    Exercise("predict-pretrain-pool", "08", "Predict before moving the fleet sliders: which pool pre-trains Llama 3.1 "
             "70B in the least-cost fleet at its defaults: 'gpu', 'tpu' or 'lpu'?", _pretrain_pool,
             hint="Compare USD per training token on rented H100s and TPU v5p; LPUs do not train."),
    Exercise("whatif-electricity-2x", "08", "What if electricity cost twice as much (USD 0.16/kWh): by how many % "
             "does an owned H100's cost per useful hour rise (70 % utilisation)?",
             lambda: 100 * (_own_h100(electricity_usd_per_kwh=0.16)["usd_per_hour"] / _own_h100()["usd_per_hour"] - 1),
             0.05, "Only the power term changes: server power per chip × load share × PUE × tariff.", "%",
             model_answer=_electricity_answer),
]
