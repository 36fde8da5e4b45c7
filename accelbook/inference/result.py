"""What :func:`accelbook.inference.estimate` returns: :class:`InferenceEstimate`, with the words a reader
needs next to the numbers (which limit binds, why a layout does not fit), and the memory a model may fill."""

from __future__ import annotations

from dataclasses import dataclass, field

from accelbook.checks import instance
from accelbook.limits import grouped_sentence
from accelbook.specs.chips import MEMORY_RESERVE, Chip, get_chip, usable_memory_bytes


@dataclass(frozen=True)
class InferenceEstimate:
    """What :func:`estimate` returns, SI units; ``breakdown`` holds the terms of the formulas.

    ``power_w_per_chip`` is at the wall, on one basis for every chip: the chip's own power at the decode
    step's activity, plus its share of the rest of its system (host, network, fans), times PUE
    (:mod:`accelbook.specs.system_power`); ``accelerator_power_w`` is the chip alone; ``power_basis`` says
    how the system share was found (a published system figure or an estimate)."""

    model: str
    chip: str
    n_chips: int
    config: dict
    ttft_s: float
    tpot_s: float
    tokens_per_s: float              # output tokens/s, all replicas
    tokens_per_s_per_user: float
    tokens_per_s_per_chip: float
    kv_cache_bytes: float            # per replica, the whole batch at full context
    max_batch_size: int              # per replica
    fits: bool
    memory_per_chip_bytes: float
    memory_capacity_bytes: float
    power_w_per_chip: float | None
    tokens_per_s_per_kw: float | None
    usd_per_million_tokens: float | None
    decode_bound: str
    prefill_bound: str
    accelerator_power_w: float | None = None
    power_basis: str = ""
    breakdown: dict = field(repr=False, default_factory=dict)
    assumptions: tuple[str, ...] = field(repr=False, default=())
    flag: str = ""                   # why the per-user speed is out of the model's reach ("" when it is not)

    @property
    def limit(self) -> str:
        """Which limit binds decode and prefill, in plain words with the times of the parts
        (:func:`accelbook.limits.grouped_sentence`)."""
        b = self.breakdown
        kv = b["decode_memory_s"] - b["decode_weights_read_s"]
        dec = {"memory": {"reading the weights": b["decode_weights_read_s"], "reading the KV cache": kv,
                          "elementwise kernels": b["decode_elementwise_s"]},
               "compute": {"the math": b["decode_compute_s"]},
               "communication": {("all-reduces" if self.config.get("attention", "tp") == "tp" else "expert all-to-alls"):
                                 b["decode_comm_s"]},
               "host": {"host and launch": b["decode_launch_s"]}}
        pf = {"memory": {"reading the weights": b["prefill_memory_s"], "elementwise kernels": b["prefill_elementwise_s"]},
              "compute": {"the math": b["prefill_compute_s"]},
              "communication": {"all-reduces": b["prefill_comm_s"]}}
        out = (grouped_sentence(dec, "each decode step (one chip) is ") + "; "
               + grouped_sentence(pf, "one prompt's prefill is "))
        if not self.fits:
            out += f"; and it {self.why_not_fit()}"
        if self.flag:
            out += f"; the per-user speed is {self.flag}"
        return out

    def why_not_fit(self) -> str:
        if self.fits:
            return ""
        return (f"does not fit: {self.memory_per_chip_bytes / 1e9:.1f} GB per chip needed, "
                f"{self.memory_capacity_bytes / 1e9:.1f} GB usable; at most batch {self.max_batch_size} "
                "per replica fits" if self.max_batch_size > 0 else
                f"does not fit: the weights alone need {self.breakdown['weights_per_chip_bytes'] / 1e9:.2f} GB per "
                f"chip of {self.memory_capacity_bytes / 1e9:.2f} GB usable; use more chips")


def usable_bytes(chip: Chip) -> float:
    """Memory a model may fill on one chip: ``(1 - MEMORY_RESERVE)`` of HBM (activations and the
    runtime keep the rest), all of it on SRAM chips (their compilers place everything statically)."""
    chip = instance("chip", chip, Chip, get_chip)
    return usable_memory_bytes(chip.memory_bytes, 0.0 if chip.hbm_bytes is None else MEMORY_RESERVE)
