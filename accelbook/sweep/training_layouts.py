"""Built-in sweep 4: the best training layout for every model × chip × cluster size.

Each configuration runs the layout search (:func:`accelbook.training.search` with ``top=1``: every
tensor, pipeline, context, data and expert parallel degree, microbatch, ZeRO stage and recomputation,
evaluated by the Numba kernel) and returns the fastest layout that fits. A model that fits
no layout on that many chips is an error row that says how much memory the smallest layout needs.

Default grid: Llama 3.1 8B, 70B and 405B × H100, B200, TPU v5p × 64, 512 and 4,096 chips, a batch of
4M tokens of 8,192: 27 searches, well under a minute on two workers once the kernel is compiled:
``sweep.run(layout_point, default_grid(), client=...)``.
"""

from __future__ import annotations

from accelbook import training
from accelbook.checks import integral

#: the columns of the search's best row that the sweep keeps
KEEP = ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute", "schedule", "step_time_s",
        "mfu", "tokens_per_s_per_chip", "memory_per_chip_bytes")


def default_grid() -> dict:
    return {"model": ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"], "chip": ["h100", "b200", "tpu-v5p"],
            "n_chips": [64, 512, 4096], "global_batch_tokens": [2**22], "seq_len": [8192], "precision": ["bf16"]}


def layout_point(model: str, chip: str, n_chips: int, global_batch_tokens: int = 2**22, seq_len: int = 8192,
                 precision: str = "bf16") -> dict:
    """The fastest layout that fits (``training.search(..., top=1)``), and how many were evaluated."""
    df = training.search(model, chip, integral("n_chips", n_chips), integral("global_batch_tokens", global_batch_tokens),
                         integral("seq_len", seq_len), precision, top=1)
    best = df.iloc[0]
    out = {k: (best[k].item() if hasattr(best[k], "item") else best[k]) for k in KEEP}
    out.update(n_evaluated=int(df.attrs["n_evaluated"]), n_fit=int(df.attrs["n_fit"]),
               cluster=str(df.attrs["cluster"]))
    return out
