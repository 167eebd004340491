"""On a GPU (an H200 here): L2 cache policies and tensor-map L2 promotions change where
lines live, never what a copy returns: tma_copy with every (load, store) pair of named
policies, with evict_unchanged and fraction-based policies made in the kernel
(createpolicy), and with each L2 promotion of the load's and prefetch's tensor maps; as a
copy, as a reduce-add, and as a reduce-add that prefetches its destination with the store's
policy; the warp-specialized copy with made policies used inside its roles; and
im2col_gather with made policies and each promotion of its im2col map; on odd
shapes (partial edge tiles), bit for bit against numpy. Every kernel also prefetches its
tensor maps at its entry (the default). test_cache_policy.py compiles the same kernels.
Without a GPU, under the interpreter (policies and promotions change nothing there) on the
smaller shapes (whole tiles, and partial edge tiles in both dims)."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device
from tests.dialect.test_cache_policy import (
    CASES,
    IM2COL_CASES,
    MADE_CASES,
    PROMOTION_CASES,
    SHAPES,
    WS_CASES,
    im2col_module,
    module,
    ws_module,
)
from tests.dialect.test_im2col import im2col
from tests.runtime.test_runtime_gpu import random, same_bits

pytestmark = device.marks()

SHAPE = device.shapes([(300, 200)], [(129, 68)])[0]
RUN_SHAPES = device.shapes(SHAPES, [(64, 64), (129, 68)])


def run(program, shape, reduce) -> None:
    x = random(shape, "f32", 1)
    y = random(shape, "f32", 2) if reduce else np.zeros(shape, np.float32)
    want = (y + x) if reduce else x.copy()
    program(x, y, grid=kernels.grid(shape, (64, 64)))
    assert same_bits(y, want)


@pytest.mark.parametrize(("load", "store", "reduce"), CASES)
def test_policy_leaves_results_unchanged(load, store, reduce):
    run(runtime.compile(module(load, store, reduce, SHAPE)), SHAPE, reduce)


@pytest.mark.parametrize("shape", RUN_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("load", "store", "reduce"), MADE_CASES)
def test_made_policy_leaves_results_unchanged(load, store, reduce, shape):
    run(runtime.compile(module(load, store, reduce, shape)), shape, reduce)


@pytest.mark.parametrize("shape", RUN_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("promotion", "reduce"), PROMOTION_CASES)
def test_promotion_leaves_results_unchanged(promotion, reduce, shape):
    program = runtime.compile(module("evict_last", "evict_first", reduce, shape, promotion))
    run(program, shape, reduce)


@pytest.mark.parametrize(
    ("shape", "hints", "blocks"),
    device.shapes(WS_CASES, [((200, 300), WS_CASES[0][1], 3), *WS_CASES[1:]]),
)
def test_made_policies_in_roles_leave_results_unchanged(shape, hints, blocks):
    program = runtime.compile(ws_module(shape, hints))
    x = random(shape, "f32", 3)
    y = np.zeros_like(x)
    program(x, y, grid=(blocks, 1))
    assert same_bits(y, x)


@pytest.mark.parametrize(("policy", "promotion"), IM2COL_CASES)
def test_im2col_policy_and_promotion_leave_results_unchanged(policy, promotion):
    conv, module = im2col_module(policy, promotion)
    program = runtime.compile(module)
    x = random(conv.shape, "f16", 3)
    y = np.full(conv.matrix, -7, x.dtype)
    program(x, y, grid=kernels.im2col_grid(conv))
    assert same_bits(y, im2col(x, conv))
