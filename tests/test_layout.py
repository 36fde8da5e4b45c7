"""A parallel layout as one value: training.Layout (label, parse, TOML, estimate's layout=)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelbook import training
from accelbook.specs.loader import CatalogueError
from accelbook.training import Layout, load_layouts


def test_label_is_the_tables_wording():
    assert str(Layout(tp=8, pp=4, dp=32)) == "tp8 pp4 dp32 mb1 ZeRO-1 recompute selective"
    assert str(Layout(cp=2, dp=64, ep=8, microbatch=2, zero_stage=3, recompute="full")) == \
        "cp2 dp64 ep8 mb2 ZeRO-3 recompute full"
    assert str(Layout(pp=4, vp=2)) == "pp4 dp? vp2 mb1 ZeRO-1 recompute selective"


@settings(max_examples=200, deadline=None)
@given(tp=st.sampled_from([1, 2, 8]), cp=st.sampled_from([1, 4]), pp=st.sampled_from([1, 16]),
       vp=st.sampled_from([1, 2]), dp=st.one_of(st.none(), st.integers(1, 4096)), ep=st.sampled_from([1, 64]),
       mb=st.integers(1, 8), zero=st.sampled_from([0, 1, 2, 3]), rec=st.sampled_from(training.RECOMPUTE))
def test_parse_reads_back_every_label(tp, cp, pp, vp, dp, ep, mb, zero, rec):
    lay = Layout(tp=tp, cp=cp, pp=pp, vp=vp, dp=dp, ep=ep, microbatch=mb, zero_stage=zero, recompute=rec)
    assert Layout.parse(str(lay)) == lay
    assert hash(Layout.parse(str(lay))) == hash(lay)


def test_parse_names_the_word_it_cannot_read():
    with pytest.raises(ValueError, match="'tq8'"):
        Layout.parse("tq8 pp4")


@pytest.mark.parametrize("bad, match", [
    (dict(tp=0), "tp must be a whole number"), (dict(tp=2.5), "tp must be"), (dict(recompute="some"), "recompute"),
    (dict(zero_stage=True), "zero_stage"), (dict(schedule="gpipe"), "schedule"), (dict(tp_overlap=1.5), "tp_overlap"),
    (dict(flash_attention=1), "flash_attention must be True or False")])
def test_bad_fields_are_named(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Layout(**bad)


def test_layouts_load_from_toml(tmp_path):
    p = tmp_path / "layouts.toml"
    p.write_text('[meta-405b]\ntp = 8\npp = 16\nrecompute = "none"\n\n[small]\n')
    got = load_layouts(p)
    assert got == {"meta-405b": Layout(tp=8, pp=16, recompute="none"), "small": Layout()}
    p.write_text("[x]\ntpp = 8\n")
    with pytest.raises(CatalogueError, match=r"entry \[x\], key 'tpp'"):
        load_layouts(p)
    p.write_text("[y]\ntp = -1\n")
    with pytest.raises(CatalogueError, match=r"entry \[y\].*tp must be"):
        load_layouts(p)


ARGS = ("llama-3.1-70b", "h100", 1024, 2**24, 8192)


def test_estimate_takes_and_returns_a_layout():
    lay = Layout(tp=8, pp=4, dp=32, zero_stage=2, recompute="full")
    a = training.estimate(*ARGS, layout=lay)
    b = training.estimate(*ARGS, tp=8, pp=4, dp=32, zero_stage=2, recompute="full")
    assert a.step_time_s == b.step_time_s and a.memory_per_chip_bytes == b.memory_per_chip_bytes
    # the returned layout has what the estimate resolved: ZeRO-2 reduces every microbatch by default
    assert a.layout == lay.replace(grad_sync="microbatch")
    assert training.estimate(*ARGS, layout=a.layout).step_time_s == a.step_time_s


def test_a_layout_given_twice_is_an_error():
    with pytest.raises(ValueError, match="not both: tp, recompute"):
        training.estimate(*ARGS, tp=2, recompute="none", layout=Layout(tp=8))
    with pytest.raises(TypeError, match="layout must be"):
        training.estimate(*ARGS, layout={"tp": 8})


def test_search_returns_layouts():
    df = training.search(*ARGS, top=3, precision="fp8", tp_overlap=0.5)
    best = df.attrs["best"]
    lays = training.layouts_of(df)
    assert len(lays) == 3 and lays[0] == best.layout
    assert lays[0].precision == "fp8" and lays[0].tp_overlap == 0.5
    assert str(best.layout) == training.label_of(best.config)
    # each row's layout, estimated again, gives that row's step time
    for lay, step in zip(lays, df["step_time_s"]):
        assert training.estimate(*ARGS, layout=lay).step_time_s == step
    plain = df.copy()
    plain.attrs = {}
    with pytest.raises(ValueError, match="a table returned by"):
        training.layouts_of(plain)
