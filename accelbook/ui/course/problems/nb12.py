"""Paper-and-pencil problems of notebook 12, the capstone: training FLOPs, days and dollars, the chips that hold a
model, and what a served token costs (see accelbook.ui.course.hand). Chips, models, prices and the goodput come
from the catalogue; the MFU, chip counts and token rates are the problems' own choices."""

from __future__ import annotations

import math

from accelbook.chip.roofline import time_bounds
from accelbook.economics.cost import implied_params, training_cost_table, training_tokens_per_s, usd_per_token
from accelbook.economics.fleet import HOURS_PER_MONTH
from accelbook.economics.tco import HOURS_PER_YEAR, own_cost_per_hour, rent_cost_per_hour, tco_inputs
from accelbook.inference.sweep import min_chips
from accelbook.specs.chips import MEMORY_RESERVE, get_chip
from accelbook.specs.models import get_model
from accelbook.specs.system_power import system_power
from accelbook.training.goodput import published_goodput
from accelbook.ui.course.hand import Problem, fmt

_M70 = "llama-3.1-70b"
_COST = "accelbook.economics.cost"


def _train_given(chip: str = "tpu-v5p", n: int = 4096, mfu: float = 0.5):
    m, c = get_model(_M70), get_chip(chip)
    return {"N": m.params, "N_mm": m.matmul_params_active, "L": m.n_layers, "Hd": m.n_heads * m.d_head, "s": 8192,
            "D": 15e12, "D_e12": 15, "chip": c.name, "n": n, "mfu": mfu, "P": c.peak_flop_s("bf16") / 1e12,
            "price": c.price_usd_per_hour, "g": published_goodput().fraction, "deadline": 90}


def _c_full(g):
    return 6 * g["N_mm"] + 12 * g["L"] * g["s"] * g["Hd"]


def _c_steps(g):
    return [f"C = 6·N_mm + 12·L·s·H·d_h = 6 × {fmt(g['N_mm'])} + 12 × {g['L']} × {fmt(g['s'])} × {fmt(g['Hd'])} = "
            f"{fmt(_c_full(g))} FLOP/token"]


def _flops_steps(g):
    c = 6 * g["N_mm"] + 6 * g["L"] * g["s"] * g["Hd"]
    return [f"rule of thumb: 6·N·D = 6 × {fmt(g['N'])} × {g['D_e12']:g}e12 = {fmt(6 * g['N'] * g['D'])} FLOPs",
            f"per token, causal: C = 6·N_mm + 6·L·s·H·d_h = 6 × {fmt(g['N_mm'])} + 6 × {g['L']} × {fmt(g['s'])} × "
            f"{fmt(g['Hd'])} = {fmt(c)} FLOP",
            f"total = C × D = {fmt(c)} × {g['D_e12']:g}e12 = {fmt(c * g['D'])} FLOPs, {fmt(c / (6 * g['N']))}× the rule of "
            "thumb: attention at 8K adds more than the embeddings (not multiplied) take away"]


def _chip_s(g):
    """Chip-seconds of training: D·C / (P·MFU) / goodput."""
    return g["D"] * _c_full(g) / (g["P"] * 1e12 * g["mfu"]) / g["g"]


def _days_steps(g):
    tps = g["P"] * 1e12 * g["mfu"] / _c_full(g)
    days = _chip_s(g) / g["n"] / 86400
    return [*_c_steps(g),
            f"tokens/s per chip = MFU × P ÷ C = {fmt(g['mfu'])} × {fmt(g['P'])}e12 ÷ {fmt(_c_full(g))} = {fmt(tps)}",
            f"days = D ÷ (n × tokens/s) ÷ goodput ÷ 86,400 = {g['D_e12']:g}e12 ÷ ({fmt(g['n'])} × {fmt(tps)}) ÷ "
            f"{fmt(g['g'])} ÷ 86,400 = {fmt(days)} days",
            f"against the {g['deadline']}-day deadline: {'met' if days <= g['deadline'] else 'missed'}"]


def _days_model(g):
    tps = training_tokens_per_s(get_model(_M70), get_chip("tpu-v5p"), g["mfu"], g["s"])
    return g["D"] / (g["n"] * tps) / g["g"] / 86400


def _cost_steps(g):
    hours = _chip_s(g) / 3600
    return [*_c_steps(g),
            f"chip-hours = D × C ÷ (P × MFU) ÷ goodput ÷ 3,600 = {g['D_e12']:g}e12 × {fmt(_c_full(g))} ÷ ({fmt(g['P'])}e12 × "
            f"{fmt(g['mfu'])}) ÷ {fmt(g['g'])} ÷ 3,600 = {fmt(hours)}",
            f"cost = {fmt(hours)} × USD {fmt(g['price'])} = USD {fmt(hours * g['price'] / 1e6)} M, whatever the chip "
            "count at this MFU"]


def _cost_model(g):
    df, _ = training_cost_table(get_model(_M70), ["tpu-v5p"], g["mfu"], g["s"], train_tokens=g["D"], goodput=g["g"])
    return float(df["train_cost_usd"].iloc[0]) / 1e6


def _deadline_chips(g):
    return math.ceil(_chip_s(g) / (g["deadline"] * 86400))


def _deadline_steps(g):
    return [*_c_steps(g),
            f"chip-seconds = D × C ÷ (P × MFU) ÷ goodput = {g['D_e12']:g}e12 × {fmt(_c_full(g))} ÷ ({fmt(g['P'])}e12 × "
            f"{fmt(g['mfu'])}) ÷ {fmt(g['g'])} = {fmt(_chip_s(g))}",
            f"chips = ⌈{fmt(_chip_s(g))} ÷ ({g['deadline']} × 86,400)⌉ = ⌈{fmt(_chip_s(g) / (g['deadline'] * 86400))}⌉ "
            f"= {fmt(_deadline_chips(g))}"]


def _deadline_model(g):
    tps = training_tokens_per_s(get_model(_M70), get_chip("h100"), g["mfu"], g["s"])
    return math.ceil(g["D"] / (tps * g["g"] * g["deadline"] * 86400))


def _hold_given(model: str, chip: str, precision: str, b: int):
    m, c = get_model(model), get_chip(chip)
    sram = c.hbm_bytes is None
    return {"model": m.name, "N": m.params, "b": b, "prec": precision, "chip": c.name, "mem_gb": c.memory_bytes / 1e9,
            "kind": "SRAM" if sram else "HBM", "usable": 100 if sram else round(100 * (1 - MEMORY_RESERVE))}


def _hold(g):
    return math.ceil(g["N"] * g["b"] / (g["mem_gb"] * 1e9 * g["usable"] / 100))


def _hold_steps(g):
    w = g["N"] * g["b"] / 1e9
    u = g["mem_gb"] * g["usable"] / 100
    return [f"weights = {fmt(g['N'])} × {g['b']} B = {fmt(w)} GB",
            f"usable per chip = {fmt(g['mem_gb'])} GB × {g['usable']} % = {fmt(u)} GB",
            f"chips = ⌈{fmt(w)} ÷ {fmt(u)}⌉ = ⌈{fmt(w / u)}⌉ = {_hold(g)}, before any KV cache"]


def _own_given():
    inp = tco_inputs()
    c = get_chip("h100")
    return {"chip": c.name, "price": c.price_usd_per_hour, "buy": inp["purchase_usd"]["h100"],
            "sys_w": system_power(c).system_w, "u": 0.6, "years": inp["lifetime_years"], "r": inp["cost_of_capital"],
            "pue": inp["pue"], "kwh": inp["electricity_usd_per_kwh"], "load": inp["load_power_share"],
            "over": inp["overhead_share"], "staff": inp["staff_usd_per_chip_year"], "hy": HOURS_PER_YEAR}


def _own_parts(g):
    capex = g["buy"] * g["r"] / (1 - (1 + g["r"]) ** -g["years"])
    power = g["sys_w"] * g["load"] * g["pue"] * g["hy"] / 1000 * g["kwh"]
    return capex, power, g["over"] * capex + g["staff"]


def _own_ratio(g):
    own = sum(_own_parts(g)) / (g["u"] * g["hy"])
    return (g["price"] / g["u"]) / own


def _own_steps(g):
    capex, power, over = _own_parts(g)
    own = sum(_own_parts(g)) / (g["u"] * g["hy"])
    return [f"capex a year = {fmt(g['buy'])} × {fmt(g['r'])} ÷ (1 − {fmt(1 + g['r'])}^−{fmt(g['years'])}) = "
            f"USD {fmt(capex, 6)}",
            f"power a year = {fmt(g['sys_w'])} W × {fmt(g['load'])} × {fmt(g['pue'])} × {fmt(g['hy'])} h ÷ 1,000 × "
            f"{fmt(g['kwh'])} = USD {fmt(power, 6)}",
            f"overheads = {fmt(g['over'])} × {fmt(capex, 6)} + {fmt(g['staff'])} = USD {fmt(over, 6)}",
            f"owned = {fmt(capex + power + over, 6)} ÷ ({fmt(g['u'])} × {fmt(g['hy'])}) = USD {fmt(own)} per useful hour",
            f"rented = {fmt(g['price'])} ÷ {fmt(g['u'])} = USD {fmt(g['price'] / g['u'])}; ratio = {fmt(_own_ratio(g))}: "
            "both divide by the utilisation, so it cancels"]


def _own_model(g):
    kw = {k: v for k, v in tco_inputs().items() if k != "purchase_usd"}
    own = own_cost_per_hour(g["buy"], g["sys_w"], utilisation=g["u"], **kw)["usd_per_hour"]
    return rent_cost_per_hour(g["price"], g["u"]) / own


def _serve_given():
    c = get_chip("h200")
    return {"chip": c.name, "price": c.price_usd_per_hour, "tokens": 25e9, "tokens_e9": 25, "hours": HOURS_PER_MONTH, "gpus": 48}


def _serve_usd(g):
    return g["gpus"] * g["hours"] * g["price"] / (g["tokens"] / 1e6)


def _serve_steps(g):
    tps = g["tokens"] / (g["hours"] * 3600) / g["gpus"]
    return [f"chip-hours a month = {g['gpus']} × {fmt(g['hours'])} = {fmt(g['gpus'] * g['hours'])}; cost = USD "
            f"{fmt(g['gpus'] * g['hours'] * g['price'])}",
            f"per million tokens = {fmt(g['gpus'] * g['hours'] * g['price'])} ÷ {fmt(g['tokens'] / 1e6)} = "
            f"USD {fmt(_serve_usd(g))}",
            f"the same as price ÷ (tokens/s per chip): {g['tokens_e9']:g}e9 ÷ ({fmt(g['hours'])} × 3,600) ÷ {g['gpus']} = "
            f"{fmt(tps)} tokens/s per chip on average, far below what a busy chip delivers"]


def _decode_given():
    m, c = get_model(_M70), get_chip("h200")
    return {"N": m.params, "N_mm": m.matmul_params_active, "L": m.n_layers, "Hd": m.n_heads * m.d_head,
            "kv": int(m.kv_cache_bytes_per_token("fp8")), "s": 1024, "n": 8, "P": c.peak_flop_s("fp8") / 1e12,
            "bw": c.memory_bw_bytes_per_s / 1e12}


def _decode_terms(g):
    f = 2 * g["N_mm"] + 4 * g["L"] * g["s"] * g["Hd"]
    d = g["N"] + g["s"] * g["kv"]
    return f, d, f / (g["n"] * g["P"] * 1e12), d / (g["n"] * g["bw"] * 1e12)


def _decode_steps(g):
    f, d, t_math, t_mem = _decode_terms(g)
    return [f"F = 2·N_mm + 4·L·s·H·d_h = 2 × {fmt(g['N_mm'])} + 4 × {g['L']} × {fmt(g['s'])} × {fmt(g['Hd'])} = "
            f"{fmt(f)} FLOPs",
            f"D = N × 1 B + s × {fmt(g['kv'])} B = {fmt(g['N'] / 1e9)} + {fmt(g['s'] * g['kv'] / 1e9)} = {fmt(d / 1e9)} GB",
            f"intensity = F ÷ D = {fmt(f / d)} FLOP/byte, against a ridge of {fmt(g['P'])} ÷ {fmt(g['bw'])} = "
            f"{fmt(g['P'] / g['bw'])}",
            f"t_math = F ÷ ({g['n']} × {fmt(g['P'])}e12) = {fmt(t_math * 1e3)} ms; t_mem = D ÷ ({g['n']} × "
            f"{fmt(g['bw'])}e12) = {fmt(t_mem * 1e3)} ms",
            f"t = max = {fmt(max(t_math, t_mem) * 1e3)} ms a token: {fmt(1 / max(t_math, t_mem))} tokens/s for this user"]


def _decode_model(g):
    m, c = get_model(_M70), get_chip("h200")
    t = time_bounds(m.flops_per_token(g["s"]), m.weight_bytes("fp8") + m.kv_cache_bytes(g["s"], "fp8"),
                    g["n"] * c.peak_flop_s("fp8"), g["n"] * c.memory_bw_bytes_per_s)[2]
    return float(t) * 1e3


_TRAIN = ("Llama 3.1 70B (N = {N:,} parameters, N_mm = {N_mm:,} of them in the matmuls, {L} layers, H·d_h = {Hd:,}) "
          "trains on D = {D_e12:g} × 10^12 tokens at s = {s:,}. ")
PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb12-training-flops", "12", "hand",
        _TRAIN + "How many FLOPs does the run take, counting causal attention (half the scores)? Compare with 6·N·D.",
        _train_given, _flops_steps,
        lambda g: g["D"] * (6 * g["N_mm"] + 6 * g["L"] * g["s"] * g["Hd"]),
        lambda g: g["D"] * get_model(_M70).flops_per_token(g["s"], training=True, causal=True),
        "FLOPs", "accelbook.specs.models.Model.flops_per_token (Kaplan et al. 2020; Chowdhery et al. 2022, App. B)"),
    Problem(
        "hand-nb12-days-to-train", "12", "hand",
        _TRAIN + "It runs on {n:,} × {chip} ({P:,.0f} TFLOP/s dense bf16) at an MFU of {mfu:g}, counted with full "
        "attention (C = 6·N_mm + 12·L·s·H·d_h), and {g:.0%} goodput. How many days, against a {deadline}-day deadline?",
        _train_given, _days_steps,
        lambda g: _chip_s(g) / g["n"] / 86400, _days_model,
        "days", f"{_COST}.training_tokens_per_s (MFU: Chowdhery et al. 2022, App. B; goodput: Llama 3 paper)"),
    Problem(
        "hand-nb12-cost-to-train", "12", "hand",
        _TRAIN + "On {chip} chips ({P:,.0f} TFLOP/s dense bf16, USD {price:g} a chip-hour) at an MFU of {mfu:g} (full "
        "attention) and {g:.0%} goodput, what does the run cost in millions of USD? Does it depend on the chip count?",
        _train_given, _cost_steps,
        lambda g: _chip_s(g) / 3600 * g["price"] / 1e6, _cost_model,
        "USD million", f"{_COST}.training_cost_table"),
    Problem(
        "hand-nb12-lp30-chips", "12", "hand",
        "{model} has {N:,} parameters, stored in {prec} ({b} byte each). A {chip} holds the weights in {mem_gb:g} GB "
        "of {kind}, all of it usable. How many chips does it take just to hold the weights?",
        lambda: _hold_given(_M70, "groq-lp30", "fp8", 1), _hold_steps, _hold,
        lambda g: min_chips(_M70, "groq-lp30", "fp8"),
        "chips", "accelbook.inference.sweep.min_chips", 0.0),
    Problem(
        "hand-nb12-405b-h100-chips", "12", "hand",
        "{model} has {N:,} parameters in {prec} ({b} bytes each). An {chip} has {mem_gb:.2f} GB of {kind} as the "
        "driver reports it, of which {usable} % may hold weights. How many H100s are needed to hold the weights?",
        lambda: _hold_given("llama-3.1-405b", "h100", "bf16", 2), _hold_steps, _hold,
        lambda g: min_chips("llama-3.1-405b", "h100", "bf16"),
        "chips", "accelbook.inference.sweep.min_chips", 0.0),
    Problem(
        "hand-nb12-usd-per-million-tokens", "12", "hand",
        "An {chip} rents at USD {price:g} an hour and serves {tps:,} tokens/s. What does a million tokens cost?",
        lambda: {"chip": get_chip("h200").name, "price": get_chip("h200").price_usd_per_hour, "tps": 1600},
        lambda g: [f"USD per second = {fmt(g['price'])} ÷ 3,600 = {fmt(g['price'] / 3600)}",
                   f"per million tokens = {fmt(g['price'] / 3600)} ÷ {fmt(g['tps'])} × 10^6 = "
                   f"USD {fmt(g['price'] / 3600 / g['tps'] * 1e6)}"],
        lambda g: g["price"] / 3600 / g["tps"] * 1e6,
        lambda g: usd_per_token(g["tps"], get_chip("h200")) * 1e6,
        "USD per million tokens", f"{_COST}.usd_per_token"),
    Problem(
        "exam-nb12-chips-for-deadline", "12", "exam",
        _TRAIN + "How many {chip} chips ({P:,.1f} TFLOP/s dense bf16) does it need to finish in {deadline} days at an MFU "
        "of {mfu:g} (full attention, C = 6·N_mm + 12·L·s·H·d_h) and {g:.0%} goodput?",
        lambda: _train_given("h100", 0, 0.4), _deadline_steps, _deadline_chips, _deadline_model,
        "chips", f"{_COST}.training_tokens_per_s", 0.0),
    Problem(
        "exam-nb12-implied-params", "12", "exam",
        "A report gives {tps:,} training tokens/s per {chip} ({P:,.1f} TFLOP/s dense bf16) at an MFU of {mfu:g}. With "
        "C ≈ 6·N FLOPs a token, how many parameters does the model it trained have? Which Llama is that closest to?",
        lambda: {"chip": get_chip("h100").name, "P": get_chip("h100").peak_flop_s("bf16") / 1e12, "tps": 3000,
                 "mfu": 0.45},
        lambda g: [f"MFU = tokens/s × 6·N ÷ P, so N = MFU × P ÷ (6 × tokens/s) = {fmt(g['mfu'])} × {fmt(g['P'])}e12 ÷ "
                   f"(6 × {fmt(g['tps'])}) = {fmt(g['mfu'] * g['P'] * 1e12 / (6 * g['tps']))}",
                   "about 25 billion: between Llama 3.1 8B and 70B; the attention term would lower it a little"],
        lambda g: g["mfu"] * g["P"] * 1e12 / (6 * g["tps"]),
        lambda g: implied_params(g["tps"], g["mfu"], get_chip("h100")),
        "parameters", f"{_COST}.implied_params (Chowdhery et al. 2022, App. B)"),
    Problem(
        "exam-nb12-rent-over-own", "12", "exam",
        "An {chip} rents at USD {price:g} an hour, or costs USD {buy:,.0f} to buy, draws {sys_w:,.0f} W as its share "
        "of a server, runs at {load:.0%} of that on average, in a data centre of PUE {pue:g} paying USD {kwh:g} per "
        "kWh. Capital costs {r:.0%} a year over {years:g} years (an annuity); overheads are {over:.0%} of the yearly "
        "capex plus USD {staff:,.0f} of staff. At {u:.0%} utilisation, how many times the owned cost per useful hour "
        "is the rented one? Would it change at another utilisation?",
        _own_given, _own_steps, _own_ratio, _own_model,
        "×", "accelbook.economics.tco.own_cost_per_hour and rent_cost_per_hour"),
    Problem(
        "exam-nb12-chat-usd-per-million", "12", "exam",
        "A chat product delivers {tokens_e9:g} billion output tokens a month ({hours:g} hours) on {gpus} × {chip} held all month "
        "for the peak, rented at USD {price:g} a chip-hour. What does a million tokens cost, and why is it far more "
        "than a busy chip's price per token?",
        _serve_given, _serve_steps, _serve_usd,
        lambda g: usd_per_token(g["tokens"] / (g["hours"] * 3600) / g["gpus"], get_chip("h200")) * 1e6,
        "USD per million tokens", f"{_COST}.usd_per_token (accelbook.economics.fleet.HOURS_PER_MONTH)"),
    Problem(
        "exam-nb12-decode-token-time", "12", "exam",
        "Llama 3.1 70B (N = {N:,}, N_mm = {N_mm:,}, {L} layers, H·d_h = {Hd:,}) decodes one sequence at {s:,} tokens on "
        "{n} H200s ({P:,.1f} TFLOP/s dense fp8 and {bw:g} TB/s each), with fp8 weights and an fp8 KV cache of {kv:,} "
        "bytes a token, the work split evenly. On the roofline, how long does a token take, and what bounds it?",
        _decode_given, _decode_steps,
        lambda g: max(_decode_terms(g)[2:]) * 1e3, _decode_model,
        "ms", "accelbook.chip.roofline.time_bounds (Williams et al. 2009)"),
]
