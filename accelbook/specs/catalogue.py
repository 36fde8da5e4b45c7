"""One catalogue per kind of thing (chips, models, clusters, fabrics): its file, its parse, its look-up.

A :class:`Kind` owns one ``data/*.toml`` file: ``load(path)`` turns a file in its schema into entries
(each with ``id``, ``name`` and ``aliases``), read once; :meth:`Kind.all` and :meth:`Kind.get` add the
entries a user registered (chips and models: :mod:`accelbook.specs.registry`) and the files a call
names, and resolve a name forgivingly (:class:`~accelbook.specs.loader.Catalogue`: the id, then a
name or alias as written, then :func:`~accelbook.specs.loader.fuzzy_key` when one entry matches).

The registered entries are the only state of the specs layer. They live here, beside the caches
they invalidate: every change bumps :func:`generation`, which keys each kind's merged catalogue.
``chips.py``, ``models.py``, ``clusters.py`` and ``fabrics.py`` each declare their kind
(``CHIPS = Kind("chip", "chips.toml", load_chips, registrable=True)``) and import only this
module and the loader; ``registry.py`` imports them, never the other way round.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Iterable

from . import loader
from .loader import Catalogue, file_keys

_registered: dict[str, dict[str, Any]] = {}
_state = {"generation": 0}


def registered(what: str) -> tuple:
    """The entries of kind ``what`` (``"model"``, ``"chip"``) a user registered, in registration order."""
    return tuple(_registered.get(what, {}).values())


def generation() -> int:
    """A counter bumped by every change to the registered entries (a key for the catalogue caches)."""
    return _state["generation"]


def add_registered(what: str, items: Iterable) -> None:
    """Register ``items`` (already checked by the caller) under kind ``what``; an equal id replaces."""
    table = _registered.setdefault(what, {})
    for item in items:
        table[item.id] = item
    _state["generation"] += 1


def is_registered(entry_id: str) -> bool:
    return any(entry_id in table for table in _registered.values())


def remove_registered(*ids: str) -> None:
    """Forget the registered entries with these ids, of any kind (no entry: no error)."""
    for table in _registered.values():
        for i in ids:
            table.pop(i, None)
    _state["generation"] += 1


def clear_registered() -> None:
    """Forget every registered entry."""
    for table in _registered.values():
        table.clear()
    _state["generation"] += 1


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
