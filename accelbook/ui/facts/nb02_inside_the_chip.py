"""Facts quoted in the prose of notebooks/02_inside_the_chip.ipynb (keys ``nb02.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
