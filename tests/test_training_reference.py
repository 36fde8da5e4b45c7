"""accelbook.training.estimate against the plain-Python step of tests/naive_training.py (written from the
docstrings, not from the kernels), on seeded random layouts: step time, every time term, memory, MFU, HFU.

Tolerance: rtol 1e-9. The two compute the same formulas in a different order (the reference multiplies
η_tile·η_k·η_wave, sums its GEMMs in a loop, divides where the kernel multiplies), so they differ by a
few ulps: the largest difference seen is 3.7e-15 (300 layouts); 1e-9 leaves room without hiding a wrong term (the
smallest real discrepancy found, the selective recomputation's one extra tensor, is 1e-4 of the step).
A term that is the difference of two near-equal parts (the stage imbalance of an even split: 1e-17 s
against 2e-17 s) is held to 1e-13 of the step instead.

Two disagreements the reference found were kernel errors, fixed since (each keeps a test below):
selective recomputation charged the FFN activation one tensor more than its forward moves, and
unfused FP8 attention ran its bf16 score GEMMs at the FP8 GEMM fraction.
"""

from __future__ import annotations

import numpy as np
import pytest
from naive_training import GRAD_SYNC, RECOMPUTE, SCHEDULES, is_valid, reference_step

from accelbook import training as T
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import cluster_for
from accelbook.specs.models import get_model

RTOL = 1e-9
ATOL = 1e-13    # of the step time (or the memory per chip), for a term that is a difference of two others
N_LAYOUTS = 300
# dense SwiGLU/GQA, GELU/MHA with LayerNorm and biases, a sliding window, two MoEs (one with MLA, shared
# experts, dense first layers and node-limited routing)
MODELS = ("llama-3.1-8b", "llama-3.1-70b", "gpt3-175b", "gemma-3-27b", "mixtral-8x7b", "deepseek-v3")
# tpu-v6e: no published MXU count (the default 4); gb200: a 72-GPU NVLink domain, so a group at stride 8
# puts 9 ranks in a domain and need not divide by them
CHIPS = ("h100", "b200", "gb200", "a100", "tpu-v5p", "tpu-v6e")


def _pick(rng, values):
    return values[int(rng.integers(len(values)))]


def random_case(rng):
    """(model, chip, B, s, layout, options) of a random valid layout."""
    m, c = get_model(_pick(rng, MODELS)), get_chip(_pick(rng, CHIPS))
    experts = m.moe.n_experts if m.moe else 1
    while True:
        s = _pick(rng, (1024, 2048, 4096))
        # tp 16 exceeds Llama's 8 K/V heads (replicated); pp 3 leaves a shorter last stage
        tp, cp, pp = _pick(rng, (1, 2, 4, 8, 16)), _pick(rng, (1, 1, 2, 4)), _pick(rng, (1, 1, 2, 3, 4, 8))
        dp, mb, m_count = _pick(rng, (1, 2, 4, 8, 16)), _pick(rng, (1, 2, 4)), int(rng.integers(1, 9))
        ep = _pick(rng, [e for e in (1, 2, 4, 8, 16) if dp % e == 0 and experts % e == 0])
        vp = _pick(rng, (1, 1, 2, 4))
        zero = int(rng.integers(4))
        gsync = 1 if zero == 3 else (int(rng.integers(2)) if zero == 2 else 0)
        sched = int(rng.integers(3)) if pp > 1 and vp == 1 else 0
        B, n = dp * mb * m_count, tp * cp * pp * dp
        ok, _ = is_valid(tp, cp, pp, vp, ep, mb, zero, gsync, sched, n=n, B=B, s=s, layers=m.n_layers,
                         heads=m.n_heads, experts=experts, dps={dp})
        if ok:
            break
    layout = dict(tp=tp, cp=cp, pp=pp, vp=vp, dp=dp, ep=ep, microbatch=mb, zero_stage=zero,
                  recompute=_pick(rng, RECOMPUTE), grad_sync=GRAD_SYNC[gsync], schedule=SCHEDULES[sched])
    options = dict(precision=_pick(rng, ("bf16", "fp8")) if "fp8" in c.peak_dense_flop_s else "bf16",
                   flash=bool(rng.random() < 0.75), seqpar=bool(rng.random() < 0.8),
                   tp_overlap=_pick(rng, (0.0, 0.0, 0.5)), cp_mode=_pick(rng, ("ring", "allgather")))
    return m, c, B, s, layout, options


def estimate_numbers(m, c, B, s, layout, o):
    e = T.estimate(m, c, layout["tp"] * layout["cp"] * layout["pp"] * layout["dp"], B * s, s, precision=o["precision"],
                   flash_attention=o["flash"], sequence_parallel=o["seqpar"], tp_overlap=o["tp_overlap"],
                   cp_comm=o["cp_mode"], **layout)
    out = {**e.time, **e.memory}
    out.update(step_time_s=e.step_time_s, mfu=e.mfu, hfu=e.hfu, memory_per_chip_bytes=e.memory_per_chip_bytes,
               tokens_per_s_per_chip=e.tokens_per_s_per_chip, fits=e.fits,
               n_microbatches=e.config["n_microbatches"])
    return out


def compared(m, c, B, s, layout, o, fields=None):
    """(max relative difference, the field where it is) between the estimate and the reference."""
    got = estimate_numbers(m, c, B, s, layout, o)
    ref = reference_step(m, c, cluster_for(c), B, s, layout, **o)
    worst, where = 0.0, None
    for k in fields or got:
        assert k in ref, k
        if k == "fits":
            assert got[k] == ref[k], (k, layout, o)
            continue
        # a term is a part of the step (or of the memory): one that is a difference of two near-equal
        # parts (the stage imbalance of an even split, 1e-17 s) is compared to ATOL of the whole
        whole = ref["step_time_s"] if k.startswith("t_") else ref["memory_per_chip_bytes"] if k.startswith("mem") else 0
        diff = abs(got[k] - ref[k])
        rel = 0.0 if diff <= ATOL * whole else diff / abs(ref[k]) if ref[k] else np.inf
        if rel > worst:
            worst, where = rel, k
    return worst, where


def _cases(seed, n):
    rng = np.random.default_rng(seed)
    return [random_case(rng) for _ in range(n)]


def test_estimate_equals_the_reference_on_random_layouts():
    cases = _cases(20261201, N_LAYOUTS)
    seen = {"models": set(), "chips": set(), "fp8": 0, "unfused": 0, "full": 0, "moe_ep": 0, "zero": set(),
            "sched": set(), "vp": 0, "cp": 0, "multi_domain": 0}
    worst = 0.0
    for m, c, B, s, lay, o in cases:
        rel, where = compared(m, c, B, s, lay, o)
        assert rel <= RTOL, (m.id, c.id, B, s, lay, o, where, rel)
        worst = max(worst, rel)
        seen["models"].add(m.id)
        seen["chips"].add(c.id)
        seen["fp8"] += o["precision"] == "fp8"
        seen["unfused"] += not o["flash"]
        seen["full"] += lay["recompute"] == "full"
        seen["moe_ep"] += lay["ep"] > 1
        seen["zero"].add(lay["zero_stage"])
        seen["sched"].add(lay["schedule"])
        seen["vp"] += lay["vp"] > 1
        seen["cp"] += lay["cp"] > 1
        n = lay["tp"] * lay["cp"] * lay["pp"] * lay["dp"]
        seen["multi_domain"] += n > cluster_for(c).domain_chips
    # the draw covers what it claims to
    assert seen["models"] == set(MODELS) and seen["chips"] == set(CHIPS)
    assert seen["zero"] == {0, 1, 2, 3} and seen["sched"] == set(SCHEDULES)
    assert min(seen[k] for k in ("fp8", "unfused", "full", "moe_ep", "vp", "cp", "multi_domain")) >= 5, seen
    assert worst < 1e-12       # in practice a few ulps


def _first(predicate, seed=7, limit=2000):
    rng = np.random.default_rng(seed)
    for _ in range(limit):
        case = random_case(rng)
        if predicate(*case):
            return case
    raise AssertionError("no such layout drawn")


def test_selective_recompute_moves_the_forward_bytes_again():
    case = _first(lambda m, c, B, s, lay, o: lay["recompute"] == "selective" and o["flash"])
    rel, where = compared(*case)
    assert rel <= RTOL, (where, rel)


def test_unfused_fp8_attention_at_the_bf16_fraction():
    case = _first(lambda m, c, B, s, lay, o: o["precision"] == "fp8" and not o["flash"] and lay["recompute"] != "selective"
                  and c.id == "h100")
    rel, where = compared(*case, fields=("t_attention_s",))
    assert rel <= RTOL, (where, rel)


def test_reference_counts_the_model_parameters():
    # the reference's per-layer split (tests/naive_training.layer_params) adds up to the model's published count
    from naive_training import layer_params
    for mid in MODELS:
        m = get_model(mid)
        ne, e = layer_params(m)
        total = m.n_layers * (ne + e) + m.embedding_params + m.lm_head_params + m.norm_params
        assert total == pytest.approx(m.params, rel=1e-12), mid
