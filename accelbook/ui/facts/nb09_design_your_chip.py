"""Facts quoted in the prose of notebooks/09_design_your_chip.ipynb (keys ``nb09.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
