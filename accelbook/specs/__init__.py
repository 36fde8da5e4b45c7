"""Specs: the one catalogue loader and the frozen dataclasses it builds, in SI units.

- :mod:`.loader`: reads every ``data/*.toml`` file, checks keys, converts units, keeps sources;
- :mod:`.catalogue`: one kind of entry (chips, models, clusters, fabrics): its file, parse and look-up;
- :mod:`.chips`: accelerators (:class:`~.chips.Chip`), the memory reserve;
- :mod:`.models`: LLM architectures (:class:`~.models.Model`), parameter and FLOP counts;
- :mod:`.hf_config`: a Model from a Hugging Face ``config.json`` (``from_hf_config``);
- :mod:`.registry`: a user's models and chips, registered to be found by id everywhere;
- :mod:`.fabrics`: link fabrics (one description per link: clusters and network presets read it)
  and NCCL's protocol costs;
- :mod:`.clusters`: training clusters (a chip in a two-level network, naming its two fabrics);
- :mod:`.efficiency`: measured GEMM and attention efficiency per chip.
"""
