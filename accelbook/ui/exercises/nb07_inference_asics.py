"""Exercises of notebook 07: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook import inference
from accelbook.inference import min_chips
from accelbook.ui.exercises.core import Exercise


def _lpu_chips_70b() -> int:
    return min_chips("llama-3.1-70b", "groq-lpu-v1", "int8")


#: the frontier dashboard's default systems, with the word a student answers for each
_FRONTIER_DEFAULT = {"h200": ("h200", 8), "b200": ("b200", 8), "lpu-v1": ("groq-lpu-v1", 640), "lp30": ("groq-lp30", 320)}


def _most_per_chip_at_256() -> set[str]:
    # the frontier dashboard's defaults: Llama 2 70B, fp8, 1,024 in, 256 out, target 256 tokens/s per user
    best = {}
    for word, (chip, n) in _FRONTIER_DEFAULT.items():
        f = inference.frontier("llama-2-70b", {word: (chip, n)}, 1024, 256, "fp8")
        ok = f[f["tokens_per_s_per_user"] >= 256]
        best[word] = ok["tokens_per_s_per_chip"].max() if len(ok) else 0.0
    return {max(best, key=best.get)}


def _streaming_405b(bytes_per_s: float) -> float:
    # Llama 3.1 405B in bf16 on 4 CS-3 wafers (one pipeline stage each) that stream the weights in at every step
    return inference.estimate("llama-3.1-405b", "cerebras-cs3", 4, 1, 1024, 256, "bf16", tp=1, pp=4,
                              weight_streaming_bytes_per_s=bytes_per_s).tokens_per_s_per_user


EXERCISES: list[Exercise] = [
    Exercise("lpu-chips-70b-int8", "07", "Groq LPU v1 chips (230 MB SRAM) to hold Llama 3.1 70B in int8?",
             _lpu_chips_70b,
             0.0, "Parameters × 1 byte ÷ 230 MB, rounded up.", "chips"),
    Exercise("spec-tokens-per-step", "07", "Tokens per verification step, acceptance 0.8, γ = 3?",
             lambda: (1 - 0.8**4) / (1 - 0.8), 0.01, "(1 - a^(γ+1)) / (1 - a).", "tokens"),
    Exercise("predict-frontier-256", "07", "Predict before moving the frontier sliders: at the target of 256 "
             "tokens/s per user (Llama 2 70B, fp8), which of the default systems makes the most tokens/s per chip: "
             "'h200', 'b200', 'lpu-v1' or 'lp30'?", _most_per_chip_at_256,
             hint="First ask which systems reach 256 tokens/s per user at all: at batch 1 a GPU server's step is "
                  "mostly the latency of its tensor-parallel all-reduces (two a layer), then the weights' read."),
    Exercise("lp30-chips-70b-fp8", "07", "Groq LP30 chips (500 MB SRAM) to hold Llama 3.1 70B in fp8?",
             lambda: min_chips("llama-3.1-70b", "groq-lp30", "fp8"), 0.0,
             "Parameters × 1 byte ÷ the SRAM per chip, rounded up.", "chips"),
    Exercise("cs3-wafers-405b", "07", "Cerebras CS-3 wafers (44 GB SRAM) to hold Llama 3.1 405B in bf16?",
             lambda: min_chips("llama-3.1-405b", "cerebras-cs3", "bf16"), 0.0,
             "Parameters × 2 bytes ÷ 44 GB, rounded up.", "wafers"),
    Exercise("whatif-stream-5tbs", "07", "What if each of 4 CS-3 wafers streamed Llama 3.1 405B's bf16 weights in "
             "at 5 TB/s: how many tokens/s would one user get?", lambda: _streaming_405b(5e12), 0.03,
             "Every step re-reads every weight: 812 GB ÷ (4 wafers × 5 TB/s), and the stages run one after another "
             "for one user.", "tokens/s",
             model_answer="About 6 tokens/s: a decode step streams all 812 GB of weights, 203 GB per wafer at 5 TB/s, "
             "and for a single user the four stages run one after another: 4 × 40.6 ms = 162 ms a token. Held in "
             "SRAM on 21 wafers the model gives thousands of tokens/s. Weight streaming makes a model fit, not "
             "fast: it suits training and large batches, where one streamed weight serves many tokens, not "
             "single-user decode. No streaming bandwidth is published, so the 5 TB/s is a what-if."),
]
