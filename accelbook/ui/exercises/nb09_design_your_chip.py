"""Exercises of notebook 09: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.chip.design import compare_8t_8i
from accelbook.chip.design_params import builtin_params
from accelbook.ui.exercises.core import Exercise


def _more_hbm_stacks() -> set[str]:
    c = compare_8t_8i()
    return {"decode" if c.iloc[1].n_hbm_stacks > c.iloc[0].n_hbm_stacks else "training"}


def _design(row: int, column: str, power_w: float = 700.0):
    return compare_8t_8i(power_w=power_w).iloc[row][column]


def _design_1000w_answer() -> str:
    loss = {w: 100 * (1 - _design(2, "training_vs_best", w)) for w in (400.0, 700.0, 1000.0)}
    t, c = compare_8t_8i(power_w=1000.0).iloc[0], compare_8t_8i(power_w=1000.0).iloc[2]
    return (f"About {loss[1000.0]:.0f} %, against {loss[700.0]:.0f} % at 700 W and {loss[400.0]:.0f} % at 400 W. The "
            f"training optimum keeps the same split at every budget ({t.matrix_mm2:.0f} mm² of matrix units, "
            f"{t.n_hbm_stacks:.0f} HBM stacks); more watts let it clock that area faster, up to full clock. The "
            f"compromise keeps {c.n_hbm_stacks:.0f} stacks for decode and so has only {c.matrix_mm2:.0f} mm² of matrix "
            "units: under a tight budget both are power-bound and the smaller array's higher clock hides the "
            "difference; with watts to spare, area decides. The richer the power budget, the more a single chip "
            "serving both workloads loses: one reason the eighth-generation TPUs split.")


EXERCISES: list[Exercise] = [
    Exercise("more-hbm-stacks", "09", "Which optimum has more HBM stacks in the default comparison: 'training' or 'decode'?",
             _more_hbm_stacks,
             hint="Decode reads every weight per token; which resource does that need?"),
    Exercise("predict-decode-stacks", "09", "Predict before moving the design sliders: how many HBM stacks does the "
             f"decode optimum take on the default comparison's {builtin_params().area_mm2:.0f} mm², "
             f"{builtin_params().power_w:.0f} W die?", lambda: _design(1, "n_hbm_stacks"), 0.0,
             "Decode reads every weight and the KV cache per token; how many stacks can the die's edge connect?",
             "stacks"),
    Exercise("design-training-limit-400", "09", "At a 400 W budget, what limits the training optimum: 'power', "
             "'compute' or 'memory bandwidth'?", lambda: {_design(0, "training_limit", 400.0)},
             hint="cd.compare_8t_8i(power_w=400): can every mm² of matrix units run at full clock?"),
    Exercise("design-compromise-loss", "09", "How much (%) of the best training throughput does the compromise chip "
             "give up at 700 W?", lambda: 100 * (1 - _design(2, "training_vs_best")), 0.05,
             "1 - training_vs_best of the compromise row of cd.compare_8t_8i().", "%"),
    Exercise("design-training-opt-decode", "09", "What share (%) of the best decode throughput does the training "
             "optimum reach?", lambda: 100 * _design(0, "decode_vs_best"), 0.05,
             "decode_vs_best of the training row: how many HBM stacks did it keep?", "%"),
    Exercise("whatif-design-1000w", "09", "What if the power budget were 1,000 W: how much (%) of the best training "
             "throughput would the compromise chip give up?", lambda: 100 * (1 - _design(2, "training_vs_best", 1000.0)),
             0.05, "cd.compare_8t_8i(power_w=1000).", "%", model_answer=_design_1000w_answer),
]
