"""accelbook.sweep on a 2-worker LocalCluster: the distributed result equals the serial one row for
row, a worker killed mid-sweep loses and duplicates nothing, an interrupted sweep resumes and redoes
only its unfinished tasks, bad configurations become error rows, and the built-in sweeps run."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from accelbook import sweep
from accelbook.sweep import store


def model(a: int, b: str, log: str = "", sleep_s: float = 0.0, stop_at: int = -1) -> dict:
    """A toy model: a bad configuration (a = 3, b = 'y') raises; every execution is logged."""
    if stop_at >= 0 and a == stop_at and Path(log).with_name("stop").exists():
        raise KeyboardInterrupt     # the kernel interrupted in the middle of a task
    if log:
        with open(log, "a") as fh:
            fh.write(f"{a},{b}\n")
    time.sleep(sleep_s)
    if a == 3 and b == "y":
        raise ValueError("bad configuration")
    return {"s": a * 2.0 + len(b), "t": f"{b}{a}"}


def block_model(configs: pd.DataFrame) -> pd.DataFrame:
    if (configs["a"] == 5).any():
        raise ZeroDivisionError("a = 5 breaks the vectorised model")
    return pd.DataFrame({"config_id": configs["config_id"], "s": configs["a"].to_numpy() * 2.0})


def executions(log: Path) -> list[tuple[int, str]]:
    if not log.exists():
        return []
    return [(int(a), b) for a, b in (line.split(",") for line in log.read_text().split())]


@pytest.fixture(scope="module")
def client():
    c = sweep.local_client(2)
    yield c
    c.close()


def test_grid_and_plan():
    cfg = sweep.configurations({"a": [1, 2], "b": ["x", "y", "z"]})
    assert list(cfg.columns) == ["config_id", "a", "b"] and len(cfg) == 6 and cfg["b"].tolist()[:3] == ["x", "y", "z"]
    with pytest.raises(ValueError, match="str, int, float or bool"):
        sweep.configurations({"a": [(1, 2)]})
    # the module's worked number: o = 8 ms, c = 2 ms, 5 % -> at least 80 configurations a task
    b, why = sweep.choose_block_size(10**5, 0.008, 0.002, threads=2)
    assert b == 12_500 and "tasks per worker" in why         # 10^5 / (4 · 2) > 80
    b, why = sweep.choose_block_size(10**6, 0.008, 0.002, threads=2)
    assert b == 30_000 and "60 s of work" in why              # 60 s / 2 ms
    b, why = sweep.choose_block_size(10**6, 0.008, 0.002, threads=4096)
    assert b == 80 and "5%" in why
    assert sweep.plan(1000, 0.008, 0.002, 2, block_size=80).overhead_share == pytest.approx(0.05)


def test_bad_configurations_become_error_rows():
    cfg = sweep.configurations({"a": list(range(8)), "b": ["x", "y"]})
    df = sweep.evaluate(model, cfg)
    assert len(df) == 16 and df["error"].notna().sum() == 1
    bad = df[df["error"].notna()].iloc[0]
    assert (bad.a, bad.b, bad.error) == (3, "y", "skipped: bad configuration") and np.isnan(bad.s)
    blk = sweep.evaluate(block_model, cfg, per="block")
    # a fault of the model function is not a skip: it names the exception
    assert blk.loc[blk["a"] == 5, "error"].str.startswith("failed: ZeroDivisionError").all()
    assert blk["error"].notna().sum() == 2 and (blk.loc[blk["a"] == 4, "s"] == 8.0).all()


def test_distributed_equals_serial(client, tmp_path):
    grid = {"a": list(range(30)), "b": ["x", "y", "zz"]}
    serial = sweep.run(model, grid, client=sweep.SERIAL, block_size=7, progress=False)
    dist = sweep.run(model, grid, client=client, block_size=7, progress=False, probe=False)
    auto = sweep.run(model, grid, client=client, progress=False)     # block size from the probe
    assert_frame_equal(serial, dist)
    assert_frame_equal(serial, auto)
    assert len(serial) == 90 and serial["error"].notna().sum() == 1
    plan = auto.attrs["plan"]
    assert plan["overhead_s"] > 0 and plan["per_config_s"] > 0 and plan["block_size"] >= 1
    # lazily, and as a pyarrow dataset: the same rows
    sweep.run(model, grid, client=client, block_size=7, progress=False, probe=False, out_dir=tmp_path / "lazy")
    lazy = sweep.read(tmp_path / "lazy", lazy=True)
    assert lazy.npartitions == 13
    assert_frame_equal(lazy.compute().sort_values("config_id", ignore_index=True), serial, check_dtype=False)
    assert sweep.dataset(tmp_path / "lazy").count_rows() == 90


def test_killed_worker_loses_and_duplicates_nothing(client, tmp_path):
    log, out = tmp_path / "log.txt", tmp_path / "out"
    grid = {"a": list(range(48)), "b": ["x"], "log": [str(log)], "sleep_s": [0.04]}
    killed = []

    def kill_one_worker():
        while len(store.parts(out)) < 2:
            time.sleep(0.02)
        pid = sorted(client.run(os.getpid).values())[0]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    t = threading.Thread(target=kill_one_worker, daemon=True)
    t.start()
    dist = sweep.run(model, grid, client=client, block_size=4, out_dir=out, progress=False, probe=False)
    t.join(timeout=30)
    assert killed, "no worker was killed"
    serial = sweep.run(model, {**grid, "log": [str(log)], "sleep_s": [0.0]}, client=sweep.SERIAL, block_size=4,
                       progress=False)
    assert_frame_equal(dist.drop(columns="sleep_s"), serial.drop(columns="sleep_s"))
    assert sorted(dist["config_id"]) == list(range(48))          # each row once
    client.wait_for_workers(2, timeout=60)                        # the nanny restarted it


def test_interrupted_sweep_resumes_only_unfinished_tasks(client, tmp_path):
    log, out = tmp_path / "log.txt", tmp_path / "out"
    grid = {"a": list(range(40)), "b": ["x"], "log": [str(log)], "stop_at": [22]}
    (tmp_path / "stop").touch()
    with pytest.raises(KeyboardInterrupt):
        sweep.run(model, grid, client=sweep.SERIAL, block_size=5, out_dir=out, progress=False, probe=False)
    assert len(store.parts(out)) == 4 and [a for a, _ in executions(log)] == list(range(22))
    (tmp_path / "stop").unlink()
    log.unlink()
    df = sweep.run(model, grid, client=client, out_dir=out, progress=False)    # the same call, resumed
    assert df.attrs["tasks_skipped"] == [0, 1, 2, 3] and df.attrs["tasks_run"] == [4, 5, 6, 7]
    assert sorted(a for a, _ in executions(log)) == list(range(20, 40))       # tasks 4-7 once each
    assert df["a"].tolist() == list(range(40)) and df["error"].isna().all()
    again = sweep.run(model, grid, client=client, out_dir=out, progress=False)
    assert again.attrs["tasks_run"] == [] and len(executions(log)) == 20
    with pytest.raises(ValueError, match="holds another sweep"):
        sweep.run(model, {**grid, "a": list(range(41))}, client=client, out_dir=out, progress=False)


def test_builtin_sweeps_small_grids():
    from accelbook.sweep import chip_design, frontier, serving_mc, training_layouts  # not on the workers

    f = sweep.evaluate(frontier.frontier_point, sweep.configurations(
        {"chip": ["h100", "groq-lpu-v1"], "model": ["llama-3.1-70b"], "precision": ["fp8"], "batch": [1, 64],
         "prompt_len": [1024], "output_len": [256], "n_chips": [0]}))
    assert set(f.loc[f["error"].isna(), "system_chips"]) == {8, 512}
    front = frontier.pareto_all(f)
    assert front["tokens_per_s_per_user"].is_monotonic_increasing
    assert front["tokens_per_s_per_chip"].is_monotonic_decreasing
    s = sweep.evaluate(serving_mc.serving_point, sweep.configurations(
        {"rate_per_s": [4.0, 40.0], "chunk_tokens": [512], "seed": [0, 1, 2], "n_requests": [300]}))
    ci = serving_mc.confidence_intervals(s)
    g = ci[ci["metric"] == "goodput_req_s"].set_index("rate_per_s")
    assert (g["n"] == 3).all() and (g["lo"] <= g["mean"]).all() and (g["mean"] <= g["hi"]).all()
    assert g.loc[4.0, "mean"] == pytest.approx(4.0, rel=0.3)          # light load: every request meets the SLOs
    d = sweep.evaluate(chip_design.design_point, sweep.configurations(
        {"area_mm2": [814.0], "power_w": [700.0], "workload": ["training", "decode-8192", "bogus"]}))
    assert d["error"].notna().tolist() == [False, False, True] and (d["tokens_per_s_per_chip"][:2] > 0).all()
    t = sweep.evaluate(training_layouts.layout_point, sweep.configurations(
        {"model": ["llama-3.1-8b", "llama-3.1-405b"], "chip": ["h100"], "n_chips": [64]}))
    assert t["error"].isna().tolist() == [True, False] and 0 < t["mfu"].iloc[0] < 1
