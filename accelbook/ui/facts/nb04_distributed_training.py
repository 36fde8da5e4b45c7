"""Facts quoted in the prose of notebooks/04_distributed_training.ipynb (keys ``nb04.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
