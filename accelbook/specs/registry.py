"""A user's own models and chips, resolvable by id everywhere once registered.

``register(model_or_chip_or_path)`` adds a :class:`~accelbook.specs.models.Model` or
:class:`~accelbook.specs.chips.Chip` (an object, or every entry of a user's TOML file in the
catalogue's schema) to the catalogue that ``get_model`` / ``get_chip`` / ``all_models`` /
``all_chips`` read, so that every function taking a name (training, inference, serving, economics,
the dashboards' pickers) accepts its id. The rules are the catalogue's (``Catalogue.merge``): an id,
name or alias that folds to one already in the catalogue is an error naming both, unless
``replace=True`` and the ids are equal (a deliberate override). ``unregister(id)`` and
``clear_registered()`` undo it (tests use them for isolation).

The registry is the only state of the specs layer: the catalogue caches are keyed by its
:func:`generation`, which every change bumps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .loader import Catalogue, checked_path, read_table_file

_entries: dict[str, dict[str, Any]] = {"model": {}, "chip": {}}
_state = {"generation": 0}


def registered(what: str) -> tuple:
    """The registered models (``what="model"``) or chips (``"chip"``), in registration order."""
    return tuple(_entries[what].values())


def generation() -> int:
    """A counter bumped by every change to the registry (a key for the catalogue caches)."""
    return _state["generation"]


def _kind_of(item: Any) -> str:
    from .chips import Chip
    from .models import Model

    if isinstance(item, Model):
        return "model"
    if isinstance(item, Chip):
        return "chip"
    raise TypeError(f"register takes a Model, a Chip or the path of a models/chips TOML file, "
                    f"got {type(item).__name__}")


def _load_file(path: Path | str) -> list:
    from .chips import load_chips
    from .models import load_models

    path = checked_path(path)
    raw = read_table_file(path)
    is_models = any(isinstance(e, dict) and "n_layers" in e for k, e in raw.items() if k != "sources")
    return list(load_models(path) if is_models else load_chips(path))


def _catalogue_items(what: str) -> tuple:
    from .chips import all_chips
    from .models import all_models

    return all_models() if what == "model" else all_chips()


def register(*items: Any, replace: bool = False) -> tuple:
    """Make models and chips resolvable by id everywhere; returns what was registered.

    ``items``: :class:`Model` / :class:`Chip` objects, or paths of TOML files in the schema of
    ``data/models.toml`` or ``data/chips.toml`` (every entry of the file is registered).
    All or nothing: on any error nothing is registered.

    Raises
    ------
    CatalogueError
        (a ValueError) when an id, name or alias collides with an entry of the catalogue (a built-in
        or one registered earlier); with ``replace=True`` an entry with the same id is replaced.
    """
    new: list = []
    for item in items:
        new += _load_file(item) if isinstance(item, (str, Path)) else [item]
    by_kind: dict[str, list] = {"model": [], "chip": []}
    for item in new:
        by_kind[_kind_of(item)].append(item)
    for what, batch in by_kind.items():
        if not batch:
            continue
        ids = [b.id for b in batch]
        dup = {i for i in ids if ids.count(i) > 1}
        if dup:
            raise ValueError(f"register: the {what} id {sorted(dup)[0]!r} is given twice")
        current = _catalogue_items(what)
        taken = {c.id: c for c in current}
        for b in batch:
            if b.id in taken and not replace:
                raise ValueError(
                    f"register: the {what} id {b.id!r} is already in the catalogue ({taken[b.id].name}); "
                    f"choose another id, or pass replace=True to replace it")
        # the catalogue's own collision rules on names and aliases (a CatalogueError naming both)
        Catalogue.merge(what, current, ("register()", batch))
    for what, batch in by_kind.items():
        for b in batch:
            _entries[what][b.id] = b
    if new:
        _state["generation"] += 1
    return tuple(new)


def unregister(*ids: str) -> None:
    """Remove registered models or chips by id (a ``KeyError`` for an id that was not registered)."""
    for i in ids:
        if not any(i in e for e in _entries.values()):
            raise KeyError(f"unregister: {i!r} is not a registered model or chip")
    for i in ids:
        for e in _entries.values():
            e.pop(i, None)
    _state["generation"] += 1


def clear_registered() -> None:
    """Remove every registered model and chip."""
    for e in _entries.values():
        e.clear()
    _state["generation"] += 1
