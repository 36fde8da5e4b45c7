"""What to run: the launch arguments of vLLM, SGLang and TensorRT-LLM for a layout the model chose.

A STARTING POINT, NOT A TUNED CONFIGURATION: the model picks tensor and pipeline parallel sizes, a batch and
a KV-cache precision; an engine adds what the model does not see (its memory pool, CUDA graphs, its
scheduler), so measure and tune from here. The mapping, per replica:

- tensor parallel ``tp``, pipeline parallel ``pp``; replicas beyond one as data parallel (vLLM, SGLang) or
  as separate ``trtllm-serve`` instances;
- max sequences = the batch ``B``;
- max batched tokens: the serving simulator's prompt chunk ``chunk_tokens`` (its default, 512,
  :func:`accelbook.inference.serving.simulate`) plus one token per decoding sequence, since vLLM's and
  TensorRT-LLM's budgets count the decodes: ``chunk_tokens + B``; SGLang's chunked-prefill size is the
  prompt chunk alone, ``chunk_tokens``;
- KV-cache dtype: ``bf16``/``fp16`` -> the engine's ``auto`` (the model's dtype), ``fp8`` -> FP8 (E4M3).

Flag names, from the engines' documentation:

- vLLM ``vllm serve``: ``--tensor-parallel-size``, ``--pipeline-parallel-size``, ``--data-parallel-size``,
  ``--max-num-seqs``, ``--max-num-batched-tokens``, ``--kv-cache-dtype {auto,fp8,fp8_e5m2,fp8_e4m3}``
  (https://docs.vllm.ai/en/v0.8.1/serving/engine_args.html);
- SGLang ``python -m sglang.launch_server``: ``--tp-size``, ``--pp-size``, ``--dp-size``,
  ``--max-running-requests``, ``--chunked-prefill-size``, ``--kv-cache-dtype fp8_e4m3``
  (https://docs.sglang.io/advanced_features/server_arguments.html,
  https://docs.sglang.io/advanced_features/pipeline_parallelism.html);
- TensorRT-LLM ``trtllm-serve``: ``--tp_size``, ``--pp_size``, ``--max_batch_size``, ``--max_num_tokens``
  (https://nvidia.github.io/TensorRT-LLM/0.18.2/commands/trtllm-serve.html); the KV dtype in the YAML of
  ``--extra_llm_api_options``, ``kv_cache_config: dtype: fp8``
  (https://nvidia.github.io/TensorRT-LLM/1.0.0/commands/trtllm-serve/run-benchmark-with-trtllm-serve.html;
  newer releases call the option ``--config``).
"""

from __future__ import annotations

import inspect
import shlex
from dataclasses import dataclass
from typing import Mapping

from accelbook.checks import one_of, whole

from .result import InferenceEstimate
from .serving import simulate

ENGINES = ("vllm", "sglang", "trtllm")
STARTING_POINT = "a starting point from the model, not a tuned configuration: measure, then tune"
#: the serving simulator's default prompt chunk (tokens), read from its signature so it is typed once
DEFAULT_CHUNK_TOKENS: int = inspect.signature(simulate).parameters["chunk_tokens"].default

#: the model's KV-cache precision -> each engine's --kv-cache-dtype (or TensorRT-LLM's kv_cache_config dtype)
KV_DTYPES: Mapping[str, Mapping[str, str]] = {
    "vllm": {"bf16": "auto", "fp16": "auto", "fp8": "fp8"},
    "sglang": {"bf16": "auto", "fp16": "auto", "fp8": "fp8_e4m3"},
    "trtllm": {"bf16": "auto", "fp16": "auto", "fp8": "fp8"},
}


@dataclass(frozen=True)
class LaunchArgs:
    """One engine's command for one replica layout: ``argv`` (the command and its arguments),
    ``extra_yaml`` (TensorRT-LLM's extra options file, ``""`` for the others), ``instances`` (how many
    copies to start: replicas an engine does not run as data parallel), ``note`` (:data:`STARTING_POINT`)."""

    engine: str
    argv: tuple[str, ...]
    extra_yaml: str = ""
    instances: int = 1
    note: str = STARTING_POINT

    def line(self) -> str:
        """The command as one shell line."""
        return shlex.join(self.argv)


def _layout(layout) -> tuple[int, int, int, int, str]:
    """(tp, pp, replicas, batch, kv precision) of an :class:`InferenceEstimate` or a mapping with those keys."""
    cfg = layout.config if isinstance(layout, InferenceEstimate) else layout
    if not isinstance(cfg, Mapping):
        raise TypeError(f"layout must be an InferenceEstimate or a mapping with tp, pp, batch_size and "
                        f"kv_precision, got {type(layout).__name__}")
    missing = [k for k in ("tp", "batch_size", "kv_precision") if k not in cfg]
    if missing:
        raise ValueError(f"layout has no {missing[0]!r}: it needs tp, pp, batch_size and kv_precision")
    return (whole("tp", cfg["tp"]), whole("pp", cfg.get("pp", 1)), whole("replicas", cfg.get("replicas", 1)),
            whole("batch_size", cfg["batch_size"]), str(cfg["kv_precision"]))


def launch_args(layout, engine: str, model: str = "MODEL", chunk_tokens: int | None = None) -> LaunchArgs:
    """The launch arguments of ``engine`` (``"vllm"``, ``"sglang"`` or ``"trtllm"``) for ``layout`` (an
    :class:`InferenceEstimate`, e.g. from :func:`max_throughput`, or a mapping with ``tp``, ``pp``,
    ``replicas``, ``batch_size``, ``kv_precision``), serving ``model`` (a Hugging Face id or a path; a
    placeholder by default) with a prompt chunk of ``chunk_tokens`` (default :data:`DEFAULT_CHUNK_TOKENS`).
    The mapping is in the module docstring. A KV precision the engine has no dtype for is a ``ValueError``."""
    one_of("engine", engine, ENGINES)
    tp, pp, replicas, batch, kv = _layout(layout)
    chunk = DEFAULT_CHUNK_TOKENS if chunk_tokens is None else whole("chunk_tokens", chunk_tokens)
    if kv not in KV_DTYPES[engine]:
        raise ValueError(f"kv_precision {kv!r} has no KV-cache dtype in {engine}; it takes "
                         f"{', '.join(KV_DTYPES[engine])}")
    dtype = KV_DTYPES[engine][kv]
    if engine == "vllm":
        argv = ["vllm", "serve", model, "--tensor-parallel-size", str(tp), "--pipeline-parallel-size", str(pp),
                "--max-num-seqs", str(batch), "--max-num-batched-tokens", str(chunk + batch), "--kv-cache-dtype", dtype]
        argv += ["--data-parallel-size", str(replicas)] if replicas > 1 else []
        return LaunchArgs(engine, tuple(argv))
    if engine == "sglang":
        argv = ["python", "-m", "sglang.launch_server", "--model-path", model, "--tp-size", str(tp), "--pp-size", str(pp),
                "--max-running-requests", str(batch), "--chunked-prefill-size", str(chunk), "--kv-cache-dtype", dtype]
        argv += ["--dp-size", str(replicas)] if replicas > 1 else []
        return LaunchArgs(engine, tuple(argv))
    argv = ["trtllm-serve", model, "--tp_size", str(tp), "--pp_size", str(pp), "--max_batch_size", str(batch),
            "--max_num_tokens", str(chunk + batch), "--extra_llm_api_options", "extra-llm-api-config.yml"]
    return LaunchArgs(engine, tuple(argv), extra_yaml=f"kv_cache_config:\n  dtype: {dtype}\n", instances=replicas)


def launch_lines(layout, model: str = "MODEL", chunk_tokens: int | None = None) -> dict[str, str]:
    """``{engine: command line}`` for every engine of :data:`ENGINES` (TensorRT-LLM's with its YAML's
    ``kv_cache_config`` appended as a comment, and ``× n`` when the replicas are separate instances)."""
    out = {}
    for eng in ENGINES:
        a = launch_args(layout, eng, model, chunk_tokens)
        extra = ("  # extra-llm-api-config.yml: " + " ".join(a.extra_yaml.split())) if a.extra_yaml else ""
        copies = f"  (start {a.instances} instances)" if a.instances > 1 else ""
        out[eng] = a.line() + extra + copies
    return out
