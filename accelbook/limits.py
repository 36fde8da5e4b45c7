"""Which limit binds, in plain words: one sentence from a result's own time breakdown.

Every result object says what bounds it (``InferenceEstimate.limit``, ``TrainingEstimate.limit``,
:func:`accelbook.chip.roofline.layer_limit`), so that a reader never has to infer the bottleneck from a
chart: ``"memory-bound: reading the weights 140 µs, the math 500 ns"``. The sentence is built
here once, from the parts' times; the parts come from the model that computed them.
"""

from __future__ import annotations

import math
from typing import Mapping


def seconds_words(t: float) -> str:
    """A duration with a unit a person reads at a glance: ``500 ns``, ``140 µs``, ``12.7 ms``, ``3.2 s``,
    ``2.1 h``, ``4.0 days``."""
    if not (isinstance(t, (int, float)) and math.isfinite(t) and t >= 0):
        raise ValueError(f"a duration must be a finite number >= 0 s, got {t!r}")
    for scale, unit in ((86400.0, " days"), (3600.0, " h"), (1.0, " s"), (1e-3, " ms"), (1e-6, " µs"), (1e-9, " ns")):
        if t >= scale or scale == 1e-9:
            v = t / scale
            return f"{v:.3g}{unit}" if v < 10 else f"{v:,.0f}{unit}"
    raise AssertionError("unreachable")


def binding_sentence(bound: str, parts: Mapping[str, float], lead: str = "") -> str:
    """``"<lead><bound>-bound: <first part> <t>, <second> <t>, …"``; ``parts`` in the order to say them
    (the binding one first), parts of zero time left out; ``bound`` a word such as ``"memory"``."""
    said = [f"{name} {seconds_words(t)}" for name, t in parts.items() if t > 0]
    return f"{lead}{bound}-bound" + (": " + ", ".join(said) if said else "")


def largest(parts: Mapping[str, float]) -> str:
    """The name of the part with the largest time."""
    return max(parts, key=lambda k: parts[k])


def grouped_sentence(groups: Mapping[str, Mapping[str, float]], lead: str = "", top: int | None = None,
                     by_size: bool = False) -> str:
    """:func:`binding_sentence` where the bound is the group of parts that takes longest in total
    (``{"memory": {"reading the weights": 2e-3, ...}, "compute": {...}}``): that group's parts first, then
    the others', each in the given order or, with ``by_size``, longest first; at most ``top`` parts."""
    bound = max(groups, key=lambda g: sum(groups[g].values()))

    def ordered(parts: Mapping[str, float]) -> list[tuple[str, float]]:
        items = list(parts.items())
        return sorted(items, key=lambda kv: -kv[1]) if by_size else items

    rest = ordered({k: v for g in groups if g != bound for k, v in groups[g].items()})
    said = (ordered(groups[bound]) + rest)[:top]
    return binding_sentence(bound, dict(said), lead)
