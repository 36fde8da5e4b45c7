"""Model FLOPs utilisation: ONE definition, with its convention named (used by training and economics).

    MFU = tokens_per_s_per_chip · C / P

``C`` the training FLOPs per token the model needs, :func:`counted_flops_per_token`, and ``P`` the
chip's dense peak, :func:`reference_peak_flop_s`. Two choices change the number, so both are
arguments with a default:

- ``attention``: "full" counts every score of the ``s × s`` attention matrix (PaLM's
  ``6N + 12·L·H·d_h·s``); "causal" halves the attention term (the work a causal kernel does).
- ``peak``: "bf16" divides by the dense bf16 peak whatever the run's precision; "precision" by the
  dense peak at the run's precision (an fp8 run against the fp8 peak).

**Default: full attention, bf16 dense peak** (:data:`DEFAULT_ATTENTION`, :data:`DEFAULT_PEAK`),
because it is the convention of the papers whose MFUs students compare: PaLM (Chowdhery et al.
2022, arXiv:2204.02311, App. B: 6N + 12·L·H·Q·T over the bf16 peak), Megatron-LM (Narayanan et al.
2021, arXiv:2104.04473, eq. 3, full attention), the Llama 3 paper (arXiv:2407.21783, Table 4,
"BF16 MFU") and nanoGPT's ``estimate_mfu`` (6N + 12·L·H·Q·T over A100's bf16 312 TFLOP/s). Taking the
bf16 peak also keeps MFU a measure of speed: an fp8 step 28 % faster has a 28 % higher MFU, where
against its own fp8 peak (twice bf16's) it would read lower than the slower bf16 run. The other
conventions remain available by name (``TrainingEstimate.mfu_as``); the validation table compares
each published run in its authors' own (``data/training_runs.toml``, ``convention``).

Worked number: Llama 3.1 70B at s = 4096 needs C = 4.49e11 FLOP/token with full attention; 1,000
tokens/s per H100 (dense bf16 peak 989.4 TFLOP/s) is MFU = 1000 · 4.49e11 / 989.4e12 = 0.454.

Hardware FLOPs (HFU, and the "hardware_full" convention of Narayanan et al. 2021, eq. 3) count
what is executed: with full recomputation the transformer layers' forward runs twice, so their
FLOPs are ×4/3 while the logit layer's (6·V·d per token) are not.
"""

from __future__ import annotations

import numpy as np

from accelbook.checks import at_most, instance, one_of, output, positive_array, real, whole
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.models import Model, get_model

from .arguments import MAX_SEQ_LEN

#: how the attention scores are counted: every score, or the causal half
ATTENTION_COUNTS = ("full", "causal")
#: which dense peak MFU divides by: bf16's, or the one at the run's precision
PEAKS = ("bf16", "precision")
DEFAULT_ATTENTION = "full"
DEFAULT_PEAK = "bf16"


def convention_name(attention: str = DEFAULT_ATTENTION, peak: str = DEFAULT_PEAK, precision: str = "bf16") -> str:
    """The convention in words: ``"model FLOPs (full attention) / dense bf16 peak"``."""
    one_of("attention", attention, ATTENTION_COUNTS)
    one_of("peak", peak, PEAKS)
    return f"model FLOPs ({attention} attention) / dense {'bf16' if peak == 'bf16' else precision} peak"


def counted_flops_per_token(model: Model, seq_len: int, attention: str = DEFAULT_ATTENTION,
                            hardware_recompute: bool = False) -> float:
    """Training FLOPs per token ``C`` (FLOP) as a convention counts them.

    Model FLOPs: ``Model.flops_per_token(s, training=True, causal=attention == "causal")``.
    ``hardware_recompute=True`` (full recomputation, hardware FLOPs, Narayanan et al. 2021 eq. 3):
    ``C_head + (C - C_head)·4/3`` with ``C_head = 6·V·d`` (the logit layer is not recomputed).
    """
    one_of("attention", attention, ATTENTION_COUNTS)
    model = instance("model", model, Model, get_model)
    seq_len = at_most("seq_len", whole("seq_len", seq_len), MAX_SEQ_LEN, "accelbook.training.arguments.MAX_SEQ_LEN")
    if not isinstance(hardware_recompute, (bool, np.bool_)):
        raise TypeError(f"hardware_recompute must be True or False, got {hardware_recompute!r}")
    flops = model.flops_per_token(seq_len, training=True, causal=attention == "causal")
    if hardware_recompute:
        head = 6.0 * model.vocab_size * model.d_model
        flops = head + (flops - head) * 4.0 / 3.0
    return flops


def reference_peak_flop_s(chip: Chip, precision: str = "bf16", peak: str = DEFAULT_PEAK) -> float:
    """The peak ``P`` (FLOP/s) MFU divides by: the dense bf16 peak, or that at ``precision``."""
    one_of("peak", peak, PEAKS)
    chip = instance("chip", chip, Chip, get_chip)
    return chip.peak_flop_s("bf16" if peak == "bf16" else precision)


def model_flops_utilisation(tokens_per_s_per_chip: float, model: Model, chip: Chip, seq_len: int, precision: str = "bf16",
        attention: str = DEFAULT_ATTENTION, peak: str = DEFAULT_PEAK) -> float:
    """Model FLOPs utilisation ``tokens_per_s_per_chip · C / P`` of a run at ``precision``.

    ``tokens_per_s_per_chip`` in tokens/s; ``C`` = :func:`counted_flops_per_token` (``attention``),
    ``P`` = :func:`reference_peak_flop_s` (``peak``). Default: full attention, bf16 peak (see the
    module docstring for why and the sources).
    """
    tps = (positive_array("tokens_per_s_per_chip", tokens_per_s_per_chip, allow_zero=True)
           if isinstance(tokens_per_s_per_chip, np.ndarray) else
           real("tokens_per_s_per_chip", tokens_per_s_per_chip, 0.0, 1e15))
    return output("training.model_flops_utilisation MFU", tps * counted_flops_per_token(model, seq_len, attention)
                  / reference_peak_flop_s(chip, precision, peak))
