"""How long one serving iteration takes: :class:`StepCost` (the serving simulator's step-time model,
:mod:`accelbook.inference.serving`'s docstring under **Step cost**) and :func:`step_cost`, which
fills it for one replica from the inference model's formulas (:mod:`accelbook.inference.estimate`)."""

from __future__ import annotations

from dataclasses import dataclass

from accelbook.checks import real, whole

from .estimate import estimate


@dataclass(frozen=True)
class StepCost:
    """One serving instance's step-time model (:mod:`accelbook.inference.serving`'s docstring); SI units."""

    decode_base_s: float            # per iteration that decodes: reading the weights once
    decode_per_seq_s: float         # per sequence decoding in the iteration
    decode_per_ctx_token_s: float   # per token of KV cache read
    prefill_base_s: float           # per iteration that contains prefill work
    prefill_per_token_s: float      # per prompt token prefilled in the iteration
    max_batch: int                  # most sequences resident at once
    max_kv_tokens: int              # KV-cache capacity in tokens

    def __post_init__(self):
        for name in ("decode_base_s", "decode_per_seq_s", "decode_per_ctx_token_s", "prefill_base_s",
                     "prefill_per_token_s"):
            object.__setattr__(self, name, real(name, getattr(self, name)))
        object.__setattr__(self, "max_batch", whole("max_batch", self.max_batch))
        object.__setattr__(self, "max_kv_tokens", whole("max_kv_tokens", self.max_kv_tokens))
        if self.decode_base_s + self.decode_per_seq_s <= 0:
            raise ValueError("decode_base_s + decode_per_seq_s must be > 0 (a decode iteration takes time)")
        if self.prefill_base_s + self.prefill_per_token_s <= 0:
            raise ValueError("prefill_base_s + prefill_per_token_s must be > 0 (a prefill iteration takes time)")

    def iteration_s(self, n_dec: int = 0, ctx_tokens: int = 0, prefill_tokens: int = 0) -> float:
        """Duration of one iteration: ``dt = d + q`` (module docstring of :mod:`accelbook.inference.serving`)."""
        d = self.decode_base_s + n_dec * self.decode_per_seq_s + ctx_tokens * self.decode_per_ctx_token_s if n_dec > 0 else 0.0
        q = self.prefill_base_s + prefill_tokens * self.prefill_per_token_s if prefill_tokens > 0 else 0.0
        return d + q

    def decode_bound_tok_s(self) -> float:
        """Most decode tokens per second one instance can make: a full batch, no context, no prefill."""
        return self.max_batch / (self.decode_base_s + self.max_batch * self.decode_per_seq_s)


def step_cost(model, chip, n_chips: int, precision: str = "fp8", tp: int | None = None, input_len: int = 1024,
              output_len: int = 256) -> StepCost:
    """A :class:`StepCost` for one replica, from the inference model's formulas:
    ``decode_base_s`` = reading the weights (and the all-reduce latencies) once per iteration,
    ``decode_per_seq_s`` = one sequence's matmul FLOPs, ``decode_per_ctx_token_s`` = reading one
    token of KV cache, ``prefill_per_token_s`` = one prompt token's FLOPs (with attention at the
    typical prompt length). The simulator adds the terms, so at large batches it counts weight
    reads and compute one after the other, where the inference model takes the larger: slightly pessimistic."""
    e = estimate(model, chip, n_chips, 1, input_len, output_len, precision, tp=tp)
    b, pp = e.breakdown, e.config["pp"]
    cap = e.memory_capacity_bytes - b["weights_per_chip_bytes"]
    if cap <= 0:
        raise ValueError(e.why_not_fit())
    return StepCost(decode_base_s=(b["decode_gemm_s"] + b["decode_comm_s"]) * pp,
                    decode_per_seq_s=b["decode_per_seq_s"] * pp, decode_per_ctx_token_s=b["decode_per_ctx_token_s"] * pp,
                    prefill_base_s=b["prefill_comm_s"] * pp, prefill_per_token_s=b["prefill_per_token_s"] * pp,
                    max_batch=max(1, e.max_batch_size), max_kv_tokens=int(cap // b["kv_token_per_chip_bytes"]))
