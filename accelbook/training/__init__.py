"""Distributed training: memory per chip, step time, MFU, scaling, and the search over parallel layouts.

One training step of a decoder-only transformer on ``n`` chips, split by tensor (``tp``), context
(``cp``), pipeline (``pp``, with ``vp`` interleaved chunks), data (``dp``) and expert (``ep``,
carved out of ``dp``) parallelism, Megatron-style rank order tp → cp → dp → pp (tp innermost).
Every term is a formula on published specs; nothing is fitted to the runs it is checked against.

**Compute** (per microbatch of ``mb`` sequences, one chip, ``T = mb·s/cp`` tokens):

- each GEMM takes ``max(2MNK / (P·η_meas·η_shape), bytes / B_hbm)``: ``η_meas`` is the measured
  large-GEMM fraction of peak (``data/matmul_efficiency.toml``), ``η_shape`` the tile/wave (GPU)
  or MXU padding/fold (TPU) efficiency of that shape (one model for training and inference, :mod:`accelbook.costs.gemm`; explained in :mod:`accelbook.chip.tiling`);
- attention (FlashAttention) does ``2·T·s·(d_qk + d_v)/tp · ½`` causal FLOPs forward at the
  measured attention efficiency; backward = 2.5× forward (FlashAttention-2 paper), GEMMs 2×;
- norms, residuals, RoPE, activations and FP8 casts stream their bytes through HBM;
- recomputation: "full" re-runs each layer's forward; "selective" re-runs the cheap, memory-heavy
  parts (the norms and the FFN activation; the attention scores too when attention is unfused),
  so it stores less than "none" for a few per cent of elementwise time.

**Communication**, each collective a ring in the two-level :class:`~accelbook.specs.clusters.Cluster`
(inside the fast domain where the group fits, hierarchically where it spans domains):
tensor parallel with sequence parallelism, 4 all-gathers + 4 reduce-scatters of the microbatch's
activations per layer (exposed); context parallel, ring passes of K and V (hidden behind attention
where it is long enough); expert parallel, 4 all-to-alls per MoE layer (exposed); pipeline,
point-to-point sends per microbatch and chunk (exposed); data parallel, the gradient reduce-scatter
and parameter all-gather (hidden behind one microbatch's backward/forward; ZeRO-3 gathers weights
every microbatch, hidden behind that microbatch's compute).

**Step**: the pipeline's time for ``m`` microbatches, ``(m + (pp-1)/vp) · t_microbatch`` under 1F1B
(interleaved: Narayanan et al. 2021), less under ZB-H1 and DualPipe (their bubbles, :mod:`.pipeline`),
plus what is not hidden: data-parallel time beyond the compute it overlaps and the last bucket, the
slowdown of compute beside hidden collectives, the busiest stage beyond the average one, and the
optimizer step (memory-bound Adam, 30 bytes moved per parameter it updates, :func:`.memory.optimizer_step_bytes`).

**Memory** per chip (busiest pipeline stage), Megatron's 18 bytes a parameter before sharding
(``data/training_framework.toml``): bf16 weights 2Ψ, fp32 main gradients 4Ψ, fp32 master weights and
Adam states 12Ψ (ZeRO, Rajbhandari et al. 2020). ZeRO-1 divides the optimizer states by the
data-parallel group; ZeRO-2 the gradients too when they are reduce-scattered every microbatch
(``grad_sync="microbatch"``; synced once a step, every rank keeps the full buffer); ZeRO-3 the
weights as well. Activations per layer and token from the tensors the backward pass needs (Korthikanti
et al. 2022, without dropout; K/V replicated when tp exceeds the KV heads), times the microbatches
in flight on the first stage (``pp``, ×(1 + (pp-1)/(pp·vp)) interleaved); fp32 logits on the last
stage. A share of HBM, ``memory_reserve`` (default :data:`accelbook.specs.chips.MEMORY_RESERVE`,
10%), is kept free for the runtime, NCCL buffers and fragmentation.

MFU has one definition, :func:`~.mfu.model_flops_utilisation` (:mod:`.mfu`): the model's FLOPs
with full attention over the chip's dense bf16 peak (PaLM App. B, Megatron-LM), its convention named
in ``TrainingEstimate.mfu_convention``; ``mfu_as(attention="causal", peak="precision")`` gives the
others. HFU, in the same convention, adds the forward that full recomputation runs again (×4/3).

Where each part lives (the file list is the table of contents):

- :mod:`.records`: the kernels' records, NumPy structured dtypes read by field name (the model, the chip
  in its cluster, the run's options, a layout's :data:`CONFIG_FIELDS`, the result's :data:`RESULT_FIELDS`);
- :mod:`.compute`, :mod:`.communication`, :mod:`.pipeline`, :mod:`.memory`: the formulas above,
  as small ``@njit`` functions;
- :mod:`.kernel`: ``_evaluate`` (one layout) and ``_search_kernel`` (every layout, sharing terms within a group),
  behind :func:`~.kernel.evaluate_layout` and :func:`~.kernel.evaluate_layouts`;
- :mod:`.layout`: :class:`Layout`, one parallel layout and the run's options as a value (prints as the
  tables' label, loads from TOML); :mod:`.step`: :func:`estimate` and :class:`TrainingEstimate`; :mod:`.layouts`: :func:`search_space`,
  :func:`search`; :mod:`.scaling_curve`: :func:`scaling` (its columns: :func:`scaling_columns`);
  :mod:`.validation`: the published runs,
  :func:`validation_table` and :func:`error_band` (the band to print next to a predicted MFU or
  tokens/s; each row is in the "check" set or the "held-out" one, ``error_band(set="held-out")`` the band of
  the runs added after the mechanisms were chosen, looked at only to report); :mod:`.waterfall`: a run's step built up from its ideal time, term by term, with the
  error after each term; :mod:`.goodput`: time to train = ideal time / goodput (Llama 3's 90 % by default);
  :mod:`.mfu`: the one MFU; :mod:`.plausibility`: :func:`plausibility`, a predicted MFU against the highest
  MFU any published run reached on the chip's family at that precision (``data/training_mfu_ceilings.toml``),
  flagged above it (``TrainingEstimate.mfu_flag``, ``search``'s ``mfu_flag`` column); :mod:`.arguments`: the
  checks they share; :mod:`.term_validation`: the model's terms one at a time (a layer, its recomputation,
  an HBM-bound kernel) against published timings of each, :func:`term_validation_table` and :func:`worst_term`.
"""

from .goodput import PublishedGoodput, check_goodput, goodput_words, published_goodput, time_to_train_words
from .layout import Layout, label_of, layouts_of, load_layouts
from .layouts import best_config, search, search_space
from .mfu import (
    ATTENTION_COUNTS,
    DEFAULT_ATTENTION,
    DEFAULT_PEAK,
    PEAKS,
    convention_name,
    counted_flops_per_token,
    model_flops_utilisation,
    reference_peak_flop_s,
)
from .plausibility import (
    CeilingRun,
    MfuCeiling,
    Plausibility,
    ceiling_runs,
    ceiling_words,
    chip_family,
    mfu_ceiling,
    mfu_flags,
    plausibility,
)
from .records import CONFIG_FIELDS, PRECISIONS, RECOMPUTE, RESULT_FIELDS
from .scaling_curve import scaling, scaling_columns
from .step import HOURS, MEMORY_LABELS, TIME_LABELS, TrainingEstimate, estimate
from .term_validation import term_errors, term_measurements, term_validation_table, worst_term
from .validation import (
    CONVENTIONS,
    METRICS,
    ErrorBand,
    error_band,
    estimate_auto,
    predicted_metric,
    published_runs,
    run_estimate,
    run_layout,
    run_model,
    validation_table,
)
from .waterfall import waterfall, waterfall_table

__all__ = [
    "estimate", "TrainingEstimate", "Layout", "label_of", "layouts_of", "load_layouts", "search", "search_space", "best_config", "scaling", "scaling_columns", "validation_table",
    "published_runs", "predicted_metric", "estimate_auto", "run_layout", "RECOMPUTE", "PRECISIONS", "METRICS",
    "CONVENTIONS", "CONFIG_FIELDS", "RESULT_FIELDS", "TIME_LABELS", "MEMORY_LABELS", "HOURS",
    "model_flops_utilisation", "counted_flops_per_token", "reference_peak_flop_s", "convention_name",
    "ATTENTION_COUNTS", "PEAKS", "DEFAULT_ATTENTION", "DEFAULT_PEAK", "error_band", "ErrorBand",
    "published_goodput", "PublishedGoodput", "check_goodput", "goodput_words", "time_to_train_words",
    "run_estimate", "run_model", "waterfall", "waterfall_table",
    "term_validation_table", "term_measurements", "term_errors", "worst_term",
    "plausibility", "Plausibility", "mfu_ceiling", "MfuCeiling", "mfu_flags", "ceiling_runs", "ceiling_words", "CeilingRun", "chip_family",
]
