"""Sweeps past one machine: a grid of configurations evaluated on a Dask cluster, one tidy DataFrame back.

    from accelbook import sweep
    client = sweep.local_client()                       # or Client("tcp://scheduler:8786")
    df = sweep.run(model_fn, {"chip": ["h100", "b200"], "batch": [1, 8, 64]}, client=client, out_dir="runs/a")

Where each part lives (one job a module):

- ``grid``: :func:`configurations` (a dict of lists or a DataFrame → numbered rows);
- ``evaluate``: :func:`evaluate`, the model function over configurations in this process, per
  configuration or per block, bad configurations as error rows;
- ``plan``: the probe (:func:`measure_overhead`, :func:`measure_cost`) and the block size that keeps
  the per-task overhead under 5 % of the work (:func:`choose_block_size`, :class:`Plan`);
- ``store``: one Parquet file per task, written atomically; :func:`read` (eager or lazy), :func:`dataset`;
- ``engine``: :func:`run` (probe, tasks on a ``dask.distributed.Client``, progress, resume) and
  :func:`local_client`;
- the built-in sweeps, each a function whose defaults run on a laptop in under a minute and which
  scales by its grid and its client: ``frontier`` (inference throughput against interactivity over
  chip × model × precision × batch × prompt), ``serving_mc`` (the serving simulator's Monte Carlo over
  arrival rates × chunk sizes × seeds, with confidence intervals over seeds), ``chip_design`` (the
  chip-design space against workloads), ``training_layouts`` (the best training layout for every
  model × chip × cluster size).

This layer calls the model layers and is called by ``ui``; it never imports ``ui``.
"""

from .engine import SERIAL, function_name, local_client, run, run_task
from .evaluate import evaluate, tidy
from .grid import CONFIG_ID, ERROR, blocks, configurations, grid_hash
from .plan import Plan, choose_block_size, measure_cost, measure_overhead, plan
from .store import dataset, read

__all__ = [
    "SERIAL", "run", "run_task", "local_client", "function_name", "evaluate", "tidy", "CONFIG_ID", "ERROR", "blocks",
    "configurations", "grid_hash", "Plan", "choose_block_size", "measure_cost", "measure_overhead", "plan", "dataset",
    "read",
]
