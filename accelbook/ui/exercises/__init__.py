"""Exercise checkers: ``check("ridge-h100", 295)`` marks an answer right or wrong, with a hint;
``predict("predict-v5p-fp8-gain", 1.5)`` records a prediction, then shows the model's answer unmarked.

Each exercise states its question, computes its expected answer from the catalogue and the model
functions (so it follows the data), and accepts a numeric answer within a tolerance or one of a set
of words. A wrong answer gets a hint, never the answer.

The expected answer, for instructors and tests: ``EXERCISES[id].expected()`` calls the exercise's
answer function and returns what the checker compares with, computed now from the catalogue and the
models: a number (in ``EXERCISES[id].unit``; ``check`` accepts any answer within ``rel_tol`` of it,
relatively, and exactly when ``rel_tol`` is 0) or a set of accepted lower-case words. For example
``EXERCISES["ridge-h100"].expected()`` is 295.3 (FLOP/byte, ±2 %) and
``EXERCISES["decode-bound"].expected()`` is ``{"memory"}``. ``accelbook.ui.solutions`` writes every
exercise's worked solution from these values to ``instructor/solutions.md`` (``make solutions``).

One module per notebook holds that notebook's exercises and the private helpers that compute their
answers (``nb00_start_here`` … ``nb12_capstone``, named as the dashboards' modules are);
:mod:`.core` holds :class:`Exercise`, :class:`Result` and the marking. To add an exercise: an
``Exercise`` in its notebook's module's ``EXERCISES`` list, and its hand answer in
``tests/test_exercises.py``.
"""

from __future__ import annotations

from typing import Any

from accelbook.ui.exercises import (
    nb00_start_here,
    nb01_gpu_vs_tpu,
    nb02_inside_the_chip,
    nb03_interconnects,
    nb04_distributed_training,
    nb05_moe_all_to_all,
    nb06_inference_prefill_decode,
    nb07_inference_asics,
    nb08_token_economics_and_hybrid,
    nb09_design_your_chip,
    nb10_number_formats,
    nb11_design_spaces_at_scale,
    nb12_capstone,
    predictions,
)
from accelbook.ui.exercises.core import Exercise, Result, mark
from accelbook.ui.exercises.predictions import Reveal, read_log

MODULES = (nb00_start_here, nb01_gpu_vs_tpu, nb02_inside_the_chip, nb03_interconnects, nb04_distributed_training,
           nb05_moe_all_to_all, nb06_inference_prefill_decode, nb07_inference_asics, nb08_token_economics_and_hybrid,
           nb09_design_your_chip, nb10_number_formats, nb11_design_spaces_at_scale, nb12_capstone)

EXERCISES: dict[str, Exercise] = {}
for _module in MODULES:
    for _ex in _module.EXERCISES:
        if _ex.id in EXERCISES:
            raise ValueError(f"exercise id {_ex.id!r} is defined twice ({_module.__name__})")
        EXERCISES[_ex.id] = _ex
del _module, _ex


def _exercise(exercise_id: str) -> Exercise:
    try:
        return EXERCISES[exercise_id]
    except KeyError:
        raise ValueError(f"no exercise {exercise_id!r}; have {', '.join(EXERCISES)}") from None


def check(exercise_id: str, answer: Any) -> Result:
    """Mark ``answer`` to exercise ``exercise_id``; returns a Result that displays as ✔ or ✘ with a hint."""
    return mark(_exercise(exercise_id), answer)


def predict(exercise_id: str, value: Any, path=None) -> Reveal:
    """Record ``value`` as the prediction to ``exercise_id`` (an id starting ``predict-``), then show the model's
    answer, unmarked (:mod:`.predictions`: ``"skip"`` records a skip, ``None`` records nothing)."""
    return predictions.predict(_exercise(exercise_id), value, path)


__all__ = ["EXERCISES", "MODULES", "Exercise", "Result", "Reveal", "check", "mark", "predict", "read_log"]
