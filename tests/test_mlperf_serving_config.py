"""A published MLPerf Server run's own serving configuration (data/mlperf_server_runs.toml): the values as
typed from AMD's v4.1 harness and the vLLM RFC, what :func:`run_serving_config` makes of them, the
latencies at the run's own rate, and a malformed ``set`` or ``schedule`` named in the error."""

from __future__ import annotations

import numpy as np
import pytest

from accelbook.inference import mlperf
from accelbook.specs.loader import DATA_DIR, CatalogueError


def test_amd_run_pins_its_harness_configuration():
    run = mlperf.published_server_runs()["runs"]["mi300x-8-server"]
    # mainVllmFp8_SyncServer.py: --batcher-threshold 0.3, --gpu-batch-size 96, --max-num-batched-tokens 49152;
    # test_VllmFp8_SyncServer_perf.sh: -tp 1 -dp 8 --enable-batcher; vLLM RFC #6854: about 4 ms a step
    assert mlperf.run_serving_config(run) == {"schedule": "prefill_first", "batcher": (0.3, 96), "host_step_s": 0.004,
                                              "tp": 1, "chunk_tokens": 49152}
    assert run["set"] == "check" and run["scheduled_per_s"].value == 73.66


@pytest.mark.parametrize("rid,rate,tp", [("dgx-h100-8-server", 75.10, 2), ("h200-8-server", 101.25, 1)])
def test_nvidia_runs_pin_their_configuration(rid, rate, tp):
    # configs/llama2-70b: max_num_tokens = 4096; Server: tensor_parallelism 2 (H100) and 1 (H200); no host time
    run = mlperf.published_server_runs()["runs"][rid]
    assert mlperf.run_serving_config(run) == {"schedule": "inflight", "batcher": None, "host_step_s": 0.0, "tp": tp,
                                              "chunk_tokens": 4096}
    assert run["set"] == "held-out" and run["scheduled_per_s"].value == rate


def test_at_rate_columns_are_predicted_over_reported_minus_one():
    t = mlperf.server_validation_table(n_requests=1500, steps=3)
    for k in ("ttft_mean_ms", "tpot_mean_ms"):
        np.testing.assert_allclose(t[f"{k}_at_rate_error"], t[f"{k}_at_rate_predicted"] / t[f"{k}_reported"] - 1,
                                   rtol=0, atol=1e-15)
    assert list(t["set"]) == ["held-out", "held-out", "check"]
    amd = t[t["id"] == "mi300x-8-server"].iloc[0]
    assert amd["tp"] == 1 and amd["chunk_tokens"] == 49152 and amd["schedule"] == "prefill_first" and amd["batcher"]


@pytest.mark.parametrize("old,new,key", [('set = "check"', 'set = "fit"', "set"),
                                         ('schedule = "prefill_first"', 'schedule = "fcfs"', "schedule")])
def test_a_malformed_run_names_its_key(tmp_path, old, new, key):
    text = (DATA_DIR / "mlperf_server_runs.toml").read_text()
    assert old in text
    p = tmp_path / "runs.toml"
    p.write_text(text.replace(old, new))
    with pytest.raises(CatalogueError, match=key):
        mlperf.published_server_runs(p)
