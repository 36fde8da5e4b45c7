"""Facts quoted in the prose of notebooks/03_interconnects.ipynb (keys ``nb03.*``); see :mod:`accelbook.ui.facts`.

Each fact makes the call the notebook's code cells, its dashboards or its exercises make
(:mod:`accelbook.network.collectives`, :mod:`accelbook.network.topology`,
:func:`accelbook.network.validation.validation_table`, :func:`accelbook.specs.measured.allreduce_latency`).
"""

from __future__ import annotations

import numpy as np

from accelbook.network import topology as tp
from accelbook.network.collectives import estimate, sweep
from accelbook.network.validation import validation_table
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.measured import allreduce_latency
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact
from accelbook.ui.facts import nb03_shared as sh

#: the message of notebook 03's "tiny all-reduce": the size nccl-tests' small-message row was read at
#: (data/allreduce_latency.toml, 8 KB on 8 H100s), so that model and measurement compare like with like
TINY_BYTES = allreduce_latency("h100").message_bytes




# -- hops ------------------------------------------------------------------------------------------------------
@catalogue_cache(maxsize=None)
def _hops(kind: str) -> dict:
    return tp.hop_stats({"torus": lambda: tp.torus((8, 8, 16)), "boardfly": tp.boardfly}[kind]())


@fact("nb03.torus4_diameter")
def _torus4_diameter() -> str:
    return str(tp.hop_stats(tp.torus((4, 4, 4)))["diameter"])


@fact("nb03.torus16_diameter")
def _torus16_diameter() -> str:
    return f"{EXERCISES['torus-diameter-16'].expected():.0f}"


@fact("nb03.torus_1024_diameter")
def _torus_1024_diameter() -> str:
    return str(_hops("torus")["diameter"])


@fact("nb03.torus_4x4x64_diameter")
def _torus_4x4x64_diameter() -> str:
    return str(tp.torus_diameter((4, 4, 64)))


@fact("nb03.torus_1024_mean_hops")
def _torus_1024_mean() -> str:
    return f"{_hops('torus')['mean_hops']:.1f}"


@fact("nb03.boardfly_diameter")
def _boardfly_diameter() -> str:
    return str(_hops("boardfly")["diameter"])


@fact("nb03.boardfly_mean_hops")
def _boardfly_mean() -> str:
    return f"{_hops('boardfly')['mean_hops']:.1f}"


@fact("nb03.boardfly_common_hops")
def _boardfly_common() -> str:
    """The two hop counts most of BoardFly-like's pairs are apart, lower first (``4 or 5``)."""
    h = _hops("boardfly")["histogram"]
    a, b = sorted(np.argsort(h)[-2:])
    return f"{a} or {b}"


@fact("nb03.boardfly_common_share")
def _boardfly_common_share() -> str:
    h = _hops("boardfly")["histogram"]
    return sh.pct(np.sort(h)[-2:].sum() / h.sum())


# -- the 8-H100 node's figures (data/fabrics.toml, as the collective model reads them) ----------------------
def _node():
    return tp.hgx_h100(nvls=False)


def _protocol(name: str, nic: bool = False):
    protos = tp.h100_cluster(2).params["nic_protocols"] if nic else _node().protocols
    return {p.name: p for p in protos}[name]


@fact("nb03.nvlink_gb_s")
def _nvlink_gb_s() -> str:
    return f"{_node().link_bw_bytes_per_s / 1e9:.0f}"


@fact("nb03.nvlink_efficiency")
def _nvlink_efficiency() -> str:
    return f"{_node().efficiency:.2f}"


@fact("nb03.nvlink_efficiency_pct")
def _nvlink_efficiency_pct() -> str:
    return sh.pct(_node().efficiency)


@fact("nb03.protocol_overhead_pct")
def _protocol_overhead_pct() -> str:
    return sh.pct(1 - _node().efficiency)


@fact("nb03.ib_efficiency")
def _ib_efficiency() -> str:
    return f"{tp.h100_cluster(2).params['nic_efficiency']:.2f}"


@fact("nb03.nvls_efficiency")
def _nvls_efficiency() -> str:
    return f"{tp.hgx_h100(nvls=True).in_network_efficiency:.2f}"


@fact("nb03.nvls_efficiency_pct")
def _nvls_efficiency_pct() -> str:
    return sh.pct(tp.hgx_h100(nvls=True).in_network_efficiency)


for _name in ("LL", "LL128", "Simple"):
    def _base(name=_name) -> str:
        return f"{_protocol(name).base_latency_s * 1e6:.1f}".removesuffix(".0")

    def _step(name=_name) -> str:
        return f"{_protocol(name).step_latency_s * 1e6:.1f}".removesuffix(".0")

    def _nic_step(name=_name) -> str:
        return f"{_protocol(name, nic=True).step_latency_s * 1e6:.1f}".removesuffix(".0")

    fact(f"nb03.{_name.lower()}_base_us")(_base)
    fact(f"nb03.{_name.lower()}_step_us")(_step)
    fact(f"nb03.{_name.lower()}_ib_step_us")(_nic_step)


@fact("nb03.ll_cap_gb_s")
def _ll_cap() -> str:
    return f"{_protocol('LL').max_busbw_bytes_per_s / 1e9:.0f}"


@fact("nb03.ll128_share_pct")
def _ll128_share() -> str:
    return sh.pct(_protocol("LL128").bandwidth_share)


@fact("nb03.tpu_hop_us")
def _tpu_hop_us() -> str:
    return f"{tp.tpu_slice('v5p', (4, 4, 4)).hop_latency_s * 1e6:.0f}"


# -- a tiny all-reduce on 8 H100s: the model, and nccl-tests' measurement --------------------------------
@catalogue_cache(maxsize=None)
def _tiny():
    return estimate("all_reduce", TINY_BYTES, _node())


@fact("nb03.tiny_bytes")
def _tiny_bytes() -> str:
    return f"{TINY_BYTES / 2**10:.0f}"


@fact("nb03.tiny_protocol")
def _tiny_protocol() -> str:
    return _tiny().protocol


@fact("nb03.tiny_steps")
def _tiny_steps() -> str:
    """Ring steps of the 8-GPU all-reduce: its latency less the protocol's fixed cost, over one step's."""
    p = _protocol(_tiny().protocol)
    return f"{(_tiny().latency_s - p.base_latency_s) / p.step_latency_s:.0f}"


@fact("nb03.tiny_allreduce_us")
def _tiny_us() -> str:
    return f"{_tiny().time_s * 1e6:.1f}"


@fact("nb03.tiny_latency_us")
def _tiny_latency_us() -> str:
    return f"{_tiny().latency_s * 1e6:.1f}"


@fact("nb03.tiny_measured_us")
def _tiny_measured_us() -> str:
    return f"{allreduce_latency('h100').latency_s * 1e6:.0f}"


@fact("nb03.tiny_measured_busbw_gb_s")
def _tiny_measured_busbw() -> str:
    m = allreduce_latency("h100")
    return f"{m.message_bytes * 2 * (m.n_gpus - 1) / m.n_gpus / m.latency_s / 1e9:.2f}"


@fact("nb03.tiny_error")
def _tiny_error() -> str:
    return sh.signed_pct(_tiny().time_s / allreduce_latency("h100").latency_s - 1)


@fact("nb03.kib_allreduce_us")
def _kib_us() -> str:
    return f"{estimate('all_reduce', 2**10, _node()).time_s * 1e6:.1f}"


@fact("nb03.kib_allreduce_2x_us")
def _kib_2x_us() -> str:
    return f"{estimate('all_reduce', 2**10, _node().scaled(bandwidth=2.0)).time_s * 1e6:.1f}"


@fact("nb03.knee_mib")
def _knee_mib() -> str:
    """The message (MiB) above which an 8-H100 all-reduce is less than half latency (the dashboard's sweep)."""
    s = sweep("all_reduce", _node(), np.geomspace(2**10, 2**34, 401))
    return f"{s['message_bytes'][np.argmax(s['latency_share'].to_numpy() < 0.5)] / 2**20:.1f}"


# -- 1 MiB on 8 H100s (the prediction) ---------------------------------------------------------------------
@catalogue_cache(maxsize=None)
def _mib():
    return estimate("all_reduce", 2**20, _node())


@fact("nb03.mib_latency_share_pct")
def _mib_share() -> str:
    return f"{EXERCISES['predict-latency-share-1mib'].expected():.0f}"


@fact("nb03.mib_protocol")
def _mib_protocol() -> str:
    return _mib().protocol


@fact("nb03.mib_latency_us")
def _mib_latency_us() -> str:
    return f"{_mib().latency_s * 1e6:.0f}"


@fact("nb03.mib_bandwidth_us")
def _mib_bandwidth_us() -> str:
    return f"{_mib().bandwidth_s * 1e6:.0f}"


# -- busbw of large all-reduces on 8 H100s (the exercises' calls) --------------------------------------------
@fact("nb03.ring_busbw_gb_s")
def _ring_busbw() -> str:
    return f"{EXERCISES['ring-busbw-h100'].expected():.0f}"


@fact("nb03.nvls_busbw_gb_s")
def _nvls_busbw() -> str:
    return f"{EXERCISES['nvls-busbw-h100'].expected():.0f}"


@fact("nb03.nvls_algbw_gb_s")
def _nvls_algbw() -> str:
    return f"{estimate('all_reduce', 64e9, tp.hgx_h100(nvls=True), 'nvls').algbw_bytes_per_s / 1e9:.1f}"


@fact("nb03.nvls_over_ring")
def _nvls_over_ring() -> str:
    return f"{EXERCISES['nvls-busbw-h100'].expected() / EXERCISES['ring-busbw-h100'].expected():.2f}"


@fact("nb03.nvls_over_rate")
def _nvls_over_rate() -> str:
    """NVLS busbw over the rate NCCL gives NVLS (link × efficiency × NVLS efficiency): 2(p-1)/(p+1)."""
    t = tp.hgx_h100(nvls=True)
    return f"{EXERCISES['nvls-busbw-h100'].expected() * 1e9 / (t.link_bw_bytes_per_s * t.efficiency * t.in_network_efficiency):.2f}"


@fact("nb03.naive_nvls_gb_s")
def _naive_nvls() -> str:
    return f"{2 * EXERCISES['ring-busbw-h100'].expected():.0f}"


@fact("nb03.naive_nvls_error")
def _naive_nvls_error() -> str:
    return sh.signed_pct(2 * EXERCISES['ring-busbw-h100'].expected() / _row("nvls-allreduce-8xh100")["measured"] - 1)


@fact("nb03.ring_busbw_2x_gb_s")
def _ring_busbw_2x() -> str:
    return f"{EXERCISES['whatif-ring-busbw-2x'].expected():.0f}"


@fact("nb03.nvlink_2x_gb_s")
def _nvlink_2x() -> str:
    return f"{_node().scaled(bandwidth=2.0).link_bw_bytes_per_s / 1e9:.0f}"


@fact("nb03.v5p_64kib_latency_us")
def _v5p_lat() -> str:
    return f"{estimate('all_reduce', 64 * 2**10, tp.tpu_slice('v5p', (4, 4, 4))).latency_s * 1e6:.0f}"


@fact("nb03.v5p_64kib_bandwidth_us")
def _v5p_bw() -> str:
    return f"{estimate('all_reduce', 64 * 2**10, tp.tpu_slice('v5p', (4, 4, 4))).bandwidth_s * 1e6:.2f}"


@fact("nb03.ring4_diameter")
def _ring4_diameter() -> str:
    return str(tp.torus_diameter((4,)))


# -- the validation table -------------------------------------------------------------------------------------
@catalogue_cache(maxsize=None)
def _validation():
    return validation_table().set_index("case")


def _row(case: str):
    return _validation().loc[case]


def _err(case: str) -> str:
    """Model / measured - 1, signed: one decimal below 1 % (``+0.4``), whole percent above."""
    e = _row(case)["error"]
    return sh.signed_pct(e, 1 if abs(e) < 0.01 else 0)


def _fig(case: str, col: str, digits: int = 0) -> str:
    return f"{_row(case)[col]:,.{digits}f}"


#: fact key -> (case of data/collective_measurements.toml, what of its row: "error", "measured" or "model")
_VALIDATION_FACTS = {
    "nb03.val_ring_measured": ("ring-allreduce-8xh100", "measured"),
    "nb03.val_nvls_measured": ("nvls-allreduce-8xh100", "measured"),
    "nb03.val_nvls_model": ("nvls-allreduce-8xh100", "model"),
    "nb03.val_jax58_measured": ("allreduce-58mb-8xh100", "measured"),
    "nb03.val_jax58_model": ("allreduce-58mb-8xh100", "model"),
    "nb03.val_jax58_error": ("allreduce-58mb-8xh100", "error"),
    "nb03.val_ib_model": ("ib-ring-2-nodes", "model"),
    "nb03.val_ib_error": ("ib-ring-2-nodes", "error"),
    "nb03.val_v5e_small_measured": ("v5e-allgather-axis-of-4", "measured"),
    "nb03.val_v5e_small_model": ("v5e-allgather-axis-of-4", "model"),
    "nb03.val_v5e_small_error": ("v5e-allgather-axis-of-4", "error"),
    "nb03.val_v5e_large_measured": ("v5e-allgather-axis-of-4-large", "measured"),
    "nb03.val_v5p_axis_measured": ("v5p-allgather-axis-theory", "measured"),
    "nb03.val_a2a_measured": ("alltoall-cross-node-theory", "measured"),
    "nb03.val_v4_pod_error": ("v4-pod-allreduce-spec", "error"),
    "nb03.val_v5e_pod_error": ("v5e-pod-allreduce-spec", "error"),
    "nb03.val_v6e_pod_error": ("v6e-pod-allreduce-spec", "error"),
}
for _key, (_case, _col) in _VALIDATION_FACTS.items():
    fact(_key)(lambda c=_case, col=_col: _err(c) if col == "error" else _fig(c, col))


@fact("nb03.val_nvls_abs_error")
def _nvls_abs_error() -> str:
    """The bound the error is within, whole percent rounded up (1.6 % -> 2)."""
    return f"{np.ceil(100 * abs(_row('nvls-allreduce-8xh100')['error'])):.0f}"


@fact("nb03.val_v5e_small_kib")
def _v5e_small_kib() -> str:
    return f"{_row('v5e-allgather-axis-of-4')['message_bytes'] / 2**10:.0f}"


@fact("nb03.val_v5e_large_mb")
def _v5e_large_mb() -> str:
    return f"{_row('v5e-allgather-axis-of-4-large')['message_bytes'] / 1e6:.1f}"


@fact("nb03.val_v5e_large_abs_error")
def _v5e_large_abs() -> str:
    """The bound the error is within, whole percent rounded up (17.3 % -> 18)."""
    return f"{np.ceil(100 * abs(_row('v5e-allgather-axis-of-4-large')['error'])):.0f}"


@fact("nb03.val_v5e_implied_fixed_us")
def _v5e_implied_fixed() -> str:
    r = _row("v5e-allgather-axis-of-4")
    return f"{r['measured'] - r['model']:.0f}"


@catalogue_cache(maxsize=None)
def _v5e_small_estimate():
    """The estimate behind the 128 KiB v5e all-gather row: the same system and call as validation_table."""
    r = _row("v5e-allgather-axis-of-4")
    return estimate(r["collective"], r["message_bytes"], tp.tpu_axis("v5e", 4))


@fact("nb03.val_v5e_small_hops")
def _v5e_small_hops() -> str:
    e = _v5e_small_estimate()
    return f"{e.latency_s / tp.tpu_axis('v5e', 4).hop_latency_s:.0f}"


@fact("nb03.val_v5e_small_transfer_us")
def _v5e_small_transfer() -> str:
    return f"{_v5e_small_estimate().bandwidth_s * 1e6:.0f}"


@fact("nb03.val_jax58_mb")
def _jax58_mb() -> str:
    return f"{_row('allreduce-58mb-8xh100')['message_bytes'] / 1e6:.1f}"


@fact("nb03.val_jax58_protocol")
def _jax58_protocol() -> str:
    return _row("allreduce-58mb-8xh100")["protocol"]


def _measured():
    v = _validation()
    return v[v["kind"] == "measured"]


@fact("nb03.val_n_measured")
def _n_measured() -> str:
    return str(len(_measured()))


@fact("nb03.val_n_measured_within_20")
def _n_within() -> str:
    return str(int((_measured()["error"].abs() <= 0.2).sum()))


@fact("nb03.val_n_theory")
def _n_theory() -> str:
    v = _validation()
    return str(int((v["kind"] == "theory").sum()))


@fact("nb03.val_theory_max_abs_error")
def _theory_max() -> str:
    v = _validation()
    return f"{np.ceil(100 * v.loc[v['kind'] == 'theory', 'error'].abs().max()):.0f}"


@fact("nb03.ib_nics")
def _ib_nics() -> str:
    return str(tp.h100_cluster(2).params["gpus_per_node"])


@fact("nb03.tpu_v5e_link_gb_s")
def _v5e_link() -> str:
    return f"{tp.tpu_slice('v5e', (16, 16)).link_bw_bytes_per_s / 1e9:.0f}"


@fact("nb03.tpu_v6e_link_gb_s")
def _v6e_link() -> str:
    return f"{tp.tpu_slice('v6e', (16, 16)).link_bw_bytes_per_s / 1e9:.0f}"
