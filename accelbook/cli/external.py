"""Subcommands whose work lives in other sub-packages, each imported only when run (``accelbook --help`` stays fast):

- ``accelbook measure ...``: :func:`accelbook.measure.main` parses the rest of the line (``--quick``,
  ``--out my.toml``, ``--json``) and times this machine;
- ``accelbook validate FILE``: :func:`accelbook.measurements.validation_table` puts a file of the user's own
  measurements (vLLM or SGLang bench JSON, nccl-tests output, ...) beside the model's predictions;
- ``accelbook launch``: :func:`accelbook.inference.launch.launch_args` of the layout
  :func:`accelbook.inference.max_throughput` picks (or :func:`~accelbook.inference.estimate`'s, given
  ``--batch-size``): the serving engines' launch arguments, labelled as a starting point.
"""

from __future__ import annotations

import importlib

from accelbook.cli.args import Arg, Command, integer, integer_list, number
from accelbook.cli.infer import ESTIMATE_KW, LENGTH_ARGS, SERVE_ARGS
from accelbook.cli.output import frame_table


def run_measure(v: dict):
    mod = importlib.import_module("accelbook.measure")
    return mod.main(list(v["argv"]))


VALIDATE_ARGS = (
    Arg("file", str, "a measurement file: vLLM or SGLang bench JSON, nccl-tests text, an MLPerf summary, a training log",
        positional=True, required=True),
    Arg("format", str, "vllm, sglang, nccl, mlperf or training (default: detected)"),
    Arg("setup", str, "a TOML file of what the measurement file does not say (model, chip, n_chips, ...)"),
    Arg("model", str, "the model measured"), Arg("chip", str, "the chip measured"),
    Arg("n_chips", integer, "chips the measured system used"), Arg("precision", str, "the precision run"),
    Arg("tp", integer, "tensor-parallel degree"), Arg("system", str, "the collective's system"),
    Arg("collective", str, "the collective measured"),
)


def run_validate(v: dict):
    mod = importlib.import_module("accelbook.measurements")
    path = v.pop("file")
    df = mod.validation_table(path, **v)
    cols = ("run", "metric", "measured", "predicted", "error", "dominant")
    return df, (f"your measurements beside the model ({path}; error = predicted / measured - 1; "
                f"--json for every column)\n{frame_table(df, cols)}")


#: launch's own arguments; the layout's are `accelbook infer max-throughput`'s (estimate's, with --batch-size)
LAUNCH_ARGS = (
    Arg("engine", str, "vllm, sglang or trtllm (default: all three)"),
    Arg("serve_model", str, "the model as the engine names it: a Hugging Face id or a path (default MODEL)"),
    Arg("chunk_tokens", integer, "prompt chunk (tokens; default: the serving simulator's)"),
    Arg("batch_size", integer, "serve this batch with estimate's layout (--tp, --pp) instead of the best one"),
    Arg("tp", integer, "tensor-parallel degree (with --batch-size)"),
    Arg("pp", integer, "pipeline stages (with --batch-size)"),
)


def run_launch(v: dict):
    from accelbook import inference
    from accelbook.cli.output import plain

    mod = importlib.import_module("accelbook.inference.launch")
    own = {k: v.pop(k) for k in ("engine", "serve_model", "chunk_tokens") if k in v}
    if "batch_size" in v:
        e = inference.estimate(**{k: x for k, x in v.items() if k not in ("tpot_target_s", "ttft_target_s", "batches", "max_tp")})
    else:
        for k in ("tp", "pp"):
            if k in v:
                raise ValueError(f"--{k} needs --batch-size (without it the layout is the one with the most tokens/s)")
        e = inference.max_throughput(**v)
    engines = [own["engine"]] if "engine" in own else list(mod.ENGINES)
    args = [mod.launch_args(e, eng, own.get("serve_model", "MODEL"), own.get("chunk_tokens")) for eng in engines]
    lay = {k: e.config.get(k) for k in ("tp", "pp", "replicas", "batch_size", "kv_precision")}
    lines = [f"layout: {lay}; {e.tokens_per_s_per_chip:,.0f} tokens/s per chip, TPOT {e.tpot_s * 1e3:.1f} ms"]
    for a in args:
        lines.append(f"{a.engine}: {a.line()}" + (f"\n  extra options file:\n{a.extra_yaml}" if a.extra_yaml else "")
                     + (f"\n  (start {a.instances} instances)" if a.instances > 1 else ""))
    lines.append(f"({mod.STARTING_POINT})")
    return {"layout": lay, "estimate": plain(e), "launch": [plain(a) for a in args]}, "\n".join(lines)


MEASURE = Command(("measure",), "time GEMMs, memory bandwidth (and all-reduces) on this machine",
                  """example:
  accelbook measure --quick --out my_machine.toml     (then ab.register("my_machine.toml"))
  accelbook measure --help                            (the measurement kit's own options)""",
                  (), run_measure, passthrough=True)
VALIDATE = Command(("validate",), "your own measurements beside the model's predictions",
                   """example:
  accelbook validate vllm_bench.json --chip h100 --n-chips 1
  accelbook validate nccl_all_reduce.txt --system "H100 nodes, IB rails" --json""",
                   VALIDATE_ARGS, run_validate)
LAUNCH = Command(("launch",), "the best layout as vLLM, SGLang or TensorRT-LLM launch arguments (a starting point)",
                 """example:
  accelbook launch --model llama-3.1-70b --chip h200 --n-chips 8 --input-len 2048 --output-len 256 \\
      --precision fp8 --tpot-target-s 0.05 --engine vllm --serve-model meta-llama/Llama-3.1-70B-Instruct""",
                 (*SERVE_ARGS, *LENGTH_ARGS, Arg("tpot_target_s", number, "the slowest TPOT allowed (s)"),
                  Arg("ttft_target_s", number, "the slowest TTFT allowed (s)"),
                  Arg("batches", integer_list, "batch sizes tried"), Arg("max_tp", integer, "largest tensor-parallel degree"),
                  *LAUNCH_ARGS, *ESTIMATE_KW),
                 run_launch)

COMMANDS = (MEASURE, VALIDATE, LAUNCH)
