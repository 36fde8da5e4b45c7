"""Paper-and-pencil problems of notebook 04: model state per chip, the pipeline bubble, parallel communication and
the time and cost to train (see accelbook.ui.course.hand)."""

from __future__ import annotations

from accelbook import training
from accelbook.costs.hierarchical import ALL_GATHER, ALL_REDUCE, collective_time_s
from accelbook.economics.cost import training_cost_table, training_tokens_per_s
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import cluster_for
from accelbook.specs.models import get_model
from accelbook.training.communication import tensor_parallel_time
from accelbook.training.framework import framework_defaults
from accelbook.training.goodput import published_goodput
from accelbook.training.pipeline import bubble_time
from accelbook.ui.course.hand import Problem, fmt

_STATE = "accelbook.training.estimate, its memory terms; Rajbhandari et al., ZeRO, 2020; Megatron Core distributed optimizer"
_BUBBLE = "accelbook.training.pipeline.bubble_time; Narayanan et al. 2021"
_COLL = "accelbook.costs.hierarchical.collective_time_s; Patarasuk and Yuan 2009"
_STATE_KEYS = ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes")


def _bytes_per_param():
    f = framework_defaults()
    return {"w": f.weight_bytes_per_param, "gr": f.grad_bytes_per_param, "o": f.optimizer_bytes_per_param}


def _state_given(model: str, dp: int = 1):
    def given():
        return {"N": get_model(model).params, "dp": dp, **_bytes_per_param(), "hbm": get_chip("h100").hbm_bytes / 1e9}
    return given


def _state(g):
    """Model state per chip (bytes): weights and gradients whole, optimizer states split over dp (ZeRO-1)."""
    return (g["w"] + g["gr"]) * g["N"] + g["o"] * g["N"] / g["dp"]


def _state_model(model: str, n: int, zero: int) -> float:
    e = training.estimate(model, "h100", n, n * 8192, 8192, tp=1, pp=1, zero_stage=zero)
    return sum(e.memory[k] for k in _STATE_KEYS)


def _state_steps(g):
    split = f" ÷ {g['dp']}" if g["dp"] > 1 else ""
    return [f"weights {fmt(g['w'])} + gradients {fmt(g['gr'])} bytes a parameter, whole on every chip: "
            f"{fmt(g['w'] + g['gr'])} × {fmt(g['N'])} = {fmt((g['w'] + g['gr']) * g['N'] / 1e9)} GB",
            f"fp32 master weights and Adam moments: {fmt(g['o'])} × {fmt(g['N'])}{split} = "
            f"{fmt(g['o'] * g['N'] / g['dp'] / 1e9)} GB",
            f"total = {fmt(_state(g) / 1e9)} GB {'per chip' if g['dp'] > 1 else 'in all'}"]


def _bubble_given(pp, vp, m):
    return lambda: {"pp": pp, "vp": vp, "m": m}


def _bubble_pct(g):
    b = (g["pp"] - 1) / g["vp"]
    return 100 * b / (g["m"] + b)


def _bubble_steps(g):
    b = (g["pp"] - 1) / g["vp"]
    return [f"bubble = (pp − 1)/vp = ({g['pp']} − 1)/{g['vp']} = {fmt(b)} microbatch-times",
            f"share = bubble ÷ (m + bubble) = {fmt(b)} ÷ ({g['m']} + {fmt(b)}) = {fmt(_bubble_pct(g))} %"]


def _bubble_model(g):
    b = bubble_time(g["pp"], g["vp"], 1.0, 0.0, 0.0, 0)
    return 100 * b / (g["m"] + b)


def _days_given():
    m, c = get_model("llama-3.1-405b"), get_chip("h100")
    return {"Nmm": m.matmul_params_active, "L": m.n_layers, "H": m.n_heads, "dh": m.d_head, "s": 8192,
            "D": 15.6e12, "Dt": 15.6, "n": 16384, "mfu": 0.40, "pct": 40.0, "P": c.peak_flop_s("bf16") / 1e12}


def _c(g, attention: float):
    return 6 * g["Nmm"] + attention * g["L"] * g["H"] * g["dh"] * g["s"]


def _days(g, attention: float = 6):
    return g["D"] * _c(g, attention) / (g["n"] * g["mfu"] * g["P"] * 1e12) / 86400


def _days_steps(g):
    c = _c(g, 6)
    sec = g["D"] * c / (g["n"] * g["mfu"] * g["P"] * 1e12)
    return [f"C (causal) = 6·N_mm + 6·L·H·d_h·s = 6 × {fmt(g['Nmm'])} + 6 × {g['L']} × {g['H']} × {g['dh']} × {g['s']:,} "
            f"= {fmt(c)} FLOP per token",
            f"time = D·C ÷ (n·MFU·P) = {g['D'] / 1e12:g}e12 × {fmt(c)} ÷ ({g['n']:,} × {g['mfu']} × {fmt(g['P'])}e12) = "
            f"{fmt(sec)} s",
            f"= {fmt(sec)} ÷ 86,400 = {fmt(sec / 86400)} days (before failures and restarts)"]


def _days_model(g):
    tps = training_tokens_per_s("llama-3.1-405b", "h100", g["mfu"], g["s"], attention="causal")
    return g["D"] / (g["n"] * tps) / 86400


def _node():
    cl = cluster_for("h100")
    return {"B": cl.domain_bw_bytes_per_s / 1e9, "eta": cl.domain_efficiency, "alpha": cl.domain_latency_s * 1e6,
            "Bn": cl.network_bw_bytes_per_s / 1e9, "eta_n": cl.network_efficiency, "alpha_n": cl.network_latency_s * 1e6,
            "g": cl.domain_chips}


def _coll(kind, S, g_ranks, n):
    """The package's two-level collective time (s) on the DGX H100 cluster's figures, at stride 1."""
    return collective_time_s(kind, S, g_ranks, 1, n["g"], n["eta"] * n["B"] * 1e9, 0, n["alpha"] * 1e-6,
                             n["eta_n"] * n["Bn"] * 1e9, n["alpha_n"] * 1e-6)


def _grad_given():
    return {**_node(), "N": get_model("llama-3.1-8b").params, "gr": _bytes_per_param()["gr"], "p": 8}


def _grad_ms(g):
    S, p, bw = g["gr"] * g["N"], g["p"], g["eta"] * g["B"] * 1e9
    return (2 * (p - 1) * g["alpha"] * 1e-6 + 2 * (p - 1) / p * S / bw) * 1e3


def _grad_steps(g):
    S, p = g["gr"] * g["N"], g["p"]
    return [f"S = {fmt(g['gr'])} bytes × {fmt(g['N'])} parameters = {fmt(S)} bytes of fp32 gradients",
            f"ring: 2(p − 1)·α + 2(p − 1)/p · S ÷ ηB = 2 × {p - 1} × {fmt(g['alpha'])} µs + 2 × {p - 1}/{p} × {fmt(S)} ÷ "
            f"({g['eta']} × {fmt(g['B'])}e9)",
            f"= {fmt(2 * (p - 1) * g['alpha'] / 1e3)} + {fmt(_grad_ms(g) - 2 * (p - 1) * g['alpha'] / 1e3)} = "
            f"{fmt(_grad_ms(g))} ms"]


def _tp_given():
    m = get_model("llama-3.1-70b")
    return {**_node(), "d": m.d_model, "T": 8192, "tp": 8}


def _tp_ms(g):
    S, p, bw = 2 * g["T"] * g["d"], g["tp"], g["eta"] * g["B"] * 1e9
    return 8 * ((p - 1) * g["alpha"] * 1e-6 + (p - 1) / p * S / bw) * 1e3


def _tp_steps(g):
    S, p = 2 * g["T"] * g["d"], g["tp"]
    one = _tp_ms(g) / 8
    return [f"one all-gather or reduce-scatter of S = 2·T·d = 2 × {g['T']:,} × {g['d']:,} = {fmt(S)} bytes",
            f"ring over tp: (tp − 1)·α + (tp − 1)/tp · S ÷ ηB = {p - 1} × {fmt(g['alpha'])} µs + {p - 1}/{p} × {fmt(S)} ÷ "
            f"({g['eta']} × {fmt(g['B'])}e9) = {fmt(one)} ms",
            f"per layer: 4 all-gathers + 4 reduce-scatters = 8 × {fmt(one)} = {fmt(_tp_ms(g))} ms"]


def _tp_model(g):
    t_pass = _coll(ALL_GATHER, 2 * g["T"] * g["d"], g["tp"], g)
    return tensor_parallel_time(t_pass, g["tp"], 0, 0.0)[0] * 1e3


def _default_layout():
    return {"n": 1024, "tokens": 2**24, "s": 8192, "tp": 8, "pp": 4}


def _default_bubble(g):
    seqs = g["tokens"] // g["s"]
    dp = g["n"] // (g["tp"] * g["pp"])
    m = seqs // dp
    return seqs, dp, m, 100 * (g["pp"] - 1) / (m + g["pp"] - 1)


def _default_steps(g):
    seqs, dp, m, pct = _default_bubble(g)
    return [f"sequences a step = {g['tokens']:,} ÷ {g['s']:,} = {seqs:,}; replicas dp = {g['n']:,} ÷ ({g['tp']} × "
            f"{g['pp']}) = {dp}",
            f"microbatches of one sequence per replica: m = {seqs:,} ÷ {dp} = {m}",
            f"bubble share = (pp − 1) ÷ (m + pp − 1) = {g['pp'] - 1} ÷ {m + g['pp'] - 1} = {fmt(pct)} %, not "
            f"(pp − 1)/pp = {fmt(100 * (g['pp'] - 1) / g['pp'])} %"]


def _default_model(g):
    e = training.estimate("llama-3.1-70b", "h100", g["n"], g["tokens"], g["s"], tp=g["tp"], pp=g["pp"])
    t = e.time
    pipelined = e.step_time_s - t["t_dp_comm_s"] - t["t_dp_bucket_s"] - t["t_optimizer_s"] - t["t_overlap_s"]
    return 100 * t["t_bubble_s"] / pipelined


def _zb_given():
    return {"pp": 8, "F": 1.0, "Bi": 1.0, "W": 1.0}


def _zb_steps(g):
    t = g["F"] + g["Bi"] + g["W"]
    a, b = (g["pp"] - 1) * t, (g["pp"] - 1) * (t - 2 * g["W"])
    return [f"t_mb = F + B + W = {fmt(t)} ms",
            f"1F1B: (pp − 1)·t_mb = {g['pp'] - 1} × {fmt(t)} = {fmt(a)} ms",
            f"ZB-H1: (pp − 1)·(t_mb − 2W) = {g['pp'] - 1} × ({fmt(t)} − {fmt(2 * g['W'])}) = {fmt(b)} ms",
            f"factor = {fmt(a)} ÷ {fmt(b)} = {fmt(a / b)}: the weight gradients, which nothing waits for, fill the bubble"]


def _zb_model(g):
    t = g["F"] + g["Bi"] + g["W"]
    return bubble_time(g["pp"], 1, t, g["Bi"], g["W"], 0) / bubble_time(g["pp"], 1, t, g["Bi"], g["W"], 1)


def _cost_given():
    m, c = get_model("llama-3.1-405b"), get_chip("h100")
    return {"Nmm": m.matmul_params_active, "L": m.n_layers, "H": m.n_heads, "dh": m.d_head, "s": 8192, "D": 15.6e12,
            "Dt": 15.6, "mfu": 0.40, "pct": 40.0, "P": c.peak_flop_s("bf16") / 1e12, "price": c.price_usd_per_hour,
            "good": published_goodput().fraction, "good_pct": 100 * published_goodput().fraction}


def _cost_musd(g):
    chip_s = g["D"] * _c(g, 12) / (g["mfu"] * g["P"] * 1e12) / g["good"]
    return chip_s / 3600 * g["price"] / 1e6


def _cost_steps(g):
    c = _c(g, 12)
    tps = g["mfu"] * g["P"] * 1e12 / c
    hours = g["D"] / tps / g["good"] / 3600
    return [f"C (full attention) = 6·N_mm + 12·L·H·d_h·s = {fmt(c)} FLOP per token",
            f"tokens/s per chip = MFU·P / C = {g['mfu']} × {fmt(g['P'])}e12 ÷ {fmt(c)} = {fmt(tps)}",
            f"chip-hours = D ÷ tokens/s ÷ goodput ÷ 3,600 = {g['D'] / 1e12:g}e12 ÷ {fmt(tps)} ÷ {fmt(g['good'])} ÷ 3,600 = "
            f"{fmt(hours)}",
            f"cost = {fmt(hours)} × {fmt(g['price'])} USD = {fmt(_cost_musd(g))} million USD, whatever the chip count"]


def _cost_model(g):
    df, _ = training_cost_table(get_model("llama-3.1-405b"), ["h100"], g["mfu"], g["s"], train_tokens=g["D"],
                                goodput=g["good"])
    return df["train_cost_usd"].iloc[0] / 1e6


def _two_nodes():
    return {**_node(), "N": get_model("llama-3.1-8b").params, "gr": _bytes_per_param()["gr"], "p": 16}


def _two_node_parts(g):
    S, p, gi = g["gr"] * g["N"], g["p"], g["g"]
    nv, nic = (gi - 1) / gi / (g["eta"] * g["B"] * 1e9), 1 / (gi * g["eta_n"] * g["Bn"] * 1e9)
    return S, nv, nic, 2 * (p - 1) * g["alpha_n"] * 1e-6 + 2 * (p - 1) / p * S * max(nv, nic)


def _two_node_steps(g):
    S, nv, nic, t = _two_node_parts(g)
    p, gi = g["p"], g["g"]
    return [f"S = {fmt(g['gr'])} × {fmt(g['N'])} = {fmt(S)} bytes; NCCL runs one ring per rail through all {p} GPUs, "
            f"each carrying 1/{gi} of the data",
            f"seconds per byte: NVLink (g − 1)/g ÷ ηB = {gi - 1}/{gi} ÷ {fmt(g['eta'] * g['B'])}e9 = {fmt(nv)}; NIC "
            f"1/(g·ηB_net) = 1 ÷ ({gi} × {fmt(g['eta_n'] * g['Bn'])}e9) = {fmt(nic)}: the "
            f"{'NICs bind' if nic > nv else 'NVLink binds'}",
            f"t = 2(p − 1)·α_net + 2(p − 1)/p · S × {fmt(max(nv, nic))} = 2 × {p - 1} × {fmt(g['alpha_n'])} µs + "
            f"{fmt(2 * (p - 1) / p * S)} × {fmt(max(nv, nic))} = {fmt(t * 1e3)} ms"]


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb04-model-state-70b", "04", "hand",
        "Megatron's mixed precision keeps {w:.0f} bytes of bf16 weights, {gr:.0f} bytes of fp32 gradients and {o:.0f} "
        "bytes of fp32 master weights and Adam moments per parameter. Llama 3.1 70B has {N:,} parameters. How many GB "
        "of model state does it need before any activation, with no sharding?",
        _state_given("llama-3.1-70b"), _state_steps, lambda g: _state(g) / 1e9,
        lambda g: _state_model("llama-3.1-70b", 1, 0) / 1e9, "GB", _STATE),
    Problem(
        "hand-nb04-zero1-8b-dp8", "04", "hand",
        "Llama 3.1 8B ({N:,} parameters) trains on {dp} H100s in pure data parallelism with ZeRO-1, which splits only "
        "the optimizer states over the {dp} replicas. Per parameter: {w:.0f} bytes of bf16 weights, {gr:.0f} of fp32 "
        "gradients, {o:.0f} of fp32 master weights and Adam moments. How many GB of model state does each chip hold?",
        _state_given("llama-3.1-8b", 8), _state_steps, lambda g: _state(g) / 1e9,
        lambda g: _state_model("llama-3.1-8b", g["dp"], 1) / 1e9, "GB", _STATE),
    Problem(
        "hand-nb04-bubble-8-32", "04", "hand",
        "A pipeline of pp = {pp} stages runs m = {m} microbatches per step with plain 1F1B (vp = {vp}). What share of "
        "the pipelined time is the bubble?",
        _bubble_given(8, 1, 32), _bubble_steps, _bubble_pct, _bubble_model, "%", _BUBBLE),
    Problem(
        "hand-nb04-bubble-interleaved", "04", "hand",
        "A pipeline of pp = {pp} stages runs m = {m} microbatches per step, each stage holding vp = {vp} interleaved "
        "chunks of layers. What share of the pipelined time is the bubble?",
        _bubble_given(4, 2, 16), _bubble_steps, _bubble_pct, _bubble_model, "%", _BUBBLE),
    Problem(
        "hand-nb04-days-405b", "04", "hand",
        "Llama 3.1 405B (N_mm = {Nmm:,} matmul weights, {L} layers of {H} heads of d_h = {dh}) trains on D = {Dt:g} × 10¹² "
        "tokens at s = {s:,}, on {n:,} H100s ({P:,.1f} TFLOP/s dense bf16) at {pct:.0f} % MFU counted with causal "
        "attention (6·L·H·d_h·s per token). How many days does it take, before failures and restarts?",
        _days_given, _days_steps, _days, _days_model,
        "days", "accelbook.economics.cost.training_tokens_per_s; Chowdhery et al., PaLM, 2022, appendix B"),
    Problem(
        "hand-nb04-grad-allreduce-8b", "04", "hand",
        "Llama 3.1 8B ({N:,} parameters) reduces its fp32 gradients ({gr:.0f} bytes each) with a ring all-reduce over "
        "the {p} H100s of one node: NVLink at {B:,.0f} GB/s per direction, {eta} of it usable, α = {alpha:.1f} µs a "
        "step. How long does the all-reduce take?",
        _grad_given, _grad_steps, _grad_ms, lambda g: _coll(ALL_REDUCE, g["gr"] * g["N"], g["p"], g) * 1e3, "ms", _COLL),
    Problem(
        "hand-nb04-tp-comm-layer", "04", "hand",
        "Llama 3.1 70B (d = {d:,}) runs tensor parallel over tp = {tp} H100s of a node with sequence parallelism: per "
        "layer and microbatch of T = {T:,} tokens, 4 all-gathers and 4 reduce-scatters of the bf16 activations (2·T·d "
        "bytes each). NVLink carries {B:,.0f} GB/s per direction, {eta} of it usable, α = {alpha:.1f} µs a step. How "
        "long is one layer's tensor-parallel communication if none of it is hidden?",
        _tp_given, _tp_steps, _tp_ms, _tp_model, "ms",
        "accelbook.training.communication.tensor_parallel_time; Korthikanti et al. 2022"),
    Problem(
        "exam-nb04-state-405b-h100s", "04", "exam",
        "Llama 3.1 405B has {N:,} parameters; Megatron keeps {w:.0f} + {gr:.0f} + {o:.0f} bytes of model state per "
        "parameter. An H100's driver reports {hbm:.1f} GB of HBM. How many H100s' worth of memory does the model state "
        "fill before a single activation? Why do ZeRO, tensor and pipeline parallelism exist?",
        _state_given("llama-3.1-405b"),
        lambda g: [*_state_steps(g), f"H100s = {fmt(_state(g) / 1e9)} ÷ {fmt(g['hbm'])} = {fmt(_state(g) / 1e9 / g['hbm'])}"
                   ": no chip holds it, so the state must be split"],
        lambda g: _state(g) / 1e9 / g["hbm"],
        lambda g: _state_model("llama-3.1-405b", 1, 0) / get_chip("h100").hbm_bytes, "H100s", _STATE),
    Problem(
        "exam-nb04-bubble-default", "04", "exam",
        "Llama 3.1 70B trains on {n:,} H100s with {tokens:,} tokens a step in sequences of {s:,}, tp = {tp}, pp = {pp}, "
        "microbatches of one sequence and plain 1F1B. What share of the pipelined time is the bubble? Why is "
        "(pp − 1)/pp the wrong answer?",
        _default_layout, _default_steps, lambda g: _default_bubble(g)[3], _default_model,
        "%", f"accelbook.training.estimate; {_BUBBLE}"),
    Problem(
        "exam-nb04-zb-h1-bubble", "04", "exam",
        "On the busiest of pp = {pp} stages a microbatch takes F = {F:.0f} ms forward, B = {Bi:.0f} ms backward for "
        "the inputs and W = {W:.0f} ms for the weight gradients. By what factor does the ZB-H1 schedule shrink the "
        "bubble compared with 1F1B?",
        _zb_given, _zb_steps,
        lambda g: (g["F"] + g["Bi"] + g["W"]) / (g["F"] + g["Bi"] - g["W"]), _zb_model,
        "×", "accelbook.training.pipeline.bubble_time; Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024"),
    Problem(
        "exam-nb04-cost-405b", "04", "exam",
        "Llama 3.1 405B (N_mm = {Nmm:,}, {L} layers of {H} heads of d_h = {dh}) trains on {Dt:g} × 10¹² tokens at s = "
        "{s:,} on H100s ({P:,.1f} TFLOP/s dense bf16, USD {price:.2f} an hour) at {pct:.0f} % MFU with full attention "
        "counted. Llama 3 kept {good_pct:.0f} % of wall-clock time training. What does the run cost at list price, and "
        "why does the number of chips not change it?",
        _cost_given, _cost_steps, _cost_musd, _cost_model,
        "million USD", "accelbook.economics.cost.training_cost_table; Llama 3 Herd of Models, section 3.3.4"),
    Problem(
        "exam-nb04-dp-two-nodes", "04", "exam",
        "Llama 3.1 8B's fp32 gradients ({N:,} parameters, {gr:.0f} bytes each) are all-reduced over p = {p} H100s in "
        "two nodes of {g}: NVLink {B:,.0f} GB/s and one NIC of {Bn:.0f} GB/s per GPU, {eta} of each usable; a network "
        "step costs {alpha_n:.0f} µs. NCCL runs one ring per rail through all {p} GPUs. Which link binds, and how long "
        "does the all-reduce take?",
        _two_nodes, _two_node_steps, lambda g: _two_node_parts(g)[3] * 1e3,
        lambda g: _coll(ALL_REDUCE, g["gr"] * g["N"], g["p"], g) * 1e3, "ms", _COLL),
]
