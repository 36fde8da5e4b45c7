"""Goodput: the share of wall-clock time a training run spends training.

A step-time model predicts the *ideal* time to train, ``t_ideal = tokens / tokens_per_s``. A real run
also stops for failures, restarts and checkpoints, so

    t_train = t_ideal / goodput,    goodput in (0, 1].

The default goodput is measured, not fitted: Llama 3 405B pre-training on up to 16K H100s had 466 job
interruptions in a 54-day snapshot (419 unexpected) and "higher than 90% effective training time"
(Grattafiori et al. 2024, arXiv:2407.21783, §3.3.4), stored in ``data/training_overheads.toml``,
table ``[goodput]``. Worked number: 82.5 ideal days / 0.90 = 91.7 days.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

from accelbook.checks import real
from accelbook.specs.loader import DATA_DIR, Provenance, check_keys, load_sources, parse_quantity, read_table_file

OVERHEADS_PATH = DATA_DIR / "training_overheads.toml"
_KEYS = {"effective_training_time_fraction": "count", "interruptions_count": "count",
         "unexpected_interruptions_count": "count", "snapshot_s": "s"}


@dataclass(frozen=True)
class PublishedGoodput:
    """The published effective-training-time fraction and the interruptions behind it."""

    fraction: float
    interruptions: int
    unexpected_interruptions: int
    snapshot_s: float
    provenance: Provenance


@functools.lru_cache(maxsize=4)
def published_goodput(path=None) -> PublishedGoodput:
    """The ``[goodput]`` table of ``data/training_overheads.toml`` (Llama 3: 0.90)."""
    path = path or OVERHEADS_PATH
    entry = read_table_file(path)["goodput"]
    check_keys(path, "goodput", entry, required=set(_KEYS), optional=set())
    sources = load_sources()
    q = {k: parse_quantity(path, "goodput", k, entry[k], unit, sources) for k, unit in _KEYS.items()}
    frac = q["effective_training_time_fraction"]
    check_goodput(frac.value)
    return PublishedGoodput(frac.value, int(q["interruptions_count"].value),
                            int(q["unexpected_interruptions_count"].value), q["snapshot_s"].value, frac.provenance)


def check_goodput(goodput) -> float:
    """``goodput`` as a float in (0, 1]; ``None`` gives the published value. Else a ValueError."""
    if goodput is None:
        return published_goodput().fraction
    if isinstance(goodput, bool) or not isinstance(goodput, numbers.Real) or not math.isfinite(goodput) \
            or not 0 < goodput <= 1:
        raise ValueError(f"goodput (the share of wall-clock time that trains) must be in (0, 1], got {goodput!r}; "
                         f"1 means no failures or restarts, Llama 3 reported {published_goodput().fraction * 100:.0f} %")
    return float(goodput)


def goodput_words(goodput=None) -> str:
    """The goodput in words, naming its source when it is the published one."""
    g, pub = check_goodput(goodput), published_goodput()
    if g == pub.fraction:
        return (f"the {g * 100:.0f} % effective training time Llama 3 reported ({pub.interruptions} interruptions in "
                f"{pub.snapshot_s / 86400:.0f} days on 16K H100s)")
    return f"{g * 100:.0f} % goodput (Llama 3 reported {pub.fraction * 100:.0f} %)"


def time_to_train_words(ideal_s: float, goodput=None) -> str:
    """``"82.5 days at 100 % → 91.7 days at the 90 % effective training time Llama 3 reported (…)"``."""
    g = check_goodput(goodput)
    real("ideal_s", ideal_s, 0.0)
    return f"{ideal_s / 86400:,.1f} days at 100 % → **{ideal_s / g / 86400:,.1f} days** at {goodput_words(g)}"
