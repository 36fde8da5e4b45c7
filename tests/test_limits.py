"""Every result says which limit binds, in plain words with the times of its parts (accelbook.limits)."""

import re

import pytest

from accelbook import inference, training
from accelbook.chip.roofline import layer_limit
from accelbook.limits import binding_sentence, seconds_words


@pytest.mark.parametrize("t, words", [(0.5e-6, "500 ns"), (140e-6, "140 µs"), (2.53e-3, "2.53 ms"), (2.0, "2 s"),
                                      (2.1 * 3600, "2.1 h"), (4 * 86400, "4 days"), (3e-9, "3 ns")])
def test_seconds_in_words(t, words):
    assert seconds_words(t) == words


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "1 s"])
def test_seconds_in_words_refuses_what_is_not_a_duration(bad):
    with pytest.raises(ValueError, match="duration"):
        seconds_words(bad)


def test_binding_sentence_leaves_out_parts_of_no_time():
    s = binding_sentence("memory", {"reading the weights": 140e-6, "the math": 0.5e-6, "all-reduces": 0.0})
    assert s == "memory-bound: reading the weights 140 µs, the math 500 ns"


def _ms(sentence: str, part: str) -> float:
    m = re.search(re.escape(part) + r" ([\d.,]+) (µs|ms|s)\b", sentence)
    assert m, (part, sentence)
    return float(m.group(1).replace(",", "")) * {"µs": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


def test_inference_decode_at_batch_one_is_bound_by_reading_the_weights():
    e = inference.estimate("llama-3.1-8b", "h100", 1, 1, 128, 128, "fp8")
    assert e.limit.startswith("each decode step (one chip) is memory-bound: reading the weights")
    # by hand: 8.03e9 parameters less the 0.525e9 input embedding (a lookup, not read), one byte each, at
    # BabelStream's 2.97 TB/s on an H100
    assert _ms(e.limit, "reading the weights") == pytest.approx(7.505e9 / 2.97e12, rel=0.01)
    assert _ms(e.limit, "the math") < _ms(e.limit, "reading the weights") / 5


def test_inference_large_batches_are_compute_bound_and_tensor_parallel_batch_one_waits_on_all_reduces():
    big = inference.estimate("llama-3.1-8b", "h100", 1, 1024, 128, 128, "fp8")
    assert "decode step (one chip) is compute-bound: the math" in big.limit
    tp8 = inference.estimate("llama-3.1-70b", "h200", 8, 1, 1024, 256, "fp8", tp=8)
    # 160 all-reduces a token at the measured small-message latency outweigh reading 70 GB / 8 chips
    assert "decode step (one chip) is communication-bound: all-reduces" in tp8.limit


def test_training_step_names_its_binding_group_and_largest_parts():
    e = training.estimate("llama-3.1-70b", "h100", 1024, 1024 * 4096, 4096)
    assert re.match(r"each [\d.]+ s step is compute-bound: matmuls [\d.]+ s", e.limit)


def test_roofline_layer_limit_by_hand():
    dec = layer_limit("llama-3.1-70b", "h100", "decode", 1, 4096)
    # one layer's 855.6 M weights in bf16 (q 8192², k and v 8192·1024, o 8192², FFN 3·8192·28672) plus the
    # 16.8 MB KV cache at 4,096 tokens, over 3.35 TB/s: 516 µs
    assert dec.startswith("one decode layer (516 µs) is memory-bound: FFN up + gate")
    assert "compute-bound" in layer_limit("llama-3.1-70b", "h100", "prefill", 1, 4096)


def test_a_small_all_reduce_is_latency_bound_and_a_large_one_bandwidth_bound():
    from accelbook import collectives, topology

    t = topology.switched(8)       # 8 chips on one switch, the builder's 100 GB/s links
    small, large = collectives.estimate("all_reduce", 8192, t), collectives.estimate("all_reduce", 2**30, t)
    assert small.limit.startswith("latency-bound: the steps' latency")
    assert large.limit.startswith("bandwidth-bound: moving the bytes")
    # a ring moves 2·(8-1)/8 of the 1 GiB over each 100 GB/s link: 18.8 ms
    assert _ms(large.limit, "moving the bytes") == pytest.approx(2 * 7 / 8 * 2**30 / 100e9, rel=0.03)   # "19 ms"


def test_every_training_time_part_belongs_to_one_limit_group():
    from accelbook.training.step import LIMIT_GROUPS, TIME_LABELS
    grouped = [k for keys in LIMIT_GROUPS.values() for k in keys]
    assert sorted(grouped) == sorted(TIME_LABELS) and len(grouped) == len(set(grouped))
