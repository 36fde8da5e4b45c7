"""Facts quoted in the prose of notebooks/03_interconnects.ipynb (keys ``nb03.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
