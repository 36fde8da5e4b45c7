"""Facts quoted in the prose of notebooks/07_inference_asics.ipynb (keys ``nb07.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
