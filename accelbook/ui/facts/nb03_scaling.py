"""Facts of notebooks/03_interconnects.ipynb's weak-scaling and all-to-all tables (keys ``nb03.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.network import topology as tp
from accelbook.network.collectives import estimate
from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui.facts import fact
from accelbook.ui.facts import nb03_shared as sh


# -- weak scaling (the notebook's table: the same calls) ------------------------------------------------------
@catalogue_cache(maxsize=None)
def _weak(family: str, label: str) -> list:
    systems = {"v5p": lambda: [tp.tpu_slice("v5p", (k, k, k)) for k in (4, 8, 16)],
               "v6e": lambda: [tp.tpu_multislice("v6e", (16, 16), k) for k in (1, 4, 12, 24)],
               "h100": lambda: [tp.h100_cluster(n) for n in (1, 8, 64, 512)]}[family]()
    size = {"1 GiB": 2**30, "1 MiB": 2**20}[label]
    return [estimate("all_reduce", size, t) for t in systems]


def _speed_min(family: str, label: str) -> float:
    es = _weak(family, label)
    return min(es[0].time_s / e.time_s for e in es)


@fact("nb03.weak_v5p_big_pct")
def _v5p_big() -> str:
    return sh.pct(_speed_min("v5p", "1 GiB"))


@fact("nb03.weak_v5p_small_slowdown")
def _v5p_small() -> str:
    return f"{1 / _speed_min('v5p', '1 MiB'):.1f}"


@fact("nb03.weak_v6e_loss_pct")
def _v6e_loss() -> str:
    es = _weak("v6e", "1 GiB")
    return sh.pct(1 - es[0].time_s / es[-1].time_s)


@fact("nb03.weak_v6e_dcn_transfer_ms")
def _v6e_dcn_bw() -> str:
    es = _weak("v6e", "1 GiB")
    return f"{(es[-1].bandwidth_s - es[0].bandwidth_s) * 1e3:.1f}"


@fact("nb03.weak_v6e_dcn_latency_ms")
def _v6e_dcn_lat() -> str:
    es = _weak("v6e", "1 GiB")
    return f"{(es[-1].latency_s - es[0].latency_s) * 1e3:.1f}"


@fact("nb03.weak_v6e_inside_ms")
def _v6e_inside() -> str:
    return f"{_weak('v6e', '1 GiB')[0].time_s * 1e3:.0f}"


@fact("nb03.dcn_gb_s")
def _dcn_gb_s() -> str:
    return f"{tp.tpu_multislice('v6e', (16, 16), 2).params['dcn_bw_bytes_per_s'] / 1e9:.1f}"


@fact("nb03.dcn_step_us")
def _dcn_step_us() -> str:
    return f"{tp.tpu_multislice('v6e', (16, 16), 2).params['dcn_latency_s'] * 1e6:.0f}"


@fact("nb03.weak_h100_leave_loss_pct")
def _h100_leave() -> str:
    es = _weak("h100", "1 GiB")
    return sh.pct(1 - es[0].time_s / es[1].time_s)


@fact("nb03.weak_h100_flat_pct")
def _h100_flat() -> str:
    es = _weak("h100", "1 GiB")
    return sh.signed_pct(es[-1].time_s / es[1].time_s - 1, 1)


# -- all-to-all on ~1,000-chip networks (the notebook's table) -----------------------------------------------
def _links_per_chip(t) -> str:
    return f"{2 * t.n_links / t.n_endpoints:.0f}"


@fact("nb03.torus_links_per_chip")
def _torus_links() -> str:
    return _links_per_chip(tp.torus((8, 8, 16)))


@fact("nb03.boardfly_links_per_chip")
def _boardfly_links() -> str:
    return _links_per_chip(tp.boardfly())


@fact("nb03.torus_a2a_max_load")
def _torus_a2a_load() -> str:
    return f"{tp.torus_all_to_all_max_load((8, 8, 16)):,.0f}"
