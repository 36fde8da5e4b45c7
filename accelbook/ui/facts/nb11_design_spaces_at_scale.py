"""Facts quoted in the prose of notebooks/11_design_spaces_at_scale.ipynb (keys ``nb11.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
