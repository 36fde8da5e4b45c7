"""Facts of notebooks/04_distributed_training.ipynb, section 4's GEMM rows of the per-term table (keys
``nb04.gemm_*``): dense GEMMs at published shapes against :func:`accelbook.training.compute.gemm_time`, with and
without a tile's fixed cost against its K loop (``data/gemm_k_overhead.toml``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

import pandas as pd

from accelbook.costs.gemm import gemm_k_efficiency
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import cluster_for
from accelbook.specs.efficiency import gemm_k_overhead, measured_efficiency
from accelbook.training.compute import gemm_time
from accelbook.training.records import chip_record
from accelbook.training.term_validation import term_measurements
from accelbook.ui.facts import fact
from accelbook.ui.facts import nb04_shared as sh
from accelbook.ui.facts.nb04_terms import table


@catalogue_cache(maxsize=None)
def gemm_rows() -> pd.DataFrame:
    """The gemm rows of the term table with ``error_no_k0``: the same call with the chip record's per-tile
    overhead set to 0 (the model before ``data/gemm_k_overhead.toml``)."""
    t = table()
    g = t[t["term"] == "gemm"].set_index("id").copy()
    rows = term_measurements()
    before = {}
    for rid in g.index:
        e = rows[rid]
        chip = get_chip(e["chip"])
        c, _ = chip_record(chip, cluster_for(chip), e["precision"])
        c["gemm_k0"] = 0.0
        before[rid] = gemm_time(float(e["m"]), float(e["n"]), float(e["k"]), c) / e["published_s"] - 1
    return g.assign(error_no_k0=pd.Series(before))


def _set(name: str) -> pd.DataFrame:
    g = gemm_rows()
    return g[g["set"] == name]


@fact("nb04.gemm_n_rows")
def gemm_n_rows() -> str:
    return str(len(gemm_rows()))


@fact("nb04.gemm_fit_n")
def gemm_fit_n() -> str:
    return str(len(_set("fit")))


@fact("nb04.gemm_fit_range")
def gemm_fit_range() -> str:
    e = _set("fit")["error"]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.gemm_fit_range_no_k0")
def gemm_fit_range_no_k0() -> str:
    e = _set("fit")["error_no_k0"]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.gemm_heldout_n")
def gemm_heldout_n() -> str:
    return str(len(_set("held-out")))


@fact("nb04.gemm_heldout_abs_median")
def gemm_heldout_abs_median() -> str:
    return sh.pct(_set("held-out")["error"].abs().median())


@fact("nb04.gemm_heldout_abs_median_no_k0")
def gemm_heldout_abs_median_no_k0() -> str:
    return sh.pct(_set("held-out")["error_no_k0"].abs().median())


@fact("nb04.gemm_heldout_within_15")
def gemm_heldout_within_15() -> str:
    return str(int((_set("held-out")["error"].abs() <= 0.15).sum()))


@fact("nb04.gemm_heldout_within_15_no_k0")
def gemm_heldout_within_15_no_k0() -> str:
    return str(int((_set("held-out")["error_no_k0"].abs() <= 0.15).sum()))


@fact("nb04.gemm_k0_fp8")
def gemm_k0_fp8() -> str:
    return f"{gemm_k_overhead('fp8'):.0f}"


@fact("nb04.gemm_k0_bf16")
def gemm_k0_bf16() -> str:
    return f"{gemm_k_overhead('bf16'):.0f}"


@fact("nb04.gemm_out_proj_eta")
def gemm_out_proj_eta() -> str:
    """η_K of Llama 70B's attention out-projection at TP 8 (K = 8192/8) on H100 in bf16."""
    k_ref = measured_efficiency("h100", "bf16")[0].shape[2]
    return f"{gemm_k_efficiency(1024.0, gemm_k_overhead('bf16'), float(k_ref)):.2f}"


@fact("nb04.gemm_f8exp_bf16_range")
def gemm_f8exp_bf16_range() -> str:
    g = gemm_rows()
    e = g.loc[g.index.str.startswith("f8exp-h100-bf16-"), "error"]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.gemm_cutlass_range")
def gemm_cutlass_range() -> str:
    g = gemm_rows()
    e = g.loc[g.index.str.startswith("cutlass36-"), "error"]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.gemm_mamf_h100_fp8")
def gemm_mamf_h100_fp8() -> str:
    return sh.signed(float(gemm_rows().loc["mamf-h100-fp8-best", "error"]))


@fact("nb04.gemm_abs_median")
def gemm_abs_median() -> str:
    return sh.pct(gemm_rows()["error"].abs().median())
