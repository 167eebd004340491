"""The cp.async rules of `copy.async_copy`: what every thread's 4-, 8- or 16-byte chunks
need (alignment, GMEM strides it can compute, the cache modifier, the OOB fill), and the
view made in the kernel that a copy may read from (H9)."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from copy_dialect.attributes import CacheMode, OOBMode
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import CopyGeometry, cp_async_chunk_bytes
from copy_dialect.gmem import check_gmem_view
from copy_dialect.memory import (
    bitwidth,
    gmem_row_stride_bytes,
    gmem_view,
    has_dynamic_layout_stride,
    padded_stride,
)
from copy_dialect.verify_common import constant_int


def verify_copy(g: CopyGeometry, *, cache: CacheMode | None, tma_alternative: str) -> None:
    """The rules of a cp.async `copy.async_copy`, in the order they are reported; `cache` is
    the op's cache mode, `tma_alternative` the end of a note that offers TMA instead."""
    bits = bitwidth(g.element_type) or 8
    row_bytes = g.box_shape[-1] * bits // 8
    # rule: A6
    if g.oob not in (OOBMode.ZEROS, OOBMode.PROMISE_IN_BOUNDS):
        raise Error(
            "The cp.async implementation only supports oob promise_in_bounds or zeros, "
            f"got {g.oob}",
            note="cp.async zero-fills out-of-bounds bytes (src-size) and cannot fill NaN: use "
            "oob zeros",
        )
    # rule: H2
    if g.swizzle_bytes != 16:
        raise Error(
            "Swizzle is not supported for CP_ASYNC copies",
            note="drop the swizzle (cp.async writes a plain #copy.smem buffer)" + tma_alternative,
        )
    # rule: H2
    if row_bytes % 4:
        raise Error(
            "CP_ASYNC requires at least 4 bytes per transfer",
            note=f"the innermost box row is {row_bytes} bytes; cp.async moves 4, 8 or 16 "
            "bytes at a time: make the row a multiple of 4 bytes",
        )
    row_stride = gmem_row_stride_bytes(g.gmem_type)
    # rule: H2
    if row_stride is not None and row_stride % 4:
        raise Error(
            "CP_ASYNC requires at least 4 bytes per transfer",
            note=f"the GMEM rows are {row_stride} bytes apart, so a row can start at an "
            "address no cp.async copy may read: pad the rows to a multiple of 4 bytes "
            f"({padded_stride(g.gmem_type.get_shape()[-1], g.element_type, 4)} elements)",
        )
    inner = constant_int(g.gmem_indices[-1]) if g.gmem_indices else None
    # rule: H2
    if inner is not None and (inner * bits // 8) % 4:
        raise Error(
            "CP_ASYNC requires at least 4 bytes per transfer",
            note=f"the innermost coordinate {inner} starts {inner * bits // 8} bytes into a "
            "row, not at a 4-byte boundary that a cp.async copy may read from: start at a "
            f"multiple of {max(1, 32 // bits)} elements",
        )
    view = gmem_view(g.gmem)
    if view is not None:
        check_gmem_view(view)
    # rule: H8
    elif has_dynamic_layout_stride(g.gmem_type):
        raise Error(
            "the cp.async implementation needs the GMEM strides at compile time, from the "
            "array's sizes or from the memref.reinterpret_cast that made the ref: expected a "
            "row-major ref, a strided layout of static strides or a view made in the kernel, "
            f"got {g.gmem_type}",
            note="every thread computes its chunks' addresses from the strides, and the "
            "runtime passes only the sizes of a dynamic array (it takes contiguous arrays): "
            "drop the strided layout (a row-major ref, whose strides follow from its sizes), "
            "view the array with memref.reinterpret_cast in the kernel (its stride operands "
            "are the strides), or use impl tma (sm_90+), whose tensor map takes the strides "
            "at launch",
        )
    chunk = cp_async_chunk_bytes(g)
    # rule: H2
    if chunk is None:
        raise Error(
            "CP_ASYNC requires at least 4 bytes per transfer",
            note=f"a GMEM stride of {g.gmem_type} is not a multiple of 4 bytes, so a row can "
            "start at an address no cp.async copy may read: pad the rows to a multiple of 4 "
            "bytes",
        )
    # rule: H6
    if cache == CacheMode.CG and chunk != 16:
        why = (
            f"the innermost box row is {row_bytes} bytes"
            if row_bytes % 16
            else "a GMEM row stride or the innermost coordinate is not a multiple of 16 bytes"
        )
        raise Error(
            "CG cache modifier is only support for 16 bytes copy.",
            note=f"this copy moves {chunk}-byte chunks ({why}); use cache ca",
        )


def verify_tracked(op: Operation, g: CopyGeometry) -> None:
    """A cp.async copy (`copy.async_copy` or `copy.im2col_load`) on a barrier is
    mbarrier-tracked: each issuing thread arrives once (`cp.async.mbarrier.arrive.noinc`,
    sm_80) when its chunks have landed. The arrival is the copy's completion, so it cannot
    be left out, and it carries no bytes (that no op gives its group transaction bytes,
    MB12, is a kernel rule: `analysis.kernel.barriers`)."""
    assert g.barrier is not None
    arrive = op.properties.get("arrive")
    # rule: MB13
    if isinstance(arrive, IntegerAttr) and not arrive.value.data:
        raise Error(
            "a cp.async copy on a barrier arrives on it (cp.async.mbarrier.arrive.noinc: "
            "one arrival per issuing thread once its chunks land), but it has arrive = false",
            note="drop arrive = false and count one arrival per issuing thread in the "
            "barrier's arrivals, or drop the barrier and wait with copy.commit_group "
            "cp_async + copy.wait_group cp_async",
        )
