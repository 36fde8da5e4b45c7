"""Named values the prose quotes: every figure a notebook, the README or an instructor file prints in its
words is one of these, computed now from the catalogue and the models, or a published figure with its
source beside it.

A figure in Markdown is written between two HTML comments that name its fact (invisible when the
Markdown is rendered, in JupyterLab and in the book)::

    a tiny all-reduce on 8 H100s costs about <!--f:nb03.tiny_allreduce_us-->15<!--/f--> µs

``python -m accelbook.ui.prose`` (``make prose``) writes each fact's value between its marks, and
``tests/test_prose.py`` renders every file again and fails on any difference: a changed model changes
its prose, or the build says so. The unit stays outside the marks, in the sentence.

One module per notebook (``nb00_start_here`` … ``nb12_capstone``, named as the exercises' and the
dashboards' modules are) and one for the course files (``course``) define the facts, each a function
of no arguments that returns the text to print, registered with :func:`fact` under a key that starts
with its module's prefix (``nb03.``, ``course.``). A fact calls the package's public functions; it never
re-derives a formula.

Claim verdicts are facts too, read from the ledger (``data/claims.toml``):
``<!--f:claim.<id>-->not supported<!--/f-->`` prints the verdict that
:func:`accelbook.economics.claims.evaluate` computes now, never a typed one.
"""

from __future__ import annotations

import importlib
from typing import Callable

from accelbook.specs.catalogue import catalogue_cache

FACTS: dict[str, Callable[[], str]] = {}

#: the fact modules, imported (and so registered) by :func:`load`
MODULES = (
    "nb00_start_here", "nb01_gpu_vs_tpu", "nb02_inside_the_chip", "nb03_interconnects", "nb03_scaling",
    "nb04_distributed_training", "nb04_gemm", "nb04_heldout", "nb04_scaling", "nb04_terms", "nb05_moe_all_to_all", "nb06_inference_prefill_decode", "nb06_rows",
    "nb07_inference_asics", "nb08_token_economics_and_hybrid", "nb09_design_your_chip",
    "nb10_number_formats", "nb11_design_spaces_at_scale", "nb12_capstone", "course",
)

CLAIM_PREFIX = "claim."


def fact(key: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    """Register a function of no arguments as the fact ``key`` (its text, a ``str``)."""
    def register(fn: Callable[[], str]) -> Callable[[], str]:
        if key in FACTS:
            raise ValueError(f"fact {key!r} is defined twice")
        FACTS[key] = fn
        return fn
    return register


@catalogue_cache(maxsize=None)
def load() -> dict[str, Callable[[], str]]:
    """Every fact module imported; the registry."""
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
    return FACTS


def _claim_verdict(claim_id: str) -> str:
    from accelbook.economics import claims

    by_id = {c.id: c for c in claims.load_claims()}
    if claim_id not in by_id:
        raise KeyError(f"no claim {claim_id!r} in data/claims.toml")
    return claims.evaluate(by_id[claim_id]).verdict


@catalogue_cache(maxsize=None)
def value(key: str) -> str:
    """The text of fact ``key`` now (cached for the process: the catalogue does not change under it)."""
    if key.startswith(CLAIM_PREFIX):
        return _claim_verdict(key[len(CLAIM_PREFIX):])
    facts = load()
    if key not in facts:
        raise KeyError(f"no fact {key!r}: define it in accelbook/ui/facts/ (known prefixes: "
                       f"{sorted({k.split('.')[0] for k in facts})})")
    text = facts[key]()
    if not isinstance(text, str) or not text.strip() or "<!--" in text or "\n" in text:
        raise ValueError(f"fact {key!r} must return one line of text, got {text!r}")
    return text
