"""Facts quoted in the prose of notebooks/08_token_economics_and_hybrid.ipynb (keys ``nb08.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
