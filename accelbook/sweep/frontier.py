"""Built-in sweep 1: the inference frontier over chip × model × precision × batch × prompt length.

Each configuration calls :func:`accelbook.inference.sweep` (every tensor/pipeline layout of the
system at that one batch) and returns one row per layout that fits. The system is ``n_chips`` chips,
or with ``n_chips = 0`` the smallest of 8, 16, 32, … chips whose memory holds the weights
(:func:`accelbook.inference.min_chips`): 8 GPUs, hundreds of SRAM chips. A configuration that fits no
layout is an error row that says why. :func:`pareto_all` keeps the points that no other beats on
tokens/s per chip and tokens/s per user, over every chip at once.

Default grid: every catalogue chip (not the LPX rack, which is 256 chips) × Llama 3.1 8B and 70B ×
bf16, fp8 × batch 1, 8, 64, 256 × prompt 1,024 and 8,192 tokens (256 out): 32 configurations a chip (992 with
the catalogue's 31 chips; the count follows the catalogue), a few seconds on two workers. A
million-point study changes the lists, and the client.
"""

from __future__ import annotations

import pandas as pd

from accelbook import inference
from accelbook.checks import integral
from accelbook.specs.chips import chips

from .engine import run
from .grid import ERROR

#: catalogue entries that are not one chip (the LPX rack is 256 LP30 chips): left out of the default grid
NOT_A_CHIP = ("groq-lpx",)


def default_grid() -> dict:
    return {"chip": [c for c in chips()["id"] if c not in NOT_A_CHIP], "model": ["llama-3.1-8b", "llama-3.1-70b"], "precision": ["bf16", "fp8"],
            "batch": [1, 8, 64, 256], "prompt_len": [1024, 8192], "output_len": [256], "n_chips": [0]}


def system_chips(model: str, chip: str, precision: str) -> int:
    """The smallest of 8·2^k chips that hold the weights (``n_chips = 0`` in the grid)."""
    need = inference.min_chips(model, chip, precision)
    n = 8
    while n < need:
        n *= 2
    return n


def frontier_point(chip: str, model: str, precision: str, batch: int, prompt_len: int, output_len: int = 256,
                   n_chips: int = 0) -> pd.DataFrame:
    """Every layout of one system at one batch: the rows of :func:`accelbook.inference.sweep`."""
    n = integral("n_chips", n_chips, 0) or system_chips(model, chip, precision)
    df = inference.sweep(model, chip, n, integral("prompt_len", prompt_len), integral("output_len", output_len),
                         precision, batches=[integral("batch", batch)])
    if df.empty:
        raise ValueError(f"{model} at {precision}, batch {batch} × {prompt_len + output_len:,} tokens fits no layout "
                         f"of {n} × {chip}")
    return df.drop(columns=["batch"]).rename(columns={"chip": "chip_name"}).assign(system_chips=n)


def frontier_sweep(grid=None, client=None, **run_kw) -> pd.DataFrame:
    """:func:`frontier_point` over ``grid`` (default :func:`default_grid`) with :func:`~.engine.run`."""
    return run(frontier_point, default_grid() if grid is None else grid, client=client, **run_kw)


def pareto_all(df: pd.DataFrame, by=(), x: str = "tokens_per_s_per_user",
               y: str = "tokens_per_s_per_chip") -> pd.DataFrame:
    """The points no other point beats on both ``x`` and ``y`` (higher is better), over every chip
    at once, error rows left out; one front per group of ``by`` columns, each sorted by ``x``.

    Points the inference model flags as out of its reach (``flag``: e.g. a wafer's single-user speed
    above every published one, :mod:`accelbook.inference.dataflow`) never make the front: a physically
    absurd point would otherwise own it."""
    good = df[df[ERROR].isna()]
    if "flag" in good.columns:
        good = good[good["flag"].fillna("").astype(str) == ""]
    if good.empty:
        raise ValueError("no configuration of the sweep fits: nothing to put on a front")
    by = list(by)
    if not by:
        return inference.pareto(good, x, y).reset_index(drop=True)
    return pd.concat([inference.pareto(g, x, y) for _, g in good.groupby(by, sort=True)], ignore_index=True)
