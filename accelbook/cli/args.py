"""A subcommand's arguments as data, and how their values are gathered.

Each subcommand declares its arguments once (:class:`Arg`: the API keyword, how text becomes a value,
a help line). A value comes, last one winning, from the API's own default (nothing is passed), a TOML
file (``--file args.toml``: top-level keys named like the API's keywords), a dashboard's scenario string
(``--scenario 'training:model=...'``, :mod:`accelbook.cli.scenarios`) and the flags themselves
(``--n-chips 1024``). Numbers may be written ``1024``, ``1e6``, ``2**24`` or with a decimal suffix
(``16M`` = 16e6) or a binary one (``64Mi`` = 64·2**20); they reach the API as given, so it is the API
that checks their range and names the argument in its message.
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

#: a number's suffix -> its factor (decimal SI prefixes and binary IEC ones)
SUFFIXES = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_NUMBER = re.compile(r"^\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)(?:\s*\*\*\s*([-+]?[0-9]+))?\s*([kMGTP]i?)?\s*$")


def number(text: str) -> float | int:
    """``text`` as a number: ``"1024"`` -> 1024, ``"0.5"``, ``"1e6"``, ``"2**24"``, ``"16M"`` -> 16e6, ``"64Mi"``.
    Whole values come back as ``int``; ``inf`` is allowed (a link of unlimited bandwidth)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return text
    s = str(text).strip()
    if s.lower() in ("inf", "+inf", "infinity"):
        return math.inf
    m = _NUMBER.match(s)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (write 1024, 0.5, 1e6, 2**24, 16M or 64Mi)")
    base, power, suffix = m.groups()
    try:
        v = float(base)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if power is not None:
        v = v ** int(power)
    if suffix:
        v *= SUFFIXES[suffix]
    integral = v.is_integer() and (power is not None or suffix or re.fullmatch(r"[-+]?[0-9]+", base))
    return int(v) if integral else v


def integer(text: str) -> int:
    """A whole number (``"1024"``, ``"2**10"``, ``"1Ki"``, ``"1e3"``)."""
    v = number(text)
    if isinstance(v, float) and not v.is_integer():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(v)


def integers_or_one(text: str) -> int | list[int]:
    """One whole number, or several separated by commas (a search's pinned values: ``"8"``, ``"8,16"``)."""
    vals = [integer(t) for t in str(text).split(",") if t.strip()]
    if not vals:
        raise argparse.ArgumentTypeError(f"{text!r}: give one whole number or several, separated by commas")
    return vals[0] if len(vals) == 1 else vals


def integer_list(text: str) -> list[int]:
    """Whole numbers separated by commas: ``"1,8,64"``."""
    v = integers_or_one(text)
    return v if isinstance(v, list) else [v]


def texts_or_one(text: str) -> str | list[str]:
    vals = [t.strip() for t in str(text).split(",") if t.strip()]
    return vals[0] if len(vals) == 1 else vals


def length_spec(text: str):
    """A serving workload's length spec: ``"512"`` or ``"lognormal,1024,0.5"`` (``("lognormal", 1024, 0.5)``)."""
    parts = [t.strip() for t in str(text).split(",")]
    if len(parts) == 1:
        return integer(parts[0])
    return (parts[0], *(number(p) for p in parts[1:]))


def number_tuple(text: str) -> tuple:
    """Numbers separated by commas, as a tuple: ``"2,1"`` -> ``(2, 1)``."""
    return tuple(number(t) for t in str(text).split(","))


@dataclass(frozen=True)
class Arg:
    """One argument: its API keyword ``name`` (the flag is ``--name`` with dashes), how text becomes a
    value (``type``; ``bool`` gives ``--name``/``--no-name``), a help line, and whether it is required.
    ``repeat``: the flag may be given several times, its values gathered in a list."""

    name: str
    type: Callable[[str], Any] = str
    help: str = ""
    required: bool = False
    choices: tuple | None = None
    repeat: bool = False
    positional: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def add_args(parser: argparse.ArgumentParser, args: tuple[Arg, ...]) -> None:
    """Flags for ``args``, each defaulting to None (not given: the file's, the scenario's or the API's value)."""
    for a in args:
        req = " (required)" if a.required else ""
        if a.positional:
            parser.add_argument(a.name, type=a.type, nargs="*" if a.repeat else "?", default=None, help=a.help)
        elif a.type is bool:
            parser.add_argument(a.flag, dest=a.name, action=argparse.BooleanOptionalAction, default=None,
                                help=a.help + req)
        else:
            parser.add_argument(a.flag, dest=a.name, type=a.type, default=None, choices=a.choices,
                                action="append" if a.repeat else "store", metavar=a.name.upper(),
                                help=a.help + req)


def read_file(path: str | Path, args: tuple[Arg, ...]) -> dict[str, Any]:
    """A TOML file's top-level keys as argument values (``n_chips = 1024``; dashes allowed: ``n-chips``).
    A string value is read as the flag would read it (``global_batch_tokens = "16Mi"``)."""
    from accelbook.files import UserFileError, read_toml

    try:
        raw = read_toml(path, what="file of arguments")
    except UserFileError as exc:
        raise ValueError(f"--file: {exc}") from None
    by_name = {a.name: a for a in args}
    out = {}
    for k, v in raw.items():
        a = by_name.get(k.replace("-", "_"))
        if a is None:
            raise ValueError(f"--file {path}: unknown argument {k!r}; this command takes {', '.join(sorted(by_name))}")
        out[a.name] = typed(a, v, f"--file {path}: {k}")
    return out


def typed(a: Arg, v: Any, where: str) -> Any:
    """A value from a file or a scenario as the flag would have read it."""
    if isinstance(v, str) and a.type is not str:
        try:
            v = a.type(v)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
    if a.repeat and not isinstance(v, list):
        v = [v]
    return v


def gathered(ns: argparse.Namespace, args: tuple[Arg, ...], scenario: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The values to call the API with: the file's, then ``scenario``'s, then the flags', and a
    ``ValueError`` naming any required argument still missing."""
    values: dict[str, Any] = {}
    if getattr(ns, "args_file", None):
        values.update(read_file(ns.args_file, args))
    if scenario:
        values.update(scenario)
    values.update({a.name: getattr(ns, a.name) for a in args if getattr(ns, a.name, None) not in (None, [])})
    missing = [a.name.upper() if a.positional else a.flag for a in args if a.required and a.name not in values]
    if missing:
        raise ValueError(f"the following argument(s) are required: {', '.join(missing)} "
                         "(or give them with --file or --scenario)")
    return values


@dataclass(frozen=True)
class Command:
    """A subcommand: its words (``("train", "estimate")``), a help line, a worked example for ``--help``,
    its arguments, and ``run(values) -> (what --json prints, the table)``. ``passthrough``: the rest of
    the command line goes as a list to ``run({"argv": [...]})`` (a command another package parses)."""

    path: tuple[str, ...]
    help: str
    epilog: str
    args: tuple[Arg, ...]
    run: Callable[[dict], tuple[Any, str]]
    passthrough: bool = False

    @property
    def key(self) -> str:
        return " ".join(self.path)
