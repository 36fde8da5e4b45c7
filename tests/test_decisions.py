"""Decision calculators: owning against renting (accelbook.economics' TCO part and tornado), when a
migration to other hardware pays back (accelbook.migration) and the least-cost hybrid fleet
(accelbook.fleet). Expected values are worked by hand in the comments; the issue's done-criteria
(monotonicity of payback, break-even volume, fleet cost against latency target, demand and
allowed pairs) are checked as properties."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from accelbook import economics as E
from accelbook.economics import fleet as F
from accelbook.economics import migration as M
from accelbook.specs.chips import get_chip

HOURS_PER_YEAR = 8760


# -- 1. owning against renting ---------------------------------------------------------------------------
# annuity factor for r = 0.08, n = 4 by hand: 1.08^2 = 1.1664, 1.08^4 = 1.36048896,
# 1/1.36048896 = 0.7350298528, 1 - that = 0.2649701472, 0.08 / 0.2649701472 = 0.3019208045
ANNUITY_8PCT_4Y = 0.3019208045


def test_tco_inputs_come_from_the_data_file():
    inp = E.tco_inputs()
    assert inp["lifetime_years"] == 4 and inp["cost_of_capital"] == pytest.approx(0.08)
    assert inp["pue"] == pytest.approx(1.2) and inp["electricity_usd_per_kwh"] == pytest.approx(0.08)
    assert inp["load_power_share"] == pytest.approx(0.75) and inp["overhead_share"] == pytest.approx(0.25)
    assert inp["staff_usd_per_chip_year"] == 1500
    assert inp["purchase_usd"]["h100"] == 35000 and inp["purchase_usd"]["a100"] == 15000


@pytest.mark.parametrize("u", [1.0, 0.5, 0.25])
def test_straight_line_capex_per_hour(u):
    # 35,000 USD over 4 years at r = 0: 35000 / (4 * 8760 * u) per useful hour; 0.99886 USD/h at u = 1
    o = E.own_cost_per_hour(35000, 700, lifetime_years=4, cost_of_capital=0, utilisation=u)
    assert o["capex_usd_per_hour"] == pytest.approx(0.998858447 / u, rel=1e-8)
    assert o["capex_usd_per_hour"] == pytest.approx(35000 / (4 * HOURS_PER_YEAR * u), rel=1e-12)


def test_annuity_capex():
    o = E.own_cost_per_hour(10000, 0, lifetime_years=4, cost_of_capital=0.08, overhead_share=0,
                            staff_usd_per_chip_year=0)
    assert o["usd_per_year"] == pytest.approx(10000 * ANNUITY_8PCT_4Y, rel=1e-9)   # 3019.208 USD/year
    assert o["capex_usd_per_hour"] == pytest.approx(3019.208045 / HOURS_PER_YEAR, rel=1e-9)
    # the annuity always exceeds straight line when r > 0 (interest on the unpaid balance)
    assert o["capex_usd_per_hour"] > E.own_cost_per_hour(10000, 0, lifetime_years=4, cost_of_capital=0)[
        "capex_usd_per_hour"]


@pytest.mark.parametrize("u", [1.0, 0.5])
def test_power_per_hour(u):
    # 700 W * 0.75 load * 1.2 PUE = 630 W = 0.63 kW; * 0.08 USD/kWh = 0.0504 USD per hour on, over u
    o = E.own_cost_per_hour(35000, 700, pue=1.2, electricity_usd_per_kwh=0.08, load_power_share=0.75, utilisation=u)
    assert o["power_usd_per_hour"] == pytest.approx(0.0504 / u, rel=1e-12)


def test_own_cost_all_parts_by_hand():
    # H100 at the data file's defaults, 70 % utilisation:
    #   capex 35000 * 0.3019208045 = 10567.22816 /yr; power 0.0504 * 8760 = 441.504 /yr;
    #   overheads 0.25 * 10567.22816 + 1500 = 4141.80704 /yr; total 15150.5392 /yr
    #   useful hours 0.7 * 8760 = 6132 -> 2.470733 USD/h
    o = E.own_cost_per_hour(35000, 700, lifetime_years=4, cost_of_capital=0.08, pue=1.2, electricity_usd_per_kwh=0.08,
                            load_power_share=0.75, overhead_share=0.25, staff_usd_per_chip_year=1500, utilisation=0.7)
    assert o["usd_per_year"] == pytest.approx(15150.5392, rel=1e-8)
    assert o["capex_usd_per_hour"] == pytest.approx(10567.22816 / 6132, rel=1e-8)
    assert o["overhead_usd_per_hour"] == pytest.approx(4141.80704 / 6132, rel=1e-8)
    assert o["usd_per_hour"] == pytest.approx(2.470733, rel=1e-6)
    assert o["usd_per_hour"] == pytest.approx(o["capex_usd_per_hour"] + o["power_usd_per_hour"]
                                              + o["overhead_usd_per_hour"], rel=1e-12)


@pytest.mark.parametrize("price,u,expected", [(10.8, 1.0, 10.8), (10.8, 0.5, 21.6), (2.0, 0.8, 2.5), (0.0, 0.3, 0.0)])
def test_rent_cost_is_price_over_utilisation(price, u, expected):
    assert E.rent_cost_per_hour(price, u) == pytest.approx(expected, rel=1e-12)


def test_rent_or_own_rows_and_usd_per_million_tokens():
    # H100: rent 10.8 / 0.7 = 15.428571 USD/h; at 1,000 tokens/s that is 15.428571 / 3600 / 1000 * 1e6
    # = 4.285714 USD per million tokens. Own: power for the whole DGX H100 per GPU, 10.2 kW / 8 = 1,275 W
    # (not the board's 700 W): 1275 * 0.75 * 1.2 * 0.08 / 1000 = 0.0918 USD/h on, 804.168 /yr; with capex and
    # overheads as above, 10567.22816 + 804.168 + 4141.80704 = 15513.2032 /yr over 6132 h = 2.529877 USD/h
    # -> 0.702744 USD/M tokens
    df = E.rent_or_own("h100", 1000.0, utilisation=0.7)
    assert list(df["option"]) == ["own", "rent"]
    own, rent = df.set_index("option").loc["own"], df.set_index("option").loc["rent"]
    assert rent["usd_per_hour"] == pytest.approx(15.428571, rel=1e-6)
    assert rent["usd_per_million_tokens"] == pytest.approx(4.285714, rel=1e-6)
    assert own["usd_per_hour"] == pytest.approx(2.529877, rel=1e-6)
    assert own["power"] == pytest.approx(0.0918 / 0.7, rel=1e-9)
    assert own["usd_per_million_tokens"] == pytest.approx(0.702744, rel=1e-5)
    assert own["capex"] + own["power"] + own["overheads"] == pytest.approx(own["usd_per_hour"])
    assert math.isnan(rent["capex"])


def test_rent_or_own_overrides_and_chip_object():
    # straight line, no overheads, no power price: 20,000 / (2 * 8760 * 0.5) = 2.283105 USD/h
    df = E.rent_or_own(get_chip("h100"), 500.0, utilisation=0.5, purchase_usd=20000, lifetime_years=2,
                       cost_of_capital=0, overhead_share=0, staff_usd_per_chip_year=0, electricity_usd_per_kwh=0)
    own = df.set_index("option").loc["own"]
    assert own["usd_per_hour"] == pytest.approx(2.283105, rel=1e-6)
    assert own["usd_per_million_tokens"] == pytest.approx(2.283105 / 3600 / 500 * 1e6, rel=1e-6)


def test_rent_or_own_missing_prices():
    assert list(E.rent_or_own("b200", 100.0)["option"]) == ["own"]       # purchase estimate, no rental price
    assert list(E.rent_or_own("tpu-v5p", 100.0)["option"]) == ["rent"]   # rental price, no TDP/purchase
    with pytest.raises(ValueError, match="purchase_usd"):
        E.rent_or_own("groq-lp30", 100.0)                                # neither


_BAD_OWN = [
    ({"purchase_usd": -1}, "purchase_usd"), ({"tdp_w": -700}, "tdp_w"), ({"lifetime_years": 0}, "lifetime_years"),
    ({"lifetime_years": -4}, "lifetime_years"), ({"cost_of_capital": -0.01}, "cost_of_capital"),
    ({"pue": 0.9}, "pue"), ({"electricity_usd_per_kwh": -0.1}, "electricity"), ({"utilisation": 0}, "utilisation"),
    ({"utilisation": 1.01}, "utilisation"), ({"utilisation": -0.5}, "utilisation"),
    ({"overhead_share": -0.1}, "overhead_share"), ({"staff_usd_per_chip_year": -1}, "staff"),
    ({"purchase_usd": True}, "purchase_usd"), ({"lifetime_years": True}, "lifetime_years"),
    ({"cost_of_capital": False}, "cost_of_capital"), ({"utilisation": True}, "utilisation"),
    ({"pue": math.nan}, "pue"), ({"purchase_usd": math.inf}, "purchase_usd"),
]


@pytest.mark.parametrize("bad,match", _BAD_OWN)
def test_own_cost_errors(bad, match):
    kw = {"purchase_usd": 35000, "tdp_w": 700, **bad}
    with pytest.raises(ValueError, match=match):
        E.own_cost_per_hour(**kw)


@pytest.mark.parametrize("price,u", [(-1.0, 0.5), (10.0, 0.0), (10.0, 1.5), (True, 0.5), (10.0, True)])
def test_rent_cost_errors(price, u):
    with pytest.raises(ValueError):
        E.rent_cost_per_hour(price, u)


@pytest.mark.parametrize("kw", [{"utilisation": 0}, {"utilisation": 2}, {"pue": 0.5}, {"purchase_usd": -5},
                                {"lifetime_years": 0}])
def test_rent_or_own_errors(kw):
    with pytest.raises(ValueError):
        E.rent_or_own("h100", 100.0, **kw)


@pytest.mark.parametrize("tps", [0, -5.0, math.nan, True, math.inf])
def test_rent_or_own_rejects_bad_token_rate(tps):
    # BUG (reported): True is taken as 1 token/s and inf gives 0 USD per million tokens
    with pytest.raises(ValueError):
        E.rent_or_own("h100", tps)


# -- 2. tornado ----------------------------------------------------------------------------------------
def test_tornado_linear_function():
    # f = 3a - 2b + 0.5c; swing = |slope| * (high - low): a 3*2 = 6, b 2*10 = 20, c 0.5*4 = 2
    def f(a, b, c):
        return 3 * a - 2 * b + 0.5 * c

    base = {"a": 1.0, "b": 2.0, "c": 3.0}
    t = E.tornado(f, base, {"c": (1.0, 5.0), "a": (0.0, 2.0), "b": (-5.0, 5.0)})
    assert list(t["input"]) == ["b", "a", "c"]
    assert list(t["swing"]) == pytest.approx([20.0, 6.0, 2.0])
    assert (t["base_output"] == f(**base)).all() and t["base_output"].iloc[0] == pytest.approx(0.5)
    row_b = t.set_index("input").loc["b"]
    assert row_b["output_low"] == pytest.approx(3 + 10 + 1.5)
    assert row_b["output_high"] == pytest.approx(3 - 10 + 1.5)
    assert list(t.set_index("input").loc["a", ["low", "high"]]) == [0.0, 2.0]


@settings(max_examples=60, deadline=None)
@given(slopes=st.lists(st.floats(-100, 100), min_size=1, max_size=5),
       spans=st.lists(st.tuples(st.floats(-50, 50), st.floats(0, 50)), min_size=5, max_size=5))
def test_tornado_swing_property(slopes, spans):
    names = [f"x{i}" for i in range(len(slopes))]
    base = {n: 1.0 for n in names}

    def f(**kw):
        return sum(s * kw[n] for s, n in zip(slopes, names))

    ranges = {n: (lo, lo + w) for n, (lo, w) in zip(names, spans)}
    t = E.tornado(f, base, ranges)
    assert len(t) == len(names)
    assert list(t["swing"]) == sorted(t["swing"], reverse=True)
    assert (t["base_output"] == f(**base)).all()
    by = t.set_index("input")
    for s, n in zip(slopes, names):
        lo, hi = ranges[n]
        assert by.loc[n, "swing"] == pytest.approx(abs(s) * (hi - lo), rel=1e-9, abs=1e-9)


def test_tornado_on_own_cost_and_unknown_input():
    base = {"purchase_usd": 35000, "tdp_w": 700, "utilisation": 0.7}

    def cost(**kw):
        return E.own_cost_per_hour(**kw)["usd_per_hour"]

    t = E.tornado(cost, base, {"purchase_usd": (25000, 45000), "tdp_w": (600, 800), "utilisation": (0.5, 0.9)})
    assert t["base_output"].iloc[0] == pytest.approx(2.470733, rel=1e-6)
    assert t["input"].iloc[-1] == "tdp_w"          # power is a few cents an hour: the smallest bar
    with pytest.raises(ValueError, match="pue"):
        E.tornado(cost, base, {"pue": (1.1, 1.5)})


# -- 3. migration --------------------------------------------------------------------------------------
# port cost M = 2 engineer-months * 10,000 + 5,000 validation + 5,000 tooling = 30,000 USD
_TINY = dict(usd_per_m_tokens_old=3.0, usd_per_m_tokens_new=1.0, volume_m_tokens_per_month=1000.0,
             engineer_months=2, usd_per_engineer_month=10000, validation_usd=5000, tooling_usd=5000,
             port_months=0, churn_per_month=0.0, horizon_months=24)


def _mig(**kw):
    return M.Migration(**{**_TINY, **kw})


def test_port_cost():
    assert _mig().port_cost_usd == 30000


def test_cash_flow_tiny_case():
    # (3 - 1) * 1000 = 2,000 USD saved a month from month 0; cumulative after t months (1-based) 2000 t - 30000
    cf = M.cash_flow(_mig())
    assert len(cf) == 24 and list(cf["month"]) == list(range(24))
    assert (cf["savings_usd"] == 2000).all() and (cf["rework_usd"] == 0).all() and (cf["p_live"] == 1).all()
    assert list(cf["cumulative_usd"]) == pytest.approx([2000 * t - 30000 for t in range(1, 25)])
    assert M.payback_months(_mig()) == 15               # 30000 / 2000 = 15 exactly; ">= 0" counts
    assert M.payback_months(_mig(volume_m_tokens_per_month=1100)) == 14   # ceil(30000 / 2200) = ceil(13.6)
    assert M.payback_months(_mig(volume_m_tokens_per_month=1100, horizon_months=13)) == math.inf


@pytest.mark.parametrize("k", [1, 3, 6])
def test_port_months_delay_savings(k):
    cf = M.cash_flow(_mig(port_months=k))
    assert (cf["savings_usd"].iloc[:k] == 0).all() and (cf["p_live"].iloc[:k] == 0).all()
    assert (cf["savings_usd"].iloc[k:] == 2000).all()
    assert M.payback_months(_mig(port_months=k)) == k + 15


def test_cash_flow_with_growth_and_churn_by_hand():
    # q = 0.1, k = 2, rework share 0.5: P(live) = 0.9^2 = 0.81 from month 2; rework 0.1*0.5*30000 = 1500
    # from month 1; volume 1000 * 1.1^t
    cf = M.cash_flow(_mig(growth_per_month=0.1, churn_per_month=0.1, rework_share=0.5, port_months=2))
    assert list(cf["volume_m_tokens"].iloc[:4]) == pytest.approx([1000, 1100, 1210, 1331])
    assert list(cf["p_live"].iloc[:4]) == pytest.approx([0, 0, 0.81, 0.81])
    assert list(cf["rework_usd"].iloc[:3]) == pytest.approx([0, 1500, 1500])
    assert cf["savings_usd"].iloc[3] == pytest.approx(2 * 1331 * 0.81)
    # cumulative after month 3: -30000 - 3*1500 + 2*0.81*(1210 + 1331) = -30383.58
    assert cf["cumulative_usd"].iloc[3] == pytest.approx(-30000 - 4500 + 1.62 * 2541)


def test_break_even_volume_by_hand():
    # no churn, port live at once: pays back within H months iff 2 * V * H >= 30000, V* = 15000 / H
    for h in (12, 24, 36):
        assert M.break_even_volume(_mig(horizon_months=h)) == pytest.approx(15000 / h, rel=1e-9)
    # with port_months 4 and H 24 only 20 months save: V* = 30000 / (2 * 20) = 750
    assert M.break_even_volume(_mig(port_months=4)) == pytest.approx(750, rel=1e-9)


_money = st.floats(0, 1e5)


@st.composite
def migrations(draw):
    old = draw(st.floats(0.01, 20))
    new = draw(st.floats(0, 0.999)) * old                  # cheaper: the regime the calculator is for
    return M.Migration(old, new, draw(st.floats(0, 1e6)), growth_per_month=draw(st.floats(-0.2, 0.5)),
                       engineer_months=draw(st.floats(0, 50)), usd_per_engineer_month=draw(_money),
                       validation_usd=draw(_money), tooling_usd=draw(_money),
                       port_months=draw(st.integers(0, 12)), churn_per_month=draw(st.floats(0, 1)),
                       rework_share=draw(st.floats(0, 2)), horizon_months=draw(st.integers(1, 60)))


@settings(max_examples=150, deadline=None)
@given(m=migrations(), factor=st.floats(1.0, 100.0))
def test_more_volume_never_delays_payback(m, factor):
    more = dataclasses.replace(m, volume_m_tokens_per_month=m.volume_m_tokens_per_month * factor)
    assert M.payback_months(more) <= M.payback_months(m)


@settings(max_examples=150, deadline=None)
@given(m=migrations(), extra=st.floats(0.0, 1.0))
def test_higher_churn_never_shortens_payback(m, extra):
    churnier = dataclasses.replace(m, churn_per_month=min(1.0, m.churn_per_month + extra))
    assert M.payback_months(churnier) >= M.payback_months(m)


@settings(max_examples=80, deadline=None)
@given(m=migrations())
def test_break_even_volume_property(m):
    assume(m.port_cost_usd > 1.0)
    v = M.break_even_volume(m)
    if math.isinf(v):       # no volume the search tries pays back (e.g. the port never goes live in time)
        assert M.payback_months(dataclasses.replace(m, volume_m_tokens_per_month=1e14)) == math.inf
        return
    assert M.payback_months(dataclasses.replace(m, volume_m_tokens_per_month=v)) <= m.horizon_months
    assert M.payback_months(dataclasses.replace(m, volume_m_tokens_per_month=0.99 * v)) == math.inf


@pytest.mark.parametrize("new", [3.0, 4.0])
def test_not_cheaper(new):
    m = _mig(usd_per_m_tokens_new=new, volume_m_tokens_per_month=1e9)
    assert M.break_even_volume(m) == math.inf
    assert M.payback_months(m) == math.inf
    v = M.verdict(m)
    assert not v["cheaper"] and v["break_even_m_tokens_per_month"] == math.inf and not v["volume_large_enough"]
    assert "not cheaper" in v["verdict"] and v["verdict"].startswith("do not migrate")


def test_verdicts():
    ok = M.verdict(_mig())
    assert ok["verdict"].startswith("migrate") and "15 months" in ok["verdict"]
    assert ok["stable"] and ok["cheaper"] and ok["volume_large_enough"]
    assert ok["payback_months"] == 15 and ok["port_cost_usd"] == 30000
    assert ok["yearly_spend_usd"] == pytest.approx(3 * 1000 * 12)
    assert ok["break_even_m_tokens_per_month"] == pytest.approx(625)     # 15000 / 24

    # unstable: 20 % churn a month against a 3-month port (0.6 >= 0.25), even at a huge volume
    un = M.verdict(_mig(churn_per_month=0.2, port_months=3, volume_m_tokens_per_month=1e9))
    assert not un["stable"] and un["verdict"].startswith("do not migrate yet")
    assert "changes too often" in un["verdict"] and "20%" in un["verdict"] and "3-month" in un["verdict"]

    # too small: 100M tokens a month saves 200 USD a month, needs 625M to repay 30,000 in 24 months
    small = M.verdict(_mig(volume_m_tokens_per_month=100))
    assert small["payback_months"] == math.inf and not small["volume_large_enough"]
    assert "does not pay back" in small["verdict"] and "24 months" in small["verdict"] and "625M" in small["verdict"]


@pytest.mark.parametrize("bad", [
    {"volume_m_tokens_per_month": -1}, {"usd_per_m_tokens_old": -0.1}, {"usd_per_m_tokens_new": math.nan},
    {"churn_per_month": 1.01}, {"churn_per_month": -0.1}, {"horizon_months": 0}, {"horizon_months": 12.0},
    {"port_months": 2.5}, {"port_months": -1}, {"port_months": True}, {"engineer_months": -1},
    {"growth_per_month": 5.0}, {"rework_share": -1}, {"volume_m_tokens_per_month": True},
    {"validation_usd": math.inf},
])
def test_migration_validation(bad):
    with pytest.raises(ValueError):
        _mig(**bad)


# -- 4. fleet ------------------------------------------------------------------------------------------
def _rates(table):
    return pd.DataFrame([{"workload": w, "pool": p, "tokens_per_s_per_chip": r} for (w, p), r in table.items()])


# 1,000 tokens/s per chip = 3.6e6 tokens per chip-hour
_CHEAP, _BIG = F.Pool("cheap", "h100", 10, 1.0), F.Pool("big", "h100", 1000, 3.0)
_R2 = _rates({("serve", "cheap"): 1000.0, ("serve", "big"): 1000.0})


def _serve(tokens):
    return F.FleetWorkload("serve", "batch_inference", "llama-3.1-8b", tokens)


def test_place_fills_the_cheap_pool_first():
    # cheap pool: 10 chips * 730 h = 7,300 chip-hours = 2.628e10 tokens. Demand 3.6e10: cheap full (7,300 USD),
    # the other 9.72e9 tokens = 2,700 chip-hours on the big pool at 3 USD = 8,100 USD -> 15,400 USD
    pl = F.place([_serve(3.6e10)], [_CHEAP, _BIG], rates=_R2)
    assert pl.feasible and pl.message == ""
    assert pl.usd_per_month == pytest.approx(15400, rel=1e-7)
    assert pl.hours.loc["serve", "cheap"] == pytest.approx(7300, rel=1e-7)
    assert pl.hours.loc["serve", "big"] == pytest.approx(2700, rel=1e-7)
    # under the cheap pool's capacity: all on it, 1.8e10 / 3.6e6 = 5,000 h = 5,000 USD
    pl = F.place([_serve(1.8e10)], [_BIG, _CHEAP], rates=_R2)
    assert pl.usd_per_month == pytest.approx(5000, rel=1e-7)
    assert pl.hours.loc["serve", "big"] == pytest.approx(0, abs=1e-6)


def test_place_compares_cost_per_token_not_per_hour():
    # fast: 2 USD/h at 2,000 tokens/s (0.278 USD per 1e6 tokens); slow: 1.5 USD/h at 1,000 (0.417). 7.2e9 tokens
    # = 1,000 chip-hours on fast = 2,000 USD (slow alone would be 2,000 h * 1.5 = 3,000 USD)
    ps = [F.Pool("slow", "h100", 1000, 1.5), F.Pool("fast", "h100", 1000, 2.0)]
    r = _rates({("serve", "slow"): 1000.0, ("serve", "fast"): 2000.0})
    pl = F.place([_serve(7.2e9)], ps, rates=r)
    assert pl.usd_per_month == pytest.approx(2000, rel=1e-7)
    assert pl.hours.loc["serve", "fast"] == pytest.approx(1000, rel=1e-7)
    only_slow = F.place([_serve(7.2e9)], ps, rates=r, allowed={("serve", "slow")})
    assert only_slow.usd_per_month == pytest.approx(3000, rel=1e-7)


def test_place_two_workloads_share_a_pool():
    # one pool of 10 chips (7,300 h); a needs 3.6e9 tokens at 1,000/s = 1,000 h; b needs 7.2e9 at 500/s = 4,000 h
    ws = [F.FleetWorkload("a", "pretrain", "m", 3.6e9), F.FleetWorkload("b", "research", "m", 7.2e9)]
    pl = F.place(ws, [_CHEAP], rates=_rates({("a", "cheap"): 1000.0, ("b", "cheap"): 500.0}))
    assert pl.usd_per_month == pytest.approx(5000, rel=1e-7)
    assert pl.hours.loc["b", "cheap"] == pytest.approx(4000, rel=1e-7)


def test_place_infeasible_when_demand_exceeds_capacity():
    # total capacity (7,300 + 730,000) h * 3.6e6 = 2.654e12 tokens < 3e12
    pl = F.place([_serve(3e12)], [_CHEAP, _BIG], rates=_R2)
    assert not pl.feasible and pl.usd_per_month == math.inf and "capacity" in pl.message
    assert F.place([_serve(2.65e12)], [_CHEAP, _BIG], rates=_R2).feasible


def test_place_unservable_workload_is_named():
    ws = [_serve(1e9), F.FleetWorkload("odd job", "research", "m", 1e9)]
    r = _rates({("serve", "cheap"): 1000.0, ("serve", "big"): 1000.0, ("odd job", "cheap"): 0.0})
    pl = F.place(ws, [_CHEAP, _BIG], rates=r)
    assert not pl.feasible and pl.usd_per_month == math.inf and "odd job" in pl.message and "serve" not in pl.message
    # runnable only on a pool it is not allowed on
    r2 = _rates({("serve", "cheap"): 1000.0, ("odd job", "big"): 1000.0})
    pl = F.place(ws, [_CHEAP, _BIG], rates=r2, allowed={("serve", "cheap"), ("odd job", "cheap")})
    assert not pl.feasible and "odd job" in pl.message
    # a workload with no demand needs no pool
    ws0 = [_serve(1e9), F.FleetWorkload("odd job", "research", "m", 0.0)]
    assert F.place(ws0, [_CHEAP, _BIG], rates=r).usd_per_month == pytest.approx(1e9 / 3.6e6, rel=1e-7)


def test_place_zero_demand_nothing_allowed_costs_nothing():
    # BUG (reported): with no (workload, pool) pair to place, linprog gets an empty cost vector and raises
    pl = F.place([_serve(0.0)], [_CHEAP], rates=_R2, allowed=set())
    assert pl.feasible and pl.usd_per_month == 0


def test_place_errors():
    with pytest.raises(ValueError):
        F.place([], [_CHEAP], rates=_R2)
    with pytest.raises(ValueError):
        F.place([_serve(1.0)], [], rates=_R2)
    with pytest.raises(ValueError):
        F.FleetWorkload("x", "gaming", "m", 1.0)
    with pytest.raises(ValueError):
        F.FleetWorkload("x", "research", "m", -1.0)
    with pytest.raises(ValueError):
        F.Pool("p", "h100", 1.5, 1.0)
    with pytest.raises(ValueError):
        F.Pool("p", "h100", 8, 0.0)


@pytest.mark.parametrize("make", [
    lambda: F.Pool("p", "h100", 8, True),
    lambda: F.Pool("p", "h100", 8, math.inf),
    lambda: F.FleetWorkload("x", "interactive", "m", 1e9, True),
    lambda: F.FleetWorkload("x", "research", "m", math.inf),
])
def test_fleet_rejects_bools_and_infinities(make):
    # BUG (reported): all four are accepted (True as 1, inf as a number)
    with pytest.raises(ValueError):
        make()


# random small fleets with explicit rates
@st.composite
def fleets(draw):
    nw, np_ = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    # demand > 0: zero demand with no runnable pair trips the empty-LP bug tested above
    ws = [F.FleetWorkload(f"w{i}", "batch_inference", "m", draw(st.floats(1.0, 1e11))) for i in range(nw)]
    ps = [F.Pool(f"p{j}", "h100", draw(st.integers(0, 50)), draw(st.floats(0.1, 20))) for j in range(np_)]
    rate = st.one_of(st.just(0.0), st.floats(10, 5000))
    r = _rates({(w.name, p.name): draw(rate) for w in ws for p in ps})
    return ws, ps, r


def _le(a, b):
    """a <= b with a little LP tolerance; inf (infeasible) compares as usual."""
    return a <= b or a == pytest.approx(b, rel=1e-7, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(fl=fleets(), factor=st.floats(1.0, 10.0))
def test_more_demand_never_lowers_cost(fl, factor):
    ws, ps, r = fl
    more = [dataclasses.replace(w, tokens_per_month=w.tokens_per_month * factor) for w in ws]
    assert _le(F.place(ws, ps, r).usd_per_month, F.place(more, ps, r).usd_per_month)


@settings(max_examples=100, deadline=None)
@given(fl=fleets(), data=st.data())
def test_restricting_allowed_never_lowers_cost(fl, data):
    ws, ps, r = fl
    pairs = [(w.name, p.name) for w in ws for p in ps]
    subset = set(data.draw(st.lists(st.sampled_from(pairs), unique=True, min_size=1)))
    full = F.place(ws, ps, r)
    assert F.place(ws, ps, r, allowed=set(pairs)).usd_per_month == pytest.approx(full.usd_per_month, rel=1e-9)
    assert _le(full.usd_per_month, F.place(ws, ps, r, allowed=subset).usd_per_month)


def _example_rates(target, gpu_base, tpu_base, gpu_limit, tpu_limit, lpu):
    """Hand-made rates for example_fleet's names: the interactive rate on GPU and TPU falls linearly
    with the per-user target and is 0 past a limit; the LPU's stays flat."""
    ws, ps = F.example_fleet(target)
    fixed = {"pre-training": (400.0, 600.0, 0.0), "fine-tuning": (3000.0, 4000.0, 0.0),
             "batch inference": (1500.0, 1200.0, 300.0), "research": (3000.0, 4000.0, 0.0)}
    inter = (gpu_base * max(0.0, 1 - target / gpu_limit), tpu_base * max(0.0, 1 - target / tpu_limit), lpu)
    table = {}
    for w in ws:
        for p, v in zip(ps, fixed.get(w.name, inter)):
            table[(w.name, p.name)] = v
    return ws, ps, _rates(table)


@settings(max_examples=40, deadline=None)
@given(targets=st.lists(st.floats(1, 400), min_size=2, max_size=5, unique=True),
       gpu_base=st.floats(100, 3000), tpu_base=st.floats(100, 3000), gpu_limit=st.floats(50, 500),
       tpu_limit=st.floats(50, 500), lpu=st.one_of(st.just(0.0), st.floats(50, 1000)))
def test_tighter_target_never_lowers_cost_hand_rates(targets, gpu_base, tpu_base, gpu_limit, tpu_limit, lpu):
    costs = [F.place(*_example_rates(t, gpu_base, tpu_base, gpu_limit, tpu_limit, lpu)).usd_per_month
             for t in sorted(targets)]
    assert all(_le(a, b) for a, b in itertools.pairwise(costs))


def test_compare_strategies_hand_rates():
    ws, ps, r = _example_rates(100.0, 2000.0, 1500.0, 300.0, 200.0, 500.0)
    df = F.compare_strategies(ws, ps, r)
    assert list(df["strategy"]) == list(F.STRATEGIES) and len(df) == len(F.STRATEGIES)
    assert df["feasible"].all()
    least = df.set_index("strategy").loc["least cost (any pool)", "usd_per_month"]
    assert all(_le(least, c) for c in df["usd_per_month"])
    # all on GPUs by hand: every workload on the 10.8 USD/h GPU pool (4096 * 730 = 2,990,080 h available)
    gpu_rate = {"pre-training": 400.0, "fine-tuning": 3000.0, "batch inference": 1500.0,
                "interactive inference": 2000.0 * (1 - 100 / 300), "research": 3000.0}
    hours = sum(w.tokens_per_month / (gpu_rate[w.name] * 3600) for w in ws)
    assert hours < 4096 * 730
    assert df.set_index("strategy").loc["all on GPUs", "usd_per_month"] == pytest.approx(10.8 * hours, rel=1e-7)


def test_example_fleet_with_the_models():
    """Runs the training and inference models (the only test here that does)."""
    costs, rates = {}, {}
    for target in (32, 64, 128, 256):
        ws, ps = F.example_fleet(target)
        rates[target] = F.default_rates(ws, ps)
        pl = F.place(ws, ps, rates[target])
        assert pl.feasible, pl.message
        costs[target] = pl.usd_per_month
    assert all(_le(costs[a], costs[b]) for a, b in itertools.pairwise((32, 64, 128, 256)))
    # the interactive rate per pool never rises as the target tightens
    inter = {t: r[r["workload"] == "interactive inference"].set_index("pool")["tokens_per_s_per_chip"]
             for t, r in rates.items()}
    for a, b in itertools.pairwise((32, 64, 128, 256)):
        assert (inter[b] <= inter[a] + 1e-9).all()
    ws, ps = F.example_fleet(128)
    df = F.compare_strategies(ws, ps, rates[128])
    assert len(df) == len(F.STRATEGIES) and list(df["strategy"]) == list(F.STRATEGIES)
    assert all(_le(df["usd_per_month"].min(), c) for c in df["usd_per_month"])
    assert df.set_index("strategy").loc["least cost (any pool)", "usd_per_month"] == df["usd_per_month"].min()
    # research kept on GPUs: never cheaper than the unconstrained placement
    assert _le(costs[128], df.set_index("strategy").loc["least cost (any pool)", "usd_per_month"])


def test_a_pool_without_chips_hosts_nothing():
    # found by test_restricting_allowed_never_lowers_cost: with 0 chips everywhere, the LP's 1e-7 feasibility
    # tolerance "placed" 1 token a month (1e-7 chip-hours) on one pool when only that pool was allowed, and called
    # the unrestricted problem infeasible
    ws = [F.FleetWorkload("w0", "batch_inference", "m", 1.0)]
    ps = [F.Pool("p0", "h100", 0, 1.0), F.Pool("p1", "h100", 0, 1.0)]
    r = _rates({("w0", "p0"): 2778.0, ("w0", "p1"): 10.0})
    for allowed in (None, {("w0", "p0")}):
        pl = F.place(ws, ps, r, allowed=allowed)
        assert not pl.feasible and pl.usd_per_month == math.inf and "with chips" in pl.message
    # one chip is plenty: 1 token at 2,778 tokens/s is 1e-7 chip-hours, USD 1e-7 at USD 1 an hour
    pl = F.place(ws, [dataclasses.replace(ps[0], chips=1), ps[1]], r)
    assert pl.feasible and pl.usd_per_month == pytest.approx(1 / (2778.0 * 3600), rel=1e-6)
