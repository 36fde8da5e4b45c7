"""Paper-and-pencil problems of notebook 01: a layer on the roofline, training tokens per second and what a
token costs (see accelbook.ui.course.hand)."""

from __future__ import annotations

from accelbook.chip.roofline import layer_roofline
from accelbook.economics.claims import load_claims
from accelbook.economics.cost import implied_params, peak_flop_per_usd, training_tokens_per_s, usd_per_token
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.training.mfu import counted_flops_per_token
from accelbook.ui.course.hand import Problem, fmt

_ROOFLINE = "accelbook.chip.roofline.layer_roofline; Williams, Waterman and Patterson, Roofline, CACM 2009"
_MFU = "Chowdhery et al., PaLM, 2022, appendix B"


def _ffn_down(batch: int):
    """The FFN down-projection of Llama 3.1 70B in decode: T = batch tokens, k = d_ff, n = d, bf16."""
    def given():
        m, c = get_model("llama-3.1-70b"), get_chip("h100")
        return {"T": batch, "k": m.d_ff, "n": m.d_model, "b": 2, "P": c.peak_flop_s("bf16") / 1e12,
                "B": c.hbm_bw_bytes_per_s / 1e12}
    return given


def _gemm_fd(g):
    return 2 * g["T"] * g["k"] * g["n"], (g["T"] * g["k"] + g["k"] * g["n"] + g["T"] * g["n"]) * g["b"]


def _gemm_t_us(g):
    f, d = _gemm_fd(g)
    return max(f / (g["P"] * 1e12), d / (g["B"] * 1e12)) * 1e6


def _gemm_steps(g):
    f, d = _gemm_fd(g)
    tm, tb = f / (g["P"] * 1e12) * 1e6, d / (g["B"] * 1e12) * 1e6
    T, k, n = g["T"], fmt(g["k"]), fmt(g["n"])
    return [f"F = 2·T·k·n = 2 × {T} × {k} × {n} = {fmt(f)} FLOP",
            f"D = (T·k + k·n + T·n)·b = ({T} × {k} + {k} × {n} + {T} × {n}) × {g['b']} = {fmt(d)} bytes",
            f"t_math = F / P = {fmt(f)} ÷ {fmt(g['P'])}e12 = {fmt(tm)} µs; t_mem = D / B = {fmt(d)} ÷ {fmt(g['B'])}e12 "
            f"= {fmt(tb)} µs",
            f"t = max(t_math, t_mem) = {fmt(max(tm, tb))} µs: {'memory' if tb > tm else 'compute'}-bound"]


def _row(chip: str, batch: int, op: str = "FFN down"):
    r = layer_roofline("llama-3.1-70b", chip, "decode", batch, 4096)
    return r.set_index("op").loc[op]


def _intensity_steps(g):
    f, d = _gemm_fd(g)
    return [f"F = 2·T·k·n = {fmt(f)} FLOP; D = (T·k + k·n + T·n)·b = {fmt(d)} bytes",
            f"I = F / D = {fmt(f / d)} FLOP/byte, close to T = {g['T']} because the weight (k·n) dominates D",
            f"the H100's ridge is {fmt(g['P'])} ÷ {fmt(g['B'])} = {fmt(g['P'] / g['B'])} FLOP/byte: still memory-bound"]


def _train_given(model: str, chip: str, s: int, mfu: float):
    def given():
        m, c = get_model(model), get_chip(chip)
        return {"Nmm": m.matmul_params_active, "L": m.n_layers, "H": m.n_heads, "dh": m.d_head, "s": s, "mfu": mfu, "pct": 100 * mfu,
                "P": c.peak_flop_s("bf16") / 1e12, "price": c.price_usd_per_hour}
    return given


def _c_full(g, attention_factor: int = 12):
    return 6 * g["Nmm"] + attention_factor * g["L"] * g["H"] * g["dh"] * g["s"]


def _tps(g):
    return g["mfu"] * g["P"] * 1e12 / _c_full(g)


def _tps_steps(g):
    return [f"C = 6·N_mm + 12·L·H·d_h·s = 6 × {fmt(g['Nmm'])} + 12 × {g['L']} × {g['H']} × {g['dh']} × {g['s']} = "
            f"{fmt(_c_full(g))} FLOP per token",
            f"tokens/s = MFU·P / C = {g['mfu']} × {fmt(g['P'])}e12 ÷ {fmt(_c_full(g))} = {fmt(_tps(g))} tokens/s"]


def _usd_m(g):
    return g["price"] / 3600 / _tps(g) * 1e6


def _usd_steps(g):
    return [*_tps_steps(g),
            f"price per second = {fmt(g['price'])} ÷ 3,600 = {fmt(g['price'] / 3600)} USD/s",
            f"USD per million tokens = {fmt(g['price'] / 3600)} ÷ {fmt(_tps(g))} × 10⁶ = {fmt(_usd_m(g))} USD"]


def _full_causal_pct(g):
    return (_c_full(g) / _c_full(g, 6) - 1) * 100


def _full_causal_steps(g):
    w, a = 6 * g["Nmm"], 12 * g["L"] * g["H"] * g["dh"] * g["s"]
    return [f"weights: 6·N_mm = 6 × {fmt(g['Nmm'])} = {fmt(w)} FLOP; full attention: 12·L·H·d_h·s = 12 × {g['L']} × "
            f"{g['H']} × {g['dh']} × {g['s']} = {fmt(a)} FLOP",
            f"full: {fmt(w + a)}; causal (half the attention): {fmt(w + a / 2)} FLOP per token",
            f"MFU full ÷ MFU causal − 1 = {fmt(w + a)} ÷ {fmt(w + a / 2)} − 1 = {fmt(_full_causal_pct(g))} %"]


def _two_chips():
    h, v = get_chip("h100"), get_chip("tpu-v5p")
    return {"Ph": h.peak_flop_s("bf16") / 1e12, "ph": h.price_usd_per_hour, "Pv": v.peak_flop_s("bf16") / 1e12,
            "pv": v.price_usd_per_hour, "mfu": 0.40, "pct": 40}


def _cost_ratio(g):
    return (g["ph"] / g["Ph"]) / (g["pv"] / g["Pv"])


def _cost_ratio_steps(g):
    return ["USD per token = price ÷ (MFU·P / C): at one MFU, C and MFU cancel in the ratio",
            f"H100: price ÷ P = {fmt(g['ph'])} ÷ {fmt(g['Ph'])} = {fmt(g['ph'] / g['Ph'])} USD/h per TFLOP/s",
            f"TPU v5p: {fmt(g['pv'])} ÷ {fmt(g['Pv'])} = {fmt(g['pv'] / g['Pv'])} USD/h per TFLOP/s",
            f"ratio = {fmt(g['ph'] / g['Ph'])} ÷ {fmt(g['pv'] / g['Pv'])} = {fmt(_cost_ratio(g))}"]


def _model_cost_ratio(g):
    m = get_model("llama-3.1-70b")
    u = {c: usd_per_token(training_tokens_per_s(m, c, g["mfu"], 4096), c) for c in ("h100", "tpu-v5p")}
    return u["h100"] / u["tpu-v5p"]


def _pfpu(chip: str) -> float:
    return float(peak_flop_per_usd(chip, "bf16"))


def _claim():
    c = next(c for c in load_claims() if c.id == "h100-v5p-throughput").params
    a, b = get_chip(c["chip_a"]), get_chip(c["chip_b"])
    return {"ta": c["tokens_a"], "ma": c["mfu_a"], "Pa": a.peak_flop_s("bf16") / 1e12, "tb": c["tokens_b"],
            "mb": c["mfu_b"], "Pb": b.peak_flop_s("bf16") / 1e12, "pa": 100 * c["mfu_a"], "pb": 100 * c["mfu_b"]}


def _implied(g, side: str):
    return g["m" + side] * g["P" + side] * 1e12 / (6 * g["t" + side])


def _claim_steps(g):
    na, nb = _implied(g, "a"), _implied(g, "b")
    return ["MFU = tokens/s · 6N / P, so N = MFU·P / (6 · tokens/s)",
            f"H100: N = {g['ma']} × {fmt(g['Pa'])}e12 ÷ (6 × {g['ta']:,}) = {fmt(na / 1e9)} × 10⁹",
            f"TPU v5p: N = {g['mb']} × {fmt(g['Pb'])}e12 ÷ (6 × {g['tb']:,}) = {fmt(nb / 1e9)} × 10⁹",
            f"ratio = {fmt(na / 1e9)} ÷ {fmt(nb / 1e9)} = {fmt(na / nb)}: not the same model, so the rows cannot be compared"]


def _claim_model(g):
    return float(implied_params(g["ta"], g["ma"], "h100") / implied_params(g["tb"], g["mb"], "tpu-v5p"))


def _bw_pair():
    h, v = get_chip("h100"), get_chip("tpu-v5p")
    return {"Bh": h.hbm_bw_bytes_per_s / 1e12, "Bv": v.hbm_bw_bytes_per_s / 1e12, "Ph": h.peak_flop_s("bf16") / 1e12,
            "Pv": v.peak_flop_s("bf16") / 1e12, "T": 8, "s": 4096}


def _decode_ratio_model(g):
    t = {c: layer_roofline("llama-3.1-70b", c, "decode", g["T"], g["s"])["t_s"].sum() for c in ("h100", "tpu-v5p")}
    return t["tpu-v5p"] / t["h100"]


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb01-gemv-time-h100", "01", "hand",
        "Decoding Llama 3.1 70B at batch T = {T}, the FFN down-projection multiplies a {k:,} × {n:,} bf16 weight "
        "({b} bytes an element) by one token. It reads the weight and the input and writes the output once. On an "
        "H100 ({P:,.1f} TFLOP/s dense bf16, {B:.2f} TB/s), what is its roofline lower-bound time, and which bound is it?",
        _ffn_down(1), _gemm_steps, _gemm_t_us, lambda g: _row("h100", g["T"])["t_s"] * 1e6, "µs", _ROOFLINE),
    Problem(
        "hand-nb01-ffn-intensity-b64", "01", "hand",
        "The same FFN down-projection of Llama 3.1 70B ({k:,} × {n:,} weight, bf16, {b} bytes an element) now serves "
        "a decode batch of T = {T} tokens. What is its arithmetic intensity, counting the weight, the inputs and the "
        "outputs once? Is it past an H100's ridge ({P:,.1f} TFLOP/s, {B:.2f} TB/s)?",
        _ffn_down(64), _intensity_steps, lambda g: _gemm_fd(g)[0] / _gemm_fd(g)[1],
        lambda g: _row("h100", g["T"])["intensity_flop_per_byte"], "FLOP/byte", _ROOFLINE),
    Problem(
        "hand-nb01-tokens-s-70b-h100", "01", "hand",
        "Llama 3.1 70B multiplies each token by N_mm = {Nmm:,} weights and has {L} layers of {H} heads of d_h = {dh}. "
        "An H100 ({P:,.1f} TFLOP/s dense bf16) trains it at s = {s:,} with an MFU of {pct:.0f} %. How many training "
        "tokens per second does one H100 process?",
        _train_given("llama-3.1-70b", "h100", 4096, 0.40), _tps_steps, _tps,
        lambda g: training_tokens_per_s("llama-3.1-70b", "h100", g["mfu"], g["s"]),
        "tokens/s", f"accelbook.economics.cost.training_tokens_per_s; {_MFU}"),
    Problem(
        "hand-nb01-usd-m-v5p", "01", "hand",
        "A TPU v5p ({P:,.0f} TFLOP/s dense bf16, USD {price:.2f} per chip-hour) trains Llama 3.1 70B (N_mm = {Nmm:,}, "
        "{L} layers, {H} heads of d_h = {dh}) at s = {s:,} and {pct:.0f} % MFU. What do a million training tokens cost?",
        _train_given("llama-3.1-70b", "tpu-v5p", 4096, 0.50), _usd_steps, _usd_m,
        lambda g: usd_per_token(training_tokens_per_s("llama-3.1-70b", "tpu-v5p", g["mfu"], g["s"]), "tpu-v5p") * 1e6,
        "USD", f"accelbook.economics.cost.usd_per_token; {_MFU}"),
    Problem(
        "hand-nb01-full-vs-causal-8b", "01", "hand",
        "Llama 3.1 8B has N_mm = {Nmm:,} matmul weights and {L} layers of {H} heads of d_h = {dh}. One run at s = "
        "{s:,} is reported twice: its MFU counted with full attention (12·L·H·d_h·s per token) and counted causal "
        "(half that). By how many % is the full-attention MFU higher?",
        _train_given("llama-3.1-8b", "h100", 8192, 0.40), _full_causal_steps, _full_causal_pct,
        lambda g: (counted_flops_per_token(get_model("llama-3.1-8b"), g["s"], "full")
                   / counted_flops_per_token(get_model("llama-3.1-8b"), g["s"], "causal") - 1) * 100,
        "%", f"accelbook.training.mfu.counted_flops_per_token; {_MFU}"),
    Problem(
        "hand-nb01-flop-per-usd-v5p", "01", "hand",
        "A TPU v5p peaks at {Pv:,.0f} TFLOP/s dense bf16 and rents for USD {pv:.2f} an hour. How many peak FLOPs does "
        "one dollar buy?",
        _two_chips,
        lambda g: [f"price per second = {fmt(g['pv'])} ÷ 3,600 = {fmt(g['pv'] / 3600)} USD/s",
                   f"FLOP per USD = P ÷ price = {fmt(g['Pv'])}e12 ÷ {fmt(g['pv'] / 3600)} = "
                   f"{fmt(g['Pv'] * 1e12 * 3600 / g['pv'])} FLOP/USD"],
        lambda g: g["Pv"] * 1e12 * 3600 / g["pv"], lambda g: _pfpu("tpu-v5p"),
        "FLOP/USD", "accelbook.economics.cost.peak_flop_per_usd"),
    Problem(
        "exam-nb01-cost-ratio-h100-v5p", "01", "exam",
        "An H100 ({Ph:,.1f} TFLOP/s dense bf16, USD {ph:.2f} an hour) and a TPU v5p ({Pv:,.0f} TFLOP/s, USD {pv:.2f} "
        "an hour) both train Llama 3.1 70B at {pct:.0f} % MFU. How many times more does a training token cost on the "
        "H100? Why do the model's FLOPs per token not matter here?",
        _two_chips, _cost_ratio_steps, _cost_ratio, _model_cost_ratio,
        "×", f"accelbook.economics.cost.usd_per_token; {_MFU}"),
    Problem(
        "exam-nb01-break-even-price", "01", "exam",
        "An H100 ({Ph:,.1f} TFLOP/s dense bf16) lists at USD {ph:.2f} an hour, a TPU v5p ({Pv:,.0f} TFLOP/s) at USD "
        "{pv:.2f}. At equal MFU, what fraction of its list price must the H100 cost for a training token to cost "
        "the same on both?",
        _two_chips,
        lambda g: ["equal cost per token at equal MFU means equal price ÷ peak",
                   f"f × {fmt(g['ph'])} ÷ {fmt(g['Ph'])} = {fmt(g['pv'])} ÷ {fmt(g['Pv'])}",
                   f"f = ({fmt(g['pv'])} ÷ {fmt(g['Pv'])}) ÷ ({fmt(g['ph'])} ÷ {fmt(g['Ph'])}) = {fmt(1 / _cost_ratio(g))}"],
        lambda g: 1 / _cost_ratio(g), lambda g: _pfpu("h100") / _pfpu("tpu-v5p"),
        "of list price", "accelbook.economics.cost.peak_flop_per_usd"),
    Problem(
        "exam-nb01-mfu-vs-tokens", "01", "exam",
        "Article 1 credits an H100 ({Pa:,.1f} TFLOP/s dense bf16) with {pa:.0f} % MFU and a TPU v5p ({Pb:,.0f} TFLOP/s) "
        "with {pb:.0f} %. On the same model and sequence length, how many times the v5p's training tokens per second "
        "does the H100 make? Which chip leads on MFU, and which on speed?",
        _claim,
        lambda g: ["tokens/s = MFU·P / C, and C is the same model's, so the ratio is (MFU·P)_H100 ÷ (MFU·P)_v5p",
                   f"= ({g['ma']} × {fmt(g['Pa'])}) ÷ ({g['mb']} × {fmt(g['Pb'])}) = {fmt(g['ma'] * g['Pa'])} ÷ "
                   f"{fmt(g['mb'] * g['Pb'])} = {fmt(g['ma'] * g['Pa'] / (g['mb'] * g['Pb']))}",
                   "the v5p has the higher MFU, the H100 the higher token rate: MFU is a share of each chip's own peak"],
        lambda g: g["ma"] * g["Pa"] / (g["mb"] * g["Pb"]),
        lambda g: (training_tokens_per_s("llama-3.1-70b", "h100", g["ma"], 4096)
                   / training_tokens_per_s("llama-3.1-70b", "tpu-v5p", g["mb"], 4096)),
        "×", f"accelbook.economics.cost.training_tokens_per_s; {_MFU}"),
    Problem(
        "exam-nb01-claim-implied-size", "01", "exam",
        "Article 1's table gives an H100 ({Pa:,.1f} TFLOP/s dense bf16) {ta:,} training tokens/s at {pa:.0f} % MFU, and a "
        "TPU v5p ({Pb:,.0f} TFLOP/s) {tb:,} tokens/s at {pb:.0f} % MFU. With C ≈ 6N FLOP per token, what model size N "
        "does each row imply, and by what factor do they differ? Can both rows describe the same run?",
        _claim, _claim_steps, lambda g: _implied(g, "a") / _implied(g, "b"), _claim_model,
        "×", f"accelbook.economics.cost.implied_params; {_MFU}"),
    Problem(
        "exam-nb01-decode-ratio-v5p-h100", "01", "exam",
        "Llama 3.1 70B decodes at batch {T} with {s:,} tokens of context. An H100 has {Ph:,.1f} TFLOP/s and {Bh:.2f} "
        "TB/s; a TPU v5p {Pv:,.0f} TFLOP/s and {Bv:.3f} TB/s. At batch {T} every operation of a layer sits far left of "
        "both ridges. How many times longer does one layer take on the v5p? Why is the ratio of peaks the wrong guess?",
        _bw_pair,
        lambda g: ["memory-bound everywhere: t = bytes ÷ B, and the layer moves the same bytes on both chips",
                   f"ratio = B_H100 ÷ B_v5p = {fmt(g['Bh'])} ÷ {fmt(g['Bv'])} = {fmt(g['Bh'] / g['Bv'])}",
                   f"the ratio of peaks, {fmt(g['Ph'])} ÷ {fmt(g['Pv'])} = {fmt(g['Ph'] / g['Pv'])}, belongs to a bound "
                   "that does not hold here"],
        lambda g: g["Bh"] / g["Bv"], _decode_ratio_model, "×", _ROOFLINE),
    Problem(
        "exam-nb01-ffn-down-b512", "01", "exam",
        "At a decode batch of T = {T}, the FFN down-projection of Llama 3.1 70B multiplies T tokens by a {k:,} × {n:,} "
        "bf16 weight ({b} bytes an element), reading the weight and inputs and writing the outputs once. On an H100 "
        "({P:,.1f} TFLOP/s, {B:.2f} TB/s), which bound holds, and what is the lower-bound time?",
        _ffn_down(512), _gemm_steps, _gemm_t_us, lambda g: _row("h100", g["T"])["t_s"] * 1e6, "µs", _ROOFLINE),
]
