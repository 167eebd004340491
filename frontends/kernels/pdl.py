"""A two-kernel chain under programmatic dependent launch (PDL): `produce` writes
`y = 2 x + 1`, `consume` reads y and writes `z = w * y + w`, one element per thread, each
launched on `n / block` blocks (`pdl_grid`). Both kernels are short and latency-bound: on
one stream, without PDL the second starts only once the first has drained; with it, the
second launches while the first's blocks finish (`produce` triggers its dependents with
`copy.launch_dependents`) and loads its weights w before it waits for y
(`copy.grid_dependency_wait`), w being marked `{copy.predecessor_access = "none"}`.

The runtime launches `consume` with programmatic stream serialization because it waits (its
ABI's `grid_dependent`); `Kernel.prepare(..., programmatic=False)` launches it without, the
chain without PDL on the same code. `early_read=True` reads y before the wait: the proof
rejects it (rule GD2); `verify=False` returns it unverified, and `output_mark="read"` marks y
as if produce did not write it (a false claim the proof trusts), for the interpreter's chain
run (`interpreter.grid_dependency.run_chain`) and the runtime's launch guard
(`runtime.pdl`, debug guards) to catch.
"""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DictionaryAttr, FloatAttr, MemRefType, ModuleOp, StringAttr

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from facts.target import GRID_DEPENDENCY
from frontends.dsl import Value, block_id, emit, kernel_function, module, result, thread_id
from frontends.kernels.checks import check_target
from frontends.kernels.common import _check_feature, _check_float, element_type

PDL_BLOCK = 128
"""Threads per block of the chain's kernels, by default."""

TRIGGERS = ("start", "end")
"""Where `produce` runs `copy.launch_dependents`: first (the dependent may launch as soon as
every block of `produce` started) or after its store."""


def pdl_grid(n: int, block: int = PDL_BLOCK) -> tuple[int, int]:
    """The grid of either kernel of `pdl_chain(n, ..., block=block)`."""
    check_sizes(n, block)
    return (n // block, 1)


def check_sizes(n: object, block: object) -> None:
    if not isinstance(block, int) or isinstance(block, bool) or not 32 <= block <= 1024:
        raise ArgumentError(f"expected block to be 32 to 1024 threads, got {block!r}")
    if block % 32:
        raise ArgumentError(f"expected block to be a multiple of 32 threads, got {block}")
    if not isinstance(n, int) or isinstance(n, bool) or n < block or n % block:
        raise ArgumentError(
            f"expected n to be a positive multiple of block ({block}), got {n!r}: one "
            "element per thread, every thread in bounds"
        )


def pdl_chain(
    n: int,
    dtype: str = "f32",
    *,
    block: int = PDL_BLOCK,
    trigger: str = "start",
    early_read: bool = False,
    output_mark: str | None = None,
    verify: bool = True,
    target: str = "sm_90a",
) -> ModuleOp:
    """The module of the chain `produce(x, y)`, `consume(w, y, z)` over `n` elements (a
    multiple of `block`), of float type `dtype`: `produce` triggers its dependents at its
    `trigger` ("start" or "end"); `consume` loads w, waits for `produce`, then loads y
    (before the wait with `early_read`: rejected, rule GD2, unless `verify=False` or y is
    marked). `output_mark`: y's `copy.predecessor_access` in `consume` ("read": a false
    claim, produce writes y, which the proof trusts and the interpreter's chain run and the
    runtime's launch guard under debug guards catch)."""
    check_chain_arguments(n, dtype, block, trigger, early_read, verify, target)
    if output_mark not in (None, *copy.PREDECESSOR_ACCESSES):
        raise ArgumentError(
            f"expected output_mark to be None, {' or '.join(map(repr, copy.PREDECESSOR_ACCESSES))}"
            f", got {output_mark!r}"
        )
    elt = element_type(dtype)
    vector = MemRefType(elt, [n])
    two = FloatAttr(2.0, elt)  # type: ignore[arg-type]
    one = FloatAttr(1.0, elt)  # type: ignore[arg-type]

    def produce(x: Value, y: Value) -> None:
        if trigger == "start":
            emit(copy.LaunchDependentsOp)
        i = element_index(block)
        v = load(x, i)
        c2, c1 = result(arith.ConstantOp, two), result(arith.ConstantOp, one)
        doubled = result(arith.MulfOp, v, c2)
        emit(memref.StoreOp.get, result(arith.AddfOp, doubled, c1), y, [i])
        if trigger == "end":
            emit(copy.LaunchDependentsOp)

    def consume(w: Value, y: Value, z: Value) -> None:
        i = element_index(block)
        weight = load(w, i)  # not produce's: before the wait
        if early_read:
            value = load(y, i)
            emit(copy.GridDependencyWaitOp)
        else:
            emit(copy.GridDependencyWaitOp)
            value = load(y, i)
        product = result(arith.MulfOp, weight, value)
        emit(memref.StoreOp.get, result(arith.AddfOp, product, weight), z, [i])

    unmarked = DictionaryAttr({})
    weights = DictionaryAttr({copy.PREDECESSOR_ACCESS: StringAttr("none")})
    output = (
        unmarked
        if output_mark is None
        else DictionaryAttr({copy.PREDECESSOR_ACCESS: StringAttr(output_mark)})
    )
    marks = {"produce": [unmarked] * 2, "consume": [weights, output, unmarked]}
    functions = [
        kernel_function(name, [vector] * len(marks[name]), fill, block=block, arg_attrs=marks[name])
        for name, fill in (("produce", produce), ("consume", consume))
    ]
    return module(functions, target=target, verify=verify)


def check_chain_arguments(
    n: object,
    dtype: object,
    block: object,
    trigger: object,
    early_read: object,
    verify: object,
    target: object,
) -> None:
    check_target(target)
    assert isinstance(target, str)
    _check_feature(
        target,
        GRID_DEPENDENCY,
        "copy.grid_dependency_wait",
        "programmatic dependent launch needs sm_90 or newer",
    )
    if not isinstance(dtype, str):
        raise ArgumentError(f"expected dtype to be a string, got {dtype!r}")
    _check_float(dtype)
    check_sizes(n, block)
    if trigger not in TRIGGERS:
        raise ArgumentError(f"expected trigger to be one of {TRIGGERS}, got {trigger!r}")
    for name, value in (("early_read", early_read), ("verify", verify)):
        if not isinstance(value, bool):
            raise ArgumentError(f"expected {name} to be a bool, got {value!r}")


def element_index(block: int) -> Value:
    """This thread's element: block id * block + thread id."""
    return block_id() * block + thread_id()


def load(array: Value, i: Value) -> Value:
    """`array[i]`."""
    return Value(emit(memref.LoadOp.get, array, [i]).res)


__all__ = ["PDL_BLOCK", "TRIGGERS", "pdl_chain", "pdl_grid"]
