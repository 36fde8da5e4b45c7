"""The golden grid inside one chip (roofline, tiling, systolic, chip design) and of the economics
(cost, TCO, migration, fleet). Keys as in :mod:`golden_models`."""

from __future__ import annotations

import dataclasses

from golden_encode import Entries, args_key

import accelbook as ab
from accelbook.chip import design as cd
from accelbook.chip import roofline, systolic, tiling
from accelbook.economics import cost, fleet, migration, tco

#: (model, chip, phase, batch, seq_len, precision)
ROOFLINES = [("llama-3.1-70b", "h100", "decode", 1, 4096, "bf16"),
             ("llama-3.1-70b", "tpu-v5p", "prefill", 4, 8192, "bf16"),
             ("llama-3.1-70b", "h200", "training", 8, 4096, "fp8"),
             ("deepseek-v3", "b200", "decode", 32, 4096, "fp8"),
             ("llama-3.1-8b", "groq-lpu-v1", "decode", 1, 2048, "fp16")]
GEMMS = [(2048, 2048, 2048), (2304, 2304, 2304), (1, 4096, 4096), (4000, 3000, 100)]
#: (M, N, K, rows, cols)
SYSTOLIC = [(8, 8, 8, 8, 8), (64, 48, 40, 16, 16), (100, 37, 53, 8, 32), (1, 128, 256, 32, 32)]
MIGRATIONS = [dict(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=100_000.0),
              dict(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.5, volume_m_tokens_per_month=5_000.0,
                   growth_per_month=0.05, churn_per_month=0.1, horizon_months=24),
              dict(usd_per_m_tokens_old=1.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=100_000.0)]


def section_chip(g: Entries) -> None:
    for args in ROOFLINES:
        g.call(args_key("roofline.layer_roofline", *args), lambda a=args: roofline.layer_roofline(*a))
        g.call(args_key("roofline.layer_limit", *args), lambda a=args: roofline.layer_limit(*a))
    for c, p in (("h100", "bf16"), ("b200", "fp8")):
        g.call(args_key("roofline.roofline_curve", c, p, n=16), lambda c=c, p=p: roofline.roofline_curve(c, p, n=16))
    g.call(args_key("roofline.time_bounds", [1e12, 1e9], [1e9, 1e9], 989e12, 3.35e12),
           lambda: roofline.time_bounds([1e12, 1e9], [1e9, 1e9], 989e12, 3.35e12))
    for args in GEMMS:
        g.call(args_key("tiling.gpu_gemm", *args), lambda a=args: tiling.gpu_gemm(*a))
        g.call(args_key("tiling.gpu_gemm", *args, sms=148, tile_m=256), lambda a=args: tiling.gpu_gemm(*a, sms=148, tile_m=256))
        g.call(args_key("tiling.tpu_gemm", *args), lambda a=args: tiling.tpu_gemm(*a))
        g.call(args_key("tiling.tpu_gemm", *args, mxu=256, n_mxu=2), lambda a=args: tiling.tpu_gemm(*a, 256, 2))
    g.call(args_key("tiling.shape_sweep", "M", [1, 128, 129, 1000], 2048, 2048, 2048),
           lambda: tiling.shape_sweep("M", [1, 128, 129, 1000], 2048, 2048, 2048))
    for args in SYSTOLIC:
        for df in ("os", "ws", "is"):
            g.call(args_key("systolic.simulate", *args, df), lambda a=args, df=df: systolic.simulate(*a, df))
            g.call(args_key("systolic.closed_form", *args, df), lambda a=args, df=df: systolic.closed_form(*a, df))
    g.call(args_key("systolic.pe_states", 6, 6, 6, 4, 4, "ws", 3), lambda: systolic.pe_states(6, 6, 6, 4, 4, "ws", 3))


def _design_numbers(d) -> dict:
    out = {f.name: getattr(d, f.name) for f in dataclasses.fields(d) if f.name != "params"}
    out.update(fits=d.fits, why_not=d.why_not)
    return out


def section_chip_design(g: Entries) -> None:
    designs = {"h100_like()": cd.h100_like()}
    for args in ((400.0, 50.0, 5, 40.0), (300.0, 200.0, 6, 40.0), (200.0, 400.0, 4, 40.0)):
        key = args_key("chip_design.design", *args)
        designs[key] = g.call(key, lambda a=args: cd.design(*a), post=_design_numbers)
    g.put("chip_design.h100_like()", _design_numbers(designs["h100_like()"]))
    workloads = {"TrainingWorkload()": cd.TrainingWorkload(), "DecodeWorkload()": cd.DecodeWorkload(),
                 "DecodeWorkload(batch_size=8,context_len=2048)": cd.DecodeWorkload(batch_size=8, context_len=2048)}
    for wk, w in workloads.items():
        g.call(args_key("chip_design.need", wk), lambda w=w: cd.need(w))
        for dk, d in designs.items():
            g.call(f"chip_design.evaluate[<{dk}>,{wk}]", lambda d=d, w=w: cd.evaluate(d, w))
        g.call(args_key("chip_design.best_design", wk, grid_mm2=40.0),
               lambda w=w: cd.best_design(w, grid_mm2=40.0),
               post=lambda r: {"design": _design_numbers(r[0]), "table_head": r[1].head(10), "table_rows": len(r[1])})
    g.call(args_key("chip_design.compare_8t_8i"), cd.compare_8t_8i)


def section_economics(g: Entries) -> None:
    for m, c, mfu in (("llama-3.1-70b", "h100", 0.4), ("llama-3.1-405b", "tpu-v5p", 0.5)):
        model, chip = ab.get_model(m), ab.get_chip(c)
        rate = g.call(args_key("cost.training_tokens_per_s", m, c, mfu), lambda: cost.training_tokens_per_s(model, chip, mfu))
        g.call(args_key("cost.implied_mfu", "half that rate", m, c), lambda: cost.implied_mfu(rate / 2, model, chip))
        g.call(args_key("cost.usd_per_token", 900.0, c), lambda: cost.usd_per_token(900.0, chip))
        g.call(args_key("cost.peak_flop_per_usd", c), lambda: cost.peak_flop_per_usd(chip))
    chips = [ab.get_chip(c) for c in ("a100", "h100", "b200", "tpu-v5p", "tpu-v6e", "groq-lpu-v1")]
    g.call(args_key("cost.training_cost_table", "llama-3.1-70b", "a100,h100,b200,tpu-v5p,tpu-v6e,groq-lpu-v1", mfu=0.4),
           lambda: cost.training_cost_table(ab.get_model("llama-3.1-70b"), chips, mfu=0.4))
    for args, kw in (((35000, 700), {}), ((12000, 350), dict(utilisation=0.6, pue=1.4, lifetime_years=6.0))):
        g.call(args_key("tco.own_cost_per_hour", *args, **kw), lambda a=args, k=kw: tco.own_cost_per_hour(*a, **k))
    for args, kw in ((("h100", 900.0), {}), (("tpu-v5p", 1200.0), dict(utilisation=0.4, pue=1.5))):
        g.call(args_key("tco.rent_or_own", *args, **kw), lambda a=args, k=kw: tco.rent_or_own(*a, **k))
    base = dict(purchase_usd=35000.0, tdp_w=700.0, utilisation=0.7, pue=1.2, lifetime_years=4.0)
    ranges = {"purchase_usd": (25000.0, 45000.0), "utilisation": (0.4, 0.95), "pue": (1.1, 1.6)}
    g.call(args_key("tco.tornado", "own_cost_per_hour.usd_per_hour", **base),
           lambda: tco.tornado(lambda **k: tco.own_cost_per_hour(**k)["usd_per_hour"], base, ranges))
    for kw in MIGRATIONS:
        key = args_key("migration.Migration", **kw)
        m = migration.Migration(**kw)
        g.put(key + ".port_cost_usd", m.port_cost_usd)
        for name in ("cash_flow", "payback_months", "break_even_volume", "verdict"):
            g.call(f"migration.{name}[{key}]", lambda m=m, n=name: getattr(migration, n)(m))
    for label, (ws, ps) in (("example_fleet()", fleet.example_fleet()),
                            ("example_fleet(300.0,0.5)", fleet.example_fleet(300.0, 0.5))):
        rates = g.call(f"fleet.default_rates[{label}]", lambda ws=ws, ps=ps: fleet.default_rates(ws, ps))
        g.call(f"fleet.place[{label}]", lambda ws=ws, ps=ps: fleet.place(ws, ps, rates))
        g.call(f"fleet.compare_strategies[{label}]", lambda ws=ws, ps=ps: fleet.compare_strategies(ws, ps, rates))
