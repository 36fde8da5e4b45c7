"""Facts quoted in the prose of notebooks/12_capstone.ipynb (keys ``nb12.*``); see :mod:`accelbook.ui.facts`.

The brief's numbers (tokens, context, deadline, objectives) are the ones the capstone's exercises read
(:mod:`accelbook.ui.exercises.nb12_capstone`), so the prose, the checker and the notebook's code share them."""

from __future__ import annotations

import math

from accelbook import inference, training
from accelbook.chip import design, roofline
from accelbook.economics import rent_or_own
from accelbook.economics.fleet import HOURS_PER_MONTH
from accelbook.inference import serving
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.exercises.nb12_capstone import (
    CHAT_RATES,
    CHAT_TOKENS_PER_MONTH,
    DEADLINE_DAYS,
    GLOBAL_BATCH_TOKENS,
    MODEL,
    OUTPUT_TOKENS,
    PROMPT_TOKENS,
    SEQ_LEN,
    TBT_SLO_S,
    TRAIN_TOKENS,
    TTFT_SLO_S,
)
from accelbook.ui.facts import fact

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sci(x: float, digits: int = 1) -> str:
    mant, exp = f"{x:.{digits}e}".split("e")
    return f"{mant} × 10{str(int(exp)).translate(_SUPERSCRIPT)}"


def _signed(x: float) -> str:
    return f"{100 * x:+.0f}".replace("-", "\u2212")


def _answer(exercise_id: str):
    return EXERCISES[exercise_id].expected()


# -- shared computations (cached: searches and the serving simulator take seconds) ------------------------------------


@catalogue_cache(maxsize=None)
def _train(chip: str, n_chips: int):
    """Section 4's row for ``n_chips`` × ``chip``: (days by the model, days at its median error, at its worst error,
    USD at its median error or NaN without a price)."""
    e = training.search(MODEL, chip, n_chips, GLOBAL_BATCH_TOKENS, SEQ_LEN, top=1).attrs["best"]
    band = training.error_band()
    days = e.time_to_train(TRAIN_TOKENS) / 86400
    cost = e.cost_usd(TRAIN_TOKENS) if get_chip(chip).price_usd_per_hour else math.nan
    return days, days * (1 + band.median), days * (1 + band.high), cost * (1 + band.median)


@catalogue_cache(maxsize=None)
def _chat(tpot_target_s: float = TBT_SLO_S):
    return inference.max_throughput(MODEL, "h200", 8, PROMPT_TOKENS, OUTPUT_TOKENS, "fp8", tpot_target_s=tpot_target_s,
                                    ttft_target_s=TTFT_SLO_S)


@catalogue_cache(maxsize=None)
def _sustained_rate() -> float:
    # section 5's load sweep: the largest offered rate at which one 8 × H200 replica meets both objectives at p99
    cost = inference.step_cost(MODEL, "h200", 8, "fp8")
    load = serving.load_sweep(cost, list(CHAT_RATES), n_requests=2000, prompt=("lognormal", PROMPT_TOKENS, 0.5),
                              output=("lognormal", OUTPUT_TOKENS, 0.5), ttft_slo_s=TTFT_SLO_S, tbt_slo_s=TBT_SLO_S)
    ok = load[(load["ttft_p99_s"] <= TTFT_SLO_S) & (load["tbt_p99_s"] <= TBT_SLO_S)]
    return float(ok["rate_per_s"].max())


@catalogue_cache(maxsize=None)
def _dies():
    return design.compare_8t_8i().set_index("design")


def _chat_tokens_per_s() -> float:
    return CHAT_TOKENS_PER_MONTH / (HOURS_PER_MONTH * 3600)


def _thr_median() -> float:
    return inference.error_band("tokens_per_s_per_chip").median


def _rent_own():
    return rent_or_own("h200", 1000.0, utilisation=0.5).set_index("option")["usd_per_hour"]


# -- the brief ---------------------------------------------------------------------------------------------------------


@fact("nb12.deadline_days")
def deadline_days() -> str:
    return f"{DEADLINE_DAYS:.0f}"


@fact("nb12.ttft_slo_s")
def ttft_slo_s() -> str:
    return f"{TTFT_SLO_S:g}"


@fact("nb12.tbt_slo_ms")
def tbt_slo_ms() -> str:
    return f"{TBT_SLO_S * 1e3:.0f}"


@fact("nb12.hours_per_month")
def hours_per_month() -> str:
    return f"{HOURS_PER_MONTH:.0f}"


@fact("nb12.chat_tokens_per_s")
def chat_tokens_per_s() -> str:
    return f"{_chat_tokens_per_s():,.0f}"


@fact("nb12.chat_mean_rate")
def chat_mean_rate() -> str:
    return f"{_chat_tokens_per_s() / OUTPUT_TOKENS:.1f}"


@fact("nb12.chat_peak_rate")
def chat_peak_rate() -> str:
    return f"{_answer('cap-chat-peak-rate'):.1f}"


@fact("nb12.params_e9")
def params_e9() -> str:
    return f"{get_model(MODEL).params / 1e9:.1f}"


@fact("nb12.matmul_flops")
def matmul_flops() -> str:
    return _sci(6 * get_model(MODEL).params * TRAIN_TOKENS, 2)


@fact("nb12.train_flops_causal")
def train_flops_causal() -> str:
    return _sci(get_model(MODEL).flops_per_token(SEQ_LEN, training=True, causal=True) * TRAIN_TOKENS)


# -- what binds ----------------------------------------------------------------------------------------------------------


@fact("nb12.decode_flop_per_byte")
def decode_flop_per_byte() -> str:
    ops = roofline.layer_roofline(MODEL, "h200", "decode", 1, SEQ_LEN, "bf16")
    return f"{ops['flops'].sum() / ops['bytes'].sum():.0f}"


# -- training --------------------------------------------------------------------------------------------------------------


@fact("nb12.goodput_pct")
def goodput_pct() -> str:
    return f"{100 * training.published_goodput().fraction:.0f}"


@fact("nb12.train_median_pct")
def train_median_pct() -> str:
    return f"{100 * training.error_band().median:.0f}"


@fact("nb12.train_median_signed")
def train_median_signed() -> str:
    return _signed(training.error_band().median)


@fact("nb12.h100_peak_tflops")
def h100_peak_tflops() -> str:
    return f"{get_chip('h100').peak_flop_s('bf16') / 1e12:.0f}"


def _peak_days_2048() -> float:
    # the first guess of section 4: the matmuls' 6N FLOPs a token at the dense bf16 peak of 2,048 H100s
    return 6 * get_model(MODEL).params * TRAIN_TOKENS / (2048 * get_chip("h100").peak_flop_s("bf16")) / 86400


@fact("nb12.peak_days_2048")
def peak_days_2048() -> str:
    return f"{_peak_days_2048():.0f}"


@fact("nb12.peak_days_2048_mfu06")
def peak_days_2048_mfu06() -> str:
    return f"{_peak_days_2048() / 0.6:.0f}"


@fact("nb12.h100_2048_days_median")
def h100_2048_days_median() -> str:
    return f"{_answer('predict-cap-h100-days'):.0f}"


@fact("nb12.h100_2048_days_worst")
def h100_2048_days_worst() -> str:
    return f"{_train('h100', 2048)[2]:.0f}"


@fact("nb12.v5p_over_h100_cost_pct")
def v5p_over_h100_cost_pct() -> str:
    return f"{100 * _train('tpu-v5p', 4096)[3] / _train('h100', 4096)[3]:.0f}"


@fact("nb12.maxtext_max_error")
def maxtext_max_error() -> str:
    err = training.validation_table().set_index("id")["error"]
    return _signed(err[[i for i in err.index if i.startswith("maxtext")]].max())


@fact("nb12.v5p_4096_days")
def v5p_4096_days() -> str:
    return f"{_train('tpu-v5p', 4096)[0]:.0f}"


@fact("nb12.v5p_4096_days_median")
def v5p_4096_days_median() -> str:
    return f"{_train('tpu-v5p', 4096)[1]:.0f}"


@fact("nb12.v5p_4096_days_worst")
def v5p_4096_days_worst() -> str:
    return f"{_train('tpu-v5p', 4096)[2]:.0f}"


@fact("nb12.h100_4096_days_median")
def h100_4096_days_median() -> str:
    return f"{_train('h100', 4096)[1]:.0f}"


@fact("nb12.v5p_4096_usd_m")
def v5p_4096_usd_m() -> str:
    return f"{_train('tpu-v5p', 4096)[3] / 1e6:.0f}"


@fact("nb12.h100_4096_usd_m")
def h100_4096_usd_m() -> str:
    return f"{_train('h100', 4096)[3] / 1e6:.1f}"


@fact("nb12.h100_4096_usd_m_rounded")
def h100_4096_usd_m_rounded() -> str:
    return f"{_train('h100', 4096)[3] / 1e6:.0f}"


@fact("nb12.h100_2048_usd_m")
def h100_2048_usd_m() -> str:
    return f"{_train('h100', 2048)[3] / 1e6:.1f}"


# -- serving ---------------------------------------------------------------------------------------------------------------


@fact("nb12.ttft_median_error")
def ttft_median_error() -> str:
    return _signed(inference.error_band("ttft_ms").median)


@fact("nb12.chat_idle_ttft_s")
def chat_idle_ttft_s() -> str:
    return f"{_chat().ttft_s:.1f}"


@fact("nb12.fleet_tokens_per_s_per_user")
def fleet_tokens_per_s_per_user() -> str:
    # the chat workload's per-user speed in section 6's fleet: one token per time-between-tokens objective
    return f"{1 / TBT_SLO_S:.0f}"


@fact("nb12.sustained_rate")
def sustained_rate() -> str:
    return f"{_sustained_rate():g}"


@fact("nb12.thr_median")
def thr_median() -> str:
    return f"{_thr_median():.2f}"


@fact("nb12.replicas_ratio")
def replicas_ratio() -> str:
    return f"{_answer('cap-chat-peak-rate') * (1 + _thr_median()) / _sustained_rate():.1f}"


@fact("nb12.chat_replicas")
def chat_replicas() -> str:
    return f"{_answer('cap-chat-replicas'):.0f}"


@fact("nb12.chat_gpus")
def chat_gpus() -> str:
    return f"{8 * _answer('cap-chat-replicas'):.0f}"


@fact("nb12.chat_replicas_no_error")
def chat_replicas_no_error() -> str:
    return f"{math.ceil(_answer('cap-chat-peak-rate') / _sustained_rate()):.0f}"


@fact("nb12.tbt30_tokens_per_chip")
def tbt30_tokens_per_chip() -> str:
    return f"{_answer('whatif-cap-tbt-30ms'):,.0f}"


@fact("nb12.tbt30_batch")
def tbt30_batch() -> str:
    return f"{_chat(0.03).config['batch_size']}"


@fact("nb12.tbt50_tokens_per_chip")
def tbt50_tokens_per_chip() -> str:
    return f"{_chat().tokens_per_s_per_chip:,.0f}"


@fact("nb12.tbt50_batch")
def tbt50_batch() -> str:
    return f"{_chat().config['batch_size']}"


# -- economics and chip design ---------------------------------------------------------------------------------------------


@fact("nb12.rent_over_own")
def rent_over_own() -> str:
    return f"{_answer('cap-rent-over-own'):.1f}"


@fact("nb12.rent_per_useful_hour")
def rent_per_useful_hour() -> str:
    return f"{_rent_own()['rent']:.0f}"


@fact("nb12.h200_price")
def h200_price() -> str:
    return f"{get_chip('h200').price_usd_per_hour:.0f}"


@fact("nb12.own_per_useful_hour")
def own_per_useful_hour() -> str:
    return f"{_rent_own()['own']:.1f}"


@fact("nb12.compromise_training_loss")
def compromise_training_loss() -> str:
    return f"{100 * (1 - _dies().loc['compromise', 'training_vs_best']):.0f}"


@fact("nb12.compromise_decode_loss")
def compromise_decode_loss() -> str:
    return f"{100 * (1 - _dies().loc['compromise', 'decode_vs_best']):.0f}"


@fact("nb12.decode_die_training_pct")
def decode_die_training_pct() -> str:
    return f"{100 * _dies().loc['decode optimum (8i-like)', 'training_vs_best']:.0f}"


@catalogue_cache(maxsize=None)
def _fleet_usd_per_month(with_pretraining: bool) -> float:
    # section 6's fleet (cell 30): the same workloads and pools; the batch product is as large as the chat product
    from accelbook.economics import fleet

    model = get_model(MODEL)
    workloads = [fleet.FleetWorkload("chat", "interactive", model.id, CHAT_TOKENS_PER_MONTH, 1 / TBT_SLO_S),
                 fleet.FleetWorkload("batch", "batch_inference", model.id, CHAT_TOKENS_PER_MONTH)]
    if with_pretraining:
        workloads.insert(0, fleet.FleetWorkload("pre-training", "pretrain", model.id, TRAIN_TOKENS / 3))
    pools = [fleet.Pool("GPU (H100)", "h100", 8192, get_chip("h100").price_usd_per_hour),
             fleet.Pool("GPU (H200)", "h200", 1024, get_chip("h200").price_usd_per_hour),
             fleet.Pool("TPU (v5p)", "tpu-v5p", 8192, get_chip("tpu-v5p").price_usd_per_hour)]
    return float(fleet.place(workloads, pools).usd_per_month)


@fact("nb12.fleet_usd_m_with_pretraining")
def fleet_usd_m_with_pretraining() -> str:
    return f"{_fleet_usd_per_month(True) / 1e6:.2f}"


@fact("nb12.fleet_usd_k_products")
def fleet_usd_k_products() -> str:
    return f"{_fleet_usd_per_month(False) / 1e3:.0f}"


@fact("nb12.h100_4096_days_worst")
def h100_4096_days_worst() -> str:
    return f"{_train('h100', 4096)[2]:.0f}"


@fact("nb12.maxtext_n")
def maxtext_n() -> str:
    """How many MaxText (TPU) runs the validation table holds, both sets."""
    return f"{sum(1 for i in training.validation_table()['id'] if i.startswith('maxtext'))}"
