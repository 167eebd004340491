"""The interpreter runs the builders' kernels bit-exact against numpy, and catches each
kind of broken copy protocol it models (with the static analysis's rule id) while the
fixed kernel runs clean under many schedules."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools.universe import make_context
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


# --- broken protocols --------------------------------------------------------------------

KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%x: memref<64x64xf32>, %y: memref<64x64xf32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %phase = arith.constant false
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]
      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
{body}
    func.return
  }}
}}
"""

FIXED = """
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    %v = memref.load %tile[%c1, %t] : memref<64x64xf32, #copy.smem>
    memref.store %v, %tile[%c0, %t] : memref<64x64xf32, #copy.smem>
    copy.fence_async_shared
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
"""

BROKEN = {
    # A thread reads the tile before the wait that completes its load.
    "P1": FIXED.replace("    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>\n", "").replace(
        "    copy.fence_async_shared\n",
        "    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>\n    copy.fence_async_shared\n",
    ),
    # A thread writes the tile while the TMA store may still read it.
    "P2": FIXED.replace(
        "    copy.wait_group bulk 0\n",
        "    %w = arith.constant 1.0 : f32\n"
        "    memref.store %w, %tile[%c1, %t] : memref<64x64xf32, #copy.smem>\n"
        "    copy.wait_group bulk 0\n",
    ),
    # The store is issued before the load is known to have landed.
    "P3": FIXED.replace("    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>\n", "")
    .replace("    %v = memref.load %tile[%c1, %t] : memref<64x64xf32, #copy.smem>\n", "")
    .replace("    memref.store %v, %tile[%c0, %t] : memref<64x64xf32, #copy.smem>\n", "")
    + "    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>\n",
    # The threads' writes reach the TMA store without a fence.
    "P4": FIXED.replace("    copy.fence_async_shared\n", '    "gpu.barrier"() : () -> ()\n'),
    # A second arrival on a barrier that awaits one.
    "P5": FIXED.replace(
        "    copy.barrier_wait",
        "    copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>\n"
        "    copy.barrier_wait",
        1,
    ),
    # The wait is for a phase that never completes: the barrier awaits two arrivals.
    "P6": FIXED,
    # The kernel returns with its store in flight.
    "P7": FIXED.replace("    copy.wait_group bulk 0\n", ""),
}


KERNEL_EDITS = {"P6": ("arrivals 1", "arrivals 2")}
"""What a broken kernel changes outside its body."""


def parse(body: str, rule: str | None = None):
    text = KERNEL.format(body=body)
    if rule in KERNEL_EDITS:
        text = text.replace(*KERNEL_EDITS[rule])
    return Parser(make_context(), text).parse_module()


def run_all(module, seeds):
    found = set()
    for seed in seeds:
        for schedule in ("random", "adversarial", "round_robin"):
            x = data((64, 64))
            run = interpreter.run(module, x, np.zeros_like(x), schedule=schedule, seed=seed)
            found |= {v.rule for v in run.violations}
    return found


def test_the_fixed_kernel_is_clean_under_many_schedules():
    module = parse(FIXED)
    for seed in range(40):
        for schedule in ("random", "adversarial", "round_robin"):
            x = data((64, 64))
            run = interpreter.run(module, x, np.zeros_like(x), schedule=schedule, seed=seed)
            assert run.violations == [], (seed, schedule, [str(v) for v in run.violations])
            expected = x.copy()
            expected[0] = x[1]
            assert np.array_equal(run.arrays[1], expected)


@pytest.mark.parametrize("rule", sorted(BROKEN))
def test_a_broken_kernel_breaks_its_rule(rule):
    found = run_all(parse(BROKEN[rule], rule), range(3))
    assert rule in found, found


# --- the range rules and the named barriers ---------------------------------------------------

RING = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %n: index)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %cs = arith.constant {stages} : index
    %c64 = arith.constant 64 : index
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %ring = copy.alloc_smem : memref<3x64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    scf.for %k = %c0 to %n step %c1 {{
      %s = arith.remui %k, %cs : index
      %lap = arith.divui %k, %c2 : index
      %pm = arith.remui %lap, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index
      %row = arith.muli %k, %c64 : index
      copy.async_copy %x[%row, %c0] to %ring[%s] barrier %bars[%s]
        : memref<256x64xf32> to memref<3x64x64xf32, #copy.smem>, !copy.barrier<2>
      copy.barrier_wait %bars[%s], %p : !copy.barrier<2>
      %v = memref.load %ring[%s, %c0, %t] : memref<3x64x64xf32, #copy.smem>
      memref.store %v, %y[%row, %t] : memref<256x64xf32>
      "gpu.barrier"() : () -> ()
    }}
    func.return
  }}
}}
"""


def test_a_barrier_index_out_of_range_is_p9_and_the_fixed_ring_is_clean():
    x = data((256, 64))
    broken = Parser(make_context(), RING.format(stages=3)).parse_module()  # slot 2 of 2
    run = interpreter.run(broken, x, np.zeros_like(x), 4)
    assert {v.rule for v in run.violations} == {"P9"}, [str(v) for v in run.violations]
    fixed = Parser(make_context(), RING.format(stages=2)).parse_module()
    expected = np.zeros_like(x)
    expected[::64] = x[::64]  # each trip copies the first row of its tile
    for seed in range(34):
        for schedule in ("random", "adversarial", "round_robin"):
            run = interpreter.run(fixed, x, np.zeros_like(x), 4, schedule=schedule, seed=seed)
            assert run.violations == [], [str(v) for v in run.violations]
            assert np.array_equal(run.arrays[1], expected)


NAMED = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%y: memref<64xf32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %buf = copy.alloc_smem : memref<64xf32, #copy.smem>
    copy.warp_specialize warps [2, 2] {{
    ^bb0(%t: index):
      memref.store %one, %buf[%t] : memref<64xf32, #copy.smem>
      copy.named_barrier_arrive 1, {count}
    }}, {{
    ^bb0(%t: index):
      copy.named_barrier_sync 1, {count}
      %v = memref.load %buf[%t] : memref<64xf32, #copy.smem>
      memref.store %v, %y[%t] : memref<64xf32>
    }}
    func.return
  }}
}}
"""


@pytest.mark.parametrize(("count", "rules"), [(128, set()), (96, {"P13"}), (64, {"P3"})])
def test_named_barrier_counts(count, rules):
    """The producers' arrival orders their writes before the consumers' reads (128: both
    roles meet); 96, short of the 128 threads that reach the generation, breaks P13; at 64,
    each role completes a generation alone, and the consumers' reads race the producers'
    writes (P3)."""
    module = Parser(make_context(), NAMED.format(count=count)).parse_module()
    found = set()
    for seed in range(5):
        for schedule in ("random", "adversarial", "round_robin"):
            run = interpreter.run(module, np.zeros(64, np.float32), schedule=schedule, seed=seed)
            found |= {v.rule for v in run.violations}
            if not rules:
                assert np.array_equal(run.arrays[0], np.ones(64, np.float32))
    assert rules <= found, found
    assert rules or not found, found
