"""Facts quoted in the prose of notebooks/09_design_your_chip.ipynb (keys ``nb09.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.chip import design as cd
from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui.dashboards.nb09_design_your_chip import design_spec
from accelbook.ui.facts import fact

#: the comparison's rows (accelbook.chip.design_search.compare_8t_8i), by their ``design`` label
TRAIN, DECODE, COMPROMISE = "training optimum (8t-like)", "decode optimum (8i-like)", "compromise"
TPU8T, TPU8I = "TPU 8t (published)", "TPU 8i (published)"


def _num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


@catalogue_cache(maxsize=None)
def _cmp(power_w: float | None = None):
    return cd.compare_8t_8i(power_w=power_w)


def _row(design: str, power_w: float | None = None):
    return _cmp(power_w).set_index("design").loc[design]


@catalogue_cache(maxsize=None)
def _best(workload: str, power_w: float | None = None):
    w = cd.TrainingWorkload() if workload == "training" else cd.DecodeWorkload()
    return cd.best_design(w, power_w=power_w)[0]


def _eval(d, workload: str) -> dict:
    return cd.evaluate(d, cd.TrainingWorkload() if workload == "training" else cd.DecodeWorkload())


def _control(name: str) -> float:
    return design_spec().controls[name].value


# -- the catalogue's budgets and Google's published TPU 8 (data/chipdesign.toml)
@fact("nb09.die_mm2")
def die_mm2() -> str:
    return _num(cd.params().area_mm2)


@fact("nb09.power_w")
def power_w() -> str:
    return _num(cd.params().power_w)


@fact("nb09.dash_area_mm2")
def dash_area_mm2() -> str:
    return _num(_control("area_mm2"))


@fact("nb09.dash_power_w")
def dash_power_w() -> str:
    return _num(_control("power_w"))


@fact("nb09.tpu8t_sram_mb")
def tpu8t_sram_mb() -> str:
    return _num(cd.params().tpu8["t_sram_mb"])


@fact("nb09.tpu8i_sram_mb")
def tpu8i_sram_mb() -> str:
    return _num(cd.params().tpu8["i_sram_mb"])


@fact("nb09.tpu8t_stacks")
def tpu8t_stacks() -> str:
    return _num(cd.params().tpu8["t_hbm_stacks"])


@fact("nb09.tpu8i_stacks")
def tpu8i_stacks() -> str:
    return _num(cd.params().tpu8["i_hbm_stacks"])


@fact("nb09.tpu8_sram_ratio")
def tpu8_sram_ratio() -> str:
    t = cd.params().tpu8
    return _num(t["i_sram_mb"] / t["t_sram_mb"])


# -- the default comparison (cd.compare_8t_8i(), 700 W)
@fact("nb09.decode_opt_stacks")
def decode_opt_stacks() -> str:
    return str(int(_row(DECODE).n_hbm_stacks))


@fact("nb09.train_opt_stacks")
def train_opt_stacks() -> str:
    return str(int(_row(TRAIN).n_hbm_stacks))


@fact("nb09.decode_opt_matrix_mm2")
def decode_opt_matrix_mm2() -> str:
    return _num(_row(DECODE).matrix_mm2)


@fact("nb09.decode_opt_tflop_s")
def decode_opt_tflop_s() -> str:
    return _num(_row(DECODE).peak_tflop_s)


@fact("nb09.train_opt_tflop_s")
def train_opt_tflop_s() -> str:
    return _num(_row(TRAIN).peak_tflop_s)


@fact("nb09.decode_opt_sram_mb")
def decode_opt_sram_mb() -> str:
    return _num(_row(DECODE).sram_mb)


@fact("nb09.compromise_matrix_mm2")
def compromise_matrix_mm2() -> str:
    return _num(_row(COMPROMISE).matrix_mm2)


@fact("nb09.compromise_stacks")
def compromise_stacks() -> str:
    return str(int(_row(COMPROMISE).n_hbm_stacks))


@fact("nb09.compromise_sram_mb")
def compromise_sram_mb() -> str:
    return _num(_row(COMPROMISE).sram_mb)


@fact("nb09.decode_speedup")
def decode_speedup() -> str:
    """The decode optimum's decode tokens/s over the training optimum's."""
    return _num(_row(DECODE).decode_tokens_per_s_per_chip / _row(TRAIN).decode_tokens_per_s_per_chip, 1)


@fact("nb09.train_opt_decode_pct")
def train_opt_decode_pct() -> str:
    return _num(100 * _row(TRAIN).decode_vs_best, 1)


@fact("nb09.train_opt_decode_tok_s")
def train_opt_decode_tok_s() -> str:
    return _num(_row(TRAIN).decode_tokens_per_s_per_chip)


@fact("nb09.decode_opt_decode_tok_s")
def decode_opt_decode_tok_s() -> str:
    return _num(_row(DECODE).decode_tokens_per_s_per_chip)


@fact("nb09.compromise_decode_loss_pct")
def compromise_decode_loss_pct() -> str:
    return _num(100 * (1 - _row(COMPROMISE).decode_vs_best), 1)


@fact("nb09.decode_sram_gain_pct")
def decode_sram_gain_pct() -> str:
    """How much the decode optimum's SRAM adds to its decode throughput: the same split without SRAM."""
    d = _best("decode")
    bare = cd.design(d.matrix_mm2, 0.0, d.n_hbm_stacks, d.io_mm2, area_mm2=d.area_budget_mm2, power_w=d.power_budget_w)
    return _num(100 * (_eval(d, "decode")["tokens_per_s_per_chip"] / _eval(bare, "decode")["tokens_per_s_per_chip"] - 1), 1)


@fact("nb09.train_opt_decode_clock_pct")
def train_opt_decode_clock_pct() -> str:
    """The training optimum's matrix units on decode: share of their peak in use (Article 3's idle silicon)."""
    return _num(100 * _eval(_best("training"), "decode")["clock"])


# -- by power budget (the inputs 400, 550, 700 and 1,000 W are the notebook's table's)
def _pct_loss(power: float) -> str:
    return _num(100 * (1 - _row(COMPROMISE, power).training_vs_best), 1)


@fact("nb09.compromise_train_loss_400_pct")
def compromise_train_loss_400_pct() -> str:
    return _pct_loss(400.0)


@fact("nb09.compromise_train_loss_700_pct")
def compromise_train_loss_700_pct() -> str:
    return _pct_loss(700.0)


@fact("nb09.compromise_train_loss_1000_pct")
def compromise_train_loss_1000_pct() -> str:
    return _pct_loss(1000.0)


@fact("nb09.compromise_train_share_700")
def compromise_train_share_700() -> str:
    return _num(_row(COMPROMISE, 700.0).training_vs_best, 3)


def _train_opt(column: str, power: float, digits: int = 0) -> str:
    return _num(float(_row(TRAIN, power)[column]), digits)


@fact("nb09.train_opt_matrix_400")
def train_opt_matrix_400() -> str:
    return _train_opt("matrix_mm2", 400.0)


@fact("nb09.train_opt_matrix_700")
def train_opt_matrix_700() -> str:
    return _train_opt("matrix_mm2", 700.0)


@fact("nb09.train_opt_matrix_1000")
def train_opt_matrix_1000() -> str:
    return _train_opt("matrix_mm2", 1000.0)


@fact("nb09.train_opt_sram_400")
def train_opt_sram_400() -> str:
    return _train_opt("sram_mb", 400.0)


@fact("nb09.train_opt_sram_700")
def train_opt_sram_700() -> str:
    return _train_opt("sram_mb", 700.0)


@fact("nb09.train_opt_sram_1000")
def train_opt_sram_1000() -> str:
    return _train_opt("sram_mb", 1000.0)


@fact("nb09.train_opt_limit_400")
def train_opt_limit_400() -> str:
    return str(_row(TRAIN, 400.0).training_limit)


@fact("nb09.train_opt_limit_700")
def train_opt_limit_700() -> str:
    return str(_row(TRAIN, 700.0).training_limit)


@fact("nb09.train_opt_limit_1000")
def train_opt_limit_1000() -> str:
    return str(_row(TRAIN, 1000.0).training_limit)


def _clock_pct(power: float) -> str:
    return _num(100 * _eval(_best("training", power), "training")["clock"])


@fact("nb09.train_opt_clock_400_pct")
def train_opt_clock_400_pct() -> str:
    return _clock_pct(400.0)


@fact("nb09.train_opt_clock_700_pct")
def train_opt_clock_700_pct() -> str:
    return _clock_pct(700.0)


@fact("nb09.train_opt_clock_1000_pct")
def train_opt_clock_1000_pct() -> str:
    return _clock_pct(1000.0)


@fact("nb09.half_matrix_400_loss_pct")
def half_matrix_400_loss_pct() -> str:
    """At 400 W: the training optimum with half its matrix area, throughput lost (%)."""
    d = _best("training", 400.0)
    half = cd.design(d.matrix_mm2 / 2, d.sram_mm2, d.n_hbm_stacks, d.io_mm2, area_mm2=d.area_budget_mm2, power_w=400.0)
    return _num(100 * (1 - _eval(half, "training")["tokens_per_s_per_chip"] / _eval(d, "training")["tokens_per_s_per_chip"]))


@fact("nb09.half_matrix_400_mm2")
def half_matrix_400_mm2() -> str:
    return _num(_best("training", 400.0).matrix_mm2 / 2)


@fact("nb09.compromise_area_ratio")
def compromise_area_ratio() -> str:
    """The compromise's matrix area as a share of the training optimum's (the loss it tends to at full clock)."""
    return _num(_row(COMPROMISE, 1000.0).matrix_mm2 / _row(TRAIN, 1000.0).matrix_mm2, 3)
