"""Named L2 cache policies (copy.async_copy's `l2`): the builders' `cache_hints` take the
names, each policy reaches the TMA instruction's `.L2::cache_hint` operand as its encoding,
and the kernels test_cache_policy_gpu.py launches compile here."""

from __future__ import annotations

import itertools

import pytest
from xdsl.dialects.builtin import IntegerAttr, i64

from copy_dialect import kernels
from copy_dialect import ops as copy
from copy_dialect.attributes import L2_POLICY_ENCODING, L2Policy
from copy_tools import runtime
from copy_tools.universe import make_context
from passes.pipeline import compile_module

CASES = [
    (load, store, reduce)
    for (load, store), reduce in itertools.product(
        [(None, None), *((p, q) for p in L2Policy for q in L2Policy)], [None, "add", "prefetch"]
    )
]
"""(load policy, store policy, "add" for a reduce-add, "prefetch" for a reduce-add that first
prefetches its destination tile with the store's policy, None for a copy)."""


def module(load, store, reduce):
    return kernels.tma_copy(
        (300, 200),
        "f32",
        (64, 64),
        reduce=None if reduce is None else "add",
        prefetch_destination=reduce == "prefetch",
        cache_hints=(load, store),
    )


@pytest.mark.parametrize(("load", "store", "reduce"), CASES[:4] + CASES[-3:])
def test_policy_kernels_compile(load, store, reduce):
    compiled = compile_module(module(load, store, reduce), make_context(), "sm_90a")
    assert compiled.cubin
    for policy in (load, store):
        if policy is not None:
            assert f"{L2_POLICY_ENCODING[L2Policy(policy)]};" in compiled.ptx
    hinted = compiled.ptx.count(".L2::cache_hint")
    prefetched = reduce == "prefetch" and store is not None
    assert hinted == (load is not None) + (store is not None) + prefetched


def test_raw_cache_hint_of_a_policy_is_the_named_policy():
    named = kernels.tma_copy((128, 128), "f32", (64, 64), cache_hints=("evict_last", None))
    ptx_named = compile_module(named, make_context(), "sm_90a").ptx
    raw = kernels.tma_copy((128, 128), "f32", (64, 64))
    for op in raw.walk():
        if isinstance(op, copy.AsyncCopyOp) and op.geometry().is_load:
            op.properties["cache_hint"] = IntegerAttr(L2_POLICY_ENCODING[L2Policy.EVICT_LAST], i64)
    assert compile_module(raw, make_context(), "sm_90a").ptx == ptx_named


def test_program_of_policies_loads():
    assert runtime.compile(module("evict_first", "evict_last", None)).kernels
