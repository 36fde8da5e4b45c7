"""accelbook: a workbook about AI accelerators.

Start here::

    import accelbook as ab
    ab.chips()                 # the hardware catalogue (pandas DataFrame, SI units)
    ab.get_chip("h100")        # forgiving look-up: "H100 SXM", "tpu-v5p", "Trillium"
    ab.models()                # LLM architectures with derived parameter counts
    ab.get_model("llama-3.1-70b")

Modules, one concept each: catalogue (the TOML loader), chip, llm (model architectures),
roofline, economics, claims, systolic (cycle-level systolic arrays), tiling (GPU tiles, TPU MXU
padding), topology (networks, hop counts, link loads), collectives (alpha-beta models), clusters
(training networks, measured GEMM efficiency), training (memory, step time, layout search), charts,
dashboard (the dashboard pattern), dashboards (the notebooks' dashboards), exercises, notebook
(setup for a notebook session).
"""

from .catalogue import CatalogueError, UnknownNameError
from .chip import Chip, chips, disagreements, get_chip, load_chips, provenance_table
from .llm import Model, get_model, load_models, models

__all__ = [
    "CatalogueError", "UnknownNameError", "Chip", "Model", "chips", "get_chip", "load_chips",
    "provenance_table", "disagreements", "models", "get_model", "load_models",
]
__version__ = "0.1.0"
