"""What the kernel families share: the launch constants, `element_type` and `grid`, the SMEM
and GMEM types, and the parameter checks and SMEM budgets that more than one family makes.
The families are written on `frontends.dsl` (`kernel()` makes and verifies the module;
`kernels.parts` holds the op helpers they share)."""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    MemRefType,
)
from xdsl.ir import Attribute
from xdsl.parser import Parser

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from facts.target import TARGETS, Feature, feature_message, target_named
from frontends.kernels.checks import check_dtype, checked

TMA_BLOCK = 128

# L2 cache policies for the builders' `cache_hints` (copy.async_copy's `l2`).
EVICT_NORMAL = "evict_normal"
EVICT_FIRST = "evict_first"
EVICT_LAST = "evict_last"
EVICT_UNCHANGED = "evict_unchanged"
CP_ASYNC_BLOCK = 256

FLOAT_TYPES = ("f32", "bf16", "f16")


def element_type(name: str) -> Attribute:
    """`"f32"`, `"bf16"`, `"i32"` ... as an xDSL type (builtin types need no dialect); an
    `ArgumentError` for a name that is no element type (`checks.check_dtype`)."""
    if isinstance(name, str) and name.isidentifier():
        try:
            return Parser(Context(), name).parse_type()
        except Exception:  # a name that is no type: the check below says which to write
            pass
    check_dtype(name)
    raise AssertionError("unreachable: check_dtype raised")


@checked(shape=2, tile=2)
def grid(shape: Sequence[int], tile: Sequence[int]) -> tuple[int, int]:
    """Blocks covering a 2-D `shape` with `tile`s: (tile columns, tile rows)."""
    return (ceil(shape[1] / tile[1]), ceil(shape[0] / tile[0]))


# ===----------------------------------------------------------------------=== #
# SMEM and GMEM types
# ===----------------------------------------------------------------------=== #


def _smem(elt: Attribute, shape: Sequence[int], swizzle: int = 16) -> MemRefType:
    """An SMEM buffer of `shape` (`#copy.smem`, swizzled by `swizzle` bytes)."""
    return MemRefType(elt, list(shape), memory_space=copy.SmemSpaceAttr(swizzle))


def _gmem(elt: Attribute, shape: Sequence[int], dynamic: bool = False) -> MemRefType:
    """A 2-D global array of `shape`, or of `?x?` with `dynamic`."""
    return MemRefType(elt, [DYNAMIC_INDEX] * 2 if dynamic else list(shape))


# ===----------------------------------------------------------------------=== #
# Parameter checks and SMEM budgets
# ===----------------------------------------------------------------------=== #


def _check_target(target: str) -> None:
    target_named(target)  # an UnknownTarget (a ValueError) for a name that is no target


def _check_feature(target: str, feature: Feature, op: str, fix: str, uses: str = "") -> None:
    """A ValueError where `target` lacks `feature`: the verifiers' message for `op` (the copy
    op the builder would emit, or the builder where no single op needs it), then `fix`; an
    UnknownTarget for a name that is no target."""
    lacking = target_named(target)
    if not feature.has(lacking):
        raise ArgumentError(f"{feature_message(op, feature, lacking, uses)}; {fix}")


def _check_2d(shape: Sequence[int], tile: Sequence[int], per_dim: str = "per dim") -> None:
    """A 2-D `shape` of positive extents and a 2-D `tile` that is a TMA box (1 to 256
    `per_dim`, the words of the message)."""
    if len(shape) != 2 or any(d < 1 for d in shape):
        raise ArgumentError(f"expected a 2-D shape of positive extents, got {tuple(shape)}")
    if len(tile) != 2 or any(not 1 <= d <= 256 for d in tile):
        raise ArgumentError(
            f"expected a 2-D tile of 1 to 256 {per_dim} (a TMA box), got {tuple(tile)}"
        )


def _check_float(dtype: str) -> None:
    if dtype not in FLOAT_TYPES:
        raise ArgumentError(
            f"expected a float element type ({', '.join(FLOAT_TYPES)}), got {dtype!r}"
        )


def _check_consumer_warps(consumer_warps: int) -> None:
    if not 1 <= consumer_warps <= 16:
        raise ArgumentError(f"expected 1 to 16 consumer warps, got {consumer_warps}")


def _bulk_oob(shape: Sequence[int], tile: Sequence[int], implementation: str | None) -> str | None:
    """The `oob` of a builder's copies for `implementation`: a bulk copy moves whole rows
    and promises to stay in bounds (rules BK1, BK4); None (the default) otherwise."""
    if implementation != "bulk":
        return None
    if tile[-1] != shape[-1]:
        raise ArgumentError(
            f"expected tiles of whole rows ({shape[-1]} elements) for bulk copies, got "
            f"{tuple(tile)}"
        )
    return "promise_in_bounds"


def _smem_budget(target: str) -> str:
    """The SMEM a block can use on `target`, as the messages name it."""
    return f"the {TARGETS[target].max_smem_bytes} bytes of SMEM a block can use on {target}"


def _footprint(
    tile: Sequence[int],
    inputs: Sequence[str],
    outputs: Sequence[str],
    barrier_groups: int,
    stages: int,
    out_buffers: int = 2,
) -> int:
    """The block's SMEM bytes (the verifier's arena layout, rule TR6) for one ring of
    `stages` `tile`s per input, `out_buffers` tiles per output (element types by name) and
    `barrier_groups` groups of one barrier per slot."""
    align = copy.smem_alignment(16)

    def slot(name: str) -> int:
        return copy.smem_bytes(tile, element_type(name), 16)

    parts = [(stages * slot(name), align) for name in inputs]
    parts += [(out_buffers * slot(name), align) for name in outputs]
    parts += [(copy.BARRIER_BYTES * stages, copy.BARRIER_BYTES)] * barrier_groups
    return copy.block_smem_bytes(copy.smem_footprint(parts))


def _stages_limit(
    tile: Sequence[int],
    inputs: Sequence[str],
    outputs: Sequence[str],
    barrier_groups: int,
    target: str,
    out_buffers: int = 2,
) -> int:
    """The most ring slots for one ring of `tile`s per input, `out_buffers` buffers per
    output and `barrier_groups` groups of one barrier per slot within the block's SMEM on `target`
    (the verifier's arena layout, rule TR6) and `MAX_BARRIERS` (rule I1); 0 when none fits."""
    budget = TARGETS[target].max_smem_bytes
    fits = (
        n
        for n in range(1, copy.MAX_BARRIERS + 1)
        if _footprint(tile, inputs, outputs, barrier_groups, n, out_buffers) <= budget
    )
    return max(fits, default=0)
