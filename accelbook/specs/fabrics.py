"""Link fabrics (``data/fabrics.toml``): link bandwidth, step latency, efficiency, and a collective
library's wire protocols.

For GPU fabrics the protocols are NCCL's own cost model (``src/graph/tuning.cc``, NCCL 2.30): each
protocol (LL, LL128, Simple) has a fixed latency, a latency per step and a share of the link's
bandwidth. :mod:`accelbook.network.systems` attaches them to the systems it builds and
:mod:`accelbook.network.collectives` costs collectives with them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping

from . import loader
from .loader import CatalogueError, check_keys, load_sources, lookup_source, parse_quantity, read_table_file


@dataclass(frozen=True)
class Protocol:
    """One of a collective library's wire protocols (NCCL: LL, LL128, Simple).

    A collective in this protocol costs ``base_latency_s`` once plus ``step_latency_s`` per step, and
    moves data at ``bandwidth_share`` of the usable link rate, at most ``max_busbw_bytes_per_s``.
    """

    name: str
    base_latency_s: float
    step_latency_s: float
    bandwidth_share: float = 1.0
    max_busbw_bytes_per_s: float = math.inf

    def scaled(self, latency: float) -> "Protocol":
        return dataclasses.replace(self, base_latency_s=self.base_latency_s * latency,
                                   step_latency_s=self.step_latency_s * latency)



@functools.lru_cache(maxsize=1)
def fabrics() -> Mapping[str, dict]:
    """Link fabrics from ``data/fabrics.toml``: SI values (bytes/s, s, fraction) with provenance.

    A fabric may also give a collective library's ``protocols`` (:class:`Protocol`, latencies in
    seconds) and the in-switch reduction's ``in_network_latency_s`` and ``in_network_efficiency``.
    """
    path = loader.DATA_DIR / "fabrics.toml"
    sources = load_sources()
    out = {}
    keys = {"link_bw_gb_s": ("gb_s", "link_bw_bytes_per_s"), "step_latency_us": ("us", "hop_latency_s"),
            "efficiency_count": ("count", "efficiency")}
    extra = {"nvls_latency_us": ("us", "in_network_latency_s"), "nvls_efficiency_count": ("count", "in_network_efficiency")}
    for fid, e in read_table_file(path).items():
        check_keys(path, fid, e, required={"name", *keys}, optional={"protocols", *extra})
        f = {"name": e["name"]}
        for key, (unit, field_name) in {**keys, **{k: v for k, v in extra.items() if k in e}}.items():
            q = parse_quantity(path, fid, key, e[key], unit, sources)
            f[field_name] = q.value
            f[field_name + "_provenance"] = q.provenance
        for key in ("efficiency", "in_network_efficiency"):
            if key in f and not 0 < f[key] <= 1:
                raise CatalogueError(path, fid, key, "must be a fraction in (0, 1]")
        if "protocols" in e:
            f["protocols"], f["protocols_source"] = _parse_protocols(path, fid, e["protocols"], sources, f["hop_latency_s"])
        out[fid] = f
    return out


def _parse_protocols(path, fid, raw, sources, step_latency_s) -> tuple[tuple[Protocol, ...], Any]:
    """``protocols = { src, note, NAME = [base µs, step µs, bandwidth share, busbw cap GB/s or 0] … }``;
    the last protocol is the bulk one and its step latency must equal the fabric's ``step_latency_us``."""
    key = "protocols"
    if not isinstance(raw, dict) or "src" not in raw:
        raise CatalogueError(path, fid, key, "must be a table with src, note and NAME = [base_us, step_us, share, cap_gb_s]")
    source = lookup_source(path, fid, key, raw["src"], sources)
    out = []
    for name, v in raw.items():
        if name in ("src", "note"):
            continue
        if (not isinstance(v, list) or len(v) != 4 or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v)
                or v[0] < 0 or v[1] <= 0 or not 0 < v[2] <= 1 or v[3] < 0):
            raise CatalogueError(path, fid, f"{key}.{name}",
                                 f"must be [base_us >= 0, step_us > 0, share in (0, 1], cap_gb_s >= 0 (0 = none)], got {v!r}")
        out.append(Protocol(name, v[0] * 1e-6, v[1] * 1e-6, float(v[2]), v[3] * 1e9 if v[3] > 0 else math.inf))
    if not out:
        raise CatalogueError(path, fid, key, "lists no protocol")
    if not math.isclose(out[-1].step_latency_s, step_latency_s, rel_tol=1e-9):
        raise CatalogueError(path, fid, key, f"the last (bulk) protocol's step latency {out[-1].step_latency_s * 1e6:g} µs "
                                             f"must equal step_latency_us ({step_latency_s * 1e6:g} µs)")
    return tuple(out), source
