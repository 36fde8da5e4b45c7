"""Shared helpers of the course facts (:mod:`accelbook.ui.facts.course` and
:mod:`accelbook.ui.facts.course_misconceptions`): how a figure is printed, and the computations several
facts read (each cached for the process). No facts here."""

from __future__ import annotations

from accelbook.specs.catalogue import catalogue_cache


def pct(x: float, digits: int = 0) -> str:
    return f"{x * 100:.{digits}f}"


def signed(x: float, digits: int = 0) -> str:
    return f"{x * 100:+.{digits}f}".replace("-", "\u2212")


def num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def chip(cid: str):
    from accelbook.specs.chips import get_chip

    return get_chip(cid)


def short(c) -> str:
    """A chip's short name as the prose writes it: ``H100``, ``TPU v5p``."""
    for alias in c.aliases:
        if alias.startswith("TPU "):
            return alias
    return c.aliases[0] if c.aliases else c.name


def listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@catalogue_cache(maxsize=None)
def train_band():
    from accelbook import training

    return training.error_band()


@catalogue_cache(maxsize=None)
def inf_bands():
    from accelbook import inference

    return inference.error_band()


@catalogue_cache(maxsize=None)
def params_error():
    import accelbook as ab

    return ab.models(seq_len=4096).set_index("id")["params_error"]


@catalogue_cache(maxsize=None)
def framework():
    from accelbook.training.framework import framework_defaults

    return framework_defaults()


@catalogue_cache(maxsize=None)
def compromise():
    from accelbook.chip import design as cd

    return cd.compare_8t_8i().iloc[2]


def expected(exercise_id: str):
    from accelbook.ui.exercises import EXERCISES

    return EXERCISES[exercise_id].expected()
