"""One reader a format: a measurement file's text → a tidy table of measured rows (:mod:`.schema`).

Each reader takes the file's text and a name to quote in errors, and returns one row per measured number:
``record`` (the record or line it came from), ``run`` (a label of that configuration), ``metric`` (unit in the name), ``measured`` and the
configuration the file states. Where each format is documented:

- ``vllm``: ``vllm bench serve --save-result`` writes one JSON object (``--append-result``: one a line):
  ``model_id``, ``num_prompts``, ``request_rate`` (``"inf"`` = all at once), ``burstiness``,
  ``max_concurrency``, ``completed``, ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``,
  ``output_throughput``, ``mean_/median_/p99_`` ``ttft_ms``, ``tpot_ms``, ``itl_ms``, and each ``--metadata
  KEY=VALUE`` as a key (``vllm/benchmarks/serve.py``, ``main_async``). ``vllm bench sweep serve`` writes a
  ``summary.json`` per combination (a list of those objects with the swept parameters merged in, e.g.
  ``max_concurrency``, ``tensor_parallel_size``) and a ``summary.csv`` of them all (``vllm/benchmarks/sweep/serve.py``):
  both are read here. Input and output lengths are the run's means, ``total_*_tokens / completed``.
- ``sglang``: ``python -m sglang.bench_serving`` appends one JSON line a run (``python/sglang/bench_serving.py``):
  the same metric keys, ``max_concurrency``, ``request_rate`` and ``server_info`` (the server's arguments:
  ``model_path``, ``tp_size``, ``dp_size``).
- ``nccl``: nccl-tests' stdout (``src/util.cu``): ``# Collective test starting: all_reduce_perf``, the
  ``#  Rank  0 Group  0 Pid ... on <host> device  0 [<bus id>] <device name>`` lines and the table ``size count
  type redop root | time algbw busbw #wrong`` out of place, then in place (time in µs, bandwidths in GB/s).
- ``mlperf``: LoadGen's ``mlperf_log_summary.txt`` (``loadgen/results.cc``, ``LogSummary``): ``Scenario``,
  ``Samples per second`` / ``Tokens per second`` (Offline), ``Completed samples per second`` / ``Completed tokens
  per second`` (Server), the first-token and time-to-output-token latencies (ns) and the test parameters
  (``ttft_latency (ns)``, ``tpot_latency (ns)``).
- ``training``: accelbook's own log schema (:data:`TRAINING_REQUIRED`, :data:`TRAINING_OPTIONAL`), a CSV with a
  header row (``#`` lines are comments) or a TOML file of ``[[run]]`` tables with the same keys.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tomllib
from pathlib import Path

import pandas as pd

from accelbook.files import read_bytes

from .schema import file_error

FORMATS = ("vllm", "sglang", "nccl", "mlperf", "training")

#: serving result key -> metric (the unit in the name)
SERVING_METRICS = {"output_throughput": "output_tokens_per_s", "request_throughput": "requests_per_s",
                   "mean_ttft_ms": "ttft_mean_ms", "median_ttft_ms": "ttft_median_ms",
                   "mean_tpot_ms": "tpot_mean_ms", "median_tpot_ms": "tpot_median_ms",
                   "mean_itl_ms": "itl_mean_ms", "median_itl_ms": "itl_median_ms"}
#: nccl-tests' collective binaries -> accelbook.network.collectives names
NCCL_COLLECTIVES = {"all_reduce_perf": "all_reduce", "all_gather_perf": "all_gather",
                    "reduce_scatter_perf": "reduce_scatter", "alltoall_perf": "all_to_all",
                    "broadcast_perf": "broadcast"}
#: a training log's columns: required, and optional (layout keys of accelbook.training.estimate)
TRAINING_REQUIRED = ("model", "chip", "n_chips", "seq_len", "global_batch_tokens")
TRAINING_OPTIONAL = ("run", "tp", "pp", "cp", "ep", "vp", "microbatch", "zero_stage", "recompute", "precision",
                     "schedule", "source")
#: a training log's measured columns (at least one a row): total tokens/s, per chip, seconds a step
TRAINING_METRICS = ("tokens_per_s", "tokens_per_s_per_chip", "step_time_s")


def read_text(path) -> str:
    """A measurement file's text (UTF-8); a ``ValueError`` naming the file when it is missing or not text
    (:func:`accelbook.files.read_bytes`, then :func:`decode` for the line of a bad byte)."""
    return decode(read_bytes(path), Path(path))


def decode(data: bytes, name) -> str:
    """UTF-8 text of ``data`` (a byte-order mark dropped); a ``ValueError`` naming ``name`` and the byte if not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise file_error(name, f"is not UTF-8 text (byte {exc.start}); measurement files are text", line) from None


def detect(text: str, name) -> str:
    """The format of ``text`` (one of :data:`FORMATS`), from its content; a ``ValueError`` if none fits."""
    head = text.lstrip()
    if head.startswith(("{", "[")):
        first = _json_records(text, name)[0]
        return "sglang" if "server_info" in first or ("dataset_name" in first and "model_id" not in first) else "vllm"
    if "MLPerf Results Summary" in text:
        return "mlperf"
    if re.search(r"^#\s+size\s+count\s+type", text, re.M) or "# nThread" in text or "Collective test starting" in text:
        return "nccl"
    if re.search(r"^\s*\[\[run\]\]", text, re.M):
        return "training"
    header = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    if "request_throughput" in header:
        return "vllm"
    if all(c in header for c in ("seq_len", "global_batch_tokens")):
        return "training"
    raise file_error(name, f"unknown measurement format; known: {', '.join(FORMATS)} (give format= to say which)")


def _json_records(text: str, name) -> list[dict]:
    """One JSON object, a list of them, or one object a line (JSON Lines)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as whole_err:
        data = []
        for i, ln in enumerate(text.splitlines(), 1):
            if ln.strip():
                try:
                    data.append(json.loads(ln))
                except json.JSONDecodeError as exc:     # after a good line: JSON Lines, this line is bad
                    err, line = (exc, i) if data else (whole_err, whole_err.lineno)
                    raise file_error(name, f"not valid JSON: {err.msg} (column {err.colno})", line) from None
    records = data if isinstance(data, list) else [data]
    if not records or not all(isinstance(r, dict) for r in records):
        raise file_error(name, "a benchmark result must be a JSON object, a list of objects or one object a line")
    return records


def _number(v, name, key, line=None):
    """A finite number from a JSON/CSV field (``"inf"`` allowed: vLLM's request rate)."""
    if isinstance(v, bool):
        raise file_error(name, f"must be a number, got {v!r}", line, key)
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise file_error(name, f"must be a number, got {v!r}", line, key) from None
    if math.isnan(x) or (math.isinf(x) and key != "request_rate"):
        raise file_error(name, f"must be a finite number, got {v!r}", line, key)
    return x


def _serving_rows(records: list[dict], name, config_of) -> pd.DataFrame:
    rows = []
    for i, r in enumerate(records, 1):
        where = f"{name} (record {i})" if len(records) > 1 else name
        for key in ("completed", "total_input_tokens", "total_output_tokens"):
            if key not in r:
                raise file_error(where, "required key is missing (a serving benchmark's result)", key=key)
        done = _number(r["completed"], where, "completed")
        if done < 1:
            raise file_error(where, "no request completed: nothing was measured", key="completed")
        rate = r.get("request_rate", "inf")
        cfg = {"input_len": _number(r["total_input_tokens"], where, "total_input_tokens") / done,
               "output_len": _number(r["total_output_tokens"], where, "total_output_tokens") / done,
               "num_prompts": int(done), "request_rate": _number(rate, where, "request_rate"),
               "burstiness": _number(r.get("burstiness", 1.0), where, "burstiness"),
               "concurrency": _int_key(r, ("max_concurrency",), where),
               **config_of(r, where)}
        label = f"rate {rate}/s" + (f", concurrency {cfg['concurrency']}" if cfg["concurrency"] else "")
        metrics = {m: r[k] for k, m in SERVING_METRICS.items() if k in r and r[k] is not None}
        if not metrics:
            raise file_error(where, f"no measured value; expected some of {sorted(SERVING_METRICS)}")
        for metric, v in metrics.items():
            rows.append({"record": i, "run": label, "metric": metric, "measured": _number(v, where, metric), **cfg})
    return pd.DataFrame(rows)


def _isnan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _int_key(r: dict, keys, where):
    for k in keys:
        if k in r and r[k] not in (None, "") and not _isnan(r[k]):
            return int(_number(r[k], where, k))
    return None


def _vllm_config(r: dict, where) -> dict:
    """The model and layout a vLLM result states: ``model_id``, and the swept or ``--metadata`` keys."""
    tp = _int_key(r, ("tensor_parallel_size", "tensor-parallel-size", "tp"), where)
    pp = _int_key(r, ("pipeline_parallel_size", "pipeline-parallel-size", "pp"), where)
    dp = _int_key(r, ("data_parallel_size", "data-parallel-size", "dp"), where)
    n = _int_key(r, ("n_chips", "n_gpus"), where)
    if n is None and dp is not None:
        n = dp * (tp or 1) * (pp or 1)
    out = {"model": r.get("model_id") or r.get("model"), "tp": tp, "pp": pp, "n_chips": n}
    for k in ("chip", "precision"):
        if r.get(k):
            out[k] = r[k]
    return out


def read_vllm(text: str, name="vllm result") -> pd.DataFrame:
    """``vllm bench serve`` / ``vllm bench sweep serve`` results (JSON, JSON Lines, or the sweep's summary.csv)."""
    if text.lstrip().startswith(("{", "[")):
        records = _json_records(text, name)
    else:
        try:
            df = pd.read_csv(io.StringIO(text), comment=None)
        except (pd.errors.ParserError, ValueError) as exc:
            raise file_error(name, f"not a vLLM sweep summary.csv: {exc}") from None
        records = [{k: v for k, v in row.items() if not str(k).startswith("Unnamed")} for row in df.to_dict("records")]
        if not records:
            raise file_error(name, "the sweep summary has no rows")
    return _serving_rows(records, name, _vllm_config)


def _sglang_config(r: dict, where) -> dict:
    info = r.get("server_info") if isinstance(r.get("server_info"), dict) else {}
    tp, dp = _int_key(info, ("tp_size",), where), _int_key(info, ("dp_size",), where)
    return {"model": info.get("model_path") or r.get("model"), "tp": tp, "pp": _int_key(info, ("pp_size",), where),
            "n_chips": None if tp is None else tp * (dp or 1)}


def read_sglang(text: str, name="sglang result") -> pd.DataFrame:
    """``sglang.bench_serving`` output: one JSON object a line (or one object)."""
    return _serving_rows(_json_records(text, name), name, _sglang_config)


_RANK = re.compile(r"^#\s+Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$")


def read_nccl(text: str, name="nccl-tests output") -> pd.DataFrame:
    """nccl-tests' text output: one row per size, placement (out-of-place, in-place) and metric
    (``time_us``, ``busbw_gb_s``). ``n_chips`` is the number of rank lines, ``nodes`` the hosts they name,
    ``chip`` their device name, ``collective`` from the test's name (where the file gives them)."""
    cfg, hosts, devices, rows = {}, set(), set(), []
    for i, ln in enumerate(text.splitlines(), 1):
        s = ln.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = re.search(r"Collective test starting:\s*(\S+)", s)
            if m:
                cfg["collective"] = NCCL_COLLECTIVES.get(m.group(1), m.group(1))
            rk = _RANK.match(s)
            if rk:
                hosts.add(rk.group(2))
                devices.add(rk.group(3))
                cfg["n_chips"] = cfg.get("n_chips", 0) + 1
            continue
        rows.extend(_nccl_line(s.split(), name, i))
    if not rows:
        raise file_error(name, "no result lines (size count type redop root time algbw busbw #wrong ...) found")
    if hosts:
        cfg["nodes"] = len(hosts)
    if len(devices) == 1:
        cfg["chip"] = devices.pop()
    return pd.DataFrame(rows).assign(**cfg)


def _nccl_line(tok: list[str], name, line: int) -> list[dict]:
    """One result line: ``size count type redop [root] | time algbw busbw #wrong | time algbw busbw #wrong``."""
    if len(tok) not in (12, 13):
        raise file_error(name, f"a result line has 12 or 13 columns (size count type redop root, then time algbw "
                               f"busbw #wrong out of place and in place), got {len(tok)}", line)
    size = _number(tok[0], name, "size", line)
    rest = tok[5:] if len(tok) == 13 else tok[4:]
    out = []
    for placement, (t, _alg, bus, _wrong) in (("out-of-place", rest[:4]), ("in-place", rest[4:])):
        if size <= 0:
            continue
        label = f"{int(size):,} B {placement}"
        for metric, v in (("time_us", t), ("busbw_gb_s", bus)):
            out.append({"record": line, "run": label, "metric": metric, "measured": _number(v, name, metric, line),
                        "message_bytes": size, "placement": placement})
    return out


#: LoadGen summary line -> metric and the factor to its unit
_MLPERF = {"samples per second": ("samples_per_s", 1.0), "completed samples per second": ("samples_per_s", 1.0),
           "tokens per second": ("tokens_per_s", 1.0), "completed tokens per second": ("tokens_per_s", 1.0),
           "mean first token latency (ns)": ("ttft_mean_ms", 1e-6),
           "99.00 percentile first token latency (ns)": ("ttft_p99_ms", 1e-6),
           "mean time to output token (ns)": ("tpot_mean_ms", 1e-6),
           "99.00 percentile time to output token (ns)": ("tpot_p99_ms", 1e-6)}


def read_mlperf(text: str, name="mlperf_log_summary.txt") -> pd.DataFrame:
    """LoadGen's result summary: throughput and token latencies, with the scenario, its limits and (Server)
    the scheduled rate. The model, chip and lengths are not in the file: the setup gives them."""
    pairs, metrics = {}, {}
    for i, ln in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*([^:*=][^:]*?)\s*:\s*(\S.*?)\s*$", ln)
        if not m:
            continue
        key, value = m.group(1).lower(), m.group(2)
        pairs.setdefault(key, value)
        if key in _MLPERF and _MLPERF[key][0] not in metrics:
            metric, f = _MLPERF[key]
            metrics[metric] = _number(value, name, m.group(1), i) * f
    if "scenario" not in pairs:
        raise file_error(name, "no 'Scenario :' line: not an MLPerf LoadGen summary")
    if not metrics:
        raise file_error(name, "no throughput or latency line found")
    cfg = {"scenario": pairs["scenario"], "request_rate": _opt(pairs, "scheduled samples per second", name, 1.0),
           "ttft_limit_s": _opt(pairs, "ttft_latency (ns)", name, 1e-9),
           "tpot_limit_s": _opt(pairs, "tpot_latency (ns)", name, 1e-9)}
    label = f"{pairs['scenario']} ({pairs.get('result is', 'validity not stated')})"
    return pd.DataFrame([{"record": 1, "run": label, "metric": k, "measured": v, **cfg} for k, v in metrics.items()])


def _opt(pairs: dict, key: str, name, factor: float):
    return _number(pairs[key], name, key) * factor if key in pairs else None


def read_training(text: str, name="training log") -> pd.DataFrame:
    """A training log (module docstring): CSV with a header, or TOML ``[[run]]`` tables."""
    if re.search(r"^\s*\[\[run\]\]", text, re.M):
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise file_error(name, f"not valid TOML: {exc}") from None
        extra = sorted(set(raw) - {"run", "sources"})
        if extra:
            raise file_error(name, "unknown top-level table; a training log has [[run]] tables", key=extra[0])
        entries = [(None, r) for r in raw["run"]]
    else:
        lines = text.splitlines(keepends=True)
        # comment lines become blank lines (which csv skips), so every row keeps its line number in the file
        body = ["\n" if ln.lstrip().startswith("#") else ln for ln in lines]
        start = next((i for i, ln in enumerate(body) if ln.strip()), None)
        if start is None:
            raise file_error(name, "no header row: a training log's first line names its columns")
        try:
            reader = csv.DictReader(io.StringIO("".join(body[start + 1:])), fieldnames=next(csv.reader([body[start]])))
            entries = [(start + 1 + reader.line_num, r) for r in reader]
        except csv.Error as exc:
            raise file_error(name, f"not a CSV file: {exc}", start + 1 + reader.line_num) from None
    if not entries:
        raise file_error(name, "no runs in the training log")
    return pd.DataFrame([row for i, e in enumerate(entries, 1) for row in _training_rows(e[1], name, e[0] or i)])


def _training_rows(e: dict, name, line) -> list[dict]:
    known = set(TRAINING_REQUIRED) | set(TRAINING_OPTIONAL) | set(TRAINING_METRICS)
    if None in e:
        raise file_error(name, "more values than the header has columns", line)
    e = {k.strip(): v for k, v in e.items() if v not in (None, "")}
    for k in e:
        if k not in known:
            raise file_error(name, f"unknown column; a training log has {sorted(known)}", line, k)
    for k in TRAINING_REQUIRED:
        if k not in e:
            raise file_error(name, "required column is missing or empty", line, k)
    given = [m for m in TRAINING_METRICS if m in e]
    if not given:
        raise file_error(name, f"no measured value: give one of {TRAINING_METRICS}", line)
    cfg = {}
    for k, v in e.items():
        if k in ("model", "chip", "run", "recompute", "precision", "schedule", "source") or k in TRAINING_METRICS:
            cfg[k] = v
        else:
            x = _number(v, name, k, line)
            if x != int(x) or x < 1:
                raise file_error(name, f"must be a whole number >= 1, got {v!r}", line, k)
            cfg[k] = int(x)
    label = cfg.pop("run", f"run {line}")
    return _split_metrics(label, cfg, given, name, line)


def _split_metrics(label, cfg, given, name, line) -> list[dict]:
    base = {k: v for k, v in cfg.items() if k not in TRAINING_METRICS}
    return [{"record": line, "run": label, "metric": m, "measured": _number(cfg[m], name, m, line), **base}
            for m in given]


READERS = {"vllm": read_vllm, "sglang": read_sglang, "nccl": read_nccl, "mlperf": read_mlperf,
           "training": read_training}


def load(path=None, text: str | None = None, name=None, format: str | None = None) -> tuple[pd.DataFrame, str]:
    """(measured rows, format) of a file at ``path`` or of ``text`` (pasted), its format detected unless given."""
    if (path is None) == (text is None):
        raise ValueError("give a measurement file's path or its text, not both")
    if text is None:
        name = name or str(path)
        text = read_text(path)
    elif isinstance(text, bytes):
        text = decode(text, name or "pasted text")
    elif not isinstance(text, str):
        raise TypeError(f"text must be a str or bytes, got {type(text).__name__}")
    name = name or "pasted text"
    if not text.strip():
        raise file_error(name, "is empty")
    if format is None:
        format = detect(text, name)
    elif format not in READERS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    return READERS[format](text, name), format
