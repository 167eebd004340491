"""On a GPU (an H200 here): `im2col_gather` gathers the im2col matrix of an NHWC input with
TMA im2col loads (padding through the bounding box, stride through the traversal stride,
dilation through the offsets), for every case test_im2col.py compiles: strides 1 and 2,
paddings 0 to 2, dilations 1 and 2, odd H and W, C of 8, 16 and 64, f16 and f32, bit for bit
against numpy's im2col. Without a GPU, under the interpreter (bit for bit too)."""

from __future__ import annotations

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device
from tests.dialect.test_im2col import CASES, case_id, im2col, module, setup
from tests.runtime.test_runtime_gpu import random, same_bits

pytestmark = device.marks()

@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_im2col_gather_matches_numpy(case):
    conv, options = setup(case)
    dtype = case[5]
    program = runtime.compile(module(case))
    x = random(conv.shape, dtype, 1)
    want = im2col(x, conv)
    # NaN-free sentinels: every element of y must be written (a missed tile stays -7).
    y = np.full(conv.matrix, -7, x.dtype)
    program(x, y, grid=kernels.im2col_grid(conv, options["pixels"], options["channels"]))
    assert same_bits(y, want)


def test_im2col_gather_with_an_l2_policy():
    """An L2 policy changes where lines live, never what the load returns."""
    conv = kernels.conv2d((2, 9, 7, 16), 3, stride=2, padding=1, dilation=2)
    program = runtime.compile(kernels.im2col_gather(conv, "f16", cache_hint="evict_last"))
    x = random(conv.shape, "f16", 3)
    y = np.full(conv.matrix, -7, x.dtype)
    program(x, y, grid=kernels.im2col_grid(conv))
    assert same_bits(y, im2col(x, conv))
