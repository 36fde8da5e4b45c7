"""One catalogue per kind of thing (chips, models, clusters, fabrics): its file, its parse, its look-up.

A :class:`Kind` owns one ``data/*.toml`` file: ``load(path)`` turns a file in its schema into entries
(each with ``id``, ``name`` and ``aliases``), read once; :meth:`Kind.all` and :meth:`Kind.get` add the
entries a user registered (chips and models: :mod:`accelbook.specs.registry`) and the files a call
names, and resolve a name forgivingly (:class:`~accelbook.specs.loader.Catalogue`: the id, then a
name or alias as written, then :func:`~accelbook.specs.loader.fuzzy_key` when one entry matches).

The registered entries are the only state of the specs layer. They live here, beside the caches
they invalidate: every change bumps :func:`generation`, which keys each kind's merged catalogue, and
clears every cache made with :func:`catalogue_cache` (anything computed from a chip's or a model's
entry: a training search, a validation table, a measured table checked against a chip's peak, a
dashboard's data), so that ``register(chip, replace=True)`` and ``unregister`` are seen everywhere.
``chips.py``, ``models.py``, ``clusters.py`` and ``fabrics.py`` each declare their kind
(``CHIPS = Kind("chip", "chips.toml", load_chips, registrable=True)``) and import only this
module and the loader; ``registry.py`` imports them, never the other way round.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

from . import loader
from .loader import Catalogue, file_keys

_registered: dict[str, dict[str, Any]] = {}
_state = {"generation": 0}
_invalidators: list[Callable[[], None]] = []   # the cache_clear of every catalogue_cache


def registered(what: str) -> tuple:
    """The entries of kind ``what`` (``"model"``, ``"chip"``) a user registered, in registration order."""
    return tuple(_registered.get(what, {}).values())


def generation() -> int:
    """A counter bumped by every change to the registered entries (a key for the catalogue caches)."""
    return _state["generation"]


def catalogue_cache(maxsize: int | None = 128) -> Callable[[Callable], Callable]:
    """``functools.lru_cache(maxsize)`` whose entries are dropped whenever the registered entries change.

    The one invalidation hook for results computed from catalogue entries: every cache keyed (or
    computed) by a chip or model id uses it, so a chip replaced with ``register(..., replace=True)`` or
    removed with ``unregister`` is never answered from a cache filled before. ``maxsize=None``: unbounded.
    """
    def decorate(fn: Callable) -> Callable:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _invalidators.append(cached.cache_clear)
        return cached
    return decorate


def invalidated() -> tuple[Callable[[], None], ...]:
    """The ``cache_clear`` of every :func:`catalogue_cache` made so far (called on every registry change)."""
    return tuple(_invalidators)


def _changed() -> None:
    _state["generation"] += 1
    for clear in _invalidators:
        clear()


def add_registered(what: str, items: Iterable) -> None:
    """Register ``items`` (already checked by the caller) under kind ``what``; an equal id replaces."""
    table = _registered.setdefault(what, {})
    for item in items:
        table[item.id] = item
    _changed()


def is_registered(entry_id: str) -> bool:
    return any(entry_id in table for table in _registered.values())


def drops_measurement(path: Path | str, chip: Any, problem: str,
                      instead: str = "that measurement is dropped for this chip, which is treated as unmeasured") -> bool:
    """Whether a measurement of ``path`` that ``chip`` contradicts (a figure above its peak) is set aside
    for that chip: True, with a warning saying ``problem`` and what is done ``instead``, when ``chip`` is
    a user's entry registered under that id (the measurement is of the package's part, not the user's);
    False for the package's own chip, where it is an error in the data that the caller raises."""
    if not is_registered(chip.id):
        return False
    warnings.warn(f"{chip.name} ({chip.id!r}) as registered: {problem} in {Path(path).name}; {instead}",
                  UserWarning, stacklevel=3)
    return True


def remove_registered(*ids: str) -> None:
    """Forget the registered entries with these ids, of any kind (no entry: no error)."""
    for table in _registered.values():
        for i in ids:
            table.pop(i, None)
    _changed()


def clear_registered() -> None:
    """Forget every registered entry."""
    for table in _registered.values():
        table.clear()
    _changed()


class Kind:
    """One kind of catalogue entry: ``what`` (used in error messages), its file in ``data/``, its loader.

    Parameters
    ----------
    what : the kind's name in messages ("chip", "cluster"), and its key in the registry
    filename : the package's file, in :data:`~accelbook.specs.loader.DATA_DIR` (read when first needed,
        so a test may point ``data_dir`` or ``loader.DATA_DIR`` elsewhere and call :meth:`cache_clear`)
    load : a path -> the entries of that file (a tuple of objects with ``id``, ``name``, ``aliases``)
    registrable : whether ``ab.register`` may add entries of this kind
    """

    def __init__(self, what: str, filename: str, load: Callable[[Path], tuple], *, registrable: bool = False):
        self.what, self.filename, self.load, self.registrable = what, filename, load, registrable
        self.data_dir: Path | None = None     # None: the package's data/
        self._builtin: tuple | None = None
        self._merged = functools.lru_cache(maxsize=32)(self._merge)

    def __repr__(self) -> str:
        return f"Kind({self.what!r}, {self.filename!r})"

    @property
    def path(self) -> Path:
        return Path(self.data_dir if self.data_dir is not None else loader.DATA_DIR) / self.filename

    def builtin(self) -> tuple:
        """The entries of the package's own file, read once."""
        if self._builtin is None:
            self._builtin = tuple(self.load(self.path))
        return self._builtin

    def cache_clear(self) -> None:
        """Read the package's file again on next use (tests that point the kind at another file)."""
        self._builtin = None
        self._merged.cache_clear()

    def _merge(self, extra: tuple[tuple[str, int], ...], generation: int) -> Catalogue:
        # registered entries first, then the call's files; ``generation`` only keys the cache
        user = [(p, self.load(p)) for p, _ in extra]
        reg = [("register()", registered(self.what))] if self.registrable else []
        return Catalogue.merge(self.what, self.builtin(), *reg, *user)

    def catalogue(self, *extra_files: str | Path) -> Catalogue:
        """The merged catalogue: the package's entries, the registered ones, those of ``extra_files``."""
        return self._merged(file_keys(extra_files), generation())

    def all(self, *extra_files: str | Path) -> tuple:
        """Every entry, in file order (registered and extra files' entries after the package's)."""
        return self.catalogue(*extra_files).items

    def get(self, name: str, *extra_files: str | Path):
        """The entry called ``name`` (forgiving); :class:`~accelbook.specs.loader.UnknownNameError` if none."""
        return self.catalogue(*extra_files).get(name)
