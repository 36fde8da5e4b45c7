"""How the kit times a call, and the shapes it times: a warm-up, then the median of repeats.

The median (not the mean, not the best) of ``repeats`` timed calls after ``warmup`` untimed ones: a warm-up
pays for first-touch page faults, BLAS thread start-up and GPU kernel selection; the median ignores the odd
call an unrelated process slowed. STREAM itself reports the best of 10 (McCalpin's ``stream.c``); the median
is the more conservative choice on a shared machine.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

from accelbook.checks import whole

#: GEMM shapes (M, K, N): square ones and skinny ones (a decode-like M of 16, a K much larger than M and N)
FULL_SHAPES: tuple[tuple[int, int, int], ...] = (
    (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
    (16, 4096, 4096), (4096, 4096, 16), (256, 16384, 256), (8192, 1024, 1024),
)
#: the ``--quick`` subset: a few seconds on a 2-core machine in fp32 and fp64
QUICK_SHAPES: tuple[tuple[int, int, int], ...] = ((512, 512, 512), (1024, 1024, 1024), (16, 1024, 1024))
#: (repeats, warm-up calls) of a full and a quick run
FULL_REPEATS, QUICK_REPEATS = (7, 2), (3, 1)


def median_seconds(fn: Callable[[], object], repeats: int, warmup: int,
                   sync: Callable[[], object] | None = None) -> float:
    """Median wall time (s) of ``repeats`` calls of ``fn`` after ``warmup`` untimed calls.

    ``sync`` (e.g. ``torch.cuda.synchronize``) runs before the clock starts and before it stops, so that
    work queued on a GPU is inside the interval it belongs to.
    """
    repeats, warmup = whole("repeats", repeats), whole("warmup", warmup, 0)
    sync = sync or (lambda: None)
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    # a timer tick can read 0 on a tiny call: never report an infinite rate
    return max(statistics.median(times), 1e-9)


def check_shapes(shapes) -> tuple[tuple[int, int, int], ...]:
    """``shapes`` as a tuple of ``(M, K, N)`` whole numbers >= 1; a ``ValueError`` naming the bad one."""
    out = []
    for i, s in enumerate(shapes):
        if not (isinstance(s, (tuple, list)) and len(s) == 3):
            raise ValueError(f"shapes[{i}] must be (M, K, N), got {s!r}")
        out.append(tuple(whole(f"shapes[{i}][{j}]", x) for j, x in enumerate(s)))
    if not out:
        raise ValueError("shapes must hold at least one (M, K, N)")
    return tuple(out)
