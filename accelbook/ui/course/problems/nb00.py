"""Paper-and-pencil problems of notebook 00 (see accelbook.ui.course.hand)."""

from __future__ import annotations

PROBLEMS: list = []
