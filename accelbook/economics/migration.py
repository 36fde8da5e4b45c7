"""When does moving a workload to other hardware (an ASIC, a TPU) pay for itself?

The second article asks three questions: is the workload stable, is the volume large enough, is the
spend large enough to repay the switch. As a calculator, month by month over a horizon:

- volume ``V(t) = V0·(1 + g)^t`` million tokens in month t (t = 0, 1, ...);
- savings in month t: ``(c_old - c_new)·V(t)`` once the port is live (after ``port_months``);
- the port costs ``M`` = engineering months × cost per engineer-month + validation + tooling, paid up
  front;
- model churn: each month, with probability ``q``, the model changes and the port must be redone at
  ``rework_share·M`` (a fraction of the first port's cost), and savings pause for ``port_months``.
  The calculator uses the expectation: month t's savings are weighted by the chance the port is
  live, and each month adds ``q·rework_share·M`` of expected rework.

Payback is the first month the expected cumulative net reaches zero; the break-even volume is the
smallest V0 that pays back within the horizon (found by bisection: payback never gets later as
the volume grows). The verdict names the question that fails first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from accelbook.checks import at_most, real, whole

MAX_HORIZON_MONTHS = 1200


@dataclass(frozen=True)
class Migration:
    """The calculator's inputs (module docstring): costs in USD per million tokens, volume in million
    tokens per month, the port's cost in engineer-months and USD, times in whole months."""

    usd_per_m_tokens_old: float       # current cost per million tokens
    usd_per_m_tokens_new: float       # on the new hardware
    volume_m_tokens_per_month: float  # V0, million tokens per month
    growth_per_month: float = 0.0     # g
    engineer_months: float = 12.0
    usd_per_engineer_month: float = 25000.0
    validation_usd: float = 100000.0
    tooling_usd: float = 50000.0
    port_months: int = 3              # months before the port serves traffic (and after each rework)
    churn_per_month: float = 0.05     # q: chance per month that the model changes
    rework_share: float = 0.5         # a re-port costs this share of the first
    horizon_months: int = 36

    def __post_init__(self):
        for f in ("usd_per_m_tokens_old", "usd_per_m_tokens_new", "volume_m_tokens_per_month", "engineer_months",
                  "usd_per_engineer_month", "validation_usd", "tooling_usd"):
            real(f, getattr(self, f))
        real("growth_per_month", self.growth_per_month, -0.5, 2.0)
        real("churn_per_month", self.churn_per_month, 0.0, 1.0)
        real("rework_share", self.rework_share, 0.0, 10.0)
        whole("port_months", self.port_months, lo=0)
        whole("horizon_months", self.horizon_months, lo=1)
        # a horizon past a century of months is no business plan, and its cash-flow arrays (and the break-even
        # search over them) would take seconds to minutes
        at_most("horizon_months", self.horizon_months, MAX_HORIZON_MONTHS,
                "accelbook.economics.migration.MAX_HORIZON_MONTHS")

    @property
    def port_cost_usd(self) -> float:
        return self.engineer_months * self.usd_per_engineer_month + self.validation_usd + self.tooling_usd


def _flows(m: Migration, volume: float) -> dict:
    """:func:`cash_flow`'s columns (arrays) with the starting volume ``volume`` in place of ``m``'s."""
    t = np.arange(m.horizon_months)
    vol = volume * (1 + m.growth_per_month) ** t
    q, k = m.churn_per_month, m.port_months
    # P(live at t): past the first port, and no churn in the last k months (each churn restarts a port)
    live = np.where(t >= k, (1 - q) ** np.minimum(t, k), 0.0)
    save = (m.usd_per_m_tokens_old - m.usd_per_m_tokens_new) * vol * live
    rework = np.where(t >= 1, q * m.rework_share * m.port_cost_usd, 0.0)
    net = save - rework
    net[0] -= m.port_cost_usd
    return {"month": t, "volume_m_tokens": vol, "p_live": live, "savings_usd": save,
            "rework_usd": rework, "net_usd": net, "cumulative_usd": np.cumsum(net)}


def cash_flow(m: Migration) -> pd.DataFrame:
    """Expected monthly cash flow: volume, P(port live), savings, rework, cumulative net (USD)."""
    return pd.DataFrame(_flows(m, m.volume_m_tokens_per_month))


def _payback(m: Migration, volume: float) -> float:
    """:func:`payback_months` of ``m`` started at ``volume`` (the bisection's inner step: no frame, no copy of m)."""
    hit = np.flatnonzero(_flows(m, volume)["cumulative_usd"] >= 0)
    return float(hit[0] + 1) if len(hit) else math.inf


def payback_months(m: Migration) -> float:
    """First month (1-based count of months elapsed) at which the expected cumulative net is >= 0;
    ``inf`` if not within the horizon."""
    return _payback(m, m.volume_m_tokens_per_month)


def break_even_volume(m: Migration) -> float:
    """Smallest starting volume (million tokens per month) that pays back within the horizon;
    ``inf`` if no volume does (the new hardware is not cheaper per token)."""
    if m.usd_per_m_tokens_new >= m.usd_per_m_tokens_old:
        return math.inf
    lo, hi = 0.0, max(1.0, m.volume_m_tokens_per_month)
    while _payback(m, hi) == math.inf:
        hi *= 2
        if hi > 1e15:
            return math.inf
    for _ in range(60):
        mid = (lo + hi) / 2
        if _payback(m, mid) == math.inf:
            lo = mid
        else:
            hi = mid
    return hi


def verdict(m: Migration) -> dict:
    """The three questions answered, payback, break-even volume, and a one-line verdict."""
    pb = payback_months(m)
    be = break_even_volume(m)
    stable = m.churn_per_month * m.port_months < 0.25          # under a 1-in-4 chance of churn during a port
    cheaper = m.usd_per_m_tokens_new < m.usd_per_m_tokens_old
    big_enough = m.volume_m_tokens_per_month >= be
    spend = m.usd_per_m_tokens_old * m.volume_m_tokens_per_month * 12
    if not cheaper:
        text = "do not migrate: the new hardware is not cheaper per token"
    elif not stable:
        text = (f"do not migrate yet: the model changes too often ({m.churn_per_month:.0%} a month against a "
                f"{m.port_months}-month port)")
    elif pb == math.inf:
        text = (f"do not migrate: at {m.volume_m_tokens_per_month:,.0f}M tokens a month the port does not pay back "
                f"in {m.horizon_months} months; it needs {be:,.0f}M")
    else:
        text = f"migrate: pays back in {pb:.0f} months (break-even volume {be:,.0f}M tokens a month)"
    return {"payback_months": pb, "break_even_m_tokens_per_month": be, "stable": stable, "cheaper": cheaper,
            "volume_large_enough": big_enough, "yearly_spend_usd": spend, "port_cost_usd": m.port_cost_usd,
            "verdict": text}
