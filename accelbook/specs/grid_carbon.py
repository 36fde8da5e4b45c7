"""Carbon intensity of electricity by grid region (``data/grid_carbon.toml``): grams of CO2e per joule.

A yearly average of the grid a site draws from, ``I`` (the file writes g/kWh; the loader turns it into
g/J, ``1 g/kWh = 1 / 3.6e6 g/J``). Each region says the year it describes and whether its figure was read
at the publisher (``status = "primary"``) or through a page quoting it (``"secondary"``); the status must
be the kind of its source in ``data/sources.toml``. Bases differ (lifecycle CO2e for Ember's figures,
direct CO2 for the EIA's), and each entry's note says which: compare regions of one basis.

Sources: Ember's yearly electricity data (via Statista and Our World in Data), the US EIA (2022), the
European Environment Agency (2018), RTE (France, 2023). See ``data/grid_carbon.toml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .catalogue import catalogue_cache
from .loader import (
    DATA_DIR,
    Catalogue,
    CatalogueError,
    Provenance,
    check_keys,
    load_sources,
    parse_quantity,
    read_table_file,
)

#: how a region's figure was read: at its publisher, or through a page quoting it
STATUSES = ("primary", "secondary")
J_PER_KWH = 3.6e6


@dataclass(frozen=True)
class GridCarbon:
    """One grid region's yearly average carbon intensity: ``g_co2e_per_j`` (g CO2e per joule generated),
    ``year`` it describes, ``status`` (primary or secondary), ``provenance`` (source, note, disagreeing
    published values in ``provenance.alternatives``)."""

    id: str
    name: str
    g_co2e_per_j: float
    year: int
    status: str
    provenance: Provenance
    aliases: tuple[str, ...] = ()

    @property
    def g_co2e_per_kwh(self) -> float:
        """The intensity in the unit grids publish it in (g CO2e per kWh)."""
        return self.g_co2e_per_j * J_PER_KWH


@catalogue_cache(maxsize=4)
def load_grid_carbon(path: Path | str | None = None) -> Catalogue:
    """Read ``grid_carbon.toml`` (or ``path``) into a :class:`Catalogue` of :class:`GridCarbon`, checking the
    key set, the year and that each ``status`` is its source's kind (a :class:`CatalogueError` naming the
    file, the region and the key otherwise)."""
    path = Path(path) if path is not None else DATA_DIR / "grid_carbon.toml"
    sources = load_sources()
    out = []
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required={"name", "year", "status", "intensity_g_kwh"}, optional=set())
        q = parse_quantity(path, rid, "intensity_g_kwh", e["intensity_g_kwh"], "g_kwh", sources)
        year = e["year"]
        if isinstance(year, bool) or not isinstance(year, int) or not 1990 <= year <= 2100:
            raise CatalogueError(path, rid, "year", f"must be a calendar year such as 2023, got {year!r}")
        if e["status"] not in STATUSES:
            raise CatalogueError(path, rid, "status", f"must be one of {STATUSES}, got {e['status']!r}")
        if e["status"] != q.provenance.kind:
            raise CatalogueError(path, rid, "status", f"says {e['status']!r} but its source "
                                 f"{q.provenance.source.id!r} is of kind {q.provenance.kind!r}")
        out.append(GridCarbon(rid, str(e["name"]), q.value, year, e["status"], q.provenance))
    return Catalogue.merge("grid region", out)


def grid_regions() -> tuple[GridCarbon, ...]:
    """Every region of ``data/grid_carbon.toml``, in file order."""
    return load_grid_carbon().items


def get_grid_carbon(region: str | GridCarbon) -> GridCarbon:
    """The region called ``region`` (an id such as ``"france"`` or a name such as ``"France"``, forgivingly);
    an :class:`~accelbook.specs.loader.UnknownNameError` listing the closest otherwise."""
    if isinstance(region, GridCarbon):
        return region
    return load_grid_carbon().get(region)
