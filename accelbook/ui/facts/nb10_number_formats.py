"""Facts quoted in the prose of notebooks/10_number_formats.ipynb (keys ``nb10.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
