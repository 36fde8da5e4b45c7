"""The training search's fast paths give the numbers of the plain paths, to the last bit.

- the search kernel shares a layout's terms between the rows that differ only in ZeRO stage, gradient
  sync, schedule and recomputation: each row must equal :func:`evaluate_layout` of that layout;
- ``search(top=k)`` ranks only the contenders and evaluates their full rows after: the same table as
  ranking every layout;
- the published runs and their searches are read and run once: the same rows and estimates.
"""

from __future__ import annotations

import numpy as np
import pytest

from accelbook import training
from accelbook.specs.chips import usable_memory_bytes
from accelbook.training import kernel, layouts
from accelbook.training.arguments import resolve
from accelbook.training.records import (
    CP_COMM,
    LAYOUT,
    RESULT,
    attention_head_dim,
    chip_record,
    model_record,
    new_record,
    options_record,
)

CASES = [  # model, chip, precision, chips, batch (sequences), seq_len, flash, sequence parallel, tp_overlap, cp_comm
    ("llama-3.1-70b", "h100", "bf16", 512, 512, 8192, True, True, 0.0, "ring"),
    ("mixtral-8x7b", "tpu-v5p", "bf16", 256, 256, 4096, False, False, 0.3, "allgather"),
    ("deepseek-v3", "b200", "fp8", 1024, 1024, 4096, True, True, 0.0, "ring"),
]


def _vectors(case):
    mname, chip, prec, n, B, s, flash, seqpar, ov, cpc = case
    model, chip, cl = resolve(mname, chip, None, prec)
    mv = model_record(model, s)
    cv, _ = chip_record(chip, cl, prec, s, attention_head_dim(model))
    return model, chip, mv, cv, layouts.search_space(model, n), usable_memory_bytes(chip.hbm_bytes, 0.1), \
        options_record(ov, cpc)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_search_rows_equal_one_layout_each(case):
    _, _, _, n, B, s, flash, seqpar, _, cpc = case
    assert cpc in CP_COMM
    _, _, mv, cv, space, usable, opt = _vectors(case)
    cfg, res = kernel.evaluate_layouts(mv, cv, n, B, s, space, flash, seqpar, usable, opt)
    assert len(cfg) > 100 and cfg.dtype == LAYOUT and res.dtype == RESULT
    rows = np.random.default_rng(0).choice(len(cfg), 60, replace=False)
    for i in rows:
        r = {k: int(cfg[i][k]) for k in training.CONFIG_FIELDS}
        one = kernel.evaluate_layout(mv, cv, B, s, r["tp"], r["cp"], r["pp"], r["vp"], r["dp"], r["ep"], r["microbatch"],
                                     r["zero_stage"], r["recompute"], flash, seqpar, usable, opt,
                                     grad_sync=r["grad_sync"], schedule=r["schedule"])
        assert _bits(one) == _bits(res[i])
    # evaluate_rows: the same full rows
    assert np.array_equal(kernel.evaluate_rows(mv, cv, B, s, cfg[rows], flash, seqpar, usable, opt), res[rows])


def _bits(rec) -> bytes:
    """A record's bytes: equal records are equal to the last bit (NaN included)."""
    return np.asarray(rec).tobytes()


@pytest.mark.parametrize("top", [1, 3, 12])
def test_top_search_equals_the_full_ranking(top):
    args = ("llama-3.1-70b", "h100", 1024, 2**22, 4096)
    full = training.search(*args, top=None)
    part = training.search(*args, top=top)
    assert part.attrs["n_evaluated"] == full.attrs["n_evaluated"] and part.attrs["n_fit"] == full.attrs["n_fit"]
    cols = [c for c in full.columns if c not in ("why", "hfu")]   # why and hfu compare with the first row: same
    assert part[cols].equals(full[cols].head(top))
    assert list(part["why"]) == list(full["why"].head(top))
    assert part.attrs["best"] == full.attrs["best"]


def test_contenders_keep_every_tie():
    step = np.array([3.0, 1.0, 2.0, 1.0, 2.0, 5.0])
    keep = np.arange(6)
    assert list(layouts._contenders(keep, step, 2)) == [1, 3]
    assert list(layouts._contenders(keep, step, 3)) == [1, 2, 3, 4]    # the tie at the 3rd place: both
    assert list(layouts._contenders(keep, step, None)) == list(keep)
    assert list(layouts._contenders(keep, step, 10)) == list(keep)


def test_published_runs_read_once_and_copied():
    a, b = training.published_runs(), training.published_runs()
    assert a == b and a is not b
    rid = next(iter(a))
    a[rid]["name"] = "changed"
    assert training.published_runs()[rid]["name"] != "changed"


def test_run_estimate_is_the_search_it_caches():
    e = training.published_runs()["llama31-405b-8k"]
    _, _, est = training.run_estimate(e)
    model, chip = training.run_model(e), e["chip"]
    settings, pinned = training.run_layout(e)
    s = e["seq_len"]
    fresh = training.search(model, chip, e["n_chips"], e["global_batch_sequences"] * s, s, top=1, **settings,
                            **pinned).attrs["best"]
    assert est == fresh


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_step_floor_never_exceeds_a_rows_step(case):
    """The branch and bound's floor (rows.step_floor, plain Python here) is below every row's step."""
    from accelbook.training import rows

    _, _, _, n, B, s, flash, seqpar, _, _ = case
    _, _, mv, cv, space, usable, opt = _vectors(case)
    cfg, res = kernel.evaluate_layouts(mv, cv, n, B, s, space, flash, seqpar, usable, opt)
    terms, floor, finish = rows.layout_terms.py_func, rows.step_floor.py_func, rows.finish_row.py_func
    g, d, out = new_record(rows.TERMS), new_record(rows.DP_PASSES), new_record(RESULT)
    for i in np.random.default_rng(1).choice(len(cfg), 300, replace=False):
        tp, cp, pp, vp, dp, ep, mb, zero, rec, gs, sc = (cfg[i][k] for k in training.CONFIG_FIELDS)
        zero, rec, gs, sc = int(zero), int(rec), int(gs), int(sc)
        terms(mv, cv, float(B), float(s), tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g)
        rows.dp_passes.py_func(cv, g, tp, cp, dp, ep, zero, sc, d)
        finish(mv, cv, g, d, float(B), float(s), tp, cp, pp, vp, dp, ep, zero, rec, gs, sc, flash, usable, opt, out)
        assert out.step_time_s == res[i]["step_time_s"]
        t_opt = rows.optimizer_time.py_func(cv, g, cp, dp, ep, zero, sc)
        assert floor(mv, cv, g, tp, cp, pp, vp, sc, opt, 0.0, 0.0) <= out.step_time_s
        assert floor(mv, cv, g, tp, cp, pp, vp, sc, opt, d.t_bucket_rs_s + d.t_bucket_ag_s, t_opt) <= out.step_time_s


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_count_fitting_counts_a_groups_fitting_rows(case):
    """rows.count_fitting (plain Python here), the count a skipped group's rows get, is the full
    evaluation's number of fitting rows, group by group."""
    from accelbook.training import rows

    _, _, _, n, B, s, flash, seqpar, _, _ = case
    _, _, mv, cv, space, usable, opt = _vectors(case)
    cfg, res = kernel.evaluate_layouts(mv, cv, n, B, s, space, flash, seqpar, usable, opt)
    layout = ["tp", "cp", "pp", "vp", "dp", "ep", "microbatch"]
    _, group = np.unique(np.column_stack([cfg[k] for k in layout]), axis=0, return_inverse=True)
    g = new_record(rows.TERMS)
    act_bytes, act_in_flight, act_done = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3), dtype=bool)
    for j in np.random.default_rng(2).permutation(group.max() + 1)[:150]:
        at = np.flatnonzero(group.ravel() == j)     # the group's rows, in enumeration order
        tp, cp, pp, vp, dp, ep, mb = (cfg[at[0]][k] for k in layout)
        rows.layout_terms.py_func(mv, cv, float(B), float(s), tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g)
        var = np.rec.fromarrays([cfg[at][k].astype(np.int64) for k in rows.VARIANT.names], dtype=rows.VARIANT)
        got = rows.count_fitting.py_func(mv, cv, g, float(s), tp, cp, pp, vp, dp, ep, var, len(at), flash, usable,
                                         act_bytes, act_in_flight, act_done)
        assert got == int((res[at]["fits"] > 0.5).sum())


@pytest.mark.parametrize("top", [1, 3, 12])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rank_layouts_keeps_every_contender(case, top):
    """rank_layouts skips layouts that cannot rank: its candidates hold every contender of the full
    evaluation with the same keys, the counts are the full ones, and the ranking is the same."""
    _, _, _, n, B, s, flash, seqpar, _, _ = case
    _, _, mv, cv, space, usable, opt = _vectors(case)
    cfg, res = kernel.evaluate_layouts(mv, cv, n, B, s, space, flash, seqpar, usable, opt)
    fits = res["fits"] > 0.5
    full = layouts._contenders(np.flatnonzero(fits), res["step_time_s"], top)
    for count_fit in (True, False):
        ccfg, key, k, n_fit, _ = kernel.rank_layouts(mv, cv, n, B, s, space, flash, seqpar, usable, opt, top, count_fit)
        assert k == len(cfg)
        assert n_fit == int(fits.sum()) if count_fit else n_fit > 0
        mine = layouts._contenders(np.arange(len(ccfg)), key["step_time_s"], top)
        assert np.array_equal(ccfg[mine], cfg[full])
        for f in kernel.RANK_KEY.names:
            assert np.array_equal(key[mine][f], res[full][f])
        assert len(ccfg) < len(cfg)     # something was skipped


def test_rank_layouts_reports_the_smallest_when_none_fits():
    msg = "smallest needs"
    with pytest.raises(ValueError, match=msg) as fast:
        training.search("llama-3.1-405b", "h100", 8, 2**16, 8192, top=3)
    with pytest.raises(ValueError, match=msg) as slow:
        training.search("llama-3.1-405b", "h100", 8, 2**16, 8192, top=None)
    assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("seed", range(20))
def test_largest_per_system_is_the_pandas_sort_and_groupby(seed):
    """The scaling view and chart take each system's largest point with numpy: the rows, in the order,
    that ``sort_values("n_chips").groupby("system").tail(1)`` keeps (ties at a count included)."""
    import pandas as pd

    from accelbook.ui.charts.training import largest_per_system

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    df = pd.DataFrame({"system": rng.choice(["a", "b", "c", "d"], n), "n_chips": 2 ** rng.integers(6, 10, n)})
    want = df.sort_values("n_chips").groupby("system").tail(1).index.to_numpy()
    got = largest_per_system(df["system"].to_numpy(), df["n_chips"].to_numpy())
    assert got.tolist() == want.tolist()

