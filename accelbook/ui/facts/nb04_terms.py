"""Facts of notebooks/04_distributed_training.ipynb, section 4's per-term table (keys ``nb04.terms_*``):
each term of the step against published timings of that term, :func:`accelbook.training.term_validation_table`;
see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook import training
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.grouped_gemm import grouped_gemm_fraction
from accelbook.specs.measured import achievable_hbm_fraction, elementwise_stream_fraction
from accelbook.ui.facts import fact
from accelbook.ui.facts import nb04_shared as sh


@catalogue_cache(maxsize=None)
def table():
    return training.term_validation_table()


def _errors(term: str):
    t = table()
    return t.loc[t["term"] == term, "error"]


def _error(rid: str) -> float:
    return float(table().set_index("id").loc[rid, "error"])


@fact("nb04.terms_n_rows")
def terms_n_rows() -> str:
    return str(len(table()))


@fact("nb04.terms_n_terms")
def terms_n_terms() -> str:
    return str(table()["term"].nunique())


@fact("nb04.terms_worst")
def terms_worst() -> str:
    return training.worst_term(table())


@fact("nb04.terms_worst_median")
def terms_worst_median() -> str:
    return sh.pct(training.term_errors(table()).iloc[0])


@fact("nb04.terms_layer_low")
def terms_layer_low() -> str:
    return sh.signed(_errors("layer").min())


@fact("nb04.terms_layer_high")
def terms_layer_high() -> str:
    return sh.signed(_errors("layer").max())


@fact("nb04.terms_full_recompute")
def terms_full_recompute() -> str:
    return sh.signed(_error("korthikanti-22b-full-recompute-overhead"))


@fact("nb04.terms_selective_recompute")
def terms_selective_recompute() -> str:
    return sh.signed(_error("korthikanti-22b-selective-overhead"))


@fact("nb04.terms_quack")
def terms_quack() -> str:
    return sh.signed(_error("quack-softmax-fp32-16k-131k"))


@fact("nb04.terms_compiled")
def terms_compiled() -> str:
    return sh.signed(_error("torch-compile-softmax-fp32-16k-131k"))


@fact("nb04.terms_elem_pct")
def terms_elem_pct() -> str:
    return sh.pct(elementwise_stream_fraction("h100").fraction)


@fact("nb04.terms_elem_tb_s")
def terms_elem_tb_s() -> str:
    h100 = achievable_hbm_fraction("h100").measured_bytes_per_s
    return f"{h100 * elementwise_stream_fraction('h100').fraction / 1e12:.2f}"


@fact("nb04.terms_elementwise_median")
def terms_elementwise_median() -> str:
    return sh.pct(_errors("elementwise").abs().median())


def _range_of(prefix: str):
    t = table()
    e = t.loc[t["id"].str.startswith(prefix), "error"]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.grouped_h800_fp8_pct")
def grouped_h800_fp8_pct() -> str:
    return sh.pct(grouped_gemm_fraction("h800", "fp8").fraction)


@fact("nb04.grouped_b200_fp8_pct")
def grouped_b200_fp8_pct() -> str:
    return sh.pct(grouped_gemm_fraction("b200", "fp8").fraction)


@fact("nb04.grouped_b200_bf16_pct")
def grouped_b200_bf16_pct() -> str:
    return sh.pct(grouped_gemm_fraction("b200", "bf16").fraction)


@fact("nb04.terms_grouped_inputs_range")
def terms_grouped_inputs_range() -> str:
    t = table()
    e = t.loc[t["case"].str.contains("an input of the grouped-GEMM fraction"), "error"]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.terms_masked_range")
def terms_masked_range() -> str:
    return _range_of("deepgemm-h800-masked")


@fact("nb04.terms_cutlass_range")
def terms_cutlass_range() -> str:
    return _range_of("cutlass36-h800")


@fact("nb04.terms_a2a_intranode_range")
def terms_a2a_intranode_range() -> str:
    return _range_of("deepep-h800-intranode")


@fact("nb04.terms_a2a_ep16_range")
def terms_a2a_ep16_range() -> str:
    return _range_of("deepep-h800-internode-ep16")


@fact("nb04.terms_a2a_multinode_range")
def terms_a2a_multinode_range() -> str:
    t = table()
    e = t.loc[t["id"].str.contains("deepep-h800-internode-ep(?:32|64)", regex=True), "error"]
    return f"{sh.signed(e.min())} % to {sh.signed(e.max())}"


@fact("nb04.terms_a2a_median")
def terms_a2a_median() -> str:
    return sh.pct(_errors("all_to_all").abs().median())


@fact("nb04.terms_grouped_median")
def terms_grouped_median() -> str:
    return sh.pct(_errors("grouped_gemm").abs().median())


@fact("nb04.terms_recompute_median")
def terms_recompute_median() -> str:
    return sh.pct(_errors("recompute").abs().median())


@fact("nb04.terms_permute_tileops")
def terms_permute_tileops() -> str:
    return sh.signed(_error("tileops-h200-permute-4096x8-h7168"))


@fact("nb04.terms_permute_vllm")
def terms_permute_vllm() -> str:
    return sh.signed(_error("vllm-h200-permute-4096x8-h7168"))
