"""Paper-and-pencil problems of notebook 08: the cost of a token, rent or own, ports and fleets (see accelbook.ui.course.hand)."""

from __future__ import annotations

import math

import pandas as pd

from accelbook.economics import fleet, migration
from accelbook.economics.cost import usd_per_token
from accelbook.economics.tco import HOURS_PER_YEAR, own_cost_per_hour, rent_cost_per_hour, tco_inputs
from accelbook.inference import estimate
from accelbook.specs.chips import get_chip
from accelbook.specs.system_power import system_power
from accelbook.ui.course.hand import Problem, fmt

_OWN = "accelbook.economics.tco.own_cost_per_hour (capex as an annuity, power, overheads, over useful hours)"
_MIG = "accelbook.economics.migration"
_FLEET = "accelbook.economics.fleet.place (least-cost placement, a linear programme solved by HiGHS)"


def _tco(chip="h100", **extra):
    inp = tco_inputs()
    return {"P": inp["purchase_usd"][chip], "n": inp["lifetime_years"], "r": inp["cost_of_capital"],
            "W": system_power(chip).system_w, "load": inp["load_power_share"], "pue": inp["pue"],
            "tariff": inp["electricity_usd_per_kwh"], "over": inp["overhead_share"],
            "staff": inp["staff_usd_per_chip_year"], "h": HOURS_PER_YEAR, **extra}


def _own(g, utilisation=1.0, **change):
    """The package's owned cost for the inputs ``g`` (``change`` overrides some)."""
    kw = {"lifetime_years": g["n"], "cost_of_capital": g["r"], "pue": g["pue"], "electricity_usd_per_kwh": g["tariff"],
          "load_power_share": g["load"], "overhead_share": g["over"], "staff_usd_per_chip_year": g["staff"]}
    kw.update(change)
    return own_cost_per_hour(g["P"], g["W"], utilisation=utilisation, **kw)


def _annuity(g):
    return g["P"] * g["r"] / (1 - (1 + g["r"]) ** -g["n"])


def _power(g, tariff=None):
    return g["W"] * g["load"] * g["pue"] * g["h"] / 1000 * (g["tariff"] if tariff is None else tariff)


def _yearly(g):
    return _annuity(g) * (1 + g["over"]) + _power(g) + g["staff"]


def _yearly_steps(g):
    return [f"capex = P·r ÷ (1 − (1 + r)^−n) = {fmt(g['P'])} × {g['r']} ÷ (1 − {1 + g['r']}^−{fmt(g['n'])}) = "
            f"USD {fmt(round(_annuity(g)))} a year",
            f"power = {fmt(g['W'])} W × {g['load']} × {g['pue']} × {fmt(g['h'])} h ÷ 1,000 × {g['tariff']} = "
            f"USD {fmt(_power(g))} a year",
            f"overheads = {g['over']} × {fmt(round(_annuity(g)))} + {fmt(g['staff'])} = "
            f"USD {fmt(round(g['over'] * _annuity(g) + g['staff']))} a year",
            f"total = USD {fmt(round(_yearly(g)))} a year"]


def _port(**extra):
    m = migration.Migration(2.0, 1.2, 20_000, churn_per_month=0.0)
    return {"c_old": m.usd_per_m_tokens_old, "c_new": m.usd_per_m_tokens_new, "V": m.volume_m_tokens_per_month,
            "em": m.engineer_months, "usd_em": m.usd_per_engineer_month, "val": m.validation_usd,
            "tool": m.tooling_usd, "k": m.port_months, "H": m.horizon_months, **extra}


def _port_cost(g):
    return g["em"] * g["usd_em"] + g["val"] + g["tool"]


def _migration(g, volume=None):
    return migration.Migration(g["c_old"], g["c_new"], g["V"] if volume is None else volume, growth_per_month=0.0,
                               engineer_months=g["em"], usd_per_engineer_month=g["usd_em"], validation_usd=g["val"],
                               tooling_usd=g["tool"], port_months=g["k"], churn_per_month=0.0,
                               horizon_months=g["H"])


def _payback(g):
    return g["k"] + math.ceil(_port_cost(g) / ((g["c_old"] - g["c_new"]) * g["V"]))


def _fleet():
    ws, ps = fleet.example_fleet()
    gpu, lpu = ps[0], ps[2]
    return {"D": next(w.tokens_per_month for w in ws if w.kind == "interactive"), "p_gpu": gpu.usd_per_chip_hour,
            "p_lpu": lpu.usd_per_chip_hour,
            "r_gpu": estimate("llama-3.1-70b", gpu.chip, 8, 64, 1024, 256, "fp8").tokens_per_s_per_chip,
            "r_lpu": estimate("llama-3.1-70b", lpu.chip, 256, 64, 1024, 256, "fp8", tp=4, pp=64).tokens_per_s_per_chip}


def _place(g, pool):
    """The package's least-cost placement of the one workload on one pool (GPU or LPU) with the given rates."""
    chip, price, rate = ("h100", g["p_gpu"], g["r_gpu"]) if pool == "gpu" else ("groq-lp30", g["p_lpu"], g["r_lpu"])
    w = fleet.FleetWorkload("serve", "batch_inference", "llama-3.1-70b", g["D"])
    p = fleet.Pool(pool, chip, 100_000, price)
    return fleet.place([w], [p], rates=pd.DataFrame([{"workload": "serve", "pool": pool,
                                                       "tokens_per_s_per_chip": rate}]))


def _month_cost(g):
    return g["D"] / (3600 * g["r_gpu"]) * g["p_gpu"]


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb08-capex-annuity", "08", "hand",
        "An H100 (with its share of the server) costs USD {P:,.0f}. Spread over n = {n:g} years at a cost of capital "
        "r = {r:.0%} a year, what is its capex per year, as an annuity P·r ÷ (1 − (1 + r)^−n)?",
        _tco,
        lambda g: [f"capex = {fmt(g['P'])} × {g['r']} ÷ (1 − {1 + g['r']}^−{fmt(g['n'])}) = "
                   f"{fmt(g['P'] * g['r'])} ÷ {fmt(1 - (1 + g['r']) ** -g['n'])} = USD {fmt(round(_annuity(g)))} a year"],
        _annuity,
        lambda g: _own(g)["capex_usd_per_hour"] * g["h"],
        "USD a year", _OWN),
    Problem(
        "hand-nb08-power-year", "08", "hand",
        "A DGX H100 server draws at most {W:,.0f} W per GPU. On average it draws {load:.0%} of that, the site's PUE is "
        "{pue}, and electricity costs USD {tariff} per kWh. What does one GPU's power cost a year ({h:,} hours)?",
        _tco,
        lambda g: [f"power = {fmt(g['W'])} W × {g['load']} × {g['pue']} × {fmt(g['h'])} h ÷ 1,000 × {g['tariff']} = "
                   f"USD {fmt(_power(g))} a year"],
        _power,
        lambda g: _own(g)["power_usd_per_hour"] * g["h"],
        "USD a year", _OWN),
    Problem(
        "hand-nb08-rent-useful-hour", "08", "hand",
        "An H100 rents at USD {price:.2f} an hour (on-demand list price). You keep it busy {u:.0%} of the time. "
        "What does one useful hour cost?",
        lambda: {"price": get_chip("h100").price_usd_per_hour, "u": 0.7},
        lambda g: [f"USD per useful hour = price ÷ utilisation = {fmt(g['price'])} ÷ {g['u']} = "
                   f"{fmt(g['price'] / g['u'])}"],
        lambda g: g["price"] / g["u"],
        lambda g: rent_cost_per_hour(g["price"], g["u"]),
        "USD per useful hour", "accelbook.economics.tco.rent_cost_per_hour"),
    Problem(
        "hand-nb08-usd-per-m-rent", "08", "hand",
        "A rented H100 costs USD {price:.2f} an hour and serves {tps:,} tokens/s. What does a million tokens cost?",
        lambda: {"price": get_chip("h100").price_usd_per_hour, "tps": 1000},
        lambda g: [f"USD per second = {fmt(g['price'])} ÷ 3,600 = {fmt(g['price'] / 3600)}",
                   f"USD per million tokens = {fmt(g['price'] / 3600)} ÷ {fmt(g['tps'])} × 1e6 = "
                   f"{fmt(g['price'] / 3600 / g['tps'] * 1e6)}"],
        lambda g: g["price"] / 3600 / g["tps"] * 1e6,
        lambda g: usd_per_token(g["tps"], get_chip("h100")) * 1e6,
        "USD per million tokens", "accelbook.economics.cost.usd_per_token"),
    Problem(
        "hand-nb08-straight-line-h200", "08", "hand",
        "An H200 costs USD {P:,.0f} (an estimate). Straight-line over {n:g} years (no cost of capital), what is its "
        "capex per useful hour at {u:.0%} utilisation ({h:,} hours a year)?",
        lambda: _tco("h200", u=0.5),
        lambda g: [f"capex per useful hour = P ÷ (n × {fmt(g['h'])} × u) = {fmt(g['P'])} ÷ ({fmt(g['n'])} × "
                   f"{fmt(g['h'])} × {g['u']}) = USD {fmt(g['P'] / (g['n'] * g['h'] * g['u']))}"],
        lambda g: g["P"] / (g["n"] * g["h"] * g["u"]),
        lambda g: _own(g, g["u"], cost_of_capital=0.0)["capex_usd_per_hour"],
        "USD per useful hour", _OWN),
    Problem(
        "hand-nb08-fleet-month", "08", "hand",
        "A workload needs {D:.2e} tokens a month. Rented H100s cost USD {p_gpu:.2f} a chip-hour, and the model gives "
        "{r_gpu:.1f} tokens/s per chip (Llama 3.1 70B, fp8, batch 64 on 8 H100s). What does the month cost on H100s?",
        _fleet,
        lambda g: [f"chip-hours = D ÷ (3,600 × rate) = {fmt(g['D'])} ÷ (3,600 × {fmt(g['r_gpu'])}) = "
                   f"{fmt(round(g['D'] / (3600 * g['r_gpu'])))}",
                   f"cost = {fmt(round(g['D'] / (3600 * g['r_gpu'])))} × {fmt(g['p_gpu'])} = "
                   f"USD {fmt(round(_month_cost(g)))}"],
        _month_cost,
        lambda g: _place(g, "gpu").usd_per_month,
        "USD a month", _FLEET),
    Problem(
        "exam-nb08-own-useful-hour", "08", "exam",
        "An owned H100 costs USD {P:,.0f}, an annuity over {n:g} years at {r:.0%}. Its server draws {W:,.0f} W per "
        "GPU, on average {load:.0%} of that, at PUE {pue} and USD {tariff}/kWh. Overheads are {over:.0%} of the yearly "
        "capex plus USD {staff:,.0f} of staff a year. At {u:.0%} utilisation, what does one useful hour cost?",
        lambda: _tco(u=0.7),
        lambda g: [*_yearly_steps(g),
                   f"per useful hour = {fmt(round(_yearly(g)))} ÷ ({g['u']} × {fmt(g['h'])}) = "
                   f"USD {fmt(_yearly(g) / (g['u'] * g['h']))}"],
        lambda g: _yearly(g) / (g["u"] * g["h"]),
        lambda g: _own(g, g["u"])["usd_per_hour"],
        "USD per useful hour", _OWN),
    Problem(
        "exam-nb08-electricity-2x", "08", "exam",
        "An owned H100 costs USD {P:,.0f} over {n:g} years at {r:.0%}. Its power is {W:,.0f} W × {load:.0%} × "
        "PUE {pue} at USD {tariff}/kWh; overheads are {over:.0%} of capex plus USD {staff:,.0f} a year. If "
        "electricity doubles, by how many per cent does its cost per useful hour rise? Would that move a decision to "
        "own rather than rent?",
        _tco,
        lambda g: [*_yearly_steps(g),
                   "doubling the tariff adds the power term once more, and nothing else changes",
                   f"rise = power ÷ total = {fmt(_power(g))} ÷ {fmt(round(_yearly(g)))} = "
                   f"{fmt(100 * _power(g) / _yearly(g))} %: the purchase, not electricity, sets the cost"],
        lambda g: 100 * _power(g) / _yearly(g),
        lambda g: 100 * (_own(g, electricity_usd_per_kwh=2 * g["tariff"])["usd_per_hour"] / _own(g)["usd_per_hour"] - 1),
        "%", _OWN),
    Problem(
        "exam-nb08-rent-breakeven-util", "08", "exam",
        "You can rent an H100 on demand at USD {price:.2f} an hour, paying only for the hours you use, or own one "
        "and pay around the clock: USD {P:,.0f} over {n:g} years at {r:.0%}, {W:,.0f} W × {load:.0%} × PUE {pue} at "
        "USD {tariff}/kWh, overheads {over:.0%} of capex plus USD {staff:,.0f} a year. Below what utilisation "
        "(per cent of the year's {h:,} hours) is renting cheaper?",
        lambda: _tco(price=get_chip("h100").price_usd_per_hour),
        lambda g: [*_yearly_steps(g),
                   f"break-even: u × {fmt(g['h'])} × {fmt(g['price'])} = {fmt(round(_yearly(g)))}  ⇒  u = "
                   f"{fmt(100 * _yearly(g) / (g['h'] * g['price']))} %"],
        lambda g: 100 * _yearly(g) / (g["h"] * g["price"]),
        lambda g: 100 * _own(g)["usd_per_hour"] / rent_cost_per_hour(g["price"], 1.0),
        "%", _OWN + " and rent_cost_per_hour"),
    Problem(
        "exam-nb08-payback-port", "08", "exam",
        "Porting a model to an ASIC takes {em:g} engineer-months at USD {usd_em:,.0f}, plus USD {val:,.0f} of "
        "validation and USD {tool:,.0f} of tooling, paid up front. It lowers the cost from USD {c_old} to {c_new} per "
        "million tokens, at a flat {V:,.0f} million tokens a month, and starts saving only after {k} months of "
        "porting. The model never changes. After how many months has the port paid for itself?",
        _port,
        lambda g: [f"port = {fmt(g['em'])} × {fmt(g['usd_em'])} + {fmt(g['val'])} + {fmt(g['tool'])} = "
                   f"USD {fmt(_port_cost(g))}",
                   f"savings = ({g['c_old']} − {g['c_new']}) × {fmt(g['V'])} = "
                   f"USD {fmt((g['c_old'] - g['c_new']) * g['V'])} a month",
                   f"months = {g['k']} + ⌈{fmt(_port_cost(g))} ÷ {fmt((g['c_old'] - g['c_new']) * g['V'])}⌉ = "
                   f"{g['k']} + {_payback(g) - g['k']} = {_payback(g)}"],
        _payback,
        lambda g: migration.payback_months(_migration(g)),
        "months", _MIG + ".payback_months", 0.0),
    Problem(
        "exam-nb08-break-even-volume", "08", "exam",
        "A port to an ASIC costs {em:g} × USD {usd_em:,.0f} + USD {val:,.0f} + USD {tool:,.0f} up "
        "front and saves USD {c_old} − {c_new} per million tokens once live, after {k} months of porting. The "
        "volume is flat and the model never changes. What is the smallest volume (million tokens a month) at which "
        "it pays back within a horizon of {H} months?",
        _port,
        lambda g: [f"port = USD {fmt(_port_cost(g))}; months of savings = {g['H']} − {g['k']} = {g['H'] - g['k']}",
                   f"V = port ÷ (saving × months) = {fmt(_port_cost(g))} ÷ ({fmt(g['c_old'] - g['c_new'])} × "
                   f"{g['H'] - g['k']}) = {fmt(_port_cost(g) / ((g['c_old'] - g['c_new']) * (g['H'] - g['k'])))} "
                   "million tokens a month"],
        lambda g: _port_cost(g) / ((g["c_old"] - g["c_new"]) * (g["H"] - g["k"])),
        lambda g: migration.break_even_volume(_migration(g)),
        "million tokens a month", _MIG + ".break_even_volume"),
    Problem(
        "exam-nb08-lpu-break-even-price", "08", "exam",
        "A serving workload needs {D:.2e} tokens a month. Rented H100s cost USD {p_gpu:.2f} a chip-hour at "
        "{r_gpu:.1f} tokens/s per chip; Groq LP30s make {r_lpu:.1f} tokens/s per chip (both the model's rates for "
        "Llama 3.1 70B in fp8 at batch 64; no LP30 speed is published to check it). Below what price per LP30 "
        "chip-hour does the least-cost fleet move the workload to LP30s?",
        _fleet,
        lambda g: [f"H100: {fmt(g['D'])} ÷ (3,600 × {fmt(g['r_gpu'])}) × {fmt(g['p_gpu'])} = "
                   f"USD {fmt(_month_cost(g))} a month",
                   f"LP30 chip-hours = {fmt(g['D'])} ÷ (3,600 × {fmt(g['r_lpu'])}) = {fmt(g['D'] / (3600 * g['r_lpu']))}",
                   f"break-even price = {fmt(_month_cost(g))} ÷ {fmt(g['D'] / (3600 * g['r_lpu']))} = "
                   f"USD {fmt(g['p_gpu'] * g['r_lpu'] / g['r_gpu'])} a chip-hour"],
        lambda g: g["p_gpu"] * g["r_lpu"] / g["r_gpu"],
        lambda g: _place(g, "gpu").usd_per_month / float(_place(g, "lpu").hours.to_numpy().sum()),
        "USD per chip-hour", _FLEET),
]
