"""Paper-and-pencil problems of notebook 11: how big a sweep is, how to cut it into tasks, how wide a
Monte Carlo interval is, and how many parallel layouts a system has (see accelbook.ui.course.hand)."""

from __future__ import annotations

import math

import numpy as np

from accelbook import sweep
from accelbook.inference.sweep import layouts
from accelbook.specs.models import get_model
from accelbook.sweep import frontier, serving_mc
from accelbook.sweep.plan import TASKS_PER_THREAD
from accelbook.ui.course.hand import Problem, fmt

_PLAN = "accelbook.sweep.plan"


def _frontier_given():
    grid = frontier.default_grid()
    return {"n_chip": len(grid["chip"]), "n_model": len(grid["model"]), "n_prec": len(grid["precision"]),
            "batches": ", ".join(map(str, grid["batch"])), "n_batch": len(grid["batch"]),
            "prompts": " and ".join(f"{p:,}" for p in grid["prompt_len"]), "n_prompt": len(grid["prompt_len"]),
            "n_out": len(grid["output_len"])}


def _frontier_count(g):
    return g["n_chip"] * g["n_model"] * g["n_prec"] * g["n_batch"] * g["n_prompt"] * g["n_out"]


def _serving_given():
    grid = serving_mc.default_grid()
    return {"n_rate": len(grid["rate_per_s"]), "rates": ", ".join(f"{r:g}" for r in grid["rate_per_s"]),
            "n_chunk": len(grid["chunk_tokens"]), "chunks": ", ".join(f"{c:,}" for c in grid["chunk_tokens"]),
            "n_seed": len(grid["seed"]), "n_req": grid["n_requests"][0]}


def _grown_given():
    g = _frontier_given()
    g.update(n_model=g["n_model"] + 1, n_batch=g["n_batch"] + 2)
    return g


def _grown_model(g):
    grid = frontier.default_grid()
    grid.update(model=[*grid["model"], "llama-3.1-405b"], batch=sorted({*grid["batch"], 16, 32}))
    return len(sweep.configurations(grid))


def _terms(g):
    """The rule's three terms: (b_min, b_balance, b_cap)."""
    b_min = max(1, math.ceil(g["o"] / (g["target"] * g["c"])))
    b_bal = max(1, math.ceil(g["n"] / (g["per"] * g["threads"])))
    b_cap = max(1, math.ceil(g["cap_s"] / g["c"]))
    return b_min, b_bal, b_cap


def _block(g):
    b_min, b_bal, b_cap = _terms(g)
    return min(g["n"], max(b_min, min(b_bal, b_cap)))


def _rule_given(n, o_s, c_s, threads):
    return {"n": n, "o": o_s, "c": c_s, "threads": threads, "target": 0.05, "per": TASKS_PER_THREAD, "cap_s": 60.0}


def _rule_text(g) -> dict:
    return {"o_ms": g["o"] * 1e3, "c_ms": g["c"] * 1e3, "c_us": g["c"] * 1e6, "pct": g["target"] * 100}


def _rule_steps(g):
    b_min, b_bal, b_cap = _terms(g)
    b = _block(g)
    tasks = math.ceil(g["n"] / b)
    lines = [f"b_min = ⌈o ÷ ({fmt(g['target'])} × c)⌉ = ⌈{fmt(g['o'])} ÷ ({fmt(g['target'])} × {fmt(g['c'])})⌉ = "
            f"{fmt(b_min)}",
            f"b_balance = ⌈n ÷ ({g['per']} × threads)⌉ = ⌈{fmt(g['n'])} ÷ {fmt(g['per'] * g['threads'])}⌉ = {fmt(b_bal)}",
            f"b_cap = ⌈{fmt(g['cap_s'])} s ÷ {fmt(g['c'])} s⌉ = {fmt(b_cap)}",
            f"b = max(b_min, min(b_balance, b_cap)) = max({fmt(b_min)}, min({fmt(b_bal)}, {fmt(b_cap)})) = "
            f"max({fmt(b_min)}, {fmt(min(b_bal, b_cap))}) = {fmt(b)}",
            f"tasks = ⌈{fmt(g['n'])} ÷ {fmt(b)}⌉ = {fmt(tasks)} for {fmt(g['threads'])} threads; overhead share = "
            f"{fmt(g['o'])} ÷ ({fmt(b)} × {fmt(g['c'])}) = {fmt(100 * g['o'] / (b * g['c']))} %"]
    if tasks < g["threads"]:
        lines.append(f"{fmt(tasks)} tasks < {fmt(g['threads'])} threads: {fmt(g['threads'] - tasks)} threads get no task; "
                     f"the whole sweep is {fmt(g['n'])} × {fmt(g['c'])} s = {fmt(g['n'] * g['c'])} s of work")
    return lines


def _with_text(g):
    return {**g, **_rule_text(g)}


def _choose(g):
    return sweep.choose_block_size(g["n"], g["o"], g["c"], g["threads"], g["target"], g["cap_s"])[0]


def _plan(g):
    return sweep.plan(g["n"], g["o"], g["c"], g["threads"], g["target"], max_task_s=g["cap_s"])


def _ci_given():
    return {"x": [12.0, 14.0, 13.0, 15.0, 11.0], "t": 2.776, "level": 95}


def _ci(g):
    x = g["x"]
    n = len(x)
    mean = sum(x) / n
    s = math.sqrt(sum((v - mean) ** 2 for v in x) / (n - 1))
    return g["t"] * s / math.sqrt(n)


def _ci_steps(g):
    x = g["x"]
    n = len(x)
    mean = sum(x) / n
    sq = [(v - mean) ** 2 for v in x]
    s = math.sqrt(sum(sq) / (n - 1))
    return [f"mean = ({' + '.join(fmt(v) for v in x)}) ÷ {n} = {fmt(mean)}",
            f"s = √(({' + '.join(fmt(v) for v in sq)}) ÷ {n - 1}) = {fmt(s)}",
            f"half-width = t × s ÷ √n = {fmt(g['t'])} × {fmt(s)} ÷ √{n} = {fmt(_ci(g))} requests/s",
            f"interval: {fmt(mean)} ± {fmt(_ci(g))} requests/s"]


def _ci_model(g):
    r = serving_mc.replication_intervals(np.array([g["x"]]), g["level"] / 100)
    return float(r["half_width"][0])


def _layouts_given(n):
    m = get_model("llama-3.1-70b")
    return {"n": n, "heads": m.n_heads, "layers": m.n_layers, "max_tp": 64}


def _layout_pairs(g):
    """(pp, tps) for each pipeline depth that divides n: the tp that divide n/pp and the head count."""
    out = []
    for pp in range(1, min(g["n"], g["layers"]) + 1):
        if g["n"] % pp:
            continue
        rest = g["n"] // pp
        out.append((pp, [tp for tp in range(1, min(g["max_tp"], rest) + 1) if rest % tp == 0 and g["heads"] % tp == 0]))
    return out


def _layout_count(g):
    return sum(len(tps) for _, tps in _layout_pairs(g))


def _layout_steps(g):
    lines = [f"pp = {pp}: tp divides {g['n'] // pp} and {g['heads']}: {', '.join(map(str, tps))} ({len(tps)})"
             for pp, tps in _layout_pairs(g)]
    counts = [len(tps) for _, tps in _layout_pairs(g)]
    lines.append(f"layouts = {' + '.join(map(str, counts))} = {_layout_count(g)}; each leaves n ÷ (tp·pp) replicas (dp)")
    return lines


_RULE = ("The rule cuts n configurations into tasks of b = max(b_min, min(b_balance, b_cap)), with "
         "b_min = ⌈o ÷ (0.05·c)⌉, b_balance = ⌈n ÷ (4·threads)⌉ and b_cap = ⌈60 s ÷ c⌉. ")
PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb11-frontier-grid-size", "11", "hand",
        "The frontier sweep's default grid takes {n_chip} catalogue chips, {n_model} models, {n_prec} precisions, "
        "{n_batch} batch sizes ({batches}), {n_prompt} prompt lengths ({prompts} tokens) and {n_out} output length. "
        "How many configurations does it run?",
        _frontier_given,
        lambda g: [f"configurations = {g['n_chip']} × {g['n_model']} × {g['n_prec']} × {g['n_batch']} × {g['n_prompt']} × "
                   f"{g['n_out']} = {fmt(_frontier_count(g))}",
                   f"per chip = {fmt(_frontier_count(g) // g['n_chip'])}"],
        _frontier_count,
        lambda g: len(sweep.configurations(frontier.default_grid())),
        "configurations", "accelbook.sweep.grid.configurations (accelbook.sweep.frontier.default_grid)", 0.0),
    Problem(
        "hand-nb11-serving-mc-runs", "11", "hand",
        "The serving Monte Carlo tries {n_rate} arrival rates ({rates} requests/s), {n_chunk} prefill chunk sizes "
        "({chunks} tokens) and {n_seed} seeds, each run serving {n_req:,} requests. How many runs, and how many "
        "requests are simulated in all?",
        _serving_given,
        lambda g: [f"runs = {g['n_rate']} × {g['n_chunk']} × {g['n_seed']} = {g['n_rate'] * g['n_chunk'] * g['n_seed']}",
                   f"requests = {g['n_rate'] * g['n_chunk'] * g['n_seed']} × {fmt(g['n_req'])} = "
                   f"{fmt(g['n_rate'] * g['n_chunk'] * g['n_seed'] * g['n_req'])}",
                   f"each (rate, chunk) pair has {g['n_seed']} seeds: the n of its Student-t interval"],
        lambda g: g["n_rate"] * g["n_chunk"] * g["n_seed"],
        lambda g: len(sweep.configurations(serving_mc.default_grid())),
        "runs", "accelbook.sweep.grid.configurations (accelbook.sweep.serving_mc.default_grid)", 0.0),
    Problem(
        "hand-nb11-overhead-floor", "11", "hand",
        _RULE + "A sweep of {n:,} configurations costs c = {c_ms:g} ms of model work each, on {threads:,} worker "
        "threads, with o = {o_ms:g} ms of overhead per task. How many configurations a task does the rule pick?",
        lambda: _with_text(_rule_given(10**6, 0.02, 0.002, 4096)), _rule_steps, _block, _choose,
        "configurations a task", f"{_PLAN}.choose_block_size", 0.0),
    Problem(
        "hand-nb11-ci-half-width", "11", "hand",
        "Five seeds of one serving configuration give goodputs of {x[0]:g}, {x[1]:g}, {x[2]:g}, {x[3]:g} and {x[4]:g} "
        "requests/s. With t(0.975, 4) = {t}, what is the half-width of the {level} % Student-t interval of the mean "
        "(s the sample standard deviation, divided by n − 1)?",
        _ci_given, _ci_steps, _ci, _ci_model,
        "requests/s", "accelbook.sweep.serving_mc.replication_intervals (Student-t interval)"),
    Problem(
        "hand-nb11-layouts-8-chips", "11", "hand",
        "A serving system of {n} chips runs Llama 3.1 70B ({heads} attention heads, {layers} layers). A layout is a "
        "tensor-parallel degree tp and a pipeline depth pp with tp·pp dividing {n} (the rest are replicas) and tp "
        "dividing the head count. How many layouts does the sweep try?",
        lambda: _layouts_given(8), _layout_steps, _layout_count,
        lambda g: len(layouts(get_model("llama-3.1-70b"), g["n"])),
        "layouts", "accelbook.inference.sweep.layouts", 0.0),
    Problem(
        "exam-nb11-cheap-model-tasks", "11", "exam",
        _RULE + "A vectorised model costs c = {c_us:g} µs a configuration; {n:,} configurations run on {threads} worker "
        "threads with o = {o_ms:g} ms of overhead per task. How many tasks does the sweep make, and what does that say "
        "about running it on this cluster?",
        lambda: _with_text(_rule_given(10**6, 0.01, 1e-5, 256)), _rule_steps,
        lambda g: math.ceil(g["n"] / _block(g)),
        lambda g: _plan(g).n_tasks,
        "tasks", f"{_PLAN}.plan", 0.0),
    Problem(
        "exam-nb11-balance-binds", "11", "exam",
        _RULE + "{n:,} configurations at c = {c_ms:g} ms each run on {threads} worker threads with o = {o_ms:g} ms per "
        "task. Which term binds, how many configurations a task, and what share of the work is overhead?",
        lambda: _with_text(_rule_given(2 * 10**6, 0.02, 0.01, 128)), _rule_steps, _block, _choose,
        "configurations a task", f"{_PLAN}.choose_block_size", 0.0),
    Problem(
        "exam-nb11-overhead-share-cap", "11", "exam",
        _RULE + "A slow model takes c = {c_ms:g} ms a configuration; {n:,} configurations run on {threads} worker "
        "threads with o = {o_ms:g} ms per task. What overhead share (%) does the chosen block size leave, and why is "
        "the block not larger?",
        lambda: _with_text(_rule_given(10**5, 0.05, 0.1, 32)), _rule_steps,
        lambda g: 100 * g["o"] / (_block(g) * g["c"]),
        lambda g: 100 * _plan(g).overhead_share,
        "%", f"{_PLAN}.plan (Plan.overhead_share)"),
    Problem(
        "exam-nb11-layouts-24-chips", "11", "exam",
        "A system of {n} chips serves Llama 3.1 70B ({heads} attention heads, {layers} layers). Count the layouts "
        "(tp, pp) with tp·pp dividing {n}, tp dividing {heads} and pp at most {layers}. Why do 24 chips give fewer "
        "tensor-parallel choices than their divisor count suggests?",
        lambda: _layouts_given(24), _layout_steps, _layout_count,
        lambda g: len(layouts(get_model("llama-3.1-70b"), g["n"])),
        "layouts", "accelbook.inference.sweep.layouts", 0.0),
    Problem(
        "exam-nb11-grown-grid", "11", "exam",
        "The frontier grid ({n_chip} chips, {n_prec} precisions, {n_prompt} prompt lengths, {n_out} output length) "
        "grows to {n_model} models (Llama 3.1 405B added) and {n_batch} batch sizes (16 and 32 added). How many "
        "configurations now, and by what factor did the sweep grow?",
        _grown_given,
        lambda g: [f"configurations = {g['n_chip']} × {g['n_model']} × {g['n_prec']} × {g['n_batch']} × {g['n_prompt']} × "
                   f"{g['n_out']} = {fmt(_frontier_count(g))}",
                   f"growth = ({g['n_model']} ÷ {g['n_model'] - 1}) × ({g['n_batch']} ÷ {g['n_batch'] - 2}) = "
                   f"{fmt(g['n_model'] * g['n_batch'] / ((g['n_model'] - 1) * (g['n_batch'] - 2)))}×: "
                   "a grid grows as the product of its lists"],
        _frontier_count, _grown_model,
        "configurations", "accelbook.sweep.grid.configurations", 0.0),
]
