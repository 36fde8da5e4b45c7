"""One power basis for every chip: the whole system's power per accelerator (``data/system_power.toml``).

A GPU's board TDP (700 W for an H100) leaves out the host CPUs, memory, NICs, NVSwitches and fans its
server needs; a CS-3's 23 kW is a whole system; TPU v4's 192 W is a measured chip figure. Tokens per kW
computed on those three bases compare different things. Here every chip gets the same basis:

``P_system = system maximum input power / accelerators in it``   (DGX H100: 10.2 kW / 8 = 1,275 W)

split into the accelerator's own ``TDP`` and a ``host`` share (``P_system - TDP``: CPUs, memory, NICs,
switches, fans), which a workload's activity does not reduce in this model. At the wall, times the site's
power usage effectiveness (PUE, :func:`default_pue`).

A chip with no published system figure scales its TDP by a measured system's ratio ``P_system / TDP``:
a sibling's (:data:`SYSTEM_BORROW`) or else the median of the measured ratios, and says so (``basis``).
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .catalogue import catalogue_cache, drops_measurement
from .chips import Chip, base_id, get_chip
from .loader import DATA_DIR, CatalogueError, Provenance, check_keys, load_sources, parse_quantity, read_table_file

#: a chip without its own system figure -> the measured system whose ratio (system / TDP) it borrows
SYSTEM_BORROW: Mapping[str, str] = MappingProxyType({"h800": "h100", "gb200": "b200"})


@dataclass(frozen=True)
class SystemPower:
    """Power per accelerator of the system ``chip_id`` runs in (W, maximum input power).

    ``accelerator_w``: the chip's own TDP (for a whole-system figure such as a CS-3, the system);
    ``host_w``: the rest of the system per accelerator (``system_w - accelerator_w``);
    ``basis``: ``"measured"`` (this chip's system is in the data), ``"borrowed from <id>"`` or
    ``"median ratio"`` (an estimate: the TDP times a measured system's ratio); ``provenance`` of the
    system figure used (None for the median)."""

    chip_id: str
    system_w: float
    accelerator_w: float
    basis: str
    provenance: Provenance | None
    note: str = ""

    @property
    def host_w(self) -> float:
        return self.system_w - self.accelerator_w

    @property
    def ratio(self) -> float:
        return self.system_w / self.accelerator_w

    @property
    def is_estimate(self) -> bool:
        return self.basis != "measured"

    def text(self) -> str:
        how = "published system figure" if self.basis == "measured" else f"ESTIMATE: TDP x {self.ratio:.2f}, {self.note}"
        if self.host_w <= 0:
            return f"{self.system_w:,.0f} W per accelerator, a whole-system figure ({how})"
        return (f"{self.system_w:,.0f} W per accelerator for the whole system ({self.accelerator_w:,.0f} W the "
                f"chip, {self.host_w:,.0f} W its share of host, network and fans; {how})")


@catalogue_cache(maxsize=4)
def load_system_power(path: Path | str | None = None) -> Mapping[str, SystemPower]:
    """Read ``system_power.toml`` (or ``path``): chip id -> measured :class:`SystemPower`, checking that the
    system per accelerator is at least the chip's own TDP."""
    path = Path(path) if path is not None else DATA_DIR / "system_power.toml"
    sources = load_sources()
    out = {}
    for cid, e in read_table_file(path).items():
        check_keys(path, cid, e, required={"system_kw", "accelerators"}, optional=set())
        q = parse_quantity(path, cid, "system_kw", e["system_kw"], "kw", sources)
        n = parse_quantity(path, cid, "accelerators", e["accelerators"], "count", sources).value
        if n != int(n):
            raise CatalogueError(path, cid, "accelerators", f"must be a whole number, got {n}")
        try:
            chip = get_chip(cid)
        except KeyError:
            raise CatalogueError(path, cid, None, "not a chip of the catalogue") from None
        per = q.value / n
        own = chip.tdp_w if chip.tdp_w is not None else per
        if per < own * (1 - 1e-9) and drops_measurement(path, chip, f"a TDP of {own:,.0f} W, above the "
                                                                     f"{per:,.0f} W per accelerator measured on {chip.id!r}"):
            continue
        if per < own * (1 - 1e-9):
            raise CatalogueError(path, cid, "system_kw", f"{per:,.0f} W per accelerator is below the chip's "
                                 f"own {own:,.0f} W")
        out[chip.id] = SystemPower(chip.id, per, min(own, per), "measured", q.provenance, q.provenance.note)
    return MappingProxyType(out)


def median_ratio() -> float:
    """The median over measured systems of (system power per accelerator) / (chip TDP): 1.82 for the DGX
    A100, H100, H200 and B200 in ``data/system_power.toml`` (whole-system figures such as a CS-3, ratio 1,
    are left out: they have no separate chip figure)."""
    ratios = [s.ratio for s in load_system_power().values() if s.host_w > 0]
    return statistics.median(ratios)


def system_power(chip: Chip | str) -> SystemPower | None:
    """The system power per accelerator of ``chip`` (a :class:`Chip` or an id), or None when the chip has
    no published TDP (nothing to scale). See the module docstring for the basis."""
    c = chip if isinstance(chip, Chip) else get_chip(chip)
    table = load_system_power()
    key = base_id(c)
    if key in table and (c.tdp_w is None or c.tdp_w == get_chip(key).tdp_w):
        return table[key]
    if c.tdp_w is None:
        return None
    sib = key if key in table else SYSTEM_BORROW.get(key)   # a what-if with its own TDP scales its base's ratio
    if sib is not None and sib in table:
        s = table[sib]
        return SystemPower(c.id, c.tdp_w * s.ratio, c.tdp_w, f"borrowed from {sib}", s.provenance,
                           f"{sib}'s system/TDP ratio")
    r = median_ratio()
    return SystemPower(c.id, c.tdp_w * r, c.tdp_w, "median ratio", None,
                       "no published system figure: the median system/TDP ratio of the measured DGX systems")


@functools.lru_cache(maxsize=1)
def default_pue() -> float:
    """The site's power usage effectiveness used when none is given: ``data/tco.toml`` [defaults] pue_count
    (an estimate, 1.2). Wall power = system power x PUE."""
    path = DATA_DIR / "tco.toml"
    raw = read_table_file(path)
    return parse_quantity(path, "defaults", "pue_count", raw["defaults"]["pue_count"], "count",
                          load_sources()).value
