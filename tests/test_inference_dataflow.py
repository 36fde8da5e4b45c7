"""Dataflow chips' single-user speed (flagged where out of the model's reach, Groq's published chip-to-chip
terms) and DeepSeek-V3's data-parallel attention + expert-parallel layout (issue 15)."""

import math

import pytest

from accelbook import inference as I
from accelbook.inference import dataflow, parallel
from accelbook.specs.chips import MEMORY_RESERVE, get_chip, usable_memory_bytes
from accelbook.specs.models import get_model
from accelbook.ui import charts

# -- flags: a speed out of the model's reach is said, never passed off as a prediction ---------------------

def test_one_wafer_on_8b_is_flagged_against_cerebras_published_speed():
    # 16 GB of bf16 weights at 21 PB/s: about 1.2 million tokens/s; Cerebras published 1,800
    e = I.estimate("llama-3.1-8b", "cerebras-cs3", 1, 1, 128, 128, "bf16")
    assert e.tokens_per_s_per_user > 1e6
    assert "out of the model's reach" in e.flag and "1,800" in e.flag and "per-layer latency" in e.flag


def test_four_wafers_on_70b_are_flagged():
    e = I.estimate("llama-3.1-70b", "cerebras-cs3", 4, 1, 128, 128, "bf16", tp=1, pp=4)
    assert e.flag and "2,100" in e.flag      # the fastest published on a model no larger (70B, Oct 2024)


def test_cerebras_405b_row_is_flagged_and_out_of_every_error_band():
    v = I.validation_table().set_index("id")
    row = v.loc["cerebras-405b-user"]
    assert row["flag"].startswith("out of the model's reach") and "out of the model's reach" in row["note"]
    assert v.loc["groq-llama2-70b-user", "flag"] == ""
    flagged = v.assign(role="target")          # every row a target: the flagged one still may not count
    band = I.error_band("tokens_per_s_per_user", flagged)
    assert band.n == 1 and band.hi < 0.5


def test_lp30_has_no_published_speed_so_it_is_flagged():
    e = I.estimate("llama-3.1-70b", "groq-lp30", 256, 1, 1024, 256, "fp8", tp=4, pp=64)
    assert "no single-user speed" in e.flag


def test_gpus_are_never_flagged():
    assert I.estimate("llama-3.1-8b", "h100", 1, 1, 128, 128, "bf16").flag == ""


def test_flag_threshold_is_one_and_a_half_times_the_fastest_published():
    # Groq LPU v1, Llama 2 70B: published 100 and 300 on it, 480 on the smaller Mixtral 8x7B
    assert dataflow.plausibility("groq-lpu-v1", "llama-2-70b", 1.5 * 480) == ""
    assert dataflow.plausibility("groq-lpu-v1", "llama-2-70b", 1.5 * 480 + 1)
    assert dataflow.plausibility("h200", "llama-2-70b", 1e9) == ""


# -- Groq LPU v1's chip-to-chip terms from ISCA 2022 (latency bound) and Linley 2020 (link) ---------------

def test_groq_hop_is_the_isca_2022_bound_and_the_link_is_one_c2c_link():
    lt = dataflow.link_terms("groq-lpu-v1")
    assert lt.hop_s == 3e-6 and lt.link_bytes_per_s == 14e9 and lt.upper_bound
    e = I.estimate("llama-2-70b", "groq-lpu-v1", 640, 1, 128, 128, "fp16", tp=8, pp=80)
    # one layer a stage, two ring all-reduces of 2·7 steps at 3 µs
    assert e.breakdown["allreduce_fixed_s"] == pytest.approx(2 * 2 * 7 * 3e-6)
    assert any("UPPER BOUND" in a for a in e.assumptions)


def test_groq_70b_within_one_and_a_half_of_the_published_speed():
    v = I.validation_table().set_index("id")
    pred, rep = v.loc["groq-llama2-70b-user", ["predicted", "reported"]]
    assert 1 / 1.5 <= pred / rep <= 1.5      # was 202 against 100 (2.02x) with a 2 µs estimated hop


# -- charts draw flagged points hollow, with the reason -------------------------------------------------------

def test_frontier_chart_draws_flagged_points_hollow_with_the_reason():
    front = I.frontier("llama-3.1-70b", {"8 × H200": ("h200", 8), "4 × CS-3": ("cerebras-cs3", 4)}, 1024, 256, "bf16")
    assert (front.loc[front.system == "4 × CS-3", "flag"] != "").all()
    assert (front.loc[front.system == "8 × H200", "flag"] == "").all()
    spec = charts.frontier_chart(front, 100).to_dict()
    text = str(spec)
    assert "datum.out_of_reach" in text and "'filled': False" in text
    note = " ".join(spec["datasets"]["note"][i]["line"] for i in range(len(spec["datasets"]["note"])))
    assert "4 × CS-3" in note and "out of the model's reach" in note


def test_nb07_dashboard_says_which_systems_are_out_of_reach():
    from accelbook.ui.dashboards.nb07_inference_asics import frontier_view
    v = frontier_view("llama-2-70b", ("8 × H200", "4 × Cerebras CS-3"), 1024, 256, "fp8", 256)
    assert "out of the model's reach" in v.summary and "4 × Cerebras CS-3" in v.summary


def test_nb06_dashboard_says_the_speed_is_out_of_reach():
    from accelbook.ui.dashboards.nb06_inference_prefill_decode import inference_view
    v = inference_view("llama-3.1-8b", "cerebras-cs3", 1, 1, 1, 1024, 256, "bf16")
    assert "out of the model's reach" in v.summary


# -- DeepSeek-V3: data-parallel attention with expert parallelism ---------------------------------------------

def _dsv3_dp_max_batch():
    m, h200 = get_model("deepseek-v3"), get_chip("h200")
    w_exp = 58 * 256 * 3 * 7168 * 2048
    w_chip = (m.params - w_exp) + w_exp / 8                    # fp8: one byte a weight
    kv_seq = 61 * (512 + 64) * 1 * (4096 + 1024)              # fp8 latent + rope key per token
    return 8 * math.floor((usable_memory_bytes(h200.memory_bytes, MEMORY_RESERVE) - w_chip) / kv_seq)


def test_routed_expert_params_of_deepseek_v3():
    assert parallel.routed_expert_params(get_model("deepseek-v3")) == 58 * 256 * 3 * 7168 * 2048


def test_dp_attention_raises_deepseek_v3_max_batch():
    tp = I.estimate("deepseek-v3", "h200", 8, 1, 4096, 1024, "fp8")
    dp = I.estimate("deepseek-v3", "h200", 8, 1, 4096, 1024, "fp8", attention="dp")
    assert tp.max_batch_size == 287                  # the latent KV copied on every rank (H200: 143,771 MiB)
    assert dp.max_batch_size == _dsv3_dp_max_batch() > 5 * tp.max_batch_size
    assert dp.config["attention"] == "dp" and dp.breakdown["allreduce_fixed_s"] == 0.0


def test_dp_attention_all_to_all_hand_number():
    # one token's bf16 activations to 8 experts over 8 ranks: 2·(114,688·7/8 / 450e9 + 7·1 µs)
    t = parallel.expert_all_to_all_s(get_model("deepseek-v3"), 1, 8, 1e-6, 450e9)
    assert t == pytest.approx(2 * (8 * 7168 * 2 * 7 / 8 / 450e9 + 7e-6))
    assert parallel.expert_all_to_all_s(get_model("deepseek-v3"), 1, 1, 1e-6, 450e9) == 0.0


def test_dp_attention_needs_a_moe_model_and_is_selectable_in_sweep():
    with pytest.raises(ValueError, match="mixture-of-experts"):
        I.estimate("llama-3.1-70b", "h200", 8, 1, 1024, 256, "fp8", attention="dp")
    with pytest.raises(ValueError, match="attention must be"):
        I.estimate("deepseek-v3", "h200", 8, 1, 1024, 256, "fp8", attention="ep")
    df = I.sweep("deepseek-v3", "h200", 8, 4096, 1024, "fp8", attention="dp", batches=[256, 1024])
    assert not df.empty and set(df["attention"]) == {"dp"}
    assert df.loc[(df.tp == 8) & (df.pp == 1), "batch"].max() == 1024
    tp = I.sweep("deepseek-v3", "h200", 8, 4096, 1024, "fp8", batches=[512, 1024])
    assert tp.loc[(tp.tp == 8) & (tp.pp == 1)].empty     # the copied latent caps TP8 at 287 sequences


def test_dp_attention_reads_less_kv_per_chip_at_a_large_batch():
    tp = I.estimate("deepseek-v3", "h200", 8, 200, 4096, 1024, "fp8")
    dp = I.estimate("deepseek-v3", "h200", 8, 200, 4096, 1024, "fp8", attention="dp")
    assert dp.breakdown["kv_per_chip_bytes"] < tp.breakdown["kv_per_chip_bytes"] / 7
