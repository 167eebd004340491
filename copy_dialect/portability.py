"""What a kernel written for one target cannot keep on another: the checks of
`copy-legalize` (passes/legalize.py), rules LG1-LG8, and the thread atomic a TMA reduction
becomes (`thread_atomic`).

The pass rewrites what has a form on the new target (a TMA load into cp.async, a TMA store
into thread stores, a multicast load into per-CTA loads, a swizzled buffer into a plain
one); each check here names what has none, at the op, with the rule id. They are facts of
the dialect and the target table, so they live with the dialect (and copy-rules finds them).
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import FloatTF32Type, IntegerAttr, IntegerType, Signedness, i64
from xdsl.ir import Attribute, Operation, SSAValue

from copy_dialect.attributes import OOBMode, ReductionKind
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import (
    CopyGeometry,
    base_reduction,
    cp_async_chunk_bytes,
    reduction_map_type,
)
from copy_dialect.upstream_memref import GenericAtomicRMWOp, wrapping_body
from facts.target import TCGEN05, Target

KEEP = "keep the kernel on a target that has it"


def legalize_hint(target: Target | None) -> str:
    """The end of a fix note on a target without TMA, where copy-legalize rewrites TMA
    code: `, or write the kernel for sm_90a and run copy-opt -p 'copy-legalize{target=..}'`;
    '' elsewhere."""
    if target is None or target.has_tma:
        return ""
    return (
        ", or write the kernel for sm_90a and run copy-opt -p "
        f"'copy-legalize{{target={target.name}}}'"
    )


def legalize_error(op: Operation, message: str, note: str) -> Error:
    """A copy-legalize diagnostic at `op` (copy-opt prints it at the op, with the note)."""
    error = Error(f"'{op.name}' op {message}", note=note)
    error.op = op  # type: ignore[attr-defined]
    return error


def check_tmem(op: Operation, target: Target) -> None:
    """TMEM ops have no fallback on a target without tcgen05."""
    # rule: LG1
    if op.name.startswith("copy.tmem_") or op.name == "copy.smem_to_tmem":
        raise legalize_error(
            op,
            f"copy-legalize cannot keep {op.name} on {target.name}: TMEM (tcgen05) exists "
            f"only on {TCGEN05.listed}, and the pass has no fallback for it",
            note=f"{KEEP} ({TCGEN05.listed}), or rewrite the TMEM accumulation in registers "
            "or SMEM by hand",
        )


ATOMIC_RMW_KINDS = {
    "addf": 0, "addi": 1, "andi": 2, "maxs": 6, "maxu": 7, "mins": 10, "minu": 11,
    "ori": 14, "xori": 15,
}  # fmt: skip
"""The `memref.atomic_rmw` kinds a TMA reduction becomes, as upstream MLIR's AtomicRMWKind
numbers them (xDSL's op takes the number)."""

WRAPPING_ATOMICS = ("inc", "dec")
"""The thread atomics with no `memref.atomic_rmw` kind: a `memref.generic_atomic_rmw` whose
body is PTX's wrapping increment (`upstream_memref.wrapping_body`), lowered to
`red.global.{inc,dec}.u32`."""

THREAD_ATOMICS = {
    ("add", "FLOAT32"): "addf", ("add", "FLOAT64"): "addf", ("add", "FLOAT16"): "addf",
    ("add", "UINT32"): "addi", ("add", "INT32"): "addi", ("add", "UINT64"): "addi",
    ("min", "UINT32"): "minu", ("min", "INT32"): "mins", ("min", "UINT64"): "minu",
    ("min", "INT64"): "mins", ("max", "UINT32"): "maxu", ("max", "INT32"): "maxs",
    ("max", "UINT64"): "maxu", ("max", "INT64"): "maxs",
    ("and", "UINT32"): "andi", ("and", "INT32"): "andi", ("and", "UINT64"): "andi",
    ("or", "UINT32"): "ori", ("or", "INT32"): "ori", ("or", "UINT64"): "ori",
    ("xor", "UINT32"): "xori", ("xor", "INT32"): "xori", ("xor", "UINT64"): "xori",
    ("inc", "UINT32"): "inc", ("dec", "UINT32"): "dec",
}  # fmt: skip
"""(the reduction's op, its tensor-map type) -> the atomic that does it from a thread on
sm_80-sm_89 (`red.global.{add,min,max,and,or,xor}` on .u32/.s32/.u64/.s64/.b32/.b64, .f32,
.f64 and .noftz.f16; `red.global.{inc,dec}.u32`, whose wrapping is the TMA reduction's on a
UINT32 map, the only map type that takes inc/dec). Missing, with the reason: bf16 add and
f16/bf16 min/max (red of those needs sm_90), tf32 (the lowering has no tf32 register or
atomic; its reduce add is f32's, so the same reduction on f32 refs legalizes)."""


def _no_atomic(base: str, element: Attribute, signed_type: bool, map_type: str | None) -> str:
    """Why no thread atomic does a reduction `base` of `element` (THREAD_ATOMICS)."""
    if signed_type:
        return (
            "the thread atomics (memref.atomic_rmw, memref.generic_atomic_rmw) take signless "
            f"integers, not {element}"
        )
    if map_type == "TFLOAT32":
        return "the thread atomics take no tf32"
    return f"red.global.{base} of {element} needs sm_90"


def thread_atomic(op: Operation, kind: ReductionKind, element: Attribute, target: Target) -> str:
    """The thread atomic that does a TMA reduction of `kind` on `element` from a thread on
    `target`: a key of ATOMIC_RMW_KINDS (a `memref.atomic_rmw`) or one of WRAPPING_ATOMICS
    (a `memref.generic_atomic_rmw`); raises where none exists (LG2)."""
    map_type = reduction_map_type(kind, element)
    base = base_reduction(kind) if isinstance(element, IntegerType) else kind.value
    found = THREAD_ATOMICS.get((base, map_type or ""))
    signless = not isinstance(element, IntegerType) or element.signedness.data == (
        Signedness.SIGNLESS
    )
    note = f"{KEEP} (sm_90 or newer), or reduce from threads by hand"
    if map_type == "TFLOAT32":
        note = (
            "give the reduction's refs f32: a reduce add through a TFLOAT32 map is the f32 add "
            "of a FLOAT32 map, which legalizes, or " + note
        )
    if found is not None and isinstance(element, IntegerType):
        plain = IntegerType(element.width.data)
        note = (
            f"give the refs the signless {plain} (the map type stays {map_type}: umin/umax or "
            f"smin/smax say how min/max compare), or " + note
        )
    # rule: LG2
    if found is None or not signless:
        raise legalize_error(
            op,
            f"copy-legalize cannot keep the TMA reduction `{kind.value}` of {element} on "
            f"{target.name}: {_no_atomic(base, element, found is not None, map_type)}",
            note=note,
        )
    return found


def check_no_form(op: Operation, what: str, target: Target, note: str = "") -> None:
    """An op with no form on `target` that copy-legalize can produce; `note`: a fix that
    makes one, if any."""
    # rule: LG3
    raise legalize_error(
        op,
        f"copy-legalize cannot keep {what} on {target.name}: it has no pre-Hopper form the "
        "pass can produce",
        note=(note + ", or " if note else "") + f"{KEEP} (sm_90 or newer), or rewrite this "
        "part by hand",
    )


def check_im2col_chunks(op: Operation, g: CopyGeometry, target: Target) -> None:
    """The cp.async gather of an im2col load copies 4-, 8- or 16-byte chunks of a pixel's
    channels, aligned to their size: a constant channel coordinate off a 4-byte boundary
    has none. A TMA load that verifies has none such (IC13 puts the channel coordinate, C4
    and C1 the row and the strides, on 16 bytes): the check stays for what the verifier
    does not see."""
    if cp_async_chunk_bytes(g) is None:
        check_no_form(
            op,
            "an im2col load whose channels start off a 4-byte boundary (cp.async copies 4, 8 "
            "or 16 aligned bytes)",
            target,
            note="start the channel block at a multiple of 4 bytes",
        )


def check_barrier_users(group: SSAValue, user: Operation, target: Target, why: str = "") -> None:
    """A barrier group that tracks TMA loads must count only their arrivals: their cp.async
    form arrives once per issuing thread, so the pass multiplies the group's arrivals by the
    threads, which holds only when every arrival was a load's (and the loads' issuing groups
    have one size)."""
    why = why or f"{user.name} also uses it"
    # rule: LG4
    raise legalize_error(
        user,
        f"copy-legalize cannot keep {user.name} on {target.name}: its barrier group tracks "
        "TMA loads, whose cp.async form arrives once per issuing thread, and the pass scales "
        "the group's arrivals only when every arrival is such a load's, but " + why,
        note="give the TMA loads a barrier group of their own (copy.barrier_init) that only "
        "they (arriving themselves), copy.barrier_wait and copy.barrier_test use",
    )


def check_oob(op: Operation, oob: OOBMode, target: Target) -> None:
    """cp.async zero-fills out of bounds; it cannot fill NaN."""
    # rule: LG5
    if oob == OOBMode.NAN:
        raise legalize_error(
            op,
            f"copy-legalize cannot keep oob nan on {target.name}: cp.async zero-fills the "
            "out-of-bounds bytes and cannot fill NaN",
            note="use oob zeros (the tile past the array's end is then 0), or keep the kernel "
            "on sm_90 or newer",
        )


def check_tf32_load(op: Operation, g: CopyGeometry, target: Target) -> None:
    """A TMA load through a TFLOAT32 map (tf32 elements) rounds each element to tf32, to
    nearest even; its cp.async form copies the f32 bits as they are."""
    # rule: LG8
    if isinstance(g.element_type, FloatTF32Type):
        raise legalize_error(
            op,
            f"copy-legalize cannot keep a TMA load of tf32 on {target.name}: the load rounds "
            "each element to tf32 (to nearest even), and its cp.async form copies the f32 bits "
            "unrounded",
            note="load the array as f32 (f32 refs: a FLOAT32 map, no rounding, which "
            "legalizes) and let the math read it as tf32, or keep the kernel on sm_90 or newer",
        )


def check_predicate(op: Operation, target: Target) -> None:
    """A TMA copy's predicate guards one issuing thread; cp.async is issued by every thread
    of the block, so the pass cannot tell whether the condition is the block's."""
    # rule: LG6
    raise legalize_error(
        op,
        f"copy-legalize cannot keep a predicated TMA copy on {target.name}: the predicate "
        "guards the one issuing thread, cp.async is issued by the whole block",
        note="drop the predicate (if %p) and guard the copy with scf.if on a block-uniform "
        "condition",
    )


def check_threads(op: Operation, threads: int | None, target: Target, load: bool = False) -> None:
    """The thread stores that replace a TMA store split the tile over the block's threads;
    the cp.async form of a TMA load arrives once per thread of the block (its barrier's
    arrivals count them)."""
    what = "split a TMA store over the threads"
    if load:
        what = "count the arrivals of a TMA load's cp.async form"
    # rule: LG7
    if threads is None:
        raise legalize_error(
            op,
            f"copy-legalize cannot {what} on {target.name}: the kernel has no 1-D "
            "gpu.known_block_size",
            note="give the kernel gpu.known_block_size = array<i32: 128, 1, 1> (its block shape)",
        )


def thread_atomic_op(
    atomic: str, value: SSAValue, ref: SSAValue, indices: list[SSAValue]
) -> Operation:
    """`ref[indices] <atomic>= value` from one thread, its result unused, for `atomic` (what
    `thread_atomic` picked): a `memref.atomic_rmw` of the kind, or for inc/dec a
    `memref.generic_atomic_rmw` whose body is PTX's wrapping increment (`red.{inc,dec}.u32`).
    copy-legalize writes it for a TMA reduction (into GMEM) and for a reduction into a peer
    CTA's SMEM once the cluster is folded."""
    if atomic in WRAPPING_ATOMICS:
        return GenericAtomicRMWOp(ref, indices, wrapping_body(atomic, value))
    return memref.AtomicRMWOp.create(
        operands=[value, ref, *indices],
        result_types=[value.type],
        properties={"kind": IntegerAttr(ATOMIC_RMW_KINDS[atomic], i64)},
    )
