"""Dataflow (SRAM-only) chips: what a token crossing their chips costs where a published figure says so,
and a flag where the model's single-user speed is out of its reach.

On a Groq LPU or a Cerebras wafer the weights sit in SRAM, so the weights' read of a decode step is tiny
(Llama 3.1 8B on one CS-3: 16 GB at 21 PB/s is 0.8 µs, 1.2 million tokens/s per user). What bounds the
speed of one user there is latency: each layer's activations cross the chips (or the wafer's mesh) that
hold it, through a pipeline of compute units, and reductions gather the partial sums. The model charges
that latency only where a published figure supports a term (``data/dataflow.toml``):

- ``link_terms``: Groq LPU v1's chip-to-chip step at the ISCA 2022 bound on end-to-end latency (3 µs,
  an UPPER bound, so the speed is a lower bound) and one C2C link's 14 GB/s each way (Linley 2020);
- no per-layer, pipeline or on-wafer latency is published for Cerebras, and no speed at all for Groq
  LP30: their per-user speeds remain SRAM-bandwidth rooflines.

``plausibility`` therefore checks every prediction on an SRAM-only chip against the fastest single-user
speed published for that system on a model no larger (a smaller model decodes no slower): above
``PLAUSIBLE_FACTOR`` × that, or with nothing published to check against, the result carries a flag with
the reason, and charts draw it hollow, never as if it were real. The published speeds only bound the
model's claims; nothing in the model is computed from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelbook.checks import instance, real
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import Chip, base_id, get_chip
from accelbook.specs.loader import (
    DATA_DIR,
    CatalogueError,
    Provenance,
    check_keys,
    load_sources,
    parse_quantity,
    read_table_file,
)
from accelbook.specs.models import Model, get_model

#: a prediction more than this many times the fastest published speed is out of reach (issue 15's target band)
PLAUSIBLE_FACTOR = 1.5


@dataclass(frozen=True)
class LinkTerms:
    """Published chip-to-chip terms of one dataflow chip (SI): a step's latency and one link's bandwidth."""

    chip_id: str
    hop_s: float
    link_bytes_per_s: float
    upper_bound: bool
    hop_provenance: Provenance
    link_provenance: Provenance

    def sentence(self) -> str:
        bound = " (an UPPER BOUND on end-to-end latency, so the speed is a lower bound)" if self.upper_bound else ""
        return (f"chip-to-chip step {self.hop_s * 1e6:.1f} µs{bound} [{self.hop_provenance.source.title}], "
                f"link {self.link_bytes_per_s / 1e9:.0f} GB/s each way [{self.link_provenance.source.title}]")


@dataclass(frozen=True)
class PublishedSpeed:
    """A single-user decode speed a system's maker (or a report of it) published."""

    id: str
    chip_id: str
    model_id: str
    tokens_per_s_per_user: float
    provenance: Provenance


@catalogue_cache(maxsize=4)
def _load(path=None) -> tuple[dict, tuple[PublishedSpeed, ...]]:
    path = path or DATA_DIR / "dataflow.toml"
    raw, sources = read_table_file(path), load_sources()
    check_keys(path, None, raw, required={"link", "speed"}, optional=set())
    links = {}
    for lid, e in raw["link"].items():
        name = f"link.{lid}"
        check_keys(path, name, e, required={"chip", "hop_latency_us", "link_bw_gb_s"}, optional={"bound"})
        if e.get("bound", "exact") not in ("upper", "exact"):
            raise CatalogueError(path, name, "bound", "must be 'upper' or 'exact'")
        hop = parse_quantity(path, name, "hop_latency_us", e["hop_latency_us"], "us", sources)
        bw = parse_quantity(path, name, "link_bw_gb_s", e["link_bw_gb_s"], "gb_s", sources)
        cid = base_id(get_chip(e["chip"]))
        links[cid] = LinkTerms(cid, hop.value, bw.value, e.get("bound") == "upper", hop.provenance, bw.provenance)
    speeds = []
    for sid, e in raw["speed"].items():
        name = f"speed.{sid}"
        check_keys(path, name, e, required={"chip", "model", "tokens_per_s_per_user"}, optional=set())
        q = parse_quantity(path, name, "tokens_per_s_per_user", e["tokens_per_s_per_user"], "count", sources)
        speeds.append(PublishedSpeed(sid, base_id(get_chip(e["chip"])), get_model(e["model"]).id, q.value,
                                     q.provenance))
    return links, tuple(speeds)


def link_terms(chip: Chip | str) -> LinkTerms | None:
    """The published chip-to-chip terms of ``chip`` (``data/dataflow.toml``), or None."""
    return _load()[0].get(base_id(instance("chip", chip, Chip, get_chip)))


def published_speeds(chip: Chip | str | None = None) -> tuple[PublishedSpeed, ...]:
    """Every published single-user speed of a dataflow system, or of ``chip``'s system."""
    speeds = _load()[1]
    if chip is None:
        return speeds
    c = instance("chip", chip, Chip, get_chip)
    return tuple(s for s in speeds if s.chip_id == base_id(c))


def sram_only(chip: Chip) -> bool:
    """True for a chip whose only memory is on-chip SRAM (Groq LPU, Cerebras WSE): a dataflow chip."""
    return chip.hbm_bytes is None and chip.sram_bytes is not None


def plausibility(chip: Chip | str, model: Model | str, tokens_per_s_per_user):
    """``""`` when the single-user speed is within the model's reach, else the reason it is not; on a 1-D
    array of speeds, an array of those (object dtype), the published speeds looked up once.

    On an SRAM-only chip the model lacks the per-layer latency of a token crossing the chips or the wafer,
    so its speed is checked against the fastest speed published for that system on a model with no more
    parameters (``v_pub``): above ``PLAUSIBLE_FACTOR·v_pub``, or with no such publication, it is flagged.
    One CS-3 on Llama 3.1 8B: 1,184,896 tokens/s against Cerebras's 1,800, flagged; 640 Groq LPU v1 on
    Llama 2 70B: 131 against 480 (Mixtral 8x7B), within reach. Other chips: always ``""``."""
    c = instance("chip", chip, Chip, get_chip)
    m = instance("model", model, Model, get_model)
    v = tokens_per_s_per_user
    if type(v) is np.ndarray:
        if v.ndim != 1 or v.dtype.kind not in "iuf" or np.isnan(v).any() or (v < 0).any():
            raise ValueError(f"tokens_per_s_per_user must be a 1-D array of numbers >= 0, got {v.ravel()[:3]!r}")
    else:
        real("tokens_per_s_per_user", v, 0.0, allow_inf=True)
    if not sram_only(c):
        return np.full(len(v), "", dtype=object) if type(v) is np.ndarray else ""
    mine = [s for s in published_speeds(c) if get_model(s.model_id).params <= m.params]
    lack = ("the model lacks the per-layer latency of a token crossing the layers mapped onto "
            + ("the wafer's mesh" if c.kind == "wafer" else "its chips") + ", which no public figure gives")
    best = max(mine, key=lambda s: s.tokens_per_s_per_user) if mine else None

    def reason(speed: float) -> str:
        if best is None:
            return (f"out of the model's reach: no single-user speed of {c.name} is published for a model of "
                    f"{m.name}'s size or smaller to check it against; {lack}")
        if speed <= PLAUSIBLE_FACTOR * best.tokens_per_s_per_user:
            return ""
        return (f"out of the model's reach: {speed:,.0f} tokens/s per user is above "
                f"{PLAUSIBLE_FACTOR:g}× every published single-user speed of {c.name} on a model this size or smaller "
                f"({best.tokens_per_s_per_user:,.0f} tokens/s, {get_model(best.model_id).name}, "
                f"{best.provenance.source.title}); {lack}")

    if type(v) is not np.ndarray:
        return reason(v)
    out = np.full(len(v), "", dtype=object)
    over = np.flatnonzero(v > PLAUSIBLE_FACTOR * best.tokens_per_s_per_user) if best is not None else np.arange(len(v))
    out[over] = [reason(x) for x in v[over].tolist()]
    return out
