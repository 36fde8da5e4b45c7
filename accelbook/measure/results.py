"""What the measurement kit counts and records: FLOP of a GEMM, bytes of a STREAM kernel, bus bandwidth of an
all-reduce (pure functions, no timing), and the frozen records a run returns.

Counting rules, each from its source:

* GEMM ``C[M, N] = A[M, K] · B[K, N]``: ``flop = 2·M·K·N`` (one multiply and one add per term).
* STREAM (John McCalpin's STREAM benchmark: www.cs.virginia.edu/stream/ref.html; its table of bytes per
  iteration, 16 for COPY and SCALE and 24 for SUM and TRIAD in float64, in McCalpin, "Sustainable Memory
  Bandwidth in Current High Performance Computers", 1995, www.cs.virginia.edu/~mccalpin/papers/bandwidth/):
  bytes moved per element are the arrays read plus the array written, ``bytes = w·n·itemsize`` with ``w`` = 2
  for Copy (``c = a``) and Scale (``b = q·c``), 3 for Add (``c = a + b``) and Triad (``a = b + q·c``); a
  write-allocate read is not counted. ``B = bytes / t``.
* All-reduce (nccl-tests' PERFORMANCE.md): algorithm bandwidth ``algbw = S / t`` for a message of ``S``
  bytes, bus bandwidth ``busbw = algbw · 2(n-1)/n`` on ``n`` ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from accelbook.checks import one_of, positive, whole

#: arrays each STREAM kernel touches per element (reads + the write), McCalpin's counting
STREAM_ARRAYS: Mapping[str, int] = MappingProxyType({"copy": 2, "scale": 2, "add": 3, "triad": 3})


def gemm_flop(m: int, k: int, n: int) -> float:
    """FLOP of one GEMM ``C[M, N] = A[M, K] · B[K, N]``: ``flop = 2·M·K·N``.

    Worked number: ``gemm_flop(1024, 1024, 1024) = 2,147,483,648``.
    """
    return 2.0 * whole("m", m) * whole("k", k) * whole("n", n)


def stream_bytes(kernel: str, n: int, itemsize: int) -> float:
    """Bytes one STREAM kernel moves over ``n`` elements of ``itemsize`` bytes, as STREAM counts them.

    ``bytes = w·n·itemsize``, ``w`` = :data:`STREAM_ARRAYS` [kernel] (Copy, Scale 2; Add, Triad 3).
    Worked number: Triad over 10,000,000 float64 elements moves ``3 · 1e7 · 8 = 2.4e8`` bytes.
    """
    one_of("kernel", kernel, tuple(STREAM_ARRAYS))
    return float(STREAM_ARRAYS[kernel] * whole("n", n) * whole("itemsize", itemsize))


def stream_bytes_per_s(kernel: str, n: int, itemsize: int, seconds: float) -> float:
    """STREAM bandwidth (bytes/s): ``B = stream_bytes(kernel, n, itemsize) / t``.

    Worked number: Triad over 1e7 float64 elements in 0.02 s: ``2.4e8 / 0.02 = 1.2e10`` bytes/s.
    """
    return stream_bytes(kernel, n, itemsize) / positive("seconds", seconds)


def allreduce_bus_bytes_per_s(message_bytes: float, ranks: int, seconds: float) -> float:
    """nccl-tests' bus bandwidth of an all-reduce (bytes/s): ``busbw = (S / t) · 2(n-1)/n``."""
    n = whole("ranks", ranks, 2)
    return positive("message_bytes", message_bytes) / positive("seconds", seconds) * 2 * (n - 1) / n


@dataclass(frozen=True)
class GemmTiming:
    """One GEMM shape's median time (s) and its rate (FLOP/s); ``dtype`` as the catalogue names precisions."""

    m: int
    k: int
    n: int
    dtype: str
    seconds: float
    flop_s: float


@dataclass(frozen=True)
class StreamTiming:
    """One STREAM kernel over ``n`` elements of ``itemsize`` bytes: median time (s), bytes counted, rate."""

    kernel: str
    n: int
    itemsize: int
    bytes_moved: float
    seconds: float
    bytes_per_s: float


@dataclass(frozen=True)
class AllReduceTiming:
    """One all-reduce message size on ``ranks`` ranks: median time (s), algorithm and bus bandwidth (bytes/s)."""

    message_bytes: int
    ranks: int
    seconds: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float


@dataclass(frozen=True)
class Measurement:
    """Everything one device's run measured, with where and how (``provenance``: date, host, versions...).

    ``skipped`` holds one sentence per part that did not run (no GPU, one rank, no FP8 support).
    """

    chip_id: str
    name: str
    vendor: str
    backend: str      # "numpy", "torch" or "cupy"
    device: str       # "cpu" or the GPU's name
    provenance: Mapping[str, str | int]
    gemm: tuple[GemmTiming, ...]
    stream: tuple[StreamTiming, ...]
    allreduce: tuple[AllReduceTiming, ...] = ()
    skipped: tuple[str, ...] = ()

    def peak_flop_s(self, dtype: str) -> float:
        """The fastest GEMM of the sweep at ``dtype`` (FLOP/s): what the chip entry calls its peak."""
        rates = [g.flop_s for g in self.gemm if g.dtype == dtype]
        if not rates:
            raise ValueError(f"no {dtype} GEMM was measured on {self.name}")
        return max(rates)

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(g.dtype for g in self.gemm))

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """STREAM Triad's bandwidth (bytes/s): what the chip entry calls its memory bandwidth."""
        triad = [s.bytes_per_s for s in self.stream if s.kernel == "triad"]
        if not triad:
            raise ValueError(f"no STREAM Triad was measured on {self.name}")
        return max(triad)
