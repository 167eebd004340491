"""The L2 facts of a TMA copy or prefetch, shared by `copy.async_copy` and `copy.prefetch`:
its cache policy (`l2 <primary> fraction <f> secondary <priority>`, PTX's
`createpolicy.fractional`, or a raw `cache_hint`, one of the documented encodings) and its
tensor map's L2 promotion (`l2_promotion`), with their rules (L1, L2, L4-L9) and what the
lowering reads of them."""

from __future__ import annotations

import struct

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f32
from xdsl.ir import Attribute

from copy_dialect.attributes import (
    L2_POLICY_ENCODING,
    L2_PROMOTIONS,
    L2_SECONDARY_POLICIES,
    CachePolicy,
    Implementation,
    L2Policy,
    L2PolicyAttr,
    enum_attr,
)
from copy_dialect.errors import CopyVerifyException as Error
from facts.abi import DEFAULT_L2_PROMOTION


def cache_policy(
    l2: L2PolicyAttr | None, fraction: FloatAttr | None, secondary: L2PolicyAttr | None
) -> CachePolicy | None:
    """The op's policy as `createpolicy.fractional` takes it, None without `l2`."""
    if l2 is None:
        return None
    return CachePolicy(
        l2.data,
        None if fraction is None else fraction.value.data,
        None if secondary is None else secondary.data,
    )


def _f32(value: float) -> float:
    """`value` rounded to the f32 that the PTX operand holds."""
    return struct.unpack("f", struct.pack("f", value))[0]


def verify_cache_policy(
    l2: L2PolicyAttr | None, fraction: FloatAttr | None, secondary: L2PolicyAttr | None
) -> None:
    """A fraction and a secondary priority refine a primary one (L6); the fraction is in
    (0, 1] (L4); the secondary priority is one createpolicy takes (L5) and applies to some
    accesses (L7)."""
    # rule: L6
    if l2 is None and (fraction is not None or secondary is not None):
        given = "fraction" if fraction is not None else "secondary"
        raise Error(
            f"Expected l2 <priority> before {given}, got a {given} without a primary L2 "
            "cache priority",
            note=f"name the primary priority first: l2 evict_last {given} ...",
        )
    if fraction is not None:
        value = fraction.value.data
        # rule: L4
        if not 0.0 < _f32(value) <= 1.0:
            raise Error(
                f"Expected an L2 policy fraction in (0, 1] (as an f32), got {value}",
                note="give the share of accesses that get the primary priority, e.g. "
                "fraction 0.5 (1.0 for all of them)",
            )
    if secondary is not None:
        # rule: L5
        if secondary.data not in L2_SECONDARY_POLICIES:
            raise Error(
                "Expected the secondary L2 priority to be evict_first or evict_unchanged, "
                f"got {secondary.data}",
                note="use secondary evict_first or secondary evict_unchanged (createpolicy "
                "takes no other)",
            )
        # rule: L7
        if fraction is None or _f32(fraction.value.data) == 1.0:
            raise Error(
                f"Expected a fraction below 1 with secondary {secondary.data}, got "
                + ("none (1.0)" if fraction is None else f"fraction {fraction.value.data}")
                + ": every access gets the primary priority",
                note="give the share of the primary priority, e.g. fraction 0.5, or drop "
                "the secondary priority",
            )


def verify_cache_hint(l2: L2PolicyAttr | None, cache_hint: IntegerAttr | None) -> None:
    """A raw `cache_hint` is the op's one policy (L2) and a documented encoding (L1)."""
    if cache_hint is None:
        return
    raw = cache_hint.value.data
    # rule: L2
    if l2 is not None:
        raise Error(
            f"Expected one L2 cache policy, got l2 {l2.data} and cache_hint = {raw:#x}",
            note="drop the cache_hint attribute: l2 names the policy",
        )
    # rule: L1
    if raw not in L2_POLICY_ENCODING.values():
        names = ", ".join(f"l2 {p}" for p in L2Policy)
        raise Error(
            f"Expected cache_hint to be an L2 cache policy, got {raw:#x}, which is "
            "none of the policies createpolicy makes ("
            + ", ".join(f"{p} {v:#x}" for p, v in L2_POLICY_ENCODING.items())
            + ")",
            note=f"drop the cache_hint attribute and name the policy: {names}",
        )


def promotion_bytes(attr: IntegerAttr | None) -> int:
    """The L2 promotion of the op's tensor map in bytes (0: none)."""
    return DEFAULT_L2_PROMOTION if attr is None else attr.value.data


def verify_l2_promotion(attr: IntegerAttr | None, impl: Implementation | None) -> None:
    """The promotion is one the driver encodes (L8), on an op that has a tensor map (L9:
    not a cp.async or bulk copy)."""
    if attr is None:
        return
    value = attr.value.data
    # rule: L8
    if value not in L2_PROMOTIONS:
        raise Error(
            f"Expected l2_promotion to be one of {', '.join(map(str, L2_PROMOTIONS))} "
            f"(bytes; 0 for none), got {value}",
            note="use l2_promotion = 64, 128 or 256, or 0 for none (the default is 128)",
        )
    # rule: L9
    if impl in (Implementation.CP_ASYNC, Implementation.BULK):
        kind = "cp.async" if impl == Implementation.CP_ASYNC else "bulk"
        raise Error(
            f"Expected no l2_promotion on a {kind} copy: it is a property of a TMA "
            "copy's tensor map",
            note="drop l2_promotion, or use impl tma on sm_90 or newer",
        )


def policy_properties(l2: L2Policy | str | CachePolicy | None) -> dict[str, Attribute | None]:
    """The properties `l2`, `l2_fraction` and `l2_secondary` of a policy given to a builder:
    a priority's name, or a CachePolicy with its fraction and secondary priority."""
    if not isinstance(l2, CachePolicy):
        return {"l2": enum_attr(L2PolicyAttr, L2Policy, l2)}
    return {
        "l2": L2PolicyAttr(L2Policy(l2.primary)),
        "l2_fraction": None if l2.fraction is None else FloatAttr(l2.fraction, f32),
        "l2_secondary": None if l2.secondary is None else L2PolicyAttr(L2Policy(l2.secondary)),
    }


def policy_value(
    l2: L2PolicyAttr | None,
    fraction: FloatAttr | None,
    secondary: L2PolicyAttr | None,
    cache_hint: IntegerAttr | None = None,
) -> int | CachePolicy | None:
    """The cache-policy operand of the op's TMA instruction: the documented constant of a
    named policy (or the raw `cache_hint` the verifier accepted), or the CachePolicy the
    kernel makes with createpolicy; None for none."""
    policy = cache_policy(l2, fraction, secondary)
    if policy is None:
        return None if cache_hint is None else cache_hint.value.data
    return policy if policy.constant is None else policy.constant
