"""What a measured row is, and the setup a user writes beside a file that does not say it.

A reader (:mod:`accelbook.measurements.readers`) turns one file into a tidy table: one row per measured
number, its ``metric`` (the unit is in the name: ``ttft_mean_ms``, ``busbw_gb_s``), the ``measured``
value in that unit and the configuration the number was measured at (:data:`CONFIG_COLUMNS`, those the
file or its setup gives) and ``record``, the record, line or run it came from. :func:`setup_of` merges what the user states, in order of precedence:

1. the arguments of :func:`~accelbook.measurements.compare.validation_table` (``chip="h100"``);
2. the setup, a dict or a TOML file (``setup=``), or else the file's **sidecar**: ``<stem>.setup.toml``
   beside it (``nccl_all_reduce_perf.txt`` → ``nccl_all_reduce_perf.setup.toml``);
3. what the file itself records (vLLM's ``model_id``, nccl-tests' device lines).

A setup TOML holds one ``[setup]`` table of :data:`SETUP_KEYS` and, optionally, the user's own
``[sources.<id>]`` (``title``, ``url``, ``date``, ``kind``: the schema of ``data/sources.toml``), named by
``src`` in ``[setup]``::

    [setup]
    chip = "h100"                 # a catalogue id (accelbook.chips())
    system = "hgx_h100"           # collectives: a preset of accelbook.network.systems.PRESETS
    args = { nvls = false }       #   and its arguments
    src = "our-node"

    [sources.our-node]
    title = "nccl-tests on our 8 x H100 node"
    url = "https://example.org/our-runbook"
    date = "2026-11"
    kind = "primary"

A key the setup does not know, a malformed source, a bad TOML: a ``ValueError`` naming the file and the key.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from accelbook.specs.chips import get_chip
from accelbook.specs.loader import check_keys, read_table_file, user_sources
from accelbook.specs.models import get_model

#: the keys of a ``[setup]`` table (and of ``validation_table``'s ``setup=`` dict)
SETUP_KEYS = {
    "model": "catalogue model id (accelbook.models()); a Hugging Face id is tried without its org and suffixes",
    "chip": "catalogue chip id (accelbook.chips())",
    "n_chips": "chips the measured system used (serving: all replicas; collectives: ranks)",
    "precision": "weights' precision for inference (default bf16) and training (default bf16)",
    "kv_precision": "KV-cache precision (default: the weights')",
    "tp": "tensor-parallel degree of one serving replica (default: all the chips)",
    "pp": "pipeline stages of one serving replica (default 1)",
    "input_len": "prompt tokens a request (default: the file's mean)",
    "output_len": "output tokens a request (default: the file's mean)",
    "n_requests": "requests to simulate for a rate-limited serving run (default: the file's count, at most 4,096)",
    "kv_policy": "the serving simulator's KV policy: 'paged' (vLLM, SGLang; the default) or 'reserve'",
    "system": "collectives: a preset of accelbook.network.systems.PRESETS (default: from nccl-tests' device lines)",
    "args": "collectives: the preset's arguments, a table",
    "collective": "collectives: all_reduce, all_gather, reduce_scatter, all_to_all or broadcast",
    "src": "a source id of the [sources] table (or data/sources.toml)",
    "source": "the source in words, instead of a src (the table's source column)",
    "note": "free text, shown in the table",
}
#: configuration columns a measured row may carry (the rest of a row: run, metric, measured)
CONFIG_COLUMNS = ("model", "chip", "n_chips", "tp", "pp", "precision", "kv_precision", "input_len", "output_len",
                  "concurrency", "request_rate", "burstiness", "num_prompts", "scenario", "ttft_limit_s",
                  "tpot_limit_s", "collective", "message_bytes", "placement", "nodes", "system", "args", "seq_len",
                  "global_batch_tokens", "cp", "ep", "vp", "microbatch", "zero_stage", "recompute", "schedule", "source")


def file_error(name, msg: str, line: int | None = None, key: str | None = None) -> ValueError:
    """``ValueError("<name>: line 12: key 'size': <msg>")``: every reader's way to say what is wrong where."""
    where = "".join((f": line {line}" if line is not None else "", f": key {key!r}" if key is not None else ""))
    return ValueError(f"{name}{where}: {msg}")


def sidecar_path(path: Path) -> Path:
    """The setup file beside ``path``: ``<stem>.setup.toml`` in the same folder."""
    return path.with_name(path.stem + ".setup.toml")


def read_setup(path) -> dict:
    """A setup TOML's ``[setup]`` table, with ``source`` (the title of its ``src``) resolved against the file's
    own ``[sources]`` and ``data/sources.toml``; a ``ValueError`` naming the file and key when malformed."""
    path = Path(path)
    raw = read_table_file(path)
    sources = user_sources(path, raw, None)
    check_keys(path, None, raw, required={"setup"}, optional=set())
    return checked_setup(raw["setup"], path, sources)


def setup_from_text(text: str, name="setup") -> dict:
    """:func:`read_setup` of a setup TOML's text (pasted in a notebook's box)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise file_error(name, f"not valid TOML: {exc}") from None
    sources = user_sources(Path(str(name)), raw, None)
    check_keys(name, None, raw, required={"setup"}, optional=set())
    return checked_setup(raw["setup"], name, sources)


def checked_setup(setup: dict, name, sources=None) -> dict:
    """``setup`` with its keys checked against :data:`SETUP_KEYS` and ``src`` resolved to ``source``."""
    if not isinstance(setup, dict):
        raise file_error(name, f"setup must be a table (a dict) of {sorted(SETUP_KEYS)}, got {type(setup).__name__}")
    check_keys(name, "setup", setup, required=set(), optional=set(SETUP_KEYS))
    out = dict(setup)
    if "src" in out:
        if sources is None:
            from accelbook.specs.loader import load_sources
            sources = load_sources()
        if out["src"] not in sources:
            raise file_error(name, f"src {out['src']!r} is neither in the file's [sources] nor in data/sources.toml",
                             key="setup.src")
        out["source"] = sources[out.pop("src")].title
    return out


def setup_of(explicit: dict, setup, data_path: Path | None, name) -> dict:
    """The user's statements, merged (module docstring): ``explicit`` arguments over ``setup`` (a dict, a
    TOML path, or None for the sidecar of ``data_path`` if there is one)."""
    if setup is None:
        side = sidecar_path(data_path) if data_path is not None else None
        stated = read_setup(side) if side is not None and side.is_file() else {}
    elif isinstance(setup, (str, Path)):
        stated = read_setup(setup)
    else:
        stated = checked_setup(setup, name)
    unknown = sorted(set(explicit) - set(SETUP_KEYS))
    if unknown:
        raise ValueError(f"unknown setting {unknown[0]!r}; settings are {sorted(SETUP_KEYS)}")
    return {**stated, **{k: v for k, v in explicit.items() if v is not None}}


_SUFFIXES = re.compile(r"(-instruct|-chat|-hf|-base|-fp8|-bf16|-awq|-gptq|-it)+$")


def model_id(name: str, where) -> str:
    """A catalogue model id from a file's model name: the id itself, or a Hugging Face id or path without its
    organisation and its ``-Instruct``/``-FP8`` suffixes (``meta-llama/Meta-Llama-3.1-8B-Instruct`` →
    ``llama-3.1-8b``); a ``ValueError`` saying to set ``model`` when neither is in the catalogue."""
    tail = str(name).rstrip("/").split("/")[-1].lower()
    for candidate in (str(name), tail, _SUFFIXES.sub("", tail), _SUFFIXES.sub("", tail).removeprefix("meta-")):
        try:
            return get_model(candidate).id
        except (KeyError, ValueError):
            continue
    raise file_error(where, f"model {name!r} is not in the catalogue; set model = '<id>' (accelbook.models()) "
                            "in the setup or as an argument")


def chip_id(name: str, where) -> str:
    """A catalogue chip id from a device name (``NVIDIA H100 80GB HBM3`` → ``h100``), else a ``ValueError``."""
    words = str(name).replace("NVIDIA", "").split()
    for candidate in (str(name), *(words[:1])):
        try:
            return get_chip(candidate).id
        except (KeyError, ValueError):
            continue
    raise file_error(where, f"chip {name!r} is not in the catalogue; set chip = '<id>' (accelbook.chips())")
