"""Issue 33, the sweep engine, the migration horizon and the torus closed forms: every argument is checked at the
edge, in every mode, with an error that names it; lazy=True returns a Dask frame."""

from __future__ import annotations

import pytest

from accelbook import sweep
from accelbook.economics import migration
from accelbook.network import geometry
from accelbook.sweep.grid import blocks


def _double(x):
    return {"y": 2 * x}


def test_lazy_run_returns_the_dask_frame_of_the_task_files(tmp_path):
    df = sweep.run(_double, {"x": [1, 2, 3]}, client="serial", progress=False, out_dir=tmp_path, lazy=True)
    assert sorted(df.compute()["y"].tolist()) == [2, 4, 6]


@pytest.mark.parametrize("change, name", [
    ({"fn": None}, "fn"), ({"client": "x"}, "client"), ({"retries": -1}, "retries"), ({"retries": 1.5}, "retries"),
    ({"block_size": 0}, "block_size"), ({"max_task_s": 0}, "max_task_s"), ({"progress": "no"}, "progress"),
    ({"lazy": 1}, "lazy"), ({"per": "row"}, "per"), ({"target_overhead": 0}, "target_overhead"),
])
def test_run_refuses_each_bad_argument_by_name(change, name, tmp_path):
    args = {"fn": _double, "grid": {"x": [1]}, "client": "serial", "progress": False, "out_dir": tmp_path} | change
    with pytest.raises((ValueError, TypeError), match=name):
        sweep.run(**args)


def test_blocks_refuses_a_block_size_below_one():
    assert blocks(5, 2) == [(0, 2), (2, 4), (4, 5)]
    with pytest.raises(ValueError, match="block_size"):
        blocks(10, -1)
    with pytest.raises(ValueError, match="n_configs"):
        blocks(-1, 2)


def test_the_migration_horizon_is_bounded():
    with pytest.raises(ValueError, match="horizon_months"):
        migration.Migration(2.0, 1.2, 1e4, horizon_months=10**7)
    assert migration.Migration(2.0, 1.2, 1e4, horizon_months=migration.MAX_HORIZON_MONTHS).horizon_months == 1200


@pytest.mark.parametrize("fn", [geometry.torus_mean_hops, geometry.torus_diameter,
                                geometry.torus_all_to_all_max_load])
@pytest.mark.parametrize("dims", [(-1, 4), (), None, "8x8", (4, 0), (2.5, 4), (2**13, 2**13)])
def test_torus_closed_forms_refuse_bad_dims(fn, dims):
    with pytest.raises((ValueError, TypeError), match="dims"):
        fn(dims)


def test_torus_closed_forms_on_good_input_and_their_own_limits():
    # 8x8x16: mean ring distances 2, 2, 4 -> 8 x 1024/1023; diameters 4 + 4 + 8; busiest link 1024 x 4 / 2
    assert geometry.torus_mean_hops((8, 8, 16)) == pytest.approx(8 * 1024 / 1023)
    assert geometry.torus_diameter((8, 8, 16)) == 16
    assert geometry.torus_all_to_all_max_load((8, 8, 16)) == 2048
    with pytest.raises(ValueError, match="one chip"):
        geometry.torus_mean_hops((1,))
    with pytest.raises(ValueError, match="no ring"):
        geometry.torus_all_to_all_max_load((2, 2))
    with pytest.raises((ValueError, TypeError), match="wraparound"):
        geometry.torus_diameter((4, 4), "x")
    with pytest.raises(ValueError, match="wraparound"):
        geometry.torus_diameter((4, 4), (True,))
