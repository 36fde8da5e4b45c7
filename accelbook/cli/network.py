"""``accelbook collective``: :func:`accelbook.network.collectives.estimate` on the systems of notebook 03's
collectives dashboard (``accelbook.ui.dashboards.nb03_interconnects.SYSTEMS``, the one list of them)."""

from __future__ import annotations

import re

from accelbook.cli.args import Arg, Command, integer, number
from accelbook.cli.output import frame_table

#: the dashboard's default systems, when none is named
DEFAULT_SYSTEMS = ("HGX H100, NVLS off",)


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def system_label(name: str) -> str:
    """The dashboard's label of a system named exactly or loosely (case, spaces and punctuation ignored:
    ``"hgx-h100-nvls-on"`` is ``"HGX H100, NVLS on"``)."""
    from accelbook.ui.dashboards.nb03_interconnects import SYSTEMS

    if name in SYSTEMS:
        return name
    hits = [s for s in SYSTEMS if _key(s) == _key(name)] or [s for s in SYSTEMS if _key(s).startswith(_key(name))]
    if len(hits) != 1:
        raise ValueError(f"system = {name!r}: {'ambiguous' if hits else 'unknown'}; "
                         f"the systems are {', '.join(repr(s) for s in SYSTEMS)}")
    return hits[0]


def collective(collective: str, message_bytes: float, system=DEFAULT_SYSTEMS, bw_scale: float = 1.0,
               latency_scale: float = 1.0, scale_out: int = 4, algorithm: str | None = None) -> list:
    """One :class:`~accelbook.network.collectives.Estimate` per system: ``system``'s topology (with
    ``scale_out`` nodes or pods where it scales out) with every bandwidth times ``bw_scale`` and every
    latency times ``latency_scale``, as the dashboard builds it."""
    from accelbook.checks import whole
    from accelbook.network import collectives
    from accelbook.ui.dashboards.nb03_interconnects import SYSTEMS

    labels = [system_label(s) for s in ([system] if isinstance(system, str) else system)]
    if not labels:
        raise ValueError("system: name at least one system")
    out = []
    for s in labels:
        t = SYSTEMS[s](whole("scale_out", scale_out)).scaled(bw_scale, latency_scale)
        out.append((s, collectives.estimate(collective, message_bytes, t, algorithm)))
    return out


def run_collective(v: dict):
    import pandas as pd

    from accelbook.cli.output import plain

    if v.pop("list_systems", False):
        from accelbook.ui.dashboards.nb03_interconnects import SYSTEMS
        return list(SYSTEMS), "\n".join(SYSTEMS)
    missing = [f for f, k in (("--collective", "collective"), ("--message-bytes", "message_bytes")) if k not in v]
    if missing:
        raise ValueError(f"the following argument(s) are required: {', '.join(missing)}")
    rows = [{"system": s, **plain(e), "limit": e.limit} for s, e in collective(**v)]
    df = pd.DataFrame(rows)
    text = "collective estimates (SI units)\n" + frame_table(
        df, ("system", "algorithm", "protocol", "ranks", "time_s", "busbw_bytes_per_s", "limit"))
    return rows, text


COLLECTIVE = Command(
    ("collective",), "a collective's time, algorithm bandwidth and bus bandwidth on real systems",
    """example:
  accelbook collective --collective all_reduce --message-bytes 64Mi --system "HGX H100, NVLS on" \\
      --system tpu-v5p
  accelbook collective --list-systems
  accelbook collective --scenario 'collectives:systems=...&collective=all_reduce&size_mib=64&...'  (notebook 03)""",
    (Arg("collective", str, "all_reduce, all_gather, reduce_scatter, all_to_all or broadcast"),
     Arg("message_bytes", number, "message size in bytes (64Mi = 64·2**20)"),
     Arg("system", str, "a system of notebook 03's dashboard, by its label or loosely; repeat for several "
                        "(default: HGX H100, NVLS off)", repeat=True),
     Arg("bw_scale", number, "every bandwidth times this"), Arg("latency_scale", number, "every latency times this"),
     Arg("scale_out", integer, "nodes or pods, for the systems that scale out (default 4)"),
     Arg("algorithm", str, "force an algorithm (default: the fastest, as NCCL's tuner picks)"),
     Arg("list_systems", bool, "list the systems and stop")),
    run_collective)

COMMANDS = (COLLECTIVE,)
