"""Auto-graded assignments: the checker's exercises with numbers drawn per student.

Each :class:`Question` varies one of the checker's exercises (``accelbook.ui.exercises``): it draws its numbers
(a chip, a model, an MFU, a batch) from a generator seeded by the student's id, states the question with them,
and computes the answer with the same package function the exercise uses, accepted within the exercise's own
tolerance (``rel_tol``). So two students get different numbers, a copied answer fails, and an answer follows the
catalogue and the models as the notebooks do.

``assignment(student)`` draws a student's questions (the seed: SHA-256 of the course's salt and the id, so an
instructor can regenerate any student's numbers and a student cannot guess another's); ``notebook(student)``
writes the notebook a student fills in (``q1 = None`` …); :mod:`.grading` executes a submitted notebook and
marks it (a public test a student sees: "q1 is a finite number"; a hidden one: "q1 is right"), for Gradescope
or from the command line.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from typing import Any, Callable

from accelbook.economics.cost import training_tokens_per_s, usd_per_token
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.training.pipeline import bubble_time
from accelbook.ui.exercises import EXERCISES

DEFAULT_SALT = "accelbook-course"
# Chips and models a question may draw: each has the numbers its questions need (a bf16 peak, a price).
CHIPS = ("h100", "h200", "mi300x", "tpu-v5p", "tpu-v6e")
PRICED_CHIPS = ("h100", "h200", "tpu-v5p", "tpu-v6e")      # the MI300X has no published price per hour
MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b")


@dataclass(frozen=True)
class Question:
    """One per-student question: ``draw(rng)`` gives its numbers, ``prompt`` (``str.format``) states them,
    ``answer(p)`` computes the expected value with the package, accepted within the tolerance of exercise
    ``varies``."""

    id: str
    notebook: str
    varies: str
    prompt: str
    draw: Callable[[random.Random], dict]
    answer: Callable[[dict], float]
    unit: str

    @property
    def rel_tol(self) -> float:
        return EXERCISES[self.varies].rel_tol


def _ridge(p: dict) -> float:
    c = get_chip(p["chip"])
    return c.peak_flop_s("bf16") / c.hbm_bw_bytes_per_s


def _usd_per_m(p: dict) -> float:
    return usd_per_token(training_tokens_per_s(p["model"], p["chip"], p["mfu"], p["seq"]), get_chip(p["chip"])) * 1e6


def _days(p: dict) -> float:
    m, c = get_model(p["model"]), get_chip(p["chip"])
    flops = p["tokens_t"] * 1e12 * m.flops_per_token(8192, training=True, causal=True)
    return flops / (p["chips"] * p["mfu"] * c.peak_flop_s("bf16")) / 86400


def _bubble(p: dict) -> float:
    bubble = bubble_time(p["pp"], 1, 1.0, 0.0, 0.0, 0)     # 1F1B, one microbatch-time a unit
    return 100 * bubble / (p["m"] + bubble)


def _kv_gb(p: dict) -> float:
    return get_model(p["model"]).kv_cache_bytes_per_token(p["kv"]) * p["batch"] * p["ctx"] / 1e9


QUESTIONS: tuple[Question, ...] = (
    Question("ridge", "00", "ridge-h100",
             "At what arithmetic intensity (FLOP/byte, bf16 dense peak over HBM bandwidth) does a kernel on one "
             "{chip_name} stop being memory-bound?",
             lambda r: {"chip": r.choice(CHIPS)}, _ridge, "FLOP/byte"),
    Question("usd-per-m", "01", "cost-v5p",
             "USD per million training tokens for {model_name} (sequence length {seq:,}) on {chip_name} at "
             "{mfu_pct} % MFU and the catalogue's price?",
             lambda r: {"model": r.choice(MODELS[:2]), "chip": r.choice(PRICED_CHIPS), "mfu": r.choice((0.35, 0.4, 0.45, 0.5)),
                        "seq": r.choice((2048, 4096, 8192))}, _usd_per_m, "USD"),
    Question("bubble", "04", "bubble-8-32",
             "Bubble share (%) of a 1F1B pipeline with {pp} stages and {m} microbatches (no interleaving)?",
             lambda r: {"pp": r.choice((4, 8, 16)), "m": r.choice((8, 16, 32, 64, 128))}, _bubble, "%"),
    Question("days", "04", "days-405b",
             "Days to train {model_name} on {tokens_t}T tokens (8,192 a sequence, causal attention FLOPs) on "
             "{chips:,} {chip_name} chips at {mfu_pct} % MFU of the bf16 dense peak?",
             lambda r: {"model": r.choice(MODELS), "chip": r.choice(CHIPS), "tokens_t": r.choice((2, 5, 10, 15)),
                        "chips": r.choice((1024, 4096, 8192, 16384)), "mfu": r.choice((0.3, 0.35, 0.4, 0.45))},
             _days, "days"),
    Question("kv-per-token", "06", "kv-bytes-70b",
             "KV-cache bytes per token of {model_name} with the KV cache in {kv}?",
             lambda r: {"model": r.choice(MODELS), "kv": r.choice(("bf16", "fp8"))},
             lambda p: get_model(p["model"]).kv_cache_bytes_per_token(p["kv"]), "bytes"),
    Question("kv-batch", "06", "max-batch-32k",
             "GB (10⁹ bytes) of KV cache for a batch of {batch} sequences of {ctx:,} tokens of {model_name} in {kv}?",
             lambda r: {"model": r.choice(MODELS), "kv": r.choice(("bf16", "fp8")), "batch": r.choice((8, 16, 32, 64)),
                        "ctx": r.choice((4096, 8192, 32768))}, _kv_gb, "GB"),
)


@dataclass(frozen=True)
class Instance:
    """A question with one student's numbers: ``text``, the expected ``value`` and the tolerance."""

    number: int
    question: Question
    params: dict
    text: str
    value: float

    @property
    def variable(self) -> str:
        return f"q{self.number}"

    def accepts(self, answer: Any) -> bool:
        try:
            v = float(answer)
        except (TypeError, ValueError):
            return False
        if isinstance(answer, bool) or not math.isfinite(v):
            return False
        return abs(v - self.value) <= self.question.rel_tol * abs(self.value)


def seed_of(student: str, salt: str = DEFAULT_SALT) -> int:
    """The student's seed: the first 8 bytes of SHA-256(salt, student id)."""
    if not isinstance(student, str) or not student.strip():
        raise ValueError(f"student must be a non-empty id (an e-mail address or a roster id), not {student!r}")
    if not isinstance(salt, str):
        raise ValueError(f"salt must be a string, not {salt!r}")
    return int.from_bytes(hashlib.sha256(f"{salt}\0{student.strip().lower()}".encode()).digest()[:8], "big")


def _names(params: dict) -> dict:
    out = dict(params)
    if "chip" in params:
        out["chip_name"] = get_chip(params["chip"]).name
    if "model" in params:
        out["model_name"] = get_model(params["model"]).name
    if "mfu" in params:
        out["mfu_pct"] = f"{100 * params['mfu']:g}"
    return out


def assignment(student: str, salt: str = DEFAULT_SALT) -> list[Instance]:
    """The student's questions, in order, with their numbers and expected answers."""
    rng = random.Random(seed_of(student, salt))
    out = []
    for i, q in enumerate(QUESTIONS, 1):
        params = q.draw(rng)
        out.append(Instance(i, q, params, q.prompt.format(**_names(params)), float(q.answer(params))))
    return out


def _cell(kind: str, text: str, **meta) -> dict:
    cell = {"cell_type": kind, "metadata": meta, "source": text}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def notebook(student: str, salt: str = DEFAULT_SALT, answers: dict[str, Any] | None = None) -> dict:
    """The notebook ``student`` fills in: a question a cell, each answered in ``qN``. ``answers`` (``{"q1": …}``)
    fills the cells in, as a solved copy for testing the grader."""
    answers = answers or {}
    cells = [_cell("markdown", f"# Assignment: accelbook\n\nStudent: `{student}`. Your numbers are yours: "
                               "write each answer as a number in the cell under its question (in the unit it asks "
                               "for), run the notebook top to bottom, and submit it. You may use `accelbook`.")]
    cells.append(_cell("code", "import accelbook as ab  # noqa: F401", tags=["setup"]))
    for inst in assignment(student, salt):
        cells.append(_cell("markdown", f"**Question {inst.number}** (notebook {inst.question.notebook}). {inst.text} "
                                       f"Answer in {inst.question.unit}."))
        value = answers.get(inst.variable)
        cells.append(_cell("code", f"{inst.variable} = {value!r}   # {inst.question.unit}",
                           accelbook_question=inst.question.id))
    for k, c in enumerate(cells):
        c["id"] = f"a{k:02d}"
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                        "language": "python"},
                                         "accelbook_assignment": {"student": student}},
            "nbformat": 4, "nbformat_minor": 5}


def solved(student: str, salt: str = DEFAULT_SALT) -> dict:
    """The student's notebook with every answer right (the grader's full-marks test)."""
    return notebook(student, salt, {i.variable: i.value for i in assignment(student, salt)})
