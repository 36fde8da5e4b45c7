"""What a workload asks of one chip in the chip-design calculator: ``F``, ``M`` and ``R`` per unit.

A workload is a unit of work per chip: ``F`` FLOPs, ``M`` bytes streamed from memory, ``R`` bytes
resident per chip (:class:`Need`).

- :class:`TrainingWorkload`: a token of a dense LLM's training step. ``F`` = model FLOPs per token
  (6N + causal attention), ``M`` = weights streamed per microbatch / microbatch tokens + the
  activation traffic, ``R`` = optimizer state sharded over ``shards`` chips + activation
  checkpoints (full recompute) + one layer's working activations. Metric: tokens/s per chip.
- :class:`DecodeWorkload`: one decode step of a replica on ``n_chips`` chips (weights and KV cache
  split evenly). ``F`` = ``B·(2N_mm + 2L·c·(d_qk+d_v)) / n``, ``M`` = ``R`` = (weights + B·c·KV)/n.
  Metric: tokens/s per chip = ``x·B/n`` (tokens/s per user = ``x``).

The bytes per parameter and per ``d_model`` of training come from ``data/chipdesign.toml``
(:class:`~accelbook.chip.design_params.Params`).
"""

from __future__ import annotations

from dataclasses import dataclass

from accelbook.checks import whole
from accelbook.specs.models import Model, bytes_per_element, get_model

from .design_params import Params, builtin_params


@dataclass(frozen=True)
class TrainingWorkload:
    """Training a dense LLM: ``shards`` chips share the optimizer state (FSDP x TP x PP);
    each chip works on ``microbatch_tokens`` at a time with full activation recompute."""

    model: str = "llama-3.1-70b"
    seq_len: int = 8192
    microbatch_tokens: int = 8192
    shards: int = 32

    def __post_init__(self):
        whole("seq_len", self.seq_len)
        whole("microbatch_tokens", self.microbatch_tokens)
        whole("shards", self.shards)

    @property
    def name(self) -> str:
        return "training"


@dataclass(frozen=True)
class DecodeWorkload:
    """Decoding ``batch_size`` sequences at context ``context_len`` on a replica of ``n_chips`` chips."""

    model: str = "llama-3.1-70b"
    batch_size: int = 64
    context_len: int = 8192
    n_chips: int = 8
    precision: str = "bf16"

    def __post_init__(self):
        whole("batch_size", self.batch_size)
        whole("context_len", self.context_len)
        whole("n_chips", self.n_chips)
        bytes_per_element(self.precision)  # raises on an unknown precision

    @property
    def name(self) -> str:
        return "decode"


@dataclass(frozen=True)
class Need:
    """What one unit of a workload asks of one chip (unit: a token for training, a step for decode)."""

    flops: float            # F
    stream_bytes: float     # M, read from memory (HBM or SRAM)
    resident_bytes: float   # R, must fit in HBM + SRAM
    tokens_per_unit: float  # tokens per chip per unit
    unit: str


def _model(m) -> Model:
    return m if isinstance(m, Model) else get_model(m)


def need(workload: TrainingWorkload | DecodeWorkload, params: Params | None = None) -> Need:
    """F, M, R of one unit of ``workload`` on one chip (module docstring)."""
    p = params if params is not None else builtin_params()
    if isinstance(workload, TrainingWorkload):
        m = _model(workload.model)
        N, d, L, T = m.params, m.d_model, m.n_layers, workload.microbatch_tokens
        flops = m.flops_per_token(workload.seq_len, training=True, causal=True)
        stream = p.weight_traffic_bytes_per_param * N / T + p.act_traffic_bytes_per_d * d * L
        resident = (p.state_bytes_per_param * N / workload.shards
                    + p.act_checkpoint_bytes_per_d * d * L * T + p.act_working_bytes_per_d * d * T)
        return Need(flops, stream, resident, 1.0, "token")
    if isinstance(workload, DecodeWorkload):
        m = _model(workload.model)
        B, c, n = workload.batch_size, workload.context_len, workload.n_chips
        flops = B * m.flops_per_token(c) / n
        resident = (m.weight_bytes(workload.precision) + B * c * m.kv_bytes_per_token_at(c, workload.precision)) / n
        return Need(flops, resident, resident, B / n, "step")
    raise ValueError(f"workload must be a TrainingWorkload or DecodeWorkload, got {type(workload).__name__}")
