"""The model's terms, one at a time, against published timings of that term (``data/term_measurements.toml``).

End-to-end MFU cannot say which term of a step is wrong. Each row here times one part of a step that a
paper or a kernel library measured on its own, and the training model predicts it with the call that
computes that part:

- ``layer``: one transformer layer's forward + backward time, per layer, from :func:`~.step.estimate`
  of the published layout: ``t_layer = (t_gemm + t_attention + t_elementwise + t_recompute + t_tp_comm) / L``
  (the step's time parts, ``TrainingEstimate.time``, over the ``L`` layers; one microbatch, one stage);
- ``recompute``: what recomputation adds to that layer, ``t_layer(layout) - t_layer(baseline)``: the
  recomputed forward and the collectives it repeats;
- ``elementwise``: an HBM-bound kernel that moves ``bytes`` takes ``bytes / B_elem`` with ``B_elem`` the
  bandwidth the training kernel charges a layer's elementwise kernels at: the chip's peak × its achievable
  fraction (:func:`accelbook.specs.measured.achievable_hbm_fraction`, BabelStream) × the fraction of that
  elementwise kernels reach (:func:`accelbook.specs.measured.elementwise_stream_fraction`, H100 RMSNorm
  kernels from Liger's benchmarks; these rows are not among its inputs);
- ``tpu_gemm``: one ``[M×K]·[K×N]`` bf16 GEMM on a TPU chip, :func:`~.compute.gemm_time` of the chip's bf16
  record: ``max(2MNK / (P·η_meas·η_shape), bytes / B_hbm)``; the published time is
  ``2MNK / (devices_per_chip · F)`` with ``F`` the TFLOP/s a source reports per device (one TensorCore on TPU7x,
  two to a chip). Rows at a chip's best measured shape are the model's own ``η_meas`` (they show what the fold
  model ``η_shape`` adds at the shape it was measured at); the others check ``η_shape``;
- ``fp8_cast``: one FP8 quantisation kernel over ``elements`` bf16 values, charged as the training model charges
  each FP8 GEMM input's cast (:func:`accelbook.costs.elementwise.elementwise_bytes`: read 2 bytes, write 1, no
  scale and no separate amax pass) at the elementwise bandwidth ``B_elem`` above: ``3·elements / B_elem``.
- ``collective``: one collective of ``message_bytes`` (nccl-tests' size ``S``, the whole buffer) over ``ranks``
  chips of the chip's cluster at rank stride 1, timed by :func:`~.communication.collective_time`, the call the
  training kernel makes for every tensor-, context- and data-parallel collective (the rings of
  :mod:`accelbook.costs.hierarchical` at the cluster's step latency and bandwidth × efficiency). A published bus
  bandwidth becomes a time with nccl-tests' own definition, ``t = f·S / busbw``, ``f`` = 2(p-1)/p for an
  all-reduce and (p-1)/p for an all-gather or reduce-scatter (:func:`accelbook.network.collectives.bus_factor`).
- ``grouped_gemm``: ``groups`` expert GEMMs ``[m × k]·[k × n]`` (``gemms`` 3: forward and both backward GEMMs
  timed together) take ``gemms·groups·t_group`` with ``t_group`` the routed experts' GEMM time of the training
  kernel (:func:`~.compute.grouped_gemm_time`: the dense fraction × ``ρ_group`` × the tile model); the rows of
  ``data/grouped_gemm_efficiency.toml`` (the inputs of ``ρ_group``) are shown too, marked as inputs;
- ``all_to_all``: one dispatch or combine of ``tokens`` routed tokens over ``ep`` ranks of a cluster, the
  training kernel's :func:`~.communication.expert_all_to_all_pass` at ``bytes_per_element`` (FP8 dispatch
  1 + 4/128 with its scales, bf16 combine 2); the published time is DeepEP's bytes over its bandwidth,
  ``tokens·destinations·d·e / B`` (DERIVED: the README gives a bandwidth, its test counts the bytes);
- ``permute``: gathering ``tokens`` tokens into their experts' order, ``2·T·d·(1 + top_k)`` bytes, half the
  training kernel's :func:`~.compute.moe_permute_time` (permute and unpermute) at the elementwise kernels'
  bandwidth.

``error = model_s / published_s - 1``: positive when the model is slower than the measurement.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from accelbook.costs.hierarchical import ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER
from accelbook.network.collectives import bus_factor
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import cluster_for, clusters, get_cluster
from accelbook.specs.grouped_gemm import load_grouped_gemm_timings
from accelbook.specs.loader import DATA_DIR, CatalogueError, check_keys, load_sources, parse_quantity, read_table_file
from accelbook.specs.measured import achievable_hbm_fraction, elementwise_stream_fraction
from accelbook.specs.models import get_model

from .communication import collective_time, expert_all_to_all_pass
from .compute import gemm_time, grouped_gemm_time, moe_permute_time
from .records import PRECISIONS, chip_record, model_record
from .step import estimate

TERMS = ("layer", "recompute", "elementwise", "gemm", "collective", "grouped_gemm", "all_to_all", "permute")
#: the time parts of a step that one layer's forward + backward is made of (``TrainingEstimate.time`` keys)
LAYER_PARTS = ("t_gemm_s", "t_attention_s", "t_elementwise_s", "t_recompute_s", "t_tp_comm_s")
#: the keys a row of each term has: (required, optional)
KEYS = {
    "layer": ({"term", "case", "chip", "model", "layout", "published_ms"}, {"shape"}),
    "recompute": ({"term", "case", "chip", "model", "layout", "baseline", "published_ms"}, {"shape"}),
    "elementwise": ({"term", "case", "chip", "bytes_moved", "published_tb_s"}, set()),
    # one dense GEMM: its shape and precision, and either a throughput or a time
    "gemm": ({"term", "case", "chip", "precision", "m", "n", "k", "set"}, {"published_tflop_s", "published_ms"}),
    "collective": ({"term", "case", "chip", "collective", "message_bytes", "ranks"},
                   {"published_busbw_gb_s", "published_ms"}),
    "grouped_gemm": ({"term", "case", "chip", "precision", "groups", "m_per_group", "n", "k", "gemms",
                      "published_tflop_s"}, set()),
    "all_to_all": ({"term", "case", "cluster", "model", "ep", "tokens", "bytes_per_element", "destinations_per_token",
                    "published_gb_s"}, set()),
    "permute": ({"term", "case", "chip", "model", "tokens", "published_us"}, set()),
}
#: what a gemm row is to the model (``set``); rows of the other terms are ``check``
GEMM_SETS = ("fit", "input", "held-out")
#: nccl-tests' name of a collective -> its kind in :func:`accelbook.costs.hierarchical.collective_time_s`
COLLECTIVE_KINDS = {"all_gather": ALL_GATHER, "reduce_scatter": REDUCE_SCATTER, "all_reduce": ALL_REDUCE}
#: a collective row's published figure: exactly one of these keys
COLLECTIVE_PUBLISHED = ("published_busbw_gb_s", "published_ms")
#: the keys of a grouped_gemm or all_to_all row that are positive numbers
POSITIVE = ("groups", "m_per_group", "n", "k", "gemms", "ep", "tokens", "bytes_per_element", "destinations_per_token")
#: the layout keys that are not :func:`estimate` keywords
RUN_KEYS = ("n_chips", "seq_len", "global_batch_sequences")

# TPU GEMM rows (a separate block: other term kinds are added beside it)
TERMS += ("tpu_gemm",)
KEYS["tpu_gemm"] = ({"term", "case", "chip", "mnk", "published_tflop_s"}, {"devices_per_chip"})

# FP8 cast kernels (a separate block)
TERMS += ("fp8_cast",)
KEYS["fp8_cast"] = ({"term", "case", "chip", "elements", "published_us"}, set())
#: bytes an element the model charges a cast of an FP8 GEMM input: read bf16 (2), write fp8 (1)
CAST_BYTES_PER_ELEMENT = 3.0
COLUMNS = ["term", "case", "set", "model_s", "published_s", "error", "source", "note"]


def term_measurements(path=None) -> dict[str, dict]:
    """The rows of ``data/term_measurements.toml`` (or ``path``), checked: the keys of the row's term,
    a table for ``shape``, ``layout`` and ``baseline``, a positive ``bytes_moved``, and the published
    figure with its source; each row gains ``published_s`` (seconds) and ``provenance``. A malformed row
    raises a :class:`~accelbook.specs.loader.CatalogueError` naming the file, the row and the key."""
    path = Path(path or DATA_DIR / "term_measurements.toml")
    sources = load_sources()
    rows = {}
    for rid, e in read_table_file(path).items():
        if e.get("term") not in TERMS:
            raise CatalogueError(path, rid, "term", f"must be one of {TERMS}, got {e.get('term')!r}")
        required, optional = KEYS[e["term"]]
        check_keys(path, rid, e, required=required, optional=optional)
        for k in ("shape", "layout", "baseline"):
            if k in e and not isinstance(e[k], dict):
                raise CatalogueError(path, rid, k, f"must be a table of keys and values, got {e[k]!r}")
        if "layout" in e:
            missing = [k for k in RUN_KEYS if k not in e["layout"]]
            if missing:
                raise CatalogueError(path, rid, "layout", f"needs {', '.join(missing)} (the run's size)")
        if e["term"] == "tpu_gemm":
            rows[rid] = _tpu_gemm_row(path, rid, e, sources)
            continue
        if e["term"] == "fp8_cast":
            n = e["elements"]
            if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
                raise CatalogueError(path, rid, "elements", f"must be a whole number of elements > 0, got {n!r}")
            q = parse_quantity(path, rid, "published_us", e["published_us"], "us", sources)
            rows[rid] = dict(e, published_s=q.value, provenance=q.provenance)
            continue
        for k in POSITIVE:
            v = e.get(k, 1)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise CatalogueError(path, rid, k, f"must be a number > 0, got {v!r}")
        if e["term"] == "gemm":
            q, published_s = _gemm_published(path, rid, e, sources)
        elif e["term"] == "collective":
            q, published_s = collective_published(path, rid, e, sources)
        elif e["term"] == "grouped_gemm":
            q = parse_quantity(path, rid, "published_tflop_s", e["published_tflop_s"], "tflop_s", sources)
            published_s = grouped_flop(e) / q.value
        elif e["term"] == "permute":
            q = parse_quantity(path, rid, "published_us", e["published_us"], "us", sources)
            published_s = q.value
        elif e["term"] == "all_to_all":
            q = parse_quantity(path, rid, "published_gb_s", e["published_gb_s"], "gb_s", sources)
            published_s = (e["tokens"] * e["destinations_per_token"] * get_model(e["model"]).d_model
                           * e["bytes_per_element"] / q.value)
        elif e["term"] == "elementwise":
            b = e["bytes_moved"]
            if isinstance(b, bool) or not isinstance(b, (int, float)) or not b > 0:
                raise CatalogueError(path, rid, "bytes_moved", f"must be a number of bytes > 0, got {b!r}")
            q = parse_quantity(path, rid, "published_tb_s", e["published_tb_s"], "tb_s", sources)
            published_s = b / q.value
        else:
            q = parse_quantity(path, rid, "published_ms", e["published_ms"], "ms", sources)
            published_s = q.value
        rows[rid] = dict(e, published_s=published_s, provenance=q.provenance)
    return rows


def _tpu_gemm_row(path, rid: str, e: dict, sources) -> dict:
    """A checked ``tpu_gemm`` row: ``mnk`` three whole numbers > 0, ``devices_per_chip`` a whole number >= 1."""
    mnk = e["mnk"]
    if not (isinstance(mnk, list) and len(mnk) == 3
            and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in mnk)):
        raise CatalogueError(path, rid, "mnk", f"must be [M, N, K], three whole numbers > 0, got {mnk!r}")
    dev = e.get("devices_per_chip", 1)
    if isinstance(dev, bool) or not isinstance(dev, int) or dev < 1:
        raise CatalogueError(path, rid, "devices_per_chip", f"must be a whole number >= 1, got {dev!r}")
    q = parse_quantity(path, rid, "published_tflop_s", e["published_tflop_s"], "tflop_s", sources)
    M, N, K = mnk
    return dict(e, published_s=2.0 * M * N * K / (dev * q.value), provenance=q.provenance)


def gemm_chip_record(chip_id: str, precision: str = "bf16"):
    """The chip record at ``precision`` (:data:`~.records.CHIP`) a GEMM row is timed with: the chip's in its cluster preset,
    or in the first preset where it has none (TPU7x): :func:`~.compute.gemm_time` reads only the chip's own
    fields (peak, measured efficiency, matrix units, HBM bandwidth), never the cluster's."""
    chip = get_chip(chip_id)
    try:
        cl = cluster_for(chip)
    except ValueError:
        cl = next(iter(clusters().values()))
    return chip_record(chip, cl, precision)[0]


def _gemm_published(path, rid: str, e: dict, sources):
    """A gemm row checked: precision, whole ``m``, ``n``, ``k`` > 0, a ``set``, exactly one published figure;
    (its quantity, its time in seconds)."""
    if e["precision"] not in PRECISIONS:
        raise CatalogueError(path, rid, "precision", f"must be one of {PRECISIONS}, got {e['precision']!r}")
    for k in ("m", "n", "k"):
        if isinstance(e[k], bool) or not isinstance(e[k], int) or e[k] <= 0:
            raise CatalogueError(path, rid, k, f"must be a whole number > 0, got {e[k]!r}")
    if e["set"] not in GEMM_SETS:
        raise CatalogueError(path, rid, "set", f"must be one of {GEMM_SETS}, got {e['set']!r}")
    given = [k for k in ("published_tflop_s", "published_ms") if k in e]
    if len(given) != 1:
        raise CatalogueError(path, rid, "published_tflop_s", "needs exactly one of published_tflop_s, published_ms")
    if given[0] == "published_ms":
        q = parse_quantity(path, rid, "published_ms", e["published_ms"], "ms", sources)
        return q, q.value
    q = parse_quantity(path, rid, "published_tflop_s", e["published_tflop_s"], "tflop_s", sources)
    return q, 2.0 * e["m"] * e["n"] * e["k"] / q.value


def collective_published(path, rid: str, e: dict, sources):
    """(quantity, published time in s) of a collective row, its ``collective``, ``message_bytes`` and ``ranks``
    checked: a published ``busbw`` becomes ``f·S / busbw`` (module docstring), a published time is taken as it is."""
    if e["collective"] not in COLLECTIVE_KINDS:
        raise CatalogueError(path, rid, "collective", f"must be one of {tuple(COLLECTIVE_KINDS)}, got {e['collective']!r}")
    S, p = e["message_bytes"], e["ranks"]
    if isinstance(S, bool) or not isinstance(S, (int, float)) or not S > 0:
        raise CatalogueError(path, rid, "message_bytes", f"must be a number of bytes > 0, got {S!r}")
    if isinstance(p, bool) or not isinstance(p, int) or p < 2:
        raise CatalogueError(path, rid, "ranks", f"must be a whole number of chips >= 2, got {p!r}")
    given = [k for k in COLLECTIVE_PUBLISHED if k in e]
    if len(given) != 1:
        raise CatalogueError(path, rid, "published_busbw_gb_s",
                             f"a collective row needs exactly one of {COLLECTIVE_PUBLISHED}, got {given or 'none'}")
    if given[0] == "published_ms":
        q = parse_quantity(path, rid, "published_ms", e["published_ms"], "ms", sources)
        return q, q.value
    q = parse_quantity(path, rid, "published_busbw_gb_s", e["published_busbw_gb_s"], "gb_s", sources)
    return q, bus_factor(e["collective"], p) * S / q.value


def collective_model_s(e: dict) -> float:
    """The training model's time (s) of a collective row: :func:`~.communication.collective_time` of its kind,
    ``message_bytes`` and ``ranks`` at stride 1, on the chip record of the chip's cluster (bf16)."""
    cl = cluster_for(e["chip"])
    rec, _ = chip_record(cl.chip, cl, "bf16")
    return collective_time(COLLECTIVE_KINDS[e["collective"]], float(e["message_bytes"]), float(e["ranks"]), 1.0, rec)


def grouped_flop(e) -> float:
    """FLOPs of a grouped-GEMM row (a dict or a :class:`~accelbook.specs.grouped_gemm.GroupedGemmTiming`):
    ``gemms·2·groups·m·n·k``."""
    g = e if isinstance(e, dict) else dataclasses.asdict(e)
    return g["gemms"] * 2.0 * g["groups"] * g["m_per_group"] * g["n"] * g["k"]


def grouped_model_time_s(chip_id: str, precision: str, groups, m, n, k, gemms) -> float:
    """The training kernel's time (s) for ``gemms`` passes of ``groups`` expert GEMMs ``[m × k]·[k × n]``
    (:func:`~.compute.grouped_gemm_time` on the chip's record in its default cluster)."""
    chip = get_chip(chip_id)
    c, _ = chip_record(chip, cluster_for(chip), precision)
    return gemms * groups * grouped_gemm_time(float(m), float(n), float(k), c)


def all_to_all_model_time_s(e: dict) -> float:
    """The training kernel's time (s) of one dispatch or combine of an all_to_all row
    (:func:`~.communication.expert_all_to_all_pass` at the row's bytes per element; no tensor or context
    parallelism)."""
    cl = get_cluster(e["cluster"])
    c, _ = chip_record(cl.chip, cl, "bf16")
    mv = model_record(get_model(e["model"]), 4096)
    return expert_all_to_all_pass(mv, c, float(e["tokens"]), 1.0, 1.0, float(e["ep"]), float(e["bytes_per_element"]))


def permute_model_time_s(e: dict) -> float:
    """The training kernel's time (s) of one permute of a permute row: half of
    :func:`~.compute.moe_permute_time` (permute and unpermute) on one MoE layer (its share ``f`` divided out)."""
    chip = get_chip(e["chip"])
    c, _ = chip_record(chip, cluster_for(chip), "bf16")
    mv = model_record(get_model(e["model"]), 4096)
    return moe_permute_time(mv, c, float(e["tokens"])) / (2.0 * mv.moe_layer_share)


def row_model(e: dict):
    """The model of a layer or recompute row: the catalogue's ``model`` with the fields of ``shape`` replaced."""
    return dataclasses.replace(get_model(e["model"]), **e.get("shape", {}))


def row_estimate(e: dict, **override):
    """:func:`~.step.estimate` of a row's layout (``override`` replaces layout keys: a recompute row's baseline)."""
    lay = dict(e["layout"], **override)
    n, s, B = (lay.pop(k) for k in RUN_KEYS)
    return estimate(row_model(e), e["chip"], n, B * s, s, **lay)


def layer_time_s(est, n_layers: int) -> float:
    """One layer's forward + backward time (s): the step's :data:`LAYER_PARTS` over ``n_layers`` layers."""
    return sum(est.time[k] for k in LAYER_PARTS) / n_layers


def model_time_s(e: dict) -> float:
    """The model's time (s) for a row of :func:`term_measurements` (the module docstring says which call)."""
    if e["term"] == "grouped_gemm":
        return grouped_model_time_s(e["chip"], e["precision"], e["groups"], e["m_per_group"], e["n"], e["k"],
                                    e["gemms"])
    if e["term"] == "all_to_all":
        return all_to_all_model_time_s(e)
    if e["term"] == "permute":
        return permute_model_time_s(e)
    if e["term"] == "collective":
        return collective_model_s(e)
    if e["term"] == "tpu_gemm":
        M, N, K = (float(x) for x in e["mnk"])
        return gemm_time(M, N, K, gemm_chip_record(e["chip"]))
    if e["term"] == "gemm":
        return float(gemm_time(float(e["m"]), float(e["n"]), float(e["k"]), gemm_chip_record(e["chip"], e["precision"])))
    if e["term"] in ("elementwise", "fp8_cast"):
        chip = get_chip(e["chip"])
        b = e["bytes_moved"] if e["term"] == "elementwise" else CAST_BYTES_PER_ELEMENT * e["elements"]
        return b / (chip.hbm_bw_bytes_per_s * achievable_hbm_fraction(chip).fraction
                    * elementwise_stream_fraction(chip).fraction)
    L = row_model(e).n_layers
    t = layer_time_s(row_estimate(e), L)
    if e["term"] == "recompute":
        t -= layer_time_s(row_estimate(e, **e["baseline"]), L)
    return t


def term_validation_table(path=None) -> pd.DataFrame:
    """Term by term, the model against published timings: one row per measurement of
    ``data/term_measurements.toml`` with ``term``, ``case``, ``set`` (a gemm row's; ``input`` for the grouped-GEMM fraction's timings; else ``check``), ``model_s``,
    ``published_s``,
    ``error = model_s / published_s - 1`` (positive: the model is slower), ``source`` (title) and
    ``note`` (what the source says, and where its time is derived from a throughput). In the package's table
    (``path`` None) the grouped-GEMM timings ``ρ_group`` is the median of (``data/grouped_gemm_efficiency.toml``)
    follow as ``grouped_gemm`` rows whose case says they are its inputs."""
    rows = []
    for rid, e in term_measurements(path).items():
        m = model_time_s(e)
        rows.append({"id": rid, "term": e["term"], "case": e["case"], "set": e.get("set", "check"), "model_s": m,
                     "published_s": e["published_s"],
                     "error": m / e["published_s"] - 1, "source": e["provenance"].source.title,
                     "note": e["provenance"].note})
    for g in (load_grouped_gemm_timings() if path is None else ()):
        m = grouped_model_time_s(g.chip_id, g.precision, g.groups, g.m_per_group, g.n, g.k, g.gemms)
        rows.append({"id": g.id, "term": "grouped_gemm", "case": f"{g.kernel}, {g.groups} x {g.m_per_group} tokens, "
                     f"N {g.n}, K {g.k}, {g.chip_id} {g.precision} (an input of the grouped-GEMM fraction)",
                     "set": "input", "model_s": m, "published_s": g.time_s, "error": m / g.time_s - 1,
                     "source": g.provenance.source.title, "note": g.provenance.note})
    return pd.DataFrame(rows, columns=["id", *COLUMNS])


def term_errors(table: pd.DataFrame | None = None) -> pd.Series:
    """Median |error| per term of ``table`` (default :func:`term_validation_table`), largest first."""
    t = term_validation_table() if table is None else table
    return t.assign(abs_error=t["error"].abs()).groupby("term")["abs_error"].median().sort_values(ascending=False)


def worst_term(table: pd.DataFrame | None = None) -> str:
    """The term whose median |error| is largest in ``table`` (default :func:`term_validation_table`)."""
    return str(term_errors(table).index[0])
