"""Notebook 08, *Token economics and the hybrid fleet*: owning against renting (and which input the cost
per token depends on), whether a migration pays for itself, and the least-cost placement of five
workloads on GPU, TPU and LPU pools."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from accelbook import economics
from accelbook.economics import fleet, migration
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.system_power import system_power
from accelbook.ui import charts
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, Slider, View

from .common import markdown_table

#: the tornado's inputs in words (``economics.tornado`` names them as ``own_cost_per_hour``'s arguments)
TCO_INPUT_WORDS = {"purchase_usd": "purchase price", "lifetime_years": "lifetime", "utilisation": "utilisation",
                   "electricity_usd_per_kwh": "electricity price", "pue": "PUE", "overhead_share": "overheads share",
                   "cost_of_capital": "cost of capital"}


def tco_view(chip, tokens_per_s, utilisation, purchase_k_usd, lifetime_years, electricity_usd_per_kwh, pue) -> View:
    c = get_chip(chip)
    sp = system_power(c)
    if sp is None:
        raise ValueError(f"{c.name} has no published power, so its power cost cannot be computed")
    base = dict(purchase_usd=purchase_k_usd * 1e3, tdp_w=sp.system_w, lifetime_years=lifetime_years,
                electricity_usd_per_kwh=electricity_usd_per_kwh, pue=pue, utilisation=utilisation)
    inp = economics.tco_inputs()
    for k in ("cost_of_capital", "load_power_share", "overhead_share", "staff_usd_per_chip_year"):
        base[k] = inp[k]

    def usd_per_m(**kw):
        return economics.own_cost_per_hour(**kw)["usd_per_hour"] / 3600 / tokens_per_s * 1e6

    ranges = {"purchase_usd": (base["purchase_usd"] * 0.7, base["purchase_usd"] * 1.3),
              "lifetime_years": (max(1.0, lifetime_years - 1), lifetime_years + 2),
              "utilisation": (max(0.1, utilisation - 0.3), min(1.0, utilisation + 0.25)),
              "electricity_usd_per_kwh": (electricity_usd_per_kwh / 2, electricity_usd_per_kwh * 2),
              "pue": (1.05, max(1.1, pue + 0.4)), "overhead_share": (0.1, 0.5),
              "cost_of_capital": (0.0, 0.15)}
    tor = economics.tornado(usd_per_m, base, ranges)
    own = economics.own_cost_per_hour(**base)
    lines = [f"Owned: **USD {own['usd_per_hour']:.2f} per useful hour** (capex {own['capex_usd_per_hour']:.2f}, power "
             f"{own['power_usd_per_hour']:.2f}, overheads {own['overhead_usd_per_hour']:.2f}) = "
             f"**USD {usd_per_m(**base):.2f} per million tokens** at {tokens_per_s:,.0f} tokens/s."]
    if c.price_usd_per_hour:
        rent = economics.rent_cost_per_hour(c.price_usd_per_hour, utilisation)
        lines.append(f"Rented at the catalogue's USD {c.price_usd_per_hour:.2f}/h: USD {rent:.2f} per useful hour = "
                     f"USD {rent / 3600 / tokens_per_s * 1e6:.2f} per million tokens.")
    lines.append(f"Power: {sp.text()}.")
    lines.append("Purchase price, lifetime, PUE and electricity are estimates (data/tco.toml): the tornado shows "
                 "which of them the answer depends on.")
    tor = tor.assign(input=tor["input"].map(lambda k: TCO_INPUT_WORDS.get(k, k.replace("_", " "))))
    fig = charts.tornado_chart(tor, title=f"USD per million tokens, owned {c.name}: what moves it",
                               x_title="USD per million tokens (owned)")
    table = tor[["input", "low", "high", "output_low", "output_high", "swing"]].rename(columns={
        "low": "input low", "high": "input high", "output_low": "USD/M tokens at low",
        "output_high": "USD/M tokens at high", "swing": "swing (USD/M tokens)"})
    return View(tor[["input", "output_low", "output_high", "swing"]], fig, "\n\n".join(lines), table=table)


@catalogue_cache(maxsize=1)
def tco_spec() -> DashboardSpec:
    return DashboardSpec(
        name="tco", description="Owning against renting, and which input the cost per token depends on.",
        controls={
            "chip": Choice("chip", [(get_chip(i).name, i) for i in economics.tco_inputs()["purchase_usd"]], "h100"),
            "tokens_per_s": LogSlider("tokens/s per chip", 6, 14, 1024),
            "utilisation": Slider("utilisation", 0.1, 1.0, 0.05, 0.7),
            "purchase_k_usd": Slider("purchase (k USD/chip)", 5.0, 100.0, 5.0, 35.0),
            "lifetime_years": Slider("lifetime (years)", 1.0, 8.0, 0.5, 4.0),
            "electricity_usd_per_kwh": Slider("electricity (USD/kWh)", 0.02, 0.40, 0.01, 0.08),
            "pue": Slider("PUE", 1.0, 2.0, 0.05, 1.2),
        },
        view=tco_view,
    )


def migration_view(cost_old, cost_new, volume_m, growth, engineer_months, churn, horizon) -> View:
    m = migration.Migration(cost_old, cost_new, volume_m, growth / 100, engineer_months=engineer_months,
                            churn_per_month=churn / 100, horizon_months=int(horizon))
    v = migration.verdict(m)
    cases = {f"{volume_m:,.0f}M tokens/month": m, "half the volume": replace(m, volume_m_tokens_per_month=volume_m / 2),
             "twice the volume": replace(m, volume_m_tokens_per_month=volume_m * 2)}
    flows = [migration.cash_flow(mm) for mm in cases.values()]
    flow = pd.DataFrame({"case": np.repeat(list(cases), [len(f) for f in flows]),
                         "month": np.concatenate([f["month"].to_numpy() for f in flows]),
                         "cumulative_usd": np.concatenate([f["cumulative_usd"].to_numpy() for f in flows])})
    fig = charts.payback_chart(flow, title="expected cumulative net of the migration")
    be = v["break_even_m_tokens_per_month"]
    summary = (f"**Verdict: {v['verdict']}.** Stable workload: {'yes' if v['stable'] else 'no'}; cheaper per token: "
               f"{'yes' if v['cheaper'] else 'no'}; volume large enough: {'yes' if v['volume_large_enough'] else 'no'} "
               f"(break-even {be:,.0f}M tokens/month). Port cost USD {v['port_cost_usd']:,.0f}; yearly spend now "
               f"USD {v['yearly_spend_usd']:,.0f}.")
    return View(flow[["case", "month", "cumulative_usd"]], fig, summary)


@catalogue_cache(maxsize=1)
def migration_spec() -> DashboardSpec:
    return DashboardSpec(
        name="migration", description="Does moving this workload to other hardware pay for itself, and when?",
        controls={
            "cost_old": Slider("USD per M tokens now", 0.1, 10.0, 0.1, 2.0),
            "cost_new": Slider("USD per M tokens after", 0.1, 10.0, 0.1, 1.2),
            "volume_m": LogSlider("M tokens per month", 6, 20, 2**14, help="volume served, million tokens per month"),
            "growth": Slider("growth per month (%)", -10.0, 30.0, 1.0, 5.0),
            "engineer_months": Slider("engineer-months to port", 1.0, 60.0, 1.0, 12.0),
            "churn": Slider("model churn (%/month)", 0.0, 50.0, 1.0, 5.0,
                            help="chance per month that the model changes and the port is redone"),
            "horizon": Slider("horizon (months)", 6, 60, 6, 36),
        },
        view=migration_view,
    )


@catalogue_cache(maxsize=16)
def _fleet_case(target: float, scale: float):
    """The example fleet, its rates, and the rates as a table (workload × pool) for people to read."""
    ws, ps = fleet.example_fleet(target, scale)
    rates = fleet.default_rates(ws, ps)
    table = rates.pivot(index="workload", columns="pool", values="tokens_per_s_per_chip").round(0).reset_index()
    return ws, ps, rates, table


def fleet_view(interactive_target, demand_scale, tpu_price, lpu_price) -> View:
    ws, ps, rates, table = _fleet_case(float(interactive_target), float(demand_scale))
    ps = [replace(p, usd_per_chip_hour=tpu_price) if p.name.startswith("TPU") else
          replace(p, usd_per_chip_hour=lpu_price) if p.name.startswith("LPU") else p for p in ps]
    rows, lines = [], []
    for name, rule in fleet.STRATEGIES.items():
        allowed = {(w.name, p.name) for w in ws for p in ps if rule(w.name, p.name)}
        pl = fleet.place(ws, ps, rates, allowed)
        lines.append(f"| {name} | {'—' if not pl.feasible else f'{pl.usd_per_month:,.0f}'} | {pl.message} |")
        if pl.feasible:
            hours = pl.hours.to_numpy()            # rows: ws, columns: ps, in order
            for w, row in zip(ws, hours):
                for p, h in zip(ps, row):
                    if h > 0:
                        rows.append({"strategy": name, "workload": w.name, "pool": p.name,
                                     "usd_per_month": h * p.usd_per_chip_hour})
    if not rows:
        raise ValueError("no strategy can serve this demand with these pools")
    df = pd.DataFrame(rows)
    fig = charts.fleet_chart(df, title=f"monthly cost by strategy (interactive target {interactive_target:,.0f} tokens/s per user)")
    return View(df, fig, markdown_table(("strategy", "USD per month", "note"), lines)
                + "\n\nRates (tokens/s per chip) come from the training and inference "
                "models; 0 means the pool cannot run the workload or meet its latency target.", table=table)


def _pool_price(prefix: str) -> float:
    """The example fleet's price per chip-hour of the pool whose name starts with ``prefix``."""
    return next(p.usd_per_chip_hour for p in fleet.example_fleet()[1] if p.name.startswith(prefix))


@catalogue_cache(maxsize=1)
def fleet_spec() -> DashboardSpec:
    return DashboardSpec(
        name="fleet", description="Place five workloads on GPU, TPU and LPU pools at least cost (a linear programme).",
        controls={
            "interactive_target": LogSlider("interactive target (tok/s)", 4, 9, 64, help="the interactive workloads' target, tokens/s per user"),
            "demand_scale": Slider("demand ×", 0.25, 4.0, 0.25, 1.0),
            "tpu_price": Slider("TPU v5p USD/chip-hour", 1.0, 10.0, 0.2, _pool_price("TPU")),
            "lpu_price": Slider("LP30 USD/chip-hour", 0.5, 10.0, 0.5, _pool_price("LPU"), help="an estimate"),
        },
        view=fleet_view,
    )


SPECS = (tco_spec, migration_spec, fleet_spec)
