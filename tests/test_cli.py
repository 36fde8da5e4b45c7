"""The command line (``accelbook``, :mod:`accelbook.cli`): help, JSON against the Python API called
directly with the same arguments, the scenario round trip with the dashboards, errors that exit 2."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from accelbook.cli.args import number
from accelbook.cli.main import COMMANDS, main

SMALL_TRAIN = ["--model", "llama-3.1-8b", "--chip", "h100", "--n-chips", "64", "--global-batch-tokens", "4Mi",
               "--seq-len", "8192"]
SMALL_INFER = ["--model", "llama-3.1-8b", "--chip", "h100", "--n-chips", "8", "--input-len", "1024",
               "--output-len", "256"]


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def cli_json(capsys, *argv):
    rc, out, err = cli(capsys, *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


# -- help --------------------------------------------------------------------------------------------------------

def test_help_in_a_subprocess_loads_no_model_layer():
    code = ("import sys; from accelbook.cli.main import main; rc = main(['--help']); "
            "print('LOADED', sorted(m for m in ('numba', 'accelbook.training', 'accelbook.inference', 'accelbook.ui') "
            "if m in sys.modules), rc)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED [] 0" in r.stdout
    r = subprocess.run([sys.executable, "-m", "accelbook.cli", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for word in ("train", "infer", "serve", "collective", "chip", "model", "claims", "measure", "validate", "launch"):
        assert word in r.stdout


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if not c.passthrough], ids=lambda c: c.key)
def test_every_subcommand_has_help_with_an_example(capsys, cmd):
    rc, out, _ = cli(capsys, *cmd.path, "--help")
    assert rc == 0 and "example:" in out and "accelbook " + cmd.key in out


def test_a_subcommands_help_in_a_subprocess():
    r = subprocess.run([sys.executable, "-m", "accelbook.cli", "infer", "estimate", "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "--batch-size" in r.stdout and "example:" in r.stdout


def test_numbers_are_read_as_written():
    assert number("1024") == 1024 and number("2**24") == 16777216 and number("16M") == 16_000_000
    assert number("64Mi") == 64 * 2**20 and number("0.5") == 0.5 and number("1e6") == 1e6
    assert number("inf") == math.inf


# -- JSON against the API ----------------------------------------------------------------------------------------

def test_train_estimate_json_is_the_api(capsys):
    from accelbook import training

    got = cli_json(capsys, "train", "estimate", *SMALL_TRAIN, "--tp", "8", "--zero-stage", "1")
    e = training.estimate("llama-3.1-8b", "h100", 64, 4 * 2**20, 8192, tp=8, zero_stage=1)
    assert got["step_time_s"] == e.step_time_s and got["mfu"] == e.mfu
    assert got["memory_per_chip_bytes"] == e.memory_per_chip_bytes and got["config"]["dp"] == 8
    assert got["time"]["t_gemm_s"] == e.time["t_gemm_s"] and got["fits"] is True


def test_train_search_json_is_the_api(capsys):
    from accelbook import training

    pins = dict(tp=[1, 8], pp=1, cp=1, vp=1, microbatch=1, zero_stage=1, recompute="selective")
    got = cli_json(capsys, "train", "search", "--model", "llama-3.1-8b", "--chip", "h100", "--n-chips", "8",
                   "--global-batch-tokens", "1Mi", "--seq-len", "4096", "--top", "3", "--tp", "1,8", "--pp", "1",
                   "--cp", "1", "--vp", "1", "--microbatch", "1", "--zero-stage", "1", "--recompute", "selective")
    df = training.search("llama-3.1-8b", "h100", 8, 2**20, 4096, top=3, **pins)
    assert got["n_evaluated"] == df.attrs["n_evaluated"] and got["n_fit"] == df.attrs["n_fit"]
    assert [r["step_time_s"] for r in got["rows"]] == df["step_time_s"].tolist()
    assert got["best"]["step_time_s"] == df.attrs["best"].step_time_s


def test_infer_estimate_sweep_and_max_throughput_are_the_api(capsys):
    from accelbook import inference

    got = cli_json(capsys, "infer", "estimate", *SMALL_INFER, "--batch-size", "64", "--precision", "fp8")
    e = inference.estimate("llama-3.1-8b", "h100", 8, 64, 1024, 256, "fp8")
    assert (got["ttft_s"], got["tpot_s"], got["tokens_per_s_per_chip"]) == (e.ttft_s, e.tpot_s, e.tokens_per_s_per_chip)
    rows = cli_json(capsys, "infer", "sweep", *SMALL_INFER, "--batches", "1,8")
    df = inference.sweep("llama-3.1-8b", "h100", 8, 1024, 256, batches=[1, 8])
    assert [r["tpot_s"] for r in rows] == df["tpot_s"].tolist() and len(rows) == len(df)
    got = cli_json(capsys, "infer", "max-throughput", *SMALL_INFER, "--tpot-target-s", "0.02", "--batches", "1,8,64")
    e = inference.max_throughput("llama-3.1-8b", "h100", 8, 1024, 256, tpot_target_s=0.02, batches=[1, 8, 64])
    assert got["tokens_per_s_per_chip"] == e.tokens_per_s_per_chip and got["config"]["tp"] == e.config["tp"]


def test_serve_simulate_is_the_api(capsys):
    from accelbook.inference.serving import simulate
    from accelbook.inference.step import step_cost
    from accelbook.inference.workload import workload

    got = cli_json(capsys, "serve", "simulate", "--model", "llama-3.1-8b", "--chip", "h100", "--n-chips", "1",
                   "--n-requests", "60", "--rate-per-s", "4", "--prompt", "lognormal,512,0.5", "--output", "64",
                   "--chunk-tokens", "256", "--ttft-slo-s", "1", "--tbt-slo-s", "0.05")
    r = simulate(workload(60, 4.0, prompt=("lognormal", 512, 0.5), output=64), step_cost("llama-3.1-8b", "h100", 1),
                 chunk_tokens=256)
    s = r.summary()
    assert got["ttft_p99_s"] == s["ttft_p99_s"] and got["throughput_tok_s"] == s["throughput_tok_s"]
    assert got["n"] == 60 and got["goodput_req_s"] == r.goodput(1.0, 0.05)


def test_collective_is_the_api(capsys):
    from accelbook.network import collectives, topology

    got = cli_json(capsys, "collective", "--collective", "all_reduce", "--message-bytes", "64Mi",
                   "--system", "hgx-h100-nvls-on", "--bw-scale", "2")
    e = collectives.estimate("all_reduce", 64 * 2**20, topology.hgx_h100(nvls=True).scaled(2.0, 1.0))
    assert len(got) == 1 and got[0]["system"] == "HGX H100, NVLS on"
    assert got[0]["time_s"] == e.time_s and got[0]["busbw_bytes_per_s"] == e.busbw_bytes_per_s
    assert got[0]["algorithm"] == e.algorithm


def test_chip_model_and_claims_are_the_catalogue(capsys):
    import accelbook as ab
    from accelbook.economics.claims import claims_table

    c = cli_json(capsys, "chip", "H100 SXM")
    assert c["id"] == "h100" and c["hbm_bw_bytes_per_s"] == ab.get_chip("h100").hbm_bw_bytes_per_s
    assert len(cli_json(capsys, "chip")) == len(ab.chips())
    m = cli_json(capsys, "model", "llama-3.1-8b")
    assert m["params"] == ab.get_model("llama-3.1-8b").params
    t = claims_table()
    rows = cli_json(capsys, "claims", "--verdict", "supported")
    assert [r["id"] for r in rows] == t[t["verdict"] == "supported"]["id"].tolist()


def test_arguments_from_a_toml_file(capsys, tmp_path):
    f = tmp_path / "args.toml"
    f.write_text('model = "llama-3.1-8b"\nchip = "h100"\nn-chips = 8\nbatch_size = 64\ninput_len = 1024\n'
                 'output_len = 256\n')
    a = cli_json(capsys, "infer", "estimate", "--file", str(f))
    b = cli_json(capsys, "infer", "estimate", *SMALL_INFER, "--batch-size", "64")
    assert a == b
    f.write_text('model = "llama-3.1-8b"\nbatch = 64\n')
    rc, _, err = cli(capsys, "infer", "estimate", "--file", str(f))
    assert rc == 2 and "unknown argument 'batch'" in err


# -- scenarios ---------------------------------------------------------------------------------------------------

def test_training_dashboard_scenario_round_trip(capsys):
    from accelbook.ui.dashboards.nb04_distributed_training import training_spec
    from accelbook.ui.scenario import Scenario, scenario_of

    spec = training_spec()
    s = scenario_of(spec, dict(model="llama-3.1-8b", chip="h100", n_chips=64, batch_tokens=2**22, seq_len=8192,
                               tp=8, pp=1, train_tokens_t=2.0)).to_string()
    rc, out, _ = cli(capsys, "train", "estimate", "--scenario", s, "--print-scenario")
    assert rc == 0 and out.strip() == s          # what the dashboard wrote comes back, its own controls included
    from_scenario = cli_json(capsys, "train", "estimate", "--scenario", s)
    from_flags = cli_json(capsys, "train", "estimate", *SMALL_TRAIN, "--tp", "8", "--pp", "4", "--scenario", s)
    assert from_scenario["config"]["pp"] == 1 and from_flags["config"]["pp"] == 4    # a flag wins over the scenario
    rc, out, _ = cli(capsys, "train", "estimate", *SMALL_TRAIN, "--tp", "8", "--print-scenario")
    v = Scenario.from_string(out).for_spec(spec)    # the dashboard reads what the command line writes
    assert (v["n_chips"], v["batch_tokens"], v["tp"], v["pp"]) == (64, 2**22, 8, 1)


def test_collectives_and_inference_scenarios_round_trip(capsys):
    from accelbook.ui.dashboards.nb03_interconnects import collective_spec
    from accelbook.ui.dashboards.nb06_inference_prefill_decode import inference_spec
    from accelbook.ui.scenario import Scenario

    rc, s, _ = cli(capsys, "collective", "--collective", "all_gather", "--message-bytes", "8Mi",
                   "--system", "tpu-v5p", "--print-scenario")
    v = Scenario.from_string(s).for_spec(collective_spec())
    assert rc == 0 and v["size_mib"] == 8 and v["systems"] == ("TPU v5p 4×4×4 slice",)
    a = cli_json(capsys, "collective", "--scenario", s.strip())
    b = cli_json(capsys, "collective", "--collective", "all_gather", "--message-bytes", "8Mi", "--system", "tpu-v5p")
    assert a == b
    rc, s, _ = cli(capsys, "infer", "estimate", *SMALL_INFER, "--batch-size", "64", "--print-scenario")
    v = Scenario.from_string(s).for_spec(inference_spec())
    assert (v["tp"], v["batch"]) == (8, 64)


def test_scenario_errors_name_the_problem(capsys):
    rc, _, err = cli(capsys, "train", "estimate", "--scenario", "inference:model=x")
    assert rc == 2 and "'inference' dashboard" in err
    rc, _, err = cli(capsys, "train", "estimate", *SMALL_TRAIN, "--dp", "4", "--tp", "16", "--print-scenario")
    assert rc == 2 and "--dp" in err


# -- errors ------------------------------------------------------------------------------------------------------

def test_errors_name_the_argument_and_exit_2(capsys):
    rc, out, err = cli(capsys, "chip", "no-such-chip")
    assert rc == 2 and "no-such-chip" in err and "chip" in err and out == ""
    rc, _, err = cli(capsys, "collective", "--collective", "all_reduce", "--message-bytes", "-5")
    assert rc == 2 and "message_bytes" in err and len(err.strip().splitlines()) == 1
    rc, _, err = cli(capsys, "infer", "estimate", *SMALL_INFER, "--batch-size", "-1")
    assert rc == 2 and "batch_size" in err
    rc, _, err = cli(capsys, "infer", "estimate", *SMALL_INFER, "--batch-size", "lots")
    assert rc == 2 and "--batch-size" in err
    rc, _, err = cli(capsys, "train", "estimate", "--model", "llama-3.1-8b")
    assert rc == 2 and "--chip" in err


def test_an_error_in_a_subprocess_has_no_traceback():
    r = subprocess.run([sys.executable, "-m", "accelbook.cli", "chip", "no-such-chip"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_measure_hands_over_its_arguments(capsys):
    rc, out, _ = cli(capsys, "measure", "--help")
    assert rc == 0 and "--quick" in out


def test_validate_is_the_measurements_table(capsys):
    from accelbook.measurements import sample_path, validation_table

    path = sample_path("vllm")
    rows = cli_json(capsys, "validate", str(path))
    df = validation_table(path)
    assert [r["predicted"] for r in rows] == df["predicted"].tolist() and [r["metric"] for r in rows] == df["metric"].tolist()


def test_launch_is_the_launch_arguments_of_the_best_layout(capsys):
    from accelbook import inference
    from accelbook.inference.launch import launch_args

    got = cli_json(capsys, "launch", *SMALL_INFER, "--precision", "fp8", "--tpot-target-s", "0.02", "--engine", "vllm",
                   "--serve-model", "meta-llama/Llama-3.1-8B")
    e = inference.max_throughput("llama-3.1-8b", "h100", 8, 1024, 256, "fp8", tpot_target_s=0.02)
    assert got["launch"][0]["argv"] == list(launch_args(e, "vllm", "meta-llama/Llama-3.1-8B").argv)
    assert got["layout"]["batch_size"] == e.config["batch_size"]
