"""Argument checks shared by :func:`~accelbook.training.estimate`, :func:`~accelbook.training.search`
and :func:`~accelbook.training.scaling` (the generic ones live in :mod:`accelbook.checks`)."""

from __future__ import annotations

import math
import numbers

from accelbook.checks import fraction, one_of
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.clusters import Cluster, cluster_for, get_cluster
from accelbook.specs.models import Model, get_model

from .slots import PRECISIONS


def resolve(model: Model | str, chip: Chip | str | None, cluster: Cluster | str | None,
            precision: str) -> tuple[Model, Chip, Cluster]:
    """(model, chip, cluster) from names or objects. The chip defaults to the cluster's, the
    cluster to the chip's own (DGX H100, TPU v5p pod, ...)."""
    model = model if isinstance(model, Model) else get_model(model)
    if cluster is not None:
        cl = get_cluster(cluster)
        chip = chip if chip is not None else cl.chip_id
    chip = chip if isinstance(chip, Chip) else get_chip(chip)
    cl = get_cluster(cluster) if cluster is not None else cluster_for(chip)
    one_of("precision", precision, PRECISIONS)
    return model, chip, cl


def batch_sequences(global_batch_tokens: float, seq_len: int) -> int:
    """The global batch in sequences: ``global_batch_tokens / seq_len``, which must be whole."""
    if not isinstance(global_batch_tokens, numbers.Real) or isinstance(global_batch_tokens, bool) \
            or not math.isfinite(global_batch_tokens) or global_batch_tokens < seq_len:
        raise ValueError(f"global_batch_tokens must be >= seq_len ({seq_len}), got {global_batch_tokens!r}")
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
