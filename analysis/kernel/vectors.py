"""Wide thread accesses of swizzled SMEM (rule SV1): a `vector.load` / `vector.store` of a
swizzled buffer stays inside one 16-byte unit. A swizzle keeps each 16-byte unit's bytes
together and moves the units apart (`copy_dialect.layout`), so an access of 4, 8 or 16
bytes at an offset that is a multiple of its size is contiguous in the swizzled layout and
lowers to one `ld.shared.v*`; one that may cross a unit boundary has no contiguous address.
The op is upstream's, so the rule is the kernel's."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import vector
from xdsl.dialects.builtin import MemRefType, VectorType
from xdsl.ir import Operation

from analysis.kernel.kernel import Kernel
from copy_dialect import layout
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import SMEM, bitwidth, memory_space, swizzle_of
from copy_dialect.verify_common import unit_problem


def check_swizzled_vectors(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each vector access of swizzled SMEM stays inside one 16-byte unit."""
    for op in kernel.instances(vector.LoadOp, vector.StoreOp):
        if isinstance(op, vector.LoadOp):
            ref, vtype = op.base, op.result.type
        elif isinstance(op, vector.StoreOp):
            ref, vtype = op.base, op.vector.type
        else:
            continue
        t = ref.type
        if not (isinstance(t, MemRefType) and isinstance(vtype, VectorType)):
            continue
        swizzle = swizzle_of(t)
        if memory_space(t) != SMEM or swizzle == layout.UNSWIZZLED:
            continue
        bits = bitwidth(t.element_type)
        if bits is None or bits % 8 or vtype.get_num_dims() != 1:
            continue
        elem = bits // 8
        size = elem * vtype.get_shape()[0]
        problem = unit_problem(t, list(op.indices), size)
        # rule: SV1
        if problem is not None:
            lanes = max(1, min(size, layout.UNIT_BYTES) // elem)
            yield (
                op,
                Error(
                    f"a vector access of {swizzle}B-swizzled SMEM must stay inside one 16-byte "
                    f"unit (the swizzle moves units apart), but this {size}-byte access may "
                    f"cross one: {problem}",
                    note=f"access at most 16 bytes at an innermost index that is a multiple "
                    f"of the vector's length (e.g. vector<{lanes}x{t.element_type}> at a "
                    f"column computed with arith.muli by {lanes}), or use memref.load/store",
                ),
            )
