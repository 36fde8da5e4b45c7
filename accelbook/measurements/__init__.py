"""Your own measurements beside the model: read the files benchmark tools already write, run the model on
the configuration each states, and show the two side by side with the error and the model's dominant term.

    >>> from accelbook.measurements import validation_table
    >>> validation_table("nccl_all_reduce_perf.txt")                       # doctest: +SKIP
    >>> validation_table("vllm-result.json", chip="h100", n_chips=1)       # doctest: +SKIP

- :mod:`.readers`: one reader a format (vLLM ``bench serve`` / ``bench sweep``, SGLang ``bench_serving``,
  nccl-tests, MLPerf LoadGen summaries, accelbook's training-log CSV/TOML), each to a tidy table of measured rows;
- :mod:`.schema`: what a measured row holds, and the setup (``[setup]``, ``[sources]``) a user writes beside a
  file that does not say its chip or model (``<stem>.setup.toml``);
- :mod:`.compare`: :func:`validation_table`, the model's prediction for every row (the same functions as the
  package's own validation tables), ``error = predicted / measured - 1``. Nothing is fitted to the file.

Sample files, written by hand in each tool's documented format, ship in ``accelbook/measurements/samples``
(:func:`sample_path`); they illustrate the formats and are not measurements.
"""

from pathlib import Path

from .compare import validation_table
from .readers import FORMATS, load
from .schema import SETUP_KEYS

__all__ = ["validation_table", "load", "FORMATS", "SETUP_KEYS", "sample_path", "SAMPLES"]

SAMPLES_DIR = Path(__file__).parent / "samples"
#: the sample files a notebook shows, by format
SAMPLES = {"vllm": "vllm_bench_serve.json", "nccl": "nccl_all_reduce_perf.txt", "training": "training_log.csv"}


def sample_path(format: str) -> Path:
    """The bundled sample file of ``format`` (a key of :data:`SAMPLES`)."""
    if format not in SAMPLES:
        raise ValueError(f"format must be one of {sorted(SAMPLES)}, got {format!r}")
    return SAMPLES_DIR / SAMPLES[format]
