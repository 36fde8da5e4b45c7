"""Built-in sweep 3: the chip-design space against workloads.

Each configuration is a die budget (``area_mm2``, ``power_w``) and a workload: training a dense model
(:class:`accelbook.chip.design_workloads.TrainingWorkload`) or decoding at a batch and context
(:class:`~accelbook.chip.design_workloads.DecodeWorkload`). It runs the design search
(:func:`accelbook.chip.design_search.best_design`: every split of matrix units, SRAM and HBM stacks on
a ``grid_mm2`` grid, vectorised) and returns the best split and what limits it. The search inside a
configuration is already vectorised; the sweep spreads the budgets and workloads over the workers.

Default grid: 3 areas × 3 power budgets × 3 workloads (training; decode at 8K and 32K tokens) for
Llama 3.1 70B: 27 searches, a few seconds on two workers: ``sweep.run(design_point, default_grid(), client=...)``.
"""

from __future__ import annotations

from accelbook.checks import integral, real
from accelbook.chip.design_search import best_design
from accelbook.chip.design_workloads import DecodeWorkload, TrainingWorkload

WORKLOADS = ("training", "decode")


def default_grid() -> dict:
    return {"area_mm2": [600.0, 814.0, 1000.0], "power_w": [500.0, 700.0, 1000.0],
            "workload": ["training", "decode-8192", "decode-32768"], "model": ["llama-3.1-70b"],
            "decode_batch": [64], "grid_mm2": [10.0]}


def make_workload(workload: str, model: str, decode_batch: int = 64):
    """``"training"`` or ``"decode-<context>"`` as a design workload of ``model``."""
    if not isinstance(workload, str):
        raise TypeError(f"workload must be 'training' or 'decode-<context tokens>', got {workload!r}"[:200])
    kind, _, ctx = workload.partition("-")
    if kind == "training" and not ctx:
        return TrainingWorkload(model=model)
    if kind == "decode" and ctx.isdigit():
        return DecodeWorkload(model=model, batch_size=integral("decode_batch", decode_batch), context_len=int(ctx))
    raise ValueError(f"workload must be 'training' or 'decode-<context tokens>', got {workload!r}")


def design_point(area_mm2: float, power_w: float, workload: str, model: str = "llama-3.1-70b",
                 decode_batch: int = 64, grid_mm2: float = 10.0) -> dict:
    """The best split for one budget and workload, and its tokens/s per chip."""
    w = make_workload(workload, model, decode_batch)
    d, table = best_design(w, area_mm2=real("area_mm2", area_mm2, 0.0, lo_open=True),
                           power_w=real("power_w", power_w, 0.0, lo_open=True),
                           grid_mm2=real("grid_mm2", grid_mm2, 0.0, lo_open=True))
    best = table.iloc[0]
    return {"matrix_mm2": d.matrix_mm2, "sram_mm2": d.sram_mm2, "n_hbm_stacks": int(d.n_hbm_stacks),
            "peak_tflop_s": d.peak_flop_s / 1e12, "sram_mb": d.sram_bytes / 1e6, "hbm_gb": d.hbm_bytes / 1e9,
            "hbm_tb_s": d.hbm_bw_bytes_per_s / 1e12, "full_power_w": d.full_power_w,
            "tokens_per_s_per_chip": float(best[f"{w.name}_tokens_per_s_per_chip"]),
            "limit": str(best[f"{w.name}_limit"]), "splits_evaluated": len(table)}
