"""Facts quoted in the prose of notebooks/05_moe_all_to_all.ipynb (keys ``nb05.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
