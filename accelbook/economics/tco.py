"""Owning against renting: the total cost of ownership of a chip per useful hour, and what moves it.

:func:`own_cost_per_hour`: capex as an annuity over the lifetime, power × load share × PUE ×
electricity price, overheads (a share of capex plus staff), all over the useful hours
(utilisation × 8,760 per year). :func:`rent_cost_per_hour`: the price per chip-hour over
utilisation. :func:`rent_or_own` puts the two side by side for one chip, per hour and per million
tokens; :func:`tornado` shows which input moves a result most.

Inputs in ``data/tco.toml`` (:func:`tco_inputs`) are estimates, not published prices.
"""

from __future__ import annotations

import copy
import functools
import os

import numpy as np
import pandas as pd

from accelbook.checks import fraction, instance, output, positive, real
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.loader import DATA_DIR, check_keys, load_sources, parse_quantity, read_table_file
from accelbook.specs.system_power import system_power

HOURS_PER_YEAR = 8760
#: the shortest and longest lifetime (years) a chip's capex is spread over: a month past a rental term, a
#: century past any data centre; outside, an annuity over 1e-30 years is not a cost anyone pays
LIFETIME_YEARS_RANGE = (0.1, 100.0)

# key in data/tco.toml's [defaults] -> argument of own_cost_per_hour
_TCO_DEFAULT_KEYS = {"lifetime_years_count": "lifetime_years", "cost_of_capital_count": "cost_of_capital",
                     "pue_count": "pue", "electricity_usd_per_kwh_count": "electricity_usd_per_kwh",
                     "load_power_share_count": "load_power_share", "overhead_share_count": "overhead_share",
                     "staff_usd_per_chip_year_count": "staff_usd_per_chip_year"}


def tco_inputs() -> dict:
    """The calculator's defaults and purchase prices from ``data/tco.toml`` (all estimates).

    Read once per version of the files (a slider move must not parse TOML again); each call gets
    its own copy, and an edited ``tco.toml`` or ``sources.toml`` is read again."""
    stamp = tuple(os.stat(DATA_DIR / name).st_mtime_ns for name in ("tco.toml", "sources.toml"))
    return copy.deepcopy(_read_tco_inputs(stamp))


@functools.lru_cache(maxsize=4)
def _read_tco_inputs(stamp: tuple) -> dict:
    """:func:`tco_inputs` as read when the files had modification times ``stamp``."""
    path = DATA_DIR / "tco.toml"
    raw = read_table_file(path)
    sources = load_sources()
    check_keys(path, None, raw, required={"defaults"}, optional={"purchase_usd"})
    check_keys(path, "defaults", raw["defaults"], required=set(_TCO_DEFAULT_KEYS), optional=set())
    out = {}
    for key, name in _TCO_DEFAULT_KEYS.items():
        out[name] = parse_quantity(path, "defaults", key, raw["defaults"][key], "count", sources, allow_zero=True).value
    out["purchase_usd"] = {cid: parse_quantity(path, "purchase_usd", cid, q, "count", sources).value
                           for cid, q in raw.get("purchase_usd", {}).items()}
    return out


def own_cost_per_hour(purchase_usd: float, tdp_w: float, lifetime_years: float = 4.0, cost_of_capital: float = 0.08,
                      pue: float = 1.2, electricity_usd_per_kwh: float = 0.08, load_power_share: float = 0.75,
                      overhead_share: float = 0.25, staff_usd_per_chip_year: float = 1500.0,
                      utilisation: float = 1.0) -> dict:
    """Cost of an owned chip per hour of useful work (USD), and its parts.

    capex per year = purchase · r / (1 - (1+r)^-n) (an annuity; purchase / n at r = 0); power per
    year = P · load share · PUE · 8,760 h · price per kWh; overheads = overhead share · capex per
    year + staff. The yearly total over ``utilisation`` · 8,760 useful hours.

    ``tdp_w`` is ``P``, the power per chip at full load (W). :func:`rent_or_own` and the notebooks pass the
    whole system's share per chip (:func:`accelbook.specs.system_power.system_power`: 1,275 W for an H100 in
    a DGX H100), the one basis every power figure of the workbook uses; a board TDP alone leaves out the
    host, network and fans. ``lifetime_years`` in :data:`LIFETIME_YEARS_RANGE` ([0.1, 100] years).
    """
    p = positive("purchase_usd", purchase_usd, allow_zero=True)
    tdp = positive("tdp_w", tdp_w, allow_zero=True)
    n = real("lifetime_years", lifetime_years, *LIFETIME_YEARS_RANGE)
    r = positive("cost_of_capital", cost_of_capital, allow_zero=True)
    u = fraction("utilisation", utilisation, zero_ok=False)
    pue = real("pue", pue, lo=1.0)    # 1 = no overhead
    capex = p / n if r == 0 else p * r / (1 - (1 + r) ** -n)
    load = fraction("load_power_share", load_power_share, zero_ok=False)
    power = tdp * load * pue * HOURS_PER_YEAR / 1000 * positive("electricity_usd_per_kwh", electricity_usd_per_kwh,
                                                                 allow_zero=True)
    over = (positive("overhead_share", overhead_share, allow_zero=True) * capex
            + positive("staff_usd_per_chip_year", staff_usd_per_chip_year, allow_zero=True))
    hours = u * HOURS_PER_YEAR
    output("own_cost_per_hour usd_per_year", capex + power + over)
    return {"usd_per_hour": (capex + power + over) / hours, "capex_usd_per_hour": capex / hours,
            "power_usd_per_hour": power / hours, "overhead_usd_per_hour": over / hours,
            "usd_per_year": capex + power + over}


def rent_cost_per_hour(price_usd_per_hour: float, utilisation: float = 1.0) -> float:
    """Cost of a rented (reserved) chip per hour of useful work: price / utilisation."""
    price = positive("price_usd_per_hour", price_usd_per_hour, allow_zero=True)
    return price / fraction("utilisation", utilisation, zero_ok=False)


def rent_or_own(chip: Chip | str, tokens_per_s_per_chip: float, utilisation: float = 0.7, **own) -> pd.DataFrame:
    """USD per hour and per million tokens, owned against rented at the catalogue price, for one chip.
    ``own`` overrides the ownership inputs (``purchase_usd``, ``pue``...); defaults from data/tco.toml.
    Power: the whole system's share per chip (:func:`accelbook.specs.system_power.system_power`)."""
    c = instance("chip", chip, Chip, get_chip)
    positive("tokens_per_s_per_chip", tokens_per_s_per_chip)
    inp = tco_inputs()
    kw = {k: v for k, v in inp.items() if k != "purchase_usd"}
    kw.update(own)
    purchase = kw.pop("purchase_usd", inp["purchase_usd"].get(c.id))
    rows = []
    sp = system_power(c)
    if purchase is not None and sp is not None:
        o = own_cost_per_hour(purchase, sp.system_w, utilisation=utilisation, **kw)
        rows.append({"option": "own", "usd_per_hour": o["usd_per_hour"],
                     "usd_per_million_tokens": o["usd_per_hour"] / 3600 / tokens_per_s_per_chip * 1e6,
                     "capex": o["capex_usd_per_hour"], "power": o["power_usd_per_hour"], "overheads": o["overhead_usd_per_hour"]})
    if c.price_usd_per_hour is not None:
        h = rent_cost_per_hour(c.price_usd_per_hour, utilisation)
        rows.append({"option": "rent", "usd_per_hour": h, "usd_per_million_tokens": h / 3600 / tokens_per_s_per_chip * 1e6,
                     "capex": np.nan, "power": np.nan, "overheads": np.nan})
    if not rows:
        raise ValueError(f"{c.name}: no purchase price estimate and no rental price; give purchase_usd=...")
    return pd.DataFrame(rows)


def tornado(fn, base: dict, ranges: dict) -> pd.DataFrame:
    """Sensitivity of ``fn(**inputs)`` (a number) to each input: for each ``name: (low, high)`` in
    ``ranges``, the output with that input at its low and at its high value, the others at ``base``.
    Rows sorted by swing (|high - low|), largest first: the bars of a tornado chart."""
    if not ranges:
        raise ValueError("give at least one input range, e.g. {'pue': (1.1, 1.6)}")
    y0 = fn(**base)
    rows = []
    for name, (lo, hi) in ranges.items():
        if name not in base:
            raise ValueError(f"{name!r} is not an input of the base case; have {', '.join(base)}")
        y_lo, y_hi = fn(**{**base, name: lo}), fn(**{**base, name: hi})
        rows.append({"input": name, "low": lo, "high": hi, "output_low": y_lo, "output_high": y_hi,
                     "swing": abs(y_hi - y_lo), "base_output": y0})
    return pd.DataFrame(rows).sort_values("swing", ascending=False).reset_index(drop=True)
