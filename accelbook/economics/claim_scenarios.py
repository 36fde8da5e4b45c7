"""Check functions of the claims ledger that run a scenario: MoE traffic, chip design, fleets,
migrations, prices, and the claims no model here can test.

Same contract as :mod:`accelbook.economics.claim_checks`: each takes a claim's ``params`` and returns
``(model_says, verdict, reason, numbers)``. Where a check rests on an estimate (a what-if constant,
an assumed price), its reason says which.
"""

from __future__ import annotations

import functools
import math

from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip

from .cost import peak_flop_per_usd

#: why a claim lies outside what any model of the workbook can test, by kind
OUT_OF_SCOPE = {
    "history": "It is a claim about a product's history or motives; no catalogue figure or model tests it.",
    "business": "It is about vendors, contracts and where a product can be bought or rented, not about hardware "
                "performance or cost; no model here tests it.",
    "software": "It is about compilers, frameworks and tooling; the models here cover hardware, not software maturity.",
    "unpublished": "The product has no published specification to put in the catalogue, so nothing can be computed.",
}


def out_of_scope(kind, note=""):
    """A claim no model here can test (``kind`` a key of :data:`OUT_OF_SCOPE`), with what the
    catalogue does say beside it (``note``)."""
    if kind not in OUT_OF_SCOPE:
        raise ValueError(f"unknown kind {kind!r}; have {sorted(OUT_OF_SCOPE)}")
    return (note or "Nothing to compute."), "out of scope", OUT_OF_SCOPE[kind], {}


def vendor_factor(chip, claimed, vendor_factor, vendor_metric, other_factor=None, other_metric=""):
    """A claimed improvement factor against the vendor's own published one. The catalogue's TDP is
    read first: without it no model computes performance per watt, and the vendor's figure decides."""
    c = get_chip(chip)
    says = (f"{c.name}: the catalogue has no TDP, so the model cannot compute performance per watt."
            if c.tdp_w is None else f"{c.name}: TDP {c.tdp_w:.0f} W in the catalogue.")
    nums = {"claimed": float(claimed), "vendor": float(vendor_factor)}
    if vendor_factor >= claimed:
        return says, "supported", f"The vendor itself claims {vendor_factor:g}x {vendor_metric}.", nums
    other = (f" The {other_factor:g}x the vendor does publish is {other_metric}." if other_factor else "")
    return says, "not supported", (f"The vendor's own figure is {vendor_factor:g}x {vendor_metric}, not "
                                   f"{claimed:g}x.{other}"), nums


def published_stacks(claimed_8t, claimed_8i):
    """HBM stacks of TPU 8t and 8i as the chip-design catalogue has them (``chip.design.compare_8t_8i``'s
    published rows, from Google's deep dive) against the claimed counts."""
    from accelbook.chip import design as cd

    df = cd.compare_8t_8i().set_index("design")
    t = int(df.loc["TPU 8t (published)", "n_hbm_stacks"])
    i = int(df.loc["TPU 8i (published)", "n_hbm_stacks"])
    t_gib, i_gib = get_chip("tpu-8t").hbm_bytes / 2**30, get_chip("tpu-8i").hbm_bytes / 2**30
    says = (f"Catalogue: TPU 8t {t} stacks ({t_gib:.0f} GiB, {t_gib / t:.0f} per stack), TPU 8i {i} stacks "
            f"({i_gib:.0f} GiB, {i_gib / i:.0f} per stack).")
    nums = {"stacks_8t": float(t), "stacks_8i": float(i)}
    if (t, i) == (claimed_8t, claimed_8i):
        return says, "supported", "Google's deep dive gives the same counts, and the capacities agree with them.", nums
    return says, "not supported", f"The catalogue has {t} and {i} stacks, not {claimed_8t} and {claimed_8i}.", nums


def moe_spread(chip_counts, n_experts, top_k, bytes_per_token=7168):
    """Experts spread over more chips (uniform routing, ``moe.uniform_demand``): the expert compute
    per chip falls as 1/chips while the copies each token sends off its chip rise. Supported when
    the off-chip copies grow with every step in ``chip_counts``."""
    from accelbook import moe

    copies = []
    for c in chip_counts:
        d = moe.uniform_demand(c, 1.0, top_k, bytes_per_token, experts_per_chip=n_experts / c)
        copies.append(float(d.sum() / (c * bytes_per_token)))
    says = (f"{n_experts} experts, top-{top_k}: copies a token sends off its chip "
            + ", ".join(f"{c:,} chips {x:.2f}" for c, x in zip(chip_counts, copies))
            + "; expert compute per chip falls as 1/chips.")
    nums = {f"copies_{c}": x for c, x in zip(chip_counts, copies)}
    if all(b > a for a, b in zip(copies, copies[1:])):
        return says, "supported", (f"From {chip_counts[0]:,} to {chip_counts[-1]:,} chips each token's off-chip copies "
                                   f"grow from {copies[0]:.2f} to {copies[-1]:.2f} while the compute per chip shrinks."), nums
    return says, "not supported", "The off-chip traffic does not grow as the experts spread.", nums


@functools.cache
def _crossover(cae, tokens, top_k, bytes_per_token, chip_bw):
    from accelbook import moe
    from accelbook.network import topology as tp

    nets = {"torus": moe.equal_injection(tp.torus((8, 8, 16)), chip_bw),
            "boardfly": moe.equal_injection(tp.boardfly(), chip_bw)}
    s = moe.crossover_sweep(nets, list(tokens), top_k, bytes_per_token, cae=cae)
    return {(r.network, r.tokens_per_chip): r.time_s for r in s.itertuples()}


def low_diameter_decode(small_tokens, large_tokens, top_k=8, bytes_per_token=7168, chip_bw=600e9):
    """MoE all-to-all on a 1,024-chip 3D torus against the BoardFly-like network, at a decode-size and
    a training-size load (``moe.crossover_sweep``, same bandwidth per chip): supported when the
    low-diameter network gains at the small load and gains less (or loses) at the large one."""
    t = _crossover(False, (small_tokens, large_tokens), top_k, bytes_per_token, chip_bw)
    g_small = t[("torus", small_tokens)] / t[("boardfly", small_tokens)]
    g_large = t[("torus", large_tokens)] / t[("boardfly", large_tokens)]
    says = (f"BoardFly-like over 8x8x16 torus, all-to-all speed ratio: {g_small:.2f}x at {small_tokens:g} token(s) "
            f"per chip, {g_large:.2f}x at {large_tokens:g} (2 us per message, an estimate).")
    nums = {"gain_small": g_small, "gain_large": g_large}
    if g_small > 1 and g_small > g_large:
        return says, "supported", ("Few hops matter when the step is short (decode); at training-size loads the "
                                   "busiest link decides and the gain shrinks or reverses. The per-message overhead "
                                   "and BoardFly's wiring are estimates."), nums
    return says, "not supported", "The low-diameter network does not gain more at decode-size loads.", nums


def cae_gain(tokens=1, top_k=8, bytes_per_token=7168, chip_bw=600e9):
    """What a collective engine buys an MoE all-to-all on the BoardFly-like network at a decode-size
    load (``moe.crossover_sweep`` with and without ``cae``): both per-message overheads are estimates,
    so at most "cannot tell"."""
    from accelbook.moe import CAE_OVERHEAD_S, MESSAGE_OVERHEAD_S

    plain = _crossover(False, (tokens,), top_k, bytes_per_token, chip_bw)[("boardfly", tokens)]
    cae = _crossover(True, (tokens,), top_k, bytes_per_token, chip_bw)[("boardfly", tokens)]
    says = (f"BoardFly-like, {tokens:g} token(s) per chip: {plain * 1e6:.1f} us without the engine, {cae * 1e6:.1f} us with "
            f"it ({plain / cae:.1f}x), at {MESSAGE_OVERHEAD_S * 1e6:g} vs {CAE_OVERHEAD_S * 1e6:g} us per message.")
    return says, "cannot tell", ("The gain comes entirely from the per-message overheads, and nothing published gives "
                                 "either: the direction is plausible, the size unknown."), {"gain": plain / cae}


def split_chips(min_loss=0.05, power_w=None):
    """One die for training and decode against two specialists (``chip.design.compare_8t_8i``): the
    best compromise's loss on each workload. Supported when it loses at least ``min_loss`` on one."""
    from accelbook.chip import design as cd

    df = cd.compare_8t_8i(power_w=power_w).set_index("design")
    row = df.loc["compromise"]
    lt, ld = 1 - float(row["training_vs_best"]), 1 - float(row["decode_vs_best"])
    tr = df.loc["training optimum (8t-like)"]
    says = (f"Best single die: {lt:.1%} below the training specialist, {ld:.1%} below the decode specialist; the "
            f"training optimum decodes at {tr['decode_vs_best']:.0%} of the decode optimum.")
    nums = {"training_loss": lt, "decode_loss": ld}
    if max(lt, ld) >= min_loss:
        return says, "supported", (f"A die for both leaves area idle on each job: {max(lt, ld):.1%} lost on the worse one, "
                                   "a real but modest price that grows with the power budget (the die model's constants "
                                   "are estimates, data/chipdesign.toml)."), nums
    return says, "not supported", f"The compromise loses under {min_loss:.0%} on both workloads.", nums


@catalogue_cache(maxsize=None)
def _fleet():
    from . import fleet

    ws, ps = fleet.example_fleet()
    rates = fleet.default_rates(ws, ps)
    best = fleet.place(ws, ps, rates)
    gpu_only = fleet.place(ws, ps, rates, {(w.name, p.name) for w in ws for p in ps if p.name.startswith("GPU")})
    return best, gpu_only


def fleet_placement(expect, min_saving=0.0):
    """The least-cost placement of the example fleet (``economics.fleet``, list prices, an LPU price
    estimate): supported when each workload in ``expect`` (name -> pool prefix) runs mostly on that
    pool and the mix saves at least ``min_saving`` against all-on-GPUs."""
    best, gpu_only = _fleet()
    h = best.hours
    where = {w: h.loc[w].idxmax() for w in h.index}
    saving = 1 - best.usd_per_month / gpu_only.usd_per_month
    says = ("Least-cost fleet: " + "; ".join(f"{w} on {p}" for w, p in where.items())
            + f"; USD {best.usd_per_month / 1e6:.2f}M a month, {saving:.0%} less than all on GPUs.")
    nums = {"saving": saving}
    wrong = [w for w, p in expect.items() if not where[w].startswith(p)]
    if not wrong and saving >= min_saving:
        return says, "supported", ("At list prices the cheapest placement matches the claim. Prices and the LPU's "
                                   "price are inputs; the fleet dashboard moves them."), nums
    return says, "not supported", (f"The cheapest placement differs for {', '.join(wrong)}." if wrong else
                                   f"The mix saves only {saving:.0%}."), nums


def migration_sensitivity(base, vary, good, bad):
    """The migration calculator (``economics.migration``) at one input's favourable and unfavourable
    value (``base`` the other inputs): supported when the favourable one pays back within the horizon
    and the unfavourable one pays back later or never."""
    from dataclasses import replace

    from .migration import Migration, payback_months

    m = Migration(**base)
    pg, pb = payback_months(replace(m, **{vary: good})), payback_months(replace(m, **{vary: bad}))
    fmt = lambda p: "never (within the horizon)" if math.isinf(p) else f"{p:.0f} months"  # noqa: E731
    says = (f"Payback with {vary} = {good:g}: {fmt(pg)}; with {vary} = {bad:g}: {fmt(pb)} (port USD "
            f"{m.port_cost_usd:,.0f}, horizon {m.horizon_months} months).")
    nums = {"payback_good": pg if math.isfinite(pg) else -1.0, "payback_bad": pb if math.isfinite(pb) else -1.0}
    if math.isfinite(pg) and pb > pg:
        return says, "supported", (f"The same port pays back at the favourable {vary} and "
                                   f"{'never' if math.isinf(pb) else 'later'} at the unfavourable one. The scenario's "
                                   "costs are the migration dashboard's defaults, not published figures."), nums
    return says, "not supported", f"Changing {vary} does not change the answer as claimed.", nums


def cost_reduction(chip_a, chip_b, claimed, mfu_a, mfu_b):
    """Cost per useful FLOP of ``chip_a`` against ``chip_b`` at list prices, at equal MFU and at the
    article's MFUs, against a claimed reduction (a share). List prices are all the catalogue has;
    negotiated prices and owned hardware are not published, so at most "cannot tell"."""
    a, b = get_chip(chip_a), get_chip(chip_b)
    equal = 1 - peak_flop_per_usd(b) / peak_flop_per_usd(a)
    at_mfu = 1 - peak_flop_per_usd(b) * mfu_b / (peak_flop_per_usd(a) * mfu_a)
    says = (f"Cost per useful FLOP, {a.name} against {b.name} at list prices: {equal:.0%} lower at equal MFU, "
            f"{at_mfu:.0%} lower at {mfu_a:.0%} vs {mfu_b:.0%} MFU (claimed: over {claimed:.0%}).")
    nums = {"reduction_equal_mfu": equal, "reduction_at_mfu": at_mfu}
    if at_mfu >= claimed:
        return says, "cannot tell", "List prices reach the claim, but the claim is about negotiated costs.", nums
    return says, "cannot tell", (f"List prices give {at_mfu:.0%}, short of {claimed:.0%}; reaching it needs a discount on "
                                 "one chip and not the other, and no such contract price is published."), nums


def mfu_gap(chip_a, chip_b):
    """What the model puts behind a TPU's higher MFU: the measured GEMM efficiency of each chip
    (``specs.efficiency.measured_efficiency``). The claimed cause (deterministic execution) is not a
    term of any model, so at most "cannot tell"."""
    from accelbook.specs.efficiency import measured_efficiency

    ea, eb = measured_efficiency(chip_a)[0].fraction, measured_efficiency(chip_b)[0].fraction
    says = (f"Measured large-GEMM efficiency: {get_chip(chip_a).name} {ea:.0%}, {get_chip(chip_b).name} {eb:.0%} "
            "(the model's source of a TPU's MFU edge, notebook 04).")
    return says, "cannot tell", ("The model reproduces a higher TPU MFU from measured matrix-unit efficiency and layout, "
                                 "but the MFUs of NVIDIA and Google reports count FLOPs differently, and whether "
                                 "deterministic execution is the cause is not something a measurement here "
                                 "isolates."), {"gemm_eff_a": ea, "gemm_eff_b": eb}


def serving_cost(model, chip, others, n_chips=8, tpot_s=0.02, precision="fp8"):
    """USD per million output tokens at a per-token latency target (``inference.max_throughput``, list
    prices) of ``chip`` against ``others``: supported when ``chip`` is the cheapest."""
    from accelbook import inference as inf

    cost = {}
    for c in (chip, *others):
        cost[c] = inf.max_throughput(model, c, n_chips, 1024, 256, precision, tpot_target_s=tpot_s).usd_per_million_tokens
    says = (f"{model} on {n_chips} chips at {tpot_s * 1e3:.0f} ms per token, USD per million tokens at list price: "
            + ", ".join(f"{get_chip(c).name} {v:.2f}" for c, v in cost.items()) + ".")
    nums = {f"usd_{c}": v for c, v in cost.items()}
    if all(cost[chip] < v for c, v in cost.items() if c != chip):
        return says, "supported", f"{get_chip(chip).name} is the cheapest per token here, at on-demand list prices.", nums
    return says, "not supported", f"{get_chip(chip).name} is not the cheapest per token here.", nums
