"""``accelbook serve simulate``: :func:`accelbook.inference.serving.simulate` of a generated workload
(:func:`accelbook.inference.workload.workload`) on the step costs of one replica
(:func:`accelbook.inference.step.step_cost`), as notebook 06 builds them."""

from __future__ import annotations

from accelbook.cli.args import Arg, Command, integer, length_spec, number, number_tuple
from accelbook.cli.output import fields_table

#: step_cost's keywords
COST_ARGS = (
    Arg("model", str, "model id or name", required=True),
    Arg("chip", str, "chip id or name", required=True),
    Arg("n_chips", integer, "chips of one replica (tensor parallel)", required=True),
    Arg("precision", str, "weights' precision (default fp8)"),
    Arg("tp", integer, "tensor-parallel degree (default: every chip)"),
    Arg("input_len", integer, "the prompt length the step costs' attention is taken at (default 1024)"),
    Arg("output_len", integer, "the output length the step costs are taken at (default 256)"),
)
#: workload's keywords
WORKLOAD_ARGS = (
    Arg("n_requests", integer, "requests", required=True),
    Arg("rate_per_s", number, "mean arrival rate (requests/s)", required=True),
    Arg("arrival", str, "poisson or bursty"),
    Arg("burstiness", number, "coefficient of variation of the gaps (bursty arrivals)"),
    Arg("prompt", length_spec, "prompt lengths: 512, or uniform,LO,HI, or lognormal,MEAN,SIGMA[,MAX]"),
    Arg("output", length_spec, "output lengths, as --prompt"),
    Arg("seed", integer, "random seed"),
    Arg("prefix", number_tuple, "a shared system prompt: LENGTH,SHARE[,N_PREFIXES]"),
)
#: simulate's keywords
SIMULATE_ARGS = (
    Arg("n_instances", integer, "replicas, round-robin"),
    Arg("chunk_tokens", integer, "prefill chunk (tokens)"),
    Arg("disaggregated", bool, "prefill and decode on separate instances"),
    Arg("n_prefill", integer, "prefill instances (disaggregated)"),
    Arg("n_decode", integer, "decode instances (disaggregated)"),
    Arg("kv_bytes_per_token", number, "KV bytes a prompt token moves (disaggregated)"),
    Arg("link_bytes_per_s", number, "bandwidth the KV cache moves at (disaggregated)"),
    Arg("kv_policy", str, "reserve or paged"),
    Arg("block_tokens", integer, "tokens a KV block (paged)"),
    Arg("prefix_caching", bool, "reuse shared prefixes' KV cache (paged)"),
    Arg("schedule", str, "the iteration scheduler (accelbook.inference.serving.SCHEDULES)"),
)
SLO_ARGS = (Arg("ttft_slo_s", number, "TTFT objective for goodput (s)"),
            Arg("tbt_slo_s", number, "TBT objective for goodput (s)"))


def _split(v: dict, args: tuple[Arg, ...]) -> dict:
    return {a.name: v[a.name] for a in args if a.name in v}


def run_simulate(v: dict):
    from accelbook.inference.serving import simulate
    from accelbook.inference.step import step_cost
    from accelbook.inference.workload import workload

    slo = _split(v, SLO_ARGS)
    if len(slo) == 1:
        raise ValueError("give both --ttft-slo-s and --tbt-slo-s for goodput, or neither")
    cost = step_cost(**_split(v, COST_ARGS))
    wl = workload(**_split(v, WORKLOAD_ARGS))
    r = simulate(wl, cost, **_split(v, SIMULATE_ARGS))
    out = r.summary()
    if slo:
        out["goodput_req_s"] = r.goodput(slo["ttft_slo_s"], slo["tbt_slo_s"])
    return out, fields_table(out, "serving run (SI units; percentiles of TTFT and time between tokens)")


SIMULATE = Command(
    ("serve", "simulate"), "a serving run: TTFT and TBT percentiles, throughput and goodput under load",
    """example:
  accelbook serve simulate --model llama-3.1-70b --chip h200 --n-chips 8 --precision fp8 \\
      --n-requests 500 --rate-per-s 12 --prompt lognormal,2048,0.5 --output lognormal,256,0.5 \\
      --chunk-tokens 512 --ttft-slo-s 1.0 --tbt-slo-s 0.05""",
    (*COST_ARGS, *WORKLOAD_ARGS, *SIMULATE_ARGS, *SLO_ARGS), run_simulate)

COMMANDS = (SIMULATE,)
