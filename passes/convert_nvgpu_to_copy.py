"""`convert-nvgpu-to-copy`: raises upstream MLIR's `nvgpu` data movement into the copy
dialect, so that the catalogue's verifiers and the protocol analysis check IR that
compilers built on MLIR emit (`copy_dialect.upstream_nvgpu` parses it).

Each copy op keeps the location of the nvgpu op it comes from: a diagnostic points at the
nvgpu op's line. docs/nvgpu.md has the op mapping; in short:

- a TMA load or store through a map becomes `copy.async_copy ... impl tma` on the GMEM tensor
  the map describes (a descriptor argument becomes that tensor, `memref<?x?xT>`; a
  `tma.create.descriptor` a `memref.cast`), the map's swizzle goes into the SMEM buffer's
  type, its oob fill and L2 promotion onto the copy; nvgpu gives coordinates innermost
  first (`cp.async.bulk.tensor`'s order), copy outermost first, so they are reversed;
- `tma.prefetch.descriptor` and `tma.fence.descriptor` go: the copy lowering prefetches each
  map at the kernel's entry, and its maps are kernel parameters, never rewritten;
- an `mbarrier.create` and its inits become `copy.barrier_init` (one constant count), the
  arrivals `copy.barrier_arrive` (`count N nocomplete`), `arrive.expect_tx` with bytes the
  block's one `copy.barrier_arrive_expect_tx` (which copy issues from one thread: the nvgpu
  op must be guarded, by its predicate or an `scf.if`), with 0 bytes each executing
  thread's plain arrival, `try_wait.parity` `copy.barrier_wait` (constant ticks: the hint);
- a `device_async_copy` of a whole SMEM slot becomes `copy.async_copy ... impl cp_async`,
  its group and wait `copy.commit_group` / `copy.wait_group cp_async`;
- `nvvm.read.ptx.sreg.tid.{x,y,z}` becomes `gpu.thread_id`, which the analysis follows.

What has no copy equivalent (a token-based `mbarrier.test.wait`, a used token, a
`multicast_mask`, `srcElements`, a thread's own cp.async chunk, mixed or non-constant init
counts, ...) is an error at the nvgpu op that says so.

`fragments=true` marks every function that is not a kernel (no `gpu.kernel`, no known block
size) with `copy.fragment`: the protocol analysis then checks its ops but not the rules of a
kernel's exit (P7, P8, P12: what is in flight at the return continues in the caller);
`block-size=128` also gives such a function the block it runs in (`gpu.known_block_size`),
which the analysis needs to tell which thread runs a thread-guarded op.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from copy_dialect import ops as copy
from copy_dialect import upstream_nvgpu as nvgpu
from copy_dialect.errors import CopyVerifyException as Error

SWIZZLE_BYTES = {"none": None, "swizzle_32b": 32, "swizzle_64b": 64, "swizzle_128b": 128}
L2_PROMOTION = {"none": 0, "l2promo_64b": 64, "l2promo_128b": 128, "l2promo_256b": 256}
OOB = {"zero": "zeros", "nan": "nan"}


def unsupported(op: Operation, message: str, note: str) -> Error:
    """An error at the nvgpu op: what it does that the copy dialect cannot say."""
    error = Error(f"'{op.name}' op {message}", note=note)
    error.op = op  # type: ignore[attr-defined]
    return error


def constant(value: SSAValue) -> int | None:
    """The integer `value` is, when an `arith.constant` makes it."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def located(op: Operation, new: Operation) -> Operation:
    new.location = op.location
    return new


def gmem_type(desc: nvgpu.TensorMapDescriptorType) -> MemRefType:
    """The GMEM tensor a map describes, as the copy dialect names it: as many dims as the
    box, each of unknown size."""
    return MemRefType(desc.tensor.element_type, [DYNAMIC_INDEX] * len(desc.tensor.shape))


def descriptor_type(value: SSAValue, op: Operation) -> nvgpu.TensorMapDescriptorType:
    if not isinstance(t := value.type, nvgpu.TensorMapDescriptorType):
        raise unsupported(op, f"expected a tensor map descriptor, got {t}", "pass one")
    return t


# ===----------------------------------------------------------------------=== #
# TMA
# ===----------------------------------------------------------------------=== #


def map_properties(desc: nvgpu.TensorMapDescriptorType) -> dict[str, object]:
    """The copy properties a map's parameters give (those a plain copy takes by default are
    left out)."""
    found: dict[str, object] = {"implementation": "tma"}
    if desc.keyword("oob") != "zero":
        found["oob"] = OOB[desc.keyword("oob")]
    promotion = L2_PROMOTION[desc.keyword("l2promo")]
    if promotion != 128:
        found["l2_promotion"] = promotion
    return found


def check_interleave(op: Operation, desc: nvgpu.TensorMapDescriptorType) -> None:
    if desc.keyword("interleave") != "none":
        raise unsupported(
            op,
            f"the map's interleave = {desc.keyword('interleave')} has no copy equivalent",
            "use interleave = none: copy.async_copy moves tiled boxes",
        )


def swizzled(buffer: SSAValue, desc: nvgpu.TensorMapDescriptorType) -> SSAValue:
    """The SMEM buffer of a copy through a swizzled map, retyped to carry the swizzle
    (`#copy.smem<swizzle = S>`: the copy dialect keeps a buffer's layout in its type, where
    nvgpu keeps it in the map); an SMEM type of the copy dialect is left as written."""
    swizzle = SWIZZLE_BYTES[desc.keyword("swizzle")]
    t = buffer.type
    if swizzle is None or not isinstance(t, MemRefType):
        return buffer
    if isinstance(t.memory_space, copy.SmemSpaceAttr):
        return buffer
    new = MemRefType(t.element_type, t.shape, t.layout, copy.SmemSpaceAttr(swizzle))
    return Rewriter.replace_value_with_new_type(buffer, new)


class ConvertTmaAsyncLoadOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.TmaAsyncLoadOp, rewriter: PatternRewriter, /):
        desc = descriptor_type(op.tensorMapDescriptor, op)
        check_interleave(op, desc)
        if op.multicastMask is not None:
            raise unsupported(
                op,
                "a multicast_mask has no copy equivalent",
                "drop the multicast_mask: in the copy dialect a load names the cluster dims "
                "that share it (copy.async_copy's collective = array<i64: 0>)",
            )
        new = copy.AsyncCopyOp(
            op.tensorMapDescriptor,
            swizzled(op.dst, desc),
            src_indices=list(reversed(op.coordinates)),
            barrier=op.barriers,
            barrier_index=op.mbarId,
            predicate=op.predicate,
            arrive=False,
            **map_properties(desc),  # type: ignore[arg-type]
        )
        rewriter.replace(op, located(op, new), [None] * len(op.results))


class ConvertTmaAsyncStoreOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.TmaAsyncStoreOp, rewriter: PatternRewriter, /):
        desc = descriptor_type(op.tensorMapDescriptor, op)
        check_interleave(op, desc)
        properties = map_properties(desc)
        properties.pop("oob", None)
        new = copy.AsyncCopyOp(
            swizzled(op.src, desc),
            op.tensorMapDescriptor,
            dst_indices=list(reversed(op.coordinates)),
            predicate=op.predicate,
            **properties,  # type: ignore[arg-type]
        )
        rewriter.replace(op, located(op, new), [None] * len(op.results))


class EraseTmaDescriptorOp(RewritePattern):
    """The prefetch and the fence of a map: the copy lowering prefetches every map at the
    kernel's entry, and a map is a kernel parameter the kernel never rewrites."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: nvgpu.TmaPrefetchOp | nvgpu.TmaFenceOp, rewriter: PatternRewriter, /
    ):
        rewriter.erase(op)


class ConvertTmaCreateDescriptorOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.TmaCreateDescriptorOp, rewriter: PatternRewriter, /):
        desc = descriptor_type(op.tensorMap, op)
        box = [constant(b) for b in op.boxDimensions]
        shape = list(desc.tensor.get_shape())
        if box != shape:
            shown = ", ".join("?" if b is None else str(b) for b in box)
            raise unsupported(
                op,
                f"the box [{shown}] is not the descriptor's tensor shape {shape}",
                "give the box as constants equal to the descriptor's tensor = memref<...> "
                "shape: the copy dialect takes the box from the SMEM buffer",
            )
        cast = memref.CastOp.get(op.tensor, gmem_type(desc))
        rewriter.replace(op, located(op, cast))


# ===----------------------------------------------------------------------=== #
# mbarriers
# ===----------------------------------------------------------------------=== #


def token_unused(op: Operation) -> None:
    if op.results[0].uses:
        raise unsupported(
            op,
            "the arrival's token is used: a token-based phase has no copy equivalent",
            "wait on the phase by its parity (nvgpu.mbarrier.try_wait.parity, "
            "copy.barrier_wait %b[%i], %parity) and leave the token unused: nothing may "
            "read the nvgpu.mbarrier.token",
        )


def constant_operand(op: Operation, value: SSAValue, what: str, fix: str) -> int:
    found = constant(value)
    if found is None:
        raise unsupported(op, f"the {what} is not a constant", fix)
    return found


class ConvertMBarrierArriveOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: nvgpu.MBarrierArriveOp | nvgpu.MBarrierArriveNoCompleteOp,
        rewriter: PatternRewriter,
        /,
    ):
        token_unused(op)
        count = None
        if isinstance(op, nvgpu.MBarrierArriveNoCompleteOp):
            count = constant_operand(
                op, op.count, "arrival count", "give the count as an arith.constant"
            )
        new = copy.BarrierArriveOp(
            op.barriers, op.mbarId, count=count, nocomplete=count is not None
        )
        rewriter.replace(op, located(op, new), [None] * len(op.results))


class ConvertMBarrierTestWaitOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.MBarrierTestWaitOp, rewriter: PatternRewriter, /):
        raise unsupported(
            op,
            "a test of the phase an arrival's token names has no copy equivalent",
            "test the phase by its parity (copy.barrier_test %b[%i], %parity), as "
            "mbarrier.test_wait.parity does",
        )


class ConvertMBarrierArriveExpectTxOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.MBarrierArriveExpectTxOp, rewriter: PatternRewriter, /):
        tx = constant_operand(
            op, op.txcount, "transaction count", "give the byte count as an arith.constant"
        )
        # An arrival with bytes is the block's one (copy issues it from the elected thread);
        # one with none is the arrival of each thread that executes it.
        if tx and op.predicate is None and not isinstance(op.parent_op(), scf.IfOp):
            raise unsupported(
                op,
                f"every thread that executes it arrives expecting {tx} bytes: the copy "
                "dialect's arrival with bytes is the block's one",
                "guard it so that one thread arrives with the bytes (predicate = %p, %p "
                "true for gpu.thread_id x == 0) and the others with 0 bytes",
            )
        arrive = located(
            op,
            copy.BarrierArriveExpectTxOp(op.barriers, op.mbarId, bytes=tx)
            if tx
            else copy.BarrierArriveOp(op.barriers, op.mbarId),
        )
        if op.predicate is None:
            rewriter.replace(op, arrive, [None] * len(op.results))
            return
        branch = scf.IfOp(op.predicate, [], [arrive, scf.YieldOp()])
        rewriter.replace(op, located(op, branch), [None] * len(op.results))


class ConvertMBarrierTryWaitParityOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.MBarrierTryWaitParityOp, rewriter: PatternRewriter, /):
        hint = constant(op.ticks)
        new = copy.BarrierWaitOp(op.barriers, op.mbarId, op.phaseParity, suspend_hint=hint)
        rewriter.replace(op, located(op, new), [None] * len(op.results))


def group_inits(group: SSAValue) -> list[nvgpu.MBarrierInitOp]:
    """The inits of `group`, in program order."""
    users = {id(u.operation) for u in group.uses}
    scope = group.owner.parent_op() if isinstance(group.owner, Operation) else None
    ops = scope.walk() if scope is not None else (u.operation for u in group.uses)
    return [o for o in ops if isinstance(o, nvgpu.MBarrierInitOp) and id(o) in users]


def init_count(inits: list[nvgpu.MBarrierInitOp]) -> int:
    """The one constant arrival count the group's inits give."""
    fix = (
        "give the count as an arith.constant: copy.barrier_init takes one constant count "
        "for the group"
    )
    counts = [constant_operand(i, i.count, "arrival count", fix) for i in inits]
    for init, count in zip(inits, counts, strict=True):
        if count != counts[0]:
            raise unsupported(
                init,
                f"the group's barriers are initialized with different counts {sorted(set(counts))}",
                "split the group in groups of one count: copy.barrier_init gives every "
                "barrier of a group the same count",
            )
    return counts[0]


class ConvertMBarrierCreateOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.MBarrierCreateOp, rewriter: PatternRewriter, /):
        group = op.barriers.type
        assert isinstance(group, nvgpu.MBarrierGroupType)
        space = group.memory_space
        if not (isinstance(space, nvgpu.AddressSpaceAttr) and space.is_workgroup) and not (
            isinstance(space, IntegerAttr) and space.value.data == 3
        ):
            raise unsupported(
                op,
                f"an mbarrier group in {space} has no copy equivalent",
                "place it in SMEM: memorySpace = #gpu.address_space<workgroup>",
            )
        inits = group_inits(op.barriers)
        if not inits:
            raise unsupported(
                op,
                "the group is never initialized (no nvgpu.mbarrier.init)",
                "initialize it: copy.barrier_init allocates and initializes a group at once",
            )
        arrivals = init_count(inits)
        for init in inits:
            rewriter.erase(init)
        new = copy.BarrierInitOp(group.num_barriers.data, arrivals)
        rewriter.replace(op, located(op, new))


class RejectArgumentInitOp(RewritePattern):
    """An init left once the groups made here are raised: one of a group passed in."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.MBarrierInitOp, rewriter: PatternRewriter, /):
        raise unsupported(
            op,
            "an init of an mbarrier group passed in as an argument has no copy equivalent",
            "create and initialize the group in the kernel (nvgpu.mbarrier.create, then "
            "nvgpu.mbarrier.init): copy.barrier_init does both",
        )


# ===----------------------------------------------------------------------=== #
# cp.async
# ===----------------------------------------------------------------------=== #


def slot_indices(op: nvgpu.DeviceAsyncCopyOp) -> list[SSAValue]:
    """The indices of the SMEM slot the copy fills: the copy must write whole trailing dims
    of `dst` (their indices constant 0, `dstElements` their element count), as
    `copy.async_copy` fills a slot of a multi-buffer with the block's threads."""
    for ref, given, side in (
        (op.src, op.srcIndices, "source"),
        (op.dst, op.dstIndices, "destination"),
    ):
        rank = len(ref.type.get_shape())  # type: ignore[attr-defined]
        if len(given) != rank:
            raise unsupported(
                op,
                f"expected {rank} {side} indices (one per dim of {ref.type}), got {len(given)}",
                f"index every dim of the {side}",
            )
    dst = op.dst.type
    assert isinstance(dst, MemRefType)
    shape = list(dst.get_shape())
    n = op.dstElements.value.data
    indices = list(op.dstIndices)
    for k in range(len(shape) - 1, -1, -1):
        if any(constant(i) != 0 for i in indices[k:]):
            break
        if prod(shape[k:]) == n:
            return indices[:k]
    raise unsupported(
        op,
        f"a copy of {n} elements at a thread's own place in %dst (not a whole slot of "
        f"{dst}) has no copy equivalent",
        "copy.async_copy impl cp_async copies whole SMEM slots with the block's threads: "
        "index the slot's leading dims, its trailing dims at 0, and copy its element count",
    )


class ConvertDeviceAsyncCopyOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.DeviceAsyncCopyOp, rewriter: PatternRewriter, /):
        if op.srcElements is not None:
            hint = op.srcElements.name_hint
            raise unsupported(
                op,
                "a partial copy (srcElements, the rest zero-filled) has no copy equivalent",
                f"drop the srcElements operand{f' %{hint}' if hint else ''} and copy whole "
                "slots: copy.async_copy fills a box's out-of-bounds part with zeros itself",
            )
        users = {u.operation.name for u in op.asyncToken.uses}
        if users - {nvgpu.DeviceAsyncCreateGroupOp.name}:
            raise unsupported(
                op,
                f"the copy's token is used by {', '.join(sorted(users))}: only "
                "nvgpu.device_async_create_group has a copy equivalent",
                "commit the copy with nvgpu.device_async_create_group and wait for its group",
            )
        new = copy.AsyncCopyOp(
            op.src,
            op.dst,
            src_indices=list(op.srcIndices),
            dst_indices=slot_indices(op),
            implementation="cp_async",
            cache="cg" if op.bypasses_l1 else None,
        )
        rewriter.replace(op, located(op, new), [None] * len(op.results))


class ConvertDeviceAsyncCreateGroupOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.DeviceAsyncCreateGroupOp, rewriter: PatternRewriter, /):
        if any(not isinstance(u.operation, nvgpu.DeviceAsyncWaitOp) for u in op.asyncToken.uses):
            return
        rewriter.replace(op, located(op, copy.CommitGroupOp("cp_async")), [None] * len(op.results))


class ConvertDeviceAsyncWaitOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nvgpu.DeviceAsyncWaitOp, rewriter: PatternRewriter, /):
        pending = 0 if op.numGroups is None else op.numGroups.value.data
        rewriter.replace(
            op, located(op, copy.WaitGroupOp("cp_async", pending)), [None] * len(op.results)
        )


class ConvertThreadIdRegisterOp(RewritePattern):
    """`nvvm.read.ptx.sreg.tid.x : i32` (what upstream's nvgpu tests read the thread index
    with) -> `gpu.thread_id x` cast to i32: the protocol analysis follows gpu.thread_id to
    tell which threads take a branch."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        prefix = "nvvm.read.ptx.sreg.tid."
        if not op.name.startswith(prefix):
            return
        tid = located(
            op, gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum(op.name.removeprefix(prefix))))
        )
        cast = located(op, arith.IndexCastOp(tid, op.results[0].type))
        rewriter.replace(op, [tid, cast])


# ===----------------------------------------------------------------------=== #
# Function arguments, memory spaces, the pass
# ===----------------------------------------------------------------------=== #


def raised_type(t: Attribute) -> Attribute:
    """A descriptor argument's GMEM tensor, a group argument's barrier group, and a memref
    in `#gpu.address_space<workgroup>` in memory space 3."""
    if isinstance(t, nvgpu.TensorMapDescriptorType):
        return gmem_type(t)
    if isinstance(t, nvgpu.MBarrierGroupType):
        return copy.BarrierType(t.num_barriers.data)
    if isinstance(t, MemRefType) and isinstance(t.memory_space, nvgpu.AddressSpaceAttr):
        space = t.memory_space.value.data
        memory = IntegerAttr(3, 64) if space == 1 else NoneAttr()
        return MemRefType(t.element_type, t.shape, t.layout, memory)
    return t


def raise_values(module: builtin.ModuleOp) -> None:
    """Retypes the block arguments and the results of ops that hold raised types (the
    function signatures with them)."""
    for op in module.walk():
        for block in (b for r in op.regions for b in r.blocks):
            for arg in list(block.args):
                if (new := raised_type(arg.type)) != arg.type:
                    Rewriter.replace_value_with_new_type(arg, new)
        for result in list(op.results):
            if (new := raised_type(result.type)) != result.type:
                Rewriter.replace_value_with_new_type(result, new)
        if isinstance(op, func.FuncOp):
            ft = op.function_type
            inputs = (
                [a.type for a in op.body.blocks[0].args]
                if op.body.blocks
                else [raised_type(t) for t in ft.inputs.data]
            )
            outputs = [raised_type(t) for t in ft.outputs.data]
            op.function_type = builtin.FunctionType.from_lists(inputs, outputs)


def is_kernel(fn: func.FuncOp) -> bool:
    names = fn.attributes.keys() | fn.properties.keys()
    return "gpu.kernel" in names or any(n.startswith("gpu.known_block_size") for n in names)


@dataclass(frozen=True)
class ConvertNVGPUToCopyPass(ModulePass):
    """Raises nvgpu's TMA, mbarrier and cp.async ops into the copy dialect."""

    name = "convert-nvgpu-to-copy"

    fragments: bool = False
    """Mark each function that is not a kernel `copy.fragment`: the protocol analysis skips
    the rules of a kernel's exit there."""

    block_size: int = 0
    """With `fragments`, the threads of the block a fragment runs in (its
    `gpu.known_block_size`, x): the analysis needs it to tell which thread runs a
    thread-guarded op; 0 leaves it unknown."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        # Users first (a token's, a map's): their patterns read the nvgpu types.
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    ConvertTmaAsyncLoadOp(),
                    ConvertTmaAsyncStoreOp(),
                    EraseTmaDescriptorOp(),
                    ConvertMBarrierArriveOp(),
                    ConvertMBarrierTestWaitOp(),
                    ConvertMBarrierArriveExpectTxOp(),
                    ConvertMBarrierTryWaitParityOp(),
                    ConvertDeviceAsyncCopyOp(),
                    ConvertDeviceAsyncCreateGroupOp(),
                    ConvertDeviceAsyncWaitOp(),
                    ConvertThreadIdRegisterOp(),
                ]
            ),
            walk_reverse=True,
            apply_recursively=False,
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [ConvertMBarrierCreateOp(), ConvertTmaCreateDescriptorOp()]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        PatternRewriteWalker(RejectArgumentInitOp(), apply_recursively=False).rewrite_module(op)
        raise_values(op)
        if self.fragments:
            for fn in op.walk():
                if isinstance(fn, func.FuncOp) and not is_kernel(fn):
                    fn.attributes["copy.fragment"] = UnitAttr()
                    if self.block_size:
                        block = DenseArrayBase.from_list(i32, [self.block_size, 1, 1])
                        fn.attributes["gpu.known_block_size"] = block
        for left in op.walk():
            if left.name.startswith("nvgpu."):
                raise unsupported(
                    left,
                    "has no copy equivalent",
                    "convert-nvgpu-to-copy raises nvgpu's TMA, mbarrier and device_async ops",
                )


__all__ = ["ConvertNVGPUToCopyPass"]
