"""The GPU path of the measurement kit: GEMMs by shape (bf16, fp16, fp8 where the GPU has it), a STREAM-like
bandwidth and an all-reduce sweep, with PyTorch (CUDA or ROCm) or CuPy, where one is installed and sees a GPU.

Neither library is a dependency: :func:`available` says which one is usable and, where none is, why (the kit
then measures the CPU alone and says so). The counting is the CPU path's (:mod:`accelbook.measure.results`);
STREAM's arrays are 256 MiB each (five times an H100's 50 MB L2, McCalpin's rule of at least four times the
cache); Triad is one fused kernel (``torch.add(b, c, alpha=q, out=a)``, a CuPy elementwise kernel).

All-reduce: where ``torch.distributed`` is initialised, ``dist.all_reduce`` over the default group (every
rank runs the kit, so give each rank its own ``out`` file, or ``out`` on rank 0 alone); else, on one host with several GPUs, ``torch.cuda.nccl.all_reduce``
over one tensor per GPU from this process. Bus bandwidth as nccl-tests count it (``busbw = S/t · 2(n-1)/n``).
"""

from __future__ import annotations

import importlib.util

from .results import (
    AllReduceTiming,
    GemmTiming,
    Measurement,
    StreamTiming,
    allreduce_bus_bytes_per_s,
    gemm_flop,
    stream_bytes,
    stream_bytes_per_s,
)
from .timing import check_shapes, median_seconds

#: GEMM shapes (M, K, N) on a GPU: square, a decode-like M of 16, a long K; ``--quick``: three of them
GPU_SHAPES = ((1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192), (16, 8192, 8192), (8192, 8192, 16),
              (4096, 16384, 4096))
QUICK_GPU_SHAPES = ((2048, 2048, 2048), (8192, 8192, 8192), (16, 8192, 8192))
#: elements per STREAM array on a GPU (float32: 256 MiB)
GPU_STREAM_N = 2**26
#: all-reduce message sizes (bytes): 1 KiB to 256 MiB by factors of 4 (``--quick``: to 16 MiB)
ALLREDUCE_BYTES = tuple(2**p for p in range(10, 29, 2))
QUICK_ALLREDUCE_BYTES = tuple(2**p for p in range(10, 25, 2))


def _torch_cuda():
    if importlib.util.find_spec("torch") is None:
        return None, "PyTorch is not installed"
    import torch

    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} sees no GPU (torch.cuda.is_available() is False)"
    return torch, ""


def _cupy():
    if importlib.util.find_spec("cupy") is None:
        return None, "CuPy is not installed"
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "CuPy sees no GPU"
    except Exception as exc:   # CuPy raises its own runtime errors when there is no driver
        return None, f"CuPy sees no GPU ({exc})"
    return cupy, ""


def available(backend: str = "auto") -> tuple[str | None, str]:
    """The GPU backend to use (``"torch"``, ``"cupy"`` or None) and, when None, the reason in a sentence."""
    if backend in ("torch", "auto"):
        torch, why_t = _torch_cuda()
        if torch is not None:
            return "torch", ""
        if backend == "torch":
            return None, why_t
    cupy, why_c = _cupy()
    if cupy is not None:
        return "cupy", ""
    return None, (why_c if backend == "cupy" else f"{why_t}; {why_c}")


# -- PyTorch ------------------------------------------------------------------------------------------------
def _torch_dtypes(torch) -> dict:
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def _torch_fp8_matmul(torch, m: int, k: int, n: int):
    """A callable doing an fp8 (e4m3) GEMM with ``torch._scaled_mm``, or None where this GPU/build has none."""
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        return None
    dev = torch.device("cuda")
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()   # column-major B, as _scaled_mm wants
    one = torch.tensor(1.0, device=dev)
    try:
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    except Exception:   # no FP8 tensor cores (before Ada/Hopper) or shapes it refuses
        return None
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def torch_gemms(torch, shapes, dtypes=("bf16", "fp16", "fp8"), repeats: int = 5, warmup: int = 2,
                skipped: list | None = None) -> tuple[GemmTiming, ...]:
    """Median time of ``torch.matmul`` (fp8: ``torch._scaled_mm``) per shape and dtype on the current GPU."""
    shapes, out, dev = check_shapes(shapes), [], torch.device("cuda")
    for dtype in dtypes:
        for m, k, n in shapes:
            if dtype == "fp8":
                fn = _torch_fp8_matmul(torch, m, k, n)
                if fn is None:
                    if skipped is not None:
                        skipped.append(f"fp8 GEMM {m}x{k}x{n}: not supported by this GPU or PyTorch build")
                    continue
            else:
                a = torch.randn(m, k, device=dev, dtype=_torch_dtypes(torch)[dtype])
                b = torch.randn(k, n, device=dev, dtype=_torch_dtypes(torch)[dtype])
                fn = (lambda a=a, b=b: torch.matmul(a, b))
            t = median_seconds(fn, repeats, warmup, sync=torch.cuda.synchronize)
            out.append(GemmTiming(m, k, n, dtype, t, gemm_flop(m, k, n) / t))
    return tuple(out)


def torch_stream(torch, n: int = GPU_STREAM_N, repeats: int = 5, warmup: int = 2) -> tuple[StreamTiming, ...]:
    """STREAM's four kernels on float32 GPU arrays of ``n`` elements (one kernel launch each)."""
    dev = torch.device("cuda")
    a, b, c = (torch.full((n,), v, device=dev, dtype=torch.float32) for v in (1.0, 2.0, 0.0))
    q = 3.0
    kernels = {"copy": lambda: c.copy_(a), "scale": lambda: torch.mul(c, q, out=b),
               "add": lambda: torch.add(a, b, out=c), "triad": lambda: torch.add(b, c, alpha=q, out=a)}
    out = []
    for kernel, fn in kernels.items():
        t = median_seconds(fn, repeats, warmup, sync=torch.cuda.synchronize)
        out.append(StreamTiming(kernel, n, 4, stream_bytes(kernel, n, 4), t, stream_bytes_per_s(kernel, n, 4, t)))
    return tuple(out)


def torch_allreduce(torch, sizes=ALLREDUCE_BYTES, repeats: int = 5, warmup: int = 2) -> tuple[tuple, str]:
    """An all-reduce sweep over ``sizes`` (bytes, float32 messages): the timings and, if skipped, why."""
    dist = torch.distributed if torch.distributed.is_available() else None
    if dist is not None and dist.is_initialized() and dist.get_world_size() > 1:
        ranks = dist.get_world_size()

        def make(size):
            x = torch.ones(size // 4, device=torch.device("cuda"))
            return lambda: dist.all_reduce(x)
    elif torch.cuda.device_count() > 1:
        ranks = torch.cuda.device_count()

        def make(size):
            xs = [torch.ones(size // 4, device=torch.device("cuda", i)) for i in range(ranks)]
            return lambda: torch.cuda.nccl.all_reduce(xs)
    else:
        return (), ("all-reduce: torch.distributed is not initialised and this host has one GPU; "
                    "run the kit under torchrun on several GPUs for the sweep")

    def sync():
        for i in range(torch.cuda.device_count()):
            torch.cuda.synchronize(i)

    out = []
    for size in sizes:
        t = median_seconds(make(size), repeats, warmup, sync=sync)
        out.append(AllReduceTiming(size, ranks, t, size / t, allreduce_bus_bytes_per_s(size, ranks, t)))
    return tuple(out), ""


# -- CuPy ---------------------------------------------------------------------------------------------------
def cupy_gemms(cp, shapes, repeats: int = 5, warmup: int = 2) -> tuple[GemmTiming, ...]:
    """Median time of ``cupy.matmul`` per shape in fp16 and fp32 (CuPy has no bf16 or fp8 arrays)."""
    out = []
    for dtype, np_dtype in (("fp16", cp.float16), ("fp32", cp.float32)):
        for m, k, n in check_shapes(shapes):
            a = cp.random.standard_normal((m, k), dtype=cp.float32).astype(np_dtype)
            b = cp.random.standard_normal((k, n), dtype=cp.float32).astype(np_dtype)
            t = median_seconds(lambda a=a, b=b: cp.matmul(a, b), repeats, warmup, sync=cp.cuda.Device().synchronize)
            out.append(GemmTiming(m, k, n, dtype, t, gemm_flop(m, k, n) / t))
    return tuple(out)


def cupy_stream(cp, n: int = GPU_STREAM_N, repeats: int = 5, warmup: int = 2) -> tuple[StreamTiming, ...]:
    """STREAM's four kernels on float32 CuPy arrays of ``n`` elements; Triad as one elementwise kernel."""
    a, b, c = cp.full(n, 1.0, cp.float32), cp.full(n, 2.0, cp.float32), cp.zeros(n, cp.float32)
    q = cp.float32(3.0)
    triad = cp.ElementwiseKernel("float32 b, float32 c, float32 q", "float32 a", "a = b + q * c", "accelbook_triad")
    kernels = {"copy": lambda: cp.copyto(c, a), "scale": lambda: cp.multiply(c, q, out=b),
               "add": lambda: cp.add(a, b, out=c), "triad": lambda: triad(b, c, q, a)}
    out = []
    for kernel, fn in kernels.items():
        t = median_seconds(fn, repeats, warmup, sync=cp.cuda.Device().synchronize)
        out.append(StreamTiming(kernel, n, 4, stream_bytes(kernel, n, 4), t, stream_bytes_per_s(kernel, n, 4, t)))
    return tuple(out)


def measure_gpu(backend: str, shapes, quick: bool, provenance: dict, chip_id: str,
                repeats: int = 5, warmup: int = 2) -> Measurement:
    """The whole GPU run with ``backend`` (``"torch"`` or ``"cupy"``, see :func:`available`)."""
    skipped: list[str] = []
    if backend == "torch":
        torch, _ = _torch_cuda()
        name = torch.cuda.get_device_name(0)
        prov = {**provenance, "backend": "torch", "torch": torch.__version__, "gpu": name,
                **({"rocm": str(torch.version.hip)} if torch.version.hip else {"cuda": str(torch.version.cuda)})}
        gemm = torch_gemms(torch, shapes, repeats=repeats, warmup=warmup, skipped=skipped)
        stream = torch_stream(torch, repeats=repeats, warmup=warmup)
        allreduce, why = torch_allreduce(torch, QUICK_ALLREDUCE_BYTES if quick else ALLREDUCE_BYTES, repeats, warmup)
    else:
        cp, _ = _cupy()
        name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        prov = {**provenance, "backend": "cupy", "cupy": cp.__version__, "gpu": name}
        gemm = cupy_gemms(cp, shapes, repeats, warmup)
        stream = cupy_stream(cp, repeats=repeats, warmup=warmup)
        allreduce, why = (), "all-reduce: the CuPy path has none; use the PyTorch path under torchrun"
    prov["stream_array_bytes"] = stream[0].n * stream[0].itemsize
    vendor = "AMD" if prov.get("rocm") or "AMD" in name else "NVIDIA"
    return Measurement(chip_id=chip_id, name=f"{name} ({provenance['host']}, measured)", vendor=vendor,
                       backend=backend, device=name, provenance=prov, gemm=gemm, stream=stream,
                       allreduce=allreduce, skipped=tuple(skipped) + ((why,) if why else ()))
