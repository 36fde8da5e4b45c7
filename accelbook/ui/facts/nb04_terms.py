"""Facts of notebooks/04_distributed_training.ipynb, section 4's per-term table (keys ``nb04.terms_*``):
each term of the step against published timings of that term, :func:`accelbook.training.term_validation_table`;
see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook import training
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.efficiency import measured_efficiency
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


# -- TPU GEMMs (term "tpu_gemm") and the TPU generations' measured GEMM fractions --------------------------------


@fact("nb04.terms_tpu_gemm_median")
def terms_tpu_gemm_median() -> str:
    return sh.pct(_errors("tpu_gemm").abs().median())


@fact("nb04.terms_tpu_gemm_v6e_fold")
def terms_tpu_gemm_v6e_fold() -> str:
    # at the shape v6e's eta_meas was timed at, what the MXU fold model adds on top of it
    return sh.signed(_error("tpu-recipes-v6e-8192-trace"))


@fact("nb04.terms_tpu_gemm_tpu7_4096")
def terms_tpu_gemm_tpu7_4096() -> str:
    return sh.signed(_error("ironwood-gemm-4096"))


@fact("nb04.terms_tpu_gemm_tpu7_1024")
def terms_tpu_gemm_tpu7_1024() -> str:
    return sh.signed(_error("ironwood-gemm-1024"))


@fact("nb04.v6e_gemm_pct")
def v6e_gemm_pct() -> str:
    return sh.pct(measured_efficiency("tpu-v6e")[0].fraction, 1)


@fact("nb04.tpu7_gemm_pct")
def tpu7_gemm_pct() -> str:
    return sh.pct(measured_efficiency("tpu7")[0].fraction, 1)


@fact("nb04.terms_tpu_gemm_n")
def terms_tpu_gemm_n() -> str:
    return str(len(_errors("tpu_gemm")))


# -- FP8 casts (term "fp8_cast") -----------------------------------------------------------------------------------


@fact("nb04.terms_fp8_cast_n")
def terms_fp8_cast_n() -> str:
    return str(len(_errors("fp8_cast")))


@fact("nb04.terms_fp8_cast_max")
def terms_fp8_cast_max() -> str:
    return sh.signed(_errors("fp8_cast").max())


@fact("nb04.terms_fp8_cast_rceil")
def terms_fp8_cast_rceil() -> str:
    # the one cast slower than the model: torch.compile's RCEIL rounding, which the MXFP8 recipe does not use
    return sh.signed(_error("ao-mxfp8-dim0-mxfp8-rceil"))
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
    return _range_of("cutlass36-h800-contiguous")


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


@fact("nb04.terms_fp8_cast_min_others")
def terms_fp8_cast_min_others() -> str:
    # the smallest error of the casts the recipes run (all but torch.compile's RCEIL one)
    e = _errors("fp8_cast")
    t = table()
    return sh.signed(e[t.loc[e.index, "id"] != "ao-mxfp8-dim0-mxfp8-rceil"].min())
@fact("nb04.terms_collective_median")
def terms_collective_median() -> str:
    return sh.pct(_errors("collective").abs().median())


@fact("nb04.terms_coll_ag_16g")
def terms_coll_ag_16g() -> str:
    return sh.signed(_error("nccl-allgather-16g-8xh100"))


@fact("nb04.terms_coll_ag_512m")
def terms_coll_ag_512m() -> str:
    return sh.signed(_error("scaling-book-allgather-512mib-8xh100"))


@fact("nb04.terms_coll_ar_58m")
def terms_coll_ar_58m() -> str:
    return sh.signed(_error("scaling-book-allreduce-58mb-8xh100"))


@fact("nb04.terms_coll_nvls_16m")
def terms_coll_nvls_16m() -> str:
    return sh.signed(_error("azure-nvls-allreduce-16m-8xh100"))


@fact("nb04.terms_coll_nvls_8g")
def terms_coll_nvls_8g() -> str:
    return sh.signed(_error("azure-nvls-allreduce-8g-8xh100"))


@fact("nb04.terms_coll_8k")
def terms_coll_8k() -> str:
    return sh.signed(_error("azure-nvls-allreduce-8k-8xh100"))


@fact("nb04.terms_coll_2_nodes")
def terms_coll_2_nodes() -> str:
    return sh.signed(_error("nccl-ring-allreduce-2-nodes-h100"))


@fact("nb04.terms_coll_256")
def terms_coll_256() -> str:
    return sh.signed(_error("nccl-allgather-2g-256xh100"))
@fact("nb04.terms_permute_tileops")
def terms_permute_tileops() -> str:
    return sh.signed(_error("tileops-h200-permute-4096x8-h7168"))


@fact("nb04.terms_permute_vllm")
def terms_permute_vllm() -> str:
    return sh.signed(_error("vllm-h200-permute-4096x8-h7168"))


@fact("nb04.terms_fp8_cast_median")
def terms_fp8_cast_median() -> str:
    return sh.pct(_errors("fp8_cast").abs().median())
