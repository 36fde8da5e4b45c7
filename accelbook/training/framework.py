"""The training framework's defaults the step model uses (``data/training_framework.toml``).

Megatron-LM / Megatron Core, which most published runs use, read from its own code and guide:

- **DDP buckets**: gradients are grouped into buckets of ``max(bucket_min, per_dp · dp)`` parameters
  (``DistributedDataParallelConfig.bucket_size``: 40M, or 1M per data-parallel rank); a bucket's
  collective starts when its gradients are ready, so only the last one is left with no compute to
  hide behind (:func:`accelbook.training.communication.data_parallel_times`). Worked number: dp = 64
  → 64M parameters, 128 MB of bf16 gradients.
- **Model state** per parameter with bf16 parameters: weights 2, fp32 main gradients 4 (Megatron
  accumulates and reduces bf16 gradients in fp32 by default), fp32 master weights and Adam's two
  moments 12: 18 bytes ("float16 param, fp32 grads: 18", the distributed optimizer guide).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from accelbook.specs.loader import DATA_DIR, Provenance, check_keys, load_sources, parse_quantity, read_table_file

PATH = DATA_DIR / "training_framework.toml"
FRAMEWORK = "megatron-core"
_KEYS = ("bucket_min_params", "bucket_params_per_dp_rank", "weight_bytes_per_param", "grad_bytes_per_param",
         "optimizer_bytes_per_param")


@dataclass(frozen=True)
class FrameworkDefaults:
    """A framework's DDP bucket size rule (parameters) and model-state bytes per parameter."""

    name: str
    bucket_min_params: float
    bucket_params_per_dp_rank: float
    weight_bytes_per_param: float
    grad_bytes_per_param: float
    optimizer_bytes_per_param: float
    provenance: dict[str, Provenance]

    def bucket_params(self, dp: int) -> float:
        """Parameters in one DDP bucket at data-parallel size ``dp``: ``max(min, per_dp·dp)``."""
        return max(self.bucket_min_params, self.bucket_params_per_dp_rank * dp)


@functools.lru_cache(maxsize=None)
def framework_defaults(name: str = FRAMEWORK) -> FrameworkDefaults:
    """The defaults of framework ``name`` (an entry of ``data/training_framework.toml``)."""
    table = read_table_file(PATH)
    if name not in table:
        raise KeyError(f"no framework {name!r} in {PATH.name}; known: {sorted(table)}")
    raw = table[name]
    check_keys(PATH, name, raw, required={k + "_count" for k in _KEYS}, optional=set())
    sources = load_sources()
    q = {k: parse_quantity(PATH, name, k + "_count", raw[k + "_count"], "count", sources) for k in _KEYS}
    return FrameworkDefaults(name, *(q[k].value for k in _KEYS), provenance={k: v.provenance for k, v in q.items()})
