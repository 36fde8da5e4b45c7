"""Carbon per token and per training run (accelbook.economics.carbon) and the grid intensities it reads
(data/grid_carbon.toml via accelbook.specs.grid_carbon): hand arithmetic, the catalogue's checks."""

import pytest

from accelbook.economics import carbon
from accelbook.specs.grid_carbon import get_grid_carbon, grid_regions, load_grid_carbon
from accelbook.specs.loader import CatalogueError, UnknownNameError


def test_training_run_by_hand():
    # 1,000 chip-hours at 1,275 W (a DGX H100's share per GPU), PUE 1.2, on a 400 g/kWh grid:
    # 1000 h x 1.275 kW x 1.2 = 1,530 kWh; x 400 g/kWh = 612,000 g = 612 kg
    assert carbon.training_co2e_kg(1000, 1275, 1.2, 400 / 3.6e6) == pytest.approx(612.0, rel=1e-12)


def test_per_million_tokens_by_hand():
    # 2,000 tokens/s per kW at the wall: 1,000 J/s / 2,000 tokens/s = 0.5 J per token;
    # a million tokens is 5e5 J = 0.1389 kWh; at 360 g/kWh that is 50 g
    assert carbon.energy_j_per_token(2000.0) == pytest.approx(0.5, rel=1e-12)
    assert carbon.co2e_g_per_million_tokens(0.5, 360 / 3.6e6) == pytest.approx(50.0, rel=1e-12)


def test_inference_table_uses_each_regions_intensity():
    t = carbon.inference_carbon(2000.0, ["france", "Germany"]).set_index("region")
    # France 56 g/kWh (Ember via Our World in Data, 2023): 0.5 J x 1e6 / 3.6e6 x 56 = 7.78 g
    assert t.loc["France", "g_co2e_per_million_tokens"] == pytest.approx(0.5e6 / 3.6e6 * 56, rel=1e-12)
    assert t.loc["Germany", "g_co2e_per_kwh"] == pytest.approx(381, rel=1e-12)
    assert set(t["year"]) == {2023}


def test_training_table_reads_the_system_power_basis():
    t = carbon.training_carbon("h100", 1000, "us", pue=1.2).iloc[0]
    # DGX H100: 10.2 kW / 8 = 1,275 W; US 2022, 390 g/kWh: 1,530 kWh x 390 g = 596.7 kg
    assert t["power_w"] == pytest.approx(1275.0, rel=1e-12)
    assert t["t_co2e"] == pytest.approx(1530 * 390 / 1e6, rel=1e-12)


def test_a_chip_without_power_is_a_clear_error():
    with pytest.raises(ValueError, match="publishes no power"):
        carbon.training_carbon("tpu-v5p", 1000)


@pytest.mark.parametrize("call", [lambda: carbon.energy_j_per_token(0), lambda: carbon.training_co2e_kg(1, 1, 0.5, 1e-4),
                                  lambda: carbon.co2e_g_per_million_tokens(-1, 1e-4)])
def test_bad_input_names_the_argument(call):
    with pytest.raises(ValueError, match="tokens_per_s_per_kw|pue|energy_j_per_token"):
        call()


def test_every_region_is_dated_sourced_and_plausible():
    regions = grid_regions()
    assert {"world", "us", "eu", "france", "germany"} <= {g.id for g in regions}
    for g in regions:
        assert 1990 <= g.year <= 2026 and g.status in ("primary", "secondary")
        assert g.status == g.provenance.kind
        assert 10 <= g.g_co2e_per_kwh <= 1200          # between a hydro grid and an all-coal one
    assert get_grid_carbon("France").provenance.alternatives[0][0] * 3.6e6 == pytest.approx(32)


def test_unknown_region_lists_the_closest():
    with pytest.raises(UnknownNameError, match="france"):
        get_grid_carbon("frnace")


def test_status_must_match_its_source(tmp_path):
    p = tmp_path / "grid.toml"
    p.write_text('[x]\nname = "X"\nyear = 2023\nstatus = "primary"\n'
                 'intensity_g_kwh = { value = 100, src = "owid-ember-intensity-2023" }\n')
    with pytest.raises(CatalogueError, match="status"):
        load_grid_carbon(p)
