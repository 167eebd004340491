"""The debug guards (`convert-copy-to-nvvm{debug-guards=true}`, `copy-opt --debug-guards`,
`runtime.compile(..., debug_guards=True)`): device-side checks of what the verifier cannot
prove because the value is only known at run time, each reported with the id of its rule:

- TR12: the innermost coordinate of a TMA copy (load, store, reduction), in bytes, is a
  multiple of 16;
- TR13: the coordinates of a TMA store or reduction are >= 0;
- IC13: the channel coordinate of a TMA im2col load (its innermost), in bytes, is a
  multiple of 16;
- IC11: the im2col offsets of a TMA im2col load of rank 4 or 5 fit their map's precision;
- K4: the coordinates of a TMA copy, im2col load or prefetch fit in .s32 (the lowering keeps
  the low 32 bits of each);
- P9: a barrier index is in the group (`async_copy`, `barrier_arrive`,
  `barrier_arrive_expect_tx`, `barrier_wait`);
- P6: a `barrier_wait` completes within WAIT_TIMEOUT_NS; a phase that does not is a deadlock;
- AS3: the fact a `copy.assume` states of a value holds (its range, its divisor).

The verifier proves TR12, TR13, IC13, IC11, K4 and the index bound (I2) for compile-time
constants, so those values get no guard; every `barrier_wait` is bounded. A guard is
evaluated by the thread that issues the op (the elected thread for TMA copies and
`barrier_arrive_expect_tx`, every thread that reaches a `barrier_arrive`, `barrier_wait` or
`assume`). When it fails, the thread prints (CUDA's `vprintf`) `copy-dialect guard <RULE>:
<what> at <file>:<line>:<col>` with the run-time values, then traps: the launch fails
instead of faulting later or hanging.

`Guards` is the module's part of it: one constant format string per message, the `vprintf`
declaration, and one argument buffer (an `alloca` at the kernel's entry) per kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import FileLineColLoc, IntegerType, StringAttr, i32, i64
from xdsl.ir import Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.im2col import offset_range
from copy_dialect.verify_common import constant_int
from passes.convert_copy_to_nvvm.barriers import TRY_WAIT_TICKS
from passes.convert_copy_to_nvvm.emit import Emit
from passes.llvm_types import lowered, ptr

WAIT_TIMEOUT_NS = 250_000_000
"""How long a guarded `barrier_wait` waits (by `%globaltimer`) before it reports P6 and traps.
A phase of a correct kernel completes in microseconds (its copies' bytes landing, its block's
threads arriving); 250 ms is far above that, also for a block that the GPU time-slices away
for a while, and leaves most of a second for the trap, the printout and the failing launch to
reach the host, so that a deadlocked kernel ends within a second of its launch."""

PRINTED_VALUES = 2
"""The most run-time values a guard prints: the slots of a kernel's argument buffer."""

VPRINTF = "vprintf"
"""CUDA's device printf: `i32 vprintf(ptr format, ptr arguments)`, the arguments packed in a
buffer at their natural alignment (each value here an i64, printed with `%lld`)."""

# One try (or test) of the phase, then `%globaltimer` against the bound; $0 is 1 when the phase
# completed, 0 when the bound passed first. Braces scope the registers and the labels,
# ${:uid} keeps copies of the asm distinct.
_BOUNDED_WAIT = (
    "{{ .reg .pred P1; .reg .b64 T0, T1; mov.u64 T0, %globaltimer; "
    "LAB_WAIT_${{:uid}}: {test}; @P1 bra DONE_${{:uid}}; "
    "mov.u64 T1, %globaltimer; sub.u64 T1, T1, T0; "
    "setp.lt.u64 P1, T1, {timeout}; @P1 bra LAB_WAIT_${{:uid}}; "
    "DONE_${{:uid}}: selp.u32 $0, 1, 0, P1; }}"
)


@dataclass
class Guards:
    """The guards of one module: the format strings its messages use and the argument
    buffer of each kernel, emitted as the patterns ask for checks."""

    formats: dict[str, str] = field(default_factory=dict[str, str])
    """Each message's text -> the symbol of its constant global."""
    buffers: dict[func.FuncOp, SSAValue] = field(default_factory=dict[func.FuncOp, SSAValue])

    # The checks, one per rule.

    def coordinates(
        self, e: Emit, fn: func.FuncOp, g: copy.CopyGeometry, coords: Sequence[SSAValue]
    ) -> None:
        """K4, TR12 and TR13 for the dynamic coordinates of a TMA copy: `coords` are the
        lowered `g.gmem_indices` (i64), as the op gives them."""
        op = g.op
        self.coordinate_range(e, fn, op, g.gmem_indices, coords)
        what = "the innermost TMA coordinate must be a multiple of 16 bytes, got %lld (%lld bytes)"
        self.inner_alignment(e, fn, g, coords, "TR12", what)
        if g.is_load:
            return
        for i, (index, coord) in enumerate(zip(g.gmem_indices, coords, strict=True)):
            if constant_int(index) is None:
                negative = e.icmp("slt", coord, 0)
                what = f"TMA store coordinates must be >= 0, got %lld at index {i}"
                self.check(e, fn, op, "TR13", negative, what, [coord])

    def im2col_channel(
        self, e: Emit, fn: func.FuncOp, g: copy.Im2colGeometry, coords: Sequence[SSAValue]
    ) -> None:
        """IC13 for the dynamic channel coordinate (the innermost) of a TMA im2col load:
        `coords` are the lowered `g.gmem_indices` (i64)."""
        what = (
            "the channel coordinate of a TMA im2col load must be a multiple of 16 bytes, got "
            "%lld (%lld bytes)"
        )
        self.inner_alignment(e, fn, g, coords, "IC13", what)

    def im2col_offsets(
        self, e: Emit, fn: func.FuncOp, g: copy.Im2colGeometry, offsets: Sequence[SSAValue]
    ) -> None:
        """IC11 for the dynamic im2col offsets of a TMA im2col load (`offsets`: the lowered
        `g.offsets`, i16): each, as unsigned 16 bits, within its map's precision ([0, 255]
        for rank 4, [0, 31] for rank 5; a rank-3 map takes every 16-bit value)."""
        rank = g.gmem_type.get_num_dims()
        _, high = offset_range(rank)
        if high >= 0xFFFF:
            return
        for i, (offset, value) in enumerate(zip(g.offsets, offsets, strict=True)):
            if constant_int(offset) is not None:
                continue
            unsigned = e.resize(value, i64)
            outside = e.icmp("ugt", unsigned, high)
            what = (
                f"the im2col offset %lld at spatial dim {i} is outside [0, {high}], the range of "
                f"a rank-{rank} map"
            )
            self.check(e, fn, g.op, "IC11", outside, what, [unsigned])

    def inner_alignment(
        self,
        e: Emit,
        fn: func.FuncOp,
        g: copy.CopyGeometry,
        coords: Sequence[SSAValue],
        rule: str,
        what: str,
    ) -> None:
        """The innermost coordinate of a TMA copy or im2col load, if dynamic, times the
        element size is a multiple of 16 bytes (TR12, IC13); `what` prints the coordinate
        and its bytes."""
        if constant_int(g.gmem_indices[-1]) is not None:
            return
        # TMA element types are whole bytes (C11).
        assert g.element_bits % 8 == 0
        inner = coords[-1]
        inner_bytes = e.mul(inner, g.element_bits // 8)
        # `& 15` is Python's `% 16` (the verifier's) for negative values too.
        misaligned = e.icmp("ne", e.binary(llvm.AndOp, inner_bytes, 15), 0)
        self.check(e, fn, g.op, rule, misaligned, what, [inner, inner_bytes])

    def coordinate_range(
        self,
        e: Emit,
        fn: func.FuncOp,
        op: Operation,
        indices: Sequence[SSAValue],
        coords: Sequence[SSAValue],
    ) -> None:
        """K4 for the dynamic coordinates of a TMA op: each lowered index (i64) fits in the
        instruction's .s32 coordinate (`coord + 2^31` unsigned <= 2^32 - 1)."""
        for i, (index, coord) in enumerate(zip(indices, coords, strict=True)):
            if constant_int(index) is None:
                shifted = e.add(coord, 2**31)
                outside = e.icmp("ugt", shifted, 2**32 - 1)
                what = (
                    f"the TMA coordinate %lld at index {i} is outside the signed 32-bit range "
                    "[-2147483648, 2147483647]: the instruction would address %lld"
                )
                wrapped = e.resize(coord, i32)
                self.check(e, fn, op, "K4", outside, what, [coord, wrapped])

    def bulk_bounds(
        self,
        e: Emit,
        fn: func.FuncOp,
        op: Operation,
        g: copy.BoxGeometry,
        coords: Sequence[SSAValue],
    ) -> None:
        """BK4 for the dynamic coordinates of a bulk copy or prefetch (`oob
        promise_in_bounds`: it can neither clip nor fill): each box origin lies in
        [0, size - box] of its dim (unsigned: a negative origin is outside too)."""
        shape = g.gmem_type.get_shape()
        for i, (index, coord) in enumerate(zip(g.gmem_indices, coords, strict=True)):
            if constant_int(index) is None:
                last = shape[i] - g.gmem_box[i]
                outside = e.icmp("ugt", coord, last)
                what = (
                    f"the bulk box origin %lld along dim {i} is outside [0, {last}]: the "
                    "box leaves the array"
                )
                self.check(e, fn, op, "BK4", outside, what, [coord])

    def barrier_index(
        self, e: Emit, fn: func.FuncOp, op: Operation, barrier: SSAValue, index: SSAValue | None
    ) -> None:
        """P9 for a dynamic barrier index: it is < the group's size (unsigned: a negative
        index is out of bounds too)."""
        if index is None or constant_int(index) is not None:
            return
        assert isinstance(group := barrier.type, copy.BarrierType)
        count = group.count.data
        (value,) = lowered([index], e.ops)
        outside = e.icmp("uge", value, count)
        what = f"barrier index %lld is out of bounds of {group} (barriers 0 to {count - 1})"
        self.check(e, fn, op, "P9", outside, what, [value])

    def bounded_wait(
        self,
        e: Emit,
        fn: func.FuncOp,
        op: copy.BarrierWaitOp,
        address: SSAValue,
        phase: SSAValue,
        has_try_wait: bool,
    ) -> None:
        """P6: waits on the phase of parity `phase` (i32) of the mbarrier at `address` for at
        most WAIT_TIMEOUT_NS (`try_wait.parity` on sm_90+, `test_wait.parity` before)."""
        if has_try_wait:
            test = f"mbarrier.try_wait.parity.shared::cta.b64 P1, [$1], $2, {TRY_WAIT_TICKS}"
        else:
            test = "mbarrier.test_wait.parity.shared.b64 P1, [$1], $2"
        asm = _BOUNDED_WAIT.format(test=test, timeout=WAIT_TIMEOUT_NS)
        wait = llvm.InlineAsmOp(
            asm, "=r,l,r,~{memory}", [address, phase], [i32], has_side_effects=True
        )
        completed = e(wait).results[0]
        timed_out = e.icmp("eq", completed, 0)
        index = e.const(0) if op.index is None else lowered([op.index], e.ops)[0]
        assert isinstance(group := op.barrier.type, copy.BarrierType)
        what = (
            f"barrier_wait on barrier %lld of {group} with parity %lld did not complete within "
            f"{WAIT_TIMEOUT_NS // 1_000_000} ms: no arrival completes that phase (deadlock)"
        )
        self.check(e, fn, op, "P6", timed_out, what, [index, phase])

    def assumption(self, e: Emit, fn: func.FuncOp, op: copy.AssumeOp, value: SSAValue) -> None:
        """AS3: the fact `op` states holds of `value`, its operand lowered (an index as i64),
        read as the fact reads it (signed; an i1 as 0 or 1)."""
        assert isinstance(t := value.type, IntegerType)
        wide = e.resize(value, i64, signed=t.width.data > 1)
        broken: list[SSAValue] = []
        if op.lo is not None:
            broken.append(e.icmp("slt", wide, op.lo))
        if op.hi is not None:
            broken.append(e.icmp("sgt", wide, op.hi))
        if op.step > 1:
            broken.append(e.icmp("ne", e.binary(llvm.SRemOp, wide, op.step), 0))
        if not broken:
            return
        failed = broken[0]
        for other in broken[1:]:
            failed = e.binary(llvm.OrOp, failed, other)
        name = op.subject().replace("%", "%%")
        what = f"the assumption {name} {op.fact()} does not hold: {name} is %lld"
        self.check(e, fn, op, "AS3", failed, what, [wide])

    # The report.

    def check(
        self,
        e: Emit,
        fn: func.FuncOp,
        op: Operation,
        rule: str,
        failed: SSAValue,
        what: str,
        values: Sequence[SSAValue],
    ) -> None:
        """Where `failed` (i1) holds: print `copy-dialect guard <rule>: <what> at <where>`
        (`what` a printf format of `values`, each printed as `%lld`), then trap."""
        assert len(values) <= PRINTED_VALUES
        text = f"copy-dialect guard {rule}: {what} at {source_location(op)}\n"
        report = Emit()
        buffer = self.buffer(fn)
        for slot, value in enumerate(values):
            assert isinstance(value.type, IntegerType)
            wide = report.resize(value, i64, signed=value.type.width.data > 1)
            report(llvm.StoreOp(wide, report.byte_offset(buffer, 8 * slot), alignment=8))
        fmt = report(llvm.AddressOfOp(self.format(text), ptr())).results[0]
        report(llvm.CallOp(VPRINTF, fmt, buffer, return_type=i32))
        report(llvm.CallIntrinsicOp("llvm.trap", [], []))
        e.if_(failed, report.ops)

    def format(self, text: str) -> str:
        """The symbol of the constant global that holds `text` (NUL-terminated)."""
        return self.formats.setdefault(text, f"__copy_guard_{len(self.formats)}")

    def buffer(self, fn: func.FuncOp) -> SSAValue:
        """The kernel's vprintf argument buffer, allocated at its entry on first use."""
        if fn not in self.buffers:
            e = Emit()
            one = e.const(1, i32)
            slots = llvm.LLVMArrayType(PRINTED_VALUES, i64)
            self.buffers[fn] = e(llvm.AllocaOp(one, slots, alignment=8)).results[0]
            entry = fn.body.blocks[0]
            assert entry.first_op is not None  # the kernel's prologue
            entry.insert_ops_before(e.ops, entry.first_op)
        return self.buffers[fn]

    def module_ops(self) -> list[Operation]:
        """The module-level ops the guards need: the format strings and `vprintf`."""
        if not self.formats:
            return []
        ops: list[Operation] = []
        for text, name in self.formats.items():
            size = len(text.encode()) + 1
            ops.append(
                llvm.GlobalOp(
                    llvm.LLVMArrayType(size, IntegerType(8)),
                    name,
                    "private",
                    constant=True,
                    value=StringAttr(text + "\0"),
                    alignment=1,
                )
            )
        signature = llvm.LLVMFunctionType([ptr(), ptr()], i32)
        ops.append(llvm.FuncOp(VPRINTF, signature, linkage=llvm.LinkageAttr("external")))
        return ops


def source_location(op: Operation) -> str:
    """`file:line:col` of the op, or its name where it has no file location; `%` escaped
    for printf."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    else:
        where = f"'{op.name}' (no source location)"
    return where.replace("%", "%%")
