"""How many of a layer's experts a batch touches: the share of their weights a step must read.

Under uniform routing each of ``T`` tokens picks ``top_k`` distinct experts among ``n_experts``, so it
misses a given expert with probability ``1 - top_k/n_experts``; with the tokens' choices independent, the
expected share of experts that at least one token touches is

    touched = 1 - (1 - top_k/n_experts)^T

It is what a decode step's weights read counts: the chip layer's roofline (expected experts
``n_experts·touched``), the inference model's tensor-parallel decode and its data-parallel-attention layout.
Source: the occupancy (balls-in-bins) expectation; a real router is not uniform, and this is the most, in expectation, a
batch reads (by concavity, skewed routing touches fewer experts).
"""

from __future__ import annotations


def touched_expert_share(top_k, n_experts, T):
    """Expected share of ``n_experts`` experts that ``T`` tokens' top-``top_k`` choices touch (no unit):
    ``1 - (1 - top_k/n_experts)^T``. Mixtral (8 experts, top 2) at one token: ``1 - (6/8)^1 = 0.25``;
    at 8 tokens ``1 - 0.75^8 = 0.8999``. DeepSeek-V3 (256, top 8) at 64 tokens: ``1 - (248/256)^64 = 0.869``.

    Plain Python on numbers (``T`` need not be whole): Python's ``**`` is C's ``pow``, which NumPy's
    ``power`` does not always equal to the last bit, so the inference model takes arrays of ``T``
    element by element (``inference.arrays.each``) and every caller gets the same bits.
    """
    return 1 - (1 - top_k / n_experts) ** T
