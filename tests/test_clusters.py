"""Training cluster presets and measured matrix-unit efficiency (accelbook.specs.clusters)."""

from __future__ import annotations

import pytest

from accelbook import training as T
from accelbook.costs.hierarchical import domain_ring_bandwidth
from accelbook.network import topology as tp
from accelbook.network.geometry import torus_axes
from accelbook.specs import clusters as C
from accelbook.specs import fabrics as F
from accelbook.specs.chips import get_chip
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.loader import CatalogueError
from accelbook.training.records import chip_record


def ring_bandwidth(g, cv):
    """The ring bandwidth of a group of ``g`` chips, from the chip record's fields as the training kernel passes them."""
    return domain_ring_bandwidth(g, cv.domain_chips, cv.domain_bw_bytes_per_s, cv.torus_dims)

_IDS = ("dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72", "tpu-v4-pod", "tpu-v5e-pod", "tpu-v5p-pod",
        "tpu-v6e-pod", "jean-zay-a100")


def test_every_preset_loads_with_sane_values():
    cls = C.clusters()
    assert set(_IDS) <= set(cls)
    for cid, cl in cls.items():
        assert cl.id == cid
        assert get_chip(cl.chip_id).id == cl.chip_id
        assert cl.chip.id == cl.chip_id
        assert cl.domain_chips >= 2 and cl.max_chips >= cl.domain_chips or cl.torus_dims == 0
        assert 0 < cl.domain_efficiency <= 1 and 0 < cl.network_efficiency <= 1
        assert cl.torus_dims in (0, 2, 3)
        # the fast domain is faster than the network between domains, and lower latency
        assert cl.domain_bw_bytes_per_s > cl.network_bw_bytes_per_s
        assert cl.domain_latency_s <= cl.network_latency_s
        assert C.get_cluster(cid) is cl and C.get_cluster(cl) is cl
        assert {"domain_bw_bytes_per_s", "network_bw_bytes_per_s"} <= set(cl.provenance)


def test_gpu_presets_match_the_datasheets():
    h = C.get_cluster("dgx-h100")
    assert (h.domain_chips, h.torus_dims) == (8, 0)
    assert h.domain_bw_bytes_per_s == pytest.approx(450e9)          # NVLink4 18 x 25 GB/s one way
    assert h.network_bw_bytes_per_s == pytest.approx(400e9 / 8)     # one 400 Gb/s NIC per GPU
    assert C.get_cluster("gb200-nvl72").domain_chips == 72
    assert C.get_cluster("dgx-a100").network_bw_bytes_per_s == pytest.approx(200e9 / 8)


@pytest.mark.parametrize("chip", ["h100", "a100", "b200", "tpu-v5p", "tpu-v4", "tpu-v5e", "tpu-v6e"])
def test_cluster_for_a_chip_is_built_from_it(chip):
    cl = C.cluster_for(chip)
    assert cl.chip_id == get_chip(chip).id
    assert (cl.torus_dims > 0) == (get_chip(chip).kind == "tpu")


def test_cluster_for_a_chip_without_preset_says_so():
    with pytest.raises(ValueError, match="no training cluster preset"):
        C.cluster_for("mi300x")


# -- torus axes and domain bandwidth ---------------------------------------------------------------------------
def test_torus_axes_by_hand():
    # 3D torus of 4096 = 16^3: a group inside one axis spans 1 axis, 16^2 spans 2, more spans 3
    for g, want in [(1, 1), (2, 1), (8, 1), (16, 1), (17, 2), (256, 2), (257, 3), (4096, 3), (10 ** 6, 3)]:
        assert torus_axes(g, 4096, 3) == want, g
    # 2D 16 x 16: never more than 2
    for g, want in [(1, 1), (16, 1), (32, 2), (256, 2), (4096, 2)]:
        assert torus_axes(g, 256, 2) == want, g


def test_torus_axes_is_monotone_and_capped():
    for dom, dims in [(4096, 3), (256, 2), (8960, 3), (64, 3)]:
        axes = [torus_axes(g, dom, dims) for g in range(1, 3 * dom)]
        assert axes == sorted(axes)
        assert min(axes) == 1 and max(axes) == dims


def test_ring_bandwidth_switched_and_torus():
    # (was Cluster.domain_bw's test: that method repeated ring_bandwidth, the kernels' own formula)
    h = C.get_cluster("dgx-h100")
    hv = chip_record(h.chip, h, "bf16")[0]
    for g in (1, 2, 8):
        assert ring_bandwidth(float(g), hv) == pytest.approx(450e9 * 0.82)
    v4 = C.get_cluster("tpu-v4-pod")   # one link 45 GB/s, 2 links (both directions of a ring) per axis
    v4v = chip_record(v4.chip, v4, "bf16")[0]
    assert ring_bandwidth(16.0, v4v) == pytest.approx(2 * 1 * 45e9)
    assert ring_bandwidth(256.0, v4v) == pytest.approx(2 * 2 * 45e9)
    assert ring_bandwidth(4096.0, v4v) == pytest.approx(2 * 3 * 45e9)


@pytest.mark.parametrize("cid", _IDS)
def test_kernel_bandwidth_is_the_clusters_link_times_the_axes(cid):
    cl = C.get_cluster(cid)
    cv = chip_record(cl.chip, cl, "bf16")[0]
    for g in (2, 4, 8, 16, 64, 256, 1024):
        if g > cl.domain_chips:
            continue
        links = 1 if cl.torus_dims == 0 else 2 * torus_axes(g, cl.domain_chips, cl.torus_dims)
        want = links * cl.domain_bw_bytes_per_s * cl.domain_efficiency
        assert ring_bandwidth(float(g), cv) == pytest.approx(want, rel=1e-12), g


# -- one description per link: clusters take their figures from data/fabrics.toml ---------------------------------
@pytest.mark.parametrize("cid", _IDS + ("dgx-h200", "dgx-h800"))
def test_cluster_figures_are_its_fabrics(cid):
    cl = C.get_cluster(cid)
    fabrics = F.fabrics()
    for level in ("domain", "network"):
        fab = fabrics[getattr(cl, f"{level}_fabric")]
        for fabric_field, own in (("hop_latency_s", "latency_s"), ("efficiency", "efficiency")):
            assert getattr(cl, f"{level}_{own}") == fab[fabric_field]
            assert cl.kinds[f"{level}_{own}"] == fab.kinds[fabric_field] in F.FIGURE_KINDS
        bw = getattr(cl, f"{level}_bw_bytes_per_s")
        # a cluster states its own bandwidth only where its chips get other than one link (TPU hosts' NICs)
        assert bw == fab["link_bw_bytes_per_s"] or cl.provenance[f"{level}_bw_bytes_per_s"].note


def test_the_network_preset_and_the_training_cluster_share_nvlink4():
    h = C.get_cluster("dgx-h100")
    assert h.domain_fabric == "nvlink4" and h.network_fabric == "ndr-infiniband"
    assert h.domain_latency_s == tp.hgx_h100().hop_latency_s == pytest.approx(3.4e-6)   # NCCL's ring step
    assert C.get_cluster("dgx-h800").domain_bw_bytes_per_s == pytest.approx(200e9)       # its own, reduced NVLink
    assert F.get_fabric("NVLink 4 through NVSwitch (H100), per GPU").id == "nvlink4"


def test_every_fabric_figure_says_what_it_is():
    for fab in F.fabrics().values():
        assert {"link_bw_bytes_per_s", "hop_latency_s", "efficiency"} <= set(fab.kinds)
        for field, kind in fab.kinds.items():
            assert kind in F.FIGURE_KINDS
            if fab[field + "_provenance"].kind == "estimate":
                assert kind == "estimate", (fab.id, field)


@pytest.mark.parametrize("old,new,problem", [
    ('kind = "vendor", note = "18 links', 'note = "18 links', "say kind"),
    ('kind = "vendor", note = "18 links', 'kind = "guess", note = "18 links', "kind must be one of"),
    ('src = "estimate-opa-100g", kind = "estimate"', 'src = "estimate-opa-100g", kind = "measured"', "is an estimate"),
])
def test_malformed_fabric_kinds_are_catalogue_errors(tmp_path, monkeypatch, old, new, problem):
    text = (F.FABRICS.path).read_text()
    assert old in text
    (tmp_path / "fabrics.toml").write_text(text.replace(old, new, 1))
    monkeypatch.setattr(F.FABRICS, "data_dir", tmp_path)
    F.FABRICS.cache_clear()
    try:
        with pytest.raises(CatalogueError, match=problem):
            F.fabrics()
    finally:
        monkeypatch.undo()
        F.FABRICS.cache_clear()


def test_with_changes_what_if():
    h = C.get_cluster("dgx-h100")
    w = h.with_changes(network_bw_bytes_per_s=100e9)
    assert w.network_bw_bytes_per_s == 100e9 and w.domain_chips == h.domain_chips and w.id != h.id
    with pytest.raises(ValueError, match="unknown cluster field"):
        h.with_changes(nic=1)
    with pytest.raises(ValueError, match="finite"):
        h.with_changes(network_bw_bytes_per_s=float("nan"))
    # a faster network never slows a step whose data-parallel ring crosses domains
    args = ("llama-3.1-8b", "h100", 64, 64 * 4096, 4096)
    slow = T.estimate(*args, tp=1, zero_stage=3, cluster=h)
    fast = T.estimate(*args, tp=1, zero_stage=3, cluster=w)
    assert fast.step_time_s <= slow.step_time_s


# -- measured efficiency ---------------------------------------------------------------------------------------
_CHIPS = ("a100", "h100", "h200", "h800", "b200", "gb200", "mi300x", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e")


@pytest.mark.parametrize("chip", _CHIPS)
@pytest.mark.parametrize("kind", ["bf16", "fp8", "attention"])
def test_measured_efficiency_fractions_are_in_0_1(chip, kind):
    m, why = measured_efficiency(chip, kind)
    assert 0 < m.fraction <= 1
    assert isinstance(why, str) and why


def test_measured_fraction_is_measured_over_peak():
    m, why = measured_efficiency("h100", "bf16")
    assert "measured on this chip" in why
    assert m.fraction == pytest.approx(794.5e12 / get_chip("h100").peak_flop_s("bf16"))
    assert m.measured_flop_s == pytest.approx(794.5e12)
    fp8, _ = measured_efficiency("h100", "fp8")
    assert fp8.fraction == pytest.approx(1402.6e12 / get_chip("h100").peak_flop_s("fp8"))


@pytest.mark.parametrize("chip,kind,sibling", [
    ("h200", "bf16", "h100"), ("h800", "bf16", "h100"), ("h800", "attention", "h100"),
    ("tpu-v5p", "bf16", "tpu-v5e"), ("tpu-v4", "bf16", "tpu-v5e"), ("tpu-8t", "bf16", "tpu7"), ("tpu-8i", "bf16", "tpu7"),
])
def test_chips_without_a_measurement_borrow_and_say_so(chip, kind, sibling):
    m, why = measured_efficiency(chip, kind)
    assert "borrowed" in why and sibling in why
    assert m.fraction == pytest.approx(measured_efficiency(sibling, kind)[0].fraction)


@pytest.mark.parametrize("chip,fraction", [
    ("tpu-v6e", 827.5 / 918),           # tpu-recipes: 8192^3 bf16, device time from the trace
    ("tpu7", 2 * 956.38 / 2307),        # Ironwood sweep: 956.38 TFLOP/s per TensorCore at 32,768^3, two per chip
])
def test_tpu_generations_with_a_gemm_timing_use_their_own(chip, fraction):
    m, why = measured_efficiency(chip, "bf16")
    assert "measured on this chip" in why and "borrowed" not in why
    assert m.fraction == pytest.approx(fraction, rel=1e-4)


def test_measured_chips_do_not_say_borrowed():
    for chip, kind in [("h100", "bf16"), ("h200", "fp8"), ("a100", "attention"), ("tpu-v5e", "bf16")]:
        _, why = measured_efficiency(chip, kind)
        assert "borrowed" not in why and "measured on this chip" in why


def test_assumed_attention_efficiency_is_stated():
    m, why = measured_efficiency("b200", "attention")   # no FlashAttention measurement for B200
    assert m.provenance is None and "ASSUMED" in why
    assert m.fraction == pytest.approx(0.75 * measured_efficiency("b200", "bf16")[0].fraction)


def test_fp8_without_a_measurement_falls_back_to_bf16_and_says_so():
    # the v6e has its own bf16 GEMM timing (tpu-recipes) and no FP8 one; MI300X, the old example, now has hipBLASLt's
    m, why = measured_efficiency("tpu-v6e", "fp8")
    assert "no FP8 GEMM measurement" in why
    assert m.fraction == pytest.approx(measured_efficiency("tpu-v6e", "bf16")[0].fraction)
    assert "no FP8 GEMM measurement" not in measured_efficiency("mi300x", "fp8")[1]


def test_measured_efficiency_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        measured_efficiency("h100", "int4")


def test_estimate_states_borrowed_efficiency_in_its_assumptions():
    e = T.estimate("llama-3.1-8b", "h200", 8, 8 * 4096, 4096)
    assert any("borrowed from h100" in a for a in e.assumptions)


# -- malformed files ----------------------------------------------------------------------------------------------
_GOOD_ENTRY = """
[test-cluster]
name = "test"
chip = "h100"
domain_fabric = "nvlink4"
network_fabric = "ndr-infiniband"
domain_chips = { value = 8, src = "nvidia-h100-datasheet" }
domain_torus_dims = { value = 0, src = "nvidia-h100-datasheet" }
network_bw_gb_s = { value = 50, src = "nccl-tests-issue-290", kind = "vendor" }
max_chips = { value = 1024, src = "estimate-cluster-size" }
"""


@pytest.fixture
def cluster_file(tmp_path, monkeypatch):
    """Point the cluster loader at a temporary data/clusters.toml; the cache is cleared around it."""
    def write(text):
        (tmp_path / "clusters.toml").write_text(text)
        monkeypatch.setattr(C.CLUSTERS, "data_dir", tmp_path)   # the fabrics stay the package's
        C.CLUSTERS.cache_clear()
        return tmp_path

    yield write
    monkeypatch.undo()
    C.CLUSTERS.cache_clear()


def test_good_temporary_file_loads(cluster_file):
    cluster_file(_GOOD_ENTRY)
    assert list(C.clusters()) == ["test-cluster"]
    assert C.clusters()["test-cluster"].max_chips == 1024


# (link figures moved to data/fabrics.toml: a cluster's own efficiency key is now an unknown key)
@pytest.mark.parametrize("old,new,key", [
    ('name = "test"', 'name = "test"\ndomain_efficiency_count = { value = 0.82, src = "nccl-tests-issue-212" }',
     "domain_efficiency_count"),
    ('domain_torus_dims = { value = 0', 'domain_torus_dims = { value = 4', "domain_torus_dims"),
    ('domain_chips = { value = 8,', 'domain_chips = { value = 8.5,', "domain_chips"),
    ('max_chips = { value = 1024, src = "estimate-cluster-size" }\n', '', "max_chips"),
    ('domain_fabric = "nvlink4"', 'domain_fabric = "nvlink9"', "domain_fabric"),
    ('network_fabric = "ndr-infiniband"', 'network_fabric = 3', "network_fabric"),
    ('network_bw_gb_s = { value = 50, src = "nccl-tests-issue-290", kind = "vendor" }', 'network_bw_gb_s = 50',
     "network_bw_gb_s"),
    ('src = "nccl-tests-issue-290", kind = "vendor"', 'src = "no-such-source", kind = "vendor"', "network_bw_gb_s"),
    ('src = "nccl-tests-issue-290", kind = "vendor"', 'src = "nccl-tests-issue-290"', "network_bw_gb_s"),
    ('src = "nccl-tests-issue-290", kind = "vendor"', 'src = "estimate-link-latency", kind = "vendor"',
     "network_bw_gb_s"),
    ('name = "test"', 'name = "test"\nnic_gb_s = 3', "nic_gb_s"),
])
def test_malformed_cluster_file_is_a_catalogue_error(cluster_file, old, new, key):
    assert old in _GOOD_ENTRY
    cluster_file(_GOOD_ENTRY.replace(old, new))
    with pytest.raises(CatalogueError) as err:
        C.clusters()
    assert key in str(err.value)


def test_real_presets_are_back_after_a_temporary_file():
    # (the fixture's teardown has run for the tests above; the real file loads again)
    assert "dgx-h100" in C.clusters()
