"""Article claims, tested: each claim in ``data/claims.toml`` is checked against the catalogue.

A check function takes the claim's own numbers (``params``) and returns what the model computes
and a verdict with its reason:

- **supported**: the catalogue and the model reproduce the claim;
- **not supported**: they contradict it (the reason says by how much and why);
- **cannot tell**: the answer hinges on something nobody has measured (the reason says what), or the
  only figures at hand come from the same report as the claim, so that agreeing with them shows
  consistency, not support;
- **out of scope**: the claim is about history, business or software, which no model here tests.

Verdicts are computed from the catalogue, so they follow the data: change a price in
``data/chips.toml`` and the verdict can change. Besides this module's own checks, the ledger uses
those of :mod:`.claim_checks` (catalogue and hardware models) and :mod:`.claim_scenarios` (MoE,
chip design, fleets, migrations, prices, out of scope). ``python -m accelbook.economics.claims``
writes ``docs/claims.md`` (:func:`render_claims_page`).
"""

from __future__ import annotations

import inspect
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from accelbook.checks import fraction, instance, positive, whole
from accelbook.files import checked_file_path, read_toml
from accelbook.specs.bibliography import markdown_escape
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.loader import DATA_DIR, CatalogueError, check_keys, load_sources, lookup_source

from . import claim_checks, claim_scenarios
from .cost import implied_params, peak_flop_per_usd

VERDICTS = ("supported", "not supported", "cannot tell", "out of scope")


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    origin: str
    published: str
    evidence: tuple[str, ...]
    check: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    model_says: str
    verdict: str
    reason: str
    numbers: Mapping[str, float]


_CHECKS: dict[str, Callable[..., tuple[str, str, str, dict]]] = {}


def _check(fn):
    _CHECKS[fn.__name__] = fn
    return fn


def _range(lo_name: str, lo, hi_name: str, hi) -> tuple[float, float]:
    """A claimed range ``[lo, hi]`` of prices or ratios: both finite and > 0, ``lo <= hi``."""
    lo, hi = positive(lo_name, lo), positive(hi_name, hi)
    if lo > hi:
        raise ValueError(f"{lo_name} ({lo:g}) must be at most {hi_name} ({hi:g})")
    return lo, hi


def _chip(name: str, chip) -> Chip:
    return instance(name, chip, Chip, get_chip)


def _mfus(**mfus) -> None:
    for name, v in mfus.items():
        fraction(name, v, zero_ok=False)


def _pct(x: float) -> str:
    return f"{x * 100:+.0f}%"


@_check
def tokens_and_mfu(chip_a, tokens_a, mfu_a, chip_b, tokens_b, mfu_b):
    """Tokens/s and MFU together fix the model size: N ≈ MFU·P / (6·tokens/s)."""
    positive("tokens_a", tokens_a), positive("tokens_b", tokens_b), _mfus(mfu_a=mfu_a, mfu_b=mfu_b)
    a, b = _chip("chip_a", chip_a), _chip("chip_b", chip_b)
    n_a = implied_params(tokens_a, mfu_a, a)
    n_b = implied_params(tokens_b, mfu_b, b)
    ratio = n_a / n_b
    says = (f"At the stated MFU, {tokens_a:,} tokens/s on {a.name} implies a {n_a / 1e9:.1f}B-parameter model "
            f"(6N FLOPs/token); {tokens_b:,} tokens/s on {b.name} implies {n_b / 1e9:.1f}B.")
    if abs(math.log(ratio)) > math.log(1.25):
        verdict = "not supported"
        reason = (f"The two halves cannot describe the same training run: the implied model sizes differ "
                  f"{ratio:.2f}x. No published run matches either pair (see 'published').")
    else:
        verdict = "cannot tell"
        reason = "The pair is self-consistent, but no published run reports it."
    return says, verdict, reason, {"implied_params_a": n_a, "implied_params_b": n_b, "ratio": ratio}


@_check
def price_range(chip_a, low_a, high_a, chip_b, low_b, high_b):
    """Compare claimed hourly price ranges with the catalogue's list prices."""
    _range("low_a", low_a, "high_a", high_a), _range("low_b", low_b, "high_b", high_b)
    out, inside, nums = [], [], {}
    for cid, lo, hi in ((chip_a, low_a, high_a), (chip_b, low_b, high_b)):
        c = get_chip(cid)
        if c.price_usd_per_hour is None:
            return f"{c.name} has no published price.", "cannot tell", "No price to compare.", {}
        p = c.price_usd_per_hour
        prov = c.provenance["price_usd_per_s"]
        alts = [v * 3600 for v, _, _ in prov.alternatives]
        ok = lo <= p <= hi
        inside.append(ok)
        nums[f"price_{cid}"] = p
        rng = f"; other listings {min(alts):.2f}-{max(alts):.2f}" if alts else ""
        out.append(f"{c.name}: ${p:.2f}/h ({prov.provider}, {prov.date}){rng} vs claimed ${lo:g}-{hi:g}")
    if all(inside):
        return "; ".join(out) + ".", "supported", "Both list prices fall inside the claimed ranges.", nums
    if not any(inside):
        return ("; ".join(out) + ".", "not supported",
                "Neither published price falls in its claimed range; both claims are above what providers list.", nums)
    return "; ".join(out) + ".", "not supported", "One of the two published prices falls outside its range.", nums


@_check
def price_performance(chip_a, chip_b, low, high, mfu_a, mfu_b):
    """Price-performance ratio a/b = (MFU_a·P_a/price_a) / (MFU_b·P_b/price_b) under two MFU assumptions."""
    _range("low", low, "high", high), _mfus(mfu_a=mfu_a, mfu_b=mfu_b)
    a, b = _chip("chip_a", chip_a), _chip("chip_b", chip_b)
    equal = peak_flop_per_usd(a) / peak_flop_per_usd(b)
    claimed = equal * mfu_a / mfu_b
    says = (f"Peak bf16 FLOPs per list-price dollar: {a.name} / {b.name} = {equal:.2f} ({_pct(equal - 1)}) at equal MFU; "
            f"{claimed:.2f} ({_pct(claimed - 1)}) with MFU {mfu_a:.0%} vs {mfu_b:.0%}.")
    hits = [low <= r <= high for r in (equal, claimed)]
    if all(hits):
        verdict, reason = "supported", "Both MFU assumptions land in the claimed range."
    elif not any(hits):
        verdict, reason = "not supported", "Neither MFU assumption lands in the claimed range."
    else:
        verdict = "cannot tell"
        reason = ("The claim holds only if both chips reach the same MFU; nobody has published a measured "
                  "price-performance comparison, and the ratio moves with each chip's MFU and negotiated price.")
    return says, verdict, reason, {"ratio_equal_mfu": equal, "ratio_claimed_mfu": claimed}


@_check
def generation_price_performance(chip, baseline, claimed, vendor_claim, also_against=()):
    """Peak FLOPs per dollar of ``chip`` relative to ``baseline`` (and others), vs the claimed factor."""
    positive("claimed", claimed), positive("vendor_claim", vendor_claim)
    c, base = _chip("chip", chip), _chip("baseline", baseline)
    r = peak_flop_per_usd(c) / peak_flop_per_usd(base)
    nums = {f"vs_{baseline}": r}
    others = []
    for o in also_against:
        oc = get_chip(o)
        ro = peak_flop_per_usd(c) / peak_flop_per_usd(oc)
        nums[f"vs_{o}"] = ro
        others.append(f"{ro:.1f}x vs {oc.name}")
    says = (f"Peak bf16 FLOPs per list-price dollar: {c.name} is {r:.2f}x {base.name}"
            + (f" ({', '.join(others)})" if others else "") + ".")
    if r >= 0.9 * claimed:
        return says, "supported", f"The list-price arithmetic reaches {r:.1f}x.", nums
    return (says, "not supported",
            f"Against its own predecessor the arithmetic gives {r:.1f}x and the vendor itself claims up to "
            f"{vendor_claim:g}x; {claimed:g}x matches the vendor's PERFORMANCE figure, not performance per dollar. "
            f"Against other chips the factor depends on which one and at what price.", nums)


def _printed_unit(capacity_bytes: float, printed: float) -> str | None:
    """The unit ("GiB" or "GB") in which ``printed`` is ``capacity_bytes`` within 1 % (None: in neither).

    1 % covers what a driver keeps of a binary capacity (an H100's "80 GB" shows 79.6 GiB in nvidia-smi)."""
    for unit, factor in (("GiB", 2**30), ("GB", 1e9)):
        if abs(capacity_bytes / factor - printed) / printed < 0.01:
            return unit
    return None


@_check
def memory_per_group(chip_a, claimed_a_gb, chip_b, n_b, claimed_b):
    """HBM of one chip vs n chips of another; GB (1e9) vs GiB (2^30) made explicit: each printed figure is
    read in the unit in which it matches the catalogue's capacity (memory is binary, vendors print "GB")."""
    positive("claimed_a_gb", claimed_a_gb), positive("claimed_b", claimed_b), whole("n_b", n_b)
    a, b = _chip("chip_a", chip_a), _chip("chip_b", chip_b)
    a_gb, a_gib = a.hbm_bytes / 1e9, a.hbm_bytes / 2**30
    b_gib = n_b * b.hbm_bytes / 2**30
    b_gb = n_b * b.hbm_bytes / 1e9
    says = (f"{a.name}: {a_gb:.1f} GB = {a_gib:.1f} GiB. {n_b} x {b.name}: {b_gib:.0f} GiB = {b_gb:.0f} GB. "
            f"Per chip: {a_gb:.1f} GB vs {b.hbm_bytes / 1e9:.1f} GB ({b.hbm_bytes / a.hbm_bytes:.2f}x); "
            f"{n_b} x {a.name}: {n_b * a_gb:.0f} GB.")
    a_unit, b_unit = _printed_unit(a.hbm_bytes, claimed_a_gb), _printed_unit(n_b * b.hbm_bytes, claimed_b)
    numbers = {"a_gb": a_gb, "a_gib": a_gib, "b_gib": b_gib, "b_gb": b_gb}
    if a_unit and b_unit:
        return (says, "supported",
                f"The numbers are right, read in the unit each memory has ({a.name}: {claimed_a_gb:g} {a_unit}, "
                f"{b.name}: {claimed_b:g} {b_unit}, both printed as 'GB'), but the comparison puts one chip against "
                f"{n_b}: per chip the gap is {b.hbm_bytes / a.hbm_bytes:.2f}x, per {n_b} chips {b_gb:.0f} GB vs "
                f"{n_b * a_gb:.0f} GB.", numbers)
    return says, "not supported", "The catalogue's capacities do not reproduce the claimed figures.", numbers


for _fn in (claim_checks.system_totals, claim_checks.ratio_within, claim_checks.torus_diameter,
            claim_checks.reconstructed_diameter, claim_checks.weak_scaling, claim_checks.chips_to_hold,
            claim_checks.lpu_waiting, claim_checks.sram_chip_speed, claim_checks.frontier_sides,
            claim_checks.decode_vs_batch, claim_checks.same_peak_other_tokens, claim_scenarios.out_of_scope,
            claim_scenarios.vendor_factor, claim_scenarios.published_stacks, claim_scenarios.moe_spread,
            claim_scenarios.low_diameter_decode, claim_scenarios.cae_gain, claim_scenarios.split_chips,
            claim_scenarios.fleet_placement, claim_scenarios.migration_sensitivity, claim_scenarios.cost_reduction,
            claim_scenarios.mfu_gap, claim_scenarios.serving_cost):
    _check(_fn)


def load_claims(path: Path | str | None = None) -> tuple[Claim, ...]:
    """Read a claims TOML file (default ``data/claims.toml``): each ``[id]`` names a check of this
    module, its ``params`` and the ``evidence`` (ids in ``data/sources.toml``)."""
    path = checked_file_path(path, "claims file") if path is not None else DATA_DIR / "claims.toml"
    raw = read_toml(path, "claims file")      # a missing, non-UTF-8, malformed or absurd file: named
    sources = load_sources()
    out = []
    for cid, e in raw.items():
        if not isinstance(e, dict):
            raise CatalogueError(path, cid, None, "top-level keys must be tables like [my-claim]")
        check_keys(path, cid, e, required={"claim", "origin", "published", "evidence", "check", "params"},
                    optional=set())
        for key in ("claim", "origin", "published"):
            if not isinstance(e[key], str):
                raise CatalogueError(path, cid, key, f"must be a string, got {e[key]!r}"[:200])
        if not isinstance(e["check"], str) or e["check"] not in _CHECKS:
            raise CatalogueError(path, cid, "check", f"no check named {e['check']!r}; have {sorted(_CHECKS)}")
        if not isinstance(e["params"], dict):
            raise CatalogueError(path, cid, "params", f"must be a table like params = {{ chip = \"h100\" }}, "
                                                      f"got {e['params']!r}"[:200])
        if not isinstance(e["evidence"], list):
            raise CatalogueError(path, cid, "evidence", f"must be a list of source ids, got {e['evidence']!r}"[:200])
        for sid in e["evidence"]:
            lookup_source(path, cid, "evidence", sid, sources)
        try:
            inspect.signature(_CHECKS[e["check"]]).bind(**e["params"])
        except TypeError as err:      # a missing or unknown parameter of the check, named before it runs
            raise CatalogueError(path, cid, "params", f"do not fit check {e['check']!r}: {err}") from None
        out.append(Claim(cid, e["claim"], e["origin"], e["published"], tuple(e["evidence"]), e["check"],
                         dict(e["params"])))
    return tuple(out)


def evaluate(claim: Claim) -> Verdict:
    """Run the claim's check on its own numbers: what the model says, the verdict and why."""
    says, verdict, reason, nums = _CHECKS[claim.check](**claim.params)
    assert verdict in VERDICTS
    return Verdict(claim, says, verdict, reason, nums)


@catalogue_cache(maxsize=1)
def _all() -> tuple[Verdict, ...]:
    return tuple(evaluate(c) for c in load_claims())


def verdicts() -> tuple[Verdict, ...]:
    """Every claim of data/claims.toml with the model's answer and verdict."""
    return _all()


def claims_table() -> pd.DataFrame:
    """One row per claim: claim, origin, what was published, what the model computes, verdict, reason."""
    return pd.DataFrame([{
        "id": v.claim.id, "claim": v.claim.claim, "published": v.claim.published,
        "model": v.model_says, "verdict": v.verdict, "reason": v.reason,
    } for v in verdicts()])


VERDICT_COLOURS = {"supported": "#2e7d32", "not supported": "#b00020", "cannot tell": "#b26a00",
                   "out of scope": "#546e7a"}


def claims_html(vs: tuple[Verdict, ...] | None = None, article: str | None = None,
                ids: tuple[str, ...] | None = None) -> str:
    """The claims as HTML cards: claim, origin, what was published, what the model says, verdict.
    ``article`` (``"article-1"`` ...) or ``ids`` keep only those claims.

    HTML rather than Markdown so that dollar signs in the claims are not read as LaTeX.
    """
    import html

    cards = []
    vs = verdicts() if vs is None else vs
    if article is not None:
        vs = tuple(v for v in vs if article_of(v.claim) == article)
    if ids is not None:
        missing = set(ids) - {v.claim.id for v in vs}
        if missing:
            raise KeyError(f"no claim {sorted(missing)} in data/claims.toml")
        vs = tuple(v for v in vs if v.claim.id in ids)
    for v in vs:
        colour = VERDICT_COLOURS[v.verdict]
        cards.append(
            f'<div class="accelbook-claim" style="border-left:5px solid {colour};padding:4px 12px;margin:10px 0">'
            f"<p><b>Claim.</b> {html.escape(v.claim.claim)}<br><i>Origin:</i> {html.escape(v.claim.origin)}</p>"
            f"<p><i>Published:</i> {html.escape(v.claim.published)}</p>"
            f"<p><i>Model:</i> {html.escape(v.model_says)}</p>"
            f'<p><b style="color:{colour}">Verdict: {v.verdict}.</b> {html.escape(v.reason)}</p></div>')
    return "\n".join(cards)


CLAIMS_PAGE_PATH = DATA_DIR.parent / "docs" / "claims.md"
_ARTICLE = re.compile(r"docs/bibliography\.md#(article-\d)")


def _md(text: str) -> str:
    """Escape what Markdown (and JupyterLab's maths) would read as markup, with the bibliography's escape. A dollar
    sign is written ``USD`` (``USD 12``) ("$12-15 ... $8-11" would be one formula to the book's MathJax, which sees the
    page after Markdown has dropped the escapes)."""
    return markdown_escape(re.sub(r"\$(?=\s?\d)", "USD ", text).replace("$", "USD"))


def article_of(claim: Claim) -> str:
    """The anchor (``article-1`` ...) of the article a claim comes from, read from its origin."""
    m = _ARTICLE.search(claim.origin)
    if not m:
        raise ValueError(f"claim {claim.id!r} names no article anchor in its origin")
    return m.group(1)


def tally(vs: tuple[Verdict, ...] | None = None) -> dict[str, dict[str, int]]:
    """How many claims of each article got each verdict: article anchor -> verdict -> count."""
    out: dict[str, dict[str, int]] = {}
    for v in verdicts() if vs is None else vs:
        row = out.setdefault(article_of(v.claim), dict.fromkeys(VERDICTS, 0))
        row[v.verdict] += 1
    return out


def render_claims_page(vs: tuple[Verdict, ...] | None = None) -> str:
    """``docs/claims.md``: one section per article, each claim under its anchor with what the model
    computes, the verdict and its reason, and the published evidence linked into the bibliography."""
    from accelbook.specs.bibliography import ARTICLES

    vs = verdicts() if vs is None else vs
    sources = load_sources()
    counts = tally(vs)
    lines = ["# The articles' claims, checked", "",
             "Generated from `data/claims.toml` by `python -m accelbook.economics.claims` (`make claims`); do not edit. "
             "Each claim is restated in our words with the article's own numbers. The verdict and its reason are "
             "computed now, by the check function the ledger names, from the catalogue (`data/*.toml`) and the "
             "workbook's models: **supported**, **not supported**, **cannot tell** (nothing measured decides it, or "
             "the only figures come from the same report as the claim) or **out of scope** (history, business or "
             "software, which no model here tests).", "",
             "| article | " + " | ".join(VERDICTS) + " | claims |", "|---|" + "---:|" * (len(VERDICTS) + 1)]
    for anchor, title, _ in ARTICLES:
        row = counts.get(anchor, dict.fromkeys(VERDICTS, 0))
        lines.append(f"| [{_md(title)}](#{anchor}-claims) | " + " | ".join(str(row[k]) for k in VERDICTS)
                     + f" | {sum(row.values())} |")
    lines.append("")
    for anchor, title, _ in ARTICLES:
        lines += [f'<a id="{anchor}-claims"></a>', "", f"## {_md(title)}", "",
                  f"What the article is: [the bibliography](bibliography.md#{anchor}).", ""]
        for v in (v for v in vs if article_of(v.claim) == anchor):
            c = v.claim
            origin = _md(c.origin).replace(f"docs/bibliography.md#{anchor}", f"[{anchor}](bibliography.md#{anchor})")
            ev = ", ".join(f"[{_md(sources[s].title)}](bibliography.md#{s})" for s in c.evidence) or "none"
            lines += [f'<a id="{c.id}"></a>', "", f"### {c.id}", "",
                      f"**Claim.** {_md(c.claim)}", "", f"*Where:* {origin}", "",
                      f"**Model** (`{c.check}`). {_md(v.model_says)}", "",
                      f"**Verdict: {v.verdict}.** {_md(v.reason)}", "",
                      f"**Published.** {_md(c.published)}", "", f"*Evidence:* {ev}", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_claims_page(path: Path | str | None = None) -> Path:
    """Write :func:`render_claims_page` to ``path`` (default ``docs/claims.md``); returns the path."""
    path = Path(path) if path is not None else CLAIMS_PAGE_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_claims_page(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {write_claims_page(sys.argv[1] if len(sys.argv) > 1 else None)}")
