"""``accelbook train estimate|search``: :func:`accelbook.training.estimate` and :func:`accelbook.training.search`."""

from __future__ import annotations

from accelbook.cli.args import Arg, Command, integer, integers_or_one, number, texts_or_one
from accelbook.cli.output import fields_table, frame_table

#: the model, chips, batch and sequence every training question starts from
CLUSTER_ARGS = (
    Arg("model", str, "model id or name (accelbook model lists them)", required=True),
    Arg("chip", str, "chip id or name (accelbook chip lists them)", required=True),
    Arg("n_chips", integer, "chips in the job", required=True),
    Arg("global_batch_tokens", integer, "tokens a step (a whole number of sequences), e.g. 2**24 or 16Mi", required=True),
    Arg("seq_len", integer, "tokens a sequence", required=True),
)
#: what estimate and search share beyond the cluster
STEP_ARGS = (
    Arg("precision", str, "bf16 or fp8 (the chip must publish its peak)"),
    Arg("cluster", str, "a cluster preset of data/clusters.toml (default: the chip's own)"),
    Arg("flash_attention", bool, "FlashAttention (no attention scores kept)"),
    Arg("sequence_parallel", bool, "sequence parallelism with tensor parallelism"),
    Arg("memory_reserve", number, "share of HBM kept free"),
    Arg("tp_overlap", number, "share of tensor-parallel communication hidden behind GEMMs, 0 to 1"),
    Arg("cp_comm", str, "ring or allgather"),
)
LAYOUT_NAMES = ("tp", "pp", "dp", "ep", "cp", "microbatch", "vp")
MODE_NAMES = ("zero_stage", "recompute", "grad_sync", "schedule")


def run_estimate(v: dict):
    from accelbook import training

    e = training.estimate(**v)
    rows = {"model": e.model, "chip": e.chip, "cluster": e.cluster, "n_chips": e.n_chips,
            "layout": training.label_of(e.config), "step_time_s": e.step_time_s, "mfu": e.mfu, "hfu": e.hfu,
            "tokens_per_s_per_chip": e.tokens_per_s_per_chip, "memory_per_chip_bytes": e.memory_per_chip_bytes,
            "memory_capacity_bytes": e.memory_capacity_bytes, "fits": e.fits}
    text = "\n\n".join([fields_table(rows, "training step (SI units)"), fields_table(e.time, "time (s)"),
                        fields_table(e.memory, "memory per chip (bytes)"), f"what binds: {e.limit}",
                        *([f"flag: {e.mfu_flag}"] if e.mfu_flag else []),
                        f"how close the model has come to published runs: {training.error_band().words()}"])
    return _plain_estimate(e), text


def _plain_estimate(e) -> dict:
    from accelbook import training
    from accelbook.cli.output import plain

    band = training.error_band()
    return {**plain(e), "tokens_per_s": e.tokens_per_s, "mfu_ceiling": e.mfu_ceiling, "mfu_flag": e.mfu_flag,
            "limit": e.limit, "error_band": {"median": band.median, "low": band.low, "high": band.high,
                                             "n": band.n, "words": band.words()}}


def run_search(v: dict):
    from accelbook import training
    from accelbook.cli.output import plain

    df = training.search(**v)
    attrs, df.attrs = dict(df.attrs), {}
    best = attrs.pop("best")
    out = {"rows": plain(df), **plain(attrs), "best": _plain_estimate(best)}
    cols = ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute", "step_time_s", "mfu",
            "tokens_per_s_per_chip", "memory_per_chip_bytes", "fits", "why")
    text = (f"{attrs['n_evaluated']:,} layouts evaluated, {attrs['n_fit']:,} fit; the fastest first (SI units)\n"
            + frame_table(df, cols, rows=v.get("top") or 20)
            + f"\n\nbest: {training.label_of(best.config)}; what binds: {best.limit}")
    return out, text


ESTIMATE = Command(
    ("train", "estimate"), "one parallel layout's step time, MFU and memory per chip",
    """example:
  accelbook train estimate --model llama-3.1-70b --chip h100 --n-chips 1024 \\
      --global-batch-tokens 16Mi --seq-len 8192 --tp 8 --pp 4
  accelbook train estimate --scenario 'training:model=llama-3.1-70b&chip=h100&...'   (notebook 04's dashboard)""",
    (*CLUSTER_ARGS, *(Arg(k, integer, f"{k} degree" if k != "microbatch" else "sequences a microbatch")
                      for k in LAYOUT_NAMES),
     Arg("zero_stage", integer, "ZeRO stage 0 to 3"), Arg("recompute", str, "none, selective or full"),
     Arg("grad_sync", str, "step or microbatch"), Arg("schedule", str, "1f1b, zb-h1 or dualpipe"), *STEP_ARGS),
    run_estimate)

SEARCH = Command(
    ("train", "search"), "every parallel layout evaluated; the fastest that fit",
    """example:
  accelbook train search --model llama-3.1-8b --chip h100 --n-chips 64 \\
      --global-batch-tokens 4Mi --seq-len 8192 --top 5
  accelbook train search ... --tp 8 --pp 1,2,4      (pin a dimension to one value or a list)""",
    (*CLUSTER_ARGS, *STEP_ARGS, Arg("top", integer, "rows kept (default 20)"),
     Arg("include_unfit", bool, "keep the layouts that do not fit in memory too"),
     *(Arg(k, integers_or_one, f"pin {k} to a value or a comma-separated list") for k in LAYOUT_NAMES),
     *(Arg(k, integers_or_one if k == "zero_stage" else texts_or_one, f"pin {k} (a value or a list)")
       for k in MODE_NAMES)),
    run_search)

COMMANDS = (ESTIMATE, SEARCH)
