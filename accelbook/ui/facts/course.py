"""Facts quoted in the prose of the README, instructor/ and docs/ (keys ``course.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.ui.facts import fact  # noqa: F401
