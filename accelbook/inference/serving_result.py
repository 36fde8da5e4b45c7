"""What the serving simulator returns (:class:`ServingResult`): per-request times, every inter-token gap
as weighted samples, every iteration; and what is read from them (percentiles, throughput, SLO
attainment, goodput). Definitions in :mod:`accelbook.inference.serving`'s docstring, under **Results**."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from accelbook.checks import real

from .serving_kernel import ITERATION_COLUMNS
from .workload import ServingWorkload

#: the roles of an instance, as the iterations frame's categorical ``role`` column holds them
ROLES = pd.CategoricalDtype(["colocated", "prefill", "decode"])


def meets_slo(ttft_s, tbt_mean_s, ttft_slo_s: float, tbt_slo_s: float) -> np.ndarray:
    """Per request: TTFT <= ``ttft_slo_s`` and mean TBT <= ``tbt_slo_s`` (arrays of any one shape)."""
    a = real("ttft_slo_s", ttft_slo_s, 0.0, allow_inf=True)
    b = real("tbt_slo_s", tbt_slo_s, 0.0, allow_inf=True)
    return (ttft_s <= a) & (tbt_mean_s <= b)


def goodput(ttft_s, tbt_mean_s, span_s, ttft_slo_s: float, tbt_slo_s: float):
    """Requests per second (over the span ``span_s``) that meet both objectives (:func:`meets_slo`). Arrays
    of requests on their last axis: one run, or one run a row (``span_s`` then one per row)."""
    return meets_slo(ttft_s, tbt_mean_s, ttft_slo_s, tbt_slo_s).sum(axis=-1) / span_s


def iterations_frame(runs) -> pd.DataFrame:
    """One row per iteration of every instance: ``runs`` is a sequence of (instance, role, InstanceRun)."""
    return pd.DataFrame({
        "instance": np.concatenate([np.full(len(run.start_s), inst, dtype=np.int64) for inst, _, run in runs]),
        "role": pd.Categorical.from_codes(np.concatenate([np.full(len(run.start_s), ROLES.categories.get_loc(role),
                                                                  dtype=np.int8) for _, role, run in runs]),
                                          dtype=ROLES),
        **{c: np.concatenate([getattr(run, c) for _, _, run in runs]) for c in ITERATION_COLUMNS}})


@dataclass(frozen=True)
class ServingResult:
    """What :func:`simulate` returns: per-request arrays (arrival order), gaps, iterations."""

    workload: ServingWorkload = field(repr=False)
    ttft_s: np.ndarray = field(repr=False)
    tbt_mean_s: np.ndarray = field(repr=False)
    e2e_s: np.ndarray = field(repr=False)
    finish_s: np.ndarray = field(repr=False)
    first_token_s: np.ndarray = field(repr=False)
    admit_s: np.ndarray = field(repr=False)          # admission to its (prefill) instance
    instance: np.ndarray = field(repr=False)         # colocated or prefill instance
    decode_instance: np.ndarray = field(repr=False)  # -1 when colocated or output_len == 1
    gap_s: np.ndarray = field(repr=False)            # inter-token gaps, each repeated gap_count times
    gap_count: np.ndarray = field(repr=False)
    runs: tuple = field(repr=False)                  # (instance, role, InstanceRun) as they ran: :attr:`iterations`
    n_instances: int = 1
    disaggregated: bool = False
    preemptions: np.ndarray | None = field(default=None, repr=False)    # times each request was preempted
    cached_tokens: np.ndarray | None = field(default=None, repr=False)  # prompt tokens skipped on prefix hits
    block_tokens: int = 1                            # tokens a KV block (iterations' kv_blocks); 1: reserve policy
    kv_policy: str = "reserve"
    records: bool = True                             # False: simulated without iterations and gaps (per request only)

    def __post_init__(self):
        for name in ("preemptions", "cached_tokens"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.zeros(self.workload.n, dtype=np.int64))

    def _recorded(self, what: str) -> None:
        if not self.records:
            raise ValueError(f"{what} needs the run's records: this run was simulated with records=False "
                             "(per-request times only)")

    @functools.cached_property
    def iterations(self) -> pd.DataFrame:
        """One row per iteration: instance, role, start_s, dt_s, resident, decoding, prefill_tokens,
        kv_blocks (built from :attr:`runs` when first read: most uses of a run never read it)."""
        self._recorded("iterations")
        return iterations_frame(self.runs)

    @property
    def n(self) -> int:
        return self.workload.n

    @property
    def span_s(self) -> float:
        """First arrival to last finish."""
        return float(self.finish_s.max() - self.workload.arrival_s[0])

    @property
    def output_tokens(self) -> int:
        return int(self.workload.output_len.sum())

    @property
    def throughput_tok_s(self) -> float:
        """Output tokens per second over the span."""
        return self.output_tokens / self.span_s

    @property
    def request_rate(self) -> float:
        """Requests completed per second over the span."""
        return self.n / self.span_s

    def gaps(self) -> np.ndarray:
        """All inter-token gaps, expanded (sum(output_len - 1) values; large for big runs)."""
        self._recorded("gaps")
        return np.repeat(self.gap_s, self.gap_count)

    def tbt_percentile(self, q) -> float:
        """Percentile ``q`` (0-100) of all inter-token gaps (inverted CDF; 0 if there are none)."""
        q = real("q", q, 0.0, 100.0)
        self._recorded("tbt_percentile")
        if self.gap_s.size == 0:
            return 0.0
        return float(np.percentile(self.gap_s, q, weights=self.gap_count, method="inverted_cdf"))

    def tbt_percentiles(self, qs) -> list:
        """:meth:`tbt_percentile` at each of ``qs`` (0-100) with one weighted sort, not one per ``q``."""
        self._recorded("tbt_percentiles")
        if self.gap_s.size == 0:
            return [0.0 for _ in qs]
        return [float(v) for v in np.percentile(self.gap_s, list(qs), weights=self.gap_count, method="inverted_cdf")]

    def percentiles(self) -> dict:
        """p50/p90/p99 of TTFT, TBT (all gaps) and e2e, seconds."""
        qs = (50, 90, 99)
        out = {}
        for name, values in (("ttft", np.percentile(self.ttft_s, qs)), ("tbt", self.tbt_percentiles(qs)),
                             ("e2e", np.percentile(self.e2e_s, qs))):
            out.update({f"{name}_p{q}_s": float(v) for q, v in zip(qs, values)})
        return out

    def meets_slo(self, ttft_slo_s: float, tbt_slo_s: float) -> np.ndarray:
        """Per request: TTFT <= ttft_slo_s and mean TBT <= tbt_slo_s (:func:`meets_slo`)."""
        return meets_slo(self.ttft_s, self.tbt_mean_s, ttft_slo_s, tbt_slo_s)

    def goodput(self, ttft_slo_s: float, tbt_slo_s: float) -> float:
        """Requests per second (over the span) that meet both SLOs (:func:`goodput`)."""
        return float(goodput(self.ttft_s, self.tbt_mean_s, self.span_s, ttft_slo_s, tbt_slo_s))

    def mean_resident(self) -> float:
        """Time-average number of resident requests (all instances together) over the span."""
        it = self.iterations     # disaggregated: a request in transfer or queued is not resident
        return float((it["dt_s"] * it["resident"]).sum() / self.span_s)

    def summary(self) -> dict:
        return {"n": self.n, "span_s": self.span_s, "request_rate": self.request_rate,
                "throughput_tok_s": self.throughput_tok_s, **self.percentiles(),
                "ttft_mean_s": float(self.ttft_s.mean()), "tbt_mean_s": float(self.tbt_mean_s.mean()),
                "mean_resident": self.mean_resident(), "iterations": len(self.iterations),
                "preemptions": int(self.preemptions.sum()), "cached_tokens": int(self.cached_tokens.sum())}

    def to_frame(self) -> pd.DataFrame:
        """One row per request."""
        w = self.workload
        return pd.DataFrame({"arrival_s": w.arrival_s, "prompt_len": w.prompt_len, "output_len": w.output_len,
                             "instance": self.instance, "decode_instance": self.decode_instance,
                             "admit_s": self.admit_s, "first_token_s": self.first_token_s, "finish_s": self.finish_s,
                             "ttft_s": self.ttft_s, "tbt_mean_s": self.tbt_mean_s, "e2e_s": self.e2e_s,
                             "preemptions": self.preemptions, "cached_tokens": self.cached_tokens})
