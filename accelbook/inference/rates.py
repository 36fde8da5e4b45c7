"""What one chip delivers to inference: the peak at a precision, the measured GEMM efficiency, and the
shares and defaults the inference model assumes where the catalogue is silent (each marked ESTIMATE).

- ``nearest_peak_flop_s``: the dense peak at the weights' precision, or the nearest one the vendor
  published (fp4 falls back to fp8, then 16 bits; a chip with only sparse figures gives half its
  best sparse one). Floating-point weights never take an int8 peak: integer units do not compute fp8,
  so on a chip without fp8 (Groq LPU v1, TPU v4, v5e) fp8 weights are widened and run at its 16-bit
  peak; ``peak_precision`` says which peak was taken.
- ``gemm_efficiency``: the measured share of peak a large GEMM reaches (``accelbook.specs.efficiency``,
  fp8 for the 8- and 4-bit formats, bf16 otherwise), or 70 % of peak ASSUMED when neither the chip
  nor a sibling has a measurement.
"""

from __future__ import annotations

from accelbook.specs.chips import Chip, base_id
from accelbook.specs.efficiency import measured_efficiency

WEIGHT_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4")
MEM_EFFICIENCY = 0.85          # share of memory bandwidth decode reaches (ESTIMATE; Azure measured 92% on GB200 HBM)
IDLE_POWER_SHARE = 0.30        # ESTIMATE
MEMORY_BOUND_POWER = 0.70      # ESTIMATE
DEFAULT_HOP_S = 2e-6           # chip-to-chip hop when the catalogue has no latency (estimate-link-latency)
DEFAULT_LINK_BYTES_S = 100e9   # ... and no link bandwidth (ESTIMATE)
ASSUMED_GEMM_EFFICIENCY = 0.7  # share of peak when no GEMM was measured on the chip or a sibling (ASSUMED)

# the precisions tried, in order, for the peak at each weight precision
_PEAK_FALLBACK = {"fp4": ("fp4", "fp8", "bf16", "fp16"), "fp8": ("fp8", "bf16", "fp16"),
                  "int8": ("int8", "fp8", "bf16", "fp16"), "bf16": ("bf16", "fp16"), "fp16": ("fp16", "bf16")}


def peak_precision(chip: Chip, precision: str) -> str:
    """The precision whose dense peak :func:`nearest_peak_flop_s` takes for weights in ``precision``
    (``"sparse/2"`` when the chip publishes only sparse figures). Groq LPU v1 at ``"fp8"``: ``"fp16"``.

    Raises ``ValueError`` when the chip publishes no peak at all for it.
    """
    for p in _PEAK_FALLBACK[precision]:
        if p in chip.peak_dense_flop_s:
            return p
    if chip.peak_sparse_flop_s:
        return "sparse/2"
    raise ValueError(f"{chip.name} publishes no peak for {precision}")


def nearest_peak_flop_s(chip: Chip, precision: str) -> float:
    """Dense peak FLOP/s at the weights' ``precision``, falling back to the nearest the vendor published
    (:func:`peak_precision`); half the best sparse figure when no dense one is published.

    Raises ``ValueError`` when the chip publishes no peak at all for it.
    """
    p = peak_precision(chip, precision)
    if p == "sparse/2":
        return max(chip.peak_sparse_flop_s.values()) / 2   # no dense figure: half the sparse one
    return chip.peak_dense_flop_s[p]


_GEMM_EFF: dict = {}


def gemm_efficiency(chip: Chip, precision: str) -> tuple[float, str]:
    """Measured GEMM efficiency ``η_gemm`` (share of peak) at ``precision`` and the sentence that says
    where it comes from; ``ASSUMED_GEMM_EFFICIENCY`` when there is no measurement."""
    # the answer depends on the chip's catalogue lineage and name only (not on what-if peaks): cached,
    # as sweeps ask it for every layout and batch
    key = (base_id(chip), chip.name, precision)
    if key not in _GEMM_EFF:
        try:
            m, why = measured_efficiency(chip, "fp8" if precision in ("fp8", "int8", "fp4") else "bf16")
            _GEMM_EFF[key] = (m.fraction, why)
        except ValueError:
            _GEMM_EFF[key] = (ASSUMED_GEMM_EFFICIENCY,
                              f"{chip.name}: no GEMM measurement for it or a sibling; "
                              f"{ASSUMED_GEMM_EFFICIENCY:.0%} of peak ASSUMED")
    return _GEMM_EFF[key]
