"""Checks of a copy's GMEM ref: the layout TMA and cp.async can address, the extent a TMA
store or reduction may write, and a view made in the kernel (rules B10, B14, C1, C2, H7, H9,
TR19)."""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, IntAttr, MemRefType, NoneAttr, StridedLayoutAttr
from xdsl.dialects.memref import ReinterpretCastOp

from copy_dialect.attributes import Implementation
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import CopyGeometry
from copy_dialect.memory import (
    GMEM,
    LAYOUT_OFFSET_FIX,
    bitwidth,
    gmem_row_stride_bytes,
    gmem_view,
    layout_offset_problem,
    memory_space,
    padded_stride,
)
from facts import hardware


def check_gmem_layout(
    g: CopyGeometry, gmem_type: MemRefType, impl: Implementation | None, cp_async_alternative: str
) -> None:
    """The GMEM ref's layout against what TMA and cp.async can address (B10, C1, C2, H7), and
    what a TMA store may write (TR19). `cp_async_alternative`: the note's ", or use impl
    cp_async" where cp.async could do the copy instead, else ""."""
    if gmem_view(g.gmem) is None:  # a view's offset is its cast's (H9)
        check_layout_offset(gmem_type)
    if impl == Implementation.BULK:
        return  # `bulk.bulk_span` checks the one range a bulk copy moves (BK1, BK2)
    layout = gmem_type.layout
    if isinstance(layout, NoneAttr):
        if impl == Implementation.TMA:
            # Rows as wide as the innermost extent: where it breaks TR19 it breaks C1
            # too, and only TR19's fix (padding the extent) mends both.
            check_store_extent(g, gmem_type)
        row_stride = gmem_row_stride_bytes(gmem_type)
        # rule: C1
        if (
            impl == Implementation.TMA
            and row_stride is not None
            and row_stride % hardware.GLOBAL_STRIDE_MULTIPLE
        ):
            padded = padded_stride(gmem_type.get_shape()[-1], g.element_type, 16)
            raise Error(
                "async_copy requires all GMEM strides except the last one to be a "
                "multiple of 16 bytes",
                note=f"the rows of {gmem_type} are {row_stride} bytes apart: pad them to "
                f"{padded} elements, a multiple of 16 bytes "
                f"({padded_rows(gmem_type, padded)})" + cp_async_alternative,
            )
        return
    # rule: B10
    if not isinstance(layout, StridedLayoutAttr):
        raise Error(
            "async_copy assumes the GMEM reference is contiguous",
            note=f"got the layout {layout}; use a row-major ref or a strided<...> layout "
            "with unit innermost stride",
        )
    strides = [s.data if isinstance(s, IntAttr) else None for s in layout.strides]
    rank = gmem_type.get_num_dims()
    # rule: B10
    if len(strides) != rank:
        extent = gmem_type.get_shape()[-1] if rank else 0
        row = None
        if impl == Implementation.TMA and extent >= 0:  # rows a multiple of 16 bytes (C1)
            row = padded_stride(extent, g.element_type, 16)
        raise Error(
            f"Expected one stride per dim in the layout of {gmem_type} ({rank}), got "
            f"{len(strides)}",
            note="give every dim its stride, outermost first, e.g. the row-major "
            f"{row_major(gmem_type, row)}",
        )
    if strides and strides[-1] != 1:
        found = "?" if strides[-1] is None else strides[-1]
        if impl == Implementation.CP_ASYNC:
            # rule: H7
            raise Error(
                "source memref most minor dim must have unit stride",
                note=f"the innermost stride is {found}; cp.async copies contiguous chunks: "
                "use a ref with innermost stride 1",
            )
        # rule: C2
        raise Error(
            "TMA requires the stride of the last dimension after transforming the GMEM "
            f"reference to be 1, but it is {found}.",
            note="copy from a ref whose innermost dimension is contiguous (stride 1)",
        )
    bits = bitwidth(gmem_type.element_type) or 8
    if impl != Implementation.TMA:
        return
    check_store_extent(g, gmem_type)
    for i, stride in enumerate(strides[:-1]):
        if stride is not None:
            check_tma_stride(
                i,
                stride * bits // 8,
                f"stride {i} is {stride} elements = {stride * bits // 8} bytes; pad it to "
                f"{padded_stride(stride, gmem_type.element_type, 16)} elements, a multiple of "
                "16 bytes",
            )


def row_major(gmem_type: MemRefType, row: int | None = None) -> MemRefType:
    """`gmem_type` with the strided layout of its row-major order, its rows (the innermost
    dim) `row` elements apart (default: the innermost extent): each outer stride is the next
    one's times that dim's extent, `?` where a dynamic extent enters it."""
    shape = gmem_type.get_shape()
    n = len(shape)
    strides: list[int | None] = [1] * n
    if n >= 2:
        first = shape[-1] if row is None else row
        strides[n - 2] = None if first == DYNAMIC_INDEX else first
        for k in range(n - 3, -1, -1):
            inner, extent = strides[k + 1], shape[k + 1]
            strides[k] = None if inner is None or extent == DYNAMIC_INDEX else inner * extent
    layout = StridedLayoutAttr(strides)
    return MemRefType(gmem_type.element_type, shape, layout, gmem_type.memory_space)


def padded_rows(gmem_type: MemRefType, padded: int) -> MemRefType:
    """The layout the C1 note suggests for a row-major ref whose rows are not a multiple of 16
    bytes apart: rows `padded` elements apart, every outer stride scaled with them, one stride
    per dim (a 2-stride layout of a 3-D ref does not describe it)."""
    return row_major(gmem_type, padded)


def check_layout_offset(gmem_type: MemRefType) -> None:
    """A GMEM ref's strided layout has offset 0 (B14): the runtime passes the address of the
    array's first element, a view's own address, and every address (the copies', the thread
    accesses', a tensor map's base) starts there; a view says what an offset would."""
    problem = layout_offset_problem(gmem_type)
    # rule: B14
    if problem is not None:
        raise Error(problem, note=LAYOUT_OFFSET_FIX)


def check_tma_stride(i: int, stride_bytes: int, pad_note: str) -> None:
    """A byte stride of a tensor map (one of the rank - 1 outer strides), whether the GMEM
    ref's layout gives it or `copy.tensormap_replace` writes it: a multiple of 16 bytes below
    2**40 (C1); `pad_note` says how to pad it."""
    # rule: C1
    if stride_bytes % hardware.GLOBAL_STRIDE_MULTIPLE:
        raise Error(
            "async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes",
            note=pad_note,
        )
    # rule: C1
    if stride_bytes >= hardware.MAX_GLOBAL_STRIDE:
        raise Error(
            f"Byte strides must be divisible by 16 and less than 2**40, but got "
            f"{stride_bytes} at index {i}",
            note="split the array: a tensor map cannot stride that far",
        )


def check_store_extent(g: CopyGeometry, gmem_type: MemRefType) -> None:
    """A TMA store or reduction writes whole 16-byte chunks (TR19): into a tensor whose
    innermost extent is not a multiple of 16 bytes it writes past that extent, into
    what follows the tensor (the next row of a wider array, or the next buffer). A
    dynamic extent is checked by the runtime on the array passed at launch."""
    if g.is_load or not gmem_type.get_num_dims():
        return
    extent = gmem_type.get_shape()[-1]
    bits = bitwidth(g.element_type) or 8
    chunk_bits = 8 * hardware.STORE_CHUNK_BYTES
    # rule: TR19
    if extent >= 0 and (extent * bits) % chunk_bits:
        chunk = max(1, chunk_bits // bits)
        padded = -(-extent // chunk) * chunk
        over = (padded - extent) * bits // 8
        padded_type = MemRefType(
            g.element_type, [*gmem_type.get_shape()[:-1], padded], gmem_type.layout
        )
        raise Error(
            "a TMA store or reduction writes whole 16-byte chunks: expected the innermost "
            f"GMEM extent to be a multiple of 16 bytes, got {extent} elements of "
            f"{g.element_type} ({extent * bits // 8} bytes), which overwrites {over} bytes "
            "after each innermost row",
            note=f"pad the innermost dimension to a multiple of {chunk} elements (here "
            f"{padded}: {padded_type}), or store the elements with threads (memref.store)",
        )


def check_gmem_view(cast: ReinterpretCastOp) -> None:
    """A view of a GMEM array made in the kernel (`memory.gmem_view`), as the lowerings read
    it: its base from the source and the cast's offset, its sizes and strides from the
    cast's operands. Its type must say the same (H9): every stride and the offset static
    in the layout where the cast gives a constant (the same one), `?` where it gives a
    value, as upstream MLIR's verifier of memref.reinterpret_cast asks (xDSL checks the
    sizes only); the rules that read the type (H2, H6, H7) then read what the copy does."""
    source, view = cast.source.type, cast.result.type
    assert isinstance(source, MemRefType)
    assert isinstance(view, MemRefType)
    # rule: H9
    if memory_space(source) != GMEM or source.element_type != view.element_type:
        raise Error(
            f"expected a GMEM view of a GMEM array of the same element type, got a "
            f"memref.reinterpret_cast of {source} to {view}",
            note="view a GMEM array (a kernel argument) with its own element type",
        )
    given = [*cast.static_offsets.get_values(), *cast.static_strides.get_values()]
    layout = view.layout
    if isinstance(layout, StridedLayoutAttr):
        offset = layout.offset
        said = [
            s.data if isinstance(s, IntAttr) else DYNAMIC_INDEX
            for s in (offset, *layout.strides.data)
        ]
    else:
        said = None
    # rule: H9
    if said != given:
        values = [None if v == DYNAMIC_INDEX else v for v in given]
        expected = MemRefType(
            view.element_type, view.get_shape(), StridedLayoutAttr(values[1:], values[0])
        )
        names = ["the offset", *(f"stride {i}" for i in range(len(given) - 1))]
        differ = (
            [f"{n} is {_entry(a)} where the cast gives {_entry(b)}"
             for n, a, b in zip(names, said, given, strict=True) if a != b]
            if said is not None and len(said) == len(given)
            else [f"the layout {layout} gives no offset and strides"]
        )  # fmt: skip
        raise Error(
            "expected the view's layout to give the offset and strides its "
            f"memref.reinterpret_cast gives, got {view}: {', '.join(differ)}",
            note=f"give the view the type {expected} in place of {view}: a `?` where the cast "
            "takes a value, the constant where it takes one",
        )


def _entry(value: int) -> str:
    return "a value (?)" if value == DYNAMIC_INDEX else str(value)
