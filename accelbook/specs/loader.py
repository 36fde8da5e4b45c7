"""The one loader: TOML files in ``data/`` -> validated, SI-unit values with provenance.

Every spec number in accelbook is written in a TOML file as a small table::

    hbm_bw_tb_s = { value = 3.35, src = "nvidia-h100-datasheet" }

The key carries the unit (``_tb_s``), ``src`` names an entry of ``data/sources.toml`` (title,
address, date, kind), and optional fields say more:

- ``date``: when the number was published, if not the source's date (prices move);
- ``note``: what exactly is counted (``"L2 only"``, ``"per direction"``);
- ``direction``: ``"one-way"`` or ``"bidirectional"`` for link bandwidths;
- ``provider``: who charges a price;
- ``alt``: other published values that disagree, each ``{ value, src, note }``. Disagreements
  are recorded, not hidden: the notebooks show them.

This module knows units and provenance; it does not know what a chip or a model is. Every TOML file
of the package is read through it: the spec modules (:mod:`.chips`, :mod:`.models`, :mod:`.clusters`,
:mod:`.fabrics`, :mod:`.efficiency`) and the models' own files (chip design, TCO, published runs,
claims) declare their key sets, read with :func:`read_table_file`, check the keys with
:func:`check_keys`, turn ``{value, src}`` tables into SI with :func:`parse_quantity` and resolve a
bare source id with :func:`lookup_source`. Errors are :class:`CatalogueError`, naming file, entry and key.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
#: where the package's own catalogue lives; a wheel install ships a copy under accelbook/data
if not DATA_DIR.is_dir():  # pragma: no cover - only in a non-editable install
    DATA_DIR = Path(__file__).resolve().parents[1] / "data"

#: unit suffix -> factor to SI. GB and GiB are kept apart on purpose.
UNITS: Mapping[str, float] = MappingProxyType(
    {
        # FLOP/s and integer op/s
        "pflop_s": 1e15,
        "tflop_s": 1e12,
        "gflop_s": 1e9,
        "pop_s": 1e15,
        "top_s": 1e12,
        # bytes
        "tb": 1e12,
        "gb": 1e9,
        "mb": 1e6,
        "kb": 1e3,
        "tib": 2.0**40,
        "gib": 2.0**30,
        "mib": 2.0**20,
        "kib": 2.0**10,
        # bytes per second
        "pb_s": 1e15,
        "tb_s": 1e12,
        "gb_s": 1e9,
        "gib_s": 2.0**30,
        # time
        "s": 1.0,
        "ms": 1e-3,
        "us": 1e-6,
        "ns": 1e-9,
        # power
        "w": 1.0,
        "kw": 1e3,
        # money
        "usd_per_hour": 1.0 / 3600.0,
        # dimensionless counts
        "chips": 1.0,
        "count": 1.0,
        # dimensionless ratios (a slowdown fraction, max ÷ mean)
        "fraction": 1.0,
        "ratio": 1.0,
        # carbon intensity of electricity: grams of CO2e per kWh -> grams per joule
        "g_kwh": 1.0 / 3.6e6,
    }
)

#: the largest value, in SI, that a number in each unit may take: generous physical bounds (a chip of
#: 10 EFLOP/s, an exabyte, an exabyte per second, 30 years, a gigawatt), so that a typo such as
#: ``1e300`` is refused at load instead of becoming ``inf`` in a model. Values must also be > 0
#: (>= 0 where a key allows zero) and finite.
_FAMILIES = {
    "flop/s": (("pflop_s", "tflop_s", "gflop_s", "pop_s", "top_s"), 1e19),
    "bytes": (("tb", "gb", "mb", "kb", "tib", "gib", "mib", "kib"), 1e18),
    "bytes/s": (("pb_s", "tb_s", "gb_s", "gib_s"), 1e18),
    "time": (("s", "ms", "us", "ns"), 1e9),
    "power": (("w", "kw"), 1e9),
    "money": (("usd_per_hour",), 1e6 / 3600.0),
    "chips": (("chips",), 1e8),
    "count": (("count",), 1e18),
    "fraction": (("fraction",), 1.0),
    "ratio": (("ratio",), 1e6),
    "carbon intensity": (("g_kwh",), 1e4 / 3.6e6),    # 10 kg per kWh: ten times a lignite plant
}
UNIT_LIMITS: Mapping[str, float] = MappingProxyType(
    {unit: limit for units, limit in _FAMILIES.values() for unit in units})

SOURCE_KINDS = ("primary", "secondary", "derived", "estimate", "what-if")
STATUSES = ("shipping", "announced", "estimated")
DIRECTIONS = ("one-way", "bidirectional")


class CatalogueError(ValueError):
    """A catalogue file is malformed. The message names the file, the entry and the key."""

    def __init__(self, path: Path | str, entry: str | None, key: str | None, problem: str):
        self.path, self.entry, self.key, self.problem = str(path), entry, key, problem
        where = str(path)
        if entry is not None:
            where += f": entry [{entry}]"
        if key is not None:
            where += f", key '{key}'"
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Source:
    """One publication a number comes from (an entry of ``data/sources.toml``)."""

    id: str
    title: str
    url: str
    date: str
    kind: str  # one of SOURCE_KINDS


@dataclass(frozen=True)
class Provenance:
    """Where one number comes from, and which published values disagree with it."""

    source: Source
    date: str
    note: str = ""
    direction: str | None = None
    provider: str | None = None
    alternatives: tuple[tuple[float, Source, str], ...] = ()  # (SI value, source, note)

    @property
    def kind(self) -> str:
        return self.source.kind


@dataclass(frozen=True)
class Quantity:
    """A number in SI units with its provenance."""

    value: float
    provenance: Provenance


_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def load_sources(path: Path | str | None = None) -> Mapping[str, Source]:
    """Read ``sources.toml``: ``[id]`` tables with title, url, date (YYYY[-MM[-DD]]) and kind."""
    path = checked_path(path) if path is not None else DATA_DIR / "sources.toml"
    return MappingProxyType(parse_sources(path, _read_toml(path)))


def parse_sources(path: Path | str, raw: Mapping[str, Any], prefix: str = "") -> dict[str, Source]:
    """Validate source tables (``raw`` maps id -> table); ``prefix`` is for error messages."""
    out: dict[str, Source] = {}
    required = {"title", "url", "date", "kind"}
    for sid, entry in raw.items():
        if not isinstance(entry, dict):
            raise CatalogueError(path, prefix + sid, None, "each source must be a table")
        check_keys(path, prefix + sid, entry, required=required, optional=set())
        if entry["kind"] not in SOURCE_KINDS:
            raise CatalogueError(path, prefix + sid, "kind", f"must be one of {SOURCE_KINDS}, got {entry['kind']!r}")
        date = str(entry["date"])
        if not _DATE.match(date):
            raise CatalogueError(path, prefix + sid, "date", f"must look like 2024, 2024-03 or 2024-03-18, got {date!r}")
        out[sid] = Source(sid, str(entry["title"]), str(entry["url"]), date, entry["kind"])
    return out


def user_sources(path: Path, raw: dict[str, Any], sources: Mapping[str, Source] | None) -> dict[str, Source]:
    """The package's sources plus a user file's own ``[sources.<id>]`` tables (popped from ``raw``)."""
    merged = dict(sources if sources is not None else load_sources())
    table = raw.pop("sources", None)
    if table is not None:
        merged.update(parse_sources(path, table, prefix="sources."))
    return merged


def checked_path(path: Any) -> Path:
    """``path`` as a :class:`Path`; a :class:`CatalogueError` naming it if it is not a file path
    (``None``, a number, an empty string)."""
    if isinstance(path, bytes) or not isinstance(path, (str, PathLike)):
        raise CatalogueError(repr(path), None, None,
                             f"a catalogue path must be a str or a pathlib.Path, got {type(path).__name__}")
    if str(path).strip() == "":
        raise CatalogueError("''", None, None, "a catalogue path must not be empty")
    return Path(path)


def _read_toml(path: Path) -> dict[str, Any]:
    """Parse one TOML file; every way that can fail is a :class:`CatalogueError` naming the file."""
    path = checked_path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise CatalogueError(path, None, None, "file not found") from None
    except IsADirectoryError:
        raise CatalogueError(path, None, None, "is a directory, not a TOML file") from None
    except OSError as exc:
        raise CatalogueError(path, None, None, f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise CatalogueError(path, None, None, f"is not valid UTF-8 (byte {exc.start}); TOML files are UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(path, None, None, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise CatalogueError(path, None, None, "nests arrays or tables too deeply to be a catalogue") from None


def read_table_file(path: Path | str) -> dict[str, dict[str, Any]]:
    """Read a TOML file whose top-level tables are catalogue entries (``[h100]``, ``[tpu-v5p]``)."""
    path = checked_path(path)
    raw = _read_toml(path)
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            raise CatalogueError(path, name, None, "top-level keys must be tables like [h100]")
    return raw


def check_keys(path, entry_name, entry: Mapping[str, Any], required: set[str], optional: set[str]) -> None:
    """Check that ``entry`` (a table of ``path``) has every ``required`` key and no key outside
    ``required | optional``; else a :class:`CatalogueError` naming the key (and, for an unknown key,
    the closest known ones). ``entry_name`` is None for a file's top level."""
    missing = sorted(required - entry.keys())
    if missing:
        raise CatalogueError(path, entry_name, missing[0], "required key is missing")
    unknown = sorted(entry.keys() - required - optional)
    if unknown:
        known = sorted(required | optional)
        hint = _closest(unknown[0], known)
        raise CatalogueError(
            path, entry_name, unknown[0],
            "unknown key" + (f" (did you mean {hint}?)" if hint else "") + "; keys carry their unit, e.g. hbm_bw_tb_s",
        )


def _closest(word: str, candidates: Iterable[str]) -> str:
    import difflib

    hits = difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.5)
    return ", ".join(repr(h) for h in hits)


def split_unit(key: str, bases: Mapping[str, tuple[str, ...]]) -> tuple[str, str] | None:
    """Split ``hbm_bw_tb_s`` into ``("hbm_bw", "tb_s")`` if ``hbm_bw`` accepts unit ``tb_s``."""
    for base, units in bases.items():
        if key.startswith(base + "_"):
            unit = key[len(base) + 1 :]
            if unit in units:
                return base, unit
    return None


def parse_quantity(
    path, entry_name: str, key: str, raw: Any, unit: str, sources: Mapping[str, Source],
    *, positive: bool = True, allow_zero: bool = False,
) -> Quantity:
    """Turn ``{value=…, src=…}`` written in ``unit`` into a SI :class:`Quantity`."""
    if not isinstance(raw, dict):
        raise CatalogueError(
            path, entry_name, key,
            f"must be a table like {{ value = {raw!r}, src = \"source-id\" }} so the number carries its source",
        )
    check_keys(path, entry_name + "." + key, raw, required={"value", "src"},
                optional={"date", "note", "direction", "provider", "alt"})
    factor = UNITS[unit]
    value = _number(path, entry_name, key, raw["value"], positive=positive, allow_zero=allow_zero, unit=unit)
    source = lookup_source(path, entry_name, key, raw["src"], sources)
    date = str(raw.get("date", source.date))
    if not _DATE.match(date):
        raise CatalogueError(path, entry_name, key, f"date must look like 2024-03, got {date!r}")
    direction = raw.get("direction")
    if direction is not None and direction not in DIRECTIONS:
        raise CatalogueError(path, entry_name, key, f"direction must be one of {DIRECTIONS}, got {direction!r}")
    alts = []
    for i, alt in enumerate(raw.get("alt", [])):
        akey = f"{key}.alt[{i}]"
        if not isinstance(alt, dict):
            raise CatalogueError(path, entry_name, akey, "each alternative must be a table {value, src, note}")
        check_keys(path, entry_name + "." + akey, alt, required={"value", "src"}, optional={"note", "unit"})
        aunit = _alt_unit(path, entry_name, akey, alt.get("unit", unit), unit)
        avalue = _number(path, entry_name, akey, alt["value"], positive=positive, allow_zero=allow_zero, unit=aunit)
        alts.append((avalue * UNITS[aunit], lookup_source(path, entry_name, akey, alt["src"], sources),
                     str(alt.get("note", ""))))
    prov = Provenance(
        source=source, date=date, note=str(raw.get("note", "")), direction=direction,
        provider=raw.get("provider"), alternatives=tuple(alts),
    )
    return Quantity(value * factor, prov)


def _alt_unit(path, entry_name, akey, aunit: Any, unit: str) -> str:
    """The unit an alternative is written in: the key's own, or (``unit = "gb"``) another of the same
    family, so that a figure is recorded as it was printed (a datasheet's "80 GB" beside a key in MiB)."""
    family = next((units for units, _ in _FAMILIES.values() if unit in units), (unit,))
    if not isinstance(aunit, str) or aunit not in family:
        raise CatalogueError(path, entry_name, f"{akey}.unit",
                             f"must be one of {', '.join(family)} (the family of '{unit}'), got {aunit!r}")
    return aunit


def _number(path, entry_name, key, value, *, positive: bool, allow_zero: bool, unit: str | None = None) -> float:
    """A catalogue number, checked: a TOML number (not a boolean or a string), finite, > 0 (>= 0 with
    ``allow_zero``) when ``positive``, and, with ``unit``, at most :data:`UNIT_LIMITS` once in SI."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CatalogueError(path, entry_name, key, f"value must be a number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:
        raise CatalogueError(path, entry_name, key, "value is too large to be a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise CatalogueError(path, entry_name, key, "value must be finite")
    if positive and (value < 0 or (value == 0 and not allow_zero)):
        raise CatalogueError(path, entry_name, key, f"value must be > 0, got {value}")
    if unit is not None:
        si, limit = value * UNITS[unit], UNIT_LIMITS[unit]
        if not (abs(si) <= limit):
            raise CatalogueError(path, entry_name, key,
                                 f"value {value:g} {unit} is beyond the physical bound of "
                                 f"{limit / UNITS[unit]:g} {unit}: a typo?")
    return value


def lookup_source(path, entry_name, key, sid, sources: Mapping[str, Source]) -> Source:
    """The :class:`Source` with id ``sid``; a :class:`CatalogueError` naming ``path``, ``entry_name`` and
    ``key`` (and the closest ids) if ``sources`` has none."""
    if not isinstance(sid, str) or sid not in sources:
        hint = _closest(str(sid), sources.keys())
        raise CatalogueError(
            path, entry_name, key,
            f"src {sid!r} is not in sources.toml" + (f" (did you mean {hint}?)" if hint else ""),
        )
    return sources[sid]


def fuzzy_key(name: str) -> str:
    """Normalise a name for forgiving look-ups: 'TPU v5p', 'tpu-v5p' and 'tpu_v5p' all -> 'tpuv5p'.

    Letters and digits of any script are kept (``'芯片'`` stays ``'芯片'``, so two Chinese names never
    fold to the same empty key); case, spaces and punctuation are dropped. A name of punctuation only
    has the empty key, which matches nothing.
    """
    return "".join(ch for ch in unicodedata.normalize("NFKC", name).casefold() if ch.isalnum())


def lookup(name: str, index: Mapping[str, str], what: str, names: Mapping[str, str]) -> str:
    """Resolve ``name``: an exact id first, then ``index`` (fuzzy key -> id); else an error naming
    close matches. ``names`` maps each id to its display name, for the message."""
    if not isinstance(name, str):
        raise TypeError(f"{what} name must be a string, got {type(name).__name__}")
    if name.strip() in names:
        return name.strip()
    key = fuzzy_key(name)
    if key and key in index:
        return index[key]
    raise unknown_name(name, what, names)


def unknown_name(name: str, what: str, names: Mapping[str, str], ambiguous: Iterable[str] = ()) -> "UnknownNameError":
    """The error for a name that matches no entry (or, with ``ambiguous``, several), listing the closest."""
    import difflib

    ambiguous = list(ambiguous)
    if ambiguous:
        shown = ", ".join(f"{i} ({names[i]})" for i in ambiguous)
        return UnknownNameError(f"{what} name {name!r} is ambiguous: it matches {shown}; use the exact id")
    key = fuzzy_key(name)
    by_key = {}
    for i, n in names.items():
        by_key.setdefault(fuzzy_key(i), i)
        by_key.setdefault(fuzzy_key(n), i)
    close = difflib.get_close_matches(key, [k for k in by_key if k], n=8, cutoff=0.5) if key else []
    ids = [by_key[c] for c in close]
    ids += [i for n in difflib.get_close_matches(name, list(names.values()), n=4, cutoff=0.3)
            for i, nm in names.items() if nm == n]
    shown = [f"{i} ({names[i]})" for i in dict.fromkeys(ids)][:4]
    return UnknownNameError(
        f"unknown {what} {name!r}" + (f"; closest: {', '.join(shown)}" if shown else "")
        + f". See accelbook.{what}s() for the full list."
    )


def _names_of(item) -> tuple[str, ...]:
    return (item.id, item.name, *item.aliases)


@dataclass(frozen=True)
class Catalogue:
    """Entries (chips, models, clusters, fabrics: anything with id, name, aliases) and their name indexes.

    A name is resolved exactly first (an id, then a display name or an alias, as written), then
    forgivingly (:func:`fuzzy_key`) only when that key belongs to one entry: ``"my chip"`` is an
    error, not a guess, when both ``my-chip`` and ``my_chip`` exist.
    """

    what: str
    items: tuple
    exact: Mapping[str, tuple[str, ...]]  # a name as written -> ids
    index: Mapping[str, tuple[str, ...]]  # fuzzy key -> ids

    @classmethod
    def merge(cls, what: str, builtin: Iterable, *user_files: tuple[Path | str, Iterable]) -> "Catalogue":
        """The package's entries plus each user file's (``(path, entries)`` pairs).

        A user entry with an existing id replaces ours (a deliberate override). A user entry whose id,
        name or alias folds to the same key as another entry's id, name or alias is a
        :class:`CatalogueError` naming both: a user's chip named like a built-in one would otherwise
        lose to it, or shadow it, silently.
        """
        items = list(builtin)
        for path, user in user_files:
            user = list(user)
            ids = {u.id for u in user}
            items = [i for i in items if i.id not in ids]
            owner = {fuzzy_key(n): i for i in items for n in _names_of(i) if fuzzy_key(n)}
            for u in user:
                for field, n in zip(("id", "name", *("aliases",) * len(u.aliases)), _names_of(u)):
                    other = owner.get(fuzzy_key(n))
                    if other is not None:
                        raise CatalogueError(
                            path, u.id, field,
                            f"{n!r} collides with the {what} [{other.id}] ({other.name}) already in the catalogue; "
                            f"rename it, or name your entry [{other.id}] to replace that one")
            items += user
        exact: dict[str, list[str]] = {}
        index: dict[str, list[str]] = {}
        for item in items:
            for n in _names_of(item):
                for table, k in ((exact, n.strip()), (index, fuzzy_key(n))):
                    if k and item.id not in table.setdefault(k, []):
                        table[k].append(item.id)
        return cls(what, tuple(items), MappingProxyType({k: tuple(v) for k, v in exact.items()}),
                   MappingProxyType({k: tuple(v) for k, v in index.items()}))

    def get(self, name: str):
        """The entry called ``name``: its id, then its name or an alias as written, then forgivingly
        when only one entry matches; :class:`UnknownNameError` if none (or several) do."""
        if not isinstance(name, str):
            raise TypeError(f"{self.what} name must be a string, got {type(name).__name__}")
        n = name.strip()
        for i in self.items:            # the id as written: the common case, no table built
            if i.id == n:
                return i
        by_id = {i.id: i for i in self.items}
        names = {i.id: i.name for i in self.items}
        for ids in (self.exact.get(n, ()), self.index.get(fuzzy_key(name), ()) if fuzzy_key(name) else ()):
            if len(ids) == 1:
                return by_id[ids[0]]
            if len(ids) > 1:
                raise unknown_name(name, self.what, names, ambiguous=ids)
        raise unknown_name(name, self.what, names)


def file_keys(paths: Iterable[Path | str]) -> tuple[tuple[str, int], ...]:
    """(path, modification time) pairs: a cache key that changes when a user edits their file.
    A path that is not one (``None``, ``''``) is a :class:`CatalogueError`."""
    keys = []
    for p in paths:
        p = checked_path(p)
        try:
            mtime = p.stat().st_mtime_ns
        except OSError:
            mtime = -1  # the loader reports the missing file
        keys.append((str(p), mtime))
    return tuple(keys)


class UnknownNameError(KeyError, ValueError):
    """An unknown chip or model name. Its message lists the closest matches."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
