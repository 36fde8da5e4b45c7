"""The measurement kit: put the machine you run on beside the catalogue (``accelbook measure``).

It times GEMMs by shape, a STREAM-like bandwidth (McCalpin's Copy, Scale, Add, Triad; bytes counted as STREAM
counts them) and, on several GPUs, an all-reduce sweep, and writes a chip entry and its timings as TOML with
provenance (:mod:`accelbook.measure.writer`) that ``ab.register(path)`` loads::

    from accelbook import measure
    ms = measure.run(quick=True, out="my_machine.toml")   # NumPy on the CPU; a GPU too where one is usable
    ab.register("my_machine.toml")                        # then ab.get_chip(ms[0].chip_id) everywhere

NumPy on the CPU always runs; PyTorch (CUDA/ROCm) or CuPy on a GPU where installed and a GPU is seen, else the
GPU part is skipped with the reason. Nothing here tunes a model: a measurement is shown beside it.

``main(argv)`` is the command line (``python -m accelbook.measure --quick --out my.toml``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from accelbook.checks import one_of, whole

from . import cpu, gpu
from .results import Measurement, stream_bytes, stream_bytes_per_s
from .timing import FULL_REPEATS, FULL_SHAPES, QUICK_REPEATS, QUICK_SHAPES
from .writer import read_measurements, to_toml, write

__all__ = ["run", "main", "Measurement", "read_measurements", "to_toml", "write", "stream_bytes",
           "stream_bytes_per_s", "BACKENDS"]

BACKENDS = ("auto", "numpy", "torch", "cupy")


def run(backend: str = "auto", quick: bool = False, out: Path | str | None = None, *, shapes=None,
        gpu_shapes=None, stream_n: int | None = None, repeats: int | None = None, warmup: int | None = None,
        threads: int | None = None, log=print) -> tuple[Measurement, ...]:
    """Measure this machine; returns one :class:`Measurement` per device and writes them to ``out`` if given.

    ``backend``: ``"numpy"`` the CPU alone; ``"torch"`` / ``"cupy"`` that GPU path alone (a ``ValueError`` with
    the reason where it is unusable); ``"auto"`` the CPU, and the GPU where one is usable (else a line saying
    why not). ``quick``: fewer shapes and repeats (seconds). ``shapes`` (``(M, K, N)`` tuples), ``stream_n``
    (elements per STREAM array), ``repeats``, ``warmup`` and ``threads`` override the defaults (tests use tiny
    sizes). ``log``: where the lines saying what was skipped go (None: nowhere).
    """
    one_of("backend", backend, BACKENDS)
    log = log or (lambda *a: None)
    rep, warm = QUICK_REPEATS if quick else FULL_REPEATS
    rep = whole("repeats", repeats) if repeats is not None else rep
    warm = whole("warmup", warmup, 0) if warmup is not None else warm
    found, why = (None, "") if backend == "numpy" else gpu.available(backend)
    if backend in ("torch", "cupy") and found is None:
        raise ValueError(f"backend={backend!r} is not usable here: {why}")
    out_ms = []
    if backend in ("auto", "numpy"):
        out_ms.append(cpu.measure_cpu(shapes or (QUICK_SHAPES if quick else FULL_SHAPES), stream_n, rep, warm,
                                      threads))
    if found is not None:
        prov = cpu.host_provenance(found)
        prov.update(repeats=rep, warmup=warm)
        out_ms.append(gpu.measure_gpu(found, gpu_shapes or (gpu.QUICK_GPU_SHAPES if quick else gpu.GPU_SHAPES),
                                      quick, prov, cpu.chip_id_for(str(prov["host"]), "gpu"), rep, warm))
    elif backend == "auto":
        log(f"GPU: skipped ({why})")
    for m in out_ms:
        for s in m.skipped:
            log(f"{m.device}: skipped {s}")
    if out is not None:
        write(out_ms, out)
    return tuple(out_ms)


def summary_lines(m: Measurement) -> list[str]:
    """A readable report of one device: peaks, bandwidth, every timing."""
    lines = [f"{m.name}  [{m.chip_id}]  backend {m.backend}",
             "  " + ", ".join(f"{k} {m.provenance[k]}" for k in ("date", "numpy", "blas", "torch", "cupy")
                              if k in m.provenance)]
    for g in m.gemm:
        lines.append(f"  GEMM {g.dtype:5s} {g.m:>6} x {g.k:>6} x {g.n:>6}  {g.seconds * 1e3:10.3f} ms  "
                     f"{g.flop_s / 1e9:10.2f} GFLOP/s  {g.flop_s / m.peak_flop_s(g.dtype):6.1%} of the fastest")
    for s in m.stream:
        lines.append(f"  STREAM {s.kernel:6s} {s.n * s.itemsize / 2**20:8.0f} MiB/array  {s.seconds * 1e3:10.3f} ms  "
                     f"{s.bytes_per_s / 1e9:10.2f} GB/s")
    for a in m.allreduce:
        lines.append(f"  all-reduce {a.message_bytes:>12,} B on {a.ranks} ranks  {a.seconds * 1e6:10.1f} us  "
                     f"busbw {a.busbw_bytes_per_s / 1e9:8.2f} GB/s")
    return lines


def _as_json(ms, out) -> str:
    rows = []
    for m in ms:
        d = asdict(m)
        d["peak_flop_s"] = {t: m.peak_flop_s(t) for t in m.dtypes}
        d["bandwidth_bytes_per_s"] = m.bandwidth_bytes_per_s
        rows.append(d)
    return json.dumps({"out": None if out is None else str(out), "measurements": rows}, indent=1)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="accelbook measure",
        description="Time GEMMs by shape, a STREAM-like bandwidth and (on several GPUs) an all-reduce on this "
                    "machine; write a chip entry that ab.register loads.",
        epilog="example: accelbook measure --quick --out my_machine.toml   "
               "(then in Python: ab.register('my_machine.toml'))")
    p.add_argument("--out", metavar="FILE.toml", help="write the chip entry and the timings to this TOML file")
    p.add_argument("--quick", action="store_true", help="fewer shapes and repeats: seconds, not minutes")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="numpy: the CPU; torch/cupy: that GPU path; auto: the CPU and a GPU where usable")
    p.add_argument("--json", action="store_true", help="print the measurements as JSON")
    p.add_argument("--repeats", type=int, help="timed calls per measurement (the median is kept)")
    return p


def main(argv: list[str] | None = None) -> int:
    """The command line: parse ``argv``, measure, write ``--out``, print a report or ``--json``; the exit code."""
    args = parser().parse_args(argv)
    log = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    try:
        ms = run(args.backend, args.quick, args.out, repeats=args.repeats, log=log)
    except ValueError as err:
        print(f"accelbook measure: error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(_as_json(ms, args.out))
    else:
        for m in ms:
            print("\n".join(summary_lines(m)))
        if args.out:
            print(f"wrote {args.out}: ab.register({str(args.out)!r}) loads it")
    return 0
