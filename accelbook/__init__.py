"""accelbook: a workbook about AI accelerators.

Start here::

    import accelbook as ab
    ab.chips()                 # the hardware catalogue (pandas DataFrame, SI units)
    ab.get_chip("h100")        # forgiving look-up: "H100 SXM", "tpu-v5p", "Trillium"
    ab.models()                # LLM architectures with derived parameter counts
    ab.get_model("llama-3.1-70b")
    ab.from_hf_config("config.json")   # a Model from a Hugging Face config, read from disk
    ab.register(my_model)      # a user's Model or Chip (or TOML file), then found by id everywhere

Sub-packages, one layer each (ARCHITECTURE.md walks one number through them):

- ``specs``: the one catalogue loader and the frozen specs it builds (chips, models, fabrics,
  clusters, measured efficiencies);
- ``chip``: inside one chip (roofline, tiling, systolic arrays, chip design);
- ``network``: topologies, path kernels, collectives;
- ``training``, ``moe``, ``inference`` (with the serving simulator), ``economics`` (cost, TCO,
  migration, fleet, claims): the models;
- ``ui``: the dashboard pattern, charts, the notebooks' dashboards, exercises, notebook set-up.
  Model layers never import ``ui``.

Short names kept for the notebooks and for users' code: ``accelbook.collectives``,
``accelbook.topology``, ``accelbook.systolic``, ``accelbook.serving``, ``accelbook.exercises``
and ``accelbook.show`` are the modules and function of those sub-packages.
"""

import importlib
import os

# The parallel Numba kernels (MoE routing, network paths) run on OpenMP, whose idle threads spin by
# default: on a laptop or a 2-core machine also running JupyterLab and a browser, a spinning thread holds
# the core another one waits for, and a 60 ms routing step took 800 ms (benchmarks/bench_dashboards.py
# under load). Idle threads that sleep cost a few microseconds a launch. Set before Numba first starts
# its threads; a value the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from .specs.chips import Chip, chips, disagreements, get_chip, load_chips, provenance_table
from .specs.hf_config import from_hf_config
from .specs.loader import CatalogueError, UnknownNameError
from .specs.models import Model, get_model, load_models, models
from .specs.registry import clear_registered, register, unregister

__all__ = [
    "CatalogueError", "UnknownNameError", "Chip", "Model", "chips", "get_chip", "load_chips",
    "provenance_table", "disagreements", "models", "get_model", "load_models",
    "from_hf_config", "register", "unregister", "clear_registered",
]
__version__ = "0.1.0"

#: short name -> where it lives; imported on first use so ``import accelbook`` stays light
_SHORT_NAMES = {
    "collectives": ("accelbook.network.collectives", None),
    "topology": ("accelbook.network.topology", None),
    "systolic": ("accelbook.chip.systolic", None),
    "serving": ("accelbook.inference.serving", None),
    "exercises": ("accelbook.ui.exercises", None),
    "show": ("accelbook.ui.dashboard", "show"),
}


def __getattr__(name: str):
    if name in _SHORT_NAMES:
        module, attr = _SHORT_NAMES[name]
        obj = importlib.import_module(module)
        return getattr(obj, attr) if attr else obj
    raise AttributeError(f"module 'accelbook' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SHORT_NAMES))
