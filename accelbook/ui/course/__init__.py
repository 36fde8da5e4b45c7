"""The course around the notebooks: paper-and-pencil problems and the exam bank (:mod:`.hand`, one module of
problems per notebook in :mod:`.problems`), the student and instructor editions, auto-graded assignments, slide
decks and the course map. Everything here is generated from the notebooks, the catalogue and the models, so it
follows them; ``tests/test_hand_problems.py`` and its neighbours check it."""
