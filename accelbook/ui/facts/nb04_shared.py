"""Formatters and cached computations the fact modules of notebook 04 share (``nb04_distributed_training``,
``nb04_scaling``); defines no fact."""

from __future__ import annotations

from accelbook import training
from accelbook.specs.catalogue import catalogue_cache
from accelbook.training.framework import framework_defaults
from accelbook.ui.exercises import EXERCISES

#: the runs of 2021-22 on A100s that section 4's first bullet groups (GPT-3, the 530B model, BLOOM)
A100_RUNS = ("gpt3-175b-ptdp-384", "gpt3-175b-ptdp-768", "gpt3-175b-ptdp-1536", "mt-nlg-530b-ptdp-2520",
              "mt-nlg-530b-sp-2240", "bloom-176b-384")


def signed(x: float) -> str:
    return f"{100 * x:+.0f}".replace("-", "\u2212")


def pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}"


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x: float) -> str:
    """``2.52 × 10¹²``: three significant figures."""
    mant, exp = f"{x:.2e}".split("e")
    return f"{mant} × 10{str(int(exp)).translate(SUPERSCRIPT)}"


def answer(exercise_id: str) -> float:
    return float(EXERCISES[exercise_id].expected())


# -- shared computations (cached: the validation table and the searches take seconds) -------------------------


@catalogue_cache(maxsize=None)
def validation():
    return training.validation_table()


@catalogue_cache(maxsize=None)
def errors():
    return validation().set_index("id")["error"]


@catalogue_cache(maxsize=None)
def targets():
    v = validation()
    return v[(v["role"] == "target") & v["error"].notna()]


@catalogue_cache(maxsize=None)
def default_70b(tp_overlap: float = 0.0):
    # the training dashboard's defaults (cell 12 and the pitfall of cell 52): Llama 3.1 70B, 1,024 H100, TP8 PP4
    return training.estimate("llama-3.1-70b", "h100", 1024, 2**24, 8192, tp=8, pp=4, tp_overlap=tp_overlap)


@catalogue_cache(maxsize=None)
def mfu_compare():
    # section 5's table (cell 37): the search's best layout for Llama 3.1 70B at 4K on 1,024 chips of each kind
    return {chip: training.search("llama-3.1-70b", chip, 1024, 2**22, 4096, top=1).attrs["best"]
            for chip in ("h100", "tpu-v5p")}


@catalogue_cache(maxsize=None)
def waterfall_405b():
    return training.waterfall("llama31-405b-8k")


@catalogue_cache(maxsize=None)
def scaling_claims():
    # cell 46: Trillium at 1, 12 and 24 pods, and MLPerf's 768 -> 3,584 H100
    tr = training.scaling("gpt3-175b", "tpu-v6e", [256, 3072, 6144], 2048, batch_tokens_per_chip=2 * 2048)
    eff = tr.set_index("n_chips")["efficiency"]
    ml = training.scaling("gpt3-175b", "h100", [768, 3584], 2048, batch_tokens_per_chip=2 * 2048)
    return float(eff.loc[3072]), float(eff.loc[6144]), ml.set_index("n_chips")


def state_bytes_per_param() -> int:
    fw = framework_defaults()
    return int(fw.weight_bytes_per_param + fw.grad_bytes_per_param + fw.optimizer_bytes_per_param)


def flag_words(chip: str, precision: str, mfu: float) -> str:
    """The plausibility mark to print beside an MFU (:func:`accelbook.training.plausibility`): ``"⚑ above the 47 %
    any published run reached"`` or ``"within the 47 % published"``; never empty, so a fact always renders."""
    p = training.plausibility(chip, precision, mfu)
    if p.ceiling is None:
        return "no published maximum to check against"
    if p.flagged:
        return f"⚑ above the {pct(p.ceiling)} % any published run reached"
    return f"within the {pct(p.ceiling)} % published"
