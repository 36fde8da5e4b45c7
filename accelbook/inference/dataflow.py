"""Dataflow chips at batch 1: what a token crossing their chips costs where a published figure says so,
the mechanism each chip's architecture papers give (issue 30), and a flag where the model's single-user speed
is out of its reach.

On a Groq LPU or a Cerebras wafer the weights sit in SRAM, so the weights' read of a decode step is tiny
(Llama 3.1 8B on one CS-3: 16 GB at 21 PB/s is 0.8 µs, 1.2 million tokens/s per user). That SRAM roofline
is an UPPER BOUND: it has every core read at once. The model charges, where a published figure supports a
term (``data/dataflow.toml``):

- ``mapping``: how a layer-mapped chip places a model. On the wafer each kernel sits on its own region of
  cores, which alone read its weights (``placement = "region"``, Cerebras's Hot Chips 2020 talk): a token
  crosses the layers' regions one after another, so at batch 1 the reads run at 1/k of the wafer's SRAM
  bandwidth, ``k = L/pp`` layers on each wafer (:func:`layers_per_region`). A Groq TSP streams every memory
  slice to every functional slice (``"chip"``, ISCA 2020): the whole chip reads the layer it holds.
- ``link_terms``: Groq LPU v1's chip-to-chip step at the ISCA 2022 bound on end-to-end latency (3 µs,
  an UPPER bound, so the speed is a lower bound) and one C2C link's 14 GB/s each way (Linley 2020);
- ``tier``: SambaNova SN40L's three tiers: the served model's weights stream from HBM (DDR holds the models
  not being served, the SRAM the fused decoder's working set) at the vendor's share of peak reached during
  token generation, synchronisation included (:func:`tier_terms`).

What no public figure gives (the wafer's per-layer latency: fabric hops, reductions, synchronisation; the
wafer-to-wafer and C2C per-hop latencies; whatever lets a published SN40L speed exceed its HBM bound) is
named in each entry's ``missing`` and in the flag. ``plausibility`` checks every prediction on such a chip
against the speeds published for that system: above ``PLAUSIBLE_FACTOR`` × the fastest one on a model no
larger (or nothing published to check against), or below ``1/PLAUSIBLE_FACTOR`` of one published for the
same model on as many chips, the result carries a flag with the reason and the missing figure, and charts
draw it hollow, never as if it were real. The published speeds only bound the model's claims; nothing in the
model is computed from them.
"""

from __future__ import annotations

import math
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
    """A single-user decode speed a system's maker (or a report of it) published; ``n_chips`` where the
    publication gives the chip count, ``use``: ``"bound"`` (plausibility reads it) or ``"check"``."""

    id: str
    chip_id: str
    model_id: str
    tokens_per_s_per_user: float
    provenance: Provenance
    n_chips: int | None = None
    use: str = "bound"


@dataclass(frozen=True)
class Mapping:
    """How a layer-mapped SRAM chip places a model: ``"region"`` (each layer on its own region of cores) or
    ``"chip"`` (each layer a chip holds read at the whole chip's bandwidth); ``missing``: what no figure gives."""

    chip_id: str
    placement: str
    note: str
    missing: str
    source: object


@dataclass(frozen=True)
class TierTerms:
    """A tiered chip's decode: the tier that serves the weights and the share of its peak bandwidth a decode
    step reaches, synchronisation included; ``missing``: what no public figure gives."""

    chip_id: str
    weights_tier: str
    decode_bw_share: float
    share_provenance: Provenance
    note: str
    missing: str
    source: object

    def sentence(self) -> str:
        return (f"weights served from {self.weights_tier.upper()} at {self.decode_bw_share:.0%} of its peak bandwidth, "
                f"synchronisation included [{self.share_provenance.source.title}]; {self.note}")


@catalogue_cache(maxsize=4)
def _load(path=None) -> tuple[dict, tuple[PublishedSpeed, ...], dict, dict]:
    path = path or DATA_DIR / "dataflow.toml"
    raw, sources = read_table_file(path), load_sources()
    check_keys(path, None, raw, required={"link", "speed"}, optional={"mapping", "tier"})
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
        check_keys(path, name, e, required={"chip", "model", "tokens_per_s_per_user", "use"}, optional={"n_chips"})
        if e["use"] not in ("bound", "check"):
            raise CatalogueError(path, name, "use", "must be 'bound' (plausibility reads it) or 'check'")
        n = e.get("n_chips")
        if n is not None and (type(n) is not int or n < 1):
            raise CatalogueError(path, name, "n_chips", "must be a whole number >= 1")
        q = parse_quantity(path, name, "tokens_per_s_per_user", e["tokens_per_s_per_user"], "count", sources)
        speeds.append(PublishedSpeed(sid, base_id(get_chip(e["chip"])), get_model(e["model"]).id, q.value,
                                     q.provenance, n, e["use"]))
    return links, tuple(speeds), _mappings(path, raw.get("mapping", {}), sources), \
        _tiers(path, raw.get("tier", {}), sources)


def _source(path, name: str, e: dict, sources):
    if e["src"] not in sources:
        raise CatalogueError(path, name, "src", f"{e['src']!r} is not an id of data/sources.toml")
    return sources[e["src"]]


def _mappings(path, raw: dict, sources) -> dict:
    out = {}
    for mid, e in raw.items():
        name = f"mapping.{mid}"
        check_keys(path, name, e, required={"chip", "placement", "src", "note", "missing"}, optional=set())
        if e["placement"] not in ("region", "chip"):
            raise CatalogueError(path, name, "placement", "must be 'region' or 'chip'")
        cid = base_id(get_chip(e["chip"]))
        out[cid] = Mapping(cid, e["placement"], e["note"], e["missing"], _source(path, name, e, sources))
    return out


def _tiers(path, raw: dict, sources) -> dict:
    out = {}
    for tid, e in raw.items():
        name = f"tier.{tid}"
        check_keys(path, name, e, required={"chip", "weights_tier", "src", "note", "decode_bw_share", "missing"},
                   optional={"ddr_tb"})
        if e["weights_tier"] not in ("sram", "hbm", "ddr"):
            raise CatalogueError(path, name, "weights_tier", "must be 'sram', 'hbm' or 'ddr'")
        share = parse_quantity(path, name, "decode_bw_share", e["decode_bw_share"], "count", sources)
        if not 0 < share.value <= 1:
            raise CatalogueError(path, name, "decode_bw_share", "must be in (0, 1]")
        if "ddr_tb" in e:
            parse_quantity(path, name, "ddr_tb", e["ddr_tb"], "tb", sources)
        cid = base_id(get_chip(e["chip"]))
        out[cid] = TierTerms(cid, e["weights_tier"], share.value, share.provenance, e["note"], e["missing"],
                             _source(path, name, e, sources))
    return out


def link_terms(chip: Chip | str) -> LinkTerms | None:
    """The published chip-to-chip terms of ``chip`` (``data/dataflow.toml``), or None."""
    return _load()[0].get(base_id(instance("chip", chip, Chip, get_chip)))


def mapping(chip: Chip | str) -> Mapping | None:
    """How ``chip`` places a model's layers (``data/dataflow.toml``), or None."""
    return _load()[2].get(base_id(instance("chip", chip, Chip, get_chip)))


def tier_terms(chip: Chip | str) -> TierTerms | None:
    """The published memory-tier terms of ``chip`` (``data/dataflow.toml``), or None."""
    return _load()[3].get(base_id(instance("chip", chip, Chip, get_chip)))


def layers_per_region(chip: Chip, model: Model, pp):
    """How many times slower than the chip's SRAM roofline a batch-1 read runs: ``k = L/pp`` (at least 1) on
    a chip that maps each layer onto its own region of cores (one region reads at a time), else 1. ``pp``
    may be an array (a sweep)."""
    mp = mapping(chip)
    if mp is None or mp.placement != "region":
        return 1.0
    k = model.n_layers / pp
    return np.maximum(k, 1.0) if type(k) is np.ndarray else max(k, 1.0)


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


def _missing(c: Chip) -> str:
    tt, mp = tier_terms(c), mapping(c)
    if tt is not None:
        return f"the model lacks {tt.missing}, which no public figure gives"
    if mp is not None:
        return f"the model lacks {mp.missing}, which no public figure gives"
    return ("the model lacks the per-layer latency of a token crossing the layers mapped onto "
            + ("the wafer's mesh" if c.kind == "wafer" else "its chips") + ", which no public figure gives")


def plausibility(chip: Chip | str, model: Model | str, tokens_per_s_per_user, n_chips: int | None = None):
    """``""`` when the single-user speed is within the model's reach, else the reason it is not; on a 1-D
    array of speeds, an array of those (object dtype), the published speeds looked up once.

    On an SRAM-only or tiered chip (``data/dataflow.toml``) the model lacks a mechanism no public figure gives
    (each chip's ``missing``), so its speed is checked against the speeds published for that system (rows
    with ``use = "bound"``): above ``PLAUSIBLE_FACTOR·v_pub``, ``v_pub`` the fastest on a model with no more
    parameters, or with no such publication, it is flagged; so is a speed below ``v/PLAUSIBLE_FACTOR`` of a
    speed ``v`` published for the same model on ``n_chips`` chips (given). One CS-3 on Llama 3.1 8B:
    37,100 tokens/s against Cerebras's 1,800, flagged; 640 Groq LPU v1 on Llama 2 70B: 131 against the 300
    published on it, within reach; 16 SN40L on Llama 3.1 405B: 24 against SambaNova's 129, flagged. Other
    chips: always ``""``."""
    c = instance("chip", chip, Chip, get_chip)
    m = instance("model", model, Model, get_model)
    v = tokens_per_s_per_user
    if type(v) is np.ndarray:
        if v.ndim != 1 or v.dtype.kind not in "iuf" or np.isnan(v).any() or (v < 0).any():
            raise ValueError(f"tokens_per_s_per_user must be a 1-D array of numbers >= 0, got {v.ravel()[:3]!r}")
    else:
        real("tokens_per_s_per_user", v, 0.0, allow_inf=True)
    if n_chips is not None and (type(n_chips) is not int or n_chips < 1):
        raise ValueError(f"n_chips must be a whole number >= 1, got {n_chips!r}")
    tiered = tier_terms(c) is not None
    if not sram_only(c) and not tiered:
        return np.full(len(v), "", dtype=object) if type(v) is np.ndarray else ""
    pub = [s for s in published_speeds(c) if s.use == "bound"]
    mine = [s for s in pub if get_model(s.model_id).params <= m.params]
    same = [s for s in pub if s.model_id == m.id and n_chips is not None and s.n_chips == n_chips]
    lack = _missing(c)
    same_model = [s for s in mine if s.model_id == m.id]       # this model's own speeds bound it first
    best = max(same_model or mine, key=lambda s: s.tokens_per_s_per_user) if mine else None
    floor = max(same, key=lambda s: s.tokens_per_s_per_user) if same else None
    over_at = (PLAUSIBLE_FACTOR * best.tokens_per_s_per_user if best is not None else
               (-1.0 if not tiered else math.inf))         # a tiered chip's HBM bound needs no ceiling
    under_at = floor.tokens_per_s_per_user / PLAUSIBLE_FACTOR if floor is not None else -1.0

    def reason(speed: float) -> str:
        if speed > over_at and best is None:
            return (f"out of the model's reach: no single-user speed of {c.name} is published for a model of "
                    f"{m.name}'s size or smaller to check it against; {lack}")
        if speed > over_at:
            what = (f"every published single-user speed of {c.name} on {m.name}" if same_model else
                    f"every published single-user speed of {c.name} on a model this size or smaller")
            return (f"out of the model's reach: {speed:,.0f} tokens/s per user is above {PLAUSIBLE_FACTOR:g}× {what} "
                    f"({best.tokens_per_s_per_user:,.0f} tokens/s, {get_model(best.model_id).name}, "
                    f"{best.provenance.source.title}); {lack}")
        if speed < under_at:
            return (f"out of the model's reach: {speed:,.0f} tokens/s per user is below 1/{PLAUSIBLE_FACTOR:g} of "
                    f"the {floor.tokens_per_s_per_user:,.0f} tokens/s published for {m.name} on {floor.n_chips} "
                    f"× {c.name} ({floor.provenance.source.title}); {lack}")
        return ""

    if type(v) is not np.ndarray:
        return reason(v)
    out = np.full(len(v), "", dtype=object)
    odd = np.flatnonzero((v > over_at) | (v < under_at))
    out[odd] = [reason(x) for x in v[odd].tolist()]
    return out
