"""The course map: prerequisites between the notebooks, the time each notebook and section takes, two plans.

**Prerequisites** (:data:`PREREQUISITES`) say which notebooks a notebook builds on: the formulas and terms it
uses without deriving them again (notebook 04 uses 01's MFU and 02's GEMM tiles; the capstone names the
notebooks of each of its sections). :func:`svg` draws them as a layered graph (a notebook's column is the
length of its longest chain of prerequisites).

**Time** is counted from the notebooks, not guessed per notebook: a section's time is its words at a reading
rate, plus a fixed time for each activity it holds (a code cell read and run, a dashboard explored, a
prediction made, an exercise, a hand problem). The rates are the constants below; the reading rate is the mean
silent-reading rate of non-fiction in Brysbaert's meta-analysis (238 words a minute, *J. Memory and Language*
109, 2019), halved for technical text with formulas, which is an assumption of ours, as are the activity times.
No class has walked the notebooks with a stopwatch yet: the times are a plan's first estimate, to be replaced by
measured ones.

**Plans**: a 14-week semester and a 10-week quarter, each week's notebooks (notebook 04 in two halves, its
sections 1 to 3 and 4 to 7), checked to come after their prerequisites. ``python -m accelbook.ui.course.course_map``
writes ``instructor/course_map.md`` and ``instructor/course_map.svg``.
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from accelbook.ui.course import hand
from accelbook.ui.course.editions import read_notebook

REPO_ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
MAP_PATH = REPO_ROOT / "instructor" / "course_map.md"
SVG_PATH = REPO_ROOT / "instructor" / "course_map.svg"

PREREQUISITES: dict[str, tuple[str, ...]] = {
    "00": (), "01": ("00",), "02": ("01",), "03": ("01",), "04": ("01", "02"), "05": ("03", "04"),
    "06": ("02", "03"), "07": ("06",), "08": ("01", "07"), "09": ("02",), "10": ("06",), "11": ("06", "07"),
    "12": ("04", "06", "07", "08", "09", "10"),
}

READING_WPM = 238 / 2          # Brysbaert (2019)'s non-fiction rate, halved for technical text (assumed)
MIN_PER_CODE_CELL = 0.5        # read a code cell, run it, read its output (assumed)
MIN_PER_DASHBOARD = 6.0        # explore a dashboard's sliders (assumed)
MIN_PER_PREDICTION = 3.0       # commit a prediction, then read its gap (assumed)
MIN_PER_EXERCISE = 5.0         # a checked exercise (assumed)
MIN_PER_HAND_PROBLEM = 8.0     # a paper-and-pencil problem (assumed)
WEEK_LAB_HOURS = 4.0           # the lab and independent time a week holds for notebooks (lab 2 h + 2 of 3-4 h)

HAND_SECTION = "Work it by hand"      # the section of a notebook that shows its hand problems
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d[\d,.]*")
_SECTION_OF_04 = {"04a": ("1", "2", "3"), "04b": ("4", "5", "6", "7")}

SEMESTER: tuple[tuple[str, ...], ...] = (
    ("00",), ("01",), ("02",), ("03",), ("04a",), ("04b",), ("05",), ("review",), ("06",), ("07",),
    ("08",), ("10",), ("09", "11"), ("12",),
)
QUARTER: tuple[tuple[str, ...], ...] = (
    ("00", "01"), ("02",), ("03",), ("04a",), ("04b", "05"), ("06",), ("07", "10"), ("08",), ("09", "11"), ("12",),
)


@dataclass(frozen=True)
class Section:
    notebook: str
    title: str
    words: int
    code_cells: int
    dashboards: int
    predictions: int
    exercises: int
    hand_problems: int = 0

    @property
    def minutes(self) -> float:
        return (self.words / READING_WPM + self.code_cells * MIN_PER_CODE_CELL + self.dashboards * MIN_PER_DASHBOARD
                + self.predictions * MIN_PER_PREDICTION + self.exercises * MIN_PER_EXERCISE
                + self.hand_problems * MIN_PER_HAND_PROBLEM)


def _notebook_path(nb: str) -> Path:
    (path,) = NOTEBOOK_DIR.glob(f"{nb}_*.ipynb")
    return path


def sections(nb: str) -> list[Section]:
    """The notebook's sections (its ``## `` headings; what comes before the first is "Introduction")."""
    if nb not in PREREQUISITES:
        raise ValueError(f"notebook must be one of {', '.join(PREREQUISITES)}, not {nb!r}")
    cells = read_notebook(_notebook_path(nb))["cells"]
    out, title, acc = [], "Introduction", [0, 0, 0, 0, 0]

    def close():
        n_hand = len(hand.problems(nb, "hand")) if title == HAND_SECTION else 0
        out.append(Section(nb, title, *acc, n_hand))

    for c in cells:
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        tags = c.get("metadata", {}).get("tags", [])
        if "remove-cell" in tags or "answer" in tags:
            continue
        if c["cell_type"] == "markdown":
            if src.startswith("## "):
                close()
                title, acc = src.split("\n", 1)[0][3:].strip(), [0, 0, 0, 0, 0]
            acc[0] += len(_WORD.findall(re.sub(r"<[^>]+>", " ", src)))
        else:
            acc[1] += 1
            acc[2] += len(re.findall(r"(?<![.\w])show\(", src))      # a dashboard; hand.show( is not one
            acc[3] += len(re.findall(r"\bpredict\(", src))
            acc[4] += len(re.findall(r"\bcheck\(", src))
    close()
    return [s for s in out if s.words or s.code_cells]


def notebook_minutes(nb: str) -> float:
    """Minutes to work through notebook ``nb``: the sum of its sections' (its hand problems in theirs)."""
    return sum(s.minutes for s in sections(nb))


def _unit_minutes(unit: str) -> float:
    if unit == "review":
        return 0.0
    if unit in _SECTION_OF_04:
        keep = _SECTION_OF_04[unit]
        secs = sections("04")
        part = sum(s.minutes for s in secs if s.title.split(" ")[0] in keep)
        rest = sum(s.minutes for s in secs if not s.title[0].isdigit())
        share = len(keep) / 7      # the unnumbered sections (fallacies, exercises, hand problems) split by sections
        return part + share * rest
    return notebook_minutes(unit)


def _unit_notebook(unit: str) -> str:
    return unit[:2]


def check_plan(plan: tuple[tuple[str, ...], ...]) -> None:
    """Raise ValueError unless ``plan`` covers every notebook and each comes after its prerequisites."""
    seen: set[str] = set()
    for week, units in enumerate(plan, 1):
        nbs = {_unit_notebook(u) for u in units if u != "review"}
        for nb in nbs:
            missing = [p for p in PREREQUISITES[nb] if p not in seen and p not in nbs]
            if missing:
                raise ValueError(f"week {week}: notebook {nb} comes before its prerequisites {', '.join(missing)}")
        seen |= nbs
    if seen != set(PREREQUISITES):
        raise ValueError(f"the plan leaves out notebooks {', '.join(sorted(set(PREREQUISITES) - seen))}")


def layers() -> dict[str, int]:
    """Each notebook's column in the picture: the length of its longest chain of prerequisites."""
    depth: dict[str, int] = {}
    for nb in PREREQUISITES:            # keys are in an order where prerequisites come first
        depth[nb] = 1 + max((depth[p] for p in PREREQUISITES[nb]), default=-1)
    return depth


def _titles() -> dict[str, str]:
    out = {}
    for nb in PREREQUISITES:
        first = read_notebook(_notebook_path(nb))["cells"][0]["source"]
        head = ("".join(first) if isinstance(first, list) else first).split("\n", 1)[0]
        out[nb] = head.lstrip("# ").split("·", 1)[-1].split(":", 1)[0].strip()
    return out


def svg() -> str:
    """The prerequisite graph as an SVG: a column per layer, an arrow from each prerequisite."""
    depth, titles = layers(), _titles()
    cols: dict[int, list[str]] = {}
    for nb, d in depth.items():
        cols.setdefault(d, []).append(nb)
    w, h, gx, gy = 150, 46, 60, 22
    pos = {nb: (20 + d * (w + gx), 20 + i * (h + gy)) for d, nbs in cols.items() for i, nb in enumerate(nbs)}
    width = 40 + len(cols) * (w + gx) - gx
    height = 40 + max(len(v) for v in cols.values()) * (h + gy) - gy
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
             '<path d="M0,0 L8,4 L0,8 z" fill="#607d8b"/></marker></defs>']
    for nb, pre in PREREQUISITES.items():
        x2, y2 = pos[nb]
        for p in pre:
            x1, y1 = pos[p]
            parts.append(f'<line x1="{x1 + w}" y1="{y1 + h / 2}" x2="{x2}" y2="{y2 + h / 2}" stroke="#607d8b" '
                         'stroke-width="1.2" marker-end="url(#arrow)"/>')
    for nb, (x, y) in pos.items():
        hours = notebook_minutes(nb) / 60
        parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="#e3f2fd" stroke="#1565c0"/>')
        parts.append(f'<text x="{x + 8}" y="{y + 18}" font-weight="bold">{nb} · {html.escape(titles[nb][:18])}</text>')
        parts.append(f'<text x="{x + 8}" y="{y + 36}" fill="#37474f">about {hours:.1f} h</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _plan_table(plan: tuple[tuple[str, ...], ...]) -> list[str]:
    rows = ["| week | notebooks | hours (estimated) |", "|---|---|---|"]
    for week, units in enumerate(plan, 1):
        names = ", ".join("review and mid-term (exam bank, notebooks 00 to 05)" if u == "review" else
                          (f"04 §{'1–3' if u == '04a' else '4–7'}" if u in _SECTION_OF_04 else u) for u in units)
        hours = sum(_unit_minutes(u) for u in units) / 60
        flag = " (over the week's lab time)" if hours > WEEK_LAB_HOURS else ""
        rows.append(f"| {week} | {names} | {hours:.1f}{flag} |")
    return rows


def render_markdown() -> str:
    check_plan(SEMESTER)
    check_plan(QUARTER)
    titles = _titles()
    out = ["# Course map", "",
           "Generated by `python -m accelbook.ui.course.course_map` from the notebooks; do not edit by hand.", "",
           "![Prerequisites between the notebooks](course_map.svg)", "",
           "## Prerequisites", "", "| notebook | builds on |", "|---|---|"]
    out += [f"| {nb} {titles[nb]} | {', '.join(pre) or '(none)'} |" for nb, pre in PREREQUISITES.items()]
    out += ["", "## Time per notebook and section", "",
            f"Counted from each section's words at {READING_WPM:g} words a minute (Brysbaert 2019's rate for "
            f"non-fiction, halved for technical text: our assumption) plus {MIN_PER_CODE_CELL:g} min a code cell, "
            f"{MIN_PER_DASHBOARD:g} a dashboard, {MIN_PER_PREDICTION:g} a prediction, {MIN_PER_EXERCISE:g} an "
            f"exercise and {MIN_PER_HAND_PROBLEM:g} a hand problem (assumed). No class has timed them yet: replace "
            "these with what your students take.", ""]
    for nb in PREREQUISITES:
        out += [f"### {nb} {titles[nb]}: about {notebook_minutes(nb) / 60:.1f} h", "",
                "| section | words | code cells | dashboards | predictions | exercises | hand problems | minutes |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {s.title} | {s.words:,} | {s.code_cells} | {s.dashboards} | {s.predictions} | {s.exercises} | "
                f"{s.hand_problems} | {s.minutes:.0f} |" for s in sections(nb)]
        out.append("")
    out += ["## A 14-week semester", "", *_plan_table(SEMESTER), "",
            "## A 10-week quarter", "", *_plan_table(QUARTER), "",
            f"A week holds about {WEEK_LAB_HOURS:g} h of lab and independent work on a notebook; a week over it "
            "is marked, and a lecture can take one of its sections.", ""]
    return "\n".join(out)


def write_all() -> list[Path]:
    MAP_PATH.write_text(render_markdown(), encoding="utf-8")
    SVG_PATH.write_text(svg(), encoding="utf-8")
    return [MAP_PATH, SVG_PATH]


if __name__ == "__main__":
    for p in write_all():
        print(f"wrote {p}")
    sys.exit(0)
