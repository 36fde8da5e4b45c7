"""Paper-and-pencil problems of notebook 05 (see accelbook.ui.course.hand)."""

from __future__ import annotations

PROBLEMS: list = []
