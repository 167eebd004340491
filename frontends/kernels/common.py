"""What the kernel families share: the launch constants, `element_type` and `grid`, `_kernel`
(the function, its module, the target and the verification that every builder ends with),
the op helpers the bodies are written with (constants, block and thread ids, loops, ifs,
barrier parities, SMEM types, the in-bounds store of a tile, the warp's butterfly sum), and
the parameter checks and SMEM budgets that more than one family makes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import ceil, prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.upstream_gpu import ShuffleOp
from facts.errors import ArgumentError
from facts.target import TARGETS, Feature, feature_message, target_named
from frontends.kernels.checks import check_dtype, checked
from frontends.locations import LocatingBuilder, helper_module

helper_module(__name__)  # an op its helpers make is located at the family's line

TMA_BLOCK = 128

# L2 cache policies for the builders' `cache_hints` (copy.async_copy's `l2`).
EVICT_NORMAL = "evict_normal"
EVICT_FIRST = "evict_first"
EVICT_LAST = "evict_last"
EVICT_UNCHANGED = "evict_unchanged"
CP_ASYNC_BLOCK = 256

FLOAT_TYPES = ("f32", "bf16", "f16")

_XYZ = (gpu.DimensionEnum.X, gpu.DimensionEnum.Y, gpu.DimensionEnum.Z)


def element_type(name: str) -> Attribute:
    """`"f32"`, `"bf16"`, `"i32"` ... as an xDSL type (builtin types need no dialect); an
    `ArgumentError` for a name that is no element type (`checks.check_dtype`)."""
    if isinstance(name, str) and name.isidentifier():
        try:
            return Parser(Context(), name).parse_type()
        except Exception:  # a name that is no type: the check below says which to write
            pass
    check_dtype(name)
    raise AssertionError("unreachable: check_dtype raised")


@checked(shape=2, tile=2)
def grid(shape: Sequence[int], tile: Sequence[int]) -> tuple[int, int]:
    """Blocks covering a 2-D `shape` with `tile`s: (tile columns, tile rows)."""
    return (ceil(shape[1] / tile[1]), ceil(shape[0] / tile[0]))


def _kernel(
    name: str,
    arg_types: Sequence[Attribute],
    body: Callable[[Builder, Sequence[SSAValue]], None],
    *,
    target: str,
    block: int,
    cluster: Sequence[int] | None = None,
) -> ModuleOp:
    """The kernel `name` of a module for `target`: `body` fills its entry block (arguments of
    `arg_types`), launched on `block` threads (and clusters of `cluster`); verified."""
    entry = Block(arg_types=arg_types)
    builder = LocatingBuilder(InsertPoint.at_end(entry))
    body(builder, entry.args)
    builder.insert(func.ReturnOp())
    fn = func.FuncOp(name, FunctionType.from_lists(arg_types, []), Region(entry))
    fn.attributes["gpu.kernel"] = UnitAttr()
    fn.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, [block, 1, 1])
    if cluster is not None:
        fn.attributes["copy.cluster"] = DenseArrayBase.from_list(i32, list(cluster))
    module = ModuleOp([fn])
    module.attributes["copy.target"] = copy.TargetAttr(target)
    # A builder's kernel is proven as the user's would be: its ops and its protocol (its
    # ops carry the builder's lines: `copy_tools.runtime.verify_module` reports there).
    verify_module(module)
    return module


# ===----------------------------------------------------------------------=== #
# Op helpers
# ===----------------------------------------------------------------------=== #


def _index(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def _i32(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, i32))).result


def _false(b: Builder) -> SSAValue:
    """The i1 0: the parity of a barrier's first phase."""
    return b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result


def _bin(b: Builder, cls: type, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
    if isinstance(rhs, int):
        rhs = _index(b, rhs)
    return b.insert(cls(lhs, rhs)).results[0]


def _block_id(b: Builder, dim: gpu.DimensionEnum = gpu.DimensionEnum.X) -> SSAValue:
    return b.insert(gpu.BlockIdOp(gpu.DimensionAttr(dim))).result


def _grid_dim(b: Builder, dim: gpu.DimensionEnum = gpu.DimensionEnum.X) -> SSAValue:
    return b.insert(gpu.GridDimOp(gpu.DimensionAttr(dim))).result


def _thread_id(b: Builder) -> SSAValue:
    return b.insert(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result


def _tile_origin(b: Builder, tile: Sequence[int]) -> tuple[SSAValue, SSAValue]:
    bx = _block_id(b, gpu.DimensionEnum.X)
    by = _block_id(b, gpu.DimensionEnum.Y)
    col = b.insert(arith.MuliOp(bx, _index(b, tile[1]))).result
    row = b.insert(arith.MuliOp(by, _index(b, tile[0]))).result
    return row, col


def _smem(elt: Attribute, shape: Sequence[int], swizzle: int = 16) -> MemRefType:
    """An SMEM buffer of `shape` (`#copy.smem`, swizzled by `swizzle` bytes)."""
    return MemRefType(elt, list(shape), memory_space=copy.SmemSpaceAttr(swizzle))


def _gmem(elt: Attribute, shape: Sequence[int], dynamic: bool = False) -> MemRefType:
    """A 2-D global array of `shape`, or of `?x?` with `dynamic`."""
    return MemRefType(elt, [DYNAMIC_INDEX] * 2 if dynamic else list(shape))


class _Loop:
    """An `scf.for k = 0 .. count` under construction, and builders of its body."""

    def __init__(self, b: Builder, count: SSAValue):
        self.block = Block(arg_types=[IndexType()])
        self.k = self.block.args[0]
        self.b = LocatingBuilder(InsertPoint.at_end(self.block))
        self.outer = b
        self.count = count

    def close(self) -> None:
        self.b.insert(scf.YieldOp())
        c0, c1 = _index(self.outer, 0), _index(self.outer, 1)
        self.outer.insert(scf.ForOp(c0, self.count, c1, [], Region(self.block)))


def _if(b: Builder, cond: SSAValue, fill: Callable[[Builder], None]) -> None:
    then = Block()
    tb = LocatingBuilder(InsertPoint.at_end(then))
    fill(tb)
    tb.insert(scf.YieldOp())
    b.insert(scf.IfOp(cond, [], Region(then)))


def _parity(b: Builder, lap: SSAValue) -> SSAValue:
    """The i1 parity of phase `lap` of a barrier."""
    odd = _bin(b, arith.RemUIOp, lap, 2)
    return b.insert(arith.CmpiOp(odd, _index(b, 0), "ne")).result


def _inside(
    b: Builder, point: tuple[SSAValue, SSAValue], bounds: tuple[SSAValue, SSAValue]
) -> SSAValue:
    """Whether (row, col) `point` lies below `bounds` (rows, cols), unsigned."""
    return b.insert(
        arith.AndIOp(
            b.insert(arith.CmpiOp(point[0], bounds[0], "ult")).result,
            b.insert(arith.CmpiOp(point[1], bounds[1], "ult")).result,
        )
    ).result


def _store_inside(
    b: Builder,
    buf: SSAValue,
    tile: Sequence[int],
    origin: tuple[SSAValue, SSAValue],
    bounds: tuple[SSAValue, SSAValue],
    threads: int,
    store: Callable[[Builder, SSAValue, SSAValue, SSAValue], None],
) -> None:
    """The block's `threads` threads walk the SMEM tile `buf` (element t, t + threads, ...,
    row-major) and `store` each element whose GMEM (row, col), `origin` plus its place in
    the tile, lies inside `bounds` (rows, cols)."""
    tid = _thread_id(b)
    loop = Block(arg_types=[IndexType()])
    lb = LocatingBuilder(InsertPoint.at_end(loop))
    r = _bin(lb, arith.DivUIOp, loop.args[0], tile[1])
    c = _bin(lb, arith.RemUIOp, loop.args[0], tile[1])
    row = _bin(lb, arith.AddiOp, origin[0], r)
    col = _bin(lb, arith.AddiOp, origin[1], c)

    def body(tb: Builder) -> None:
        store(tb, tb.insert(memref.LoadOp.get(buf, [r, c])).res, row, col)

    _if(lb, _inside(lb, (row, col), bounds), body)
    lb.insert(scf.YieldOp())
    total, step = _index(b, prod(tile)), _index(b, threads)
    b.insert(scf.ForOp(tid, total, step, [], Region(loop)))


def _load_and_wait(
    b: Builder,
    src: SSAValue,
    buf: SSAValue,
    origin: Sequence[SSAValue],
    bar: SSAValue,
    index: SSAValue,
    phase: SSAValue,
    oob: str = "zeros",
    **options: object,
) -> None:
    """Loads the tile of `src` at `origin` into `buf` (`oob`: zero-filled out of bounds by
    default), completing on barrier `index` of `bar`, and waits for it (`phase`); `options`
    are the copy's others (`l2`, `collective`, `map`, ...)."""
    b.insert(
        copy.AsyncCopyOp(
            src,
            buf,
            src_indices=list(origin),
            barrier=bar,
            barrier_index=index,
            oob=oob,
            **options,
        )
    )
    b.insert(copy.BarrierWaitOp(bar, index, phase))


def _load_slot(
    b: Builder,
    src: SSAValue,
    ring: SSAValue,
    origin: Sequence[SSAValue],
    slot: SSAValue,
    bars: SSAValue,
    **options: object,
) -> None:
    """Loads the tile of `src` at `origin` into slot `slot` of `ring`, completing on barrier
    `slot` of `bars`; `options` are the copy's others (`oob`, `l2`, `implementation`)."""
    b.insert(
        copy.AsyncCopyOp(
            src,
            ring,
            src_indices=list(origin),
            dst_indices=[slot],
            barrier=bars,
            barrier_index=slot,
            **options,
        )
    )


def _drain_bulk(b: Builder) -> None:
    """Commits the bulk copies issued so far and waits until they are complete."""
    b.insert(copy.CommitGroupOp("bulk"))
    b.insert(copy.WaitGroupOp("bulk", 0))


def _butterfly(b: Builder, values: Sequence[SSAValue], width: SSAValue) -> list[SSAValue]:
    """The sums of `values` over the lanes of the warp (`width` their i32 count): a butterfly
    of shuffles (xor 16, 8, 4, 2, 1), the values' steps interleaved so that they overlap."""
    sums = list(values)
    for offset in (16, 8, 4, 2, 1):
        off = _i32(b, offset)
        for j in range(len(sums)):
            other = b.insert(ShuffleOp(sums[j], off, width, "xor")).shuffle_result
            sums[j] = b.insert(arith.AddfOp(sums[j], other)).result
    return sums


# ===----------------------------------------------------------------------=== #
# Parameter checks and SMEM budgets
# ===----------------------------------------------------------------------=== #


def _check_target(target: str) -> None:
    target_named(target)  # an UnknownTarget (a ValueError) for a name that is no target


def _check_feature(target: str, feature: Feature, op: str, fix: str, uses: str = "") -> None:
    """A ValueError where `target` lacks `feature`: the verifiers' message for `op` (the copy
    op the builder would emit, or the builder where no single op needs it), then `fix`; an
    UnknownTarget for a name that is no target."""
    lacking = target_named(target)
    if not feature.has(lacking):
        raise ArgumentError(f"{feature_message(op, feature, lacking, uses)}; {fix}")


def _check_2d(shape: Sequence[int], tile: Sequence[int], per_dim: str = "per dim") -> None:
    """A 2-D `shape` of positive extents and a 2-D `tile` that is a TMA box (1 to 256
    `per_dim`, the words of the message)."""
    if len(shape) != 2 or any(d < 1 for d in shape):
        raise ArgumentError(f"expected a 2-D shape of positive extents, got {tuple(shape)}")
    if len(tile) != 2 or any(not 1 <= d <= 256 for d in tile):
        raise ArgumentError(
            f"expected a 2-D tile of 1 to 256 {per_dim} (a TMA box), got {tuple(tile)}"
        )


def _check_float(dtype: str) -> None:
    if dtype not in FLOAT_TYPES:
        raise ArgumentError(
            f"expected a float element type ({', '.join(FLOAT_TYPES)}), got {dtype!r}"
        )


def _check_consumer_warps(consumer_warps: int) -> None:
    if not 1 <= consumer_warps <= 16:
        raise ArgumentError(f"expected 1 to 16 consumer warps, got {consumer_warps}")


def _bulk_oob(shape: Sequence[int], tile: Sequence[int], implementation: str | None) -> str | None:
    """The `oob` of a builder's copies for `implementation`: a bulk copy moves whole rows
    and promises to stay in bounds (rules BK1, BK4); None (the default) otherwise."""
    if implementation != "bulk":
        return None
    if tile[-1] != shape[-1]:
        raise ArgumentError(
            f"expected tiles of whole rows ({shape[-1]} elements) for bulk copies, got "
            f"{tuple(tile)}"
        )
    return "promise_in_bounds"


def _smem_budget(target: str) -> str:
    """The SMEM a block can use on `target`, as the messages name it."""
    return f"the {TARGETS[target].max_smem_bytes} bytes of SMEM a block can use on {target}"


def _footprint(
    tile: Sequence[int],
    inputs: Sequence[str],
    outputs: Sequence[str],
    barrier_groups: int,
    stages: int,
    out_buffers: int = 2,
) -> int:
    """The block's SMEM bytes (the verifier's arena layout, rule TR6) for one ring of
    `stages` `tile`s per input, `out_buffers` tiles per output (element types by name) and
    `barrier_groups` groups of one barrier per slot."""
    align = copy.smem_alignment(16)

    def slot(name: str) -> int:
        return copy.smem_bytes(tile, element_type(name), 16)

    parts = [(stages * slot(name), align) for name in inputs]
    parts += [(out_buffers * slot(name), align) for name in outputs]
    parts += [(copy.BARRIER_BYTES * stages, copy.BARRIER_BYTES)] * barrier_groups
    return copy.block_smem_bytes(copy.smem_footprint(parts))


def _stages_limit(
    tile: Sequence[int],
    inputs: Sequence[str],
    outputs: Sequence[str],
    barrier_groups: int,
    target: str,
    out_buffers: int = 2,
) -> int:
    """The most ring slots for one ring of `tile`s per input, `out_buffers` buffers per
    output and `barrier_groups` groups of one barrier per slot within the block's SMEM on `target`
    (the verifier's arena layout, rule TR6) and `MAX_BARRIERS` (rule I1); 0 when none fits."""
    budget = TARGETS[target].max_smem_bytes
    fits = (
        n
        for n in range(1, copy.MAX_BARRIERS + 1)
        if _footprint(tile, inputs, outputs, barrier_groups, n, out_buffers) <= budget
    )
    return max(fits, default=0)
