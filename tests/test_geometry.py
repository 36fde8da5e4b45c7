"""Torus closed forms (accelbook.network.geometry) against brute force over positions and graphs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numba import njit

from accelbook.network import geometry as geo
from accelbook.network import topology as tp


def ring_distance(i, j, k):
    d = abs(i - j)
    return min(d, k - d)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 8, 13, 16])
def test_mean_distances_by_brute_force(k):
    pairs = list(itertools.product(range(k), repeat=2))      # ordered, identical ones included
    assert geo.mean_ring_distance(k) == pytest.approx(np.mean([ring_distance(i, j, k) for i, j in pairs]), rel=1e-12)
    assert geo.mean_line_distance(k) == pytest.approx(np.mean([abs(i - j) for i, j in pairs]), rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 7, 16])
@pytest.mark.parametrize("wraps", [True, False])
def test_axis_diameter_is_the_graphs(k, wraps):
    # an axis is a ring only if it wraps and has more than 2 chips: with 2 the wraparound is the same link
    assert geo.axis_is_ring(k, wraps) == (wraps and k > 2)
    t = tp.torus((k,), wraparound=wraps)
    assert t.n_links == (k if geo.axis_is_ring(k, wraps) else k - 1)
    if k > 1:
        assert geo.axis_diameter(k, wraps) == tp.hop_stats(t)["diameter"]


def test_axis_helpers_run_inside_kernels():
    @njit
    def total(dims, wrap):
        s = 0
        for k, w in zip(dims, wrap):
            s += geo.axis_diameter(k, w)
        return s

    dims = np.array([8, 8, 16, 2, 3])
    wrap = np.array([True, False, True, True, True])
    assert total(dims, wrap) == geo.torus_diameter(tuple(dims), tuple(wrap)) == 4 + 7 + 8 + 1 + 1


@pytest.mark.parametrize("dims", [(8, 8, 16), (4, 6), (5,), (3, 4, 5)])
def test_worked_numbers(dims):
    # 8x8x16: diameter 4 + 4 + 8, mean (2 + 2 + 4) * 1024/1023, busiest link 1024 * 4 / 2
    if dims == (8, 8, 16):
        assert geo.torus_diameter(dims) == 16
        assert geo.torus_mean_hops(dims) == pytest.approx(8 * 1024 / 1023, rel=1e-12)
        assert geo.torus_all_to_all_max_load(dims) == 2048
    s = tp.hop_stats(tp.torus(dims))
    assert geo.torus_diameter(dims) == s["diameter"]
    assert geo.torus_mean_hops(dims) == pytest.approx(s["mean_hops"], rel=1e-12)
