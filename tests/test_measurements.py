"""A user's measurement files beside the model (accelbook.measurements, issue 32).

The sample files in tests/data were written by hand in each tool's documented format (vLLM's
``vllm/benchmarks/serve.py`` and ``sweep/serve.py``, SGLang's ``bench_serving.py``, nccl-tests'
``src/util.cu``, MLPerf LoadGen's ``results.cc``); the expected values below are read off those files by
hand, and each table's prediction is checked against the model called directly.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from accelbook.inference.estimate import estimate as inference_estimate
from accelbook.measurements import SAMPLES, load, sample_path, validation_table
from accelbook.measurements.schema import model_id, setup_from_text
from accelbook.network.collectives import estimate as collective_estimate
from accelbook.network.systems import hgx_h100
from accelbook.training.validation import run_estimate

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("file, fmt, n_rows", [
    ("vllm_bench_serve.json", "vllm", 8), ("vllm_bench_sweep_summary.json", "vllm", 16),
    ("vllm_bench_sweep_summary.csv", "vllm", 16), ("sglang_bench_serving.jsonl", "sglang", 16),
    ("nccl_all_reduce_perf.txt", "nccl", 40), ("mlperf_log_summary.txt", "mlperf", 6),
    ("training_log.csv", "training", 3), ("training_log.toml", "training", 1)])
def test_each_sample_file_loads_in_its_format(file, fmt, n_rows):
    rows, detected = load(DATA / file)
    assert detected == fmt
    assert len(rows) == n_rows                     # one row per measured number in the file
    assert rows["measured"].notna().all()


def test_vllm_reader_takes_the_run_config_from_the_result():
    rows, _ = load(DATA / "vllm_bench_serve.json")
    r = rows.set_index("metric")
    assert r.loc["ttft_mean_ms", "measured"] == 152.3 and r.loc["output_tokens_per_s", "measured"] == 2825.0
    assert r.loc["tpot_mean_ms", "input_len"] == 327680 / 320 == 1024      # total_input_tokens / completed
    assert r.loc["tpot_mean_ms", "output_len"] == 40960 / 320 == 128
    assert r.loc["tpot_mean_ms", "concurrency"] == 32 and math.isinf(r.loc["tpot_mean_ms", "request_rate"])
    assert r.loc["tpot_mean_ms", "model"] == "meta-llama/Llama-3.1-8B-Instruct"


def test_sweep_json_and_csv_read_the_same_rows():
    a, _ = load(DATA / "vllm_bench_sweep_summary.json")
    b, _ = load(DATA / "vllm_bench_sweep_summary.csv")
    cols = ["run", "metric", "measured", "concurrency", "tp", "input_len", "output_len"]
    assert a[cols].astype(str).values.tolist() == b[cols].astype(str).values.tolist()
    assert set(a["tp"]) == {1} and set(a["concurrency"]) == {1, 16}


def test_nccl_reader_reads_the_header_and_both_placements():
    rows, _ = load(DATA / "nccl_all_reduce_perf.txt")
    assert set(rows["collective"]) == {"all_reduce"} and set(rows["n_chips"]) == {8} and set(rows["nodes"]) == {1}
    assert set(rows["chip"]) == {"NVIDIA H100 80GB HBM3"}
    one_gib = rows[(rows["message_bytes"] == 2**30) & (rows["placement"] == "in-place")].set_index("metric")
    assert one_gib.loc["time_us", "measured"] == 4166.80 and one_gib.loc["busbw_gb_s", "measured"] == 450.96


def test_mlperf_reader_reads_the_summary_in_si():
    rows, _ = load(DATA / "mlperf_log_summary.txt")
    r = rows.set_index("metric")
    assert r.loc["ttft_mean_ms", "measured"] == pytest.approx(275.926440)          # 275,926,440 ns
    assert r.loc["tokens_per_s", "measured"] == 21605.79 and r.loc["samples_per_s", "measured"] == 74.42
    assert r.loc["tokens_per_s", "ttft_limit_s"] == pytest.approx(2.0)
    assert r.loc["tokens_per_s", "tpot_limit_s"] == pytest.approx(0.2)
    assert r.loc["tokens_per_s", "request_rate"] == 75.10 and r.loc["tokens_per_s", "scenario"] == "Server"


def test_vllm_table_equals_the_inference_estimate_at_the_run_config():
    t = validation_table(DATA / "vllm_bench_serve.json")        # chip and n_chips from the sidecar
    assert {"measured", "predicted", "error", "dominant"} <= set(t.columns)
    est = inference_estimate("llama-3.1-8b", "h100", 1, 32, 1024, 128, "bf16", tp=1, pp=1)
    row = t.set_index("metric").loc["output_tokens_per_s"]
    assert row["predicted"] == pytest.approx(est.tokens_per_s, rel=1e-12)
    assert row["error"] == pytest.approx(est.tokens_per_s / 2825.0 - 1, rel=1e-12)
    tpot = t.set_index("metric").loc["tpot_mean_ms"]
    assert tpot["predicted"] == pytest.approx(est.tpot_s * 1e3, rel=1e-12)
    assert tpot["dominant"].startswith("decode: ")
    assert set(t["source"]) == {"accelbook sample: a vLLM bench serve result written by hand (illustrative, not a measurement)"}


def test_nccl_table_equals_the_collective_model_on_the_setup_system():
    t = validation_table(DATA / "nccl_all_reduce_perf.txt")      # system from the sidecar: HGX H100, NVLS on
    est = collective_estimate("all_reduce", 2.0**30, hgx_h100(nvls=True))
    row = t[(t["message_bytes"] == 2**30) & (t["placement"] == "out-of-place") & (t["metric"] == "busbw_gb_s")].iloc[0]
    assert row["predicted"] == pytest.approx(est.busbw_bytes_per_s / 1e9, rel=1e-12)
    assert row["error"] == pytest.approx(est.busbw_bytes_per_s / 1e9 / 450.56 - 1, rel=1e-12)
    assert row["dominant"].startswith("bandwidth: ")
    small = t[(t["message_bytes"] == 8) & (t["metric"] == "time_us")].iloc[0]
    assert small["dominant"].startswith("latency: ")
    zero = t[(t["message_bytes"] == 8) & (t["metric"] == "busbw_gb_s")]
    assert zero["error"].isna().all()                           # 0.00 GB/s printed: no error to take


def test_nccl_network_is_inferred_from_the_device_lines_without_a_setup(tmp_path):
    f = tmp_path / "run.txt"
    f.write_text((DATA / "nccl_all_reduce_perf.txt").read_text())
    t = validation_table(f)                                     # one host, 8 H100: HGX H100 (NVLS on)
    assert set(t["chip"]) == {"h100"}
    assert t["note"].str.startswith("HGX H100").all()
    off = validation_table(f, system="hgx_h100", args={"nvls": False})
    ring = collective_estimate("all_reduce", 2.0**33, hgx_h100(nvls=False)).time_s * 1e6
    assert off[(off["message_bytes"] == 2**33) & (off["metric"] == "time_us")]["predicted"].iloc[0] == pytest.approx(ring)


def test_training_table_equals_the_training_model_with_the_log_layout():
    t = validation_table(DATA / "training_log.csv")
    e = {"model": "llama-3.1-8b", "chip": "h100", "n_chips": 64, "seq_len": 8192, "global_batch_sequences": 512,
         "precision": "bf16", "tp": 1, "pp": 1, "cp": 1, "ep": 1, "vp": 1,
         "assumed": ["microbatch", "zero_stage", "recompute", "schedule"]}
    _, _, est = run_estimate(e)
    row = t[(t["run"] == "8B on 64 H100") & (t["metric"] == "tokens_per_s")].iloc[0]
    assert row["predicted"] == pytest.approx(est.tokens_per_s, rel=1e-12)
    assert row["error"] == pytest.approx(est.tokens_per_s / 540000 - 1, rel=1e-12)
    step = t[(t["run"] == "8B on 64 H100") & (t["metric"] == "step_time_s")].iloc[0]
    assert step["predicted"] == pytest.approx(est.step_time_s, rel=1e-12)
    assert set(t["source"]) == {"hand-written sample (illustrative)"}


def test_rate_limited_serving_and_mlperf_tables_have_an_error_column():
    t = validation_table(DATA / "sglang_bench_serving.jsonl", n_requests=64)
    assert t["error"].notna().all()
    assert (t["error"] == t["predicted"] / t["measured"] - 1).all()
    assert t["note"].str.startswith("simulated: 64 requests at").all()
    m = validation_table(DATA / "mlperf_log_summary.txt", n_requests=256)
    assert set(m["metric"]) == {"tokens_per_s", "samples_per_s", "ttft_mean_ms", "ttft_p99_ms", "tpot_mean_ms",
                                "tpot_p99_ms"}
    assert m["error"].notna().all() and set(m["model"]) == {"llama-2-70b"}


def test_arguments_override_the_sidecar_and_the_file():
    t = validation_table(DATA / "vllm_bench_serve.json", chip="h200", model="llama-3.1-70b", n_chips=8)
    assert set(t["chip"]) == {"h200"} and set(t["model"]) == {"llama-3.1-70b"} and set(t["n_chips"]) == {8}
    est = inference_estimate("llama-3.1-70b", "h200", 8, 32, 1024, 128, "bf16", tp=8, pp=1)
    assert t.set_index("metric").loc["tpot_mean_ms", "predicted"] == pytest.approx(est.tpot_s * 1e3, rel=1e-12)


def test_hugging_face_ids_map_to_catalogue_ids():
    assert model_id("meta-llama/Llama-3.1-8B-Instruct", "f") == "llama-3.1-8b"
    assert model_id("meta-llama/Meta-Llama-3.1-70B-Instruct", "f") == "llama-3.1-70b"
    with pytest.raises(ValueError, match="f: model 'my-org/unknown-13b' is not in the catalogue; set model"):
        model_id("my-org/unknown-13b", "f")


# -- bad files ----------------------------------------------------------------------------------------------
def test_a_missing_file_or_a_folder_names_itself(tmp_path):
    with pytest.raises(ValueError, match=r"nope\.json: file not found"):
        validation_table(tmp_path / "nope.json")
    with pytest.raises(ValueError, match="is a folder"):
        validation_table(tmp_path)


def test_bad_encoding_names_the_file_and_the_byte(tmp_path):
    f = tmp_path / "latin1.txt"
    f.write_bytes("# nThread 1\n# caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt: line 2: is not UTF-8 text \(byte 17\)"):
        validation_table(f)


def test_bad_json_names_the_file_and_the_line(tmp_path):
    f = tmp_path / "cut.json"
    f.write_text('{"completed": 10,\n "output_throughput": ')
    with pytest.raises(ValueError, match=r"cut\.json: line 2: not valid JSON"):
        validation_table(f)
    g = tmp_path / "lines.jsonl"
    good = (DATA / "sglang_bench_serving.jsonl").read_text().splitlines()[0]
    g.write_text(good + "\n{broken\n")
    with pytest.raises(ValueError, match=r"lines\.jsonl: line 2: not valid JSON"):
        validation_table(g)


def test_a_result_without_its_counts_names_the_key(tmp_path):
    f = tmp_path / "r.json"
    f.write_text('{"model_id": "llama-3.1-8b", "output_throughput": 100.0}')
    with pytest.raises(ValueError, match=r"r\.json: key 'completed': required key is missing"):
        validation_table(f, chip="h100", n_chips=1)


def test_bad_setup_toml_names_the_sidecar_and_the_key(tmp_path):
    f = tmp_path / "run.json"
    f.write_text((DATA / "vllm_bench_serve.json").read_text())
    side = tmp_path / "run.setup.toml"
    side.write_text("[setup]\nchip = \n")
    with pytest.raises(ValueError, match=r"run\.setup\.toml.*not valid TOML"):
        validation_table(f)
    side.write_text('[setup]\nchip = "h100"\nchips = 8\n')
    with pytest.raises(ValueError, match=r"run\.setup\.toml: entry \[setup\], key 'chips': unknown key"):
        validation_table(f)
    side.write_text('[setup]\nchip = "h100"\nsrc = "nobody"\n')
    with pytest.raises(ValueError, match="src 'nobody' is neither in the file's"):
        validation_table(f)


def test_an_unknown_format_names_the_file(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("tokens were fast today\n")
    with pytest.raises(ValueError, match=r"notes\.txt: unknown measurement format; known: vllm, sglang"):
        validation_table(f)
    with pytest.raises(ValueError, match="format must be one of"):
        validation_table(f, format="excel")


def test_what_the_file_does_not_say_is_asked_for(tmp_path):
    f = tmp_path / "run.json"                                  # no sidecar: no chip anywhere
    f.write_text((DATA / "vllm_bench_serve.json").read_text())
    with pytest.raises(ValueError, match=r"run\.json: the file does not say chip: give chip=\.\.\. or set it"):
        validation_table(f)
    with pytest.raises(ValueError, match=r"run\.json: chip 'z9000' is not in the catalogue; set chip"):
        validation_table(f, chip="z9000", n_chips=1)
    with pytest.raises(ValueError, match="unknown setting 'chips'"):
        validation_table(f, chips=8)


def test_a_bad_nccl_line_and_a_bad_training_row_name_their_line(tmp_path):
    lines = (DATA / "nccl_all_reduce_perf.txt").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("1048576"))
    lines[at] = lines[at].rsplit(maxsplit=2)[0]                    # two columns cut off
    f = tmp_path / "cut.txt"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"cut\.txt: line {at + 1}: a result line has 12 or 13 columns"):
        validation_table(f)
    g = tmp_path / "log.csv"
    g.write_text("model,chip,n_chips,seq_len,global_batch_tokens,tokens_per_s\nllama-3.1-8b,h100,64,8192,,5e5\n")
    with pytest.raises(ValueError, match=r"log\.csv: line 2: key 'global_batch_tokens': required column"):
        validation_table(g)
    g.write_text("# my runs\nmodel,chip,n_chips,seq_len,global_batch_tokens,tokens_per_s\n# a comment\n"
                 "llama-3.1-8b,h100,6.5,8192,8192,5e5\n")
    with pytest.raises(ValueError, match=r"line 4: key 'n_chips': must be a whole number"):
        validation_table(g)                                          # the line in the file, comments counted
    g.write_text("model,chip,n_chips,seq_len,global_batch_tokens,tokens_per_s\nllama-3.1-8b,h100,8,8192,8192,5e5,9\n")
    with pytest.raises(ValueError, match=r"line 2: more values than the header has columns"):
        validation_table(g)


def test_a_run_the_model_cannot_evaluate_keeps_its_row_with_the_reason(tmp_path):
    g = tmp_path / "log.csv"
    g.write_text("run,model,chip,n_chips,seq_len,global_batch_tokens,tp,tokens_per_s\n"
                 "odd,llama-3.1-8b,h100,64,8192,8192,3,5e5\n")          # tp 3 divides neither 64 nor the heads
    t = validation_table(g)
    assert len(t) == 1 and math.isnan(t["predicted"].iloc[0]) and t["note"].iloc[0].startswith("not evaluated: ")


# -- the notebook box ---------------------------------------------------------------------------------------
def test_the_bundled_samples_are_the_test_samples():
    for fmt, name in SAMPLES.items():
        assert sample_path(fmt).read_bytes() == (DATA / name).read_bytes()
        side = sample_path(fmt).with_name(Path(name).stem + ".setup.toml")
        if (DATA / side.name).exists():
            assert side.read_bytes() == (DATA / side.name).read_bytes()


def test_the_box_shows_the_sample_and_a_bad_paste_inline():
    pytest.importorskip("ipywidgets")
    from accelbook.ui.measurements import measurement_box, measurement_view

    box = measurement_box("nccl")
    assert box.table is not None and "error" in box.table and "busbw_gb_s" in box.out.value
    box.paste.value = "{not json"
    box.refresh()
    assert box.table is None and "pasted text: line 1: not valid JSON" in box.out.value
    html, table = measurement_view((DATA / "vllm_bench_serve.json").read_text(), "mine.json", n_chips="1",
                                   chip="h100")
    assert table is not None and "mine.json" in html and "median error" in html
    html, table = measurement_view("x", n_chips="eight")
    assert table is None and "chips must be a whole number" in html
    setup = '[setup]\nchip = "h100"\nn_chips = 1\nsrc = "s"\n[sources.s]\ntitle = "Mine"\nurl = "https://e.org"\n' \
            'date = "2026-11"\nkind = "primary"\n'
    assert setup_from_text(setup)["source"] == "Mine"
    html, table = measurement_view((DATA / "vllm_bench_serve.json").read_text(), "mine.json", setup_toml=setup)
    assert set(table["source"]) == {"Mine"}
