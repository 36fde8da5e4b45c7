"""``accelbook chip [NAME]``, ``accelbook model [NAME]`` and ``accelbook claims``: the catalogue's chips
(:func:`accelbook.specs.chips.chips`, :func:`~accelbook.specs.chips.get_chip`) and models
(:func:`accelbook.specs.models.models`, :func:`~accelbook.specs.models.get_model`), one or all, and the
claims ledger (:func:`accelbook.economics.claims.claims_table`)."""

from __future__ import annotations

from accelbook.cli.args import Arg, Command, integer
from accelbook.cli.output import fields_table, frame_table

CHIP_COLUMNS = ("id", "name", "vendor", "year", "peak_bf16_flop_s", "peak_fp8_flop_s", "memory_bw_bytes_per_s",
                "hbm_bytes", "tdp_w", "price_usd_per_hour")
MODEL_COLUMNS = ("id", "name", "family", "n_layers", "d_model", "n_heads", "n_kv_heads", "params", "active_params")


def _one_or_all(df, name, get, what: str):
    """The catalogue frame, or the row of ``name`` (found forgivingly by ``get``) as a field table."""
    if name is None:
        return df, f"{len(df):,} {what}s (SI units; accelbook {what} NAME for one, --json for every column)\n"
    ident = get(name).id
    row = df[df["id"] == ident].iloc[0].to_dict()
    return row, fields_table(row, f"{what} {ident} (SI units)")


def run_chip(v: dict):
    from accelbook.specs.chips import chips, get_chip

    out, text = _one_or_all(chips(), v.get("name"), get_chip, "chip")
    return out, text + (frame_table(out, CHIP_COLUMNS) if v.get("name") is None else "")


def run_model(v: dict):
    from accelbook.specs.models import get_model, models

    kw = {"seq_len": v["seq_len"]} if "seq_len" in v else {}
    out, text = _one_or_all(models(**kw), v.get("name"), get_model, "model")
    return out, text + (frame_table(out, MODEL_COLUMNS) if v.get("name") is None else "")


def run_claims(v: dict):
    from accelbook.economics.claims import VERDICTS, claims_table

    df = claims_table()
    if "verdict" in v:
        if v["verdict"] not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(map(repr, VERDICTS))}, got {v['verdict']!r}")
        df = df[df["verdict"] == v["verdict"]]
    if "id" in v:
        df = df[df["id"] == v["id"]]
        if df.empty:
            raise ValueError(f"id: no claim {v['id']!r}; `accelbook claims` lists them")
        return df.iloc[0].to_dict(), fields_table(df.iloc[0].to_dict(), "claim")
    import textwrap

    short = df.assign(claim=[textwrap.shorten(c, 90, placeholder=" ...") for c in df["claim"]])
    return df, f"{len(df):,} claims (--id ID for one, --json for all the text)\n" + frame_table(short, ("id", "verdict", "claim"))


CHIP = Command(("chip",), "one chip's figures, or the catalogue of chips",
               """example:
  accelbook chip                 (every chip: peaks, memory, power, price)
  accelbook chip "H100 SXM" --json""",
               (Arg("name", str, "a chip's id, name or alias (forgiving: h100, 'TPU v5p', trillium)", positional=True),),
               run_chip)
MODEL = Command(("model",), "one model's shapes and counts, or the catalogue of models",
                """example:
  accelbook model
  accelbook model llama-3.1-70b --json""",
                (Arg("name", str, "a model's id or name", positional=True),
                 Arg("seq_len", integer, "the sequence length of the training FLOPs per token (default 4096)")),
                run_model)
CLAIMS = Command(("claims",), "published claims about accelerators, checked against the catalogue",
                 """example:
  accelbook claims --verdict "not supported"
  accelbook claims --id h100-v5p-price --json""",
                 (Arg("verdict", str, "supported, not supported, cannot tell or out of scope"),
                  Arg("id", str, "one claim")),
                 run_claims)

COMMANDS = (CHIP, MODEL, CLAIMS)
