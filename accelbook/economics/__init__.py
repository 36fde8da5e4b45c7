"""Economics: what a token costs, whether to own or rent, when to move hardware, where to run what.

- :mod:`.cost`: MFU ↔ tokens/s per chip ↔ USD per token, price-performance, the training cost
  table and the FLOP-accounting conventions of published runs;
- :mod:`.tco`: owning against renting (total cost of ownership per useful hour) and the tornado
  chart of what moves a result;
- :mod:`.migration`: when moving a workload to other hardware pays for itself;
- :mod:`.fleet`: the least-cost placement of workloads on GPU, TPU and LPU pools (a linear programme);
- :mod:`.claims`: article claims checked against the catalogue.

The cost and TCO functions are re-exported here (``from accelbook.economics import usd_per_token``,
``economics.rent_or_own(...)``).
"""

from .cost import (
    flop_accounting_table,
    implied_mfu,
    implied_params,
    peak_flop_per_usd,
    training_cost_table,
    training_tokens_per_s,
    usd_per_token,
)
from .tco import own_cost_per_hour, rent_cost_per_hour, rent_or_own, tco_inputs, tornado

__all__ = [
    "training_tokens_per_s", "implied_mfu", "implied_params", "usd_per_token", "peak_flop_per_usd",
    "training_cost_table", "flop_accounting_table", "tco_inputs", "own_cost_per_hour", "rent_cost_per_hour",
    "rent_or_own", "tornado",
]
