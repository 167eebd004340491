"""The sizes of dynamic GMEM arrays that a kernel needs at run time: which ones (the
analysis, `kernel_shapes`), and where the lowerings find them (`ref_layout`).

Memrefs lower to bare pointers. A TMA copy of a dynamic-shape ref needs nothing more: the
runtime encodes its tensor map from the array at launch. A cp.async copy and a thread
access (`memref.load`, `memref.store`, `memref.atomic_rmw`, `vector.load`, `vector.store`)
compute addresses from the ref's strides, which in a row-major ref follow from its sizes
(all but the outermost); a zero-filling cp.async copy also clips its chunks to the sizes
(all of them), and `memref.dim` reads one. Each such dynamic size becomes an i64 parameter
of the kernel (`facts.abi.SizeParam`, after the caller's arguments) that the runtime
fills from the array it is given, as MLIR's memref descriptor carries the sizes, but only
those the kernel reads.

A view made in the kernel (`memref.reinterpret_cast`, `copy_dialect.memory.gmem_view`: a
group of a pool, say) needs no parameter: its sizes and strides are the cast's operands,
values the kernel computed, and its base is its source's pointer plus the cast's offset
(convert-memref-to-llvm lowers the cast to that address). `ref_sizes` and `ref_layout` say,
for either kind of ref, where its sizes and strides come from.

`kernel_shapes` decides, once per kernel and from the IR as written, which sizes, and the
alignment the runtime checks of each array a cp.async copy reads (`PointerParam.align`: the
smallest chunk it moves, the one of a static pitch or the smallest a dynamic one may pick)
or the kernel assumes (`memref.assume_alignment` of the argument: the wide thread stores
copy-legalize makes of a TMA store).
convert-copy-to-nvvm appends the parameters and records them in the kernel's ABI
(`copy.abi`); the lowerings read them back from there (`abi_sizes`), or, within
convert-copy-to-nvvm, from the kernel it appended them to: none derives them again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import func, memref, vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_dialect.memory import gmem_view
from copy_dialect.verify_common import constant_int
from passes.abi import recorded_abi
from passes.convert_copy_to_nvvm.emit import Emit, fail
from passes.llvm_types import lowered

Sizes = Mapping[tuple[int, int], SSAValue]
"""The i64 value of each size parameter of a kernel, by (argument, dim)."""


@dataclass(frozen=True)
class KernelShapes:
    """What a kernel needs of its dynamic GMEM arrays at run time."""

    sizes: tuple[tuple[int, int], ...]
    """(argument, dim) of each size parameter, in parameter order."""
    align: Mapping[int, int]
    """The `PointerParam.align` of each argument that asks for one."""


def cp_async_chunks(op: copy.AsyncCopyOp, g: copy.CopyGeometry) -> tuple[int, ...]:
    """The chunk sizes a cp.async copy `op` (of geometry `g`) may move, largest first
    (`copy.cp_async_chunks` with the op's cache mode): the one the lowering uses, or, for a
    dynamic row pitch, those it picks from at run time."""
    cg = op.cache is not None and op.cache.data == copy.CacheMode.CG
    return copy.cp_async_chunks(g, cg)


def kernel_shapes(fn: func.FuncOp) -> KernelShapes:
    """The size parameters kernel `fn` needs and the alignment it asks of its arrays."""
    dims: dict[int, set[int]] = {}
    align: dict[int, int] = {}
    assumed: dict[int, int] = {}
    entry = fn.body.blocks[0] if fn.body.blocks else None
    for op in fn.walk():
        if isinstance(op, memref.AssumeAlignmentOp):
            arg = _entry_argument(op.memref, entry)
            if arg is not None and copy.memory_space(_memref(arg)) == copy.GMEM:
                n = op.alignment.value.data
                assumed[arg.index] = max(assumed.get(arg.index, 1), n)
            continue
        for ref, needed, chunk in _needs(op):
            t = ref.type
            assert isinstance(t, MemRefType)
            dynamic = {d for d in needed if t.get_shape()[d] < 0}
            if copy.memory_space(t) != copy.GMEM or not (dynamic or chunk) or gmem_view(ref):
                continue  # a view's sizes and strides are its cast's operands
            if not isinstance(ref, BlockArgument) or ref.block is not entry:
                raise fail(
                    op,
                    f"expected a kernel argument for the dynamic GMEM ref of type {t} (the "
                    "runtime passes the sizes of the arrays it is given), got "
                    + _not_an_argument(ref, entry),
                )
            dims.setdefault(ref.index, set()).update(dynamic)
            if chunk is not None:
                align[ref.index] = min(align.get(ref.index, chunk), chunk)
    sizes = tuple((arg, d) for arg in sorted(dims) for d in sorted(dims[arg]))
    for arg, n in assumed.items():
        align[arg] = max(align.get(arg, 1), n)
    return KernelShapes(sizes, align)


def _entry_argument(ref: SSAValue, entry: Block | None) -> BlockArgument | None:
    """The kernel argument `ref` is (through `memref.assume_alignment`), None if none."""
    while isinstance(ref.owner, memref.AssumeAlignmentOp):
        ref = ref.owner.memref
    return ref if isinstance(ref, BlockArgument) and ref.block is entry else None


def _not_an_argument(ref: SSAValue, entry: Block | None) -> str:
    """What made `ref`, and the kernel argument to address instead where it was made from
    one."""
    owner = ref.owner
    if not isinstance(owner, Operation):
        return "an argument of an inner block: address a kernel argument itself"
    source = next(
        (v for v in owner.operands if isinstance(v, BlockArgument) and v.block is entry), None
    )
    if source is None:
        return f"a value made by {owner.name}: address a kernel argument itself"
    name = f"%{source.name_hint}" if source.name_hint else f"argument {source.index}"
    return f"a value made by {owner.name} from {name}: address {name} itself"


def _needs(op: Operation) -> Iterator[tuple[SSAValue, Sequence[int], int | None]]:
    """The refs `op` addresses, the dims whose sizes it reads, and the smallest chunk a
    cp.async copy moves (None: no cp.async copy)."""
    if isinstance(op, copy.AsyncCopyOp):
        if (g := _cp_async_load(op)) is None:
            return
        t = g.gmem_type
        needed = list(range(t.get_num_dims())) if g.oob == copy.OOBMode.ZEROS else []
        # Its chunks are aligned to their size, so the array's address must be too: the
        # one chunk of a static pitch, the smallest a dynamic one may pick at run time.
        chunks = cp_async_chunks(op, g)
        yield g.gmem, [*_stride_dims(t), *needed], chunks[-1] if chunks else None
    elif isinstance(op, memref.LoadOp | memref.StoreOp | memref.AtomicRMWOp):
        yield op.memref, _stride_dims(_memref(op.memref)), None
    elif isinstance(op, vector.LoadOp | vector.StoreOp):
        yield op.base, _stride_dims(_memref(op.base)), None
    elif isinstance(op, memref.DimOp) and isinstance(op.source.type, MemRefType):
        dim = constant_int(op.index)
        if dim is not None and 0 <= dim < op.source.type.get_num_dims():
            yield op.source, [dim], None


def _cp_async_load(op: copy.AsyncCopyOp) -> copy.CopyGeometry | None:
    """The geometry of `op` if it is a cp.async load, else None (a TMA or bulk copy is not
    decoded). Decoded for `kernel_shapes` alone, not kept for the copy's rewrite:
    `kernel_shapes` runs before the kernel's ops are rewritten, and those rewrites replace
    values a geometry holds (the SMEM ref, the barrier group, the indices), so the copy's
    pattern decodes its own where its rewrite starts (`copies`); what this phase keeps, the
    sizes and alignment of the kernel's arrays, is static."""
    if not op.is_cp_async():
        return None
    g = op.geometry()
    return g if g.is_load else None


def _memref(value: SSAValue) -> MemRefType:
    assert isinstance(t := value.type, MemRefType)
    return t


def _stride_dims(t: MemRefType) -> range:
    """The dims whose sizes a row-major ref's strides are made of: all but the outermost
    (a strided layout gives its strides itself)."""
    return range(1, t.get_num_dims()) if isinstance(t.layout, NoneAttr) else range(0)


def abi_sizes(fn: Operation) -> dict[tuple[int, int], SSAValue]:
    """The size parameters of kernel `fn` (a `func.func` or `llvm.func`) as its ABI record
    (`copy.abi`) lists them: its entry block's arguments at their parameter indices."""
    abi = recorded_abi(fn)
    if abi is None or not fn.regions or not fn.regions[0].blocks:
        return {}
    args = fn.regions[0].blocks[0].args
    return {key: args[i] for key, i in abi.sizes.items()}


def enclosing_kernel(op: Operation) -> Operation | None:
    node = op.parent_op()
    while node is not None and not isinstance(node, func.FuncOp):
        node = node.parent_op()
    return node


def ref_sizes(
    ref: SSAValue, op: Operation, e: Emit, sizes: Sizes | None = None
) -> list[int | SSAValue]:
    """The sizes of the ref `op` addresses: ints where static; where dynamic, the i64 size
    parameters of the kernel (`sizes`, by default those of its ABI record: `abi_sizes`), -1
    for a dynamic size the kernel has no parameter for (one it does not read), or, for a
    view made in the kernel, its cast's size operands (as i64, cast in `e`)."""
    t = _memref(ref)
    shape = t.get_shape()
    if all(d >= 0 for d in shape):
        return list(shape)
    if (view := gmem_view(ref)) is not None:
        return _mixed(view.static_sizes.get_values(), view.sizes, e)
    if sizes is None:
        kernel = enclosing_kernel(op)
        sizes = abi_sizes(kernel) if kernel is not None else {}
    arg = ref.index if isinstance(ref, BlockArgument) else -1
    return [d if d >= 0 else sizes.get((arg, i), -1) for i, d in enumerate(shape)]


def check_size(size: int | SSAValue, dim: int, t: MemRefType, op: Operation) -> None:
    """A size the lowering of `op` reads has a value (static, or a size parameter)."""
    if isinstance(size, int) and size < 0:
        raise fail(
            op,
            f"needs size {dim} of {t}, which the kernel has no parameter for: only a kernel "
            "(a function with copy ops, lowered by convert-copy-to-nvvm) gets the sizes of its "
            "dynamic arrays, each a parameter the runtime fills from the array",
        )


def ref_layout(
    ref: SSAValue, op: Operation, e: Emit, sizes: Sizes | None = None
) -> tuple[list[int | SSAValue], list[int | SSAValue]]:
    """The sizes (`ref_sizes`) and element strides of the ref `op` addresses: ints where
    static, i64 values where they come from the kernel's size parameters (a row-major
    ref's strides: products of its sizes, emitted into `e`) or from the cast that made a
    view."""
    t = _memref(ref)
    if (view := gmem_view(ref)) is not None:
        strides = _mixed(view.static_strides.get_values(), view.strides, e)
        return ref_sizes(ref, op, e, sizes), strides
    strides = copy.element_strides(t)
    if strides is None or copy.has_dynamic_layout_stride(t):
        raise _error_at(
            op,
            f"the lowering takes memrefs whose strides are static or follow from their sizes, "
            f"got {t}",
            "drop the strided layout (a row-major ref), or give every stride a size",
        )
    offset_problem = copy.layout_offset_problem(t)
    # B14 again, for the thread accesses, which the verifier does not see.
    if offset_problem is not None and copy.memory_space(t) == copy.GMEM:
        raise _error_at(op, offset_problem, copy.LAYOUT_OFFSET_FIX)
    dims = ref_sizes(ref, op, e, sizes)
    if None not in strides:
        return dims, list(strides)  # type: ignore[arg-type]
    out: list[int | SSAValue] = [1] * len(dims)
    for i in reversed(range(len(dims) - 1)):
        check_size(dims[i + 1], i + 1, t, op)
        out[i] = _mul(e, out[i + 1], dims[i + 1])
    return dims, out


def _error_at(op: Operation, message: str, note: str) -> CopyVerifyException:
    """A lowering error that copy-opt reports at `op`."""
    error = CopyVerifyException(f"'{op.name}' op: {message}", note=note)
    error.op = op  # type: ignore[attr-defined]  # copy-opt reports it at the op
    return error


def _mixed(static: Sequence[int], dynamic: Sequence[SSAValue], e: Emit) -> list[int | SSAValue]:
    """A cast's static-or-dynamic list (`memref.reinterpret_cast`'s sizes, strides): the
    static entries, and each dynamic one's operand as an i64 value."""
    values = iter(lowered(dynamic, e.ops))
    return [next(values) if v == DYNAMIC_INDEX else v for v in static]


def size_value(sizes: Sequence[int | SSAValue], dim: int, e: Emit) -> SSAValue:
    """Size `dim` as an i64 value (a constant where it is static)."""
    size = sizes[dim]
    return e.const(size, i64) if isinstance(size, int) else size


def _mul(e: Emit, a: int | SSAValue, b: int | SSAValue) -> int | SSAValue:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, int):
        a, b = b, a
    assert isinstance(a, SSAValue)
    return e.mul(a, b)
