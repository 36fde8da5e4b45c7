"""Golden numbers: the package's numbers pinned in ``tests/golden/numbers.json``, each re-pin with its reason.

``tests/golden/numbers.json`` holds every validation table, a fixed grid of estimates from every model
and each dashboard's default view (:mod:`golden_tables`, :mod:`golden_models`, :mod:`golden_chip_econ`),
one key a line in sorted order, so that a re-pin's diff reads key by key. ``tests/golden/PINS.md`` lists
every pin, newest last: its date, the digest of the values it wrote and why. ``tests/test_golden.py``
fails when the stored values are not the ones the last pin recorded (numbers edited by hand, or pinned
without a reason) and when the computed numbers differ from the pinned ones (relative tolerance 1e-12
for numbers, strings exactly). Usage, from the repository root::

    python tools/golden.py check                 # differing keys with old/new, grouped by prefix; exit 1 if any
    python tools/golden.py check --summary       # one line per key prefix: how many differ, the largest change
    python tools/golden.py check --out new.json  # ... and keep the computed numbers
    python tools/golden.py pin --reason "GEMM tiles per wave: training MFU -2 %"  [--computed new.json]

A refactor changes nothing; a change that moves numbers on purpose re-pins them in the same commit,
with a one-line reason.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMBERS = ROOT / "tests" / "golden" / "numbers.json"
PINS = ROOT / "tests" / "golden" / "PINS.md"
REL_TOL = 1e-12
PIN_LINE = re.compile(r"^- (\d{4}-\d\d-\d\d) · ([0-9a-f]{16}) · (\d+) keys · (.+)$")
PINS_HEADER = """# Pins of `tests/golden/numbers.json`

One line per pin, newest last: the date, the digest of the values written (`tools/golden.py`,
`digest`), the number of keys, and why the numbers moved. `python tools/golden.py pin --reason "..."`
appends the line; `tests/test_golden.py` fails when the stored values' digest is not the last line's.

"""


# -- computing -----------------------------------------------------------------------------------------
def sections() -> dict:
    """name -> the function that puts that section's entries (imported here: this costs the package import)."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import golden_chip_econ as ce
    import golden_models as gm
    import golden_tables as gt

    return {"validation": gt.section_validation, "training": gm.section_training, "inference": gm.section_inference,
            "serving": gm.section_serving, "moe": gm.section_moe, "topology": gm.section_topology,
            "collectives": gm.section_collectives, "chip": ce.section_chip, "chip_design": ce.section_chip_design,
            "economics": ce.section_economics, "dashboards": gt.section_dashboards}


def compute(verbose: bool = False) -> dict:
    """Every golden entry, computed now, in sorted key order. A section that crashes part-way keeps the
    entries it made and adds ``<section>!crashed`` (the exception), so the others are still compared."""
    sects = sections()
    from golden_encode import Entries

    g = Entries()
    for name, section in sects.items():
        t0, n0 = time.perf_counter(), len(g.values)
        try:
            section(g)
        except Exception as exc:  # noqa: BLE001 - reported as an entry: check lists it with the rest
            g.set(f"{name}!crashed", f"{type(exc).__name__}: {exc}")
        if verbose:
            print(f"  {name}: {len(g.values) - n0} keys, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return dict(sorted(g.values.items()))


# -- the files -----------------------------------------------------------------------------------------
def dumps(values: dict) -> str:
    """The file's text: one ``"key": value`` a line, keys sorted, floats as ``repr``."""
    lines = [json.dumps(k, ensure_ascii=False) + ": " + json.dumps(v, ensure_ascii=False, allow_nan=False)
             for k, v in sorted(values.items())]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def digest(values: dict) -> str:
    """16 hex digits of the SHA-256 of the values (keys sorted, compact JSON): what a pin records."""
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load(path: Path = NUMBERS) -> dict:
    with open(path) as fh:
        return json.load(fh)


def pins(path: Path = PINS) -> list[tuple[str, str, int, str]]:
    """Every recorded pin, oldest first: (date, digest, number of keys, reason)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        m = PIN_LINE.match(line)
        if m:
            out.append((m[1], m[2], int(m[3]), m[4]))
    return out


def pin(values: dict, reason: str, today: str | None = None) -> str:
    """Write ``values`` and append the dated reason with their digest to ``PINS.md``; returns the line."""
    reason = " ".join(reason.split())
    if not reason:
        raise ValueError("a pin needs a reason (--reason \"...\"): why did the numbers move?")
    NUMBERS.parent.mkdir(parents=True, exist_ok=True)
    NUMBERS.write_text(dumps(values))
    line = f"- {today or datetime.date.today().isoformat()} · {digest(values)} · {len(values)} keys · {reason}\n"
    text = PINS.read_text() if PINS.exists() else PINS_HEADER
    PINS.write_text(text + ("" if text.endswith("\n") else "\n") + line)
    return line.strip()


# -- comparing -----------------------------------------------------------------------------------------
def _leaves(v) -> list:
    if isinstance(v, list):
        return [x for item in v for x in _leaves(item)]
    return [v]


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _rel(a, b) -> float:
    """Relative change of ``b`` from ``a`` (0 when equal), ``inf`` when not both numbers."""
    if _number(a) and _number(b):
        if a == b:
            return 0.0
        return abs(b - a) / max(abs(a), abs(b))
    return 0.0 if (type(a) is type(b) and a == b) else math.inf


def diff_key(old, new) -> dict | None:
    """How one key's value changed: values differing, of how many, the largest relative change and the
    leaf that has it; None when equal within :data:`REL_TOL`."""
    a, b = _leaves(old), _leaves(new)
    if len(a) != len(b) or (isinstance(old, list) != isinstance(new, list)):
        return {"n_diff": max(len(a), len(b)), "n": max(len(a), len(b)), "rel": math.inf, "kind": "other",
                "old": _short(old), "new": _short(new), "what": f"{len(a)} values -> {len(b)}"}
    rels = [_rel(x, y) for x, y in zip(a, b)]
    bad = [i for i, r in enumerate(rels) if r > REL_TOL]
    if not bad:
        return None
    worst = max(bad, key=lambda i: rels[i])
    x, y = (_texts(a[worst], b[worst]) if isinstance(a[worst], str) and isinstance(b[worst], str)
            else (_short(a[worst]), _short(b[worst])))
    return {"n_diff": len(bad), "n": len(a), "rel": rels[worst], "kind": "other" if math.isinf(rels[worst]) else "number",
            "old": x, "new": y, "index": worst if len(a) > 1 else None,
            "what": f"[{worst}] {len(bad)} of {len(a)} values" if len(a) > 1 else ""}


def _short(v) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 60 else s[:57] + "..."


def _texts(a: str, b: str, width: int = 60) -> tuple[str, str]:
    """Two strings cut to the neighbourhood of their first difference."""
    i = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, i - width // 3)

    def cut(t: str) -> str:
        return ("..." if lo else "") + json.dumps(t[lo:lo + width], ensure_ascii=False) + ("..." if lo + width < len(t) else "")
    return cut(a), cut(b)


#: a table's columns that name its rows, best first: a differing value of a column is shown with its row's name
ROW_NAMES = ("index", "id", "run", "name", "label", "system", "chip")


def _row_name(key: str, i: int, values: dict) -> str | None:
    table = key.rsplit(".", 1)[0]
    for col in ROW_NAMES:
        names = values.get(f"{table}.{col}")
        if isinstance(names, list) and f"{table}.{col}" != key and len(names) == len(values[key]) and i < len(names):
            return str(names[i])
    return None


def compare(old: dict, new: dict) -> dict[str, dict]:
    """key -> :func:`diff_key` for every key that differs, is only pinned or only computed."""
    out = {}
    for k in sorted(set(old) | set(new)):
        if k not in new:
            out[k] = {"n_diff": len(_leaves(old[k])), "n": len(_leaves(old[k])), "rel": math.inf, "kind": "gone",
                      "old": _short(old[k]), "new": "(none)", "what": "only pinned"}
        elif k not in old:
            out[k] = {"n_diff": len(_leaves(new[k])), "n": len(_leaves(new[k])), "rel": math.inf, "kind": "new",
                      "old": "(none)", "new": _short(new[k]), "what": "only computed"}
        else:
            d = diff_key(old[k], new[k])
            if d is not None:
                row = None if d.get("index") is None else _row_name(k, d["index"], new)
                if row is not None:
                    d["what"] = f"row {row}: " + d["what"]
                out[k] = d
    return out


def prefix(key: str) -> str:
    """The group a key belongs to: the function called (``training.estimate``), or the table or dashboard
    (``training.validation_table``, ``dashboards.roofline``): the key up to its first ``[`` or second dot."""
    head = key.split("[", 1)[0].split("!", 1)[0]
    return ".".join(head.split(".")[:2])


# -- reporting -----------------------------------------------------------------------------------------
KIND_WORDS = {"other": "other changes (text, type or length)", "new": "new", "gone": "gone"}


def summary_lines(old: dict, new: dict, diffs: dict[str, dict]) -> list[str]:
    """One line per key prefix with a difference: keys and values that differ, the largest relative
    change of a number, and how many keys changed otherwise, are new or are gone."""
    groups: dict[str, list] = {}
    for k in set(old) | set(new):
        groups.setdefault(prefix(k), []).append(k)
    lines = []
    for p in sorted(groups):
        bad = [diffs[k] for k in groups[p] if k in diffs]
        if not bad:
            continue
        n_values = sum(len(_leaves(new.get(k, old.get(k)))) for k in groups[p])
        line = f"{p}: {len(bad)} of {len(groups[p])} keys differ ({sum(d['n_diff'] for d in bad)} of {n_values} values)"
        rels = [d["rel"] for d in bad if d["kind"] == "number"]
        line += f", max rel {max(rels):.2g}" if rels else ""
        for kind, word in KIND_WORDS.items():
            n = sum(d["kind"] == kind for d in bad)
            line += f", {n} keys {word}" if n else ""
        lines.append(line)
    return lines


def detail_lines(diffs: dict[str, dict], limit: int = 10) -> list[str]:
    """The differing keys, grouped by prefix: numbers by largest relative change, then the other changes;
    ``limit`` keys a group (0: all)."""
    groups: dict[str, list] = {}
    for k, d in diffs.items():
        groups.setdefault(prefix(k), []).append((k, d))
    lines = []
    for p in sorted(groups):
        items = sorted(groups[p], key=lambda kd: (kd[1]["kind"] != "number", -kd[1]["rel"], kd[0]))
        lines.append(f"{p} ({len(items)} keys):")
        for k, d in items[: limit or None]:
            notes = ([f"rel {d['rel']:.2g}"] if d["kind"] == "number" else []) + ([d["what"]] if d["what"] else [])
            lines.append(f"  {k}: {d['old']} -> {d['new']}" + (f"  ({', '.join(notes)})" if notes else ""))
        if limit and len(items) > limit:
            lines.append(f"  ... {len(items) - limit} more (--limit 0 shows all)")
    return lines


def report(old: dict, new: dict, summary_only: bool = False, limit: int = 10) -> tuple[int, str]:
    """(number of differing keys, the text to print)."""
    diffs = compare(old, new)
    head = f"golden: {len(diffs)} of {len(set(old) | set(new))} keys differ"
    if not diffs:
        return 0, head
    body = summary_lines(old, new, diffs) if summary_only else (
        summary_lines(old, new, diffs) + [""] + detail_lines(diffs, limit))
    return len(diffs), "\n".join([head] + body)


# -- the command line ----------------------------------------------------------------------------------
def _computed(path: str | None) -> dict:
    if path:
        return load(Path(path))
    t0 = time.perf_counter()
    values = compute(verbose=True)
    print(f"computed {len(values)} keys in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return values


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="compute the numbers, compare with the pinned ones; exit 1 if any differs")
    c.add_argument("--summary", action="store_true", help="one line per key prefix only")
    c.add_argument("--limit", type=int, default=10, help="differing keys shown per prefix (0: all; default 10)")
    c.add_argument("--out", help="also write the computed numbers to this file (for pin --computed)")
    c.add_argument("--computed", help="compare these numbers (a file check --out wrote) instead of computing")
    p = sub.add_parser("pin", help="write the computed numbers and append the reason to PINS.md")
    p.add_argument("--reason", required=True, help="one line: why the numbers moved")
    p.add_argument("--computed", help="pin these numbers (a file check --out wrote) instead of computing")
    p.add_argument("--date", help="the pin's date (default today, YYYY-MM-DD)")
    args = ap.parse_args(argv)
    new = _computed(args.computed)
    old = load() if NUMBERS.exists() else {}
    if args.cmd == "check":
        if args.out:
            Path(args.out).write_text(dumps(new))
        n, text = report(old, new, args.summary, args.limit)
        print(text)
        return 1 if n else 0
    crashed = sorted(k for k in new if k.endswith("!crashed"))
    if crashed:
        print(f"not pinned: a section of the golden set itself crashed ({', '.join(crashed)}: {new[crashed[0]]}); "
              "fix tools/golden_*.py first", file=sys.stderr)
        return 2
    if args.date:
        datetime.date.fromisoformat(args.date)  # a ValueError names a date that is not YYYY-MM-DD
    n, text = report(old, new, summary_only=True)
    print(text)
    print("pinned: " + pin(new, args.reason, args.date))
    return 0


if __name__ == "__main__":
    sys.exit(main())
