"""A gather4 that reaches other CTAs of its cluster (`copy.gather4 ... multicast %mask` and
`... leader_tracked`): the targets that have each form and the cluster each needs (rules
A14, G6, G7). The op is `copy_dialect.gather4`'s."""

from __future__ import annotations

from math import prod

from xdsl.ir import Operation, SSAValue

from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.gather4_targets import GATHER4_MULTICAST, GATHER4_PAIR
from copy_dialect.verify_common import (
    cluster_shape,
    constant_int,
    enclosing_target,
    feature_error,
    retarget_note,
)


def verify_multicast(op: Operation, mask: SSAValue) -> None:
    """`multicast %mask`: a target with the `.shared::cluster` form (A14), a cluster
    launch, and a constant mask that names CTAs of the cluster (G6)."""
    target = enclosing_target(op)
    # rule: A14
    if target is not None and not GATHER4_MULTICAST.has(target):
        raise feature_error(
            op,
            GATHER4_MULTICAST,
            target,
            note=f"{retarget_note(GATHER4_MULTICAST)}, or drop multicast and issue one "
            "copy.gather4 in each CTA that needs the rows",
        )
    size = prod(cluster_shape(op))
    # rule: G6
    if size == 1:
        raise Error(
            "a multicast copy.gather4 writes the SMEM of the CTAs of its cluster, but the "
            "kernel is not launched in clusters (no copy.cluster, or a cluster of 1)",
            note="give the kernel its cluster shape (copy.cluster = array<i32: 2, 1, 1> on "
            "the function), or drop multicast",
        )
    bits = constant_int(mask)
    # rule: G6
    if bits is not None and (bits & 0xFFFF == 0 or (bits & 0xFFFF) >> size):
        full = (1 << size) - 1
        raise Error(
            f"a multicast copy.gather4's mask names CTAs 0 to {size - 1} of its cluster of "
            f"{size}, got {bits & 0xFFFF:#x}",
            note=f"give a mask of bits 0 to {size - 1}, bit r for CTA r: {full} ({full:#x}) "
            "for every CTA of the cluster",
        )


def verify_pair(op: Operation) -> None:
    """`leader_tracked`: a target with CTA pairs (A14), a cluster of pairs, and no
    multicast with it (G7)."""
    target = enclosing_target(op)
    # rule: A14
    if target is not None and not GATHER4_PAIR.has(target):
        raise feature_error(
            op,
            GATHER4_PAIR,
            target,
            note=f"{retarget_note(GATHER4_PAIR)}, or drop leader_tracked and let each CTA "
            "wait on its own barrier",
        )
    size = prod(cluster_shape(op))
    # rule: G7
    if size % 2:
        raise Error(
            "a leader-tracked copy.gather4 completes on the barrier of its CTA pair's "
            f"leader (ranks 2p and 2p + 1), but the kernel's cluster has {size} CTA"
            f"{'s' if size != 1 else ''}",
            note="launch the kernel in clusters of an even size (copy.cluster = "
            "array<i32: 2, 1, 1> on the function), or drop leader_tracked",
        )
    # rule: G7
    if getattr(op, "multicast", None) is not None:
        raise Error(
            "a copy.gather4 is either multicast or leader-tracked here, not both",
            note="drop leader_tracked (every CTA of the mask waits on its own barrier), "
            "or drop multicast (each CTA of the pair gathers its own rows)",
        )
