"""A concise kernel-building API on xDSL's implicit builders (docs/frontend.md walks
through it): Python ints become constants, loops and branches are `with` blocks, a ring
gives a position's slot and parity in one call, roles are functions, and the IR is what the
op-by-op builder (or the text form) gives. One module per concern: `values` (Values and
their operators, constants, ids), `control` (the kernel, loops, branches, roles, `emit`),
`pipeline` (`Ring`).

    from frontends.dsl import Ring, emit, kernel, loop, warp_specialize

    def body(x, y):
        ring = emit(copy.AllocSmemOp, ring_type).result
        ...
        with loop(count) as k:
            slot, parity = Ring(4).at(k)
            emit(copy.BarrierWaitOp, full, slot, parity)

    module = kernel("copy", [gmem, gmem], body, target="sm_90a", block=64)

Every op is located at the Python line that made it (`frontends.locations`)."""

from __future__ import annotations

from frontends.dsl.control import (
    Loop,
    emit,
    for_range,
    if_,
    kernel,
    kernel_function,
    loop,
    module,
    result,
    warp_specialize,
)
from frontends.dsl.pipeline import Ring, parity
from frontends.dsl.values import (
    Operand,
    Value,
    block_id,
    boolean,
    const,
    grid_dim,
    i32_const,
    index,
    thread_id,
)

__all__ = [
    "Loop",
    "Operand",
    "Ring",
    "Value",
    "block_id",
    "boolean",
    "const",
    "emit",
    "for_range",
    "grid_dim",
    "i32_const",
    "if_",
    "index",
    "kernel",
    "kernel_function",
    "loop",
    "module",
    "parity",
    "result",
    "thread_id",
    "warp_specialize",
]
