"""Training throughput and what it costs: tokens/s per chip, USD per token, price-performance.

Model FLOPs utilisation (MFU, PaLM arXiv:2204.02311 App. B) is the fraction of a chip's peak
that the model's own FLOPs use, defined once in :func:`accelbook.training.model_flops_utilisation`
(the training model reports the same number):

    MFU = tokens_per_s · C_train / P,   so   tokens_per_s = MFU · P / C_train

with ``C_train`` the training FLOPs per token counted with full attention (6N + 12·L·H·d_h·s) and
``P`` the dense bf16 peak, whatever the run's precision (an fp8 run that is faster has the higher
MFU); ``attention="causal"`` and ``peak="precision"`` select the other conventions by name
(:mod:`accelbook.training.mfu`). The cost of a token is the chip's price per second over its token
rate:

    USD_per_token = price_usd_per_s / tokens_per_s

Worked number: Llama 3.1 70B at s = 4096 needs C_train = 4.49e11 FLOP/token; on an H100 at 40 %
MFU that is 0.40 · 989.4e12 / 4.49e11 = 881 tokens/s; at USD 10.8/h = 3.0e-3 USD/s this is
3.0e-3 / 881 · 1e6 = USD 3.41 per million tokens.

The time and cost to train divide by the goodput, the share of wall-clock time that trains
(:mod:`accelbook.training.goodput`: Llama 3's 90 % unless another is given).

Here MFU is an input (a slider). Predicting MFU from the parallel layout is the training model's
job; this module only turns an MFU into tokens and dollars, and back. :func:`flop_accounting_table`
says which FLOPs-per-token convention each published run (``data/published_runs.toml``) counted.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from accelbook.checks import fraction, instance, one_of, output, positive, whole
from accelbook.specs.chips import PRECISIONS, Chip, get_chip
from accelbook.specs.loader import DATA_DIR, check_keys, load_sources, lookup_source, read_table_file
from accelbook.specs.models import Model, get_model
from accelbook.training.goodput import check_goodput
from accelbook.training.mfu import (
    DEFAULT_ATTENTION,
    DEFAULT_PEAK,
    counted_flops_per_token,
    model_flops_utilisation,
    reference_peak_flop_s,
)


def _mfu(mfu: float) -> float:
    return fraction("mfu", mfu, zero_ok=False)


def _precision(precision: str) -> str:
    """``precision`` if it is a catalogue precision: checked even where the bf16 peak is the one used."""
    return one_of("precision", precision, PRECISIONS)


def _chip(chip: Chip | str) -> Chip:
    return instance("chip", chip, Chip, get_chip)


def _model(model: Model | str) -> Model:
    return instance("model", model, Model, get_model)


def _price(chip: Chip, price_usd_per_hour: float | None) -> float:
    """USD per chip-second: the override if given, else the catalogue's list price."""
    if price_usd_per_hour is not None:
        return positive("price_usd_per_hour", price_usd_per_hour) / 3600.0
    if chip.price_usd_per_s is None:
        raise ValueError(f"{chip.name} has no published price per chip-hour; give one")
    return chip.price_usd_per_s


def training_tokens_per_s(model: Model, chip: Chip, mfu: float, seq_len: int = 4096, precision: str = "bf16",
                          attention: str = DEFAULT_ATTENTION, peak: str = DEFAULT_PEAK) -> float:
    """Training tokens/s per chip at ``mfu`` (in the convention ``attention``, ``peak``):
    ``MFU · P / C_train`` (tokens/s), the inverse of :func:`implied_mfu`. ``model`` and ``chip``:
    objects or catalogue names."""
    model, chip, seq_len, precision = _model(model), _chip(chip), whole("seq_len", seq_len), _precision(precision)
    return output("training_tokens_per_s", _mfu(mfu) * reference_peak_flop_s(chip, precision, peak)
                  / counted_flops_per_token(model, seq_len, attention))


def implied_mfu(tokens_per_s: float, model: Model, chip: Chip, seq_len: int = 4096, precision: str = "bf16",
                attention: str = DEFAULT_ATTENTION, peak: str = DEFAULT_PEAK) -> float:
    """MFU implied by a measured training rate: ``tokens_per_s · C_train / P``
    (:func:`accelbook.training.model_flops_utilisation`)."""
    tokens_per_s = positive("tokens_per_s", tokens_per_s)
    model, chip, seq_len, precision = _model(model), _chip(chip), whole("seq_len", seq_len), _precision(precision)
    mfu = model_flops_utilisation(tokens_per_s, model, chip, seq_len, precision, attention, peak)
    if not 0 <= mfu <= 1:
        raise ValueError(f"tokens_per_s = {tokens_per_s:,.4g} implies MFU = {mfu:.3g} on {chip.name}: above 1, "
                         "faster than the chip's peak allows")
    return mfu


def implied_params(tokens_per_s: float, mfu: float, chip: Chip, precision: str = "bf16",
                   peak: str = DEFAULT_PEAK) -> float:
    """Parameters N that a (tokens/s, MFU) pair implies on ``chip`` with C ≈ 6N: ``MFU·P / (6·tokens/s)``."""
    tokens_per_s, precision = positive("tokens_per_s", tokens_per_s), _precision(precision)
    return output("implied_params", _mfu(mfu) * reference_peak_flop_s(_chip(chip), precision, peak) / (6.0 * tokens_per_s))


def usd_per_token(tokens_per_s: float, chip: Chip, price_usd_per_hour: float | None = None) -> float:
    """USD per token: ``price_usd_per_s / tokens_per_s``."""
    tokens_per_s = positive("tokens_per_s", tokens_per_s)
    return output("usd_per_token", _price(_chip(chip), price_usd_per_hour) / tokens_per_s)


def peak_flop_per_usd(chip: Chip, precision: str = "bf16", price_usd_per_hour: float | None = None) -> float:
    """Peak FLOPs bought per dollar: ``P / price_usd_per_s`` (FLOP/USD). Price-performance at MFU = 1."""
    chip, precision = _chip(chip), _precision(precision)
    return output("peak_flop_per_usd", chip.peak_flop_s(precision) / _price(chip, price_usd_per_hour))


def training_cost_table(model: Model, chips: list[Chip], mfu: float, seq_len: int = 4096,
                        precision: str = "bf16", price_scale: float = 1.0,
                        train_tokens: float = 1e12, goodput: float | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Tokens/s per chip, USD per million tokens and chip-hours to train ``train_tokens`` tokens.

    ``mfu`` is in the one convention (full attention, dense bf16 peak: :func:`training_tokens_per_s`).
    ``usd_per_million_tokens`` is the price of a training second over its tokens; the time and cost to
    train divide by ``goodput``, the share of wall-clock time that trains, as
    ``TrainingEstimate.time_to_train`` and ``cost_usd`` do:

        chip_hours = train_tokens / tokens_per_s / goodput / 3600,   train_cost_usd = chip_hours · price

    ``goodput`` in (0, 1]; ``None`` takes the published value (:func:`accelbook.training.goodput.check_goodput`,
    Llama 3's 90 %), 1 the ideal. Chips without a published price or peak at ``precision`` (or at bf16,
    the peak MFU refers to) are left out; their names and the reason come back as the second element so
    a notebook can say so.
    """
    positive("price_scale", price_scale)
    positive("train_tokens", train_tokens)
    g = check_goodput(goodput)
    model, precision = _model(model), _precision(precision)
    _mfu(mfu)
    whole("seq_len", seq_len)
    if isinstance(chips, (str, Chip)) or not hasattr(chips, "__iter__"):
        raise TypeError(f"chips must be a list of chips (objects or names), got {chips!r}"[:200])
    rows, skipped = [], []
    for chip in map(_chip, chips):
        missing = [p for p in dict.fromkeys((precision, "bf16")) if p not in chip.peak_dense_flop_s]
        if missing:
            skipped.append(f"{chip.name}: no published dense {missing[0]} peak")
            continue
        if chip.price_usd_per_s is None:
            skipped.append(f"{chip.name}: no published price")
            continue
        tps = training_tokens_per_s(model, chip, mfu, seq_len, precision)
        price_h = chip.price_usd_per_hour * price_scale
        usd_tok = usd_per_token(tps, chip, price_h)
        chip_s = train_tokens / tps / g
        rows.append({
            "chip": chip.name, "kind": chip.kind, "tokens_per_s_per_chip": tps,
            "usd_per_million_tokens": usd_tok * 1e6, "price_usd_per_hour": price_h, "goodput": g,
            "chip_hours": chip_s / 3600.0, "train_cost_usd": usd_tok * train_tokens / g,
            "peak_flop_per_usd": peak_flop_per_usd(chip, precision, price_h),
        })
    return pd.DataFrame(rows), skipped


def flop_accounting_table(path=None) -> pd.DataFrame:
    """Which FLOPs-per-token convention does each published report use?

    For reports that give both model TFLOP/s and tokens/s per chip, the FLOPs per token they
    counted is ``C_reported = TFLOP/s / tokens/s``. It is compared with accelbook's ``C_train``
    counted two ways: full attention (PaLM's 6N + 12·L·H·d_h·s) and causal attention (half the
    attention term). The convention whose error is smaller is the report's. MFU figures from
    reports with different conventions are not comparable until converted.
    """
    path = Path(path) if path is not None else DATA_DIR / "published_runs.toml"
    sources = load_sources()
    rows = []
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required={"model", "chip", "seq_len", "reported_model_tflop_s",
                                            "reported_tokens_per_s", "src"}, optional={"note"})
        m, c = get_model(e["model"]), get_chip(e["chip"])
        c_rep = e["reported_model_tflop_s"] * 1e12 / e["reported_tokens_per_s"]
        full = m.flops_per_token(e["seq_len"], training=True)
        causal = m.flops_per_token(e["seq_len"], training=True, causal=True)
        err_full, err_causal = full / c_rep - 1, causal / c_rep - 1
        rows.append({
            "run": rid, "model": m.name, "chip": c.name, "seq_len": e["seq_len"],
            "reported_flop_per_token": c_rep, "full_attention_flop_per_token": full,
            "causal_flop_per_token": causal, "error_full": err_full, "error_causal": err_causal,
            "convention": "causal" if abs(err_causal) < abs(err_full) else "full attention",
            "source": lookup_source(path, rid, "src", e["src"], sources).title,
        })
    return pd.DataFrame(rows)
