"""The one map between the notebook dashboards' controls and the command line's API arguments.

A dashboard's scenario string (:mod:`accelbook.ui.scenario`: ``training:model=llama-3.1-70b&chip=h100&...``)
works on the command line, and back: ``accelbook train estimate --scenario 'training:...'`` reads it
(checked against the dashboard's own controls, so a value outside a slider is an error naming it), and
``--print-scenario`` writes the scenario of the arguments given, which ``show(spec, scenario=s)`` opens.

Each :class:`Bridge` names its dashboard and, control by control, the API argument it is
(:class:`Link`; ``arg=None``: a control the API does not take, such as the training dashboard's tokens
to train, kept as it came for the round trip). Where a control is in other units than the argument,
the link converts (the collectives dashboard's message in MiB is ``message_bytes``). An argument the
dashboard has no control for may not be written into a scenario unless it is at the API's default.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping

MIB = 2**20


def _same(v, args):
    return v


@dataclass(frozen=True)
class Link:
    """Dashboard control ``control`` is API argument ``arg`` (default ``"="``: the control's own name;
    ``None``: a control of the dashboard only). ``to_arg(v)`` and
    ``to_control(v, args)`` convert between them (``args``: all the command's values, for a default)."""

    control: str
    arg: str | None = "="
    to_arg: Callable[[Any], Any] = lambda v: v
    to_control: Callable[[Any, Mapping], Any] = _same

    @property
    def name(self) -> str | None:
        return self.control if self.arg == "=" else self.arg


@dataclass(frozen=True)
class Bridge:
    """A subcommand's dashboard: its scenario name, its spec (imported when needed), its links, and the
    API function whose defaults stand for arguments not given."""

    dashboard: str
    spec: Callable[[], Any]
    links: tuple[Link, ...]
    api: Callable[[], Callable]


def _training_spec():
    from accelbook.ui.dashboards.nb04_distributed_training import training_spec
    return training_spec()


def _search_spec():
    from accelbook.ui.dashboards.nb04_distributed_training import search_spec
    return search_spec()


def _inference_spec():
    from accelbook.ui.dashboards.nb06_inference_prefill_decode import inference_spec
    return inference_spec()


def _collective_spec():
    from accelbook.ui.dashboards.nb03_interconnects import collective_spec
    return collective_spec()


def _training_api():
    from accelbook.training import estimate
    return estimate


def _search_api():
    from accelbook.training import search
    return search


def _inference_api():
    from accelbook.inference import estimate
    return estimate


def _collective_api():
    from accelbook.cli.network import collective
    return collective


_CLUSTER = (Link("model"), Link("chip"), Link("n_chips"), Link("batch_tokens", "global_batch_tokens"), Link("seq_len"))

#: subcommand -> its dashboard's bridge
BRIDGES: dict[str, Bridge] = {
    "train estimate": Bridge("training", _training_spec, (
        *_CLUSTER, *(Link(k) for k in ("tp", "pp", "cp", "vp", "microbatch", "zero_stage", "recompute",
                                        "precision", "tp_overlap")),
        Link("train_tokens_t", None), Link("goodput", None)), _training_api),
    "train search": Bridge("search", _search_spec, (*_CLUSTER, Link("precision")), _search_api),
    "infer estimate": Bridge("inference", _inference_spec, (
        Link("model"), Link("chip"), Link("n_chips"),
        # the API's tp=None is every chip of a one-stage replica
        Link("tp", to_control=lambda v, a: a["n_chips"] // a.get("pp", 1) if v is None else v),
        Link("batch", "batch_size"), Link("input_len"), Link("output_len"), Link("precision"),
        Link("pue")), _inference_api),
    "collective": Bridge("collectives", _collective_spec, (
        Link("systems", "system", to_arg=list, to_control=lambda v, a: _labels(v)), Link("collective"),
        Link("size_mib", "message_bytes", to_arg=lambda mib: mib * MIB, to_control=lambda b, a: _mib(b)),
        Link("bw_scale"), Link("latency_scale"), Link("scale_out")), _collective_api),
}


def _labels(systems) -> tuple[str, ...]:
    from accelbook.cli.network import system_label

    return tuple(system_label(s) for s in ([systems] if isinstance(systems, str) else systems))


def _mib(message_bytes: float):
    mib = message_bytes / MIB
    return int(mib) if float(mib).is_integer() else mib


def read_scenario(command: str, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``--scenario``'s text (a string, or a scenario JSON file's path) as the command's API arguments,
    and the dashboard-only controls kept aside: ``(args, extras)``."""
    from accelbook.ui.scenario import as_scenario

    b = BRIDGES[command]
    sc = as_scenario(text)
    if sc.dashboard != b.dashboard:
        raise ValueError(f"--scenario: this scenario is for the {sc.dashboard!r} dashboard; "
                         f"`accelbook {command}` reads {b.dashboard!r} scenarios")
    values = sc.for_spec(b.spec())
    args = {ln.name: ln.to_arg(values[ln.control]) for ln in b.links if ln.name is not None}
    extras = {ln.control: values[ln.control] for ln in b.links if ln.name is None}
    return args, extras


def write_scenario(command: str, args: Mapping[str, Any], extras: Mapping[str, Any] | None = None) -> str:
    """The scenario string of ``args`` (the API defaults standing for those not given): what
    ``--print-scenario`` prints. A ``ValueError`` names an argument the dashboard cannot show."""
    from accelbook.ui.scenario import scenario_of

    b = BRIDGES[command]
    defaults = {k: p.default for k, p in inspect.signature(b.api()).parameters.items()
                if p.default is not inspect.Parameter.empty}
    full = {**defaults, **args}
    linked = {ln.name for ln in b.links}
    hidden = sorted(k for k, v in args.items() if k not in linked and v != defaults.get(k, object()))
    if hidden:
        raise ValueError(f"--print-scenario: the {b.dashboard!r} dashboard has no control for "
                         f"{', '.join('--' + k.replace('_', '-') for k in hidden)}; leave it at the API's default")
    values = {}
    for ln in b.links:
        if ln.name is None:
            if extras and ln.control in extras:
                values[ln.control] = extras[ln.control]
        elif ln.name in full:
            v = ln.to_control(full[ln.name], full)
            if v is not None:
                values[ln.control] = v
    return scenario_of(b.spec(), values).to_string()
