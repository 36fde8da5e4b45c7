"""Training throughput and what it costs: tokens/s per chip, USD per token, price-performance.

Model FLOPs utilisation (MFU, PaLM arXiv:2204.02311 App. B) is the fraction of a chip's peak
that the model's own FLOPs use:

    MFU = tokens_per_s · C_train / P,   so   tokens_per_s = MFU · P / C_train

with ``C_train`` the training FLOPs per token (:meth:`Model.flops_per_token`, 6N + 12·L·H·d_h·s)
and ``P`` the dense peak at the training precision. The cost of a token is the chip's price per
second over its token rate:

    USD_per_token = price_usd_per_s / tokens_per_s

Worked number: Llama 3.1 70B at s = 4096 needs C_train = 4.49e11 FLOP/token; on an H100 at 40 %
MFU that is 0.40 · 989.4e12 / 4.49e11 = 881 tokens/s; at USD 10.8/h = 3.0e-3 USD/s this is
3.0e-3 / 881 · 1e6 = USD 3.41 per million tokens.

Here MFU is an input (a slider). Predicting MFU from the parallel layout is the training issue's
job; this module only turns an MFU into tokens and dollars, and back.

**Owning against renting** (:func:`own_cost_per_hour`, :func:`rent_or_own`): capex as an annuity over
the lifetime, power × load share × PUE × electricity price, overheads (a share of capex plus staff),
all over the useful hours (utilisation × 8,760 per year); renting is the price per chip-hour over
utilisation. Inputs in ``data/tco.toml`` are estimates, not published prices. :func:`tornado` shows
which input moves a result most.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from accelbook.specs.chips import Chip
from accelbook.specs.models import Model


def _fraction(name: str, x: float) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not (math.isfinite(x) and 0 < x <= 1):
        raise ValueError(f"{name} must be a fraction in (0, 1], got {x!r}")
    return float(x)


def _price(chip: Chip, price_usd_per_hour: float | None) -> float:
    """USD per chip-second: the override if given, else the catalogue's list price."""
    if price_usd_per_hour is not None:
        if not (math.isfinite(price_usd_per_hour) and price_usd_per_hour > 0):
            raise ValueError(f"price must be > 0 USD/h, got {price_usd_per_hour!r}")
        return price_usd_per_hour / 3600.0
    if chip.price_usd_per_s is None:
        raise ValueError(f"{chip.name} has no published price per chip-hour; give one")
    return chip.price_usd_per_s


def training_tokens_per_s(model: Model, chip: Chip, mfu: float, seq_len: int = 4096,
                          precision: str = "bf16") -> float:
    """Training tokens/s per chip: ``MFU · P / C_train`` (tokens/s)."""
    return _fraction("mfu", mfu) * chip.peak_flop_s(precision) / model.flops_per_token(seq_len, training=True)


def implied_mfu(tokens_per_s: float, model: Model, chip: Chip, seq_len: int = 4096,
                precision: str = "bf16") -> float:
    """MFU implied by a measured training rate: ``tokens_per_s · C_train / P``."""
    if not tokens_per_s > 0:
        raise ValueError(f"tokens_per_s must be > 0, got {tokens_per_s!r}")
    return tokens_per_s * model.flops_per_token(seq_len, training=True) / chip.peak_flop_s(precision)


def implied_params(tokens_per_s: float, mfu: float, chip: Chip, precision: str = "bf16") -> float:
    """Parameters N that a (tokens/s, MFU) pair implies on ``chip`` with C ≈ 6N: ``MFU·P / (6·tokens/s)``."""
    if not tokens_per_s > 0:
        raise ValueError(f"tokens_per_s must be > 0, got {tokens_per_s!r}")
    return _fraction("mfu", mfu) * chip.peak_flop_s(precision) / (6.0 * tokens_per_s)


def usd_per_token(tokens_per_s: float, chip: Chip, price_usd_per_hour: float | None = None) -> float:
    """USD per token: ``price_usd_per_s / tokens_per_s``."""
    if not tokens_per_s > 0:
        raise ValueError(f"tokens_per_s must be > 0, got {tokens_per_s!r}")
    return _price(chip, price_usd_per_hour) / tokens_per_s


def peak_flop_per_usd(chip: Chip, precision: str = "bf16", price_usd_per_hour: float | None = None) -> float:
    """Peak FLOPs bought per dollar: ``P / price_usd_per_s`` (FLOP/USD). Price-performance at MFU = 1."""
    return chip.peak_flop_s(precision) / _price(chip, price_usd_per_hour)


def training_cost_table(model: Model, chips: list[Chip], mfu: float, seq_len: int = 4096,
                        precision: str = "bf16", price_scale: float = 1.0,
                        train_tokens: float = 1e12) -> tuple[pd.DataFrame, list[str]]:
    """Tokens/s per chip, USD per million tokens and chip-hours to train ``train_tokens`` tokens.

    Chips without a published price or peak at ``precision`` are left out; their names and the
    reason come back as the second element so a notebook can say so.
    """
    if not (math.isfinite(price_scale) and price_scale > 0):
        raise ValueError(f"price_scale must be > 0, got {price_scale!r}")
    if not (math.isfinite(train_tokens) and train_tokens > 0):
        raise ValueError(f"train_tokens must be > 0, got {train_tokens!r}")
    rows, skipped = [], []
    for chip in chips:
        if precision not in chip.peak_dense_flop_s:
            skipped.append(f"{chip.name}: no published dense {precision} peak")
            continue
        if chip.price_usd_per_s is None:
            skipped.append(f"{chip.name}: no published price")
            continue
        tps = training_tokens_per_s(model, chip, mfu, seq_len, precision)
        price_h = chip.price_usd_per_hour * price_scale
        usd_tok = usd_per_token(tps, chip, price_h)
        chip_s = train_tokens / tps
        rows.append({
            "chip": chip.name, "kind": chip.kind, "tokens_per_s_per_chip": tps,
            "usd_per_million_tokens": usd_tok * 1e6, "price_usd_per_hour": price_h,
            "chip_hours": chip_s / 3600.0, "train_cost_usd": usd_tok * train_tokens,
            "peak_flop_per_usd": peak_flop_per_usd(chip, precision, price_h),
        })
    return pd.DataFrame(rows), skipped


def flop_accounting_table(path=None) -> pd.DataFrame:
    """Which FLOPs-per-token convention does each published report use?

    For reports that give both model TFLOP/s and tokens/s per chip, the FLOPs per token they
    counted is ``C_reported = TFLOP/s / tokens/s``. It is compared with accelbook's ``C_train``
    counted two ways: full attention (PaLM's 6N + 12·L·H·d_h·s) and causal attention (half the
    attention term). The convention whose error is smaller is the report's. MFU figures from
    reports with different conventions are not comparable until converted.
    """
    from pathlib import Path

    from accelbook.specs.chips import get_chip
    from accelbook.specs.loader import DATA_DIR, check_keys, load_sources, read_table_file
    from accelbook.specs.models import get_model

    path = Path(path) if path is not None else DATA_DIR / "published_runs.toml"
    sources = load_sources()
    rows = []
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required={"model", "chip", "seq_len", "reported_model_tflop_s",
                                            "reported_tokens_per_s", "src"}, optional={"note"})
        m, c = get_model(e["model"]), get_chip(e["chip"])
        c_rep = e["reported_model_tflop_s"] * 1e12 / e["reported_tokens_per_s"]
        full = m.flops_per_token(e["seq_len"], training=True)
        causal = m.flops_per_token(e["seq_len"], training=True, causal=True)
        err_full, err_causal = full / c_rep - 1, causal / c_rep - 1
        rows.append({
            "run": rid, "model": m.name, "chip": c.name, "seq_len": e["seq_len"],
            "reported_flop_per_token": c_rep, "full_attention_flop_per_token": full,
            "causal_flop_per_token": causal, "error_full": err_full, "error_causal": err_causal,
            "convention": "causal" if abs(err_causal) < abs(err_full) else "full attention",
            "source": sources[e["src"]].title,
        })
    return pd.DataFrame(rows)


# -- owning versus renting: total cost of ownership --------------------------------------------------------
_TCO_DEFAULT_KEYS = {"lifetime_years_count": "lifetime_years", "cost_of_capital_count": "cost_of_capital",
                     "pue_count": "pue", "electricity_usd_per_kwh_count": "electricity_usd_per_kwh",
                     "load_power_share_count": "load_power_share", "overhead_share_count": "overhead_share",
                     "staff_usd_per_chip_year_count": "staff_usd_per_chip_year"}


def tco_inputs() -> dict:
    """The calculator's defaults and purchase prices from ``data/tco.toml`` (all estimates)."""
    from accelbook.specs.loader import DATA_DIR, CatalogueError, load_sources, parse_quantity, read_table_file

    path = DATA_DIR / "tco.toml"
    raw = read_table_file(path)
    sources = load_sources()
    out = {}
    for key, name in _TCO_DEFAULT_KEYS.items():
        if key not in raw.get("defaults", {}):
            raise CatalogueError(path, "defaults", key, "required key is missing")
        out[name] = parse_quantity(path, "defaults", key, raw["defaults"][key], "count", sources, allow_zero=True).value
    out["purchase_usd"] = {cid: parse_quantity(path, "purchase_usd", cid, q, "count", sources).value
                           for cid, q in raw.get("purchase_usd", {}).items()}
    return out


def _nonneg(name, v) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a number >= 0, got {v!r}")
    return float(v)


def own_cost_per_hour(purchase_usd: float, tdp_w: float, lifetime_years: float = 4.0, cost_of_capital: float = 0.08,
                      pue: float = 1.2, electricity_usd_per_kwh: float = 0.08, load_power_share: float = 0.75,
                      overhead_share: float = 0.25, staff_usd_per_chip_year: float = 1500.0,
                      utilisation: float = 1.0) -> dict:
    """Cost of an owned chip per hour of useful work (USD), and its parts.

    capex per year = purchase · r / (1 - (1+r)^-n) (an annuity; purchase / n at r = 0); power per
    year = TDP · load share · PUE · 8,760 h · price per kWh; overheads = overhead share · capex per
    year + staff. The yearly total over ``utilisation`` · 8,760 useful hours.
    """
    p, tdp = _nonneg("purchase_usd", purchase_usd), _nonneg("tdp_w", tdp_w)
    n = _nonneg("lifetime_years", lifetime_years)
    if n <= 0:
        raise ValueError(f"lifetime_years must be > 0, got {lifetime_years!r}")
    r = _nonneg("cost_of_capital", cost_of_capital)
    u = _fraction("utilisation", utilisation)
    if _nonneg("pue", pue) < 1:
        raise ValueError(f"pue must be >= 1 (1 = no overhead), got {pue!r}")
    capex = p / n if r == 0 else p * r / (1 - (1 + r) ** -n)
    power = tdp * _fraction("load_power_share", load_power_share) * pue * 8760 / 1000 * _nonneg(
        "electricity_usd_per_kwh", electricity_usd_per_kwh)
    over = _nonneg("overhead_share", overhead_share) * capex + _nonneg("staff_usd_per_chip_year", staff_usd_per_chip_year)
    hours = u * 8760
    return {"usd_per_hour": (capex + power + over) / hours, "capex_usd_per_hour": capex / hours,
            "power_usd_per_hour": power / hours, "overhead_usd_per_hour": over / hours,
            "usd_per_year": capex + power + over}


def rent_cost_per_hour(price_usd_per_hour: float, utilisation: float = 1.0) -> float:
    """Cost of a rented (reserved) chip per hour of useful work: price / utilisation."""
    return _nonneg("price_usd_per_hour", price_usd_per_hour) / _fraction("utilisation", utilisation)


def rent_or_own(chip: Chip | str, tokens_per_s_per_chip: float, utilisation: float = 0.7, **own) -> pd.DataFrame:
    """USD per hour and per million tokens, owned against rented at the catalogue price, for one chip.
    ``own`` overrides the ownership inputs (``purchase_usd``, ``pue``...); defaults from data/tco.toml."""
    from accelbook.specs.chips import get_chip

    c = chip if isinstance(chip, Chip) else get_chip(chip)
    if isinstance(tokens_per_s_per_chip, bool) or not (isinstance(tokens_per_s_per_chip, numbers.Real)
                                                       and math.isfinite(tokens_per_s_per_chip) and tokens_per_s_per_chip > 0):
        raise ValueError(f"tokens_per_s_per_chip must be > 0, got {tokens_per_s_per_chip!r}")
    inp = tco_inputs()
    kw = {k: v for k, v in inp.items() if k != "purchase_usd"}
    kw.update(own)
    purchase = kw.pop("purchase_usd", inp["purchase_usd"].get(c.id))
    rows = []
    if purchase is not None and c.tdp_w is not None:
        o = own_cost_per_hour(purchase, c.tdp_w, utilisation=utilisation, **kw)
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
