"""Inside one chip: what bounds an operation, how a GEMM's shape wastes peak, how a systolic array
steps, and how a die's area and power are best split.

- :mod:`.roofline`: ``t = max(F/P, D/B)``; one transformer layer's operations on a chip's roofline;
- :mod:`.tiling`: GPU thread-block tile and wave quantisation, TPU matrix-unit padding and folds
  (its ``@njit`` formulas, which the training and inference models call, are in :mod:`accelbook.costs.gemm`);
- :mod:`.systolic`: a cycle-level systolic-array simulator (Numba) and its closed form, equal to SCALE-Sim v2;
- :mod:`.design`: the chip-design calculator's entry point, in four rooms:
  :mod:`.design_params` (the constants of ``data/chipdesign.toml``), :mod:`.design_workloads`
  (training and decode workloads: FLOPs, streamed and resident bytes per unit), :mod:`.design_die`
  (a die split's area, power and edge, and its throughput under the power budget) and
  :mod:`.design_search` (the best split per workload; training against decode, TPU 8t against 8i).
"""
