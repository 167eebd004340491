"""The interpreter runs the builders' kernels bit-exact against numpy (the rules it catches,
each at its op, with the fixed kernel clean under 102 schedules: test_rules.py)."""

from __future__ import annotations

import numpy as np
import pytest

import interpreter
from frontends import kernels

RNG = np.random.default_rng(7)


def data(shape, dtype="f32"):
    if dtype == "i32":
        return RNG.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)
    if dtype == "bf16":  # bits: the interpreter moves bf16 as 16-bit words
        return RNG.integers(0, 2**16, size=shape, dtype=np.int64).astype(np.uint16)
    return (RNG.standard_normal(shape) * 100).astype({"f32": np.float32, "f16": np.float16}[dtype])


def bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def clean(module, *arrays, grid, **options):
    run = interpreter.run(module, *arrays, grid=grid, **options)
    assert run.violations == [], [str(v) for v in run.violations]
    return run.arrays


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32"])
@pytest.mark.parametrize("shape", [(128, 128), (130, 200), (7, 296)], ids=str)
def test_tma_copy(shape, dtype):
    x = data(shape, dtype)
    out = clean(
        kernels.tma_copy(shape, dtype), x, np.zeros_like(x), grid=kernels.grid(shape, (64, 64))
    )
    assert np.array_equal(bits(out[1]), bits(x))


@pytest.mark.parametrize("swizzle", [32, 64, 128])
def test_swizzled_tma_copy(swizzle):
    shape, tile = (100, 96), (64, swizzle // 4)
    x = data(shape)
    module = kernels.tma_copy(shape, "f32", tile, swizzle=swizzle)
    out = clean(module, x, np.zeros_like(x), grid=kernels.grid(shape, tile))
    assert np.array_equal(out[1], x)


def test_tma_reduce_add():
    shape = (130, 72)
    x, o = data(shape), data(shape)
    out = clean(
        kernels.tma_copy(shape, "f32", reduce="add"), x, o, grid=kernels.grid(shape, (64, 64))
    )
    assert np.array_equal(out[1], o + x)


def test_cp_async_copy():
    shape = (70, 200)
    x = data(shape)
    module = kernels.cp_async_copy(shape, "f32")
    out = clean(module, x, np.zeros_like(x), grid=kernels.grid(shape, (32, 128)))
    assert np.array_equal(out[1], x)


def test_bulk_copy():
    x = data((10_000,))
    out = clean(kernels.bulk_copy(10_000, "f32", 4096), x, np.zeros_like(x), grid=(3, 1))
    assert np.array_equal(out[1], x)


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_pipelined_ring(stages):
    shape = (256, 192)
    x = data(shape)
    module = kernels.tma_copy_pipelined(shape, "f32", (64, 64), stages=stages)
    out = clean(module, x, np.zeros_like(x), grid=(2, 2), schedule="adversarial")
    assert np.array_equal(out[1], x)


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_warp_specialized_copy(stages):
    shape = (256, 256)
    x = data(shape)
    module = kernels.ws_copy(shape, "f32", (64, 128), stages=stages)
    for seed in range(3):
        out = clean(module, x, np.zeros_like(x), grid=kernels.ws_grid(3), seed=seed)
        assert np.array_equal(out[1], x)


@pytest.mark.parametrize("space", ["#copy.tmem", "#copy.smem"])
def test_a_memref_argument_outside_gmem_is_refused_with_the_fix(space):
    """A function whose memref argument is in TMEM or SMEM (a helper, not a kernel: a
    kernel's arrays are GMEM) is refused at its binding, with the fix, not run into a
    Python error at its first TMEM op (the oracle's fuzz kernel 9/404)."""
    from xdsl.parser import Parser

    from copy_tools.universe import make_context

    text = f"""
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%t: memref<128x32xf32, {space}>, %v: vector<4xf32>)
      attributes {{gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    copy.barrier_init arrivals 1 : !copy.barrier<1>
    func.return
  }}
}}
"""
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(interpreter.InterpretError) as raised:
        interpreter.run(module, np.zeros((128, 32), np.float32), np.zeros(4, np.float32))
    assert "argument 0 is a" in str(raised.value)
    assert "copy.alloc_smem, copy.tmem_alloc" in raised.value.note


def test_an_element_type_an_op_does_not_model_is_an_interpret_error_at_the_op():
    """tcgen05.cp of 4-bit elements (a fuzz kernel, 11/2179): the interpreter stops with an
    InterpretError that names the op ("not modelled"), not a Python NotImplementedError from
    deep inside its handler."""
    from xdsl.parser import Parser

    from copy_tools.universe import make_context

    text = """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k() attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = copy.tmem_alloc : memref<128x4096xi4, #copy.tmem>
    %s = copy.alloc_smem : memref<32x32xi4, #copy.smem>
    copy.smem_to_tmem %s to %t[%c0] shape shape_32x128b multicast warpx4
      : memref<32x32xi4, #copy.smem>, memref<128x4096xi4, #copy.tmem>
    copy.tmem_dealloc %t : memref<128x4096xi4, #copy.tmem>
    func.return
  }
}
"""
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(interpreter.InterpretError) as raised:
        interpreter.run(module)
    assert "'copy.smem_to_tmem' is not modelled by the interpreter here" in str(raised.value)
    assert raised.value.op.name == "copy.smem_to_tmem"
