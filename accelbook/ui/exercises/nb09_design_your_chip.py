"""Exercises of notebook 09: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.chip.design import compare_8t_8i
from accelbook.ui.exercises.core import Exercise


def _more_hbm_stacks() -> set[str]:
    c = compare_8t_8i()
    return {"decode" if c.iloc[1].n_hbm_stacks > c.iloc[0].n_hbm_stacks else "training"}


def _design(row: int, column: str, power_w: float = 700.0):
    return compare_8t_8i(power_w=power_w).iloc[row][column]


EXERCISES: list[Exercise] = [
    Exercise("more-hbm-stacks", "09", "Which optimum has more HBM stacks in the default comparison: 'training' or 'decode'?",
             _more_hbm_stacks,
             hint="Decode reads every weight per token; which resource does that need?"),
    Exercise("predict-decode-stacks", "09", "Predict before moving the design sliders: how many HBM stacks does the "
             "decode optimum take on the default 820 mm², 700 W die?", lambda: _design(1, "n_hbm_stacks"), 0.0,
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
             0.05, "cd.compare_8t_8i(power_w=1000).", "%", model_answer="About 10 %, against 8 % at 700 W and 5 % at "
             "400 W. More watts let the training optimum clock more matrix area; the compromise keeps all 8 HBM stacks "
             "for decode and cannot give that area to matrix units. The richer the power budget, the more a single "
             "chip serving both workloads loses: one reason the eighth-generation TPUs split."),
]
