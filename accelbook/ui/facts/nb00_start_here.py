"""Facts quoted in the prose of notebooks/00_start_here.ipynb (keys ``nb00.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
