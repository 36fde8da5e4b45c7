"""Launch arguments for vLLM, SGLang and TensorRT-LLM (accelbook.inference.launch): exact strings for a
known layout, written by hand from the engines' documented flags."""

import pytest

from accelbook.inference import launch

LAYOUT = {"tp": 4, "pp": 2, "replicas": 1, "batch_size": 64, "kv_precision": "fp8"}


def test_vllm_line():
    assert launch.launch_args(LAYOUT, "vllm", "meta-llama/Llama-3.1-70B-Instruct").line() == (
        "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --pipeline-parallel-size 2 "
        "--max-num-seqs 64 --max-num-batched-tokens 576 --kv-cache-dtype fp8")


def test_sglang_line():
    assert launch.launch_args(LAYOUT, "sglang", "m").line() == (
        "python -m sglang.launch_server --model-path m --tp-size 4 --pp-size 2 --max-running-requests 64 "
        "--chunked-prefill-size 512 --kv-cache-dtype fp8_e4m3")


def test_trtllm_line_and_yaml():
    a = launch.launch_args(LAYOUT, "trtllm", "m")
    assert a.line() == ("trtllm-serve m --tp_size 4 --pp_size 2 --max_batch_size 64 --max_num_tokens 576 "
                        "--extra_llm_api_options extra-llm-api-config.yml")
    assert a.extra_yaml == "kv_cache_config:\n  dtype: fp8\n"
    assert "not a tuned configuration" in a.note


def test_replicas_and_bf16_kv():
    lay = {**LAYOUT, "tp": 1, "pp": 1, "replicas": 8, "kv_precision": "bf16"}
    assert launch.launch_args(lay, "vllm", "m", chunk_tokens=1024).argv[-4:] == (
        "--kv-cache-dtype", "auto", "--data-parallel-size", "8")
    assert "--max-num-batched-tokens 1088" in launch.launch_args(lay, "vllm", "m", chunk_tokens=1024).line()
    assert launch.launch_args(lay, "trtllm").instances == 8
    assert launch.launch_lines(lay)["trtllm"].endswith("(start 8 instances)")


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="engine"):
        launch.launch_args(LAYOUT, "tgi")
    with pytest.raises(ValueError, match="kv_precision"):
        launch.launch_args({**LAYOUT, "kv_precision": "int8"}, "vllm")
    with pytest.raises(TypeError, match="layout"):
        launch.launch_args(42, "vllm")
