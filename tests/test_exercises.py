"""Exercise checkers: right answers pass, wrong ones get a hint and never the answer."""

from __future__ import annotations

import pytest

from accelbook.ui.exercises import EXERCISES, check

# Hand answers. ridge-h100: 989.4e12 / 3.35e12 = 295.3 FLOP/B; v5p-8-chip-gib: 8 x 95 GiB = 760 GiB;
# decode-bound: I ~ 1 FLOP/B << 295 -> memory; batch-to-ridge: I ~ T, so T ~ I* = 295 tokens;
# cost-v5p: 0.5 * 459e12 / 4.492e11 = 510.9 tok/s; (4.20/3600) / 510.9 * 1e6 = 2.284 USD per million tokens.
HAND = {
    "ridge-h100": 295.3,
    "ridge-higher": "h100",
    "v5p-8-chip-gib": 760,
    "decode-bound": "memory",
    "batch-to-ridge": 295,
    "cost-v5p": 2.284,
    # os-cycles-8: one fold of 8 + 8 + 8 - 2 = 22 cycles, reported as 21;
    # gemv-util: 4096^2 / ((1024 * 383 - 1) * 128^2) = 0.2611 %; waves-h100: ceil(18 * 18 / 132) = 3
    "os-cycles-8": 21,
    "gemv-util": 0.2611,
    "waves-h100": 3,
    # torus-diameter-16: 3 * 8 = 24; ring-busbw-h100: 0.82 * 450 = 369 GB/s (64 GB message: latency negligible);
    # small-allreduce-bound: 2 passes x 3 axes x 2 hops x 1 us = 12 us vs ~2 * 64 KiB * 3/4 / 180 GB/s ~ 0.6 us
    "torus-diameter-16": 24,
    "ring-busbw-h100": 369,
    "small-allreduce-bound": "latency",
    # nvls-busbw-h100: algbw = 8/9 x 0.82 x 0.85 x 450 = 278.8 GB/s; busbw = x 2*7/8 -> 487.9 GB/s
    "nvls-busbw-h100": 487.9,
    "model-state-70b": 1270,   # 70.55e9 parameters x 18 bytes (2 bf16 weights + 4 fp32 gradients + 12 Adam)
    "bubble-8-32": 17.95,      # 7 / (32 + 7)
    "days-405b": 70.3,         # 15.6e12 x 3·(2·403.75e9 + 126·8192·32768) / (16384 x 0.4 x 989.4e12) / 86400
    "moe-mean-load": 128,       # 4096 x 8 / 256
    "moe-nodes-per-token": 5.29,  # 8 x (1 - C(224,8)/C(256,8)) = 8 x (1 - 0.338)
    "moe-decode-bound": "latency",
    "lpu-chips-70b-int8": 307,  # 70.55e9 bytes / 230e6 = 306.7 -> 307
    "spec-tokens-per-step": 2.952,   # (1 - 0.4096) / 0.2
    "kv-bytes-70b": 327680,     # 2 x 80 x 8 x 128 x 2
    "decode-bound-b1": "memory",
    "capex-per-hour": 2.283,    # 40000 / (4 x 8760 x 0.5)
    "payback-simple": 6,        # 300,000 / 50,000 per month
    "more-hbm-stacks": "decode",
    # notebook 00: v5p has no fp8 speed-up; MLA caches 61 x (512 + 64) x 2 bytes; 989.4e12 / 6.7e12 = 147.7
    "predict-v5p-fp8-gain": 1.0,
    "kv-bytes-deepseek": 70272,
    "whatif-ridge-2x-hbm": 147.7,
    # notebook 02: 4 folds x (6 + 4 + 4 - 2) = 48 cycles; WS with K = 4: 2 folds of 2*32 + 64 + 32 - 2 = 158 cycles,
    # reported as 315: 64*64*4 / (315 * 1024) = 5.08 %; 400 tiles in 4 waves of 132: 75.76 %;
    # 256 folds of 2*256 + 1 + 256 - 2 = 767 cycles: 4096^2 / ((256 * 767 - 1) * 256^2) = 0.1304 %
    "predict-anim-cycles": 48,
    "predict-ws-util-k4": 5.08,
    "predict-gpu-eff-2560": 75.76,
    "whatif-gemv-256": 0.1304,
    # notebook 03: rings of 8, 8, 16 have mean distances 2, 2, 4 over all targets: 8 x 1024/1023 = 8.008 hops;
    # LL: (6.6 + 14 x 0.6) us of a ~28 us all-reduce = 54 %; 0.82 x 900 = 738 GB/s
    "predict-torus-mean-hops": 8.008,
    "predict-latency-share-1mib": 53.5,
    "whatif-ring-busbw-2x": 738,
    # notebook 05: "nearly half" dropped (the notebook's table); 16 against 5 hops with 2 us per peer: ~1.4x;
    # 16 x (1 - C(240,8)/C(256,8)) = 16 x (1 - 0.5923) = 6.52 nodes
    "predict-moe-dropped-skew1": 45,
    "predict-boardfly-speedup": 1.4,
    "whatif-16-nodes": 6.523,
    # notebook 08: every term is per wall-clock hour, so half the utilisation doubles 2.530 USD/h (power for the
    # whole DGX H100 per GPU, 1,275 W: 1275 x 0.75 x 1.2 x 0.08 / 1000 = 0.0918 USD/h on); payback read from the
    # migration model (32 months); power 0.0918 / 0.7 = 0.131 of 2.530 USD/h = 5.18 %
    "predict-own-h100-util35": 5.06,
    "predict-payback": 32,
    "predict-pretrain-pool": "tpu",
    "whatif-electricity-2x": 5.18,
    # notebook 09: the decode optimum takes all 8 stacks; power-bound at 400 W; compromise 0.918 and 0.897 of the
    # best training throughput at 700 and 1,000 W; the training optimum decodes at 0.495 of the best
    "predict-decode-stacks": 8,
    "design-training-limit-400": "power",
    "design-compromise-loss": 8.23,
    "design-training-opt-decode": 49.45,
    "whatif-design-1000w": 10.34,
    # notebook 10: (2 - 2^-2) x 2^8 = 448; 4 + 8/32; 10,100 / 8,808; 70.55e9 x 1 byte; (141.1+2.7)/(39.7+2.7) = 3.39;
    # (39.7 + 85.9) / (141.1 + 85.9) = 55.3 %; 64 x 32768 x 327,680 B = 687.2 GB
    "e4m3-max": 448,
    "mxfp4-bits": 4.25,
    "fp4-over-fp8-tpu8i": 1.147,
    "weights-70b-fp8-gb": 70.55,
    "predict-nvfp4-speedup": 3.39,
    "nvfp4-memory-share": 55.3,
    "what-if-long-context-kv": 687.2,
    # notebook 01: memory-bound at batch 8, so the bandwidth ratio 3.35 / 2.765 = 1.212; at equal MFU a token costs
    # price / peak: (10.80 / 989.4) / (4.20 / 459) = 1.193, and 1 / 1.193 = 0.838 of list price breaks even;
    # 8B at 8K: attention scores 12 x 32 x 8192 x 4096 / 2 = 6.44e9 FLOP of 6 x 7.50e9 + 6.44e9 = 5.14e10 -> 12.5 %
    "predict-v5p-decode-ratio": 1.212,
    "predict-h100-v5p-cost-ratio": 1.193,
    "mfu-full-vs-causal-8b": 12.5,
    "whatif-h100-price-match": 0.838,
    # notebook 04: 2048 sequences / dp 32 = 64 microbatches, bubble 3 / (64 + 3) = 4.48 %; the search keeps TP2
    # (read from the model); ideal 5.22 s of a 12.84 s step = 40.7 %; DGX H100 at 8,192 chips 90.9 % (read from
    # the model); 70B at 8K: 12 x 80 x 8192 x 8192 / 2 = 3.22e10 of 6 x 69.5e9 + 3.22e10 = 4.49e11 -> 7.2 %;
    # TP overlap 0.8: MFU 49.2 % -> 57.5 % (read from the model)
    "predict-bubble-default": 4.478,
    "predict-search-tp": 2,
    "predict-ideal-share-405b": 53.5,
    "predict-h100-weak-scaling": 90.9,
    "mfu-full-vs-causal-70b": 7.17,
    "whatif-tp-overlap-08": 57.5,
    # notebook 06: a batch takes B x TTFT + 256 x TPOT: 64 x 256 / (64 x 0.0643 + 256 x 0.00863) = 2,590 tokens/s
    # against 256 / (0.0643 + 256 x 0.00700) = 137.9 on 8 chips: 18.8x; one H200: 69.5 GB / 4.15 TB/s = 16.8 ms
    # (+ the KV read); 32K: 189 sequences (read from the model); MHA: 2 x 80 x 64 x 128 x 2 = 2,621,440 bytes
    "predict-batch64-chip-gain": 18.78,
    "tpot-b1-one-h200": 16.83,
    "max-batch-32k": 189,
    "whatif-mha-kv-70b": 2621440,
    # notebook 07: no GPU reaches 256 tokens/s per user, LP30 makes 391 per chip there against LPU v1's 13;
    # 70.55e9 B / 500e6 = 141.1 -> 142; 811.7e9 B / 44e9 = 18.4 -> 19; 4 stages x 203 GB / 5 TB/s = 162 ms -> 6.2
    "predict-frontier-256": "lp30",
    "lp30-chips-70b-fp8": 142,
    "cs3-wafers-405b": 19,
    "whatif-stream-5tbs": 6.19,
    # notebook 11: 5 x 2 x 3 x 4 x 3 = 360; ceil(0.008 / (0.05 x 0.0005)) = 320 beats ceil(1e6 / (4 x 4096)) = 62;
    # min(ceil(1e6 / 256) = 3,907, 60 / 0.03 = 2,000) beats ceil(0.02 / 0.0015) = 14; s = sqrt(5/3) = 1.291,
    # 3.182 x 1.291 / 2 = 2.054; the TTFT objective read from the simulator (the dashboard's defaults: 98 %);
    # 0.02 / (0.05 x 2e-5) = 20,000 beats 3,907
    "sweep-frontier-configs": 360,
    "sweep-b-min": 320,
    "sweep-block-64": 2000,
    "sweep-ci-half-width": 2.054,
    "predict-slo-ttft-half": 98.0,
    "whatif-cheap-model-tasks": 20000,
    # notebook 12: 2 x 25e9 / (730 x 3600) / 256 = 74.32 req/s; 74.3 days on 2,048 H100 read from the model, x 1.14
    # (its median error) = 84.5; at 4,096 chips both meet 90 days, v5p for USD 27.8 M against 46.0 M (read from the
    # model); ceil(74.32 x 1.12 / 16) = 6 (16 req/s and +12 % read from the simulator and the validation table);
    # (10.0 / 0.5) / 3.97 = 5.03 (the owned hour read from the TCO model); 1,581 tokens/s per chip at batch 128 read
    # from the model
    "cap-chat-peak-rate": 74.32,
    "predict-cap-h100-days": 84.5,
    "cap-cheapest-trainer": "tpu-v5p",
    "cap-chat-replicas": 6,
    "cap-rent-over-own": 5.03,
    "whatif-cap-tbt-30ms": 1581,
}


def test_every_exercise_has_a_hand_answer():
    assert set(EXERCISES) == set(HAND)


@pytest.mark.parametrize("eid", sorted(HAND))
def test_hand_answer_is_correct(eid):
    r = check(eid, HAND[eid])
    assert r.correct and bool(r), r.message


def test_ridge_h100():
    assert check("ridge-h100", 295).correct
    assert check("ridge-h100", "295").correct  # a number typed as text is fine
    wrong = check("ridge-h100", 100)
    assert not wrong.correct and not bool(wrong)
    assert "Hint" in wrong.message and "too low" in wrong.message
    assert "295" not in wrong.message and "295" not in wrong._repr_html_()
    assert "too high" in check("ridge-h100", 1000).message


def test_tolerance_edges():
    # 2% of 295.34 is 5.9: 290 is inside, 285 is outside
    assert check("ridge-h100", 290).correct
    assert not check("ridge-h100", 285).correct


@pytest.mark.parametrize("answer", ["H100", " h100 ", "h100", "H100\n"])
def test_word_answers_case_insensitive(answer):
    assert check("ridge-higher", answer).correct


def test_wrong_word_gets_hint_not_answer():
    r = check("decode-bound", "compute")
    assert not r.correct and r.message.startswith("Hint") and "memory" not in r.message.lower().replace(
        "memory bandwidth", "")
    assert check("decode-bound", "MEMORY").correct
    assert not check("decode-bound", 1).correct


@pytest.mark.parametrize("answer", ["lots", None, [295], float("nan")])
def test_non_numbers_are_not_correct(answer):
    r = check("ridge-h100", answer)
    assert not r.correct and "Hint" in r.message


def test_unknown_exercise():
    with pytest.raises(ValueError, match="no exercise 'ridge-h200'.*ridge-h100"):
        check("ridge-h200", 1)


def test_wrong_answers_never_reveal_expected():
    for eid, ans in HAND.items():
        wrong = "banana" if isinstance(ans, str) else ans * 3
        r = check(eid, wrong)
        assert not r.correct
        if not isinstance(ans, str):
            assert f"{ans:,.4g}" not in r.message.replace(f"{wrong:,.4g}", "")


def test_result_html_escapes():
    r = check("ridge-higher", "<script>")
    assert "<script>" not in r._repr_html_()


def test_exercises_never_import_a_dashboard():
    """Answers come from the model layers; a dashboard is only ever the place a student looks."""
    import ast
    from pathlib import Path

    import accelbook.ui.exercises as ex

    paths = sorted(Path(ex.__file__).parent.glob("*.py"))
    assert len(paths) >= 12   # the package, its core, and one module per notebook
    for path in paths:
        tree = ast.parse(path.read_text())
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if "dashboard" in m], (path.name, imported)


def test_every_notebook_module_is_gathered():
    """Each exercise sits in its own notebook's module, and the package gathers them all, in order."""
    import accelbook.ui.exercises as ex

    gathered = [e.id for m in ex.MODULES for e in m.EXERCISES]
    assert gathered == list(EXERCISES)
    for m in ex.MODULES:
        number = m.__name__.rsplit(".", 1)[1][2:4]
        assert {e.notebook for e in m.EXERCISES} == {number}, m.__name__
    assert ex.Exercise is ex.core.Exercise and callable(ex.check)


def test_moe_decode_bound_agrees_with_the_network_dashboard():
    """The exercise names the network dashboard's defaults; its own answer (from accelbook.moe) must
    be what that dashboard shows at one token per chip on the torus, down to the time."""
    from accelbook.moe import crossover_sweep, equal_injection
    from accelbook.network.topology import torus
    from accelbook.ui.dashboards import moe_network_spec, token_copy_bytes

    view = moe_network_spec().render(tokens_per_chip=1, networks=("3D torus",))
    row = view.data[view.data["tokens_per_chip"] == 1.0].iloc[0]
    assert EXERCISES["moe-decode-bound"].expected() == {row["bound"]} == {"latency"}
    mine = crossover_sweep({"t": equal_injection(torus((8, 8, 16)), 600e9, 1e-6)}, [1.0], 8, token_copy_bytes(),
                           0.25, message_overhead_s=2e-6).iloc[0]
    assert mine["time_s"] == row["time_s"] and token_copy_bytes() == 7168 * 2


def test_weak_scaling_prediction_agrees_with_the_scaling_dashboard():
    """The exercise names the scaling dashboard's defaults; its answer (from accelbook.training) is what that
    dashboard shows for DGX H100 + InfiniBand at 8,192 chips."""
    from accelbook.ui.dashboards import scaling_spec

    view = scaling_spec().render(systems=("DGX H100 + InfiniBand",))
    row = view.data.set_index("n_chips").loc[8192]
    assert abs(EXERCISES["predict-h100-weak-scaling"].expected() - 100 * row["efficiency"]) < 1e-9


def test_slo_prediction_agrees_with_the_serving_dashboard():
    """The exercise names the serving dashboard's defaults; its answer (from accelbook.sweep) is the ratio of the
    best goodputs that dashboard shows at a 0.5 s and a 1 s objective."""
    from accelbook.ui.dashboards.nb11_design_spaces_at_scale import slo_spec

    def best(view):
        return view.data.loc[view.data["metric"] == "goodput_req_s", "mean"].max()

    ratio = 100 * best(slo_spec().render(ttft_slo_s=0.5)) / best(slo_spec().render())
    assert abs(EXERCISES["predict-slo-ttft-half"].expected() - ratio) < 1e-9
