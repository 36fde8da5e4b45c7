"""MoE serving with data-parallel attention + expert parallelism (issue 30): the all-to-all at its real size,
the measured expert imbalance, the prompts' prefills one rank at a time, and the published rows. Expected
values are worked out by hand here, never taken from the code under test."""

import math

import pytest

from accelbook import inference as I
from accelbook.inference import parallel
from accelbook.inference.validation import published_results
from accelbook.specs.loader import CatalogueError
from accelbook.specs.models import get_model

DSV3 = "deepseek-v3"
LAMBDA = 1.04        # data/moe_balance.toml, aux_loss_free: Wang et al. 2024, Table 2, MaxVio_global 0.04


def _p_rank_missed():
    # a rank holding 32 of 256 experts is missed by all 8 distinct experts of a token: (224/256)·(223/255)·...
    p = 1.0
    for i in range(8):
        p *= (224 - i) / (256 - i)
    return p


def test_ranks_per_token_of_deepseek_v3_on_eight_ranks():
    rho = 8 * (1 - _p_rank_missed())
    assert rho == pytest.approx(5.2947, abs=1e-4)
    assert parallel.ranks_per_token(get_model(DSV3), 8) == pytest.approx(rho, rel=1e-12)
    assert parallel.ranks_per_token(get_model(DSV3), 1) == 1.0
    # 256 ranks of one expert each: a token reaches exactly its 8 experts' ranks
    assert parallel.ranks_per_token(get_model(DSV3), 256) == pytest.approx(8.0)
    assert parallel.ranks_per_token(get_model(DSV3), 512) == 8.0          # more ranks than experts
    # Mixtral 8x7B (8 experts, top 2) on 2 ranks of 4: missed by both experts with (4/8)·(3/7) = 3/14
    assert parallel.ranks_per_token(get_model("mixtral-8x7b"), 2) == pytest.approx(2 * (1 - 3 / 14), rel=1e-12)


def test_dispatch_bytes_fp8_with_scales_or_bf16():
    m = get_model(DSV3)
    assert parallel.dispatch_bytes_per_token(m, "fp8") == 7168 + 7168 / 128 * 4 == 7392
    assert parallel.dispatch_bytes_per_token(m, "bf16") == 2 * 7168


def test_expert_all_to_all_hand_number():
    # one token, 8 ranks, 450 GB/s, 1 µs a step: dispatch and combine each S·7/8 / B + 7 µs, S = λ·ρ·bytes
    rho = 8 * (1 - _p_rank_missed())
    m = get_model(DSV3)
    bf16 = 2 * (LAMBDA * rho * 14336 * 7 / 8 / 450e9 + 7e-6)
    assert parallel.expert_all_to_all_s(m, 1, 8, 1e-6, 450e9) == pytest.approx(bf16, rel=1e-12)
    fp8 = LAMBDA * rho * (7392 + 14336) * 7 / 8 / 450e9 + 14e-6
    assert parallel.expert_all_to_all_s(m, 1, 8, 1e-6, 450e9, "fp8") == pytest.approx(fp8, rel=1e-12)
    assert parallel.expert_all_to_all_s(m, 1, 1, 1e-6, 450e9) == 0.0
    # the docstring's 128 tokens on H200 at 450·0.82 GB/s: 50.4 µs
    t = parallel.expert_all_to_all_s(m, 128, 8, 1e-6, 450e9 * 0.82, "fp8")
    assert t == pytest.approx(128 * LAMBDA * rho * 21728 * 7 / 8 / 369e9 + 14e-6, rel=1e-12)
    assert t == pytest.approx(50.4e-6, abs=0.1e-6)


def test_dp_decode_charges_the_busiest_rank_its_imbalance():
    # 8 sequences a rank, 64 in all, 1 token each: routed FLOPs λ·64·2·A_routed/8, the rest 8·2·(A - A_routed)
    m = get_model(DSV3)
    a_r = 58 * 8 * 3 * 7168 * 2048
    w = parallel.dp_decode_terms(m, 64, 1, 8, 1, 1024, 1.0, 1.0)
    assert w["gemm_flops"] == pytest.approx(8 * 2 * (m.matmul_params_active - a_r) + LAMBDA * 64 * 2 * a_r / 8)


def test_dp_throughput_prefills_every_prompt_one_rank_at_a_time():
    # B·s_out / (B·(max(pf_cmp, pf_mem/B) + pf_elem + pf_comm) + s_out·TPOT), B the replica's prompts (not B/8)
    B, s_in, s_out = 1024, 1024, 2048
    e = I.estimate(DSV3, "h200", 8, B, s_in, s_out, "fp8", tp=8, attention="dp")
    b = e.breakdown
    pf = max(b["prefill_compute_s"], b["prefill_memory_s"] / B) + b["prefill_elementwise_s"] + b["prefill_comm_s"]
    assert e.tokens_per_s == pytest.approx(B * s_out / (B * pf + s_out * e.tpot_s), rel=1e-12)
    per_rank = I.estimate(DSV3, "h200", 8, B // 8, s_in, s_out, "fp8", tp=8, attention="dp")
    assert e.tokens_per_s < 8 * per_rank.tokens_per_s       # eight ranks' prefills do not overlap


def test_dp_rows_are_evaluated_with_their_layout_and_kv_format():
    v = I.validation_table().set_index("id")
    runs = published_results()
    dp = [rid for rid, e in runs.items() if e.get("attention") == "dp"]
    assert len(dp) >= 3
    for rid in dp:
        assert v.loc[rid, "set"] in ("check", "held-out") and math.isfinite(v.loc[rid, "error"])
    assert v.loc["trtllm-dsr1-h200-adp-1024", "set"] == "check"
    assert v.loc["trtllm-dsr1-b200-adp-3072", "set"] == "held-out"


def test_a_bad_set_is_a_catalogue_error_naming_the_key(tmp_path):
    bad = tmp_path / "runs.toml"
    bad.write_text('[x]\nname = "x"\nmodel = "deepseek-v3"\nchip = "h200"\nn_chips = 8\nbatch = 8\n'
                   'input_len = 8\noutput_len = 8\nprecision = "fp8"\nmetric = "tokens_per_s_per_chip"\n'
                   'reported = { value = 1, src = "trtllm-deepseek-r1-best-perf" }\nrole = "target"\n'
                   'set = "train"\n')
    with pytest.raises(CatalogueError, match="set"):
        published_results(bad)


def _kv_row(tmp_path, extra):
    f = tmp_path / "runs.toml"
    f.write_text('[x]\nname = "x"\nmodel = "qwen3-235b-a22b"\nchip = "h200"\nn_chips = 8\ntp = 8\n' + extra +
                 'input_len = 1000\noutput_len = 1000\nprecision = "fp8"\nkv_precision = "fp8"\n'
                 'metric = "tokens_per_s_per_chip"\n'
                 'reported = { value = 1, src = "trtllm-perf-overview-v1" }\nrole = "target"\n')
    return published_results(f)["x"]["batch"]


def test_kv_capacity_batch_is_what_the_cache_holds_capped_a_rank(tmp_path):
    # trtllm-bench queues every request: the batch is the KV cache's capacity at ISL+OSL, capped at 4,096
    fits = I.estimate("qwen3-235b-a22b", "h200", 8, 1, 1000, 1000, "fp8", tp=8, kv_precision="fp8").max_batch_size
    assert fits > 64
    assert _kv_row(tmp_path, 'batch = "kv-capacity"\nbatch_cap = 4096\n') == min(fits, 4096)
    assert _kv_row(tmp_path, 'batch = "kv-capacity"\nbatch_cap = 64\n') == 64              # the cap binds
    # attention DP: each of the 8 chips is a rank with its own cap (8 x 64 sequences at most)
    dp = I.estimate("qwen3-235b-a22b", "h200", 8, 1, 1000, 1000, "fp8", tp=8, kv_precision="fp8",
                    attention="dp").max_batch_size
    assert _kv_row(tmp_path, 'attention = "dp"\nbatch = "kv-capacity"\nbatch_cap = 64\n') == min(dp, 512)
    assert _kv_row(tmp_path, 'batch = 96\n') == 96                                         # a published batch stays


@pytest.mark.parametrize("extra", ['batch = "kv-capacity"\n', 'batch = "kv-capacity"\nbatch_cap = 0\n',
                                   'batch = 96\nbatch_cap = 4096\n'])
def test_kv_capacity_needs_a_positive_cap_and_a_cap_needs_it(tmp_path, extra):
    with pytest.raises(CatalogueError, match="batch_cap"):
        _kv_row(tmp_path, extra)


def test_moe_rows_cover_three_families_and_the_overview_rows_are_held_out():
    runs = published_results()
    moe = {e["model"] for e in runs.values() if get_model(e["model"]).moe is not None}
    assert {"deepseek-v3", "qwen3-235b-a22b", "llama-4-maverick"} <= moe
    ovw = [e for rid, e in runs.items() if rid.startswith("trtllm-ovw-")]
    assert len(ovw) == 7 and all(e["set"] == "held-out" and e["input_len"] == e["output_len"] == 1000 for e in ovw)
