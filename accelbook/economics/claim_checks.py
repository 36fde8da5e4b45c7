"""Check functions of the claims ledger that read the catalogue and the hardware models.

Each function takes a claim's own numbers (the ``params`` of its entry in ``data/claims.toml``) and
returns ``(model_says, verdict, reason, numbers)``, like those of :mod:`accelbook.economics.claims`.
Two rules run through them:

- a figure the catalogue takes from the same report as the claim, or derives from the claim's own
  totals (a ``derived`` source), can only show that the claim is *consistent*: such a check says so and
  answers "cannot tell", never "supported";
- a figure that rests on an ``estimate`` (a model constant nobody has published) cannot support or
  refute a claim on its own either.
"""

from __future__ import annotations

import math

from accelbook.checks import at_most, flag, fraction, one_of, positive, real, whole
from accelbook.specs.chips import get_chip

#: catalogue quantities a check can name: name -> (how to read it from a chip, provenance key, unit family, words)
QUANTITIES = {
    "peak_bf16": (lambda c: c.peak_flop_s("bf16"), "peak_dense_bf16", "flop", "dense bf16 peak"),
    "peak_fp8": (lambda c: c.peak_flop_s("fp8"), "peak_dense_fp8", "flop", "dense FP8 peak"),
    "peak_fp4": (lambda c: c.peak_flop_s("fp4"), "peak_dense_fp4", "flop", "FP4 peak"),
    "hbm_bytes": (lambda c: c.hbm_bytes, "hbm_bytes", "bytes", "HBM"),
    "hbm_bw": (lambda c: c.hbm_bw_bytes_per_s, "hbm_bw_bytes_per_s", "bw", "HBM bandwidth"),
    "sram_bytes": (lambda c: c.sram_bytes, "sram_bytes", "bytes", "SRAM"),
    "sram_bw": (lambda c: c.sram_bw_bytes_per_s, "sram_bw_bytes_per_s", "bw", "SRAM bandwidth"),
    "scale_up_chips": (lambda c: c.scale_up_chips, "scale_up_chips", "count", "chips per pod"),
}
_UNITS = {"flop": ((1e18, "EFLOP/s"), (1e15, "PFLOP/s"), (1e12, "TFLOP/s")),
          "bytes": ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB")),
          "bw": ((1e15, "PB/s"), (1e12, "TB/s"), (1e9, "GB/s")), "count": ((1.0, "chips"),)}
#: the most chips :func:`torus_diameter` searches the shapes of (its search is O(n_chips))
MAX_TORUS_CHIPS = 2**20
#: source kinds that count as independent evidence for a figure
INDEPENDENT_KINDS = ("primary", "secondary")


def quantity(chip_id: str, name: str) -> tuple[float, str, str]:
    """One catalogue figure of a chip: (SI value, source id, source kind). ``name`` is a key of
    :data:`QUANTITIES`; a figure the catalogue lacks raises ``ValueError``."""
    if name not in QUANTITIES:
        raise ValueError(f"unknown quantity {name!r}; have {sorted(QUANTITIES)}")
    c = get_chip(chip_id)
    read, key, _, _ = QUANTITIES[name]
    try:
        v = read(c)
    except (KeyError, ValueError):
        v = None
    if v is None:
        raise ValueError(f"{c.name} has no {name} in the catalogue")
    prov = c.provenance.get(key)
    return float(v), (prov.source.id if prov else "?"), (prov.kind if prov else "?")


def _fmt(name: str, v: float) -> str:
    """A figure in the largest unit of its family that keeps it at 1 or more: 2.074 PB, 121 EFLOP/s."""
    ladder = _UNITS[QUANTITIES[name][2]]
    scale, unit = next(((s, u) for s, u in ladder if abs(v) >= s), ladder[-1])
    return f"{v / scale:,.4g} {unit}"


def _memory_reading(name: str, printed: float, total: float) -> float:
    """A claimed memory size in bytes, read in the unit it matches: memory is binary whoever prints it, so
    "2 PB" may mean 2 PiB. The reading (decimal, or 1024^k for 1000^k) nearer the catalogue's total is kept;
    other quantities are returned as printed."""
    if not name.endswith("_bytes") or printed <= 0:
        return printed
    k = int(math.log(printed, 1000) + 1e-9)
    binary = printed * (1024 / 1000) ** k
    return binary if abs(math.log(binary / total)) < abs(math.log(printed / total)) else printed


def system_totals(chip, n_chips, claimed, rack=None, rel_tol=0.05, check_n=False):
    """n chips' catalogue figures against a claimed system total (``claimed``: quantity -> SI value).
    ``check_n``: the claimed chip count must also be the catalogue's ``scale_up_chips`` (one pod).

    Supported when every total is within ``rel_tol`` and each per-chip figure comes from a source that
    is independent (primary or secondary, and not the source the catalogue gives for the ``rack``
    entry's own total); consistent but dependent figures give "cannot tell"; a miss, "not supported".
    """
    n_chips, rel_tol, check_n = whole("n_chips", n_chips), fraction("rel_tol", rel_tol), flag("check_n", check_n)
    if not isinstance(claimed, dict) or not claimed:
        raise TypeError(f"claimed must be a table of quantity -> claimed total, got {claimed!r}"[:200])
    for name, value in claimed.items():
        one_of("claimed quantity", name, QUANTITIES)
        positive(f"claimed[{name!r}]", value)
    says, nums, misses, dependent = [], {}, [], []
    if check_n:
        n_cat, n_src, n_kind = quantity(chip, "scale_up_chips")
        nums["catalogue_chips"] = n_cat
        says.append(f"{get_chip(chip).name}: {n_cat:,.0f} chips per pod ({n_src})")
        if n_cat != n_chips:
            misses.append("chip count")
        if n_kind not in INDEPENDENT_KINDS:
            dependent.append(f"chip count ({n_src}, a {n_kind} figure)")
    for name, value in claimed.items():
        v, src, kind = quantity(chip, name)
        total = n_chips * v
        printed, value = float(value), _memory_reading(name, float(value), total)
        nums[f"total_{name}"] = total
        nums[f"claimed_{name}"] = value
        read = f", read as binary: {_fmt(name, value)}" if value != printed else ""
        says.append(f"{QUANTITIES[name][3]}: {n_chips:,} x {_fmt(name, v)} = {_fmt(name, total)} (claimed "
                    f"{_fmt(name, printed)}{read}; per chip from {src})")
        if abs(total / value - 1) > rel_tol:
            misses.append(name)
        rack_src = quantity(rack, name)[1] if rack is not None else None
        if kind not in INDEPENDENT_KINDS or src == rack_src:
            dependent.append(f"{name} ({src}" + (", the same report as the rack total)" if src == rack_src else
                                                  f", a {kind} figure)"))
    text = "; ".join(says) + "."
    if misses:
        return text, "not supported", (f"The catalogue's per-chip figures do not add up to the claimed "
                                       f"{', '.join(misses)} (beyond {rel_tol:.0%})."), nums
    if dependent:
        return text, "cannot tell", ("A consistency check only: the per-chip figures come from the same reports as "
                                     "the totals (or are derived from them), so their sum cannot confirm the claim: "
                                     + "; ".join(dependent) + ". No independent or measured figure was found."), nums
    return text, "supported", (f"Independent per-chip figures reproduce every total within {rel_tol:.0%}."), nums


def ratio_within(a, b, low, high=math.inf):
    """The ratio of two catalogue figures, ``a`` over ``b``, against a claimed range [low, high].

    ``a`` and ``b`` are tables {chip, quantity, n (default 1), per (optional: a second quantity of the
    same chip to divide by)}. Supported inside the range when every figure comes from a primary or
    secondary source; outside it, not supported; inside it on a derived or estimated figure, cannot tell.
    """
    low, high = real("low", low), real("high", high, allow_inf=True)
    if low > high:
        raise ValueError(f"low ({low:g}) must be at most high ({high:g})")
    for name, side in (("a", a), ("b", b)):
        if not isinstance(side, dict) or "chip" not in side or "quantity" not in side:
            raise TypeError(f"{name} must be a table {{chip, quantity, n, per}}, got {side!r}"[:200])
        one_of(f"{name}.quantity", side["quantity"], QUANTITIES)
        positive(f"{name}.n", side.get("n", 1))
    vals, parts, weak = [], [], []
    for side in (a, b):
        v, src, kind = quantity(side["chip"], side["quantity"])
        n = side.get("n", 1)
        words = QUANTITIES[side["quantity"]][3]
        text = (f"{n:,} x " if n != 1 else "") + f"{get_chip(side['chip']).name}, {words} {_fmt(side['quantity'], v)} ({src})"
        if kind not in INDEPENDENT_KINDS:
            weak.append(src)
        if "per" in side:
            d, dsrc, dkind = quantity(side["chip"], side["per"])
            v = v / d
            text += f" per {QUANTITIES[side['per']][3]} of {_fmt(side['per'], d)} ({dsrc})"
            if dkind not in INDEPENDENT_KINDS:
                weak.append(dsrc)
        vals.append(n * v)
        parts.append(text)
    r = vals[0] / vals[1]
    rng = f"{low:g}-{high:g}" if math.isfinite(high) else f"at least {low:g}"
    says = f"{parts[0]} over {parts[1]}: ratio {r:.3g} (claimed {rng})."
    nums = {"ratio": r}
    if not low <= r <= high:
        return says, "not supported", f"The catalogue's ratio, {r:.3g}, falls outside the claimed {rng}.", nums
    if weak:
        return says, "cannot tell", (f"The ratio lands in the claimed range, but it rests on {', '.join(sorted(set(weak)))}, "
                                     "not on a published figure."), nums
    return says, "supported", f"Published figures give {r:.3g}, inside the claimed {rng}.", nums


def torus_diameter(n_chips, claimed_hops, dims=3):
    """The smallest diameter of any ``dims``-dimensional torus of ``n_chips`` chips (every shape
    a × b × c = n with wraparound), against a claimed hop count."""
    from accelbook.network.geometry import torus_diameter as diameter

    n_chips = at_most("n_chips", whole("n_chips", n_chips), MAX_TORUS_CHIPS,
                      "accelbook.economics.claim_checks.MAX_TORUS_CHIPS")
    whole("claimed_hops", claimed_hops, 0), one_of("dims", dims, (3,))
    best, shape = math.inf, None
    for x in range(1, n_chips + 1):
        if n_chips % x:
            continue
        for y in range(x, n_chips // x + 1):
            if (n_chips // x) % y:
                continue
            z = n_chips // x // y
            if z < y or dims != 3:
                continue
            d = diameter((x, y, z))
            if d < best:
                best, shape = d, (x, y, z)
    says = (f"The most compact 3D torus of {n_chips:,} chips, {'x'.join(map(str, shape))}, has a diameter of "
            f"{best} hops (half of each ring, summed).")
    nums = {"diameter": float(best)}
    if best == claimed_hops:
        return says, "supported", f"The geometry gives {best} hops, the claimed figure.", nums
    return says, "not supported", f"The geometry gives {best} hops, not {claimed_hops}.", nums


def reconstructed_diameter(claimed_max_hops, groups=36, boards_per_group=8, chips_per_board=4):
    """The diameter of the workbook's reconstruction of a network whose wiring is not public
    (``accelbook.network.topology.boardfly``) against a claimed maximum: at most "cannot tell"."""
    from accelbook.network import topology as tp

    whole("claimed_max_hops", claimed_max_hops, 0)
    t = tp.boardfly(groups, boards_per_group, chips_per_board)
    d = int(tp.hop_stats(t)["diameter"])
    says = (f"Our BoardFly-like reconstruction ({groups} groups x {boards_per_group} boards x {chips_per_board} chips = "
            f"{t.n_endpoints:,} chips) has a diameter of {d} hops.")
    nums = {"diameter": float(d), "chips": float(t.n_endpoints)}
    if d <= claimed_max_hops:
        why = f"a network of this size can reach {claimed_max_hops} or fewer hops, so the claim is plausible"
    else:
        why = f"our guess needs more than {claimed_max_hops} hops, which says nothing about Google's design"
    return says, "cannot tell", (f"The wiring is not public, so the exact figure cannot be checked: {why}. The figure "
                                 "is Google's own, which the article repeats; nobody else has measured it."), nums


def weak_scaling(slice_edges, message_bytes=2**30, small_bytes=2**20, min_pace=0.9, gpu_nodes=(1, 8, 512)):
    """Weak scaling of a gradient all-reduce on TPU v5p slices (k x k x k, OCS-joined cubes) from the
    smallest to the largest edge: the pace on the largest as a share of the smallest's. Supported when
    the bandwidth-bound pace (``message_bytes`` per chip) stays at least ``min_pace``; the small-message
    pace and an H100 cluster on InfiniBand rails are reported beside it."""
    from accelbook.network import topology as tp
    from accelbook.network.collectives import estimate

    def pace(systems, size):
        times = [estimate("all_reduce", size, t).time_s for t in systems]
        return times[0] / times[-1], systems[0].n_endpoints, systems[-1].n_endpoints

    tpu = [tp.tpu_slice("v5p", (k, k, k)) for k in slice_edges]
    big, n0, n1 = pace(tpu, message_bytes)
    small, _, _ = pace(tpu, small_bytes)
    gpu = [tp.h100_cluster(n) for n in gpu_nodes]
    g_first, g0, g1 = pace(gpu[:2], message_bytes)
    g_rest = estimate("all_reduce", message_bytes, gpu[1]).time_s / estimate("all_reduce", message_bytes, gpu[-1]).time_s
    says = (f"All-reduce pace from {n0:,} to {n1:,} v5p chips (same bytes per chip): {big:.0%} at "
            f"{message_bytes / 2**20:,.0f} MiB, {small:.0%} at {small_bytes / 2**20:,.0f} MiB. H100 on IB rails: "
            f"{g_first:.0%} from {g0} to {g1} GPUs, then {g_rest:.0%} up to {gpu[-1].n_endpoints:,}.")
    nums = {"pace_big": big, "pace_small": small, "gpu_leaving_node": g_first, "gpu_after": g_rest}
    if big >= min_pace:
        return says, "supported", (f"Bandwidth-bound traffic, like a gradient all-reduce, keeps {big:.0%} of its pace "
                                   f"across the pod (claim: near-linear, read as at least {min_pace:.0%}). Small messages "
                                   f"do not ({small:.0%}), and the model covers the network only, not the whole step. "
                                   f"Near-linearity is not special to TPUs: past its first node the GPU cluster keeps "
                                   f"{g_rest:.0%}; congestion on a shared external network is not modelled."), nums
    return says, "not supported", f"The bandwidth-bound pace falls to {big:.0%}, below {min_pace:.0%}.", nums


def chips_to_hold(chip, models, precision, max_chips, claimed_fits):
    """How many chips each model's weights need (``accelbook.inference.min_chips``) against a claim
    that they fit on ``max_chips`` (``claimed_fits`` true) or do not (false)."""
    from accelbook import inference as inf

    c = get_chip(chip)
    need = {m: inf.min_chips(m, chip, precision) for m in models}
    fits = {m: n <= max_chips for m, n in need.items()}
    says = (f"Chips of {c.name} to hold the weights in {precision}: "
            + ", ".join(f"{m} {n:,}" for m, n in need.items()) + f" (against {max_chips:,}).")
    nums = {f"chips_{m}": float(n) for m, n in need.items()}
    if claimed_fits and all(fits.values()):
        return says, "supported", f"Every model named fits on {max_chips:,}.", nums
    if claimed_fits:
        bad = [m for m, ok in fits.items() if not ok]
        return says, "not supported", (f"{', '.join(bad)} need{'s' if len(bad) == 1 else ''} more than {max_chips:,}: "
                                       "split over several, they exchange activations between chips again."), nums
    if not any(fits.values()):
        return says, "supported", f"None of the models named fits on {max_chips:,}.", nums
    small = [m for m, ok in fits.items() if ok]
    big = [m for m, ok in fits.items() if not ok]
    if big:
        return says, "supported", (f"{', '.join(big)} do{'es' if len(big) == 1 else ''} not fit on {max_chips:,}; "
                                   f"smaller ones ({', '.join(small)}) do."), nums
    return says, "not supported", f"Every model named fits on {max_chips:,}.", nums


def lpu_waiting(model, chip, n_chips, tp, pp, precision, max_comm_share=0.5):
    """Where a batch-1 decode step's time goes on an SRAM chip (``accelbook.inference.estimate``): the
    share spent waiting for activations to cross chips. A claim that nothing waits is not supported
    when that share exceeds ``max_comm_share``."""
    from accelbook import inference as inf

    e = inf.estimate(model, chip, n_chips, 1, 1024, 256, precision, tp=tp, pp=pp)
    b = e.breakdown
    step = b["decode_memory_s"] + b["decode_compute_s"] + b["decode_comm_s"]
    share = b["decode_comm_s"] / step
    says = (f"{model} on {n_chips} x {get_chip(chip).name} (TP{tp} PP{pp}), batch 1: per stage "
            f"{b['decode_memory_s'] * 1e6:.2f} us reading SRAM, {b['decode_compute_s'] * 1e6:.2f} us of math, "
            f"{b['decode_comm_s'] * 1e6:.1f} us crossing chips ({share:.0%}); {e.tokens_per_s_per_user:.0f} tokens/s per user.")
    nums = {"comm_share": share, "tokens_per_s_per_user": e.tokens_per_s_per_user}
    if share > max_comm_share:
        return says, "not supported", (f"Memory waits are gone (SRAM), but {share:.0%} of each step is spent waiting for "
                                       "activations from the previous chip. The hop latency is the ISCA 2022 upper bound, "
                                       "so the share may be smaller; at a third of it the links would still dominate."), nums
    return says, "supported", f"Only {share:.0%} of the step waits on the links.", nums


def _peak16(chip) -> float:
    """A chip's dense 16-bit peak: fp16 where published (Groq gives no bf16), else bf16."""
    try:
        return chip.peak_flop_s("fp16")
    except (KeyError, ValueError):
        return chip.peak_flop_s("bf16")


def sram_chip_speed(model, gpu, n_gpu, lpu, n_lpu, precision="fp8", clearly=1.5):
    """Best tokens/s per user on an SRAM-chip system against a GPU server (``inference.frontier``),
    and their peak FLOP/s: a claim that the SRAM chip is clearly faster per user without more peak."""
    from accelbook import inference as inf

    f = inf.frontier(model, {"gpu": (gpu, n_gpu), "lpu": (lpu, n_lpu)}, 1024, 256, precision)
    user = f.groupby("system")["tokens_per_s_per_user"].max()
    speed = user["lpu"] / user["gpu"]
    g, s = get_chip(gpu), get_chip(lpu)
    peak = _peak16(s) / _peak16(g)
    says = (f"{model}, {precision}: best {user['lpu']:.0f} tokens/s per user on {n_lpu} x {s.name} against "
            f"{user['gpu']:.0f} on {n_gpu} x {g.name} ({speed:.2f}x); 16-bit peak per chip {peak:.2f}x the GPU's.")
    nums = {"per_user_ratio": float(speed), "peak_ratio": peak}
    if speed >= clearly and peak < 1:
        return says, "supported", (f"{speed:.1f}x the GPU server's per-user speed on {peak:.2f}x its peak per chip: "
                                   "the gain is bandwidth and latency, not operations."), nums
    return says, "not supported", f"The per-user gain is {speed:.2f}x on {peak:.2f}x the peak.", nums


def frontier_sides(model, gpu, n_gpu, lpu, n_lpu, precision="fp8"):
    """Both ends of the throughput-interactivity frontier (``inference.frontier``): supported when
    the GPU server makes the most tokens/s per chip and the SRAM-chip system the most per user."""
    from accelbook import inference as inf

    f = inf.frontier(model, {"gpu": (gpu, n_gpu), "lpu": (lpu, n_lpu)}, 1024, 256, precision)
    g = f.groupby("system")
    chip, user = g["tokens_per_s_per_chip"].max(), g["tokens_per_s_per_user"].max()
    says = (f"{model}: best tokens/s per chip {chip['gpu']:,.0f} ({n_gpu} x {get_chip(gpu).name}) vs {chip['lpu']:,.0f} "
            f"({n_lpu} x {get_chip(lpu).name}); best per user {user['gpu']:.0f} vs {user['lpu']:.0f}.")
    nums = {k: float(v) for k, v in {"gpu_per_chip": chip["gpu"], "lpu_per_chip": chip["lpu"],
                                      "gpu_per_user": user["gpu"], "lpu_per_user": user["lpu"]}.items()}
    if chip["gpu"] > chip["lpu"] and user["lpu"] > user["gpu"]:
        return says, "supported", (f"The GPU makes {chip['gpu'] / chip['lpu']:.0f}x the tokens per chip at relaxed latency; "
                                   f"the LPU system reaches {user['lpu'] / user['gpu']:.1f}x the per-user speed."), nums
    return says, "not supported", "The frontier does not split between the two as claimed.", nums


def decode_vs_batch(model, chip, n_chips, batches, precision="fp8"):
    """Decode on a GPU server at a small and a large batch (``inference.estimate``): supported when
    the small batch is memory-bound and the large batch spreads the weights' read over many tokens
    (tokens/s per chip at least 10x)."""
    from accelbook import inference as inf

    lo, hi = (inf.estimate(model, chip, n_chips, b, 1024, 256, precision) for b in batches)
    gain = hi.tokens_per_s_per_chip / lo.tokens_per_s_per_chip
    says = (f"{model} on {n_chips} x {get_chip(chip).name}: batch {batches[0]} decode is {lo.decode_bound}-bound, "
            f"{lo.tokens_per_s_per_chip:,.0f} tokens/s per chip; batch {batches[1]}: {hi.decode_bound}-bound, "
            f"{hi.tokens_per_s_per_chip:,.0f} ({gain:.0f}x).")
    nums = {"gain": gain, "small_memory_bound": float(lo.decode_bound == "memory")}
    if lo.decode_bound == "memory" and gain >= 10:
        return says, "supported", ("Each decode step reads every weight for few tokens; a larger batch shares that read "
                                   f"and makes {gain:.0f}x the tokens per chip."), nums
    return says, "not supported", "The small batch is not memory-bound, or batching gains little.", nums


def same_peak_other_tokens(model, chip_a, chip_b, n_chips, tpot_s, precision="fp8"):
    """Two chips with the same peak FLOP/s serve different tokens/s per chip and per kW
    (``inference.max_throughput`` at a per-token latency target): FLOPS alone do not rank them."""
    from accelbook import inference as inf

    a, b = get_chip(chip_a), get_chip(chip_b)
    peak = b.peak_flop_s("bf16") / a.peak_flop_s("bf16")
    ea, eb = (inf.max_throughput(model, c, n_chips, 1024, 256, precision, tpot_target_s=tpot_s) for c in (chip_a, chip_b))
    tok = eb.tokens_per_s_per_chip / ea.tokens_per_s_per_chip
    kw = eb.tokens_per_s_per_kw / ea.tokens_per_s_per_kw
    says = (f"{b.name} over {a.name}: bf16 peak {peak:.2f}x; at {tpot_s * 1e3:.0f} ms per token, tokens/s per chip "
            f"{tok:.2f}x, tokens/s per kW {kw:.2f}x ({model}, {precision}).")
    nums = {"peak_ratio": peak, "tokens_ratio": tok, "per_kw_ratio": kw}
    if abs(peak - 1) < 0.02 and abs(tok - 1) > 0.1:
        return says, "supported", (f"The same peak makes {tok:.2f}x the tokens: memory bandwidth and capacity, not FLOPS, "
                                   "set decode, so token metrics rank chips that FLOPS cannot."), nums
    return says, "not supported", "The token metrics follow the peak here.", nums
