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

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from analysis.verify import verify_module
from copy_dialect import ops as copy
from facts.errors import ArgumentError
from facts.target import GRID_DEPENDENCY
from frontends.kernels.checks import check_target
from frontends.kernels.common import (
    _bin,
    _block_id,
    _check_feature,
    _check_float,
    _thread_id,
    element_type,
)
from frontends.locations import LocatingBuilder

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

    def produce(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        if trigger == "start":
            b.insert(copy.LaunchDependentsOp())
        i = element_index(b, block)
        v = b.insert(memref.LoadOp.get(x, [i])).res
        c2 = b.insert(arith.ConstantOp(two)).result
        c1 = b.insert(arith.ConstantOp(one)).result
        doubled = b.insert(arith.MulfOp(v, c2)).result
        b.insert(memref.StoreOp.get(b.insert(arith.AddfOp(doubled, c1)).result, y, [i]))
        if trigger == "end":
            b.insert(copy.LaunchDependentsOp())

    def consume(b: Builder, args: Sequence[SSAValue]) -> None:
        w, y, z = args
        i = element_index(b, block)
        weight = b.insert(memref.LoadOp.get(w, [i])).res  # not produce's: before the wait
        if early_read:
            value = b.insert(memref.LoadOp.get(y, [i])).res
            b.insert(copy.GridDependencyWaitOp())
        else:
            b.insert(copy.GridDependencyWaitOp())
            value = b.insert(memref.LoadOp.get(y, [i])).res
        product = b.insert(arith.MulfOp(weight, value)).result
        b.insert(memref.StoreOp.get(b.insert(arith.AddfOp(product, weight)).result, z, [i]))

    unmarked = DictionaryAttr({})
    weights = DictionaryAttr({copy.PREDECESSOR_ACCESS: StringAttr("none")})
    output = (
        unmarked
        if output_mark is None
        else DictionaryAttr({copy.PREDECESSOR_ACCESS: StringAttr(output_mark)})
    )
    module = ModuleOp(
        [
            kernel("produce", [vector] * 2, [unmarked] * 2, produce, block),
            kernel("consume", [vector] * 3, [weights, output, unmarked], consume, block),
        ]
    )
    module.attributes["copy.target"] = copy.TargetAttr(target)
    if verify:
        verify_module(module)
    return module


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


def element_index(b: Builder, block: int) -> SSAValue:
    """This thread's element: block id * block + thread id."""
    origin = _bin(b, arith.MuliOp, _block_id(b), block)
    return _bin(b, arith.AddiOp, origin, _thread_id(b))


def kernel(
    name: str,
    types: list[Attribute],
    marks: list[DictionaryAttr],
    body: object,
    block: int,
) -> func.FuncOp:
    entry = Block(arg_types=types)
    builder = LocatingBuilder(InsertPoint.at_end(entry))
    body(builder, entry.args)  # type: ignore[operator]
    builder.insert(func.ReturnOp())
    fn = func.FuncOp(name, FunctionType.from_lists(types, []), Region(entry))
    fn.arg_attrs = ArrayAttr(marks)
    fn.attributes["gpu.kernel"] = UnitAttr()
    fn.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, [block, 1, 1])
    return fn


__all__ = ["PDL_BLOCK", "TRIGGERS", "pdl_chain", "pdl_grid"]
