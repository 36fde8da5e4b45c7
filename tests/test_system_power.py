"""One power basis: the whole system per accelerator (data/system_power.toml, accelbook.specs.system_power)."""

import pytest

from accelbook.specs.chips import get_chip
from accelbook.specs.loader import CatalogueError
from accelbook.specs.system_power import default_pue, load_system_power, median_ratio, system_power


def test_published_systems_per_accelerator():
    # DGX user guides: maximum input power / 8 GPUs; a CS-3 is one system
    assert system_power("h100").system_w == pytest.approx(1275.0)
    assert system_power("a100").system_w == pytest.approx(812.5)
    assert system_power("b200").system_w == pytest.approx(1787.5)
    assert system_power("cerebras-cs3").system_w == pytest.approx(23000.0)
    assert system_power("h100").host_w == pytest.approx(575.0)
    assert system_power("cerebras-cs3").host_w == 0.0
    for s in load_system_power().values():
        assert s.basis == "measured" and s.provenance is not None and s.provenance.source.url.startswith("https://")


def test_chips_without_a_system_figure_scale_their_tdp_and_say_so():
    # the median of 1275/700, 1275/700, 812.5/400, 1787.5/1000 is 1275/700
    assert median_ratio() == pytest.approx(1275 / 700)
    mi = system_power("mi300x")
    assert mi.system_w == pytest.approx(750 * 1275 / 700) and mi.is_estimate and "ESTIMATE" in mi.text()
    gb = system_power("gb200")                   # borrows its sibling B200's ratio
    assert gb.system_w == pytest.approx(1200 * 1787.5 / 1000) and gb.basis == "borrowed from b200"
    assert system_power("groq-lpu-v1") is None   # no published power at all: nothing to scale


def test_a_what_if_with_its_own_tdp_keeps_its_base_systems_ratio():
    import dataclasses
    hot = dataclasses.replace(get_chip("h100"), id="h100+what-if", tdp_w=1000.0)
    assert system_power(hot).system_w == pytest.approx(1000 * 1275 / 700)


def test_default_pue_is_the_tco_default():
    assert default_pue() == pytest.approx(1.2)


def test_a_system_below_its_chips_tdp_is_refused(tmp_path):
    f = tmp_path / "sp.toml"
    f.write_text('[h100]\nsystem_kw = { value = 4.0, src = "nvidia-dgx-h100-user-guide" }\n'
                 'accelerators = { value = 8, src = "nvidia-dgx-h100-user-guide" }\n')
    with pytest.raises(CatalogueError, match="below the chip's own 700 W"):
        load_system_power(f)
    f.write_text('[h100]\nsystem_kw = { value = 10.2, src = "nvidia-dgx-h100-user-guide" }\n'
                 'accelerators = { value = 7.5, src = "nvidia-dgx-h100-user-guide" }\n')
    with pytest.raises(CatalogueError, match="whole number"):
        load_system_power(f)
