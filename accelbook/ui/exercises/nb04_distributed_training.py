"""Exercises of notebook 04: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook import training
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import get_cluster
from accelbook.specs.measured import overlap_slowdown
from accelbook.specs.models import get_model
from accelbook.training.framework import framework_defaults
from accelbook.ui.exercises.core import Exercise


def _model_state_70b() -> float:
    # the bytes per parameter the training model charges (data/training_framework.toml: Megatron's 2 + 4 + 12)
    fw = framework_defaults()
    per_param = fw.weight_bytes_per_param + fw.grad_bytes_per_param + fw.optimizer_bytes_per_param
    return per_param * get_model("llama-3.1-70b").params / 1e9


def _days_405b() -> float:
    m, chip = get_model("llama-3.1-405b"), get_chip("h100")
    return 15.6e12 * m.flops_per_token(8192, training=True, causal=True) / (16384 * 0.40 * chip.peak_flop_s("bf16")) / 86400


def _default_70b(**change):
    # the training dashboard's defaults: Llama 3.1 70B, 1,024 H100, 16M tokens a step, 8,192 tokens, TP8 PP4
    return training.estimate("llama-3.1-70b", "h100", 1024, 2**24, 8192, **({"tp": 8, "pp": 4} | change))


def _tp_overlap_answer() -> str:
    hidden, exposed = _default_70b(tp_overlap=0.8), _default_70b()
    best = training.search("llama-3.1-70b", "h100", 1024, 2**24, 8192, top=1, tp_overlap=0.8).attrs["best"]
    return (f"About {100 * hidden.mfu:.0f} %, against {100 * exposed.mfu:.0f} % with it all exposed: TP8 all-gathers "
            f"and reduce-scatters are the largest communication term of this layout, and hiding most of them is worth "
            f"about {100 * (hidden.mfu - exposed.mfu):.0f} points of MFU. It does not bring TP8 back as the best layout: "
            f"the search with tp_overlap=0.8 keeps {training.label_of(best.config)} at {100 * best.mfu:.0f} % MFU. Hidden "
            f"communication is not free: compute runs {100 * overlap_slowdown('h100')[0]:.1f} % slower while a "
            "collective shares the GPU (Lee et al. 2025, data/overlap_interference.toml), which is why the gain is less "
            "than the exposed time. Whether 80 % is reachable is the open question: no published measurement of "
            "Megatron's TP overlap was found, which is why the model's default is 0.")


def _bubble_share_default() -> float:
    # the bubble over the pipelined time: the step less what runs once a step (data parallelism, its overlap
    # cost, the optimizer)
    e = _default_70b()
    t = e.time
    pipelined = e.step_time_s - t["t_dp_comm_s"] - t["t_dp_bucket_s"] - t["t_optimizer_s"] - t["t_overlap_s"]
    return 100 * t["t_bubble_s"] / pipelined


def _search_best_tp() -> float:
    # the search dashboard's defaults: the same model, fleet and batch as the training dashboard
    return int(training.search("llama-3.1-70b", "h100", 1024, 2**24, 8192, top=1).attrs["best"].config["tp"])


def _ideal_share_405b() -> float:
    # the waterfall dashboard's default run; its first row is the ideal step, its last the full step
    wf = training.waterfall("llama31-405b-8k")
    return float(100 * wf["seconds"].iloc[0] / wf["cumulative_s"].iloc[-1])


def _h100_weak_scaling_8192() -> float:
    # the scaling dashboard's defaults for DGX H100 + InfiniBand: GPT-3 175B, one sequence of 2,048 tokens per
    # chip, fleets of 64 to 8,192 chips, the best layout at the largest size
    counts = [2**k for k in range(6, 14)]
    df = training.scaling("gpt3-175b", None, counts, 2048, batch_tokens_per_chip=2048, cluster=get_cluster("dgx-h100"),
                          microbatch=[1, 2], vp=[1, 4])
    return 100 * float(df.set_index("n_chips").loc[8192, "efficiency"])


def _full_over_causal_70b_8k() -> float:
    e = _default_70b()
    return 100 * (e.mfu / e.mfu_as("causal") - 1)


EXERCISES: list[Exercise] = [
    Exercise("model-state-70b", "04", "GB of model state as the training model counts it (Megatron's mixed precision: "
             "bf16 weights, fp32 gradients, fp32 master weights and Adam states) for Llama 3.1 70B?",
             _model_state_70b, 0.02, "18 bytes per parameter (2 + 4 + 12); ab.get_model('llama-3.1-70b').params.", "GB"),
    Exercise("bubble-8-32", "04", "Bubble share (%) of a 1F1B pipeline with 8 stages and 32 microbatches?",
             lambda: 100 * 7 / (32 + 7), 0.02,
             "The pipeline takes m + p - 1 microbatch-times, of which p - 1 are the bubble.", "%"),
    Exercise("days-405b", "04", "Days for 15.6T tokens of Llama 3.1 405B (8K, causal FLOPs) on 16,384 H100s at 40% MFU?",
             _days_405b, 0.03, "tokens × model.flops_per_token(8192, training=True, causal=True) ÷ "
             "(chips × MFU × peak), then seconds to days.", "days"),
    Exercise("predict-bubble-default", "04", "Predict before moving the training sliders: at the dashboard's "
             "defaults (Llama 3.1 70B, 1,024 H100, 16M tokens of 8,192 a step, TP8 PP4, microbatches of one sequence), "
             "what share (%) of the pipelined time is the 1F1B bubble?", _bubble_share_default, 0.02,
             "Sequences per step ÷ data-parallel replicas = microbatches m; the bubble is (pp − 1)/(m + pp − 1).", "%"),
    Exercise("predict-search-tp", "04", "Predict before reading the search: which tensor-parallel degree does the "
             "fastest layout use at the same defaults (Llama 3.1 70B, 1,024 H100, 16M tokens of 8,192)?",
             _search_best_tp, 0.0,
             "Tensor-parallel communication is exposed in this model; context parallelism and FSDP hide theirs.", ""),
    Exercise("predict-ideal-share-405b", "04", "Predict before opening the waterfall: for Llama 3.1 405B at 8K on "
             "Meta's layout, what share (%) of the predicted step would the ideal step (the model's FLOPs at the "
             "dense peak, causal attention) take?", _ideal_share_405b, 0.10,
             "The ideal share of the predicted step is the model's MFU with causal FLOPs; Meta reported 38-43 %, "
             "and the validation table shows how far the model lands from it.", "%"),
    Exercise("predict-h100-weak-scaling", "04", "Predict before moving the scaling sliders: at the dashboard's "
             "defaults (GPT-3 175B, one sequence of 2,048 tokens per chip), what weak-scaling efficiency (%) does the "
             "DGX H100 + InfiniBand cluster keep at 8,192 chips?", _h100_weak_scaling_8192, 0.05,
             "The data-parallel traffic leaves each 8-GPU node over one 400 Gb/s NIC per GPU; at one sequence per "
             "chip the backward pass is short.", "%"),
    Exercise("mfu-full-vs-causal-70b", "04", "For the training dashboard's default layout (Llama 3.1 70B at 8,192 "
             "tokens), by how many % is the MFU with full attention higher than with causal attention?",
             _full_over_causal_70b_8k, 0.03, "e.mfu / e.mfu_as('causal') − 1: the same step, two FLOP counts.", "%"),
    Exercise("whatif-tp-overlap-08", "04", "What if Megatron hid 80 % of the tensor-parallel communication: what "
             "MFU (%) would the training dashboard's default layout reach?",
             lambda: 100 * _default_70b(tp_overlap=0.8).mfu, 0.03,
             "training.estimate(..., tp=8, pp=4, tp_overlap=0.8).mfu.", "%",
             model_answer=_tp_overlap_answer),
]
