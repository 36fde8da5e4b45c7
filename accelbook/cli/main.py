"""The ``accelbook`` command: its argument tree and its edge, where an error becomes one line and exit 2.

``main(argv)`` builds the tree from the subcommand modules' :class:`~accelbook.cli.args.Command` lists
(their arguments are data; nothing heavy is imported to build it, so ``accelbook --help`` loads no
model layer), reads the values (flags, ``--file``, ``--scenario``), runs the one command and prints its
table or ``--json``. A ``ValueError``, ``TypeError`` or ``KeyError`` from the API (a negative size, an
unknown chip) prints ``accelbook <command>: error: <message>`` on stderr, with no traceback, and exits 2,
as argparse does for an argument it cannot read.
"""

from __future__ import annotations

import argparse
import sys

from accelbook.cli import catalogue, external, infer, network, serve, train
from accelbook.cli.args import Command, add_args, gathered

#: every subcommand, in the order ``--help`` lists them
COMMANDS: tuple[Command, ...] = (*train.COMMANDS, *infer.COMMANDS, *serve.COMMANDS, *network.COMMANDS,
                                  *catalogue.COMMANDS, *external.COMMANDS)
GROUPS = {"train": "training: one layout's step, or the search over layouts",
          "infer": "inference: one layout, every layout, or the most throughput",
          "serve": "serving under load (the event simulator)"}
#: exit status of an argument or input error (argparse's own)
EXIT_USAGE = 2

DESCRIPTION = """Quick answers about AI accelerators from the accelbook models, without a notebook.
Every command prints a table, or with --json the API's fields in SI units (seconds, bytes, FLOP/s, W, USD).
Arguments are the Python API's keywords as flags (n_chips -> --n-chips), a TOML file of them (--file),
or a notebook dashboard's scenario string (--scenario); --print-scenario writes one back."""


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error: ``accelbook train estimate: error: argument --n-chips: ...``."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _with_scenarios(cmd: Command) -> bool:
    from accelbook.cli.scenarios import BRIDGES

    return cmd.key in BRIDGES


def build_parser() -> Parser:
    top = Parser(prog="accelbook", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    groups: dict = {}    # group word -> its subparsers
    for cmd in COMMANDS:
        parent = sub
        if len(cmd.path) == 2:
            if cmd.path[0] not in groups:
                g = sub.add_parser(cmd.path[0], help=GROUPS[cmd.path[0]], description=GROUPS[cmd.path[0]])
                groups[cmd.path[0]] = g.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser)
            parent = groups[cmd.path[0]]
        p = parent.add_parser(cmd.path[-1], help=cmd.help, description=cmd.help, epilog=cmd.epilog,
                              formatter_class=argparse.RawDescriptionHelpFormatter, add_help=not cmd.passthrough)
        p.set_defaults(command_key=cmd.key)
        if cmd.passthrough:
            p.add_argument("argv", nargs=argparse.REMAINDER, help="the arguments of the command it hands over to")
            continue
        add_args(p, cmd.args)
        p.add_argument("--json", action="store_true", help="print JSON (SI units, the API's field names)")
        p.add_argument("--file", dest="args_file", metavar="ARGS.toml", help="arguments as a TOML table")
        if _with_scenarios(cmd):
            p.add_argument("--scenario", metavar="STRING", help="a dashboard's scenario string (or its JSON file)")
            p.add_argument("--print-scenario", action="store_true",
                           help="print the dashboard scenario string of these arguments and stop")
    return top


def execute(cmd: Command, ns: argparse.Namespace) -> int:
    """Gather the values, run the command, print; the exit status."""
    from accelbook.cli.output import show

    if cmd.passthrough:
        try:
            return int(cmd.run({"argv": ns.argv}) or 0)
        except SystemExit as exc:        # its own parser's --help or usage error
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    scenario, extras = {}, {}
    if getattr(ns, "scenario", None):
        from accelbook.cli.scenarios import read_scenario
        scenario, extras = read_scenario(cmd.key, ns.scenario)
    values = gathered(ns, cmd.args, scenario)
    if getattr(ns, "print_scenario", False):
        from accelbook.cli.scenarios import write_scenario
        print(write_scenario(cmd.key, values, extras))
        return 0
    obj, text = cmd.run(values)
    show(obj, text, ns.json)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line: ``main(["train", "estimate", "--model", ...])``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    handed = next((c for c in COMMANDS if c.passthrough and tuple(argv[:len(c.path)]) == c.path), None)
    if handed is not None:               # argparse's REMAINDER would refuse a leading --help: hand over as is
        return run(handed, argparse.Namespace(argv=argv[len(handed.path):]))
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:            # --help (0) or an argument argparse cannot read (2)
        return int(exc.code or 0)
    key = getattr(ns, "command_key", None)
    if key is None:                      # `accelbook` or `accelbook train` alone: the help of that level
        _help_of(parser, ns)
        return EXIT_USAGE
    return run(next(c for c in COMMANDS if c.key == key), ns)


def run(cmd: Command, ns: argparse.Namespace) -> int:
    """:func:`execute` at the edge: an error from the API is one line on stderr and exit 2."""
    key = cmd.key
    try:
        return execute(cmd, ns)
    except BrokenPipeError:              # `accelbook chip | head`: the reader left; not an error
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, TypeError, KeyError, OSError) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"accelbook {key}: error: {' '.join(msg.split())}", file=sys.stderr)
        return EXIT_USAGE


def _help_of(parser: Parser, ns: argparse.Namespace) -> None:
    """The help of the level the command line stopped at (``accelbook`` or ``accelbook train``)."""
    group = getattr(ns, "command", None)
    if group:
        try:
            parser.parse_args([group, "--help"])
        except SystemExit:
            pass
    else:
        parser.print_help(sys.stderr)
