"""Carbon per token and per training run: energy at the wall times the grid's carbon intensity.

Per million output tokens (inference):

``E_tok = P_wall · n / tokens_per_s``   (J per token; ``P_wall`` per chip at the wall, PUE included, from
:func:`accelbook.inference.estimate`: ``E_tok = 1000 / tokens_per_s_per_kw``)

``co2e_g_per_m = E_tok · 1e6 · I``   (g CO2e per million tokens; ``I`` in g per J)

Per training run:

``E_run = chip_hours · 3600 · P_system · PUE``   (J; ``P_system`` the whole system's rated power per
accelerator, :func:`accelbook.specs.system_power.system_power`, PUE :func:`~accelbook.specs.system_power.default_pue`)

``co2e_kg = E_run · I / 1000``

Worked number: an H100 in a DGX H100 (1,275 W per GPU), PUE 1.2, 1,000 chip-hours on a grid of 400 g/kWh
(``I = 400 / 3.6e6`` g/J): ``E_run = 1000 · 3600 · 1275 · 1.2 = 5.508e9 J`` (1,530 kWh), ``612 kg`` CO2e.

The training figure is an upper bound on the energy: the rated maximum input power, every hour (the TCO
calculator's load share is not applied). Both leave out the embodied carbon of making the chips and the
building, and a site's own power purchases (a market-based figure): this is the location-based figure
of the grid's yearly average (``data/grid_carbon.toml``; :mod:`accelbook.specs.grid_carbon`).
"""

from __future__ import annotations

import pandas as pd

from accelbook.checks import positive, real
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.grid_carbon import GridCarbon, get_grid_carbon, grid_regions
from accelbook.specs.system_power import default_pue, system_power


def energy_j_per_token(tokens_per_s_per_kw: float) -> float:
    """Energy per output token at the wall (J): ``E_tok = 1000 / tokens_per_s_per_kw`` (a kW is 1,000 J/s).

    ``tokens_per_s_per_kw``: output tokens/s per kW at the wall (an :class:`InferenceEstimate`'s
    ``tokens_per_s_per_kw``, PUE included)."""
    return 1e3 / positive("tokens_per_s_per_kw", tokens_per_s_per_kw)


def co2e_g_per_million_tokens(energy_j_per_token: float, g_co2e_per_j: float) -> float:
    """Grams of CO2e per million tokens: ``E_tok · 1e6 · I``.

    ``energy_j_per_token``: energy per token at the wall (J); ``g_co2e_per_j``: the grid's intensity ``I``
    (g CO2e per J, :attr:`GridCarbon.g_co2e_per_j`). Source of ``I``: ``data/grid_carbon.toml``."""
    return positive("energy_j_per_token", energy_j_per_token) * 1e6 * positive("g_co2e_per_j", g_co2e_per_j,
                                                                               allow_zero=True)


def training_co2e_kg(chip_hours: float, power_w: float, pue: float, g_co2e_per_j: float) -> float:
    """Kilograms of CO2e of a training run: ``chip_hours · 3600 · P · PUE · I / 1000``.

    ``chip_hours``: accelerator-hours of the run (h); ``power_w``: power per accelerator, the whole
    system's share (W); ``pue``: the site's power usage effectiveness (≥ 1); ``g_co2e_per_j``: the grid's
    intensity (g per J). Worked number in the module docstring (612 kg)."""
    e_run = positive("chip_hours", chip_hours, allow_zero=True) * 3600 * positive("power_w", power_w) \
        * real("pue", pue, lo=1.0, hi=3.0)
    return e_run * positive("g_co2e_per_j", g_co2e_per_j, allow_zero=True) / 1e3


def _regions(regions) -> list[GridCarbon]:
    if regions is None:
        return list(grid_regions())
    if isinstance(regions, (str, GridCarbon)):
        regions = [regions]
    return [get_grid_carbon(r) for r in regions]


def _row(g: GridCarbon) -> dict:
    return {"region": g.name, "year": g.year, "g_co2e_per_kwh": g.g_co2e_per_kwh, "status": g.status,
            "source": g.provenance.source.id}


def inference_carbon(tokens_per_s_per_kw: float, regions=None) -> pd.DataFrame:
    """One row per grid region: gCO2e per million output tokens of a layout that makes
    ``tokens_per_s_per_kw`` output tokens/s per kW at the wall (:func:`co2e_g_per_million_tokens`), with the
    region's intensity, its year, status and source. ``regions``: ids or names (default: every region)."""
    e_tok = energy_j_per_token(tokens_per_s_per_kw)
    return pd.DataFrame([{**_row(g), "energy_j_per_token": e_tok,
                          "g_co2e_per_million_tokens": co2e_g_per_million_tokens(e_tok, g.g_co2e_per_j)}
                         for g in _regions(regions)])


def training_carbon(chip: Chip | str, chip_hours: float, regions=None, pue: float | None = None) -> pd.DataFrame:
    """One row per grid region: tonnes of CO2e of ``chip_hours`` on ``chip`` (:func:`training_co2e_kg`) at
    the whole system's rated power per accelerator (:func:`~accelbook.specs.system_power.system_power`, its
    ``basis`` in the ``power_basis`` column) and ``pue`` (default :func:`default_pue`)."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    sp = system_power(c)
    if sp is None:
        raise ValueError(f"chip {c.name!r} publishes no power, so a training run's energy is unknown")
    pue = default_pue() if pue is None else pue
    return pd.DataFrame([{**_row(g), "power_w": sp.system_w, "power_basis": sp.basis, "pue": pue,
                          "t_co2e": training_co2e_kg(chip_hours, sp.system_w, pue, g.g_co2e_per_j) / 1e3}
                         for g in _regions(regions)])
