"""Facts quoted in the prose of notebooks/01_gpu_vs_tpu.ipynb (keys ``nb01.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
