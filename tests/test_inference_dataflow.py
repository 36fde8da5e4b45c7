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

def _llama31_8b_read_bytes():
    # bf16 weights a decode step reads: 32 layers (q, o 4096²; k, v 4096·1024; three FFN 4096·14336), the LM
    # head, 2·32 + 1 norms of 4096 and the token's one embedding row
    per_layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
    return (32 * per_layer + 4096 * 128256 + (2 * 32 + 1) * 4096 + 4096) * 2


def test_one_wafer_on_8b_reads_one_layer_region_at_a_time_and_is_still_flagged():
    # 15.0 GB at 0.85 x 21 PB/s is 0.84 µs with every core reading (the roofline, 1.18 M tokens/s); mapped
    # layer by layer onto 32 regions, one region reads at a time: 32 x 0.84 = 26.9 µs; Cerebras published 1,800
    e = I.estimate("llama-3.1-8b", "cerebras-cs3", 1, 1, 128, 128, "bf16")
    roof = _llama31_8b_read_bytes() / (0.85 * 21e15)
    assert e.breakdown["decode_weights_read_s"] == pytest.approx(32 * roof)
    assert 1 / e.breakdown["decode_roofline_tpot_s"] > 1e6 > e.tokens_per_s_per_user > 30_000
    assert any("UPPER BOUND" in a and "1,18" in a for a in e.assumptions)
    assert "out of the model's reach" in e.flag and "1,800" in e.flag and "per-layer latency" in e.flag
    assert "hop latency and clock are not published" in e.flag      # the missing figure, named


def test_layers_per_region_is_layers_per_wafer_and_one_off_the_wafer():
    assert dataflow.layers_per_region(get_chip("cerebras-cs3"), get_model("llama-3.1-8b"), 1) == 32
    assert dataflow.layers_per_region(get_chip("cerebras-cs3"), get_model("llama-3.1-70b"), 4) == 20
    assert dataflow.layers_per_region(get_chip("cerebras-cs3"), get_model("llama-3.1-8b"), 32) == 1
    assert dataflow.layers_per_region(get_chip("groq-lpu-v1"), get_model("llama-2-70b"), 8) == 1   # whole chip
    assert dataflow.layers_per_region(get_chip("h100"), get_model("llama-2-70b"), 1) == 1
    assert dataflow.mapping("groq-lpu-v1").placement == "chip" and dataflow.mapping("h100") is None


# -- SambaNova SN40L: weights served from HBM at the vendor's decode share (DAC 2025) -------------------------

def _llama31_405b_read_bytes():
    per_layer = 2 * 16384 * 16384 + 2 * 16384 * 1024 + 3 * 16384 * 53248
    return (126 * per_layer + 16384 * 128256 + (2 * 126 + 1) * 16384 + 16384) * 2


def test_sn40l_streams_weights_from_hbm_at_the_vendor_share():
    tt = dataflow.tier_terms("sn40l")
    assert tt.weights_tier == "hbm" and tt.decode_bw_share == 0.75
    e = I.estimate("llama-3.1-405b", "sn40l", 16, 1, 128, 128, "bf16", tp=16)
    # 807.5 GB over 16 sockets at 0.75 x 1.6 TB/s: 42.06 ms; no all-reduce latency beside the share
    assert e.breakdown["decode_weights_read_s"] == pytest.approx(_llama31_405b_read_bytes() / 16 / (0.75 * 1.6e12))
    assert e.breakdown["allreduce_fixed_s"] == 0.0
    assert 20 < e.tokens_per_s_per_user < 24


def test_sn40l_speed_below_the_published_one_is_flagged_with_the_missing_mechanism():
    e = I.estimate("llama-3.1-405b", "sn40l", 16, 1, 128, 128, "bf16", tp=16)
    assert "below 1/1.5" in e.flag and "129" in e.flag and "draft model" in e.flag
    # a batch of 2 is not a single-user run: no published speed to fall short of, nothing above 1,042 x 1.5
    assert I.estimate("llama-3.1-405b", "sn40l", 16, 2, 128, 128, "bf16", tp=16).flag == ""
    # 8B on 16 sockets: 15.0 GB at 16 x 0.75 x 1.6 TB/s = 0.78 ms, within 1.5x of SambaNova's 1,042
    e8 = I.estimate("llama-3.1-8b", "sn40l", 16, 1, 128, 128, "bf16", tp=16)
    assert e8.breakdown["decode_weights_read_s"] == pytest.approx(_llama31_8b_read_bytes() / 16 / 1.2e12)
    assert e8.flag == "" and 1042 / 1.5 < e8.tokens_per_s_per_user < 1.5 * 1042


def test_plausibility_checks_n_chips_and_only_a_run_on_as_many_chips_falls_short():
    assert dataflow.plausibility("sn40l", "llama-3.1-405b", 87, n_chips=16) == ""        # 129 / 1.5 = 86
    assert "below" in dataflow.plausibility("sn40l", "llama-3.1-405b", 85, n_chips=16)
    assert dataflow.plausibility("sn40l", "llama-3.1-405b", 10, n_chips=8) == ""          # none on 8 published
    assert dataflow.plausibility("sn40l", "llama-3.1-405b", 10) == ""
    with pytest.raises(ValueError, match="n_chips"):
        dataflow.plausibility("sn40l", "llama-3.1-405b", 10, n_chips=0)


def test_sweep_flags_the_batch_one_point_only():
    df = I.sweep("llama-3.1-405b", "sn40l", 16, 128, 128, "bf16", batches=[1, 8])
    one = df[(df.tp == 16) & (df.pp == 1)].set_index("batch")
    assert "below 1/1.5" in one.loc[1, "flag"] and one.loc[8, "flag"] == ""


def test_four_wafers_on_70b_are_flagged():
    e = I.estimate("llama-3.1-70b", "cerebras-cs3", 4, 1, 128, 128, "bf16", tp=1, pp=4)
    assert e.flag and "2,100" in e.flag      # the fastest published on a model no larger (70B, Oct 2024)


def test_cerebras_and_sn40l_rows_are_flagged_and_out_of_every_error_band():
    v = I.validation_table().set_index("id")
    for rid in ("cerebras-405b-user", "cerebras-8b-user", "cerebras-70b-user", "sn40l-405b-user", "sn40l-70b-user"):
        assert v.loc[rid, "flag"].startswith("out of the model's reach") and "out of the model's reach" in v.loc[rid, "note"]
    for rid in ("groq-llama2-70b-user", "groq-llama2-70b-user-2024", "sn40l-8b-user"):
        assert v.loc[rid, "flag"] == ""
    sram = v[~v["chip"].isin(["h100", "h200", "a100", "b200"])]      # the SRAM chips' rows (GPU rows have their own)
    flagged = sram.assign(role="target")       # every row a target: the flagged ones still may not count
    band = I.error_band("tokens_per_s_per_user", flagged)
    assert band.n == 3          # Groq 2023 (+31 %), Groq 2024 (-56 %), SN40L 8B (+20 %)


def test_lp30_has_no_published_speed_so_it_is_flagged():
    e = I.estimate("llama-3.1-70b", "groq-lp30", 256, 1, 1024, 256, "fp8", tp=4, pp=64)
    assert "no single-user speed" in e.flag


def test_gpus_are_never_flagged():
    assert I.estimate("llama-3.1-8b", "h100", 1, 1, 128, 128, "bf16").flag == ""


def test_flag_threshold_is_one_and_a_half_times_the_fastest_published():
    # Groq LPU v1: published 100 and 300 on Llama 2 70B itself, 480 on the smaller Mixtral 8x7B
    assert dataflow.plausibility("groq-lpu-v1", "llama-2-70b", 1.5 * 300) == ""
    assert dataflow.plausibility("groq-lpu-v1", "llama-2-70b", 1.5 * 300 + 1)      # its own speeds bound it first
    assert dataflow.plausibility("groq-lpu-v1", "llama-3.1-70b", 1.5 * 480) == ""   # nothing on it: the smaller ones
    assert dataflow.plausibility("groq-lpu-v1", "llama-3.1-70b", 1.5 * 480 + 1)
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


def test_weights_streamed_onto_a_wafer_arrive_at_the_stream_rate_not_a_region_rate():
    # Llama 3.1 405B on 4 CS-3 streaming at 5 TB/s each (a what-if): a stage reads its quarter, 807.5 GB / 4,
    # at 5 TB/s, 40.4 ms, whatever region of the wafer the weights feed
    e = I.estimate("llama-3.1-405b", "cerebras-cs3", 4, 1, 1024, 256, "bf16", tp=1, pp=4,
                   weight_streaming_bytes_per_s=5e12)
    assert e.breakdown["decode_weights_read_s"] == pytest.approx(_llama31_405b_read_bytes() / 4 / 5e12)


@pytest.mark.parametrize("old, new, key", [
    ('\nuse = "bound"', '\nuse = "maybe"', "use"),
    ('\nplacement = "region"', '\nplacement = "wafer"', "placement"),
    ('weights_tier = "hbm"', 'weights_tier = "flash"', "weights_tier"),
    ('decode_bw_share = { value = 0.75,', 'decode_bw_share = { value = 1.75,', "decode_bw_share"),
    ('n_chips = 16', 'n_chips = 0', "n_chips"),
])
def test_malformed_dataflow_file_names_the_key(tmp_path, old, new, key):
    from accelbook.specs.loader import DATA_DIR, CatalogueError
    text = (DATA_DIR / "dataflow.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "dataflow.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(CatalogueError) as err:
        dataflow._load(path)
    assert err.value.key == key and "dataflow.toml" in str(err.value)
