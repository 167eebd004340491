"""The warp-specialized builders of `kernels` (no GPU needed): each kernel verifies (op rules
and the protocol analysis), lowers and assembles to a cubin for sm_90a, its PTX splits the
block by warp and synchronizes each role on its own named barrier; bad parameters raise a
ValueError that says what was expected. test_warp_specialized_gpu.py runs them."""

from __future__ import annotations

import re

import pytest

from copy_dialect import ops as copy
from copy_tools.universe import make_context
from frontends import kernels
from passes.pipeline import compile_module


def ptx_of(module) -> str:
    return compile_module(module, make_context()).ptx


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 5, 6])
def test_ws_copy_compiles_for_every_stage_count(stages):
    module = kernels.ws_copy((1000, 1000), "f32", stages=stages, in_flight=min(1, stages - 1))
    ptx = ptx_of(module)
    assert ".reqntid 64, 1, 1" in ptx
    assert "elect.sync" in ptx
    assert "shfl.sync.idx.b32" in ptx  # the warp index, read warp-uniformly
    assert "cp.async.bulk.tensor.2d.shared::cta.global" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
    # The storer's wait_group syncs role 1 on named barrier 2 (32 threads), never the block.
    assert "barrier.sync 2, 32;" in ptx


@pytest.mark.parametrize(
    ("op", "dtype", "out"),
    [("add", "f32", None), ("add", "bf16", None), ("axpb", "f16", None), ("cast", "f32", "bf16")],
)
def test_ws_elementwise_compiles(op, dtype, out):
    module = kernels.ws_elementwise(op, (513, 776), dtype, out_dtype=out, consumer_warps=4)
    ptx = ptx_of(module)
    assert ".reqntid 160, 1, 1" in ptx
    # Consumers: their fence and wait_group sync role 1 (4 warps), their release arrives once
    # per warp after the warp synchronizes.
    assert "barrier.sync 2, 128;" in ptx
    assert "bar.warp.sync -1;" in ptx
    assert "fence.proxy.async.shared::cta" in ptx
    assert "ld.shared.v4" in ptx  # 16-byte thread reads of the slot
    if op == "cast":
        assert re.search(r"cvt\.rn\.bf16(x2)?\.f32", ptx)


def test_ws_kernels_name_their_roles():
    module = kernels.ws_elementwise("add", (256, 256), "f32", consumer_warps=8)
    (ws,) = [op for op in module.walk() if isinstance(op, copy.WarpSpecializeOp)]
    assert ws.role_warps == (1, 8)
    assert [ws.role_threads(r) for r in range(2)] == [32, 256]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: kernels.ws_copy((100, 100), "f32", stages=0), "expected 1 to"),
        (lambda: kernels.ws_copy((100, 100), "f32", stages=2, in_flight=2), "in_flight"),
        (lambda: kernels.ws_copy((100, 100), "f32", tile=(300, 8)), "1 to 256"),
        (lambda: kernels.ws_copy((100, 100), "f32", target="sm_80"), "with TMA"),
        (lambda: kernels.ws_elementwise("mul", (100, 100), "f32"), "one of add, axpb, cast"),
        (lambda: kernels.ws_elementwise("cast", (100, 100), "f32"), "out_dtype"),
        (lambda: kernels.ws_elementwise("add", (100, 100), "i32"), "float element type"),
        (lambda: kernels.ws_elementwise("add", (100, 100), "f32", consumer_warps=0), "1 to 16"),
    ],
)
def test_bad_parameters_say_what_was_expected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_ws_elementwise_with_register_reallocation():
    module = kernels.ws_elementwise("add", (513, 776), "bf16", consumer_warps=8, maxnreg=(40, 232))
    ptx = ptx_of(module)  # nvJitLink assembles it: the cubin exists
    assert ".reqntid 384, 1, 1" in ptx
    # The even share of 384 threads is 168 registers: the producer gives, the consumers take.
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in ptx


def test_register_reallocation_needs_consumer_warpgroups():
    with pytest.raises(ValueError, match="multiple of 4 consumer warps"):
        kernels.ws_elementwise("add", (256, 256), "f32", consumer_warps=6, maxnreg=(40, 232))
