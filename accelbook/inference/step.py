"""How long one serving iteration takes: :class:`StepCost` (the serving simulator's step-time model,
:mod:`accelbook.inference.serving`'s docstring under **Step cost**) and :func:`step_cost`, which
fills it for one replica from the inference model's formulas (:mod:`accelbook.inference.estimate`).

One iteration processes ``n = n_dec + p`` tokens (one per decoding sequence, ``p`` prompt tokens):

    dt = fixed_s + max(weight_read_s, n·per_token_s) + n·comm_per_token_s
         + ctx·decode_per_ctx_token_s + p·prefill_attn_per_token_s

The weights are read once a step whatever it holds, and the tokens' matmuls overlap that read (a
roofline: the larger wins), which is why a prefill chunk riding on a memory-bound decode step is
nearly free; the all-reduces pay their latency once a step and their bytes per token. Worked number
(Llama 3.1 70B on 8 × H200, fp8): ``fixed_s`` = 80 layers · 2 all-reduces · 2·7 hops · 1 µs =
2.24 ms, ``comm_per_token_s`` = 80 · 2 · 2·7/8 · 16,384 B / 450 GB/s = 10.2 µs.
"""

from __future__ import annotations

from dataclasses import dataclass

from numba import njit

from accelbook.checks import real, whole

from .estimate import estimate

_TIMES = ("fixed_s", "weight_read_s", "per_token_s", "comm_per_token_s", "decode_per_ctx_token_s",
          "prefill_attn_per_token_s")


@njit(cache=True, inline="always")
def iteration_time(n_dec, prefill, ctx, fixed, wread, ptok, comm, dctx, pattn):
    """One iteration's time (s) for ``n_dec`` decoders, ``prefill`` prompt tokens and ``ctx`` tokens of KV
    cache read: ``fixed + max(wread, n·ptok) + n·comm + ctx·dctx + prefill·pattn`` with ``n = n_dec + prefill``
    (the weights are read once; the matmuls overlap the read). The serving kernels and
    :meth:`StepCost.iteration_s` all call this one function."""
    n = float(n_dec + prefill)
    return fixed + max(wread, n * ptok) + n * comm + float(ctx) * dctx + float(prefill) * pattn


@dataclass(frozen=True)
class StepCost:
    """One serving instance's step-time model (module docstring); SI units."""

    fixed_s: float                   # per iteration: the all-reduces' latency (hops), whatever the tokens
    weight_read_s: float             # per iteration: reading the weights once
    per_token_s: float               # per token processed (decoded or prefilled): its matmul FLOPs
    comm_per_token_s: float          # per token processed, added to the step: all-reduce bytes, elementwise kernels
    decode_per_ctx_token_s: float    # per token of KV cache the decoding sequences read
    prefill_attn_per_token_s: float  # per prompt token: its causal attention, at the typical prompt length
    max_batch: int                   # most sequences resident at once
    max_kv_tokens: int               # KV-cache capacity in tokens

    def __post_init__(self):
        for name in _TIMES:
            object.__setattr__(self, name, real(name, getattr(self, name)))
        object.__setattr__(self, "max_batch", whole("max_batch", self.max_batch))
        object.__setattr__(self, "max_kv_tokens", whole("max_kv_tokens", self.max_kv_tokens))
        if self.fixed_s + self.weight_read_s + self.per_token_s + self.comm_per_token_s <= 0:
            raise ValueError("fixed_s + weight_read_s + per_token_s + comm_per_token_s must be > 0 "
                             "(an iteration takes time)")

    def iteration_s(self, n_dec: int = 0, ctx_tokens: int = 0, prefill_tokens: int = 0) -> float:
        """Duration of one iteration (module docstring): :func:`iteration_time`, the simulators' own formula.
        ``n_dec``, ``ctx_tokens``, ``prefill_tokens``: whole numbers >= 0."""
        n_dec, ctx_tokens, prefill_tokens = (whole(k, v, 0) for k, v in (
            ("n_dec", n_dec), ("ctx_tokens", ctx_tokens), ("prefill_tokens", prefill_tokens)))
        return iteration_time(n_dec, prefill_tokens, ctx_tokens, self.fixed_s, self.weight_read_s, self.per_token_s,
                              self.comm_per_token_s, self.decode_per_ctx_token_s, self.prefill_attn_per_token_s)

    def decode_bound_tok_s(self) -> float:
        """Most decode tokens per second one instance can make: a full batch, no context, no prefill."""
        B = self.max_batch
        return B / (self.fixed_s + max(self.weight_read_s, B * self.per_token_s) + B * self.comm_per_token_s)


def step_cost(model, chip, n_chips: int, precision: str = "fp8", tp: int | None = None, input_len: int = 1024,
              output_len: int = 256) -> StepCost:
    """A :class:`StepCost` for one replica of ``n_chips`` chips, tensor parallel (``tp``, default all of
    them; no pipeline stages), from the inference model's formulas: ``weight_read_s`` = reading the
    weights (for MoE, the experts one token touches), ``per_token_s`` = one token's matmul FLOPs,
    ``fixed_s`` and ``comm_per_token_s`` = the two all-reduces a layer split into their latency and
    their bytes per token (``comm_per_token_s`` also carries the token's elementwise kernels, which add
    to a step as the all-reduce bytes do: :func:`~accelbook.inference.rates.elementwise_bytes_per_token`),
    ``decode_per_ctx_token_s`` = reading one token of KV cache,
    ``prefill_attn_per_token_s`` = one prompt token's causal attention at ``input_len``."""
    e = estimate(model, chip, n_chips, 1, input_len, output_len, precision, tp=tp)
    b = e.breakdown
    cap = e.memory_capacity_bytes - b["weights_per_chip_bytes"]
    if cap <= 0:
        raise ValueError(e.why_not_fit())
    return StepCost(fixed_s=b["allreduce_fixed_s"], weight_read_s=b["decode_weights_read_s"],
                    per_token_s=b["decode_per_seq_s"],
                    comm_per_token_s=b["allreduce_per_token_s"] + b["elementwise_per_token_s"],
                    decode_per_ctx_token_s=b["decode_per_ctx_token_s"],
                    prefill_attn_per_token_s=b["prefill_attention_per_token_s"],
                    max_batch=max(1, e.max_batch_size), max_kv_tokens=int(cap // b["kv_token_per_chip_bytes"]))
