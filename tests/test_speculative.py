"""Draft-head speculative decoding (accelbook.inference.speculative): expected values worked by hand."""

import math

import pytest

from accelbook.inference import estimate
from accelbook.inference.speculative import _catalogue, acceptance, chain_tau, draft_head, speculative_decode
from accelbook.inference.validation import published_results
from accelbook.specs.chips import get_chip
from accelbook.specs.loader import CatalogueError


def test_chain_tau_from_deepseek_second_token():
    # a = 0.875 (tau 1.875 at one draft token): 3 tokens give (1 - 0.875^4) / 0.125 = 3.310546875
    assert chain_tau(1.875, 1, 3) == pytest.approx(3.310546875, rel=1e-12)
    assert chain_tau(3.2, 7, 7) == pytest.approx(3.2, rel=1e-12)
    assert chain_tau(1.5, 1, 0) == pytest.approx(1.0)


def test_chain_tau_rejects_bad_input():
    with pytest.raises(ValueError, match="tau"):
        chain_tau(0.5, 1, 3)
    with pytest.raises(ValueError, match="every token accepted"):
        chain_tau(2.0, 1, 3)
    with pytest.raises(ValueError, match="gamma_measured"):
        chain_tau(1.5, 0, 3)


def test_acceptance_entries_carry_their_sources():
    a = acceptance("sglang-eagle3-llama31-8b-mtbench-s5")
    assert (a.method, a.steps, a.topk, a.verify_tokens, a.draft_vocab, a.tau) == ("eagle3", 5, 8, 32, 32000, 4.68)
    assert "4247" in a.provenance.source.url
    with pytest.raises(ValueError, match="acceptance must be"):
        acceptance("no-such-run")


def test_draft_head_is_one_layer_of_the_target():
    h = draft_head("llama-3.1-8b", "eagle3", 32000)
    assert (h.n_layers, h.vocab_size, h.moe, h.d_model, h.d_ff) == (1, 32000, None, 4096, 14336)
    # one Llama 3.1 8B layer: attention 2*4096^2 + 2*4096*1024 = 41,943,040; SwiGLU 3*4096*14336 = 176,160,768;
    # two norms 8,192; the final norm 4,096; untied 32,000-row embedding and LM head 2*32,000*4,096 = 262,144,000
    assert h.params == 41_943_040 + 176_160_768 + 8_192 + 4_096 + 262_144_000
    m = draft_head("deepseek-v3", "mtp")
    assert m.n_layers == 1 and m.moe.n_dense_layers == 0 and m.moe.n_experts == 256 and m.vocab_size == 129280
    with pytest.raises(ValueError, match="method"):
        draft_head("llama-3.1-8b", "medusa")


def test_speculative_decode_adds_the_step_by_hand():
    # 5 draft passes over 8 tokens each (the head at tokens_per_seq 8, plus its fc 3*4096*4096 bf16 bytes at
    # the achievable bandwidth), one verify pass over 32 tokens, 4.68 tokens a step
    r = speculative_decode("llama-3.1-8b", "h100", 1, 1, 256, 512, "sglang-eagle3-llama31-8b-mtbench-s5")
    head = estimate(draft_head("llama-3.1-8b", "eagle3", 32000), "h100", 1, 1, 256, 512, "bf16", tokens_per_seq=8)
    verify = estimate("llama-3.1-8b", "h100", 1, 1, 256, 512, "bf16", tokens_per_seq=32)
    fc = 3 * 4096 * 4096 * 2 / (head.breakdown["memory_share"] * get_chip("h100").memory_bw_bytes_per_s)
    t_step = 5 * (head.tpot_s + fc) + verify.tpot_s
    assert r["tpot_s"] == pytest.approx(t_step / 4.68, rel=1e-12)
    assert r["tokens_per_s_per_user"] == pytest.approx(4.68 / t_step, rel=1e-12)
    assert (r["steps"], r["topk"], r["verify_tokens"], r["tau"]) == (5, 8, 32, 4.68)
    # memory-bound verify: 32 tokens cost little more than one, so the step beats 4.68 plain decodes
    assert 1 < r["speedup"] < 4.68


def test_speculative_decode_carries_a_chain_to_other_steps():
    r = speculative_decode("deepseek-v3", "b200", 8, 1, 1024, 2048, "deepseek-v3-mtp-second-token", "fp4",
                           steps=3, draft_precision="bf16")
    assert r["tau"] == pytest.approx(3.310546875, rel=1e-9)
    assert (r["steps"], r["verify_tokens"]) == (3, 4)
    assert math.isclose(r["tpot_s"], (3 * r["draft_step_s"] + r["verify_step_s"]) / r["tau"], rel_tol=1e-12)


def test_speculative_decode_rejects_mismatches():
    with pytest.raises(ValueError, match="measured on llama-3.1-8b"):
        speculative_decode("llama-3.1-70b", "h100", 8, 1, 256, 512, "sglang-eagle3-llama31-8b-mtbench-s5")
    with pytest.raises(ValueError, match="tree"):
        speculative_decode("llama-3.1-8b", "h100", 1, 1, 256, 512, "sglang-eagle3-llama31-8b-mtbench-s5", steps=3)
    with pytest.raises(ValueError, match="steps"):
        speculative_decode("deepseek-v3", "b200", 8, 1, 1024, 2048, "deepseek-v3-mtp-second-token", "fp4", steps=0)


def _write(tmp_path, text):
    p = tmp_path / "speculative.toml"
    p.write_text(text)
    return p


_HEAD = '[head.eagle3]\nlayers = 1\nffn = "dense"\nfc_inputs = 3\nnote = "n"\nsrc = "eagle3-paper"\n'
_ACC = ('[accept.x]\nmethod = "eagle3"\nmodel = "llama-3.1-8b"\ndataset = "d"\ntemperature = 0.0\n'
        'steps = {steps}\ntopk = 1\nverify_tokens = {verify}\ntau = {{ value = {tau}, src = "eagle3-paper" }}\n')


@pytest.mark.parametrize("steps, verify, tau, key", [(3, 5, 2.0, "verify_tokens"), (3, 4, 4.5, "tau"),
                                                     (0, 1, 1.0, "steps")])
def test_loader_names_the_bad_key(tmp_path, steps, verify, tau, key):
    p = _write(tmp_path, _HEAD + _ACC.format(steps=steps, verify=verify, tau=tau))
    with pytest.raises(CatalogueError, match=key):
        _catalogue(p)


def test_loader_rejects_an_unknown_ffn(tmp_path):
    p = _write(tmp_path, _HEAD.replace('"dense"', '"wide"') + _ACC.format(steps=3, verify=4, tau=2.0))
    with pytest.raises(CatalogueError, match="ffn"):
        _catalogue(p)


def test_validation_rows_with_a_draft(tmp_path):
    rows = published_results()
    drafted = [r for r in rows.values() if "draft" in r]
    assert len(drafted) >= 3 and all(r["metric"] == "tokens_per_s_per_user" for r in drafted)
    assert {r.get("set", "check") for r in rows.values()} <= {"check", "held-out"}
    bad = tmp_path / "runs.toml"
    bad.write_text('[x]\nname = "x"\nmodel = "llama-3.1-8b"\nchip = "h100"\nn_chips = 1\nbatch = 1\ninput_len = 1\n'
                   'output_len = 1\nprecision = "bf16"\nmetric = "tokens_per_s_per_chip"\nrole = "context"\n'
                   'reported = { value = 1, src = "eagle3-paper" }\ndraft = { acceptance = "a" }\n')
    with pytest.raises(CatalogueError, match="draft"):
        published_results(bad)


def test_error_band_keeps_drafted_rows_apart():
    import pandas as pd

    from accelbook.inference.validation import error_band
    t = pd.DataFrame({"role": ["context"] * 3, "metric": ["tokens_per_s_per_user"] * 3, "error": [0.1, 0.3, 1.0],
                      "flag": ["", "", ""], "draft": ["", "", "x"]})
    plain = error_band("tokens_per_s_per_user", t, role="context")
    assert (plain.n, plain.median) == (2, pytest.approx(0.2))
    d = error_band("tokens_per_s_per_user", t, role="context", drafted=True)
    assert (d.n, d.median) == (1, 1.0)
    with pytest.raises(ValueError, match="drafted"):
        error_band("tokens_per_s_per_user", t, role="context", drafted=1)
