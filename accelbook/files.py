"""Reading a user's file: one helper that every function opening a file can use.

A file named by a user (a claims file, a scenario, a ``config.json``, a measurement log) can be
missing, a folder, unreadable, not UTF-8 (a UTF-16 file saved by a Windows editor), not valid JSON or
TOML, absurdly large or absurdly nested. Each of these is a :class:`UserFileError`, a ``ValueError``
whose message names the file (and, where it helps, what kind of file was expected), never a bare
``FileNotFoundError``, ``UnicodeDecodeError`` or ``RecursionError`` from deep inside a parser::

    read_json("cfg.json", what="Hugging Face config")
    UserFileError: cfg.json (a Hugging Face config): is not UTF-8 text (byte 0); save it as UTF-8

:func:`read_text` is the bytes-to-text step, :func:`read_json` and :func:`read_toml` parse, and
:func:`check_nesting` bounds how deep the parsed value nests (:data:`MAX_NESTING`: no real file of
the package's schemas nests past 10 levels).
"""

from __future__ import annotations

import json
import tomllib
from os import PathLike
from pathlib import Path
from typing import Any

__all__ = ["UserFileError", "checked_file_path", "read_bytes", "read_text", "read_json", "read_toml", "check_nesting",
           "MAX_FILE_BYTES", "MAX_NESTING"]

#: the largest file read (bytes): far past any spec, scenario or config file, small enough to read at once
MAX_FILE_BYTES = 256 * 2**20
#: the deepest nesting of lists and tables a file may have (the package's schemas nest at most ~5 levels)
MAX_NESTING = 64


class UserFileError(ValueError):
    """A user's file cannot be used; the message names the file. ``path`` and ``problem`` say which and why."""

    def __init__(self, path: Any, problem: str, what: str | None = None):
        self.path, self.problem = str(path), problem
        super().__init__(f"{path}{f' (a {what})' if what else ''}: {problem}")


def checked_file_path(path: Any, what: str | None = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it is a non-empty ``str`` or path; else a ``UserFileError``."""
    if isinstance(path, bytes) or not isinstance(path, (str, PathLike)):
        raise UserFileError(repr(path)[:100], f"a file path must be a str or a pathlib.Path, got {type(path).__name__}",
                            what)
    if str(path).strip() == "":
        raise UserFileError("''", "a file path must not be empty", what)
    return Path(path)


def read_bytes(path: Any, what: str | None = None) -> bytes:
    """The bytes of the file ``path``; a :class:`UserFileError` naming it when it is missing, a folder,
    unreadable or larger than :data:`MAX_FILE_BYTES` (for a reader that decodes itself, with line numbers)."""
    p = checked_file_path(path, what)
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise UserFileError(p, f"is {p.stat().st_size:,} bytes, past the limit of {MAX_FILE_BYTES:,} "
                                   "(accelbook.files.MAX_FILE_BYTES)", what)
        return p.read_bytes()
    except FileNotFoundError:
        raise UserFileError(p, "file not found", what) from None
    except IsADirectoryError:
        raise UserFileError(p, "is a folder, not a file", what) from None
    except OSError as exc:
        raise UserFileError(p, f"cannot be read ({exc.strerror or exc})", what) from None


def read_text(path: Any, what: str | None = None) -> str:
    """The UTF-8 text of the file ``path`` (a byte-order mark dropped): :func:`read_bytes`, then a
    :class:`UserFileError` naming it when it is not UTF-8."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserFileError(path, f"is not UTF-8 text (byte {exc.start}); save it as UTF-8", what) from None


def check_nesting(value: Any, path: Any, what: str | None = None, limit: int = MAX_NESTING) -> Any:
    """``value`` (a parsed file) if its lists and tables nest at most ``limit`` deep; else a
    :class:`UserFileError` naming ``path``. Walks without recursion, so any depth is measured safely."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > limit:
                raise UserFileError(path, f"nests too deeply: more than {limit} levels of lists or tables "
                                          "(accelbook.files.MAX_NESTING)", what)
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return value


def read_json(path: Any, what: str | None = None) -> Any:
    """The parsed JSON of the file ``path``: :func:`read_text`, then ``json.loads`` and :func:`check_nesting`,
    every failure a :class:`UserFileError` naming the file (the line and column of a syntax error)."""
    text = read_text(path, what)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserFileError(path, f"is not valid JSON: {exc}", what) from None
    except RecursionError:
        raise UserFileError(path, "nests lists or objects too deeply to parse", what) from None
    return check_nesting(value, path, what)


def read_toml(path: Any, what: str | None = None) -> dict[str, Any]:
    """The parsed TOML of the file ``path``: :func:`read_text`, then ``tomllib.loads`` and :func:`check_nesting`,
    every failure a :class:`UserFileError` naming the file."""
    text = read_text(path, what)
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserFileError(path, f"is not valid TOML: {exc}", what) from None
    except RecursionError:
        raise UserFileError(path, "nests arrays or tables too deeply to parse", what) from None
    return check_nesting(value, path, what)
