"""Plausibility of a predicted MFU: the highest MFU any published training run reached on the chip's family
at the run's precision, and a flag on a prediction above it.

    flag  ⇔  MFU_pred > MFU_pub(family, precision)

``MFU_pub`` is the largest MFU of the published runs of that family and precision in
``data/training_mfu_ceilings.toml``, each with its source, in the package's one convention
(:mod:`accelbook.training.mfu`: model FLOPs with full attention over the chip's dense **bf16** peak, whatever
the run's precision, so an FP8 run's ceiling is above its BF16 one). A run published as an MFU in that
convention is taken as printed; one published as tokens/s per chip is converted with
:func:`~accelbook.training.mfu.model_flops_utilisation`. A chip in no family, or a family with no run at that
precision, has no ceiling: the result says "no published run" and carries no flag.

The ceiling is a bound on what the model may print as if it were reachable, not a fit: nothing in the model
is computed from it, and a flagged prediction keeps its value, printed with the ceiling, its source and the
validation table's error band beside it (the model is optimistic on published runs, median above 0).

Worked number: Llama 3.1 70B on 8,192 H100 at 64K context, BF16, predicted at 70 % MFU, is above Hopper's
BF16 ceiling of 47 % (Megatron-LM's README, "up to 47 % MFU on H100 clusters"): flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accelbook.checks import instance, one_of, real
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import Chip, base_id, get_chip
from accelbook.specs.loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    check_keys,
    load_sources,
    parse_quantity,
    read_table_file,
)
from accelbook.specs.models import get_model

from .mfu import model_flops_utilisation
from .records import PRECISIONS

#: the conventions a ceiling run's published MFU may be in: the package's own only (others need a layout)
CEILING_CONVENTIONS = ("model_full",)


@dataclass(frozen=True)
class CeilingRun:
    """One published run's MFU in the package's convention (full attention, dense bf16 peak)."""

    id: str
    chip_id: str
    family: str
    precision: str
    mfu: float
    #: how the figure was read: "as published" or the conversion from tokens/s
    how: str
    provenance: Provenance

    @property
    def source(self) -> str:
        return self.provenance.source.title


@dataclass(frozen=True)
class MfuCeiling:
    """The highest MFU published for a chip family at one precision, and the run that reached it."""

    family: str
    family_name: str
    precision: str
    mfu: float
    run: CeilingRun

    def words(self) -> str:
        """``"the highest MFU published on NVIDIA Hopper at bf16: 47.0 % (NVIDIA/Megatron-LM README, ...)"``."""
        return f"the highest MFU published on {self.family_name} at {self.precision}: {self.mfu:.1%} ({self.run.source})"


@dataclass(frozen=True)
class Plausibility:
    """A predicted MFU checked against its family's published ceiling.

    ``ceiling`` is None (and ``flag`` empty) where no run of that family and precision is published;
    ``flag`` is ``""`` when the prediction is at or below the ceiling, else the reason; ``note`` says
    either way what the prediction was checked against."""

    chip: str
    precision: str
    mfu: float
    ceiling: float | None
    source: str
    flag: str
    note: str

    @property
    def flagged(self) -> bool:
        return bool(self.flag)


def _family_of(path, raw: dict) -> tuple[dict[str, str], dict[str, str]]:
    families, names = {}, {}
    for fid, e in raw["family"].items():
        check_keys(path, f"family.{fid}", e, required={"name", "chips"}, optional=set())
        names[fid] = str(e["name"])
        for cid in e["chips"]:
            cid = base_id(get_chip(cid))
            if cid in families:
                raise CatalogueError(path, f"family.{fid}", "chips", f"{cid} is already in family {families[cid]}")
            families[cid] = fid
    return families, names


def _run(path, rid: str, e: dict, families: dict, sources) -> CeilingRun:
    name = f"run.{rid}"
    check_keys(path, name, e, required={"chip", "precision"},
               optional={"mfu", "convention", "tokens_per_s_per_chip", "model", "seq_len"})
    chip = get_chip(e["chip"])
    cid = base_id(chip)
    if cid not in families:
        raise CatalogueError(path, name, "chip", f"{cid} is in no [family.*] of this file")
    if e["precision"] not in PRECISIONS:
        raise CatalogueError(path, name, "precision", f"must be one of {PRECISIONS}, got {e['precision']!r}")
    if ("mfu" in e) == ("tokens_per_s_per_chip" in e):
        raise CatalogueError(path, name, "mfu", "give exactly one of mfu and tokens_per_s_per_chip")
    if "mfu" in e:
        if e.get("convention") not in CEILING_CONVENTIONS or "model" in e or "seq_len" in e:
            raise CatalogueError(path, name, "convention", f"an mfu needs convention one of {CEILING_CONVENTIONS} "
                                 "and no model or seq_len")
        q = parse_quantity(path, name, "mfu", e["mfu"], "fraction", sources)
        if q.value > 1:
            raise CatalogueError(path, name, "mfu", f"must be at most 1, got {q.value}")
        return CeilingRun(rid, cid, families[cid], e["precision"], q.value, "as published", q.provenance)
    if "model" not in e or "seq_len" not in e or "convention" in e:
        raise CatalogueError(path, name, "tokens_per_s_per_chip", "a throughput needs model and seq_len, no convention")
    q = parse_quantity(path, name, "tokens_per_s_per_chip", e["tokens_per_s_per_chip"], "count", sources)
    mfu = float(model_flops_utilisation(q.value, get_model(e["model"]), chip, int(e["seq_len"]), e["precision"]))
    how = f"{q.value:,.0f} tokens/s per chip at {int(e['seq_len']):,} tokens, converted"
    return CeilingRun(rid, cid, families[cid], e["precision"], mfu, how, q.provenance)


@catalogue_cache(maxsize=4)
def _load(path=None) -> tuple[dict[str, str], dict[str, str], tuple[CeilingRun, ...]]:
    path = path or DATA_DIR / "training_mfu_ceilings.toml"
    raw, sources = read_table_file(path), load_sources()
    check_keys(path, None, raw, required={"family", "run"}, optional=set())
    families, names = _family_of(path, raw)
    return families, names, tuple(_run(path, rid, e, families, sources) for rid, e in raw["run"].items())


def chip_family(chip: Chip | str) -> str | None:
    """The family id of ``chip`` (``"nvidia-hopper"`` for an H100 or an H200), or None if it is in none."""
    return _load()[0].get(base_id(instance("chip", chip, Chip, get_chip)))


def ceiling_runs() -> tuple[CeilingRun, ...]:
    """Every published run of ``data/training_mfu_ceilings.toml``, its MFU in the package's convention."""
    return _load()[2]


def mfu_ceiling(chip: Chip | str, precision: str = "bf16") -> MfuCeiling | None:
    """The highest published MFU of ``chip``'s family at ``precision``, or None where none is published."""
    one_of("precision", precision, PRECISIONS)
    fam = chip_family(chip)
    runs = [r for r in ceiling_runs() if r.family == fam and r.precision == precision]
    if fam is None or not runs:
        return None
    best = max(runs, key=lambda r: r.mfu)
    return MfuCeiling(fam, _load()[1][fam], precision, best.mfu, best)


def _none_note(c: Chip, precision: str) -> str:
    fam = chip_family(c)
    where = f"the {_load()[1][fam]} family" if fam else c.name
    return f"no published run on {where} at {precision} to check this MFU against (no flag)"


def ceiling_words(chip: Chip | str, precision: str = "bf16") -> str:
    """What an MFU on ``chip`` at ``precision`` is checked against, in words: :meth:`MfuCeiling.words`, or that no
    run is published (``"no published run on the NVIDIA Blackwell family at bf16 ..."``)."""
    c = instance("chip", chip, Chip, get_chip)
    ceil = mfu_ceiling(c, precision)
    return _none_note(c, precision) if ceil is None else ceil.words()


def _reason(mfu: float, ceil: MfuCeiling) -> str:
    return (f"above the highest MFU any published run reached on {ceil.family_name} at {ceil.precision}: "
            f"{mfu:.1%} predicted, {ceil.mfu:.1%} published ({ceil.run.source}); the model is optimistic here, "
            "read it as an upper bound")


def plausibility(chip: Chip | str, precision: str, mfu: float) -> Plausibility:
    """``mfu`` (the package's convention, :attr:`TrainingEstimate.mfu`) checked against the highest MFU any
    published run reached on ``chip``'s family at ``precision`` (:func:`mfu_ceiling`).

    Above it: ``flag`` says so, with the ceiling and its source. At or below it, or with no published run
    (``ceiling`` None, ``note`` "no published run ..."), ``flag`` is ``""``. A NaN ``mfu`` (a chip without a
    bf16 peak) is not checked. H100, bf16, 0.70: flagged against 0.47 (Megatron-LM); 0.40: not."""
    c = instance("chip", chip, Chip, get_chip)
    one_of("precision", precision, PRECISIONS)
    m = float(mfu) if isinstance(mfu, (float, np.floating)) and math.isnan(mfu) else real("mfu", mfu, 0.0, 1e3)
    ceil = mfu_ceiling(c, precision)
    if ceil is None or math.isnan(m):
        note = _none_note(c, precision) if ceil is None else "MFU undefined (no bf16 peak): not checked"
        return Plausibility(c.name, precision, m, None if ceil is None else ceil.mfu,
                            "" if ceil is None else ceil.run.source, "", note)
    flag = _reason(m, ceil) if m > ceil.mfu else ""
    note = flag or (f"within the highest MFU published on {ceil.family_name} at {precision}: {ceil.mfu:.1%} "
                    f"({ceil.run.source})")
    return Plausibility(c.name, precision, m, ceil.mfu, ceil.run.source, flag, note)


def mfu_flags(chip: Chip | str, precision: str, mfu: np.ndarray) -> np.ndarray:
    """:func:`plausibility`'s ``flag`` of every MFU of a 1-D array (object dtype, ``""`` where not flagged),
    the ceiling looked up once: a column of :func:`accelbook.training.search`'s table. A NaN MFU is not flagged."""
    c = instance("chip", chip, Chip, get_chip)
    one_of("precision", precision, PRECISIONS)
    try:
        v = np.asarray(mfu, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"mfu must be a 1-D array of numbers >= 0, got {mfu!r}"[:200]) from None
    if np.ndim(mfu) != 1 or (v < 0).any():      # NaN (a chip without a bf16 peak) is kept and never flagged
        raise ValueError(f"mfu must be a 1-D array of numbers >= 0, got {v[:3]!r}")
    out = np.full(len(v), "", dtype=object)
    ceil = mfu_ceiling(c, precision)
    if ceil is not None:
        over = np.flatnonzero(v > ceil.mfu)
        out[over] = [_reason(x, ceil) for x in v[over].tolist()]
    return out
