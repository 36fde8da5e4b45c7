"""The chip-design calculator's technology constants: ``data/chipdesign.toml`` read into :class:`Params`.

Each constant is written in the file with its unit in the key (``tflop_s_per_mm2``, ``pj_per_bit``)
and converted once here to SI, except areas, which stay in mm² and say so in the field name
(``flop_s_per_mm2``, ``hbm_j_per_byte``). Every value keeps its :class:`~accelbook.specs.loader.Provenance`;
most are round ESTIMATES calibrated once against the H100 (the ``[h100]`` reference split).
:meth:`Params.replace` makes a what-if copy whose changed values are sourced as what-ifs.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import pandas as pd

from accelbook.checks import fraction, positive
from accelbook.specs.loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    Source,
    check_keys,
    load_sources,
    parse_quantity,
    read_table_file,
)

# (section, key in the TOML) -> (Params field, factor to the field's unit)
_PJ_PER_BIT = 8e-12   # pJ/bit -> J/byte
_KEYS: dict[tuple[str, str], tuple[str, float]] = {
    ("die", "area_mm2"): ("area_mm2", 1.0),
    ("die", "power_w"): ("power_w", 1.0),
    ("die", "uncore_mm2"): ("uncore_mm2", 1.0),
    ("die", "static_w_per_mm2"): ("static_w_per_mm2", 1.0),
    ("matrix", "tflop_s_per_mm2"): ("flop_s_per_mm2", 1e12),
    ("matrix", "w_per_tflop_s"): ("j_per_flop", 1e-12),
    ("matrix", "energy_clock_exponent"): ("energy_clock_exponent", 1.0),
    ("matrix", "voltage_floor_clock"): ("voltage_floor_clock", 1.0),
    ("sram", "mb_per_mm2"): ("sram_bytes_per_mm2", 1e6),
    ("sram", "tb_s_per_mm2"): ("sram_bytes_per_s_per_mm2", 1e12),
    ("sram", "pj_per_bit"): ("sram_j_per_byte", _PJ_PER_BIT),
    ("hbm", "phy_mm2"): ("hbm_phy_mm2", 1.0),
    ("hbm", "stack_gb"): ("hbm_stack_bytes", 1e9),
    ("hbm", "stack_tb_s"): ("hbm_stack_bytes_per_s", 1e12),
    ("hbm", "pj_per_bit"): ("hbm_j_per_byte", _PJ_PER_BIT),
    ("hbm", "shoreline_mm"): ("hbm_shoreline_mm", 1.0),
    ("io", "mm2_per_tb_s"): ("io_mm2_per_byte_s", 1e-12),
    ("io", "pj_per_bit"): ("io_j_per_byte", _PJ_PER_BIT),
    ("io", "shoreline_mm_per_tb_s"): ("io_shoreline_mm_per_byte_s", 1e-12),
    ("training", "state_bytes_per_param"): ("state_bytes_per_param", 1.0),
    ("training", "weight_traffic_bytes_per_param"): ("weight_traffic_bytes_per_param", 1.0),
    ("training", "act_traffic_bytes_per_d"): ("act_traffic_bytes_per_d", 1.0),
    ("training", "act_checkpoint_bytes_per_d"): ("act_checkpoint_bytes_per_d", 1.0),
    ("training", "act_working_bytes_per_d"): ("act_working_bytes_per_d", 1.0),
}
_REFERENCE_KEYS = {
    "h100": {"matrix_mm2", "sram_mm2", "n_hbm_stacks", "io_mm2"},
    "tpu8": {"t_hbm_stacks", "i_hbm_stacks", "t_sram_mb", "i_sram_mb"},
}


@dataclass(frozen=True)
class Params:
    """The technology constants of ``data/chipdesign.toml``: SI, except areas in mm² (named so).

    ``h100_split`` and ``tpu8`` are reference values (the calibration split; Google's choice).
    """

    area_mm2: float
    power_w: float
    uncore_mm2: float
    static_w_per_mm2: float
    flop_s_per_mm2: float
    j_per_flop: float
    energy_clock_exponent: float
    voltage_floor_clock: float
    sram_bytes_per_mm2: float
    sram_bytes_per_s_per_mm2: float
    sram_j_per_byte: float
    hbm_phy_mm2: float
    hbm_stack_bytes: float
    hbm_stack_bytes_per_s: float
    hbm_j_per_byte: float
    hbm_shoreline_mm: float
    io_mm2_per_byte_s: float
    io_j_per_byte: float
    io_shoreline_mm_per_byte_s: float
    state_bytes_per_param: float
    weight_traffic_bytes_per_param: float
    act_traffic_bytes_per_d: float
    act_checkpoint_bytes_per_d: float
    act_working_bytes_per_d: float
    h100_split: Mapping[str, float] = dataclasses.field(default_factory=lambda: MappingProxyType({}), compare=False)
    tpu8: Mapping[str, float] = dataclasses.field(default_factory=lambda: MappingProxyType({}), compare=False)
    provenance: Mapping[str, Provenance] = dataclasses.field(
        default_factory=lambda: MappingProxyType({}), repr=False, compare=False)

    def replace(self, **changes: float) -> "Params":
        """A copy with some constants changed (a what-if: their provenance says so)."""
        names = {f.name for f in dataclasses.fields(self)} - {"h100_split", "tpu8", "provenance"}
        bad = sorted(set(changes) - names)
        if bad:
            raise ValueError(f"Params has no field(s) {bad}; fields: {sorted(names)}")
        for k, v in changes.items():
            positive(k, v)
        if "voltage_floor_clock" in changes:
            fraction("voltage_floor_clock", changes["voltage_floor_clock"], zero_ok=False)
        src = Source("what-if:chipdesign", "what-if: chip-design parameter changed by the user", "", "", "what-if")
        prov = dict(self.provenance)
        prov.update({k: Provenance(src, "") for k in changes})
        return dataclasses.replace(self, provenance=MappingProxyType(prov), **{k: float(v) for k, v in changes.items()})


def load_params(path: Path | str, sources: Mapping[str, Source] | None = None) -> Params:
    """Read a chip-design TOML file (schema: ``data/chipdesign.toml``) into :class:`Params`."""
    path = Path(path)
    raw = read_table_file(path)
    sources = sources if sources is not None else load_sources()
    sections: dict[str, set[str]] = {}
    for sec, key in _KEYS:
        sections.setdefault(sec, set()).add(key)
    sections.update(_REFERENCE_KEYS)
    check_keys(path, None, raw, required=set(sections), optional=set())
    kw: dict[str, float] = {}
    prov: dict[str, Provenance] = {}
    refs: dict[str, dict[str, float]] = {s: {} for s in _REFERENCE_KEYS}
    for sec, keys in sections.items():
        entry = raw[sec]
        check_keys(path, sec, entry, required=keys, optional=set())
        for key in sorted(keys):
            q = parse_quantity(path, sec, key, entry[key], "count", sources)
            if sec in refs:
                refs[sec][key] = q.value
                prov[f"{sec}.{key}"] = q.provenance
                continue
            field, factor = _KEYS[(sec, key)]
            kw[field] = q.value * factor
            prov[field] = q.provenance
    if not 0 < kw["voltage_floor_clock"] <= 1:
        raise CatalogueError(path, "matrix", "voltage_floor_clock", f"must be in (0, 1], got {kw['voltage_floor_clock']}")
    if refs["h100"]["n_hbm_stacks"] != int(refs["h100"]["n_hbm_stacks"]):
        raise CatalogueError(path, "h100", "n_hbm_stacks", "must be a whole number")
    return Params(**kw, h100_split=MappingProxyType(refs["h100"]), tpu8=MappingProxyType(refs["tpu8"]),
                  provenance=MappingProxyType(prov))


@functools.lru_cache(maxsize=None)
def builtin_params() -> Params:
    """The package's own constants (``data/chipdesign.toml``), read once."""
    return load_params(DATA_DIR / "chipdesign.toml")


def params(**changes: float) -> Params:
    """The package's chip-design constants (``data/chipdesign.toml``), optionally with what-if changes."""
    return builtin_params().replace(**changes) if changes else builtin_params()


def provenance_table(p: Params | None = None) -> pd.DataFrame:
    """Every constant with its value, source, kind and note."""
    p = p or params()
    rows = []
    for field, prov in p.provenance.items():
        if "." in field:
            sec, key = field.split(".", 1)
            value = (p.h100_split if sec == "h100" else p.tpu8)[key]
        else:
            value = getattr(p, field)
        rows.append({"field": field, "value_si": value, "source": prov.source.id, "kind": prov.kind, "note": prov.note})
    return pd.DataFrame(rows)
