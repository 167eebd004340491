"""The builders' argument checks, shared by every kernel family: `@checked(shape=2, tile=2)`
checks a builder's arguments by their names before it builds anything, each failure an
`ArgumentError` (a ValueError: `runtime.ArgumentError`) with what was expected, what was
got and the fix.

- `shape`, `max_shape` and `tile`: a sequence of as many ints as the rank the decorator
  gives, each at least 1 (a rank of 1 also takes a plain int);
- `dtype`, `out_dtype`: an element type's name (`"f32"`, `"bf16"`, ...; a numpy dtype
  names the one to write);
- counts (`stages`, `cluster`, `n`, `groups`, `pixels`, ...): an int of at least 1, or None
  where the builder picks one;
- `target`: a target name of `facts.target`; `swizzle`: 16, 32, 64 or 128 bytes; flags: bools.

What depends on more than one argument (a tile that fits SMEM, a type a family supports)
the builders check themselves, and the verifier checks the kernel they build.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from facts.errors import ArgumentError
from facts.target import TARGETS, UnknownTarget

F = TypeVar("F", bound=Callable[..., Any])

ELEMENT_TYPES = (
    "f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "si32", "si64", "ui8", "ui16",
    "ui32", "ui64",
)  # fmt: skip
"""The element types an array argument may have (`runtime.arrays.DTYPE_NAMES`)."""

NUMPY_NAMES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8",
    "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "ui8", "uint16": "ui16",
    "uint32": "ui32", "uint64": "ui64",
}  # fmt: skip

COUNTS = (
    "stages", "cluster", "n", "groups", "capacity", "consumer_warps",
    "out_buffers", "sm_count", "blocks_per_sm", "per_block", "pixels", "channels", "rows",
    "blocks", "limit", "multiple",
)  # fmt: skip
FLAGS = ("dynamic", "prefetch", "prefetch_destination", "multicast", "persistent", "barrier")
SWIZZLES = (16, 32, 64, 128)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_sizes(value: Any, name: str, rank: int) -> tuple[int, ...]:
    """`value` as `rank` sizes of at least 1 (a plain int where `rank` is 1)."""
    sizes = (value,) if rank == 1 and _is_int(value) else value
    try:
        sizes = tuple(sizes)
    except TypeError:
        sizes = None
    example = ", ".join(["64"] * rank) + ("," if rank == 1 else "")
    if sizes is None or len(sizes) != rank or not all(_is_int(s) for s in sizes):
        raise ArgumentError(
            f"expected a {rank}-D {name} of positive extents, got {value!r}; fix: pass "
            f"{rank} int{'s' if rank > 1 else ''}, e.g. {name}=({example})"
        )
    if any(s < 1 for s in sizes):
        raise ArgumentError(
            f"expected a {rank}-D {name} of positive extents, got {sizes}; fix: give each "
            "dimension one element or more (a builder's shapes are static, not dynamic)"
        )
    return sizes


def check_dtype(value: Any, name: str = "dtype") -> str:
    """An element type's name; a numpy dtype or an unknown name says which to write."""
    if isinstance(value, str) and value in ELEMENT_TYPES:
        return value
    fix = f"pass one of {', '.join(repr(t) for t in ELEMENT_TYPES)}"
    try:
        import numpy as np

        numpy_name = np.dtype(value).name if not isinstance(value, str) else None
    except TypeError:
        numpy_name = None
    if numpy_name in NUMPY_NAMES:
        fix = f"pass {name}={NUMPY_NAMES[numpy_name]!r} (the IR's name of {numpy_name})"
    shown = repr(value) if isinstance(value, str) else getattr(value, "__name__", repr(value))
    raise ArgumentError(f"expected {name} to be an element type's name, got {shown}; fix: {fix}")


def check_count(value: Any, name: str, own: bool = False, optional: bool = False) -> None:
    """An int of at least 1 (None where `optional`); `own`: any int, the builder checks its
    range."""
    if value is None and optional or _is_int(value) and (own or value >= 1):
        return
    if not _is_int(value) or value < 1:
        raise ArgumentError(
            f"expected {name} to be an int of at least 1, got {value!r}; fix: pass a "
            "positive int (or leave it out for the builder's default)"
        )


def check_cache_hint(value: Any, name: str) -> None:
    """None, an L2 policy's name (`"evict_first"`, ...) or a `copy.CachePolicy`."""
    from copy_dialect.attributes import L2Policy

    if value is None or type(value).__name__ == "CachePolicy":
        return
    if not isinstance(value, str) or value not in {p.value for p in L2Policy}:
        names = ", ".join(repr(p.value) for p in L2Policy)
        raise ArgumentError(
            f"expected each of {name} to be None, one of {names} or a copy.CachePolicy, got "
            f"{value!r}"
        )


def check_choice(value: Any, name: str) -> None:
    """An `implementation` or a `reduce` kind: one of copy.async_copy's names for it."""
    from copy_dialect.attributes import Implementation, ReductionKind

    kinds = Implementation if name == "implementation" else ReductionKind
    names = [k.value for k in kinds]
    if not isinstance(value, str) or value not in names:
        raise ArgumentError(
            f"expected {name} to be None or one of {', '.join(map(repr, names))}, got {value!r}"
        )


def check_target(value: Any, name: str = "target") -> None:
    if not isinstance(value, str) or value not in TARGETS:
        raise ArgumentError(f"{UnknownTarget(str(value), name)}; fix: pass one of those names")


def check_argument(
    name: str,
    value: Any,
    ranks: dict[str, int],
    own: tuple[str, ...] = (),
    dynamic: bool = False,
    default: Any = None,
) -> None:
    """The check of the builders' argument `name` (none for names not listed above); `own`
    names the counts whose range the builder checks itself (with its own message); with
    `dynamic`, a shape's sizes are not the kernel's (any ints of the rank do)."""
    if name in ranks:
        if dynamic and name == "shape":
            check_sizes(tuple(1 if _is_int(v) else v for v in _items(value)), name, ranks[name])
        else:
            check_sizes(value, name, ranks[name])
    elif name in ("dtype", "out_dtype"):
        if value is not None or name == "dtype":
            check_dtype(value, name)
    elif name in COUNTS:
        check_count(value, name, own=name in own, optional=default is None)
    elif name == "in_flight" and (not _is_int(value) or value < 0):
        raise ArgumentError(f"expected in_flight to be an int of at least 0, got {value!r}")
    elif name == "target":
        check_target(value)
    elif name == "swizzle" and value not in SWIZZLES or name == "swizzle" and not _is_int(value):
        raise ArgumentError(
            f"expected swizzle to be one of {SWIZZLES} bytes (16: none), got {value!r}; fix: "
            "pass the swizzle span in bytes"
        )
    elif name in ("cache_hint", "cache_hints"):
        hints = (value,) if name == "cache_hint" else _items(value)
        if name == "cache_hints" and len(hints) != 2:
            raise ArgumentError(
                f"expected cache_hints to be a pair (the load's, the store's), got {value!r}"
            )
        for hint in hints:
            check_cache_hint(hint, name)
    elif name in ("implementation", "reduce") and value is not None:
        check_choice(value, name)
    elif name in ("filter", "stride", "dilation", "padding"):
        pair = (value, value) if _is_int(value) else _items(value)
        if len(pair) != 2 or not all(_is_int(v) for v in pair):
            raise ArgumentError(
                f"expected {name} to be an int or a pair of ints (H, W), got {value!r}"
            )
        least = 0 if name == "padding" else 1
        if any(v < least for v in pair):
            raise ArgumentError(f"expected {name} of at least {least}, got {value!r}")
    elif name in ("inputs", "outputs"):
        for i, dtype in enumerate(_items(value) if not isinstance(value, str) else (0,)):
            check_dtype(dtype, f"{name}[{i}]")
    elif (
        name == "l2_promotion"
        and value not in (None, 0, 64, 128, 256)
        or (name == "l2_promotion" and isinstance(value, bool))
    ):
        raise ArgumentError(
            f"expected l2_promotion to be None, 0, 64, 128 or 256 bytes, got {value!r}"
        )
    elif name == "maxnreg" and value is not None:
        pair = _items(value)
        if len(pair) != 2 or not all(_is_int(v) and v > 0 for v in pair):
            raise ArgumentError(
                f"expected maxnreg to be None or a pair of positive ints (the producer's and "
                f"the consumers' registers per thread), got {value!r}"
            )
    elif name == "shapes":
        for i, shape in enumerate(_items(value)):
            check_sizes(shape, f"shapes[{i}]", 2)
    elif name == "conv" and type(value).__name__ != "Conv2d":
        raise ArgumentError(
            f"expected conv to be a Conv2d, got {type(value).__name__}; fix: make it with "
            "kernels.conv2d(shape, filter, ...)"
        )
    elif name in FLAGS and not isinstance(value, bool):
        raise ArgumentError(f"expected {name} to be True or False, got {value!r}")


def _items(value: Any) -> tuple[Any, ...]:
    try:
        return tuple(value)
    except TypeError:
        return (value,)


def checked(own: tuple[str, ...] = (), **ranks: int) -> Callable[[F], F]:
    """A builder whose arguments are checked by name first (`ranks`: how many sizes each of
    its shape-like arguments has; `own`: the counts whose range it checks itself)."""

    def wrap(builder: F) -> F:
        signature = inspect.signature(builder)

        @functools.wraps(builder)
        def checked_builder(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise ArgumentError(
                    f"expected the arguments {builder.__name__}{signature}, got {exc}"
                ) from None
            bound.apply_defaults()
            dynamic = bound.arguments.get("dynamic") is True
            for name, value in bound.arguments.items():
                default = signature.parameters[name].default
                check_argument(name, value, ranks, own, dynamic, default)
            return builder(*args, **kwargs)

        return checked_builder  # type: ignore[return-value]

    return wrap
