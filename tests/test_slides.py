"""The slide decks (accelbook.ui.course.slides): one per notebook, offline, with objectives and predictions."""

import json
import re
from pathlib import Path

from accelbook.ui.course import slides

NOTEBOOKS = sorted(slides.NOTEBOOKS.glob("[0-9]*.ipynb"))


def test_a_deck_per_notebook_offline_with_objectives_and_predictions(tmp_path: Path):
    written = slides.build(tmp_path)
    assert {p.name for p in written} == {nb.stem + ".html" for nb in NOTEBOOKS} | {"index.html"}
    for nb in NOTEBOOKS:
        deck = (tmp_path / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert deck.count('class="slide"') >= 4, nb.name
        assert "Learning objectives" in deck, nb.name
        assert not re.search(r"<(?:script|link|img)[^>]+(?:src|href)=[\"']https?://", deck), nb.name
        text = "".join("".join(c["source"]) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"])
        if "**Predict, then look.**" in text:
            assert "Predict, then look" in deck, nb.name
