"""copy-legalize's TMA stores and reductions on a target without TMA (passes/legalize.py):
thread stores of the tile by the issuing group's threads (the block's, or in a role the
role's), which walk the box in row-major order (consecutive threads, consecutive elements
of a row: coalesced), each element stored when it lies inside the GMEM array (the TMA
store's clipping), 16 bytes at a time where the tile's rows and the array allow it
(`store_width`); a TMA reduction does the same walk with thread atomics of the matching
kind (`portability.thread_atomic`).
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

from xdsl.dialects import arith, func, gpu, memref, scf, vector
from xdsl.dialects.builtin import IndexType, VectorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from copy_dialect import ops as copy
from copy_dialect import portability
from copy_dialect.verify_common import known_multiple
from passes.legalize_common import appender, box_coords, kernel_argument
from passes.legalize_common import index_constant as _index

STORE_ALIGNMENT = 16
"""The bytes a thread store's vector spans, and the alignment the legalized kernel assumes
(`memref.assume_alignment`) of an array it stores vectors to: TMA asked the array for
16-byte alignment already (a tensor map's global address)."""


class ThreadStores:
    """One kernel's TMA stores and reductions, rewritten into thread stores."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.atomics: dict[copy.AsyncCopyOp, str] = {}
        """The thread atomic of each TMA reduction (`portability.thread_atomic`)."""
        self.assumed: dict[SSAValue, SSAValue] = {}
        """Each array thread stores write vectors to, and its `memref.assume_alignment`."""

    def rewrite(self, store: copy.AsyncCopyOp, index: SSAValue | None, threads: int) -> None:
        """Thread stores of `store`'s tile, clipped to the GMEM array (a reduction's: thread
        atomics, `memref.atomic_rmw`). Where the tile's rows and the array allow it
        (`store_width`), each thread stores 16 bytes at a time (`vector.load` from SMEM,
        `vector.store` to the array through `memref.assume_alignment`: the 16-byte
        alignment TMA asked of the array); a column origin not known to be a multiple of the
        vector is checked at run time, with the element-wise walk in the other branch. The
        group of `threads` threads (the block's, `index` None, or a role's) stores it."""
        g = store.geometry()
        ops: list[Operation] = []
        emit = appender(ops)

        x = gpu.DimensionAttr(gpu.DimensionEnum.X)
        tid = index if index is not None else emit(gpu.ThreadIdOp(x))
        step = emit(_index(threads))
        width = 1 if store in self.atomics else store_width(g)
        origin = g.gmem_indices[-1]
        if width == 1:
            ops.append(self._store_loop(store, g, tid, step, 1, emit))
        elif known_multiple(origin) % width == 0:  # 0: any multiple
            ops.append(self._store_loop(store, g, tid, step, width, emit, self._aligned(g.gmem)))
        else:
            # Vectors only where the column origin is a multiple of the vector at run time;
            # the vector branch addresses from origin / width * width (the same value there),
            # which the lowering sees is a multiple.
            w = emit(_index(width))
            rem = emit(arith.RemUIOp(origin, w))
            on_vectors = emit(arith.CmpiOp(rem, emit(_index(0)), "eq"))
            whole = emit(arith.MuliOp(emit(arith.DivUIOp(origin, w)), w))
            aligned = self._aligned(g.gmem)
            vectors = self._store_loop(store, g, tid, step, width, emit, aligned, whole)
            scalars = self._store_loop(store, g, tid, step, 1, emit)
            branches = [Region(Block([loop, scf.YieldOp()])) for loop in (vectors, scalars)]
            ops.append(scf.IfOp(on_vectors, [], *branches))
        Rewriter.replace_op(store, ops, [])

    def _aligned(self, ref: SSAValue) -> SSAValue:
        """`memref.assume_alignment %ref, 16` at the kernel's entry, made once per array."""
        if ref not in self.assumed:
            entry = self.kernel.body.block
            op = memref.AssumeAlignmentOp(ref, STORE_ALIGNMENT)
            if ref.name_hint:
                op.result.name_hint = f"{ref.name_hint}_aligned"
            assert entry.first_op is not None
            entry.insert_op_before(op, entry.first_op)
            self.assumed[ref] = op.result
        return self.assumed[ref]

    def _store_loop(
        self,
        store: copy.AsyncCopyOp,
        g: copy.CopyGeometry,
        tid: SSAValue,
        step: SSAValue,
        width: int,
        emit: Callable[[Operation], SSAValue],
        target: SSAValue | None = None,
        origin: SSAValue | None = None,
    ) -> scf.ForOp:
        """The walk of the box in row-major order, `width` elements a thread at a time
        (consecutive threads, consecutive elements of a row: coalesced), each element (or
        vector) stored when it lies inside the GMEM array; into `target` (the array, or its
        aligned form) with the box's last column origin replaced by `origin` if given."""
        box = list(g.box_shape)
        gmem_shape = g.gmem_type.get_shape()
        total = emit(_index(prod(box) // width))
        body = Block(arg_types=[IndexType()])
        inner: list[Operation] = []
        put = appender(inner)

        coords = box_coords(body.args[0], box, width, put, lambda v: emit(_index(v)))
        smem_at = [*g.smem_indices, *coords]
        if width == 1:
            value = put(memref.LoadOp.get(g.smem, smem_at))
        else:
            vtype = VectorType(g.element_type, [width])
            value = put(vector.LoadOp(g.smem, smem_at, vtype))
        lead = len(gmem_shape) - len(box)
        origins = list(g.gmem_indices[lead:])
        if origin is not None:
            origins[-1] = origin
        indices = list(g.gmem_indices[:lead])
        indices += [put(arith.AddiOp(o, c)) for o, c in zip(origins, coords, strict=True)]
        inside: SSAValue | None = None
        for d, (index, size) in enumerate(zip(indices, gmem_shape, strict=True)):
            # A dynamic size is read at run time (the kernel's size parameter). A vector lies
            # inside or outside whole: its first column and the array's columns are
            # multiples of it.
            bound = emit(_index(size) if size >= 0 else memref.DimOp(g.gmem, emit(_index(d))))
            ok = put(arith.CmpiOp(index, bound, "ult"))
            inside = ok if inside is None else put(arith.AndIOp(inside, ok))
        assert inside is not None
        then = Block()
        if store in self.atomics:  # a reduction: red.global of the matching op and type
            write = portability.thread_atomic_op(self.atomics[store], value, g.gmem, indices)
        elif width == 1:
            write = memref.StoreOp.get(value, g.gmem, indices)
        else:
            assert target is not None
            write = vector.StoreOp(value, target, indices)
        then.add_ops([write, scf.YieldOp()])
        inner.append(scf.IfOp(inside, [], Region(then)))
        inner.append(scf.YieldOp())
        body.add_ops(inner)
        return scf.ForOp(tid, total, step, [], Region(body))


def store_width(g: copy.CopyGeometry) -> int:
    """The elements of a thread store's vector for the tile of `g` (1: element by element):
    16 bytes (the largest st.global) where the array is a kernel argument of static shape
    and row-major strides whose rows, like the box's and the SMEM buffer's, are a multiple
    of the vector; the array is then 16-byte aligned, as the TMA copy required of it."""
    bits = g.element_bits
    width = STORE_ALIGNMENT * 8 // bits if bits and bits % 8 == 0 else 1
    t = g.gmem_type
    if width < 2 or not kernel_argument(g.gmem):
        return 1
    strides = copy.element_strides(t)
    smem_strides = copy.element_strides(g.smem_type)
    if (
        any(d < 0 for d in t.get_shape())
        or strides is None
        or None in strides
        or strides[-1] != 1
        or copy.layout_offset_problem(t) is not None
        or smem_strides is None
        or None in smem_strides
        or smem_strides[-1] != 1
    ):
        return 1
    multiples = [g.box_shape[-1], t.get_shape()[-1], *strides[:-1], *smem_strides[:-1]]
    if any(m % width for m in multiples):  # type: ignore[operator]
        return 1
    return width
