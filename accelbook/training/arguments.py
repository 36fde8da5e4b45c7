"""Argument checks shared by :func:`~accelbook.training.estimate`, :func:`~accelbook.training.search`
and :func:`~accelbook.training.scaling` (the generic ones live in :mod:`accelbook.checks`)."""

from __future__ import annotations

import math
import numbers

from accelbook.checks import fraction, instance, one_of, whole
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.clusters import Cluster, cluster_for, get_cluster
from accelbook.specs.models import Model, get_model

from .records import PRECISIONS


def resolve(model: Model | str, chip: Chip | str | None, cluster: Cluster | str | None,
            precision: str) -> tuple[Model, Chip, Cluster]:
    """(model, chip, cluster) from names or objects. The chip defaults to the cluster's, the
    cluster to the chip's own (DGX H100, TPU v5p pod, ...)."""
    model = instance("model", model, Model, get_model)
    if cluster is not None and not isinstance(cluster, (Cluster, str)):
        raise TypeError(f"cluster must be a Cluster, its id or None, got {type(cluster).__name__} {cluster!r}"[:200])
    if cluster is not None:
        cl = get_cluster(cluster)
        chip = chip if chip is not None else cl.chip_id
    chip = instance("chip", chip, Chip, get_chip)
    cl = get_cluster(cluster) if cluster is not None else cluster_for(chip)
    one_of("precision", precision, PRECISIONS)
    return model, chip, cl


#: bounds on a training run's size, far past any published run (the largest use ~100,000 chips,
#: contexts of ~1M tokens and batches of ~60M tokens), so that the kernel's integer arithmetic
#: (microbatch counts, token counts) stays exact and a search's candidate lists stay short
MAX_CHIPS = 2**24
MAX_SEQ_LEN = 2**24
MAX_BATCH_TOKENS = 1e12


def chip_count(n_chips, name: str = "n_chips") -> int:
    """``n_chips`` as an ``int`` in [1, :data:`MAX_CHIPS`]; else a ``ValueError`` naming it."""
    n = whole(name, n_chips)
    if n > MAX_CHIPS:
        raise ValueError(f"{name} must be at most {MAX_CHIPS:,} (accelbook.training.arguments.MAX_CHIPS), got {n:,}")
    return n


def sequence_length(seq_len) -> int:
    """``seq_len`` as an ``int`` in [2, :data:`MAX_SEQ_LEN`]; else a ``ValueError`` naming it."""
    s = whole("seq_len", seq_len, 2)
    if s > MAX_SEQ_LEN:
        raise ValueError(f"seq_len must be at most {MAX_SEQ_LEN:,} (accelbook.training.arguments.MAX_SEQ_LEN), got {s:,}")
    return s


def batch_sequences(global_batch_tokens: float, seq_len: int) -> int:
    """The global batch in sequences: ``global_batch_tokens / seq_len``, which must be whole, and at
    most :data:`MAX_BATCH_TOKENS` tokens."""
    if not isinstance(global_batch_tokens, numbers.Real) or isinstance(global_batch_tokens, bool) \
            or not math.isfinite(global_batch_tokens) or global_batch_tokens < seq_len:
        raise ValueError(f"global_batch_tokens must be >= seq_len ({seq_len}), got {global_batch_tokens!r}")
    if global_batch_tokens > MAX_BATCH_TOKENS:
        raise ValueError(f"global_batch_tokens must be at most {MAX_BATCH_TOKENS:.0e} tokens "
                         f"(accelbook.training.arguments.MAX_BATCH_TOKENS), got {global_batch_tokens:.3g}")
    B = global_batch_tokens / seq_len
    if abs(B - round(B)) > 1e-9 * B:
        raise ValueError(f"global_batch_tokens ({global_batch_tokens:,}) must be a whole number of "
                         f"sequences of {seq_len:,} tokens")
    return int(round(B))


def memory_reserve_fraction(memory_reserve: float) -> float:
    """``memory_reserve`` as a float in [0, 1): the share of HBM kept free for the runtime."""
    r = fraction("memory_reserve", memory_reserve)
    if r == 1:
        raise ValueError("memory_reserve must be below 1 (a reserve of 1 leaves no memory to train in), got 1")
    return r
