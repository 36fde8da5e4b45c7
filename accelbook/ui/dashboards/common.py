"""Option lists and small helpers the notebooks' dashboards share.

The option lists are built from the catalogue when a spec is first built, so a chip or model added
to ``data/`` shows up in every dashboard's dropdown without code.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from accelbook.specs.chips import all_chips
from accelbook.specs.models import all_models


def chip_options() -> list[tuple[str, str]]:
    """(name, id) of every chip in the catalogue, for a ``Choice``."""
    return [(c.name, c.id) for c in all_chips()]


def model_options() -> list[tuple[str, str]]:
    """(name, id) of every model in the catalogue, for a ``Choice``."""
    return [(m.name, m.id) for m in all_models()]


def existing(ids: Iterable[str]) -> tuple[str, ...]:
    """The chip ids of a preset that the catalogue has (a preset survives a chip's removal)."""
    have = {c.id for c in all_chips()}
    return tuple(i for i in ids if i in have)


def require_some(values: Sequence, what: str) -> None:
    """Refuse an empty multi-select: ``ValueError("pick at least one <what>")``."""
    if not values:
        raise ValueError(f"pick at least one {what}")


def markdown_table(columns: Sequence[str], rows: Iterable[str]) -> str:
    """A Markdown table: a header of ``columns`` over ``rows``, each already written as ``| a | b |``."""
    head = "| " + " | ".join(columns) + " |"
    rule = "|" + "---|" * len(columns)
    return "\n".join([head, rule, *rows])
