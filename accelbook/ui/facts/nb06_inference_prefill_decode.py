"""Facts quoted in the prose of notebooks/06_inference_prefill_decode.ipynb (keys ``nb06.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
