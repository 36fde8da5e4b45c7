"""The command line: ``accelbook`` (a console script) and ``python -m accelbook.cli``.

The package's main questions from a terminal, each a subcommand that takes the Python API's
arguments (as ``--flags`` named like the API's keywords, a TOML file with ``--file`` or a notebook
dashboard's scenario string with ``--scenario``) and prints a readable table or, with ``--json``,
the API's numbers in SI units under the API's field names:

- ``accelbook train estimate|search``: :func:`accelbook.training.estimate`, :func:`accelbook.training.search`;
- ``accelbook infer estimate|sweep|max-throughput``: :mod:`accelbook.inference`'s three;
- ``accelbook serve simulate``: :func:`accelbook.inference.serving.simulate` on a generated workload;
- ``accelbook collective``: :func:`accelbook.network.collectives.estimate` on the collectives dashboard's systems;
- ``accelbook chip [NAME]``, ``accelbook model [NAME]``, ``accelbook claims``: the catalogue and the claims ledger;
- ``accelbook measure``, ``accelbook validate FILE``, ``accelbook launch``: handed to
  :mod:`accelbook.measure`, :mod:`accelbook.measurements` and :mod:`accelbook.inference.launch` where
  those are installed.

Modules: :mod:`.main` (the argument tree and the error edge), :mod:`.args` (declared arguments, how
they are read from flags, files and scenarios), :mod:`.output` (tables and JSON), :mod:`.scenarios`
(the one map between dashboard controls and API arguments), and one module per subcommand group.
Everything heavy is imported when a subcommand runs, so ``accelbook --help`` loads no model layer.
The command line is a front end, like :mod:`accelbook.ui`: it may import ``ui`` (for scenarios);
no model layer imports it.
"""
