"""Issue 33: the public functions that still let bad input through.

One test per example of the issue this file's fix covers (each failed before it: a result for invalid
input, a bare exception from deep inside, or an error that names no argument), then hypothesis
properties per sub-package: any one bad value (None, text, -1, 0, NaN, infinity, 1e30, True) in any one
argument of a few representative public functions is a ``ValueError`` or ``TypeError`` whose message
names that argument.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import accelbook as ab
from accelbook import files, inference, moe
from accelbook.chip import design as chipdesign
from accelbook.chip import number_formats as nf
from accelbook.economics import claim_checks, claims, cost, tco
from accelbook.inference.serving import simulate
from accelbook.inference.step import StepCost
from accelbook.inference.workload import ServingWorkload, workload
from accelbook.network import collectives, paths
from accelbook.network import topology as tp
from accelbook.specs.clusters import get_cluster
from accelbook.sweep import chip_design as sweep_chip_design
from accelbook.sweep import frontier as sweep_frontier
from accelbook.sweep import serving_mc
from accelbook.sweep import training_layouts as sweep_training
from accelbook.training.layouts import search_space

ERRORS = (ValueError, TypeError)
COST = StepCost(fixed_s=1e-4, weight_read_s=5e-3, per_token_s=1e-5, comm_per_token_s=1e-7,
                decode_per_ctx_token_s=1e-8, prefill_attn_per_token_s=1e-8, max_batch=64, max_kv_tokens=100_000)
W = workload(20, 5.0, seed=0)


@pytest.fixture(autouse=True)
def _no_registered_leftovers():
    yield
    ab.clear_registered()


def _raises(fn, name: str, errors=ERRORS):
    """``fn()`` raises one of ``errors`` whose message names ``name``."""
    with pytest.raises(errors) as info:
        fn()
    assert name in str(info.value), f"{name!r} not in {info.value}"
    return info.value


# -- with_changes and register: the loader's checks on objects ------------------------------------------------------
@pytest.mark.parametrize("field, value", [("domain_bw_bytes_per_s", 0), ("network_efficiency", 1.5),
                                          ("domain_chips", 0), ("domain_chips", 2.5), ("torus_dims", 1),
                                          ("network_bw_bytes_per_s", 1e30)])
def test_cluster_with_changes_checks_as_the_loader(field, value):
    _raises(lambda: get_cluster("dgx-h100").with_changes(**{field: value}), field, ValueError)


def test_cluster_with_changes_still_makes_a_valid_what_if():
    c = get_cluster("dgx-h100").with_changes(network_bw_bytes_per_s=100e9, network_efficiency=0.5)
    assert (c.network_bw_bytes_per_s, c.network_efficiency) == (100e9, 0.5)


def _my_chip(**changes):
    return dataclasses.replace(ab.get_chip("h100"), id="my-h100", name="My H100", aliases=(), **changes)


def _my_model(**changes):
    return dataclasses.replace(ab.get_model("llama-3.1-8b"), id="my-8b", name="My 8B", aliases=(), **changes)


def test_register_refuses_a_chip_with_negative_peak_or_bandwidth():
    _raises(lambda: ab.register(_my_chip(peak_dense_flop_s={"bf16": -1e15})), "peak_dense_flop_s", ValueError)
    _raises(lambda: ab.register(_my_chip(hbm_bw_bytes_per_s=-3e12)), "hbm_bw_bytes_per_s", ValueError)
    _raises(lambda: ab.register(_my_chip(kind="gpu?")), "kind", ValueError)
    with pytest.raises(KeyError):
        ab.get_chip("my-h100")                              # all or nothing: nothing was registered


def test_register_refuses_a_model_with_zero_layers_or_bad_mla():
    _raises(lambda: ab.register(_my_model(n_layers=0)), "n_layers", ValueError)
    _raises(lambda: ab.register(_my_model(d_ff=10**30)), "d_ff", ValueError)
    mla = ab.get_model("deepseek-v3").mla
    _raises(lambda: ab.register(_my_model(mla=dataclasses.replace(mla, kv_lora_rank=0))), "kv_lora_rank", ValueError)


def test_register_refuses_replace_that_is_not_a_boolean():
    _raises(lambda: ab.register(_my_chip(), replace="yes"), "replace", TypeError)
    assert ab.register(_my_chip(), replace=False)[0].id == "my-h100"   # a valid object still registers


def test_a_models_file_with_mla_ranks_zero_is_refused_at_load(tmp_path):
    from accelbook.specs.loader import CatalogueError
    from accelbook.specs.models import load_models
    p = tmp_path / "mine.toml"
    p.write_text('[mine]\nname = "Mine"\nfamily = "x"\nn_layers = 2\nd_model = 64\nn_heads = 4\nd_ff = 128\n'
                 'vocab_size = 100\nffn = "swiglu"\nmla = { q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, '
                 'qk_rope_head_dim = 0, v_head_dim = 0 }\n', encoding="utf-8")
    err = _raises(lambda: load_models(p), "kv_lora_rank", CatalogueError)
    assert "mine.toml" in str(err) and "[mine]" in str(err)


def test_the_loader_and_register_share_one_check():
    from accelbook.specs.chips import check_chip
    from accelbook.specs.models import check_model
    assert all(check_chip(c) is c for c in ab.specs.chips.all_chips())
    assert all(check_model(m) is m for m in ab.specs.models.all_models())


# -- number formats: catalogue names -----------------------------------------------------------------------------
def test_number_formats_take_catalogue_names():
    by_name = nf.decode_step("llama-3.1-8b", "h100", "fp8-e4m3", "bf16", 8192, 1)
    by_obj = nf.decode_step(ab.get_model("llama-3.1-8b"), ab.get_chip("h100"), "fp8-e4m3", "bf16", 8192, 1)
    assert by_name == by_obj
    assert nf.decode_speedup("llama-3.1-8b", "h100", "fp8-e4m3", "bf16", 8192, 1) > 1
    assert nf.peak_flop_s("h100", "fp8-e4m3") == ab.get_chip("h100").peak_flop_s("fp8")
    assert nf.compute_precision("h100", "int4") == "bf16"            # widened: H100 has no int4 peak
    assert nf.serving_memory("llama-3.1-8b", "bf16", "bf16", 1, 1)["weights_bytes"] == 2 * ab.get_model("llama-3.1-8b").params
    assert nf.kv_elements_per_token("llama-3.1-8b") == 2 * 32 * 8 * 128     # 2·L·H_kv·d_h
    assert len(nf.peak_table(["h100"])) == len(nf.TEACHING_FORMATS)
    _raises(lambda: nf.decode_step("llama-9", "h100", "bf16", "bf16", 8192, 1), "model")


def test_precision_sweep_raises_for_an_unknown_format_instead_of_an_empty_table():
    _raises(lambda: nf.precision_sweep("llama-3.1-8b", "h100", kv_format="bogus"), "kv_format")
    _raises(lambda: nf.precision_sweep("llama-3.1-8b", "h100", ids=["nope"]), "ids")
    assert len(nf.precision_sweep("llama-3.1-8b", "tpu-v5p")) >= 1      # formats a chip cannot compute: left out


# -- economics: precision always checked ---------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: cost.implied_mfu(3000.0, "llama-3.1-8b", "h100", precision="bogus"),
    lambda: cost.training_tokens_per_s("llama-3.1-8b", "h100", 0.4, precision="bogus"),
    lambda: cost.implied_params(3000.0, 0.4, "h100", precision="bogus"),
    lambda: cost.peak_flop_per_usd("h100", precision="bogus"),
    lambda: cost.training_cost_table("llama-3.1-8b", ["h100"], 0.4, precision="bogus"),
])
def test_precision_is_checked_even_with_the_bf16_peak(call):
    _raises(call, "precision", ValueError)


# -- inference ----------------------------------------------------------------------------------------------------
def test_estimate_refuses_an_empty_kv_precision():
    _raises(lambda: inference.estimate("llama-3.1-8b", "h100", 1, 1, 1024, 256, kv_precision=""), "kv_precision")


def test_max_throughput_refuses_unknown_keywords_before_the_sweep():
    _raises(lambda: inference.max_throughput("llama-3.1-8b", "h100", 8, 1024, 256, batchez=[1]), "batchez", TypeError)
    _raises(lambda: inference.max_throughput("llama-3.1-8b", "h100", 8, 1024, 256, layout="x"), "layout")


def test_max_throughput_takes_the_sweeps_layout_and_batches():
    e = inference.max_throughput("llama-3.1-8b", "h100", 8, 1024, 256, layout=(8, 1), batches=[1, 4])
    assert (e.config["tp"], e.config["pp"], e.config["batch_size"]) == (8, 1, 4)   # the larger batch: more tokens/chip


def test_serving_workload_names_a_text_argument():
    _raises(lambda: ServingWorkload("ab", [1], [1]), "arrival_s")
    _raises(lambda: ServingWorkload([0.0], ["8"], [1]), "prompt_len")
    _raises(lambda: ServingWorkload([0.0], [1], None), "output_len")


@pytest.mark.parametrize("kw, name", [(dict(block_tokens="x"), "block_tokens"), (dict(n_prefill=0), "n_prefill"),
                                      (dict(kv_bytes_per_token=-1.0), "kv_bytes_per_token"),
                                      (dict(link_bytes_per_s="fast"), "link_bytes_per_s")])
def test_simulate_checks_arguments_its_mode_ignores(kw, name):
    _raises(lambda: simulate(W, COST, **kw), name)


def test_iteration_s_refuses_negative_counts():
    _raises(lambda: COST.iteration_s(n_dec=-1), "n_dec", ValueError)
    _raises(lambda: COST.iteration_s(ctx_tokens=1.5), "ctx_tokens", ValueError)
    assert COST.iteration_s(2, 100, 0) == pytest.approx(1e-4 + 5e-3 + 2 * 1e-7 + 100 * 1e-8)   # the docstring's formula


# -- sweeps' built-in point functions: no int() truncation ---------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda: serving_mc.serving_point(2.0, 512, 0, n_requests=1.5), "n_requests"),
    (lambda: serving_mc.serving_point(2.0, 512.5, 0), "chunk_tokens"),
    (lambda: serving_mc.simulate_point(2.0, 512, 0.5), "seed"),
    (lambda: sweep_frontier.frontier_point("h100", "llama-3.1-8b", "bf16", 1.5, 1024), "batch"),
    (lambda: sweep_training.layout_point("llama-3.1-8b", "h100", 8.5), "n_chips"),
    (lambda: sweep_chip_design.design_point(814.0, 700.0, "decode-8192", decode_batch=6.4), "decode_batch"),
])
def test_sweep_points_refuse_non_whole_values(call, name):
    _raises(call, name, ValueError)


def test_sweep_points_take_whole_floats_from_a_grid():
    r = serving_mc.simulate_point(2.0, 512.0, 0.0, n_requests=20.0)
    assert len(r.ttft_s) == 20


# -- network ------------------------------------------------------------------------------------------------------
def test_hop_stats_and_link_loads_name_their_arguments():
    _raises(lambda: paths.hop_stats(None), "topo", TypeError)
    _raises(lambda: paths.dor_link_loads(tp.torus((4, 4)), "uniform", seed="x"), "seed")
    _raises(lambda: paths.link_loads(tp.torus((4, 4)), "uniform", seed=-1), "seed")


def test_bus_factor_refuses_a_negative_rank_count():
    _raises(lambda: collectives.bus_factor("all_reduce", -1), "p", ValueError)
    assert collectives.bus_factor("all_reduce", 4) == 2 * 3 / 4


# -- training and moe ----------------------------------------------------------------------------------------------
def test_search_space_refuses_zero_chips():
    _raises(lambda: search_space(ab.get_model("llama-3.1-8b"), 0), "n", ValueError)
    _raises(lambda: search_space("llama-3.1-8b", 8, max_tp=0), "max_tp", ValueError)


def test_exp_noise_refuses_a_negative_seed_and_huge_shapes():
    _raises(lambda: moe.exp_noise(-1, 0, 4, 4), "seed", ValueError)
    _raises(lambda: moe.exp_noise(0, 0, 10**6, 10**6), "exp_noise", ValueError)
    assert moe.exp_noise(0, 0, 4, 4).shape == (4, 4)


def test_flops_per_token_names_a_text_seq_len():
    _raises(lambda: ab.get_model("llama-3.1-8b").flops_per_token("8"), "seq_len", ValueError)
    m = ab.get_model("llama-3.1-8b")
    assert m.flops_per_token(4096.0) == m.flops_per_token(4096)


# -- economics: claims and TCO -------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda: claims.price_performance("h100", "b200", 0.5, 2.0, 0.4, 0), "mfu_b"),
    (lambda: claims.price_performance("h100", "b200", -1, 2.0, 0.4, 0.4), "low"),
    (lambda: claims.price_range("h100", 0, 2, "b200", 3, 4), "low_a"),
    (lambda: claims.price_range("h100", 1, 2, "b200", 4, 3), "low_b"),
    (lambda: claims.tokens_and_mfu("h100", 1000, -0.4, "b200", 1000, 0.4), "mfu_a"),
    (lambda: claims.generation_price_performance("b200", "h100", 0, 2), "claimed"),
    (lambda: claims.memory_per_group("h100", 0, "b200", 8, 1536), "claimed_a_gb"),
    (lambda: claim_checks.system_totals("h100", 8, {"hbm_bytes": -1}), "hbm_bytes"),
    (lambda: claim_checks.ratio_within({"chip": "h100", "quantity": "hbm_bw"},
                                       {"chip": "a100", "quantity": "hbm_bw"}, 2, 1), "low"),
    (lambda: claim_checks.torus_diameter(0, 3), "n_chips"),
])
def test_claims_checks_refuse_zero_or_negative_prices_and_mfus(call, name):
    _raises(call, name, ValueError)


def test_own_cost_per_hour_has_a_lifetime_floor():
    _raises(lambda: tco.own_cost_per_hour(30_000, 1_000, lifetime_years=1e-30), "lifetime_years", ValueError)
    r = tco.own_cost_per_hour(30_000, 0, lifetime_years=0.1, cost_of_capital=0, overhead_share=0,
                              staff_usd_per_chip_year=0)
    assert r["usd_per_year"] == pytest.approx(300_000)        # 30,000 USD over a tenth of a year


def _claims_file(tmp_path, params: str):
    p = tmp_path / "my_claims.toml"
    p.write_text('[x]\nclaim = "c"\norigin = "o"\npublished = "p"\nevidence = []\ncheck = "price_range"\n'
                 f"params = {params}\n", encoding="utf-8")
    return p


def test_claims_file_with_text_params_names_file_and_key(tmp_path):
    _raises(lambda: claims.load_claims(_claims_file(tmp_path, '"x"')), "my_claims.toml", ValueError)
    err = _raises(lambda: claims.load_claims(_claims_file(tmp_path, '"x"')), "params", ValueError)
    assert "dictionary update" not in str(err)
    _raises(lambda: claims.load_claims(_claims_file(tmp_path, '{ chip_a = "h100" }')), "low_a", ValueError)


# -- chip design ----------------------------------------------------------------------------------------------------
def test_chip_design_names_area_grid_and_workloads():
    _raises(lambda: chipdesign.compare_8t_8i(area_mm2=1e-30), "area_mm2", ValueError)
    _raises(lambda: chipdesign.compare_8t_8i(training=chipdesign.DecodeWorkload()), "training", TypeError)
    err = _raises(lambda: chipdesign.best_design(chipdesign.TrainingWorkload(), grid_mm2=1e30), "grid_mm2", ValueError)
    assert "area_mm2 =" in str(err) and not str(err).startswith("area_mm2")


# -- user files ------------------------------------------------------------------------------------------------------
def test_files_helper_names_the_file_for_every_way_reading_fails(tmp_path):
    missing = tmp_path / "missing.json"
    _raises(lambda: files.read_json(missing), "missing.json", ValueError)
    utf16 = tmp_path / "utf16.json"
    utf16.write_bytes(json.dumps({"a": 1}).encode("utf-16"))
    _raises(lambda: files.read_json(utf16), "utf16.json", ValueError)
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    _raises(lambda: files.read_json(bad), "bad.json", ValueError)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    _raises(lambda: files.read_json(deep), "deep.json", ValueError)
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100 + "]" * 100, encoding="utf-8")
    _raises(lambda: files.read_json(nested), "nested.json", ValueError)        # past MAX_NESTING
    toml = tmp_path / "bad.toml"
    toml.write_text("a = ", encoding="utf-8")
    _raises(lambda: files.read_toml(toml), "bad.toml", ValueError)
    _raises(lambda: files.read_toml(tmp_path), str(tmp_path), ValueError)          # a folder
    _raises(lambda: files.read_text(None, "scenario"), "scenario", ValueError)
    ok = tmp_path / "ok.json"
    ok.write_text('{"a": [1, 2]}', encoding="utf-8")
    assert files.read_json(ok) == {"a": [1, 2]}


# -- properties: any one bad value in any one argument -----------------------------------------------------------
BAD = {"none": None, "text": "abc", "numeric_text": "8", "neg": -1, "zero": 0, "nan": math.nan, "inf": math.inf,
       "huge": 1e30, "true": True}
#: which bad values each argument must refuse (a count refuses 0, a seed takes it; a price refuses 1e30 only
#: where a bound is documented)
COUNT = ("none", "text", "numeric_text", "neg", "zero", "nan", "inf", "huge", "true")
SEED = ("none", "text", "numeric_text", "neg", "nan", "inf", "huge", "true")
POSITIVE = ("none", "text", "numeric_text", "neg", "zero", "nan", "inf", "true")
OBJECT = ("none", "neg", "zero", "nan", "inf", "huge", "true")      # a name or an object: a number is neither

TARGETS = {
    "specs": {
        "with_changes": (lambda **kw: get_cluster("dgx-h100").with_changes(**kw),
                         {"domain_chips": (8, COUNT), "network_efficiency": (0.8, POSITIVE + ("huge",)),
                          "domain_bw_bytes_per_s": (450e9, POSITIVE + ("huge",))}),
        "flops_per_token": (lambda **kw: ab.get_model("llama-3.1-8b").flops_per_token(**kw),
                            {"seq_len": (4096, COUNT)}),
    },
    "chip": {
        "decode_step": (nf.decode_step, {"model": ("llama-3.1-8b", OBJECT), "chip": ("h100", OBJECT),
                                         "weight_format": ("fp8-e4m3", OBJECT), "kv_format": ("bf16", OBJECT),
                                         "context": (8192, COUNT), "batch": (1, COUNT)}),
        "best_design": (chipdesign.best_design, {"workload": (chipdesign.TrainingWorkload(), OBJECT),
                                                 "area_mm2": (814.0, POSITIVE[1:]), "grid_mm2": (20.0, POSITIVE)}),
    },
    "network": {
        "dor_link_loads": (paths.dor_link_loads, {"topo": (tp.torus((4, 4)), OBJECT + ("text",)),
                                                  "traffic": ("uniform", OBJECT + ("text",)), "seed": (0, SEED)}),
        "bus_factor": (collectives.bus_factor, {"collective": ("all_reduce", OBJECT + ("text",)), "p": (8, COUNT)}),
    },
    "inference": {
        "estimate": (inference.estimate, {"model": ("llama-3.1-8b", OBJECT), "chip": ("h100", OBJECT),
                                          "n_chips": (1, COUNT), "batch_size": (1, COUNT), "input_len": (1024, COUNT),
                                          "output_len": (256, COUNT), "kv_precision": ("bf16", OBJECT[1:] + ("text",))}),
        "simulate": (simulate, {"workload": (W, OBJECT + ("text",)), "cost": (COST, OBJECT + ("text",)),
                                "chunk_tokens": (512, COUNT), "block_tokens": (16, COUNT),
                                "n_prefill": (1, COUNT), "link_bytes_per_s": (1e12, POSITIVE[:6] + ("true",))}),
    },
    "economics": {
        "implied_mfu": (cost.implied_mfu, {"tokens_per_s": (3000.0, POSITIVE), "model": ("llama-3.1-8b", OBJECT),
                                           "chip": ("h100", OBJECT), "seq_len": (4096, COUNT),
                                           "precision": ("bf16", OBJECT + ("text",))}),
        "own_cost_per_hour": (tco.own_cost_per_hour, {"purchase_usd": (30_000.0, POSITIVE[:4] + ("nan", "inf", "true")),
                                                      "tdp_w": (1_000.0, POSITIVE[:4] + ("nan", "inf", "true")),
                                                      "lifetime_years": (4.0, POSITIVE + ("huge",))}),
        "price_performance": (claims.price_performance, {"chip_a": ("h100", OBJECT), "chip_b": ("b200", OBJECT),
                                                         "low": (0.5, POSITIVE), "high": (2.0, POSITIVE),
                                                         "mfu_a": (0.4, POSITIVE + ("huge",)),
                                                         "mfu_b": (0.4, POSITIVE + ("huge",))}),
    },
    "moe": {
        "exp_noise": (moe.exp_noise, {"seed": (0, SEED), "batch": (0, SEED), "n_tokens": (4, COUNT),
                                      "n_experts": (4, COUNT)}),
    },
    "training": {
        "search_space": (search_space, {"model": ("llama-3.1-8b", OBJECT), "n": (8, COUNT), "max_tp": (8, COUNT)}),
    },
    "sweep": {
        "serving_point": (serving_mc.simulate_point, {"rate_per_s": (2.0, POSITIVE[:6] + ("true",)),
                                                      "chunk_tokens": (512, COUNT), "seed": (0, SEED[:-2] + ("true",)),
                                                      "n_requests": (20, COUNT)}),
    },
}


def _cases(package: str):
    return [(fn_name, arg, bad) for fn_name, (_, args) in TARGETS[package].items()
            for arg, (_, bads) in args.items() for bad in bads]


def _check_one_bad(package: str, case) -> None:
    fn_name, arg, bad = case
    fn, args = TARGETS[package][fn_name]
    kw = {k: v for k, (v, _) in args.items()}
    kw[arg] = BAD[bad]
    with pytest.raises(ERRORS) as info:
        fn(**kw)
    assert arg in str(info.value), f"{fn_name}({arg}={BAD[bad]!r}): {info.value}"


def _property(package: str):
    @settings(max_examples=2 * len(_cases(package)), deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
    @given(case=st.sampled_from(_cases(package)))
    def prop(case):
        _check_one_bad(package, case)
    prop.__name__ = f"test_any_bad_argument_is_named_{package}"
    return prop


test_any_bad_argument_is_named_specs = _property("specs")
test_any_bad_argument_is_named_chip = _property("chip")
test_any_bad_argument_is_named_network = _property("network")
test_any_bad_argument_is_named_inference = _property("inference")
test_any_bad_argument_is_named_economics = _property("economics")
test_any_bad_argument_is_named_moe = _property("moe")
test_any_bad_argument_is_named_training = _property("training")
test_any_bad_argument_is_named_sweep = _property("sweep")


def test_decode_attention_flops_follow_a_replaced_model_and_refuse_a_list():
    import dataclasses

    import accelbook as ab
    from accelbook.inference.parallel import decode_attention_flops_per_context_token as f
    from accelbook.specs.models import get_model

    m = get_model("llama-3.1-8b")
    # 2·(d_qk + d_v) a layer: 2·(32·128 + 32·128) = 16,384, times 32 layers
    assert f("llama-3.1-8b") == 32 * 16384
    with pytest.raises((ValueError, TypeError), match="model"):
        f([1, 2])
    try:
        ab.register(dataclasses.replace(m, n_layers=16), replace=True)
        assert f("llama-3.1-8b") == 16 * 16384          # not the cached value of the old model
    finally:
        ab.unregister("llama-3.1-8b")
    assert f("llama-3.1-8b") == 32 * 16384


def test_a_missing_or_unreadable_scenario_file_is_an_error_naming_it(tmp_path):
    from accelbook.ui.dashboard import Dashboard
    from accelbook.ui.dashboards import ALL_SPECS

    spec = ALL_SPECS[0]()
    with pytest.raises(ValueError, match="missing.json"):
        Dashboard(spec, scenario=str(tmp_path / "missing.json"))
    utf16 = tmp_path / "s.json"
    utf16.write_bytes('{"accelbook_scenario": 1}'.encode("utf-16"))
    with pytest.raises(ValueError, match="s.json"):
        Dashboard(spec, scenario=str(utf16))
