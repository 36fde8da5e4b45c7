# accelbook: `make lab` opens the workbook, `make test` checks everything (what CI runs).
#
#   make venv     .venv with accelbook installed editable, plus the test tools (fast when done)
#   make lab      JupyterLab on notebooks/ (the first time, compiles the kernels ahead: make warm)
#   make browser  make sure a Chromium for the browser test exists (Debian's; or set CHROMIUM=)
#   make lint     ruff (pyflakes, import order, no parent-relative imports)
#   make student     the student edition of the notebooks: no answers, no gaps, no outputs (build/student)
#   make instructor  the instructor edition: the notebooks as they are, with instructor/ (build/instructor)
#   make slides   one offline slide deck per notebook, with the book's charts (build/slides/index.html)
#   make book     the static book: every notebook executed, as HTML that needs no network (build/book/index.html)
#   make test     lint, the book, unit + browser tests, every notebook executed (nbval), then the benchmarks

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP_FLAGS ?= --disable-pip-version-check --progress-bar off
# Chromium driven by Playwright in tests/browser (no Playwright browser download).
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
# numba's on-disk cache must be writable; ~/.cache may not be (import then fails). It is keyed by a hash
# of the package's sources: numba does not see an edit to an @njit helper in another file, so a stale
# kernel could otherwise survive a change (ARCHITECTURE.md).
SRC_HASH := $(shell find accelbook -name '*.py' | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-12)
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache/$(SRC_HASH)
# JupyterLab refuses to run as root without --allow-root.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: venv warm lab browser book slides student instructor assignments test lint clean clean-cache

venv: $(VENV)/.installed

# The stamp makes `make venv` a no-op once installed; editing pyproject.toml reinstalls.
$(VENV)/.installed: pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade pip
	$(BIN)/python -m pip install $(PIP_FLAGS) -e ".[test,book]"
	touch $@

# Numba compiles a kernel on its first call; doing it for every notebook ahead, two processes at once, turns a
# fresh install's first dashboard from up to ~40 s into a few seconds (benchmarks/bench_cold_start.py). Once per
# source hash: the cache folder is keyed by it.
warm: $(NUMBA_CACHE_DIR)/.warm

$(NUMBA_CACHE_DIR)/.warm: | venv
	$(BIN)/python -m accelbook.ui.warmup --jobs 2
	mkdir -p $(NUMBA_CACHE_DIR) && touch $@

lab: venv warm
	$(BIN)/jupyter lab $(LAB_ARGS) notebooks/

browser:
	@if command -v "$(CHROMIUM)" >/dev/null 2>&1; then \
	  echo "browser: using $$(command -v "$(CHROMIUM)")"; \
	elif [ "$(CHROMIUM)" != /usr/bin/chromium ]; then \
	  echo "error: CHROMIUM=$(CHROMIUM) is not an executable browser" >&2; exit 1; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "error: no /usr/bin/chromium and no apt-get to install it. Install Chromium and run" \
	       "make with CHROMIUM=/path/to/chromium" >&2; exit 1; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "browser: installing Debian's chromium (apt-get)"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  echo "browser: installing Debian's chromium (sudo apt-get)"; \
	  sudo -n apt-get update && sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	else \
	  echo "error: /usr/bin/chromium is missing. Install it with" \
	       "'sudo apt-get install chromium', or run make with CHROMIUM=/path/to/chromium" >&2; exit 1; \
	fi
	@command -v "$(CHROMIUM)" >/dev/null 2>&1 || { echo "error: $(CHROMIUM) still missing" >&2; exit 1; }

# pytest exit status 5 means "no tests collected": not a failure here.
lint: venv
	$(BIN)/ruff check .

# The static book (tools/build_book.py): every notebook executed fresh, one kernel per core; open
# $(BOOK)/index.html from disk or serve the folder. tests/browser/test_book.py opens every page.
BOOK ?= build/book
export ACCELBOOK_BOOK_DIR := $(abspath $(BOOK))
book: venv
	$(BIN)/python tools/build_book.py --out $(BOOK)

# Slide decks from the notebooks, with the charts of the static book's pages.
slides: book
	$(BIN)/python -m accelbook.ui.course.slides build/slides --executed $(BOOK)

# Two editions from the same notebooks (accelbook/ui/course/editions.py); tests/test_editions.py checks the student one.
student: venv
	$(BIN)/python -m accelbook.ui.course.editions student build/student

instructor: venv
	$(BIN)/python -m accelbook.ui.course.editions instructor build/instructor

# Per-student assignment notebooks for the example roster, and the Gradescope autograder (instructor/README.md).
assignments: venv
	$(BIN)/python -m accelbook.ui.course.grading release instructor/roster_example.csv build/assignments
	$(BIN)/python -m accelbook.ui.course.grading gradescope build/autograder.zip

test: venv browser lint book
	$(BIN)/python -m pytest tests || [ $$? -eq 5 ]
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env --nbval-cell-timeout=300 notebooks/ || [ $$? -eq 5 ]
	$(BIN)/python benchmarks/bench_dashboards.py
	$(BIN)/python benchmarks/bench_systolic.py
	$(BIN)/python benchmarks/bench_topology.py
	$(BIN)/python benchmarks/bench_training.py
	$(BIN)/python benchmarks/bench_moe.py
	$(BIN)/python benchmarks/bench_serving.py
	$(BIN)/python benchmarks/bench_sweep.py

# numba's cache does not see edits to @njit helpers in other files (ARCHITECTURE.md): clear it after one
clean-cache:
	rm -rf .numba_cache

clean:
	rm -rf $(VENV) .numba_cache artifacts .pytest_cache .hypothesis $(BOOK)

# Generated documents shipped in the repository (tests/test_course.py checks they are up to date):
# docs/bibliography.md from data/sources.toml, docs/claims.md from data/claims.toml and the models,
# instructor/solutions.md from the exercise checker, and
# every marked figure of the notebooks, README, instructor/ and docs/ from its fact (accelbook.ui.facts).
.PHONY: bibliography claims solutions prose

bibliography: venv
	$(BIN)/python -m accelbook.specs.bibliography

claims: venv
	$(BIN)/python -m accelbook.economics.claims

solutions: venv
	$(BIN)/python -m accelbook.ui.solutions

prose: venv
	$(BIN)/python -m accelbook.ui.prose
