"""Facts quoted in the prose of notebooks/12_capstone.ipynb (keys ``nb12.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
