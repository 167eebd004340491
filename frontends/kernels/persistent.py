"""A persistent consumer under cluster launch control and programmatic dependent launch: the
`pdl_chain`'s `produce` (y = 2 x + 1) followed by `consume_persistent(w, y, z)` (z = w y + w),
launched on one block of `block` threads per tile, whose blocks steal the tiles of blocks
that have not started yet (`copy.try_cancel`, sm_100+) and compute them too.

`consume_persistent` waits for `produce` (`copy.grid_dependency_wait`) before it reads y, then
loops over tiles in an `scf.while` carrying (tile, request count, go): it computes its tile,
asks (elected thread) to cancel a block not yet launched into response slot `k % 2`, its
barrier expecting the 16 bytes, waits for the phase `k / 2 % 2` and decodes the response
(`copy.query_cancel`): a canceled block's first ctaid is the next tile; a failed request ends
the loop (no request follows a failed one: undefined in the PTX ISA). A block barrier before
each request keeps it from overwriting a slot the threads may still read (the proof's P3).
The result is the chain's, whoever computes a tile."""

from __future__ import annotations

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import (
    DictionaryAttr,
    FloatAttr,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    i1,
    i8,
)
from xdsl.ir import Block, Region

from copy_dialect import ops as copy
from frontends.dsl import Value, block_id, emit, kernel_function, module, result, thread_id
from frontends.dsl.values import boolean, index
from frontends.kernels.checks import check_target
from frontends.kernels.common import _check_feature, element_type
from frontends.kernels.pdl import PDL_BLOCK, check_chain_arguments, load

SLOTS = 2
"""Response slots (and barriers) of the persistent loop: a request lands in one while the
other's response is read."""


def persistent_chain(
    n: int, dtype: str = "f32", *, block: int = PDL_BLOCK, target: str = "sm_100a"
) -> ModuleOp:
    """The module of `produce(x, y)` and the persistent `consume_persistent(w, y, z)` over
    `n` elements (a multiple of `block`), of float type `dtype`, for a target with cluster
    launch control (sm_100+). Launch both on `n / block` blocks (`kernels.pdl_grid`)."""
    check_target(target)
    assert isinstance(target, str)
    _check_feature(
        target,
        copy.CLUSTER_LAUNCH_CONTROL,
        "copy.try_cancel",
        "a persistent kernel under cluster launch control needs sm_100 or newer",
    )
    check_chain_arguments(n, dtype, block, "start", False, True, target)
    elt = element_type(dtype)
    vector = MemRefType(elt, [n])
    two = FloatAttr(2.0, elt)  # type: ignore[arg-type]
    one = FloatAttr(1.0, elt)  # type: ignore[arg-type]

    def produce(x: Value, y: Value) -> None:
        emit(copy.LaunchDependentsOp)
        i = block_id() * block + thread_id()
        doubled = result(arith.MulfOp, load(x, i), result(arith.ConstantOp, two))
        emit(
            memref.StoreOp.get, result(arith.AddfOp, doubled, result(arith.ConstantOp, one)), y, [i]
        )

    def consume(w: Value, y: Value, z: Value) -> None:
        responses = emit(
            copy.AllocSmemOp, MemRefType(i8, [SLOTS, 16], memory_space=copy.SmemSpaceAttr())
        )
        bars = emit(copy.BarrierInitOp, SLOTS, 1)
        emit(copy.GridDependencyWaitOp)
        t = thread_id()
        start = [block_id().ssa, index(0).ssa, boolean(True).ssa]
        types = [IndexType(), IndexType(), i1]
        before, after = Block(arg_types=types), Block(arg_types=types)
        scf.WhileOp(start, types, Region(before), Region(after))
        with ImplicitBuilder(before):
            scf.ConditionOp(before.args[2], *before.args)
        with ImplicitBuilder(after):
            tile, k = Value(after.args[0]), Value(after.args[1])
            i = tile * block + t
            weight = load(w, i)
            product = result(arith.MulfOp, weight, load(y, i))
            emit(memref.StoreOp.get, result(arith.AddfOp, product, weight), z, [i])
            slot = k % SLOTS
            lap = (k // SLOTS % 2).ne(0)
            emit(gpu.BarrierOp)  # every thread has read the slot's last response
            emit(copy.BarrierArriveExpectTxOp, bars, slot, bytes=copy.RESPONSE_BYTES)
            emit(copy.TryCancelOp, responses, bars, response_indices=[slot], barrier_index=slot)
            emit(copy.BarrierWaitOp, bars, slot, lap)
            query = emit(copy.QueryCancelOp, responses, [slot])
            first = result(arith.IndexCastOp, query.results[1], IndexType())
            scf.YieldOp(first.ssa, (k + 1).ssa, query.results[0])

    unmarked = DictionaryAttr({})
    weights = DictionaryAttr({copy.PREDECESSOR_ACCESS: StringAttr("none")})
    functions = [
        kernel_function("produce", [vector] * 2, produce, block=block, arg_attrs=[unmarked] * 2),
        kernel_function(
            "consume_persistent",
            [vector] * 3,
            consume,
            block=block,
            arg_attrs=[weights, unmarked, unmarked],
        ),
    ]
    return module(functions, target=target)


__all__ = ["SLOTS", "persistent_chain"]
