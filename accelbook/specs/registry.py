"""A user's own models and chips, resolvable by id everywhere once registered.

``register(model_or_chip_or_path)`` adds a :class:`~accelbook.specs.models.Model` or
:class:`~accelbook.specs.chips.Chip` (an object, or every entry of a user's TOML file in the
catalogue's schema) to the catalogue that ``get_model`` / ``get_chip`` / ``all_models`` /
``all_chips`` read, so that every function taking a name (training, inference, serving, economics,
the dashboards' pickers) accepts its id. The rules are the catalogue's (``Catalogue.merge``): an id,
name or alias that folds to one already in the catalogue is an error naming both, unless
``replace=True`` and the ids are equal (a deliberate override). ``unregister(id)`` and
``clear_registered()`` undo it (tests use them for isolation).

The registered entries are the only state of the specs layer; they live in
:mod:`accelbook.specs.catalogue`, beside the caches they key (:func:`~accelbook.specs.catalogue.generation`).
This module imports chips and models; they import only the catalogue, never this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import catalogue
from .chips import Chip, all_chips, check_chip, load_chips
from .loader import Catalogue, checked_path, read_table_file
from .models import Model, all_models, check_model, load_models


def _kind_of(item: Any) -> str:
    if isinstance(item, Model):
        return "model"
    if isinstance(item, Chip):
        return "chip"
    raise TypeError(f"register takes a Model, a Chip or the path of a models/chips TOML file, "
                    f"got {type(item).__name__}")


def _load_file(path: Path | str) -> list:
    path = checked_path(path)
    raw = read_table_file(path)
    is_models = any(isinstance(e, dict) and "n_layers" in e for k, e in raw.items() if k != "sources")
    return list(load_models(path) if is_models else load_chips(path))


def _catalogue_items(what: str) -> tuple:
    return all_models() if what == "model" else all_chips()


def register(*items: Any, replace: bool = False) -> tuple:
    """Make models and chips resolvable by id everywhere; returns what was registered.

    ``items``: :class:`Model` / :class:`Chip` objects, or paths of TOML files in the schema of
    ``data/models.toml`` or ``data/chips.toml`` (every entry of the file is registered).
    ``replace``: True or False. An object must pass the checks a file's entry passes
    (:func:`~accelbook.specs.chips.check_chip`, :func:`~accelbook.specs.models.check_model`).
    All or nothing: on any error nothing is registered.

    Raises
    ------
    CatalogueError
        (a ValueError) when an id, name or alias collides with an entry of the catalogue (a built-in
        or one registered earlier); with ``replace=True`` an entry with the same id is replaced.
    """
    if not isinstance(replace, bool):
        raise TypeError(f"replace must be True or False, got {type(replace).__name__} {replace!r}")
    new: list = []
    for item in items:
        new += _load_file(item) if isinstance(item, (str, Path)) else [item]
    by_kind: dict[str, list] = {"model": [], "chip": []}
    for item in new:
        what = _kind_of(item)
        try:   # an object passes the same checks as a file's entry (a file's entries passed them at load)
            (check_model if what == "model" else check_chip)(item)
        except (TypeError, ValueError) as err:
            raise (TypeError if isinstance(err, TypeError) else ValueError)(f"register: {what} {getattr(item, 'id', '?')!r}: {err}") from None
        by_kind[what].append(item)
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
        if batch:
            catalogue.add_registered(what, batch)
    return tuple(new)


def unregister(*ids: str) -> None:
    """Remove registered models or chips by id (a ``KeyError`` for an id that was not registered)."""
    for i in ids:
        if not catalogue.is_registered(i):
            raise KeyError(f"unregister: {i!r} is not a registered model or chip")
    catalogue.remove_registered(*ids)


def clear_registered() -> None:
    """Remove every registered model and chip."""
    catalogue.clear_registered()
