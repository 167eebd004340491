"""What the patterns know about the kernel around an op (`Kernel`): its target and cluster,
its shared-memory arena (every `copy.alloc_smem` buffer, every barrier group and the TMEM
address slots, each at its alignment), the prologue values computed once at its entry (the
arena's base, the thread's index, the block's thread count, the elected thread), the issuing
group of each op (`Group`: the block, or a role of `copy.warp_specialize`, with its elected
thread and its barrier), its size and tensor-map parameters, and the ABI record the runtime
launches it with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from math import prod
from typing import TYPE_CHECKING

from xdsl.dialects import builtin, func, llvm, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import RewritePattern

from copy_dialect import ops as copy
from facts.abi import (
    KernelAbi,
    Param,
    PointerParam,
    ScalarParam,
    SizeParam,
    TensorMapParam,
    TensorMapWorkspaceParam,
)
from facts.target import Target
from passes import nvvm
from passes.convert_copy_to_nvvm.dynamic_shapes import KernelShapes, kernel_shapes
from passes.convert_copy_to_nvvm.emit import Emit
from passes.llvm_types import SHARED, cast, ptr

if TYPE_CHECKING:
    from passes.convert_copy_to_nvvm.guards import Guards

ARENA_SYMBOL = "__copy_smem"
"""The module's dynamic shared memory (`extern .shared .align 1024 .b8 __copy_smem[]`)."""

ARENA_ALIGNMENT = copy.SMEM_ARENA_ALIGNMENT
"""The arena's base is aligned to this at run time (the largest alignment TMA needs)."""


@dataclass(frozen=True)
class Group:
    """The threads that issue an op together: the block, or a role of `copy.warp_specialize`."""

    tid: SSAValue
    """i64: the thread's index in the group."""
    nthreads: SSAValue
    """i64: the group's thread count."""
    leader: SSAValue
    """i1: this thread is the group's elected thread (it issues TMA operations)."""
    barrier: int
    """The named barrier that synchronizes the group: 0 (the block's) or 1 + the role."""
    threads: int | None
    """The group's thread count when static (a role), None for the block."""

    def elected(
        self, e: Emit, body: Sequence[Operation], predicate: SSAValue | None = None
    ) -> None:
        """`body`, issued by the elected thread only (and only where `predicate` holds)."""
        condition = self.leader
        if predicate is not None:
            condition = e(llvm.AndOp(condition, predicate)).results[0]
        e.if_(condition, body)

    def sync(self, e: Emit) -> None:
        """Every thread of the group waits for the others (`bar.sync 0`, or the role's own
        named barrier)."""
        if self.threads is None:
            e(nvvm.Barrier0Op())
        else:
            e(named_barrier("sync", self.barrier, self.threads))


def named_barrier(kind: str, barrier: int, threads: int) -> Operation:
    """`barrier.sync` or `barrier.arrive` (`kind`) on named barrier `barrier` for `threads`
    threads. Not the `.aligned` form (`bar.sync`): LLVM may copy the inline PTX into both arms
    of a branch that splits a warp (the elected thread's and the others'), and an aligned
    barrier reached at two different instructions by one warp hangs (seen on the H200); the
    unaligned form lets each thread arrive where it is (sm_70+)."""
    return llvm.InlineAsmOp(
        f"barrier.{kind} {barrier}, {threads};", "~{memory}", [], has_side_effects=True
    )


@dataclass
class Kernel:
    """What the patterns need to know about the kernel that holds an op."""

    target: Target
    fn: func.FuncOp
    cluster: tuple[int, int, int]
    block_shape: tuple[int, ...] | None
    """The block's shape when the kernel fixes it (`gpu.known_block_size`)."""
    offsets: dict[Operation, int]
    """Byte offset in the shared-memory arena of each allocation (and TMEM address slot)."""
    arena_bytes: int
    tid: SSAValue
    """i64: the thread's linear index in the block."""
    nthreads: SSAValue
    """i64: the block's thread count."""
    leader: SSAValue
    """i1: this thread issues the block's TMA operations."""
    base: SSAValue | None
    """The arena's base address (`!llvm.ptr<3>`), aligned at run time; None without an arena."""
    relinquish_after: Operation | None
    """The `copy.tmem_alloc` after which the CTA gives up its allocation permit: the last
    one, unless it is in a loop (a tcgen05.alloc after the relinquish is undefined)."""
    guards: Guards | None
    """The module's debug guards (`debug-guards=true`), None without them."""
    prologue_end: Operation
    """The last op of the prologue at the kernel's entry: what is hoisted to the entry
    (cache policies, tensor-map prefetches) goes after it."""
    arguments: int
    """The caller's arguments, the kernel's first parameters."""
    shapes: KernelShapes
    """The sizes of its dynamic arrays the kernel needs, and the alignment it asks of them
    (`dynamic_shapes`)."""
    sizes: dict[tuple[int, int], SSAValue]
    """The i64 size parameter of each of `shapes.sizes`, appended after the caller's
    arguments."""
    grid_dependent: bool = False
    """It waits for the kernel ahead of it (`copy.waits_for_predecessor`): its ABI says so."""
    accesses: tuple[str, ...] | None = None
    """Under debug guards, how it accesses each argument, and each argument's
    `copy.predecessor_access` (`marks`): the runtime's launch guard reads them."""
    marks: tuple[str, ...] | None = None
    roles: dict[Block, Group] = field(default_factory=dict)
    """The issuing group of each role's body (`copy.warp_specialize`)."""
    tensor_maps: dict[TensorMapParam | Operation, SSAValue] = field(default_factory=dict)
    """The parameters appended to the kernel, in order: a `.param` map by its key, the
    workspace of a `copy.tensormap_global` by the op."""
    workspaces: dict[Operation, TensorMapWorkspaceParam] = field(default_factory=dict)
    written_maps: set[TensorMapParam | Operation] = field(default_factory=set)
    """The tensor maps a TMA store or reduction writes through (the runtime checks their
    arrays' innermost extent: rule TR19)."""
    cache_policies: dict[str, SSAValue] = field(default_factory=dict)
    """The i64 cache policy made at the kernel's entry for each distinct createpolicy
    instruction (its PTX)."""

    @property
    def clustered(self) -> bool:
        return prod(self.cluster) > 1

    @property
    def block(self) -> Group:
        """The block as the issuing group (thread 0 elected)."""
        return Group(self.tid, self.nthreads, self.leader, 0, None)

    def group(self, op: Operation) -> Group:
        """The group that issues `op`: the role whose body holds it, else the block."""
        block = op.parent_block()
        while block is not None:
            if (role := self.roles.get(block)) is not None:
                return role
            parent = block.parent_op()
            if parent is None or parent is self.fn:
                break
            block = parent.parent_block()
        return self.block

    def elected(
        self, e: Emit, body: Sequence[Operation], predicate: SSAValue | None = None
    ) -> None:
        """`body`, issued by the elected thread of the block only (and where `predicate`
        holds)."""
        self.block.elected(e, body, predicate)

    def warp0(self, e: Emit, body: Sequence[Operation]) -> None:
        """`body`, executed by warp 0 only (tcgen05.alloc and dealloc are warp-wide)."""
        e.if_(e.icmp("ult", self.tid, 32), body)

    def arena_address(self, e: Emit, op: Operation) -> SSAValue:
        """The `!llvm.ptr<3>` of an arena allocation."""
        assert self.base is not None
        return e.byte_offset(self.base, self.offsets[op])

    def tensor_map(self, key: TensorMapParam, written: bool) -> SSAValue:
        """The tensor-map parameter `key`, appended to the kernel on first use; `written`: a
        TMA store or reduction writes through it."""
        if key not in self.tensor_maps:
            self.tensor_maps[key] = append_tensor_map_argument(self.fn)
        if written:
            self.written_maps.add(key)
        return self.tensor_maps[key]

    def workspace(self, op: Operation, param: TensorMapWorkspaceParam) -> SSAValue:
        """The workspace parameter of `copy.tensormap_global` `op` (a generic `!llvm.ptr` to
        its slots), appended to the kernel on first use."""
        if op not in self.tensor_maps:
            self.tensor_maps[op] = append_pointer_argument(self.fn)
            self.workspaces[op] = param
        return self.tensor_maps[op]

    def cache_policy(self, policy: copy.CachePolicy) -> SSAValue:
        """The i64 operand of `policy`, made by `createpolicy` at the kernel's entry on first
        use (every thread makes it: one instruction, no memory access), shared by every
        copy of the kernel with the same policy."""
        ptx = policy.createpolicy("$0")
        if ptx not in self.cache_policies:
            # In order of first use, after the prologue.
            made = [v.owner for v in self.cache_policies.values()]
            after = made[-1] if made else self.prologue_end
            assert isinstance(after, Operation)
            block = after.parent_block()
            assert block is not None
            op = llvm.InlineAsmOp(ptx, "=l", [], [i64])
            block.insert_op_after(op, after)
            self.cache_policies[ptx] = op.results[0]
        return self.cache_policies[ptx]

    def prefetch_tensor_maps(self) -> None:
        """The elected thread of the block prefetches each of the kernel's tensor maps at its
        entry (`prefetch.param.tensormap`), so that the first TMA copy through a map does
        not wait for its descriptor; issued before the roles of copy.warp_specialize split
        the block, once per CTA."""
        # The `.param` maps only: a workspace (keyed by its copy.tensormap_global) is global
        # memory the kernel rewrites, which prefetch.param.tensormap cannot name.
        params = [m for key, m in self.tensor_maps.items() if not isinstance(key, Operation)]
        if not params:
            return
        e = Emit()
        self.elected(e, [nvvm.PrefetchTensorMapOp(m) for m in params])
        block = self.prologue_end.parent_block()
        assert block is not None
        block.insert_ops_after(e.ops, self.prologue_end)


def last_tmem_alloc(fn: func.FuncOp) -> Operation | None:
    """The kernel's last `copy.tmem_alloc`, if no loop holds it and the kernel does not
    relinquish the permit itself (`copy.tmem_relinquish`)."""
    ops = [op for op in fn.walk() if isinstance(op, copy.TmemAllocOp | copy.TmemRelinquishOp)]
    allocs = [op for op in ops if isinstance(op, copy.TmemAllocOp)]
    if not allocs or len(allocs) < len(ops):
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


def known_block(fn: func.FuncOp) -> tuple[int, ...] | None:
    """The block shape `fn` fixes (`gpu.known_block_size`), or None."""
    block = fn.attributes.get("gpu.known_block_size")
    return tuple(block.get_values()) if isinstance(block, DenseArrayBase) else None


def thread_index(e: Emit, block: tuple[int, ...] | None) -> tuple[SSAValue, SSAValue]:
    """The thread's linear index in the block (x fastest) and the block's thread count, i64.
    With a known `block`, the count is a constant and a dim of extent 1 adds nothing (its
    tid is 0): a 1-D block's index is tid.x alone."""
    if block is None or len(block) != 3:
        tid = [e.resize(e.sreg(f"tid.{d}"), i64) for d in "xyz"]
        ntid = [e.resize(e.sreg(f"ntid.{d}"), i64) for d in "xyz"]
        linear = e.add(tid[0], e.mul(e.add(tid[1], e.mul(tid[2], ntid[1])), ntid[0]))
        return linear, e.mul(e.mul(ntid[0], ntid[1]), ntid[2])
    linear, stride = None, 1
    for d, extent in zip("xyz", block, strict=True):
        if extent != 1:
            term = e.resize(e.sreg(f"tid.{d}"), i64)
            term = term if stride == 1 else e.mul(term, stride)
            linear = term if linear is None else e.add(linear, term)
        stride *= extent
    return (e.const(0) if linear is None else linear), e.const(prod(block))


def open_kernel(target: Target, fn: func.FuncOp, guards: Guards | None) -> Kernel:
    """The facts of kernel `fn`, after laying out its arena, appending the size parameters of
    its dynamic arrays (`dynamic_shapes`) and emitting its prologue at its entry: the
    thread's linear index, the block's thread count, the elected thread (thread 0) and the
    arena's base (aligned up to ARENA_ALIGNMENT); `guards`: the module's debug guards, if it
    has them."""
    offsets, arena_bytes = copy.arena_layout(fn)  # the layout the verifier checked (TR6)
    arguments = len(fn.function_type.inputs)
    shapes = kernel_shapes(fn)
    sizes = {(arg, d): append_argument(fn, i64) for arg, d in shapes.sizes}
    for (arg, d), size in sizes.items():
        size.name_hint = f"{fn.args[arg].name_hint or f'arg{arg}'}_size{d}"
    e = Emit()
    block = known_block(fn)
    linear, nthreads = thread_index(e, block)
    leader = e.icmp("eq", linear, 0)
    base = None
    if arena_bytes:
        symbol = e(llvm.AddressOfOp(ARENA_SYMBOL, ptr(SHARED))).results[0]
        address = e.ptrtoint(symbol, i32)
        aligned = e.binary(llvm.AndOp, e.add(address, ARENA_ALIGNMENT - 1), -ARENA_ALIGNMENT)
        base = e.byte_offset(symbol, e.resize(e.binary(llvm.SubOp, aligned, address), i64))
    entry = fn.body.blocks[0]
    if entry.first_op is None:
        entry.add_ops(e.ops)
    else:
        entry.insert_ops_before(e.ops, entry.first_op)
    prologue_end = e.ops[-1]
    pin_entry_registers(fn)
    roles = {
        ws.role_block(r): open_role(target, ws, r, linear)
        for ws in fn.walk()
        if isinstance(ws, copy.WarpSpecializeOp)
        for r in range(len(ws.roles))
    }
    grid_dependent = copy.waits_for_predecessor(fn)  # before the lowering removes the waits
    accesses = marks = None
    if guards is not None:  # the facts of the launch guard, before the lowering
        used, marked = copy.argument_accesses(fn), copy.predecessor_marks(fn)
        accesses = tuple(used.get(i, "none") for i in range(arguments))
        marks = tuple(marked.get(i, "") for i in range(arguments))
    return Kernel(
        target=target,
        fn=fn,
        grid_dependent=grid_dependent,
        accesses=accesses,
        marks=marks,
        cluster=copy.kernel_cluster_shape(fn),
        block_shape=block,
        offsets=offsets,
        arena_bytes=arena_bytes,
        tid=linear,
        nthreads=nthreads,
        leader=leader,
        base=base,
        relinquish_after=last_tmem_alloc(fn),
        guards=guards,
        prologue_end=prologue_end,
        arguments=arguments,
        shapes=shapes,
        sizes=sizes,
        roles=roles,
    )


REGISTER_SHARE = 8
"""setmaxnreg counts registers in units of 8 per thread."""


def entry_registers(ws: copy.WarpSpecializeOp) -> int:
    """The registers each thread of the block holds at the kernel's entry: the block's even
    share of the register file, in setmaxnreg's units, from which each role's setmaxnreg
    goes up or down (`open_role`). The kernel states it (`.maxnreg`, `pin_entry_registers`):
    without it ptxas may give the kernel fewer at entry and then ignores every setmaxnreg
    ("unable to determine register count at entry", C7508)."""
    threads = sum(ws.role_warps) * copy.WARP
    return min(255, copy.REGISTER_FILE // threads) // REGISTER_SHARE * REGISTER_SHARE


def pin_entry_registers(fn: func.FuncOp) -> None:
    """`nvvm.maxnreg` (`.maxnreg` in the PTX) of a kernel whose roles set their register
    limits: the count at entry that their setmaxnreg ops move from (`entry_registers`),
    unless the kernel states one of its own."""
    for ws in fn.walk():
        if isinstance(ws, copy.WarpSpecializeOp) and ws.role_maxnreg is not None:
            if "nvvm.maxnreg" not in fn.attributes:
                fn.attributes["nvvm.maxnreg"] = IntegerAttr(entry_registers(ws), i32)
            return


def open_role(target: Target, ws: copy.WarpSpecializeOp, role: int, tid: SSAValue) -> Group:
    """The issuing group of role `role`, after emitting its prologue at the start of its body:
    its register limit (`setmaxnreg`, up from the block's even share of the register file or
    down to it), the thread's index in the role (which replaces the body's argument) and its
    elected thread: one lane of the role's first warp (`elect.sync` on sm_90+, lane 0
    before)."""
    body = ws.role_block(role)
    e = Emit()
    if (regs := ws.role_maxnreg) is not None:
        share = entry_registers(ws)
        action = "inc" if regs[role] > share else "dec"
        e(
            llvm.InlineAsmOp(
                f"setmaxnreg.{action}.sync.aligned.u32 {regs[role]};",
                "",
                [],
                has_side_effects=True,
            )
        )
    rtid = e.binary(llvm.SubOp, tid, copy.WARP * ws.first_warp(role))
    first_warp = e.icmp("ult", rtid, copy.WARP)
    if target.has_elect_sync:
        lane = e(
            llvm.InlineAsmOp(
                "{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 $0, 1, 0, p; }",
                "=r",
                [],
                [i32],
                has_side_effects=True,
            )
        ).results[0]
        elected = e.icmp("ne", lane, 0)
    else:
        elected = e.icmp("eq", e.binary(llvm.AndOp, rtid, copy.WARP - 1), 0)
    leader = e(llvm.AndOp(first_warp, elected)).results[0]
    (index,) = body.args
    index.replace_all_uses_with(cast(rtid, index.type, e.ops))
    if body.first_op is None:
        body.add_ops(e.ops)
    else:
        body.insert_ops_before(e.ops, body.first_op)
    threads = ws.role_threads(role)
    return Group(rtid, _const(threads, body), leader, 1 + role, threads)


def _const(value: int, body: Block) -> SSAValue:
    """An i64 constant at the start of the role's body (after its prologue)."""
    op = llvm.ConstantOp(IntegerAttr(value, i64), i64)
    assert body.first_op is not None
    body.insert_op_before(op, body.first_op)
    return op.results[0]


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


def append_pointer_argument(fn: func.FuncOp) -> SSAValue:
    """A generic `!llvm.ptr` kernel parameter (a device address the runtime passes)."""
    return append_argument(fn, ptr())


def append_argument(fn: func.FuncOp, type: Attribute) -> SSAValue:
    """A kernel parameter of `type`, after the others."""
    entry = fn.body.blocks[0]
    arg = entry.insert_arg(type, len(entry.args))
    inputs = [*fn.function_type.inputs, type]
    fn.function_type = builtin.FunctionType.from_lists(inputs, fn.function_type.outputs.data)
    if fn.arg_attrs is not None:
        old = list(fn.arg_attrs.data)
        fn.arg_attrs = ArrayAttr([*old, *[DictionaryAttr({})] * (len(inputs) - len(old))])
    return arg


def kernel_abi(kernel: Kernel) -> KernelAbi:
    """The facts the runtime needs to launch the kernel (facts.abi)."""
    params: list[Param] = []
    for i, t in enumerate(kernel.fn.function_type.inputs.data[: kernel.arguments]):
        if isinstance(t, MemRefType):
            # -1: a dynamic dim, whatever the array brings.
            shape = tuple(max(d, -1) for d in t.get_shape())
            align = kernel.shapes.align.get(i, 1)
            strides = copy.recorded_strides(t)
            params.append(PointerParam(i, str(t.element_type), shape, align, strides))
        else:
            params.append(ScalarParam(str(t)))
    params += [SizeParam(arg, dim) for arg, dim in kernel.shapes.sizes]
    for m in kernel.tensor_maps:
        p = kernel.workspaces[m] if isinstance(m, Operation) else m
        params.append(replace(p, written=m in kernel.written_maps))
    return KernelAbi(
        kernel.fn.sym_name.data,
        tuple(params),
        copy.block_smem_bytes(kernel.arena_bytes),
        kernel.cluster,
        kernel.block_shape,
        kernel.grid_dependent,
        kernel.accesses,
        kernel.marks,
    )


@dataclass
class KernelPattern(RewritePattern):
    """A pattern that reads the facts of the kernel around the op."""

    kernels: dict[func.FuncOp, Kernel]

    def kernel(self, op: Operation) -> Kernel:
        # The pass checked that every copy op is inside a kernel.
        node = enclosing_function(op)
        assert node is not None
        return self.kernels[node]
