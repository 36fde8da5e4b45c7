"""A parallel layout of a training run as one value: :class:`Layout`.

A layout says how a run is split and how it runs, everything :func:`~accelbook.training.estimate`
needs besides the model, the chip, the chip count and the batch: the degrees of tensor (``tp``),
context (``cp``), pipeline (``pp``, with ``vp`` interleaved chunks per stage), data (``dp``; None:
``n / (tp·cp·pp)``) and expert (``ep``, carved out of ``dp``) parallelism, the microbatch in sequences,
the ZeRO stage, recomputation, when gradients are reduced, the pipeline schedule, and the run's
options (GEMM precision, FlashAttention, sequence parallelism, the share of tensor-parallel traffic
hidden behind GEMMs, how context parallelism moves K and V).

A layout is frozen, compares and hashes as a value, prints as the label the tables use
(``str(Layout(tp=8, pp=4, dp=32))`` is ``"tp8 pp4 dp32 mb1 ZeRO-1 recompute selective"``),
parses back from it (:meth:`Layout.parse`), and loads from TOML (:func:`load_layouts`), as Calculon
keeps its execution configurations as data beside its system specs::

    [llama3-405b-meta]          # one table a layout; every key optional (defaults as Layout's)
    tp = 8
    pp = 16
    cp = 1
    microbatch = 1
    recompute = "none"

Only the types and names are checked here; whether a layout suits a model and a chip count (degrees
that divide, a batch that splits) is checked where both are known, by ``estimate``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from accelbook.checks import fraction, one_of, whole
from accelbook.specs.loader import CatalogueError, check_keys, read_table_file

from .records import CP_COMM, GRAD_SYNC, PRECISIONS, RECOMPUTE, SCHEDULES

ZERO_STAGES = (0, 1, 2, 3)
#: the degrees a label shows, in its order (a degree of 1 is left out, except dp; vp and ep when above 1)
_LABEL_DEGREES = ("tp", "cp", "pp", "dp")


@dataclass(frozen=True)
class Layout:
    """One parallel layout and the run's options (see the module docstring); field names are
    ``estimate``'s keyword arguments."""

    tp: int = 1
    cp: int = 1
    pp: int = 1
    vp: int = 1
    dp: int | None = None
    ep: int = 1
    microbatch: int = 1
    zero_stage: int = 1
    recompute: str = "selective"
    grad_sync: str | None = None
    schedule: str = "1f1b"
    precision: str = "bf16"
    flash_attention: bool = True
    sequence_parallel: bool = True
    tp_overlap: float = 0.0
    cp_comm: str = "ring"

    def __post_init__(self):
        for k in ("tp", "cp", "pp", "vp", "ep", "microbatch"):
            object.__setattr__(self, k, whole(k, getattr(self, k)))
        if self.dp is not None:
            object.__setattr__(self, "dp", whole("dp", self.dp))
        object.__setattr__(self, "zero_stage", one_of("zero_stage", whole("zero_stage", self.zero_stage, 0), ZERO_STAGES))
        one_of("recompute", self.recompute, RECOMPUTE)
        if self.grad_sync is not None:
            one_of("grad_sync", self.grad_sync, GRAD_SYNC)
        one_of("schedule", self.schedule, SCHEDULES)
        one_of("precision", self.precision, PRECISIONS)
        one_of("cp_comm", self.cp_comm, CP_COMM)
        for k in ("flash_attention", "sequence_parallel"):
            if not isinstance(getattr(self, k), bool):
                raise TypeError(f"{k} must be True or False, got {getattr(self, k)!r}"[:200])
        object.__setattr__(self, "tp_overlap", float(fraction("tp_overlap", self.tp_overlap)))

    def __str__(self) -> str:
        return self.label()

    def label(self) -> str:
        """The layout in a few words, as tables and charts show it: ``"tp8 pp4 dp32 mb1 ZeRO-1 recompute
        selective"``; ``dp`` is ``"dp?"`` when not given (derived from the chip count)."""
        return label_of({**self.as_dict(), "dp": "?" if self.dp is None else self.dp})

    def as_dict(self) -> dict:
        """The fields as ``estimate``'s keyword arguments."""
        return dataclasses.asdict(self)

    def replace(self, **changes) -> Layout:
        """A copy with ``changes`` (checked as a new layout is)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(cls, values: Mapping) -> Layout:
        """A layout from a mapping of its fields (a ``TrainingEstimate.config``, a row of ``search``'s
        table, a TOML table); keys that are not fields are ignored (``seq_len``, ``step_time_s``…).
        NumPy scalars become Python numbers."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: (v.item() if hasattr(v, "item") else v) for k, v in values.items() if k in names}
        return cls(**kw)

    @classmethod
    def parse(cls, text: str, **options) -> Layout:
        """The layout a :meth:`label` describes (``"tp8 pp4 dp32 mb1 ZeRO-1 recompute selective"``);
        the fields a label does not show (grad_sync, schedule, precision, …) come from ``options``.
        Raises ``ValueError`` naming the word it cannot read."""
        kw: dict = {}
        words = str(text).split()
        i = 0
        while i < len(words):
            w = words[i]
            m = re.fullmatch(r"(tp|cp|pp|dp|vp|ep|mb)(\d+|\?)", w)
            if m and m.group(2) != "?":
                kw["microbatch" if m.group(1) == "mb" else m.group(1)] = int(m.group(2))
            elif m:
                pass                                  # dp? (derived)
            elif re.fullmatch(r"ZeRO-\d", w):
                kw["zero_stage"] = int(w[5:])
            elif w == "recompute" and i + 1 < len(words):
                kw["recompute"] = words[i + 1]
                i += 1
            else:
                raise ValueError(f"cannot read {w!r} in the layout {text!r} (expected tpN, cpN, ppN, dpN, vpN, epN, mbN, "
                                 "ZeRO-N, recompute none|selective|full)")
            i += 1
        return cls(**{**options, **kw})


def label_of(config: Mapping) -> str:
    """The label of a layout given as a mapping (a ``TrainingEstimate.config`` or a row of ``search``'s
    table): ``"tp8 pp4 dp32 mb1 ZeRO-1 recompute selective"``. Degrees of 1 are left out, except ``dp``;
    ``vp`` and ``ep`` appear when above 1."""
    parts = [f"{k}{config[k]}" for k in _LABEL_DEGREES if k == "dp" or config[k] > 1]
    if config["vp"] > 1:
        parts.append(f"vp{config['vp']}")
    if config["ep"] > 1:
        parts.append(f"ep{config['ep']}")
    parts += [f"mb{config['microbatch']}", f"ZeRO-{config['zero_stage']}", f"recompute {config['recompute']}"]
    return " ".join(parts)


def load_layouts(path: Path | str) -> dict[str, Layout]:
    """The named layouts of a TOML file (one table each, keys as :class:`Layout`'s fields, all
    optional). Raises ``CatalogueError`` naming the file, the table and the key for an unknown key or
    a bad value."""
    raw = read_table_file(path)
    names = {f.name for f in dataclasses.fields(Layout)}
    out = {}
    for name, entry in raw.items():
        check_keys(path, name, entry, set(), names)
        try:
            out[name] = Layout.from_mapping(entry)
        except (TypeError, ValueError) as e:
            raise CatalogueError(path, name, None, str(e)) from None
    return out


def layout_arguments(layout: Layout, given: Mapping) -> dict:
    """``estimate``'s layout keywords from ``layout``, after checking that ``given`` (the keywords the
    caller passed beside it) leaves every one at its default: a layout is given one way or the other,
    so a ``tp=8`` beside ``layout=Layout(tp=4)`` is an error, not a silent choice."""
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be an accelbook.training.Layout, got {type(layout).__name__}"[:200])
    default = Layout()
    clash = [k for k, v in given.items() if v != getattr(default, k)]
    if clash:
        raise ValueError(f"give the layout either as layout= or as keywords, not both: {', '.join(clash)} given beside "
                         f"layout={layout}")
    return layout.as_dict()


#: the run's options a row of ``search``'s table does not hold (they are the search's arguments)
_RUN_OPTIONS = ("precision", "flash_attention", "sequence_parallel", "tp_overlap", "cp_comm")


def layouts_of(table) -> list[Layout]:
    """The layouts of the rows of a ``search`` table, in its order, each with the run's options the search
    was given (read from the best row's estimate in ``table.attrs["best"]``)."""
    best = table.attrs.get("best") if hasattr(table, "attrs") else None
    if best is None:
        raise ValueError("layouts_of takes a table returned by accelbook.training.search (its attrs hold the best estimate)")
    options = {k: best.config[k] for k in _RUN_OPTIONS}
    return [Layout.from_mapping({**row, **options}) for row in table.to_dict("records")]
