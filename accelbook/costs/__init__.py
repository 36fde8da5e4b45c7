"""Cost mechanisms that training and inference share, each formula once (issue 27).

Neither model owns these: both import them, on plain named scalars (never a model's slot vector), so a
formula has one place and one set of symbols. One module per mechanism:

- :mod:`.gemm`: the shape efficiency of one ``[M×K]·[K×N]`` GEMM (GPU tiles, waves and split-K; TPU
  MXU folds), and the SM and MXU counts assumed where a chip publishes none;
- :mod:`.experts`: the expected share of a layer's experts that ``T`` routed tokens touch;
- :mod:`.hierarchical`: the alpha-beta time of a collective in a two-level cluster (a ring inside the
  fast domain, then one across domains on the network);
- :mod:`.elementwise`: the HBM bytes of a layer's elementwise kernels (norms, residuals, RoPE, the FFN
  activation, FP8 casts), and the per-chip widths they depend on.

The package sits above the chip layer: it imports only ``network`` (the ring and torus formulas), and
``chip.tiling`` (the tile formulas of :mod:`.gemm`) and ``chip.roofline`` (:mod:`.experts`) import it.
"""
