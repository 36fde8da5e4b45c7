"""The CPU path of the measurement kit: NumPy GEMMs by shape and a STREAM-like bandwidth, on the machine it runs on.

GEMMs: ``np.matmul`` in fp32 and fp64 (NumPy's BLAS, with all the threads it starts). STREAM: McCalpin's four
kernels (Copy ``c = a``, Scale ``b = q·c``, Add ``c = a + b``, Triad ``a = b + q·c``) over float64 arrays of at
least four times the last-level cache each (STREAM's rule, www.cs.virginia.edu/stream/ref.html), split into one
contiguous slice per core run on threads (NumPy's ufuncs release the GIL). Each kernel is one pass over its
arrays, so the bytes STREAM counts (:func:`accelbook.measure.results.stream_bytes`) are the bytes moved; Triad,
two ufuncs in NumPy, runs them on cache-sized blocks so that ``q·c`` never goes to memory.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from accelbook.checks import whole

from .results import GemmTiming, Measurement, StreamTiming, gemm_flop, stream_bytes, stream_bytes_per_s
from .timing import check_shapes, median_seconds

#: NumPy dtype per catalogue precision name
NUMPY_DTYPES = {"fp32": np.float32, "fp64": np.float64}
#: elements a Triad block holds (float64: a 1 MiB temporary, which stays in cache)
TRIAD_BLOCK = 131_072
#: last-level cache assumed where the operating system does not say (bytes)
DEFAULT_LLC_BYTES = 32 * 2**20


def _cpuinfo() -> dict[str, str]:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in out:
            out[key.strip()] = value.strip()
    return out


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``, else :func:`platform.processor`), never empty."""
    info = _cpuinfo()
    return info.get("model name") or info.get("Model") or platform.processor() or platform.machine() or "unknown CPU"


def cpu_vendor() -> str:
    """The processor's vendor (``AMD``, ``Intel``, ...), never empty."""
    raw = _cpuinfo().get("vendor_id", "")
    return {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}.get(raw, raw) or platform.machine() or "unknown"


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def last_level_cache_bytes() -> int:
    """Sum of the distinct highest-level caches (``/sys/devices/system/cpu``), or :data:`DEFAULT_LLC_BYTES`."""
    caches: dict[tuple[str, str], int] = {}
    for d in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            level = (d / "level").read_text().strip()
            size = (d / "size").read_text().strip()
            shared = (d / "shared_cpu_list").read_text().strip()
        except OSError:
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", size)
        if m and (d / "type").exists() and (d / "type").read_text().strip() != "Instruction":
            caches[(level, shared)] = int(m[1]) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[m[2]]
    if not caches:
        return DEFAULT_LLC_BYTES
    top = max(level for level, _ in caches)
    return sum(size for (level, _), size in caches.items() if level == top)


def stream_elements(llc_bytes: int, itemsize: int = 8) -> int:
    """Elements per STREAM array: four times the last-level cache (STREAM's rule), at least 2**20."""
    return max(4 * whole("llc_bytes", llc_bytes) // whole("itemsize", itemsize), 2**20)


def library_versions() -> dict[str, str]:
    """NumPy's version and the BLAS it was built with (``numpy.show_config``), as strings."""
    out = {"numpy": np.__version__, "python": platform.python_version()}
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        out["blas"] = f"{blas.get('name', '?')} {blas.get('version', '?')}".strip()
    except Exception:   # an old NumPy or an unusual build: the version is provenance, not a requirement
        out["blas"] = "unknown"
    return out


def host_provenance(backend: str) -> dict[str, str | int]:
    """Where and when: UTC date and time, host name, CPU model, cores, platform, library versions."""
    now = _dt.datetime.now(_dt.timezone.utc)
    return {"kind": "measured", "date": now.strftime("%Y-%m-%d"), "time_utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "host": socket.gethostname() or "unknown", "cpu_model": cpu_model(), "cores": usable_cores(),
            "platform": platform.platform(), "backend": backend, **library_versions()}


def time_gemms(shapes, dtypes=("fp32", "fp64"), repeats: int = 3, warmup: int = 1, seed: int = 0) -> tuple[GemmTiming, ...]:
    """Median time of ``np.matmul`` for each ``(M, K, N)`` of ``shapes`` and each dtype (``fp32``, ``fp64``)."""
    shapes = check_shapes(shapes)
    rng = np.random.default_rng(seed)
    out = []
    for dtype in dtypes:
        if dtype not in NUMPY_DTYPES:
            raise ValueError(f"dtypes: NumPy times {tuple(NUMPY_DTYPES)}, got {dtype!r}")
        for m, k, n in shapes:
            a = rng.standard_normal((m, k)).astype(NUMPY_DTYPES[dtype])
            b = rng.standard_normal((k, n)).astype(NUMPY_DTYPES[dtype])
            c = np.empty((m, n), dtype=NUMPY_DTYPES[dtype])
            t = median_seconds(lambda: np.matmul(a, b, out=c), repeats, warmup)
            out.append(GemmTiming(m, k, n, dtype, t, gemm_flop(m, k, n) / t))
    return tuple(out)


def _slices(n: int, parts: int) -> list[slice]:
    edges = np.linspace(0, n, parts + 1).astype(int)
    return [slice(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]


def _triad_slice(a, b, c, q, s: slice) -> None:
    buf = np.empty(min(TRIAD_BLOCK, s.stop - s.start), dtype=a.dtype)
    for lo in range(s.start, s.stop, TRIAD_BLOCK):
        hi = min(lo + TRIAD_BLOCK, s.stop)
        tmp = np.multiply(c[lo:hi], q, out=buf[:hi - lo])
        np.add(b[lo:hi], tmp, out=a[lo:hi])


def _kernels(a, b, c, q):
    return {
        "copy": lambda s: np.copyto(c[s], a[s]),
        "scale": lambda s: np.multiply(c[s], q, out=b[s]),
        "add": lambda s: np.add(a[s], b[s], out=c[s]),
        "triad": lambda s: _triad_slice(a, b, c, q, s),
    }


def time_stream(n: int, repeats: int = 3, warmup: int = 1, threads: int | None = None) -> tuple[StreamTiming, ...]:
    """STREAM's Copy, Scale, Add and Triad over three float64 arrays of ``n`` elements, on ``threads`` threads
    (default: the usable cores), each kernel's median time and the bandwidth STREAM counts."""
    n = whole("n", n)
    threads = whole("threads", threads if threads is not None else usable_cores())
    a, b, c = np.full(n, 1.0), np.full(n, 2.0), np.zeros(n)   # written here: every page touched before timing
    q = 3.0
    parts = _slices(n, threads)
    out = []
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for kernel, body in _kernels(a, b, c, q).items():
            t = median_seconds(lambda: list(pool.map(body, parts)), repeats, warmup)
            out.append(StreamTiming(kernel, n, 8, stream_bytes(kernel, n, 8), t, stream_bytes_per_s(kernel, n, 8, t)))
    return tuple(out)


def chip_id_for(host: str, device: str = "cpu") -> str:
    """A catalogue id for a measured device: ``measured-cpu-<host>`` (lower case, other characters to ``-``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", host.lower()).strip("-") or "host"
    return f"measured-{device}-{slug}"


def measure_cpu(shapes, stream_n: int | None = None, repeats: int = 3, warmup: int = 1,
                threads: int | None = None) -> Measurement:
    """The whole CPU run: GEMMs at ``shapes`` in fp32 and fp64, STREAM over ``stream_n`` elements per array
    (default :func:`stream_elements` of the last-level cache), with the host's provenance."""
    prov = host_provenance("numpy")
    n = stream_n if stream_n is not None else stream_elements(last_level_cache_bytes())
    prov.update(stream_array_bytes=whole("stream_n", n) * 8, llc_bytes=last_level_cache_bytes(),
                stream_threads=threads or usable_cores(), repeats=repeats, warmup=warmup)
    gemm = time_gemms(shapes, repeats=repeats, warmup=warmup)
    stream = time_stream(n, repeats=repeats, warmup=warmup, threads=threads)
    return Measurement(
        chip_id=chip_id_for(str(prov["host"])), name=f"{prov['cpu_model']} ({prov['host']}, measured)",
        vendor=cpu_vendor(), backend="numpy", device="cpu", provenance=prov, gemm=gemm, stream=stream,
        skipped=("all-reduce: a CPU run has one rank; the sweep runs on GPUs (torch.distributed or several GPUs)",))
