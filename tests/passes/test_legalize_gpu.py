"""On a GPU (an H200 here): each builder kernel written for sm_90a and its copy-legalize'd
sm_80 and sm_86 forms return the same bytes, over several shapes including tails. The
legalized IR (cp.async, thread stores, no TMA) is compiled for its own target, sm_80 or
sm_86 PTX, and that PTX assembled for sm_90 (`runtime.compile(..., arch="sm_90")`, CUDA's
compute_80 -> sm_90 path): an sm_80 cubin does not load on sm_90 (SASS is compatible within
a major version only). The CPU twin (test_legalize.py) compiles the same kernels for sm_80
and sm_86 SASS.

Without a GPU, both forms run under the interpreter, on the smaller cases of each table's
SMALL_ twin (the same tiles, stages, warps and dtypes; tails kept) and, for the examples,
on their first 2 x 2 blocks. Where the interpreter lacks an op the kernel needs, the case is
an xfail that names it (`gap`); the tests run the legalized form first, so that such an
xfail stops before the original's run."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from copy_tools import runtime
from copy_tools.universe import make_context
from frontends import kernels
from interpreter import InterpretError
from passes.legalize import CopyLegalizePass
from tests import device
from tests.dialect.test_im2col import CASES as IM2COL_CASES
from tests.dialect.test_im2col import case_id, im2col, setup
from tests.dialect.test_im2col import module as im2col_module
from tests.runtime.test_runtime_gpu import random as random_input
from tests.runtime.test_runtime_gpu import same_elements

pytestmark = device.marks()


def gap(what: str) -> pytest.MarkDecorator:
    """An xfail where the interpreter runs the test: it stops at an op it does not model."""
    return pytest.mark.xfail(
        device.INTERPRETED,
        reason=f"interpreter: {what} is not modelled",
        raises=InterpretError,
        strict=True,
    )


def names(table: dict, gaps: dict[str, pytest.MarkDecorator]) -> list:
    """The table's names, sorted, those in `gaps` marked with their xfail."""
    return [pytest.param(n, marks=gaps[n]) if n in gaps else n for n in sorted(table)]


@dataclass(frozen=True)
class Case:
    build: Callable[[], ModuleOp]
    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    dtype: str
    grid: tuple[int, ...]


def _tma(shape, dtype, tile=(64, 64), **kw) -> Case:
    return Case(
        lambda: kernels.tma_copy(shape, dtype, tile, **kw),
        shape,
        shape,
        dtype,
        kernels.grid(shape, tile),
    )


def _pipelined(shape, tile, stages, blocks) -> Case:
    return Case(
        lambda: kernels.tma_copy_pipelined(shape, "f32", tile, stages=stages),
        shape,
        shape,
        "f32",
        (blocks, 1),
    )


def _multicast(shape, dtype) -> Case:
    view = (shape[0] // 32, 32, shape[1])
    return Case(
        lambda: kernels.multicast_copy(shape, dtype),
        view,
        view,
        dtype,
        (2 * shape[1] // 64, shape[0] // 64),
    )


def _broadcast(shape, dtype, tile, cluster, multicast=True) -> Case:
    return Case(
        lambda: kernels.broadcast_copy(shape, dtype, tile, cluster=cluster, multicast=multicast),
        shape,
        (cluster, *shape),
        dtype,
        kernels.broadcast_grid(shape, tile, cluster),
    )


def _ws_copy(shape, dtype, tile, stages, blocks, in_flight=1) -> Case:
    return Case(
        lambda: kernels.ws_copy(shape, dtype, tile, stages=stages, in_flight=in_flight),
        shape,
        shape,
        dtype,
        (blocks, 1),
    )


CASES = {
    "tma_copy_256": _tma((256, 256), "f32"),
    "tma_copy_1000": _tma((1000, 1000), "f32"),
    "tma_copy_999x996": _tma((999, 996), "f32"),
    "tma_copy_bf16_130x200": _tma((130, 200), "bf16", (32, 64)),
    "tma_copy_f16_97x136": _tma((97, 136), "f16", (32, 64)),
    "tma_copy_swizzle128": _tma((256, 256), "f32", (64, 32), swizzle=128),
    "tma_copy_swizzle128_odd": _tma((200, 100), "f32", (64, 32), swizzle=128),
    "tma_copy_prefetch": _tma((256, 256), "f32", prefetch_destination=True),
    "pipelined_1_stage": _pipelined((512, 256), (64, 64), 1, 3),
    "pipelined_3_stages": _pipelined((512, 256), (64, 64), 3, 5),
    "pipelined_3_stages_132": _pipelined((1024, 512), (64, 64), 3, 132),
    "bulk_copy_1000": Case(
        lambda: kernels.bulk_copy(1000, "f32", 256), (1000,), (1000,), "f32", (4, 1)
    ),
    "multicast_256": _multicast((256, 256), "f32"),
    "multicast_bf16": _multicast((128, 1024), "bf16"),
    "broadcast_2": _broadcast((256, 512), "f32", (64, 256), 2),
    "broadcast_4_tail": _broadcast((130, 264), "f32", (32, 64), 4),
    "broadcast_unicast_tail": _broadcast((130, 264), "bf16", (64, 256), 2, multicast=False),
    # Pipelined rings, now legalized with their barriers kept (mbarrier-tracked cp.async):
    # many laps of the ring per block, odd tile counts.
    "pipelined_2_stages_7": _pipelined((1024, 512), (64, 64), 2, 7),
    "pipelined_4_stages_3": _pipelined((2048, 256), (64, 64), 4, 3),
    # Warp-specialized rings: the producer warp's cp.async arrives on `full`, the storer
    # warp's thread stores and its role barrier (ring sizes that fit sm_86's SMEM).
    "ws_copy_1000": _ws_copy((1000, 1000), "f32", (64, 128), 2, 3),
    "ws_copy_tail_1_stage": _ws_copy((130, 264), "f32", (64, 128), 1, 1, in_flight=0),
    "ws_copy_bf16": _ws_copy((777, 1032), "bf16", (64, 128), 3, 7),
    "ws_copy_f16_132": _ws_copy((2048, 2048), "f16", (64, 128), 3, 132, in_flight=2),
}


SMALL_CASES = {
    # The interpreted twins of CASES: the same tiles and dtypes, tails kept, a few dozen
    # blocks at most.
    "tma_copy_128": _tma((128, 128), "f32"),
    "tma_copy_199x196": _tma((199, 196), "f32"),
    "tma_copy_bf16_130x200": _tma((130, 200), "bf16", (32, 64)),
    "tma_copy_f16_97x136": _tma((97, 136), "f16", (32, 64)),
    "tma_copy_swizzle128": _tma((128, 128), "f32", (64, 32), swizzle=128),
    "tma_copy_swizzle128_odd": _tma((200, 100), "f32", (64, 32), swizzle=128),
    "tma_copy_prefetch": _tma((128, 128), "f32", prefetch_destination=True),
    "pipelined_1_stage": _pipelined((256, 128), (64, 64), 1, 3),
    "pipelined_3_stages": _pipelined((256, 256), (64, 64), 3, 5),
    "pipelined_3_stages_20": _pipelined((256, 256), (64, 64), 3, 20),
    "bulk_copy_1000": CASES["bulk_copy_1000"],
    "multicast_128": _multicast((128, 128), "f32"),
    "multicast_bf16": _multicast((128, 256), "bf16"),
    "broadcast_2": _broadcast((128, 256), "f32", (64, 256), 2),
    "broadcast_4_tail": _broadcast((66, 264), "f32", (32, 64), 4),
    "broadcast_unicast_tail": _broadcast((66, 264), "bf16", (64, 256), 2, multicast=False),
    "pipelined_2_stages_3": _pipelined((256, 256), (64, 64), 2, 3),
    "pipelined_4_stages_3": _pipelined((512, 128), (64, 64), 4, 3),
    "ws_copy_200x300": _ws_copy((200, 300), "f32", (64, 128), 2, 3),
    "ws_copy_tail_1_stage": CASES["ws_copy_tail_1_stage"],
    "ws_copy_bf16": _ws_copy((257, 264), "bf16", (64, 128), 3, 3),
    "ws_copy_f16_20": _ws_copy((256, 512), "f16", (64, 128), 3, 20, in_flight=2),
}


def numpy_dtype(name: str):
    if name == "bf16":
        return pytest.importorskip("ml_dtypes").bfloat16
    return {"f32": np.float32, "f16": np.float16}[name]


def bits(a: np.ndarray) -> np.ndarray:
    return a.view({2: np.uint16, 4: np.uint32}[a.itemsize])


LEGAL_TARGETS = ("sm_80", "sm_86")
"""What the sm_90a kernels are legalized to; their PTX runs on the H200 as sm_90 SASS."""


def legalized(module: ModuleOp, target: str = "sm_80") -> ModuleOp:
    text = str(module)
    copy = Parser(make_context(), text).parse_module()
    CopyLegalizePass(target=target).apply(make_context(), copy)
    return copy


def on_h200(module: ModuleOp) -> runtime.Program:
    """The module compiled for its own target, assembled for the H200 (sm_90) where that
    target's PTX is not sm_90a's."""
    from copy_dialect.ops import module_target

    target = module_target(module, None)
    return runtime.compile(module, arch=None if target == "sm_90a" else "sm_90")


def run(module: ModuleOp, case: Case, x: np.ndarray) -> np.ndarray:
    program = on_h200(module)
    y = np.full(case.y_shape, np.nan, dtype=x.dtype)  # poisoned: no element of x is NaN
    program(x, y, grid=case.grid)
    return y


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("name", sorted(device.shapes(CASES, SMALL_CASES)))
def test_legalized_kernel_returns_the_same_bytes(name, target):
    case = {**CASES, **SMALL_CASES}[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = (rng.standard_normal(case.x_shape) * 100).astype(numpy_dtype(case.dtype))
    legal = run(legalized(case.build(), target), case, x)
    original = run(case.build(), case, x)
    assert np.array_equal(bits(legal), bits(original))
    expected = np.broadcast_to(x, case.y_shape)
    assert np.array_equal(bits(legal), bits(np.ascontiguousarray(expected)))


REDUCTIONS = {
    "add_f32_999x996": ("add", "f32", (999, 996)),
    "add_f32_256": ("add", "f32", (256, 256)),
    "add_f16": ("add", "f16", (130, 200)),
    "add_f64": ("add", "f64", (256, 256)),
    "umin_i32": ("umin", "i32", (256, 256)),
    "smax_i64": ("smax", "i64", (200, 136)),
    "xor_i32": ("xor", "i32", (97, 128)),
    "inc_i32": ("inc", "i32", (256, 256)),
    "inc_i32_tail": ("inc", "i32", (200, 136)),
    "dec_i32": ("dec", "i32", (256, 256)),
    "dec_i32_tail": ("dec", "i32", (97, 200)),
}
"""TMA reductions (o <op>= x) whose sm_80 form is thread atomics (red.global; inc/dec:
red.global.{inc,dec}.u32 through memref.generic_atomic_rmw)."""
SMALL_REDUCTIONS = {
    "add_f32_199x196": ("add", "f32", (199, 196)),
    "add_f32_128": ("add", "f32", (128, 128)),
    "add_f16": ("add", "f16", (130, 200)),
    "add_f64": ("add", "f64", (128, 128)),
    "umin_i32": ("umin", "i32", (128, 128)),
    "smax_i64": ("smax", "i64", (200, 136)),
    "xor_i32": ("xor", "i32", (97, 128)),
    "inc_i32": ("inc", "i32", (128, 128)),
    "inc_i32_tail": ("inc", "i32", (200, 136)),
    "dec_i32": ("dec", "i32", (128, 128)),
    "dec_i32_tail": ("dec", "i32", (97, 200)),
}
"""The interpreted twins of REDUCTIONS."""


def _inc(o: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PTX's wrapping increment on u32: o >= x ? 0 : o + 1."""
    ou, xu = o.view(np.uint32), x.view(np.uint32)
    return np.where(ou >= xu, np.uint32(0), ou + np.uint32(1)).view(o.dtype)


def _dec(o: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PTX's wrapping decrement on u32: o == 0 or o > x ? x : o - 1."""
    ou, xu = o.view(np.uint32), x.view(np.uint32)
    return np.where((ou == 0) | (ou > xu), xu, ou - np.uint32(1)).view(o.dtype)


NUMPY_REDUCE = {
    "add": lambda o, x: o + x,
    "umin": lambda o, x: np.minimum(o.view(np.uint32), x.view(np.uint32)).view(o.dtype),
    "smax": np.maximum,
    "xor": np.bitwise_xor,
    "inc": _inc,
    "dec": _dec,
}


def _random(rng, shape, dtype: str) -> np.ndarray:
    if dtype.startswith("i"):
        info = np.iinfo({"i32": np.int32, "i64": np.int64}[dtype])
        return rng.integers(info.min, info.max, shape, dtype=info.dtype)
    return (rng.standard_normal(shape) * 100).astype(
        {"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype]
    )


def _wrapping_operands(rng, shape) -> tuple[np.ndarray, np.ndarray]:
    """x and o for inc/dec, each element in one of four cases (a quarter each): both small
    (0..7), o = x, o = 0, full-range bits (the wrap, the edges, and everything else)."""
    x = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    o = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    case = rng.integers(0, 4, shape)
    small = case == 0
    x[small], o[small] = rng.integers(0, 8, (2, int(small.sum())), dtype=np.uint32)
    o[case == 1] = x[case == 1]
    o[case == 2] = 0
    return x.view(np.int32), o.view(np.int32)


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize(
    "name",
    names(
        device.shapes(REDUCTIONS, SMALL_REDUCTIONS),
        {},
    ),
)
def test_legalized_reduction_returns_the_same_bytes(name, target):
    op, dtype, shape = {**REDUCTIONS, **SMALL_REDUCTIONS}[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if op in ("inc", "dec"):
        x, o = _wrapping_operands(rng, shape)
    else:
        x, o = _random(rng, shape, dtype), _random(rng, shape, dtype)
    grid = kernels.grid(shape, (64, 64))
    results = []
    for module in (
        legalized(kernels.tma_copy(shape, dtype, reduce=op), target),
        kernels.tma_copy(shape, dtype, reduce=op),
    ):
        out = o.copy()
        on_h200(module)(x, out, grid=grid)
        results.append(out)
    legal, original = results
    assert np.array_equal(legal.view(np.uint8), original.view(np.uint8))
    assert np.array_equal(legal.view(np.uint8), NUMPY_REDUCE[op](o, x).view(np.uint8))


EXAMPLES = {
    # file: (x shape, grid, a reduction?), from each example's "Launch:" comment (f32)
    "tma_tile_copy.mlir": ((4096, 4096), (4096 // 64, 4096 // 64), False),
    "oob_copy.mlir": ((1000, 1000), (16, 16), False),
    "multicast_copy.mlir": ((128, 32, 4096), (2 * 4096 // 64, 4096 // 64), False),
    "swizzled_copy.mlir": ((4096, 4096), (4096 // 32, 4096 // 64), False),
    "reduce_add.mlir": ((4096, 4096), (4096 // 64, 4096 // 64), True),
}
"""The examples written for sm_90a (examples/*.mlir), with their launches."""
PER_BLOCK = {
    "tma_tile_copy.mlir": 64 * 64,
    "oob_copy.mlir": 64 * 64,
    "multicast_copy.mlir": 32 * 64,
    "swizzled_copy.mlir": 64 * 32,
    "reduce_add.mlir": 64 * 64,
}
"""The elements each block of an example writes (interpreted, its first 2 x 2 blocks run)."""


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize(
    "name",
    names(
        EXAMPLES,
        {},
    ),
)
def test_legalized_example_returns_the_same_bytes(name, target):
    from pathlib import Path

    shape, grid, reduction = EXAMPLES[name]
    if device.INTERPRETED:
        grid = (2, 2)  # the elements of the first 2 x 2 blocks, checked below
    text = (Path(__file__).resolve().parents[2] / "examples" / name).read_text()
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal(shape).astype(np.float32)
    o = rng.standard_normal(shape).astype(np.float32)
    before = o if reduction else np.full(shape, np.nan, dtype=np.float32)
    results = []
    for module in (
        legalized(Parser(make_context(), text).parse_module(), target),
        Parser(make_context(), text).parse_module(),
    ):
        y = before.copy()
        on_h200(module)(x, y, grid=grid)
        results.append(y)
    legal, original = results
    assert np.array_equal(bits(legal), bits(original))
    expected = o + x if reduction else x
    if not device.INTERPRETED:
        assert np.array_equal(bits(legal), bits(expected))
        return
    written = ~same_elements(legal, before)
    assert int(written.sum()) == 4 * PER_BLOCK[name]
    assert np.array_equal(bits(legal[written]), bits(expected[written]))


WS_ELEMENTWISE = {
    # name: (op, shape, dtype, out_dtype, tile, stages, consumer warps, out_buffers, blocks,
    #        maxnreg)
    "add_f32": ("add", (1000, 1000), "f32", None, (32, 128), 2, 4, 2, 5, None),
    "add_bf16_tail": ("add", (130, 264), "bf16", None, (32, 128), 1, 1, 1, 1, None),
    "add_f16_132": ("add", (2048, 2048), "f16", None, (32, 128), 2, 8, 2, 132, None),
    "axpb_f32": ("axpb", (777, 1032), "f32", None, (32, 128), 2, 4, 1, 7, None),
    "cast_f32_bf16": ("cast", (1000, 1000), "f32", "bf16", (64, 128), 2, 4, 2, 6, None),
    "cast_bf16_f32": ("cast", (513, 776), "bf16", "f32", (32, 128), 3, 8, 1, 2, None),
    # A producer warpgroup (only its first warp loads): split into a role of one warp and
    # an idle role of three.
    "add_f32_maxnreg": ("add", (1000, 1000), "f32", None, (32, 128), 2, 4, 2, 5, (40, 232)),
    "axpb_bf16_maxnreg_132": (
        "axpb",
        (2048, 2048),
        "bf16",
        None,
        (32, 128),
        3,
        8,
        1,
        132,
        (40, 232),
    ),
}
"""ws_elementwise kernels (a producer warp loading one or two inputs on one `full` barrier a
slot, consumer warps computing into output buffers and storing them): legalized, the
producer's 32 threads arrive twice a slot for add, and the consumers' TMA stores become
thread stores with the role's barrier."""
SMALL_WS_ELEMENTWISE = {
    "add_f32": ("add", (200, 300), "f32", None, (32, 128), 2, 4, 2, 5, None),
    "add_bf16_tail": WS_ELEMENTWISE["add_bf16_tail"],
    "add_f16_20": ("add", (256, 512), "f16", None, (32, 128), 2, 8, 2, 20, None),
    "axpb_f32": ("axpb", (200, 300), "f32", None, (32, 128), 2, 4, 1, 7, None),
    "cast_f32_bf16": ("cast", (200, 264), "f32", "bf16", (64, 128), 2, 4, 2, 6, None),
    "cast_bf16_f32": ("cast", (129, 200), "bf16", "f32", (32, 128), 3, 8, 1, 2, None),
    "add_f32_maxnreg": ("add", (200, 300), "f32", None, (32, 128), 2, 4, 2, 5, (40, 232)),
    "axpb_bf16_maxnreg_20": ("axpb", (256, 512), "bf16", None, (32, 128), 3, 8, 1, 20, (40, 232)),
}
"""The interpreted twins of WS_ELEMENTWISE."""


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("name", sorted(device.shapes(WS_ELEMENTWISE, SMALL_WS_ELEMENTWISE)))
def test_legalized_ws_elementwise_returns_the_same_bytes(name, target):
    table = {**WS_ELEMENTWISE, **SMALL_WS_ELEMENTWISE}
    op, shape, dtype, out_dtype, tile, stages, warps, buffers, blocks, regs = table[name]

    def build() -> ModuleOp:
        return kernels.ws_elementwise(
            op, shape, dtype, tile, out_dtype=out_dtype, stages=stages,
            consumer_warps=warps, out_buffers=buffers, maxnreg=regs,
        )  # fmt: skip

    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = (rng.standard_normal(shape) * 100).astype(numpy_dtype(dtype))
    y = (rng.standard_normal(shape) * 100).astype(numpy_dtype(dtype))
    out = numpy_dtype(out_dtype or dtype)
    results = []
    for module in (legalized(build(), target), build()):
        z = np.full(shape, np.nan, dtype=out)
        if op == "add":
            on_h200(module)(x, y, z, grid=(blocks, 1))
        elif op == "axpb":
            on_h200(module)(x, z, np.float32(1.75), np.float32(-3.125), grid=(blocks, 1))
        else:
            on_h200(module)(x, z, grid=(blocks, 1))
        results.append(z)
    legal, original = results
    assert np.array_equal(bits(legal), bits(original))


WS_ROW_SUM = {
    # name: (shape, dtype, tile, stages, consumer warps, blocks)
    "f32": ((1000, 1000), "f32", (64, 128), 2, 4, 5),
    "bf16_tail": ((130, 264), "bf16", (64, 128), 3, 4, 2),
    "f16_ragged_132": ((16384, 512), "f16", (125, 128), 2, 8, 132),
}
"""ws_row_sum kernels: one block sums a band in a fixed order, so the legalized kernel's
sums are the original's bits."""
SMALL_WS_ROW_SUM = {
    "f32": ((200, 200), "f32", (64, 128), 2, 4, 5),
    "bf16_tail": WS_ROW_SUM["bf16_tail"],
    "f16_ragged_20": ((260, 256), "f16", (125, 128), 2, 8, 20),
}
"""The interpreted twins of WS_ROW_SUM."""


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("name", sorted(device.shapes(WS_ROW_SUM, SMALL_WS_ROW_SUM)))
def test_legalized_ws_row_sum_returns_the_same_bytes(name, target):
    shape, dtype, tile, stages, warps, blocks = {**WS_ROW_SUM, **SMALL_WS_ROW_SUM}[name]

    def build() -> ModuleOp:
        return kernels.ws_row_sum(shape, dtype, tile, stages=stages, consumer_warps=warps)

    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal(shape).astype(numpy_dtype(dtype))
    results = []
    for module in (build(), legalized(build(), target)):
        y = np.full(shape[0], np.nan, dtype=np.float32)
        on_h200(module)(x, y, grid=(blocks, 1))
        results.append(y)
    original, legal = results
    assert np.array_equal(bits(legal), bits(original))


DYNAMIC = {
    # name: (dtype, tile, reduce, shapes): shapes whose rows TMA can address (16-byte pitch)
    "copy_f32": ("f32", (64, 64), None, [(999, 996), (130, 264), (3, 4096), (64, 64), (1, 4)]),
    "copy_bf16": ("bf16", (32, 64), None, [(97, 136), (130, 200), (1, 8), (333, 1032)]),
    "reduce_add_f32": ("f32", (64, 64), "add", [(999, 996), (130, 264), (1, 4), (257, 36)]),
}
"""tma_copy(dynamic=True) kernels, one compiled kernel per form for every shape."""
SMALL_SHAPES = {
    "copy_f32": [(199, 196), (130, 264), (3, 520), (64, 64), (1, 4)],
    "copy_bf16": [(97, 136), (130, 200), (1, 8), (133, 264)],
    "reduce_add_f32": [(199, 196), (130, 264), (1, 4), (257, 36)],
}
"""The interpreted shapes of DYNAMIC's kernels."""


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("name", names(DYNAMIC, {}))
def test_legalized_dynamic_kernel_serves_every_shape(name, target):
    """The sm_90a kernel of ?x? arrays and its legalized form (cp.async reading the sizes
    the runtime passes, thread stores or atomics clipped to them), each compiled once,
    return the same bytes over odd shapes, tails included, and numpy's."""
    dtype, tile, reduce, shapes = DYNAMIC[name]
    shapes = device.shapes(shapes, SMALL_SHAPES[name])

    def build() -> ModuleOp:
        return kernels.tma_copy((0, 0), dtype, tile, dynamic=True, reduce=reduce)

    original, legal = on_h200(build()), on_h200(legalized(build(), target))
    for shape in shapes:
        rng = np.random.default_rng(zlib.crc32(f"{name}{shape}".encode()))
        x = (rng.standard_normal(shape) * 100).astype(numpy_dtype(dtype))
        o = (rng.standard_normal(shape) * 100).astype(numpy_dtype(dtype))
        results = []
        for program in (legal, original):
            y = o.copy() if reduce else np.full(shape, np.nan, dtype=x.dtype)
            program(x, y, grid=kernels.grid(shape, tile))
            results.append(y)
        assert np.array_equal(bits(results[0]), bits(results[1])), shape
        assert np.array_equal(bits(results[0]), bits(o + x if reduce else x)), shape


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("case", IM2COL_CASES, ids=case_id)
def test_legalized_im2col_returns_the_same_bytes(case, target):
    """im2col_gather (test_im2col.py's cases: strides 1 and 2, paddings 0 to 2, dilations 1
    and 2, odd H and W, C of 8, 16 and 64 in one or several channel blocks, f16 and f32, a
    128-byte swizzle), its im2col load legalized to the cp.async gather: the original's bytes
    and numpy's im2col, padding zeros included."""
    conv, options = setup(case)
    x = random_input(conv.shape, case[5], 1)
    grid = kernels.im2col_grid(conv, options["pixels"], options["channels"])
    results = []
    for built in (im2col_module(case), legalized(im2col_module(case), target)):
        y = np.full(conv.matrix, -7, x.dtype)  # NaN-free sentinel: every element is written
        on_h200(built)(x, y, grid=grid)
        results.append(y)
    original, legal = results
    assert np.array_equal(bits(legal), bits(original))
    assert np.array_equal(bits(legal), bits(im2col(x, conv)))


@pytest.mark.parametrize("target", LEGAL_TARGETS)
def test_legalized_im2col_with_an_l2_policy_returns_the_same_bytes(target):
    """The load's L2 policy (a property of its tensor map) goes with the map."""
    conv = kernels.conv2d((2, 9, 7, 16), 3, stride=2, padding=1, dilation=2)
    x = random_input(conv.shape, "f16", 3)

    def build() -> ModuleOp:
        return kernels.im2col_gather(conv, "f16", cache_hint="evict_last")

    y = np.full(conv.matrix, -7, x.dtype)
    on_h200(legalized(build(), target))(x, y, grid=kernels.im2col_grid(conv))
    assert np.array_equal(bits(y), bits(im2col(x, conv)))


@pytest.mark.parametrize("persistent", [False, True], ids=["per_group", "persistent"])
@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("name", ["three_odd", "mixed"])
def test_legalized_grouped_copy_returns_the_same_bytes(name, target, persistent):
    """The grouped copy, whose loads go through a tensor map rewritten in the kernel, reads
    views of the pool once legalized (test_legalize.py): every group's bytes as the sm_90a
    original's and numpy's, the padding and the space past the groups untouched."""
    from tests.dialect.test_tensormap_update import TILE, case
    from tests.dialect.test_tensormap_update import module as grouped
    from tests.dialect.test_tensormap_update_gpu import SENTINEL, expected
    from tests.runtime.test_runtime_gpu import random

    table, capacity, biggest = case(name)
    src = random((capacity,), "f32", zlib.crc32(name.encode()))
    meta = np.array(table, np.int64)
    off, rows, _, pitch = table[0]
    first = src[off : off + rows * pitch].reshape(rows, pitch).copy()
    grid = kernels.grouped_grid(biggest, TILE, len(table), persistent)

    def launch(module: ModuleOp) -> np.ndarray:
        dst = np.full((capacity,), SENTINEL, np.float32)
        on_h200(module)(first, meta, src, dst, grid=grid)
        return dst

    original = launch(grouped(name, persistent))
    legal = launch(legalized(grouped(name, persistent), target))
    assert np.array_equal(bits(legal), bits(original))
    assert np.array_equal(bits(legal), bits(expected(src, table)))


SHIFTED_STORE = """builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @shifted_store(%x: memref<1000x1000xf32>, %y: memref<1000x1000xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %phase = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    ORIGIN
    %row = arith.muli %by, %c64 : index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile barrier %bar[%c0] oob zeros
      : memref<1000x1000xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%row, %col]
      : memref<64x64xf32, #copy.smem> to memref<1000x1000xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}"""
"""A tile copy whose column origin the legalized store cannot prove a multiple of its
vector of 4, so it checks it at run time."""

ORIGINS = {
    # name: (the column origin, the first column the tiles cover, whether TMA may run it,
    # the element type)
    "shift_2": (
        "%b = arith.muli %bx, %c64 : index\n    %col = arith.addi %b, %c2 : index",
        2,
        False,
        "f32",
    ),
    "shift_1_f16": (
        "%b = arith.muli %bx, %c64 : index\n    %col = arith.addi %b, %c1 : index",
        1,
        False,
        "f16",
    ),
    "halved": (
        "%b = arith.muli %bx, %c128 : index\n    %col = arith.divui %b, %c2 : index",
        0,
        True,
        "f32",
    ),
}
"""halved takes the vector branch (bx * 128 / 2 is a multiple of 64, which only the
run-time check sees); shift_2 the element-wise one (the origin is 2 mod 4) and, for its
loads, 8-byte cp.async chunks picked at run time; shift_1_f16 the element-wise store and,
for its loads, the unit-by-unit walk (an odd f16 column: no 4-, 8- or 16-byte chunk starts
there). The shifted sm_90a forms break TR12 (an innermost TMA coordinate off 16 bytes: the
H200 faults), so their legalized forms, valid sm_80 kernels, are checked against numpy
alone."""


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("name", sorted(ORIGINS))
def test_store_with_an_origin_checked_at_run_time_returns_the_same_bytes(name, target):
    origin, first, tma_runs, dtype = ORIGINS[name]
    shape, grid = device.shapes([((1000, 1000), (16, 16))], [((128, 128), (2, 2))])[0]
    text = SHIFTED_STORE.replace("ORIGIN", origin).replace("f32", dtype)
    text = text.replace("1000x1000", "x".join(map(str, shape)))
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal(shape, np.float32).astype(numpy_dtype(dtype))
    modules = [legalized(Parser(make_context(), text).parse_module(), target)]
    if tma_runs:
        modules.append(Parser(make_context(), text).parse_module())
    results = []
    for module in modules:
        y = np.full(shape, np.nan, dtype=x.dtype)
        on_h200(module)(x, y, grid=grid)
        results.append(y)
    legal = results[0]
    assert np.array_equal(legal[:, first:], x[:, first:])
    assert np.isnan(legal[:, :first]).all()
    if tma_runs:
        assert np.array_equal(bits(legal), bits(results[1]))


@pytest.mark.skipif(
    not device.GPU,
    reason="no CUDA driver or GPU here, and the interpreter takes numpy arrays, not device "
    "views into an allocation",
)
@pytest.mark.parametrize("offset", [1, 2, 3])
def test_vector_stores_refuse_a_destination_off_16_bytes(offset):
    """The legalized stores write 16 bytes at a time to an array they assume is 16-byte
    aligned, as the TMA store asked of it: a device view 4, 8 or 12 bytes into its
    allocation is refused before the launch, nothing written."""
    torch = pytest.importorskip("torch")
    shape = (256, 256)
    program = on_h200(legalized(kernels.tma_copy(shape, "f32"), "sm_80"))
    x = torch.randn(shape, device="cuda")
    flat = torch.full((offset + 256 * 256,), float("nan"), device="cuda")
    with pytest.raises(ValueError, match="aligned to 16 bytes"):
        program(x, flat[offset:].view(*shape), grid=kernels.grid(shape, (64, 64)))
    torch.cuda.synchronize()
    assert bool(torch.isnan(flat).all())


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize(
    ("shape", "dtype", "tile", "cluster", "multicast"),
    device.shapes(
        [
            ((256, 512), "f32", (64, 256), 2, True),
            ((130, 264), "bf16", (32, 64), 4, True),
            ((257, 1000), "f16", (64, 96), 2, False),
        ],
        [
            ((128, 256), "f32", (64, 256), 2, True),
            ((66, 264), "bf16", (32, 64), 4, True),
            ((65, 200), "f16", (64, 96), 2, False),
        ],
    ),
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_legalized_row_dot_returns_the_same_sums(shape, dtype, tile, cluster, multicast, target):
    """broadcast_row_dot's tile loads legalized (no multicast, no cluster before sm_90): its
    sums are still the kernel order's, bit for bit (tests/frontends/row_dot_reference.py)."""
    from tests.frontends.row_dot_reference import row_dot_in_kernel_order

    def build():
        return kernels.broadcast_row_dot(shape, dtype, tile, cluster=cluster, multicast=multicast)

    rng = np.random.default_rng(zlib.crc32(f"{shape}{dtype}{target}".encode()))
    x = rng.standard_normal(shape).astype(numpy_dtype(dtype))
    v = rng.standard_normal((cluster, shape[1])).astype(numpy_dtype(dtype))
    expected = row_dot_in_kernel_order(x, v, tile[1])
    y = np.full(expected.shape, np.nan, np.float32)
    on_h200(legalized(build(), target))(x, v, y, grid=kernels.broadcast_grid(shape, tile, cluster))
    assert np.array_equal(y.view(np.uint32), expected.view(np.uint32))
