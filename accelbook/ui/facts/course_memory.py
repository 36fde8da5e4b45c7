"""Facts of ``instructor/misconceptions.md``'s entry on memory units (keys ``course.*``): the figures notebook 00's
pitfall computes, read from the device-reported capacities in ``data/chips.toml``; see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.specs.chips import get_chip
from accelbook.ui.facts import fact
from accelbook.ui.facts import value as _nb_value

# -- instructor/misconceptions.md, 00: "a memory's GB is 10^9 bytes" (the figures notebook 00's pitfall computes) --

#: the GPUs whose capacity in data/chips.toml is a published device report (nvidia-smi, rocm-smi) of HBM
_HBM_DEVICE_REPORTED = ("h100", "a100", "h200", "b200", "mi300x")


def _decimal_shortfalls() -> list[float]:
    """How far each printed "GB" figure read as 10^9 bytes falls below the device's total (the smallest
    alternative kept beside the capacity is the decimal reading)."""
    out = []
    for cid in _HBM_DEVICE_REPORTED:
        c = get_chip(cid)
        out.append(1 - min(v for v, _, _ in c.provenance["hbm_bytes"].alternatives) / c.hbm_bytes)
    return out


@fact("course.gib_over_gb_pct")
def gib_over_gb_pct() -> str:
    return _nb_value("nb00.gib_over_gb_pct")


@fact("course.v5p8_hbm_gib")
def v5p8_hbm_gib() -> str:
    return _nb_value("nb00.v5p8_hbm_gib")


@fact("course.v5p8_hbm_gb")
def v5p8_hbm_gb() -> str:
    return _nb_value("nb00.v5p8_hbm_gb")


@fact("course.h100_printed_gb")
def h100_printed_gb() -> str:
    return _nb_value("nb00.h100_printed_gb")


@fact("course.h100_hbm_mib")
def h100_hbm_mib() -> str:
    return _nb_value("nb00.h100_hbm_mib")


@fact("course.h100_hbm_gb")
def h100_hbm_gb() -> str:
    return _nb_value("nb00.h100_hbm_gb")


@fact("course.h200_hbm_mib")
def h200_hbm_mib() -> str:
    return f"{get_chip('h200').hbm_bytes / 2**20:,.0f}"


@fact("course.mi300x_hbm_gib")
def mi300x_hbm_gib() -> str:
    return f"{get_chip('mi300x').hbm_bytes / 2**30:.2f}"


@fact("course.decimal_short_low_pct")
def decimal_short_low_pct() -> str:
    return f"{min(_decimal_shortfalls()) * 100:.1f}"


@fact("course.decimal_short_high_pct")
def decimal_short_high_pct() -> str:
    return f"{max(_decimal_shortfalls()) * 100:.1f}"


@fact("course.h100_max_batch")
def h100_max_batch() -> str:
    return _nb_value("nb00.h100_max_batch")


@fact("course.h100_max_batch_decimal")
def h100_max_batch_decimal() -> str:
    return _nb_value("nb00.h100_max_batch_decimal")
