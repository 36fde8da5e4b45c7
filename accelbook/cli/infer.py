"""``accelbook infer estimate|sweep|max-throughput``: :func:`accelbook.inference.estimate`,
:func:`accelbook.inference.sweep` and :func:`accelbook.inference.max_throughput`."""

from __future__ import annotations

from accelbook.cli.args import Arg, Command, integer, integer_list, number, number_tuple
from accelbook.cli.output import fields_table, frame_table

SERVE_ARGS = (
    Arg("model", str, "model id or name (accelbook model lists them)", required=True),
    Arg("chip", str, "chip id or name (accelbook chip lists them)", required=True),
    Arg("n_chips", integer, "chips in all (replicas × tp × pp)", required=True),
)
LENGTH_ARGS = (Arg("input_len", integer, "prompt tokens", required=True),
               Arg("output_len", integer, "output tokens", required=True),
               Arg("precision", str, "weights' precision: bf16, fp8, int8, fp4 ... (default bf16)"))
#: the estimate's keywords a sweep and max-throughput pass on
ESTIMATE_KW = (
    Arg("kv_precision", str, "the KV cache's precision (default: the weights')"),
    Arg("mem_efficiency", number, "share of memory bandwidth reached (default: the chip's measured)"),
    Arg("hop_latency_s", number, "latency of one hop between chips (s)"),
    Arg("price_usd_per_hour", number, "price of one chip-hour (USD)"),
    Arg("cuda_graphs", bool, "kernels replayed as CUDA graphs"),
    Arg("attention", str, "tp, or dp (data-parallel attention with expert parallelism, MoE models)"),
    Arg("pue", number, "the site's PUE (wall / IT power)"),
)
#: the columns a sweep's table shows
SWEEP_COLUMNS = ("tp", "pp", "batch", "ttft_s", "tpot_s", "tokens_per_s_per_user", "tokens_per_s_per_chip",
                 "usd_per_million_tokens", "flag")


def error_bands() -> dict:
    """How close the inference model has come to published runs, by metric (accelbook.inference.validation)."""
    from accelbook.inference.validation import error_band

    return error_band()


def estimate_json(e) -> dict:
    from accelbook.cli.output import plain

    return {**plain(e), "limit": e.limit, "error_band": plain(error_bands())}


def estimate_text(e, title: str) -> str:
    rows = {k: getattr(e, k) for k in ("model", "chip", "n_chips", "ttft_s", "tpot_s", "tokens_per_s",
                                        "tokens_per_s_per_user", "tokens_per_s_per_chip", "kv_cache_bytes",
                                        "max_batch_size", "fits", "memory_per_chip_bytes", "memory_capacity_bytes",
                                        "power_w_per_chip", "tokens_per_s_per_kw", "usd_per_million_tokens")}
    lay = {k: e.config[k] for k in ("tp", "pp", "batch_size", "replicas") if k in e.config}
    lines = [fields_table({**lay, **rows}, title), f"what binds: {e.limit}"]
    if e.flag:
        lines.append(f"flag: {e.flag}")
    if not e.fits:
        lines.append(e.why_not_fit())
    lines.append("how close the model has come to published runs (predicted / published - 1):\n"
                 + "\n".join(f"  {metric}: {band.text()}" for metric, band in error_bands().items()))
    return "\n\n".join(lines)


def run_estimate(v: dict):
    from accelbook import inference

    e = inference.estimate(**v)
    return estimate_json(e), estimate_text(e, "inference (SI units)")


def run_sweep(v: dict):
    from accelbook import inference

    top = v.pop("top", None)
    df = inference.sweep(**v)
    by = df.sort_values("tokens_per_s_per_chip", ascending=False) if not df.empty else df
    text = (f"{len(df):,} (tp, pp, batch) that fit; the most tokens/s per chip first (SI units)\n"
            + frame_table(by, SWEEP_COLUMNS, rows=top or 20))
    return df, text


def run_max_throughput(v: dict):
    from accelbook import inference

    e = inference.max_throughput(**v)
    return estimate_json(e), estimate_text(e, "the layout and batch with the most tokens/s per chip (SI units)")


ESTIMATE = Command(
    ("infer", "estimate"), "TTFT, TPOT, tokens/s, KV cache and cost of one serving layout",
    """example:
  accelbook infer estimate --model llama-3.1-70b --chip h200 --n-chips 8 --batch-size 64 \\
      --input-len 2048 --output-len 256 --precision fp8
  accelbook infer estimate --scenario 'inference:model=llama-3.1-70b&chip=h200&...'   (notebook 06's dashboard)""",
    (*SERVE_ARGS, Arg("batch_size", integer, "sequences a replica decodes at once", required=True), *LENGTH_ARGS,
     Arg("tp", integer, "tensor-parallel degree (default: every chip of a replica)"),
     Arg("pp", integer, "pipeline stages"), Arg("tokens_per_seq", integer, "tokens a sequence a decode step"),
     Arg("weight_streaming_bytes_per_s", number, "stream the weights in at this bandwidth (a what-if)"),
     *ESTIMATE_KW),
    run_estimate)

SWEEP = Command(
    ("infer", "sweep"), "every (tp, pp, batch) that fits, with its latency and throughput",
    """example:
  accelbook infer sweep --model llama-3.1-8b --chip h100 --n-chips 8 --input-len 1024 --output-len 256 \\
      --batches 1,8,64 --top 10""",
    (*SERVE_ARGS, *LENGTH_ARGS, Arg("batches", integer_list, "batch sizes tried, comma-separated"),
     Arg("max_tp", integer, "largest tensor-parallel degree"),
     Arg("layout", lambda t: tuple(int(x) for x in number_tuple(t)), "one (tp, pp) only, as tp,pp"),
     Arg("top", integer, "rows the table shows (--json gives them all)"), *ESTIMATE_KW),
    run_sweep)

MAX_THROUGHPUT = Command(
    ("infer", "max-throughput"), "the layout and batch with the most tokens/s per chip within the targets",
    """example:
  accelbook infer max-throughput --model llama-3.1-70b --chip h200 --n-chips 8 \\
      --input-len 2048 --output-len 256 --precision fp8 --tpot-target-s 0.05""",
    (*SERVE_ARGS, *LENGTH_ARGS, Arg("tpot_target_s", number, "the slowest TPOT allowed (s)"),
     Arg("ttft_target_s", number, "the slowest TTFT allowed (s)"),
     Arg("batches", integer_list, "batch sizes tried, comma-separated"),
     Arg("max_tp", integer, "largest tensor-parallel degree"), *ESTIMATE_KW),
    run_max_throughput)

COMMANDS = (ESTIMATE, SWEEP, MAX_THROUGHPUT)
