"""Exercises of notebook 12, the capstone: questions, hints, and answers computed by the models (see
accelbook.ui.exercises). The brief is the notebook's: Llama 3.1 70B, 15T training tokens at 8K within 90 days, a chat
product of 25 billion output tokens a month (time to first token ≤ 1 s, time between tokens ≤ 50 ms at the 99th
percentile, 1,024 tokens in and 256 out on average, peak at twice the mean) and a batch product of as many."""

from __future__ import annotations

import math

from accelbook import inference, training
from accelbook.economics import rent_or_own
from accelbook.economics.fleet import HOURS_PER_MONTH
from accelbook.inference import serving
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.ui.exercises.core import Exercise

MODEL = "llama-3.1-70b"
TRAIN_TOKENS, SEQ_LEN, GLOBAL_BATCH_TOKENS, DEADLINE_DAYS = 15e12, 8192, 2**24, 90
CHAT_TOKENS_PER_MONTH, OUTPUT_TOKENS, PROMPT_TOKENS, PEAK_TO_MEAN = 25e9, 256, 1024, 2.0
TTFT_SLO_S, TBT_SLO_S = 1.0, 0.05
#: the offered rates (requests/s) at which the simulator tries one 8 × H200 replica
CHAT_RATES = (8.0, 12.0, 16.0, 20.0, 24.0, 28.0)


def _chat_peak_rate() -> float:
    return PEAK_TO_MEAN * CHAT_TOKENS_PER_MONTH / (HOURS_PER_MONTH * 3600) / OUTPUT_TOKENS


@catalogue_cache(maxsize=8)
def _training_days_and_cost(chip: str, n_chips: int) -> tuple[float, float]:
    """Days at the model's median error, and the list cost (USD, NaN without a price) at that error."""
    best = training.search(MODEL, chip, n_chips, GLOBAL_BATCH_TOKENS, SEQ_LEN, top=1).attrs["best"]
    slower = 1 + training.error_band().median
    price = get_chip(chip).price_usd_per_hour
    cost = best.cost_usd(TRAIN_TOKENS) * slower if price else math.nan
    return best.time_to_train(TRAIN_TOKENS) / 86400 * slower, cost


def _h100_days_at_median_error() -> float:
    return _training_days_and_cost("h100", 2048)[0]


def _cheapest_within_deadline() -> set[str]:
    plans = {chip: _training_days_and_cost(chip, 4096) for chip in ("h100", "tpu-v5p")}
    ok = {chip: cost for chip, (days, cost) in plans.items() if days <= DEADLINE_DAYS}
    return {min(ok, key=ok.get)}


@catalogue_cache(maxsize=2)
def _sustainable_chat_rate() -> float:
    """The largest offered rate of CHAT_RATES at which one 8 × H200 replica (fp8) meets both objectives at p99."""
    cost = inference.step_cost(MODEL, "h200", 8, "fp8")
    runs = serving.load_sweep(cost, CHAT_RATES, n_requests=2000, prompt=("lognormal", PROMPT_TOKENS, 0.5),
                              output=("lognormal", OUTPUT_TOKENS, 0.5), ttft_slo_s=TTFT_SLO_S, tbt_slo_s=TBT_SLO_S)
    ok = runs[(runs["ttft_p99_s"] <= TTFT_SLO_S) & (runs["tbt_p99_s"] <= TBT_SLO_S)]
    return float(ok["rate_per_s"].max())


def _chat_replicas() -> int:
    slower = 1 + inference.error_band("tokens_per_s_per_chip").median
    return math.ceil(_chat_peak_rate() * slower / _sustainable_chat_rate())


def _rent_over_own_h200() -> float:
    t = rent_or_own("h200", 1000.0, utilisation=0.5).set_index("option")["usd_per_hour"]
    return float(t["rent"] / t["own"])


def _h200_tokens_per_chip_tbt_30ms() -> float:
    e = inference.max_throughput(MODEL, "h200", 8, PROMPT_TOKENS, OUTPUT_TOKENS, "fp8", tpot_target_s=0.03,
                                 ttft_target_s=TTFT_SLO_S)
    return e.tokens_per_s_per_chip


EXERCISES: list[Exercise] = [
    Exercise("cap-chat-peak-rate", "12", "The chat product: 25 billion output tokens a month (730 hours), 256 output "
             "tokens a request, and a peak of twice the mean. Requests per second at the peak?", _chat_peak_rate,
             0.02, "Tokens a month ÷ seconds a month ÷ tokens a request, times the peak-to-mean ratio.", "req/s"),
    Exercise("predict-cap-h100-days", "12", "Predict: days to train Llama 3.1 70B on 15T tokens at 8K context on "
             "2,048 H100s, with the best layout the search finds, the goodput Llama 3 reported, and the training "
             "model's median error applied?", _h100_days_at_median_error, 0.10,
             "6 × parameters FLOPs a token (plus attention), at an MFU of about 0.6 of 989 TFLOP/s per chip; divide "
             "by the 90 % goodput, and the model is optimistic by its median error.", "days"),
    Exercise("cap-cheapest-trainer", "12", "Of H100 and TPU v5p at 4,096 chips each, which trains within 90 days at "
             "the model's median error for the lower list cost? (h100 or tpu-v5p)", _cheapest_within_deadline, 0.0,
             "Both meet the deadline at 4,096 chips; compare chip-hours × price per chip-hour.", ""),
    Exercise("cap-chat-replicas", "12", "How many replicas of 8 × H200 (fp8) serve the chat peak, given the largest "
             "offered rate at which the serving simulator meets both objectives at the 99th percentile, and the "
             "inference model's median error on throughput?", _chat_replicas, 0.0,
             "Peak rate × (1 + median error) ÷ the sustainable rate of one replica, rounded up.", "replicas"),
    Exercise("cap-rent-over-own", "12", "An H200 used half of the time: how many times the owned cost per useful hour "
             "is the rented one (the catalogue's rental price and the TCO defaults)?", _rent_over_own_h200, 0.02,
             "rent_or_own gives both per useful hour; their ratio does not depend on tokens/s.", "×"),
    Exercise("whatif-cap-tbt-30ms", "12", "What if the chat product's time between tokens must stay under 30 ms "
             "instead of 50 ms: tokens/s per chip of the best 8 × H200 layout and batch (fp8, 1,024 in, 256 out, time "
             "to first token ≤ 1 s)? What does it do to the plan?", _h200_tokens_per_chip_tbt_30ms, 0.02,
             "inference.max_throughput with tpot_target_s=0.03; compare with the 50 ms layout of section 5.",
             "tokens/s/chip",
             model_answer="About 1,580 tokens/s per chip (batch 128) against about 1,640 (batch 256) at 50 ms: a few "
             "per cent fewer. At batch 256 the decode step is compute-bound (about 41 ms); at batch 128 it is "
             "memory-bound (about 24 ms), so the step time falls almost as fast as the batch and the tokens per second "
             "hardly move. The cost per token rises by the same few per cent, less than the model's median error on "
             "throughput (+12 %). Under load the simulator decides the replica count: a tighter objective lowers the "
             "rate one replica sustains at the 99th percentile, and the replicas follow. If the target tightens "
             "further, a B200 (about twice the H200's tokens/s per chip at 30 ms in this model) or speculative "
             "decoding buys back the per-user speed."),
]
