"""Lowers the `copy` dialect to the `nvvm` dialect (plus `llvm`, `scf` and casts).

The pass works kernel by kernel. For each function that holds copy ops it first lays out the
kernel's shared memory (every `copy.alloc_smem` buffer, every barrier group and the TMEM
address slots, in one dynamic-shared-memory arena, each at its alignment), emits a prologue
(the arena's base, the elected thread, the thread count), and appends one tensor-map
parameter per distinct TMA descriptor the kernel's copies need. The kernel ABI (its
parameters, block, cluster and shared-memory size) is recorded on the function as `copy.abi`
for the runtime. Then one pattern per op rewrites the copies.

Who issues what (the semantics the verifier's rules assume):
- TMA copies, prefetches, `barrier_arrive_expect_tx` and bulk-group commit/wait are issued by
  one elected thread (thread 0 of the block); a bulk `wait_group` ends with a block barrier so
  that every thread may then reuse the SMEM;
- cp.async copies are issued by all threads of the block together, 4-, 8- or 16-byte chunks
  each; a cp.async `wait_group` ends with a block barrier;
- `barrier_init` is done by the elected thread, then fenced and synchronized (cluster-wide when
  the kernel has a cluster); `barrier_arrive` and `barrier_wait` are executed by every thread
  that reaches them;
- `fence_async_shared` is `fence.proxy.async.shared::cta` followed by a block barrier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import builtin, func, llvm, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    UnitAttr,
    VectorType,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import PassFailedException

from copy_dialect import ops as copy
from copy_dialect.passes import nvvm
from copy_dialect.passes.llvm_types import (
    SHARED,
    TENSOR,
    cast,
    lowered,
    ptr,
    replace_with_casts,
    static_memref,
    to_llvm_type,
)
from copy_dialect.target import TARGETS, Target

PEER_BIT_MASK = 0xFFFFFFFFFEFFFFFF
"""Clears the peer bit of a shared::cluster address: the pair's even (leader) CTA."""

TRY_WAIT_TICKS = 10_000_000
"""Suspend-time hint of `mbarrier.try_wait` (ns), as CUTLASS uses."""


def fail(op: Operation, message: str) -> PassFailedException:
    """A lowering error; copy-opt reports it at the op."""
    error = PassFailedException(f"'{op.name}' op {message}")
    error.op = op  # type: ignore[attr-defined]
    return error


# ===----------------------------------------------------------------------=== #
# Emitting llvm arithmetic
# ===----------------------------------------------------------------------=== #


@dataclass
class Emit:
    """Collects the ops a rewrite creates, with helpers for the arithmetic it needs."""

    ops: list[Operation] = field(default_factory=list[Operation])

    def __call__(self, op: Operation) -> Operation:
        self.ops.append(op)
        return op

    def const(self, value: int, type: IntegerType = i64) -> SSAValue:
        return self(llvm.ConstantOp(IntegerAttr(value, type), type)).results[0]

    def binary(self, cls: type[Operation], lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        if isinstance(rhs, int):
            assert isinstance(lhs.type, IntegerType)
            rhs = self.const(rhs, lhs.type)
        return self(cls(lhs, rhs)).results[0]  # type: ignore[call-arg]

    def add(self, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        return lhs if isinstance(rhs, int) and rhs == 0 else self.binary(llvm.AddOp, lhs, rhs)

    def mul(self, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        return lhs if isinstance(rhs, int) and rhs == 1 else self.binary(llvm.MulOp, lhs, rhs)

    def icmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        if isinstance(rhs, int):
            assert isinstance(lhs.type, IntegerType)
            rhs = self.const(rhs, lhs.type)
        flag = IntegerAttr(llvm.ICmpPredicateFlag(predicate).to_int(), 64)
        return self(llvm.ICmpOp(lhs, rhs, flag)).results[0]

    def resize(self, value: SSAValue, type: IntegerType, signed: bool = False) -> SSAValue:
        assert isinstance(source := value.type, IntegerType)
        if source.width.data == type.width.data:
            return value
        if source.width.data > type.width.data:
            return self(llvm.TruncOp(value, type)).results[0]
        ext = llvm.SExtOp if signed else llvm.ZExtOp
        return self(ext(value, type)).results[0]

    def byte_offset(self, base: SSAValue, offset: SSAValue | int) -> SSAValue:
        """`base + offset` bytes, keeping base's address space."""
        if isinstance(offset, int):
            if offset == 0:
                return base
            offset = self.const(offset)
        assert isinstance(ptr_type := base.type, llvm.LLVMPointerType)
        gep = llvm.GEPOp.from_mixed_indices(base, [offset], IntegerType(8), result_type=ptr_type)
        return self(gep).results[0]

    def inttoptr(self, value: SSAValue, type: llvm.LLVMPointerType) -> SSAValue:
        # xDSL's IntToPtrOp constructor only makes generic pointers.
        return self(llvm.IntToPtrOp.create(operands=[value], result_types=[type])).results[0]

    def sreg(self, name: str) -> SSAValue:
        return self(nvvm.read_sreg(name)).results[0]

    def if_(self, condition: SSAValue, body: Sequence[Operation]) -> None:
        self(scf.IfOp(condition, [], [*body, scf.YieldOp()]))


@dataclass(frozen=True)
class Arith:
    """An integer SSA value whose `+ * ^ & >>` emit llvm ops into `e`, so that a function
    written on ints (`copy_dialect.layout`) computes the same thing at run time."""

    e: Emit
    value: SSAValue

    def _wrap(self, result: SSAValue) -> Arith:
        return Arith(self.e, result)

    def _operand(self, other: Arith | int) -> SSAValue | int:
        return other.value if isinstance(other, Arith) else other

    def __add__(self, other: Arith | int) -> Arith:
        return self._wrap(self.e.add(self.value, self._operand(other)))

    __radd__ = __add__

    def __mul__(self, other: int) -> Arith:
        return self._wrap(self.e.mul(self.value, other))

    __rmul__ = __mul__

    def __xor__(self, other: Arith | int) -> Arith:
        return self._wrap(self.e.binary(llvm.XOrOp, self.value, self._operand(other)))

    def __and__(self, other: Arith | int) -> Arith:
        return self._wrap(self.e.binary(llvm.AndOp, self.value, self._operand(other)))

    def __rshift__(self, other: int) -> Arith:
        return self._wrap(self.e.binary(llvm.LShrOp, self.value, other))


# ===----------------------------------------------------------------------=== #
# Per-kernel facts: shared-memory arena, tensor maps, prologue values
# ===----------------------------------------------------------------------=== #

TENSOR_MAP_TYPES = {
    "f16": "FLOAT16",
    "bf16": "BFLOAT16",
    "f32": "FLOAT32",
    "tf32": "TFLOAT32",
    "f64": "FLOAT64",
}


def tensor_map_type(element: Attribute, reduction: copy.ReductionKind | None) -> str | None:
    """The CUtensorMapDataType name a copy of `element` needs (the reduction table decides
    signedness), or None when the lowering has no map type for it."""
    if reduction is not None:
        return copy.reduction_map_type(reduction, element)
    if isinstance(element, IntegerType):
        width = element.width.data
        signed = element.signedness.data == builtin.Signedness.SIGNED
        if width in (32, 64):
            return f"{'INT' if signed else 'UINT'}{width}"
        return {8: "UINT8", 16: "UINT16"}.get(width)
    name = str(element)
    if name in TENSOR_MAP_TYPES:
        return TENSOR_MAP_TYPES[name]
    if copy.bitwidth(element) == 8:
        return "UINT8"  # 8-bit floats travel as bytes
    return None


@dataclass(frozen=True)
class TensorMap:
    """One TMA descriptor a kernel needs: the array it describes and how."""

    arg: int
    """Index of the GMEM memref among the kernel's original arguments."""
    box: tuple[int, ...]
    """The box, outermost dim first, one entry per GMEM dim."""
    swizzle: int
    oob: str
    """"zeros" or "nan" (the fill of out-of-bounds loads)."""
    dtype: str

    def abi(self, written: bool) -> DictionaryAttr:
        """The ABI entry; `written`: a TMA store or reduction writes through the map."""
        return DictionaryAttr(
            {
                "kind": StringAttr("tensor_map"),
                "arg": IntegerAttr(self.arg, i64),
                "box": DenseArrayBase.from_list(i64, self.box),
                "swizzle": IntegerAttr(self.swizzle, i64),
                "oob": StringAttr(self.oob),
                "dtype": StringAttr(self.dtype),
                "written": IntegerAttr(int(written), i1),
            }
        )


@dataclass
class Kernel:
    """What the patterns need to know about the kernel that holds an op."""

    target: Target
    fn: func.FuncOp
    cluster: tuple[int, int, int]
    offsets: dict[Operation, int]
    """Byte offset in the shared-memory arena of each allocation (and TMEM address slot)."""
    arena_bytes: int
    tensor_maps: dict[TensorMap, SSAValue] = field(default_factory=dict[TensorMap, SSAValue])
    written_maps: set[TensorMap] = field(default_factory=set[TensorMap])
    """The tensor maps a TMA store or reduction writes through (the runtime checks their
    arrays' innermost extent: rule TR19)."""
    base: SSAValue | None = None
    """The arena's base address (`!llvm.ptr<3>`), aligned at run time."""
    leader: SSAValue | None = None
    """i1: this thread issues the block's TMA operations."""
    tid: SSAValue | None = None
    """i64: the thread's linear index in the block."""
    nthreads: SSAValue | None = None
    """i64: the block's thread count."""
    relinquish_after: Operation | None = None
    """The `copy.tmem_alloc` after which the CTA gives up its allocation permit: the last
    one, unless it is in a loop (a tcgen05.alloc after the relinquish is undefined)."""

    @property
    def clustered(self) -> bool:
        return prod(self.cluster) > 1


ARENA_ALIGNMENT = copy.SMEM_ARENA_ALIGNMENT
"""The arena's base is aligned to this at run time (the largest alignment TMA needs)."""


def layout_arena(fn: func.FuncOp) -> tuple[dict[Operation, int], int]:
    offsets: dict[Operation, int] = {}
    end = 0
    for op in fn.walk():
        if isinstance(op, copy.AllocSmemOp):
            size, align = op.size_bytes, op.byte_alignment
        elif isinstance(op, copy.BarrierInitOp):
            assert isinstance(t := op.result.type, copy.BarrierType)
            size, align = 8 * t.count.data, 8
        elif isinstance(op, copy.TmemAllocOp):
            size, align = 4, 4
        else:
            continue
        offset = -(-end // align) * align
        offsets[op] = offset
        end = offset + size
    return offsets, end


def last_tmem_alloc(fn: func.FuncOp) -> Operation | None:
    """The kernel's last `copy.tmem_alloc`, if no loop holds it."""
    allocs = [op for op in fn.walk() if isinstance(op, copy.TmemAllocOp)]
    if not allocs:
        return None
    node: Operation | None = allocs[-1].parent_op()
    while node is not None and node is not fn:
        if isinstance(node, scf.ForOp | scf.WhileOp):
            return None
        node = node.parent_op()
    return allocs[-1]


def enclosing_function(op: Operation) -> func.FuncOp | None:
    node = op.parent_op()
    while node is not None and not isinstance(node, func.FuncOp):
        node = node.parent_op()
    return node


def kernel_of(op: Operation, kernels: dict[func.FuncOp, Kernel]) -> Kernel:
    node = enclosing_function(op)
    if node is None or node not in kernels:
        raise fail(op, "must be inside a func.func kernel to be lowered")
    return kernels[node]


def tma_descriptor(copy_op: copy.AsyncCopyOp | copy.PrefetchOp, kernel: Kernel) -> SSAValue:
    """The tensor-map parameter for this copy, appended to the kernel on first use."""
    if isinstance(copy_op, copy.PrefetchOp):
        gmem, box_dims = copy_op.src, tuple(int(b) for b in copy_op.box.get_values())
        swizzle, oob, reduction = 16, "zeros", None
    else:
        g = copy_op.geometry()
        gmem, box_dims, swizzle = g.gmem, split_box(copy_op, kernel), g.swizzle_bytes
        oob = "nan" if copy_op.oob_mode == copy.OOBMode.NAN else "zeros"
        reduction = None if copy_op.reduction is None else copy_op.reduction.data
    assert isinstance(gmem_type := gmem.type, MemRefType)
    entry = kernel.fn.body.blocks[0]
    if not (isinstance(gmem, BlockArgument) and gmem.block is entry):
        raise fail(copy_op, "a TMA copy's GMEM ref must be a kernel argument")
    dtype = tensor_map_type(gmem_type.element_type, reduction)
    if dtype is None:
        raise fail(copy_op, f"has no tensor-map data type for {gmem_type.element_type} yet")
    rank = gmem_type.get_num_dims()
    box = (1,) * (rank - len(box_dims)) + box_dims
    key = TensorMap(gmem.index, box, swizzle, oob, dtype)
    if key not in kernel.tensor_maps:
        kernel.tensor_maps[key] = append_tensor_map_argument(kernel.fn)
    if isinstance(copy_op, copy.AsyncCopyOp) and not copy_op.is_load:
        kernel.written_maps.add(key)
    return kernel.tensor_maps[key]


def append_tensor_map_argument(fn: func.FuncOp) -> SSAValue:
    """A `!llvm.ptr` kernel parameter passed as a 128-byte, 64-byte aligned grid constant."""
    entry = fn.body.blocks[0]
    arg = entry.insert_arg(ptr(), len(entry.args))
    inputs = [*fn.function_type.inputs, ptr()]
    fn.function_type = builtin.FunctionType.from_lists(inputs, fn.function_type.outputs.data)
    old = list(fn.arg_attrs.data) if fn.arg_attrs is not None else []
    old += [DictionaryAttr({})] * (len(inputs) - 1 - len(old))
    grid_constant = DictionaryAttr(
        {
            "llvm.align": IntegerAttr(64, i64),
            "llvm.byval": llvm.LLVMArrayType(128, IntegerType(8)),
            "nvvm.grid_constant": UnitAttr(),
        }
    )
    fn.arg_attrs = ArrayAttr([*old, grid_constant])
    return arg


def split_box(op: copy.AsyncCopyOp, kernel: Kernel) -> tuple[int, ...]:
    """The box each CTA loads: the whole box, or for a multicast load its share along the
    split dimension (see `multicast_split`)."""
    box = op.geometry().box_shape
    split = multicast_split(op, kernel)
    if split is None:
        return box
    dim, size = split
    return box[:dim] + (box[dim] // size,) + box[dim + 1 :]


def multicast_split(op: copy.AsyncCopyOp, kernel: Kernel) -> tuple[int, int] | None:
    """(dim, collective size) of a multicast load: each of the `size` CTAs of the collective
    group loads 1/size of the box along `dim` (its outermost non-unit dim, so that the slices
    are contiguous in SMEM) and multicasts it to the whole group."""
    dims = op.collective_dims
    if not dims or op.leader_tracked is not None:
        return None
    size = prod(kernel.cluster[d] for d in dims)
    box = op.geometry().box_shape
    dim = copy.multicast_split_dim(box)
    if box[dim] % size:
        raise fail(op, f"cannot split the box {list(box)} over {size} CTAs along dim {dim}")
    return dim, size


# ===----------------------------------------------------------------------=== #
# Patterns
# ===----------------------------------------------------------------------=== #


@dataclass
class KernelPattern(RewritePattern):
    """A pattern that reads the facts of the kernel around the op."""

    kernels: dict[func.FuncOp, Kernel]

    def kernel(self, op: Operation) -> Kernel:
        return kernel_of(op, self.kernels)


def smem_pointer(e: Emit, kernel: Kernel, op: Operation) -> SSAValue:
    """The `!llvm.ptr<3>` of an arena allocation."""
    assert kernel.base is not None
    return e.byte_offset(kernel.base, kernel.offsets[op])


def barrier_pointer(e: Emit, barrier: SSAValue, index: SSAValue | None) -> SSAValue:
    (group,) = lowered([barrier], e.ops)
    if index is None:
        return group
    (i,) = lowered([index], e.ops)
    return e.byte_offset(group, e.mul(i, 8))


class LowerAllocSmem(KernelPattern):
    """`copy.alloc_smem` -> its address in the kernel's shared-memory arena."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.AllocSmemOp):
            return
        e = Emit()
        address = smem_pointer(e, self.kernel(op), op)
        rewriter.replace(op, e.ops, [cast(address, op.result.type, e.ops)])


class LowerBarrierInit(KernelPattern):
    """`copy.barrier_init` -> `mbarrier.init` of each barrier by the elected thread, then a
    fence and a block (or cluster) barrier so that every thread, and the TMA unit, sees
    them initialized."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.BarrierInitOp):
            return
        kernel = self.kernel(op)
        assert isinstance(t := op.result.type, copy.BarrierType)
        assert kernel.leader is not None
        e = Emit()
        group = smem_pointer(e, kernel, op)
        init = Emit()
        count = init.const(op.arrivals.value.data, i32)
        for i in range(t.count.data):
            init(nvvm.MBarrierInitSharedOp(init.byte_offset(group, 8 * i), count))
        e.if_(kernel.leader, init.ops)
        if kernel.target.has_tma:
            e(nvvm.FenceProxyOp(kind="async.shared", space="cta"))
        if kernel.clustered:
            e(nvvm.FenceMbarrierInitOp())
            e(nvvm.ClusterArriveOp(aligned=True))
            e(nvvm.ClusterWaitOp(aligned=True))
        else:
            e(nvvm.Barrier0Op())
        rewriter.replace(op, e.ops, [cast(group, t, e.ops)])


class LowerBarrierArrive(KernelPattern):
    """`copy.barrier_arrive` -> `mbarrier.arrive` by each thread that reaches it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.BarrierArriveOp):
            return
        e = Emit()
        address = barrier_pointer(e, op.barrier, op.index)
        count = 1 if op.count is None else op.count.value.data
        scope = "cluster" if op.scope is not None and op.scope.data.value == "cluster" else "cta"
        if count == 1 and scope == "cta":
            e(nvvm.MBarrierArriveSharedOp(address))
        else:
            # No NVVM op takes a count or a cluster scope: inline PTX (sm_90+, verified).
            e(
                llvm.InlineAsmOp(
                    f"mbarrier.arrive.release.{scope}.shared::cta.b64 _, [$0], $1;",
                    "r,r",
                    [e.resize(_ptrtoint(e, address), i32), e.const(count, i32)],
                    has_side_effects=True,
                )
            )
        rewriter.replace(op, e.ops, [])


class LowerBarrierArriveExpectTx(KernelPattern):
    """`copy.barrier_arrive_expect_tx` -> `mbarrier.arrive.expect_tx` by the elected thread."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.BarrierArriveExpectTxOp):
            return
        kernel = self.kernel(op)
        assert kernel.leader is not None
        e = Emit()
        address = barrier_pointer(e, op.barrier, op.index)
        body = Emit()
        body(nvvm.MBarrierArriveExpectTxSharedOp(address, body.const(op.bytes.value.data, i32)))
        e.if_(kernel.leader, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerBarrierWait(KernelPattern):
    """`copy.barrier_wait` -> `mbarrier.try_wait.parity` (sm_90+) or a `test_wait.parity`
    loop (sm_80), by every thread that reaches it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.BarrierWaitOp):
            return
        kernel = self.kernel(op)
        e = Emit()
        address = barrier_pointer(e, op.barrier, op.index)
        phase = e.resize(op.parity, i32)
        if kernel.target.has_tma:
            ticks = e.const(TRY_WAIT_TICKS, i32)
            e(nvvm.MBarrierTryWaitParitySharedOp(address, phase, ticks))
        else:
            e(nvvm.MBarrierTestWaitParitySharedOp(address, phase))
        rewriter.replace(op, e.ops, [])


class LowerFence(KernelPattern):
    """`copy.fence_async_shared` -> `fence.proxy.async.shared::cta` + block barrier."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.FenceAsyncSharedOp):
            return
        fence = nvvm.FenceProxyOp(kind="async.shared", space="cta")
        rewriter.replace(op, [fence, nvvm.Barrier0Op()], [])


class LowerCommitGroup(KernelPattern):
    """`copy.commit_group bulk` -> `cp.async.bulk.commit_group` by the elected thread (it
    issued the group's copies); `cp_async` -> `cp.async.commit_group` by every thread."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.CommitGroupOp):
            return
        kernel = self.kernel(op)
        e = Emit()
        if op.group.data == copy.GroupKind.BULK:
            assert kernel.leader is not None
            e.if_(kernel.leader, [nvvm.CpAsyncBulkCommitGroupOp()])
        else:
            e(nvvm.CpAsyncCommitGroupOp())
        rewriter.replace(op, e.ops, [])


class LowerWaitGroup(KernelPattern):
    """`copy.wait_group` -> `cp.async.bulk.wait_group{.read}` by the elected thread or
    `cp.async.wait_group` by every thread, then a block barrier: after it, every thread may
    read the loaded SMEM or overwrite the stored one."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.WaitGroupOp):
            return
        kernel = self.kernel(op)
        pending = op.pending.value.data
        e = Emit()
        if op.group.data == copy.GroupKind.BULK:
            assert kernel.leader is not None
            wait = nvvm.CpAsyncBulkWaitGroupOp(group=pending, read=op.is_read_only)
            e.if_(kernel.leader, [wait])
        else:
            e(nvvm.CpAsyncWaitGroupOp(pending))
        e(nvvm.Barrier0Op())
        rewriter.replace(op, e.ops, [])


def tma_coordinates(e: Emit, indices: Sequence[SSAValue]) -> list[SSAValue]:
    """TMA coordinates: i32, innermost dimension first."""
    return [e.resize(i, i32) for i in reversed(lowered(indices, e.ops))]


class LowerPrefetch(KernelPattern):
    """`copy.prefetch` -> `cp.async.bulk.prefetch.tensor` by the elected thread."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.PrefetchOp):
            return
        kernel = self.kernel(op)
        assert kernel.leader is not None
        descriptor = tma_descriptor(op, kernel)
        body = Emit()
        coords = tma_coordinates(body, op.indices)
        body(nvvm.CpAsyncBulkTensorPrefetchOp(tma_descriptor=descriptor, coordinates=coords))
        e = Emit()
        e.if_(kernel.leader, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerTmaCopy(KernelPattern):
    """A TMA `copy.async_copy`, issued by the elected thread:
    - load: `mbarrier.arrive.expect_tx` of the box bytes (unless `arrive = false`) and
      `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`; a
      multicast load issues this CTA's share of the box with `.multicast::cluster` and the
      mask of its collective group;
    - store: `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`, or
      `cp.reduce.async.bulk.tensor` for a reduction."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.AsyncCopyOp):
            return
        kernel = self.kernel(op)
        if op.resolved_implementation() != copy.Implementation.TMA:
            return
        assert kernel.leader is not None
        g = op.geometry()
        descriptor = tma_descriptor(op, kernel)
        body = Emit()
        (smem,) = lowered([g.smem], body.ops)
        smem = body.byte_offset(smem, self.slot_offset(body, g))
        indices = list(lowered(g.gmem_indices, body.ops))
        hint = None
        if op.cache_hint is not None:
            hint = body.const(op.cache_hint.value.data, i64)
        if g.is_load:
            assert op.barrier is not None
            bar = barrier_pointer(body, op.barrier, op.barrier_index)
            if op.arrives and op.leader_tracked is None:
                tx = body.const(g.box_bytes, i32)
                body(nvvm.MBarrierArriveExpectTxSharedOp(bar, tx))
            mask, group = None, None
            split = multicast_split(op, kernel)
            if op.leader_tracked is not None:
                bar, indices = self.leader_tracked(body, op, kernel, g, bar, indices)
                group = "cta_2"
            elif split is not None:
                dim, size = split
                rank, mask_value = self.collective_position(body, op, kernel)
                share = g.box_shape[dim] // size
                gmem_dim = len(indices) - len(g.box_shape) + dim
                indices[gmem_dim] = body.add(indices[gmem_dim], body.mul(rank, share))
                share_bytes = g.box_bytes // size
                smem = body.byte_offset(smem, body.mul(rank, share_bytes))
                mask = mask_value
            coords = [body.resize(i, i32) for i in reversed(indices)]
            body(
                nvvm.CpAsyncBulkTensorSharedClusterGlobalOp(
                    dst=smem,
                    tma_descriptor=descriptor,
                    coordinates=coords,
                    mbar=bar,
                    multicast_mask=mask,
                    l2_cache_hint=hint,
                    group=group,
                )
            )
        else:
            coords = [body.resize(i, i32) for i in reversed(indices)]
            if op.reduction is None:
                body(
                    nvvm.CpAsyncBulkTensorGlobalSharedCtaOp(
                        tma_descriptor=descriptor, src=smem, coordinates=coords, l2_cache_hint=hint
                    )
                )
            else:
                body(
                    nvvm.CpAsyncBulkTensorReduceOp(
                        tma_descriptor=descriptor,
                        src=smem,
                        coordinates=coords,
                        red_kind=copy.base_reduction(op.reduction.data),
                        l2_cache_hint=hint,
                    )
                )
        e = Emit()
        condition = kernel.leader
        if op.predicate is not None:
            condition = e(llvm.AndOp(condition, op.predicate)).results[0]
        e.if_(condition, body.ops)
        rewriter.replace(op, e.ops, [])

    def leader_tracked(
        self,
        e: Emit,
        op: copy.AsyncCopyOp,
        kernel: Kernel,
        g: copy.CopyGeometry,
        bar: SSAValue,
        indices: list[SSAValue],
    ) -> tuple[SSAValue, list[SSAValue]]:
        """A leader-tracked load of a CTA pair (`.cta_group::2`, sm_100a): each CTA loads its
        box (a partitioned copy: its part along the axis) into its own SMEM, and both signal
        the barrier of the pair's leader (the CTA with collective index 0), which expects the
        bytes of both. As in CUTLASS's 2-SM TMA loads, the leader's barrier is this CTA's
        barrier address with the peer bit (bit 24 of the shared::cluster window) cleared.
        Only the leader may wait on the barrier."""
        assert op.leader_tracked is not None
        index, _ = self.collective_position(e, op, kernel)
        axis = op.leader_tracked.partition_axis
        if axis is not None:
            gmem_dim = len(indices) - len(g.box_shape) + axis
            indices = list(indices)
            indices[gmem_dim] = e.add(indices[gmem_dim], e.mul(index, g.box_shape[axis]))
        if op.arrives:
            expect = Emit()
            tx = expect.const(2 * g.box_bytes, i32)
            expect(nvvm.MBarrierArriveExpectTxSharedOp(bar, tx))
            e.if_(e.icmp("eq", index, 0), expect.ops)
        address = e(llvm.PtrToIntOp(bar, i64)).results[0]
        leader_address = e.binary(llvm.AndOp, address, PEER_BIT_MASK)
        return e.inttoptr(leader_address, ptr(SHARED)), indices

    @staticmethod
    def slot_offset(e: Emit, g: copy.CopyGeometry) -> SSAValue | int:
        """Byte offset of the slot the SMEM indices pick: the layout's linear offset of the
        slot's first element. A slot starts at a multiple of the swizzle period (TR11),
        where the swizzle leaves offsets in place."""
        strides = copy.smem_strides(g.smem_type.get_shape(), g.element_type, g.swizzle_bytes)
        indices = lowered(g.smem_indices, e.ops)
        offset: Arith | int = 0
        for index, stride in zip(indices, strides[: len(indices)], strict=True):
            offset = Arith(e, index) * stride + offset
        return offset if isinstance(offset, int) else offset.value

    @staticmethod
    def collective_position(
        e: Emit, op: copy.AsyncCopyOp, kernel: Kernel
    ) -> tuple[SSAValue, SSAValue]:
        """This CTA's index in its collective group (i64) and the group's CTA mask (i16)."""
        cluster = kernel.cluster
        stride = (1, cluster[0], cluster[0] * cluster[1])
        dims = op.collective_dims
        coords = {d: e.resize(e.sreg(f"cluster.ctaid.{'xyz'[d]}"), i64) for d in (0, 1, 2)}
        rank = e.resize(e.sreg("cluster.ctarank"), i64)
        # Rank of the group's first CTA: this CTA with its collective coordinates zeroed.
        first = rank
        index: SSAValue | int = 0
        group_stride = 1
        pattern = 1
        for d in dims:
            first = e.binary(llvm.SubOp, first, e.mul(coords[d], stride[d]))
            term = e.mul(coords[d], group_stride)
            index = term if isinstance(index, int) else e.add(index, term)
            group_stride *= cluster[d]
            pattern = _repeat_mask(pattern, cluster[d], stride[d])
        assert not isinstance(index, int)
        mask = e.binary(llvm.ShlOp, e.const(pattern, i64), first)
        return index, e.resize(mask, i16)


def _repeat_mask(pattern: int, count: int, stride: int) -> int:
    """`pattern` OR-ed with itself shifted by stride, 2*stride, ... (count copies)."""
    return sum(pattern << (k * stride) for k in range(count)) if count > 1 else pattern


def elements_to_bytes(e: Emit, count: SSAValue, bits: int) -> SSAValue:
    """`count` elements of `bits` bits in bytes; sub-byte elements come in whole bytes
    (rules B8, C12), so the division is exact."""
    if bits >= 8:
        return e.mul(count, bits // 8)
    return e.binary(llvm.SDivOp, e.mul(count, bits), 8)


class LowerCpAsyncCopy(KernelPattern):
    """A cp.async `copy.async_copy`: every thread of the block copies 16-byte chunks (8 or 4
    when a row is not a multiple of 16) with `cp.async.{cg,ca}.shared.global`; with
    `oob zeros` each chunk's source size is clipped to the array, and cp.async zero-fills the
    rest."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.AsyncCopyOp):
            return
        kernel = self.kernel(op)
        if op.resolved_implementation() != copy.Implementation.CP_ASYNC:
            return
        assert kernel.tid is not None
        assert kernel.nthreads is not None
        g = op.geometry()
        shape, strides = static_memref(g.gmem_type, op)
        bits = copy.bitwidth(g.element_type) or 8
        box = (1,) * (len(shape) - len(g.box_shape)) + g.box_shape
        row_bytes = box[-1] * bits // 8
        # The chunk divides the box row, every GMEM stride and a constant innermost
        # coordinate (a 300-element f16 row is 600 bytes: 8-byte chunks); the verifier
        # guarantees there is one (H2) and that `cache cg` gets 16 bytes (H6). A dynamic
        # innermost coordinate is assumed to be a multiple of the chunk.
        chunk = copy.cp_async_chunk_bytes(g)
        assert chunk is not None
        if op.cache is not None and op.cache.data == copy.CacheMode.CG:
            modifier = "cg"
        else:
            modifier = "cg" if chunk == 16 else "ca"
        chunks_per_row = row_bytes // chunk
        elems_per_chunk = chunk * 8 // bits
        total = prod(box[:-1]) * chunks_per_row

        e = Emit()
        (gmem,) = lowered([g.gmem], e.ops)
        (smem,) = lowered([g.smem], e.ops)
        smem = e.byte_offset(smem, LowerTmaCopy.slot_offset(e, g))
        origin = list(lowered(g.gmem_indices, e.ops))
        zero_fill = op.oob_mode == copy.OOBMode.ZEROS

        body = Block(arg_types=[i64])
        b = Emit()
        c = body.args[0]
        # Chunk c -> (outer coordinates..., chunk in row).
        in_row = b.binary(llvm.URemOp, c, chunks_per_row)
        rest = b.binary(llvm.UDivOp, c, chunks_per_row)
        coords: list[SSAValue] = []
        for size in reversed(box[:-1]):
            coords.insert(0, b.binary(llvm.URemOp, rest, size) if size > 1 else b.const(0))
            rest = b.binary(llvm.UDivOp, rest, size) if size > 1 else rest
        column = b.mul(in_row, elems_per_chunk)
        coords.append(column)
        position = [b.add(o, x) for o, x in zip(origin, coords, strict=True)]
        offset: SSAValue | None = None
        for p, stride in zip(position, strides, strict=True):
            term = b.mul(p, stride)
            offset = term if offset is None else b.add(offset, term)
        assert offset is not None
        src = b.byte_offset(gmem, elements_to_bytes(b, offset, bits))
        dst = b.byte_offset(smem, b.mul(c, chunk))
        src_size = None
        if zero_fill:
            valid: SSAValue | None = None
            for p, size in zip(position[:-1], shape[:-1], strict=True):
                inside = b.icmp("ult", p, size)  # unsigned: negative is outside too
                valid = inside if valid is None else b(llvm.AndOp(valid, inside)).results[0]
            left = b.binary(llvm.SubOp, b.const(shape[-1]), position[-1])
            clipped = b(
                llvm.SelectOp(b.icmp("slt", left, elems_per_chunk), left, b.const(elems_per_chunk))
            ).results[0]
            clipped = b(llvm.SelectOp(b.icmp("slt", clipped, 0), b.const(0), clipped)).results[0]
            if valid is not None:
                clipped = b(llvm.SelectOp(valid, clipped, b.const(0))).results[0]
            src_size = b.resize(elements_to_bytes(b, clipped, bits), i32)
            # A fully out-of-bounds chunk reads nothing; point it at the array's start.
            src = b(llvm.SelectOp(b.icmp("eq", src_size, 0), gmem, src)).results[0]
        b(nvvm.CpAsyncSharedGlobalOp(dst, src, size=chunk, modifier=modifier, cp_size=src_size))
        b(scf.YieldOp())
        body.add_ops(b.ops)
        e(scf.ForOp(kernel.tid, e.const(total), kernel.nthreads, [], Region(body)))
        rewriter.replace(op, e.ops, [])


class LowerTmemAlloc(KernelPattern):
    """`copy.tmem_alloc` -> `tcgen05.alloc` by warp 0 into an SMEM slot (after the kernel's
    last allocation, `tcgen05.relinquish_alloc_permit`); after a block barrier every thread
    reads the TMEM address from the slot."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.TmemAllocOp):
            return
        kernel = self.kernel(op)
        assert isinstance(t := op.result.type, MemRefType)
        assert kernel.tid is not None
        e = Emit()
        slot = smem_pointer(e, kernel, op)
        ncols = e.const(copy.tmem_columns(t), i32)
        warp0 = e.icmp("ult", kernel.tid, 32)
        alloc: list[Operation] = [nvvm.Tcgen05AllocOp(slot, ncols)]
        if op is kernel.relinquish_after:
            alloc.append(nvvm.Tcgen05RelinquishAllocPermitOp())
        e.if_(warp0, alloc)
        e(nvvm.Barrier0Op())
        address = e(llvm.LoadOp(slot, i32)).results[0]
        tmem = e.inttoptr(address, ptr(TENSOR))
        rewriter.replace(op, e.ops, [cast(tmem, t, e.ops)])


class LowerTmemDealloc(KernelPattern):
    """`copy.tmem_dealloc` -> a block barrier, then `tcgen05.dealloc` by warp 0."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.TmemDeallocOp):
            return
        kernel = self.kernel(op)
        assert isinstance(t := op.tmem.type, MemRefType)
        assert kernel.tid is not None
        e = Emit()
        (tmem,) = lowered([op.tmem], e.ops)
        e(nvvm.Barrier0Op())
        ncols = e.const(copy.tmem_columns(t), i32)
        e.if_(e.icmp("ult", kernel.tid, 32), [nvvm.Tcgen05DeallocOp(tmem, ncols)])
        rewriter.replace(op, e.ops, [])


def warp_tmem_address(e: Emit, kernel: Kernel, tmem: SSAValue, column: SSAValue) -> SSAValue:
    """The TMEM address a warp's tcgen05.ld/st uses: its lane quarter (warp % 4) * 32 in the
    high half, plus the column."""
    assert kernel.tid is not None
    (base,) = lowered([tmem], e.ops)
    (col,) = lowered([column], e.ops)
    quarter = e.binary(llvm.URemOp, e.binary(llvm.UDivOp, kernel.tid, 32), 4)
    lane = e.binary(llvm.ShlOp, e.mul(quarter, 32), 16)
    base_int = e(llvm.PtrToIntOp(base, i32)).results[0]
    address = e.add(e.add(base_int, e.resize(lane, i32)), e.resize(col, i32))
    return e.inttoptr(address, ptr(TENSOR))


def tmem_registers(n: int) -> Attribute:
    """The type of `n` 32-bit registers of a tcgen05.ld/st: i32 for one (as NVVM's
    tcgen05.ld/st take it), else vector<n x i32>."""
    return i32 if n == 1 else VectorType(i32, [n])


class LowerTmemLoad(KernelPattern):
    """`copy.tmem_load` -> `tcgen05.ld.sync.aligned` (or, with `reduce`, inline PTX
    `tcgen05.ld.red`) at the warp's lanes; registers are bit-cast to the element type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.TmemLoadOp):
            return
        kernel = self.kernel(op)
        assert isinstance(result_type := op.result.type, VectorType)
        e = Emit()
        address = warp_tmem_address(e, kernel, op.tmem, op.column)
        n = result_type.get_shape()[0]
        vector_type = to_llvm_type(result_type)
        offset = None if op.offset is None else e.const(op.offset.value.data, i64)
        if op.reduce is None:
            raw = e(
                nvvm.Tcgen05LdOp(
                    address, shape=op.shape.data.value, result_type=tmem_registers(n), offset=offset
                )
            ).results[0]
            value = raw
            if raw.type != vector_type:  # f32 lanes, or one register for a vector<1x...>
                value = e(llvm.BitcastOp(raw, vector_type)).results[0]
            replace_with_casts(rewriter, op, e.ops, [value])
            return
        # No NVVM op or intrinsic for tcgen05.ld.red: inline PTX, registers then the
        # reduced value, returned as one struct.
        element = result_type.element_type
        suffix = (
            ".f32"
            if isinstance(element, builtin.Float32Type)
            else (
                ".s32"
                if isinstance(element, IntegerType)
                and element.signedness.data == builtin.Signedness.SIGNED
                else ".u32"
            )
        )
        flags = (".abs" if op.abs is not None else "") + (".NaN" if op.nan is not None else "")
        shape = op.shape.data.value.removeprefix("shape_")
        registers = ", ".join(f"${i}" for i in range(n))
        address_operand = f"[${n + 1}]"
        if op.offset is not None:  # immHalfSplitoff follows the address
            address_operand += f", {op.offset.value.data}"
        asm = (
            f"tcgen05.ld.red.sync.aligned.{shape}.x{op.num.value.data}."
            f"{op.reduce.data.value}{flags}{suffix} {{{registers}}}, ${n}, {address_operand};"
        )
        scalar = to_llvm_type(element)
        register = "f" if isinstance(element, builtin.Float32Type) else "r"
        constraints = ",".join([f"={register}"] * (n + 1) + ["r"])
        struct = llvm.LLVMStructType.from_type_list([scalar] * (n + 1))
        call = e(
            llvm.InlineAsmOp(asm, constraints, [address], [struct], has_side_effects=True)
        ).results[0]
        values = [
            e(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [i]), call, scalar)).results[0]
            for i in range(n + 1)
        ]
        vector: SSAValue = e(llvm.UndefOp(vector_type)).results[0]
        for i, v in enumerate(values[:n]):
            position = e.const(i, i32)
            vector = e(llvm.InsertElementOp(vector, v, position)).results[0]
        replace_with_casts(rewriter, op, e.ops, [vector, values[n]])


class LowerTmemStore(KernelPattern):
    """`copy.tmem_store` -> `tcgen05.st.sync.aligned` at the warp's lanes."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.TmemStoreOp):
            return
        kernel = self.kernel(op)
        assert isinstance(value_type := op.value.type, VectorType)
        e = Emit()
        address = warp_tmem_address(e, kernel, op.tmem, op.column)
        (value,) = lowered([op.value], e.ops)
        raw_type = tmem_registers(value_type.get_shape()[0])
        if value.type != raw_type:  # f32 lanes, or one register for a vector<1x...>
            value = e(llvm.BitcastOp(value, raw_type)).results[0]
        offset = None if op.offset is None else e.const(op.offset.value.data, i64)
        e(nvvm.Tcgen05StOp(address, value, shape=op.shape.data.value, offset=offset))
        rewriter.replace(op, e.ops, [])


class LowerTmemWait(KernelPattern):
    """`copy.tmem_wait load|store` -> `tcgen05.wait::ld|st`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.TmemWaitOp):
            return
        rewriter.replace(op, [nvvm.Tcgen05WaitOp(kind=op.kind.data.value)], [])


SMEM_LAYOUT_TYPES = {16: 0, 32: 6, 64: 4, 128: 2}
"""tcgen05 shared-memory descriptor layout type of each swizzle (16: none)."""


def smem_descriptor(e: Emit, address: SSAValue, row_bytes: int, swizzle: int) -> SSAValue:
    """The sm_100 shared-memory matrix descriptor (CUTLASS's UMMA::SmemDescriptor) of a
    K-major buffer whose rows are `row_bytes` wide: start address >> 4 (bits 0-13), leading
    byte offset >> 4 (16-29), stride byte offset >> 4 (32-45: eight rows), version 1 (46),
    layout type (61-63)."""
    start = e.binary(llvm.LShrOp, e.binary(llvm.AndOp, address, 0x3FFFF), 4)
    fields = ((row_bytes * 8) >> 4) << 32 | (128 >> 4) << 16 | 1 << 46
    fields |= SMEM_LAYOUT_TYPES[swizzle] << 61
    return e.binary(llvm.OrOp, start, fields - (1 << 64) if fields >= 1 << 63 else fields)


class LowerSmemToTmem(KernelPattern):
    """`copy.smem_to_tmem` -> `tcgen05.cp` by the elected thread, from a shared-memory
    descriptor of the source, whose rows are one core-matrix row (16 bytes, unswizzled) or
    exactly its swizzle span: the layouts whose descriptor is row-major (rule J12)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, copy.SmemToTmemOp):
            return
        kernel = self.kernel(op)
        assert isinstance(src_type := op.src.type, MemRefType)
        assert kernel.leader is not None
        swizzle = copy.swizzle_of(src_type)
        bits = copy.bitwidth(src_type.element_type) or 8
        row_bytes = src_type.get_shape()[-1] * bits // 8
        # The verifier guarantees the descriptor's row-major layouts (rule J12).
        assert (row_bytes == 16 and swizzle == 16) or row_bytes == swizzle
        body = Emit()
        (smem,) = lowered([op.src], body.ops)
        address = body(llvm.PtrToIntOp(smem, i64)).results[0]
        descriptor = smem_descriptor(body, address, row_bytes, swizzle)
        (tmem,) = lowered([op.tmem], body.ops)
        (column,) = lowered([op.column], body.ops)
        base = body(llvm.PtrToIntOp(tmem, i32)).results[0]
        taddr = body.inttoptr(body.add(base, body.resize(column, i32)), ptr(TENSOR))
        multicast = None if op.multicast is None else op.multicast.data.value
        body(nvvm.Tcgen05CpOp(taddr, descriptor, shape=op.shape.data.value, multicast=multicast))
        e = Emit()
        e.if_(kernel.leader, body.ops)
        rewriter.replace(op, e.ops, [])


def _ptrtoint(e: Emit, address: SSAValue) -> SSAValue:
    return e(llvm.PtrToIntOp(address, i64)).results[0]


# ===----------------------------------------------------------------------=== #
# The pass
# ===----------------------------------------------------------------------=== #


def prologue(kernel: Kernel) -> None:
    """Values every pattern may use, computed once at the kernel's entry: the arena base
    (aligned up to ARENA_ALIGNMENT), the thread's linear index and the elected thread."""
    e = Emit()
    tid = [e.resize(e.sreg(f"tid.{d}"), i64) for d in "xyz"]
    ntid = [e.resize(e.sreg(f"ntid.{d}"), i64) for d in "xyz"]
    linear = e.add(tid[0], e.mul(e.add(tid[1], e.mul(tid[2], ntid[1])), ntid[0]))
    kernel.tid = linear
    kernel.nthreads = e.mul(e.mul(ntid[0], ntid[1]), ntid[2])
    kernel.leader = e.icmp("eq", linear, 0)
    if kernel.arena_bytes:
        symbol = e(llvm.AddressOfOp(ARENA_SYMBOL, ptr(SHARED))).results[0]
        address = e(llvm.PtrToIntOp(symbol, i32)).results[0]
        aligned = e.binary(llvm.AndOp, e.add(address, ARENA_ALIGNMENT - 1), -ARENA_ALIGNMENT)
        kernel.base = e.byte_offset(symbol, e.resize(e.binary(llvm.SubOp, aligned, address), i64))
    entry = kernel.fn.body.blocks[0]
    if entry.first_op is None:
        entry.add_ops(e.ops)
    else:
        entry.insert_ops_before(e.ops, entry.first_op)


ARENA_SYMBOL = "__copy_smem"
"""The module's dynamic shared memory (`extern .shared .align 1024 .b8 __copy_smem[]`)."""


def kernel_abi(kernel: Kernel, original_args: int) -> DictionaryAttr:
    """The facts the runtime needs to launch the kernel (copy_dialect.abi), as its attribute."""
    from copy_dialect.abi import KernelAbi, Param, PointerParam, ScalarParam, TensorMapParam
    from copy_dialect.passes.abi import abi_attr

    params: list[Param] = []
    for i, t in enumerate(kernel.fn.function_type.inputs.data[:original_args]):
        if isinstance(t, MemRefType):
            # -1: a dynamic dim, whatever the array brings (TMA-only arrays).
            shape = tuple(max(d, -1) for d in t.get_shape())
            params.append(PointerParam(i, str(t.element_type), shape))
        else:
            params.append(ScalarParam(str(t)))
    params += [
        TensorMapParam(m.arg, m.box, m.swizzle, m.oob, m.dtype, m in kernel.written_maps)
        for m in kernel.tensor_maps
    ]
    block = kernel.fn.attributes.get("gpu.known_block_size")
    return abi_attr(
        KernelAbi(
            kernel.fn.sym_name.data,
            tuple(params),
            copy.block_smem_bytes(kernel.arena_bytes),
            kernel.cluster,
            tuple(block.get_values()) if isinstance(block, DenseArrayBase) else None,
        )
    )


@dataclass(frozen=True)
class ConvertCopyToNVVMPass(ModulePass):
    """Lowers the `copy` dialect to `nvvm` for the module's target (or `target`)."""

    name = "convert-copy-to-nvvm"

    target: str = ""
    """Overrides the module's `copy.target` (sm_80, sm_90a, sm_100a, ...)."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        target = self.resolve_target(op)
        for inner in op.walk():
            if inner.dialect_name() == "copy" and enclosing_function(inner) is None:
                raise fail(inner, "must be inside a func.func kernel to be lowered")
        kernels: dict[func.FuncOp, Kernel] = {}
        arena = 0
        for fn in op.walk():
            if not isinstance(fn, func.FuncOp) or not any(
                o.dialect_name() == "copy" for o in fn.walk()
            ):
                continue
            offsets, size = layout_arena(fn)
            kernel = Kernel(target, fn, copy.kernel_cluster_shape(fn), offsets, size)
            kernel.relinquish_after = last_tmem_alloc(fn)
            kernels[fn] = kernel
            arena = max(arena, size)
            prologue(kernel)
        original_args = {fn: len(fn.function_type.inputs) for fn in kernels}
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerAllocSmem(kernels),  # copy.alloc_smem
                    LowerBarrierInit(kernels),  # copy.barrier_init
                    LowerBarrierArrive(kernels),  # copy.barrier_arrive
                    LowerBarrierArriveExpectTx(kernels),  # copy.barrier_arrive_expect_tx
                    LowerBarrierWait(kernels),  # copy.barrier_wait
                    LowerFence(kernels),  # copy.fence_async_shared
                    LowerCommitGroup(kernels),  # copy.commit_group
                    LowerWaitGroup(kernels),  # copy.wait_group
                    LowerPrefetch(kernels),  # copy.prefetch
                    LowerTmaCopy(kernels),  # copy.async_copy, TMA
                    LowerCpAsyncCopy(kernels),  # copy.async_copy, cp.async
                    LowerTmemAlloc(kernels),  # copy.tmem_alloc
                    LowerTmemDealloc(kernels),  # copy.tmem_dealloc
                    LowerTmemLoad(kernels),  # copy.tmem_load
                    LowerTmemStore(kernels),  # copy.tmem_store
                    LowerTmemWait(kernels),  # copy.tmem_wait
                    LowerSmemToTmem(kernels),  # copy.smem_to_tmem
                ],
                # The prologue's values get their uses only as the copies are rewritten.
                dce_enabled=False,
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        for fn, kernel in kernels.items():
            fn.attributes["copy.abi"] = kernel_abi(kernel, original_args[fn])
            # Copies need the kernel's tensor-map parameters and SMEM arena: a function
            # that holds them is a kernel entry.
            fn.attributes["gpu.kernel"] = UnitAttr()
        if arena:
            global_op = llvm.GlobalOp(
                llvm.LLVMArrayType(0, IntegerType(8)),
                ARENA_SYMBOL,
                "external",
                addr_space=SHARED,
                alignment=ARENA_ALIGNMENT,
            )
            op.body.block.insert_op_before(global_op, op.body.block.first_op)  # type: ignore[arg-type]

    def resolve_target(self, module: builtin.ModuleOp) -> Target:
        name = self.target
        if not name:
            attr = module.attributes.get("copy.target")
            if not isinstance(attr, copy.TargetAttr):
                raise PassFailedException(
                    "convert-copy-to-nvvm needs a target: give the module "
                    'copy.target = #copy.target<"sm_90a">, or pass --target sm_90a to '
                    'copy-opt (target=sm_90a to the pass: "convert-copy-to-nvvm{target=sm_90a}")'
                )
            name = attr.arch.data
        if name not in TARGETS:
            raise PassFailedException(
                f"unknown target '{name}': expected one of {', '.join(TARGETS)}"
            )
        return TARGETS[name]
