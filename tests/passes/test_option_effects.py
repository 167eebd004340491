"""Every option a copy op's syntax accepts shows in what it compiles to (issue S).

A property over the whole dialect: for each op of `copy_dialect.dialect.Copy` and each of its
properties and attributes (every keyword and `{name = ...}` the parser accepts), one kernel
that uses the op in a default form and one with the option changed (`OPTIONS`) are compiled
for a target (`passes.pipeline.compile_module`, to PTX and the kernel's ABI). Either the PTX
differs, or the option is documented here as having no PTX effect on that target, with why:
its effect is the tensor map the runtime encodes (the ABI record differs instead), or it is a
fact for the verifier that changes no instruction. `test_every_option_is_listed` keeps the
table complete: a new property of any op fails it until it has a row. The table (op, option,
target, what changes) goes to the terminal summary.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from xdsl.parser import Parser

from analysis.protocol import ProtocolWarning
from copy_dialect.dialect import Copy
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from passes.pipeline import Compiled, compile_module

STRUCTURAL = {"operandSegmentSizes"}
"""Properties the parser derives from the operands, not options a user writes."""

PTX = "PTX"
"""The option changes the PTX."""
ABI = "ABI"
"""The option changes the tensor map the runtime encodes (the ABI), not the PTX."""
NONE = "none"
"""The option changes neither: a fact for the verifier, documented with why."""
REJECTED = "rejected"
"""The op takes the option only to reject it (`why` starts with the rule id): the anchors'
API has it (Mosaic GPU's collective and reduction on a gather or scatter)."""

KERNEL_DIR = Path(__file__).parent / "option_kernels"
KERNELS = {path.stem: path.read_text() for path in sorted(KERNEL_DIR.glob("*.mlir"))}
"""The kernels the options are compiled in, by name (option_kernels/<name>.mlir)."""

TMA_LOAD = "barrier %bar[%c0] : memref<4096x4096xf32> to"
TMA_STORE = "%tile to %y[%c0, %c0] :"
PREFETCH = "{box = array<i64: 64, 64>}"
IM2COL_LOAD = "upper = array<i64: -1, -1>}"
GATHER4 = "barrier %bar[%c0] : memref<1024x256xf32> to"
SCATTER4 = "column [%c0] : memref<4x64xf32, #copy.smem> to"
GATHER4_PREFETCH = "column [%c0] {width = 64}"
GATHER4_PAIR = (
    "barrier %bar[%c0] : memref<1024x256xf32> to memref<4x64xf32, #copy.smem>, "
    "!copy.barrier<1>\n    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>\n"
)
LEADER_TELLS = (
    "    scf.if %leader { copy.barrier_wait %bar[%c0], %false : !copy.barrier<1> "
    "copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1> } else { "
    "copy.barrier_wait %done[%c0], %false : !copy.barrier<1> }\n"
)
"""The gather4_pair kernel's load and wait, and the pair's handshake that replaces the wait
when the load is leader-tracked (the peer's bytes land at the leader)."""
IDESC = "kind f8f6f4 m 128 n 128 a f8E4M3FN b f8E4M3FN d f32 :"
TMEM_LOAD = "shape shape_32x32b num 4 : memref"
TMEM_LOAD_4 = (
    "%w = copy.tmem_load %acc[%col] shape shape_32x32b num 4 : memref<128x128xf32, "
    "#copy.tmem> -> vector<4xf32>"
)
LDMATRIX = (
    "%r = copy.ldmatrix %h[%lane, %col] num 2 : memref<32x64xf16, #copy.smem> -> vector<4xf16>\n"
    "    vector.store %r, %outh[%lane, %c0] : memref<32x8xf16>, vector<4xf16>"
)
LDMATRIX_B8 = (
    "%b = copy.ldmatrix %s[%lane, %col] shape m16n16 num 1 trans : memref<32x64xi8, "
    "#copy.smem<swizzle = 64>> -> vector<8xi8>\n"
    "    vector.store %b, %outb[%lane, %c0] : memref<32x16xi8>, vector<8xi8>"
)
LDMATRIX_B16 = (
    "%b = copy.ldmatrix %h[%lane, %col] num 1 : memref<32x64xf16, #copy.smem> -> vector<2xf16>\n"
    "    vector.store %b, %outh[%lane, %c0] : memref<32x8xf16>, vector<2xf16>"
)
STMATRIX_B8 = (
    "copy.stmatrix %w, %s[%lane, %col] shape m16n8 num 4 trans : vector<4xi32>, "
    "memref<32x64xi8, #copy.smem<swizzle = 64>>"
)
SMEM_TO_TMEM = (
    "%tile = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>\n"
    "    copy.smem_to_tmem %tile to %acc[%col] shape shape_128x256b : memref<128x8xf32, "
    "#copy.smem<swizzle = 32>>"
)
PAIR_BODY = KERNELS["tmem_moves"][
    KERNELS["tmem_moves"].index("%acc = copy.tmem_alloc") : KERNELS["tmem_moves"].index(
        "    func.return"
    )
]
"""The tmem_moves kernel's TMEM ops, from the alloc to the dealloc."""


def pair(body: str) -> str:
    """`body` with `cta_group 2` on each of its ops that names a CTA group."""
    return (
        body.replace("copy.tmem_alloc :", "copy.tmem_alloc cta_group 2 :")
        .replace("copy.tmem_relinquish\n", "copy.tmem_relinquish cta_group 2\n")
        .replace("multicast warpx4 :", "multicast warpx4 cta_group 2 :")
        .replace("%h[%col] :", "%h[%col] cta_group 2 :")
        .replace("copy.tmem_dealloc %acc :", "copy.tmem_dealloc %acc cta_group 2 :")
    )


@dataclass(frozen=True)
class Option:
    """One option of one op: in kernel `kernel`, the text `old` (the op in its default
    form) is replaced by `new` (the option changed); `effect` is PTX, ABI or NONE, `why`
    says what the option does (for ABI and NONE: why the PTX stays)."""

    op: str
    name: str
    kernel: str
    old: str
    new: str
    effect: str = PTX
    why: str = ""
    default: str | None = None
    """The op's form the option is compared with, where it is not `old` (an option that
    refines another: a fraction refines `l2`)."""


def load(option: str) -> str:
    return TMA_LOAD.replace(" :", f" {option} :")


OPTIONS = [
    # copy.async_copy
    Option("copy.async_copy", "implementation", "tma", TMA_LOAD, load("impl cp_async"),
           why="cp.async.cg with mbarrier arrive.noinc instead of the TMA load"),
    Option("copy.async_copy", "reduction", "tma", TMA_STORE, "%tile to %y[%c0, %c0] reduce add :",
           why="cp.reduce.async.bulk.tensor .add instead of the store"),
    Option("copy.async_copy", "collective", "cluster", " {collective = array<i64: 0>}", "",
           why="the load's .multicast::cluster form and its CTA mask (the default is no "
           "collective)"),
    Option("copy.async_copy", "leader_tracked", "cluster", "barrier %bar[%c0] {",
           "barrier %bar[%c0] leader_tracked <partitioned 0> {",
           why=".cta_group::2 with the leader CTA's barrier"),
    Option("copy.async_copy", "oob", "tma", TMA_LOAD, load("oob nan"), ABI,
           "the out-of-bounds fill is a field of the tensor map (oob: zeros or nan), which the "
           "runtime encodes: the load instruction is the same"),
    Option("copy.async_copy", "swizzle", "tma", TMA_LOAD, load("{swizzle = 16 : i64}"), NONE,
           "an assertion that the tensor map's swizzle is the SMEM buffer's (#copy.smem<swizzle "
           "= N>, where the swizzle comes from): any other value is rule C15, and it is "
           "rejected on cp.async and bulk copies, which have no map (AT3)"),
    Option("copy.async_copy", "arrive", "tma", TMA_LOAD, load("{arrive = false}"),
           why="no mbarrier.arrive.expect_tx by the issuing thread"),
    Option("copy.async_copy", "cache", "cp_async", "oob promise_in_bounds :",
           "oob promise_in_bounds cache ca :",
           why="cp.async.ca (through L1) instead of .cg, which 16-byte chunks take by default "
           "(emitted as .cg before issue S)"),
    Option("copy.async_copy", "l2", "tma", TMA_LOAD, load("l2 evict_first"),
           why=".L2::cache_hint with evict_first's policy"),
    Option("copy.async_copy", "l2_fraction", "tma", TMA_LOAD, load("l2 evict_first fraction 0.5"),
           why="createpolicy.fractional 0.5", default=load("l2 evict_first")),
    Option("copy.async_copy", "l2_secondary", "tma", TMA_LOAD,
           load("l2 evict_last fraction 0.5 secondary evict_first"),
           why="createpolicy's .L2::evict_first secondary priority",
           default=load("l2 evict_last fraction 0.5")),
    Option("copy.async_copy", "cache_hint", "tma", TMA_LOAD,
           load("{cache_hint = 1364590687093260288 : i64}"),
           why=".L2::cache_hint with the raw policy"),
    Option("copy.async_copy", "l2_promotion", "tma", TMA_LOAD, load("{l2_promotion = 256 : i64}"),
           ABI, "the L2 promotion is a field of the tensor map the runtime encodes"),
    # copy.im2col_load
    Option("copy.im2col_load", "lower", "im2col", "lower = array<i64: -1, -1>",
           "lower = array<i64: -2, -1>", ABI,
           "the bounding box's lower corner is a field of the im2col tensor map"),
    Option("copy.im2col_load", "upper", "im2col", IM2COL_LOAD, "upper = array<i64: -2, -1>}", ABI,
           "the bounding box's upper corner is a field of the im2col tensor map"),
    Option("copy.im2col_load", "strides", "im2col", IM2COL_LOAD,
           "upper = array<i64: -1, -1>, strides = array<i64: 2, 1>}", ABI,
           "the traversal strides are the im2col tensor map's elementStrides"),
    Option("copy.im2col_load", "arrive", "im2col", IM2COL_LOAD,
           "upper = array<i64: -1, -1>, arrive = false}",
           why="no mbarrier.arrive.expect_tx by the issuing thread"),
    Option("copy.im2col_load", "implementation", "im2col", "barrier %bar[%c0] {",
           "barrier %bar[%c0] impl cp_async {", why="the cp.async gather of the pixels"),
    Option("copy.im2col_load", "l2", "im2col", "barrier %bar[%c0] {",
           "barrier %bar[%c0] l2 evict_last {", why=".L2::cache_hint with evict_last's policy"),
    Option("copy.im2col_load", "l2_fraction", "im2col", "barrier %bar[%c0] {",
           "barrier %bar[%c0] l2 evict_last fraction 0.25 {", why="createpolicy.fractional 0.25",
           default="barrier %bar[%c0] l2 evict_last {"),
    Option("copy.im2col_load", "l2_secondary", "im2col", "barrier %bar[%c0] {",
           "barrier %bar[%c0] l2 evict_last fraction 0.25 secondary evict_first {",
           why="createpolicy's .L2::evict_first secondary priority",
           default="barrier %bar[%c0] l2 evict_last fraction 0.25 {"),
    Option("copy.im2col_load", "l2_promotion", "im2col", IM2COL_LOAD,
           "upper = array<i64: -1, -1>, l2_promotion = 64 : i64}", ABI,
           "the L2 promotion is a field of the im2col tensor map"),
    # copy.gather4, copy.scatter4, copy.gather4_prefetch
    Option("copy.gather4", "arrive", "gather4", GATHER4,
           "barrier %bar[%c0] {arrive = false} : memref<1024x256xf32> to",
           why="no mbarrier.arrive.expect_tx by the issuing thread"),
    Option("copy.gather4", "leader_tracked", "gather4_pair", GATHER4_PAIR,
           GATHER4_PAIR.replace(" : memref<1024x256xf32>", " leader_tracked : memref<1024x256xf32>")
           .replace("    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>\n", LEADER_TELLS),
           why=".cta_group::2 on the pair leader's barrier, which expects both tiles"),
    Option("copy.gather4", "collective", "gather4", GATHER4,
           "barrier %bar[%c0] {collective = array<i64: 0>} : memref<1024x256xf32> to", REJECTED,
           "D6: a 4-row tile has no share for each CTA of a collective group"),
    Option("copy.gather4", "l2", "gather4", GATHER4,
           "barrier %bar[%c0] l2 evict_first : memref<1024x256xf32> to",
           why=".L2::cache_hint with evict_first's policy"),
    Option("copy.gather4", "l2_fraction", "gather4", GATHER4,
           "barrier %bar[%c0] l2 evict_first fraction 0.5 : memref<1024x256xf32> to",
           why="createpolicy.fractional 0.5",
           default="barrier %bar[%c0] l2 evict_first : memref<1024x256xf32> to"),
    Option("copy.gather4", "l2_secondary", "gather4", GATHER4,
           "barrier %bar[%c0] l2 evict_last fraction 0.5 secondary evict_first : "
           "memref<1024x256xf32> to", why="createpolicy's .L2::evict_first secondary priority",
           default="barrier %bar[%c0] l2 evict_last fraction 0.5 : memref<1024x256xf32> to"),
    Option("copy.gather4", "l2_promotion", "gather4", GATHER4,
           "barrier %bar[%c0] {l2_promotion = 256 : i64} : memref<1024x256xf32> to", ABI,
           "the L2 promotion is a field of the row map the runtime encodes"),
    Option("copy.scatter4", "reduction", "gather4", SCATTER4,
           "column [%c0] reduce add : memref<4x64xf32, #copy.smem> to", REJECTED,
           "E4: cp.reduce.async.bulk.tensor has no .tile::scatter4 mode (PTX ISA)"),
    Option("copy.scatter4", "l2", "gather4", SCATTER4,
           "column [%c0] l2 evict_first : memref<4x64xf32, #copy.smem> to",
           why=".L2::cache_hint with evict_first's policy"),
    Option("copy.scatter4", "l2_fraction", "gather4", SCATTER4,
           "column [%c0] l2 evict_first fraction 0.5 : memref<4x64xf32, #copy.smem> to",
           why="createpolicy.fractional 0.5",
           default="column [%c0] l2 evict_first : memref<4x64xf32, #copy.smem> to"),
    Option("copy.scatter4", "l2_secondary", "gather4", SCATTER4,
           "column [%c0] l2 evict_last fraction 0.5 secondary evict_first : memref<4x64xf32, "
           "#copy.smem> to", why="createpolicy's .L2::evict_first secondary priority",
           default="column [%c0] l2 evict_last fraction 0.5 : memref<4x64xf32, #copy.smem> to"),
    Option("copy.scatter4", "l2_promotion", "gather4", SCATTER4,
           "column [%c0] {l2_promotion = 64 : i64} : memref<4x64xf32, #copy.smem> to", ABI,
           "the L2 promotion is a field of the row map the runtime encodes"),
    Option("copy.gather4_prefetch", "width", "gather4", GATHER4_PREFETCH,
           "column [%c0] {width = 32}", ABI,
           "the width is the row map's box (a TMA prefetch has no size operand)"),
    Option("copy.gather4_prefetch", "l2", "gather4", GATHER4_PREFETCH,
           "column [%c0] l2 evict_last {width = 64}",
           why=".L2::cache_hint with evict_last's policy"),
    Option("copy.gather4_prefetch", "l2_fraction", "gather4", GATHER4_PREFETCH,
           "column [%c0] l2 evict_last fraction 0.5 {width = 64}",
           why="createpolicy.fractional 0.5", default="column [%c0] l2 evict_last {width = 64}"),
    Option("copy.gather4_prefetch", "l2_secondary", "gather4", GATHER4_PREFETCH,
           "column [%c0] l2 evict_last fraction 0.5 secondary evict_first {width = 64}",
           why="createpolicy's .L2::evict_first secondary priority",
           default="column [%c0] l2 evict_last fraction 0.5 {width = 64}"),
    Option("copy.gather4_prefetch", "l2_promotion", "gather4", GATHER4_PREFETCH,
           "column [%c0] {width = 64, l2_promotion = 0 : i64}", ABI,
           "the L2 promotion is a field of the row map"),
    # copy.try_cancel
    Option("copy.try_cancel", "multicast", "clc", "barrier %bar[%c0] :",
           "barrier %bar[%c0] multicast :",
           why="clusterlaunchcontrol.try_cancel's .multicast::cluster::all"),
    # copy.prefetch
    Option("copy.prefetch", "box", "tma", PREFETCH, "{box = array<i64: 32, 64>}", ABI,
           "the box is the prefetch's tensor map's (a TMA prefetch has no size operand)"),
    Option("copy.prefetch", "implementation", "tma",
           "copy.prefetch %w[%c0, %c0] {box = array<i64: 64, 64>} : memref<4096x4096xf32>",
           "copy.prefetch %z[%c0, %c0] impl bulk {box = array<i64: 4, 256>} : "
           "memref<64x256xf32>", why="cp.async.bulk.prefetch.L2 of the "
           "box's range (the kernel's %z, a box of whole rows) instead of the tensor prefetch"),
    Option("copy.prefetch", "l2", "tma", "%c0] {box", "%c0] l2 evict_last {box",
           why=".L2::cache_hint with evict_last's policy"),
    Option("copy.prefetch", "l2_fraction", "tma", "%c0] {box",
           "%c0] l2 evict_last fraction 0.5 {box",
           why="createpolicy.fractional 0.5", default="%c0] l2 evict_last {box"),
    Option("copy.prefetch", "l2_secondary", "tma", "%c0] {box",
           "%c0] l2 evict_last fraction 0.5 secondary evict_first {box",
           why="createpolicy's .L2::evict_first secondary priority (evict_unchanged is "
           "createpolicy's default secondary: the same policy as none)",
           default="%c0] l2 evict_last fraction 0.5 {box"),
    Option("copy.prefetch", "l2_promotion", "tma", PREFETCH,
           "{box = array<i64: 64, 64>, l2_promotion = 0 : i64}", ABI,
           "the L2 promotion is a field of the tensor map"),
    Option("copy.prefetch", "cache_hint", "tma", PREFETCH,
           "{box = array<i64: 64, 64>, cache_hint = 1508705875169116160 : i64}",
           why=".L2::cache_hint with the raw policy (dropped before issue S)"),
    # groups
    Option("copy.commit_group", "group", "cp_async", "copy.commit_group cp_async",
           "copy.commit_group bulk", why="cp.async.bulk.commit_group instead of cp.async's"),
    Option("copy.wait_group", "group", "cp_async", "copy.wait_group cp_async 0",
           "copy.wait_group bulk 0", why="cp.async.bulk.wait_group instead of cp.async's"),
    Option("copy.wait_group", "pending", "tma", "copy.wait_group bulk 0",
           "copy.wait_group bulk 1", why="cp.async.bulk.wait_group 1"),
    Option("copy.wait_group", "read_only", "tma", "copy.wait_group bulk 0",
           "copy.wait_group bulk 0 read_only", why="cp.async.bulk.wait_group.read"),
    # barriers
    Option("copy.barrier_init", "arrivals", "mbarriers", "arrivals 4 :", "arrivals 8 :",
           why="mbarrier.init's count"),
    Option("copy.barrier_arrive", "count", "mbarriers", "copy.barrier_arrive %bars[%c0] :",
           "copy.barrier_arrive %bars[%c0] count 2 :", why="mbarrier.arrive's count operand"),
    Option("copy.barrier_arrive", "nocomplete", "mbarriers", "copy.barrier_arrive %bars[%c0] :",
           "copy.barrier_arrive %bars[%c0] nocomplete :", why="mbarrier.arrive.noComplete"),
    Option("copy.barrier_arrive", "scope", "mbarriers", "copy.barrier_arrive %bars[%c0] :",
           "copy.barrier_arrive %bars[%c0] scope cluster :", why="mbarrier.arrive.release.cluster"),
    Option("copy.barrier_arrive", "issuer", "mbarriers", "copy.barrier_arrive %bars[%c0] :",
           "copy.barrier_arrive %bars[%c0] issuer elected :",
           why="the arrival under the elected thread's branch"),
    Option("copy.barrier_arrive_drop", "count", "mbarriers",
           "copy.barrier_arrive_drop %bars[%c0] :", "copy.barrier_arrive_drop %bars[%c0] count 3 :",
           why="mbarrier.arrive_drop's count operand"),
    Option("copy.barrier_arrive_drop", "nocomplete", "mbarriers",
           "copy.barrier_arrive_drop %bars[%c0] :",
           "copy.barrier_arrive_drop %bars[%c0] nocomplete :",
           why="mbarrier.arrive_drop.noComplete"),
    Option("copy.barrier_arrive_drop", "expect_tx", "mbarriers",
           "copy.barrier_arrive_drop %bars[%c0] :",
           "copy.barrier_arrive_drop %bars[%c0] expect_tx 4096 issuer elected :",
           why="mbarrier.arrive_drop.expect_tx (by one thread: the expected bytes are counted "
           "once)"),
    Option("copy.barrier_arrive_drop", "issuer", "mbarriers",
           "copy.barrier_arrive_drop %bars[%c0] :",
           "copy.barrier_arrive_drop %bars[%c0] issuer warps :",
           why="the arrival under each warp's elected lane's branch"),
    Option("copy.barrier_arrive_expect_tx", "bytes", "mbarriers", "%bars[%c0], 256 :",
           "%bars[%c0], 1024 :", why="the expected bytes operand"),
    Option("copy.barrier_expect_tx", "bytes", "mbarriers", "%bars[%c0], 512 :",
           "%bars[%c0], 2048 :", why="mbarrier.expect_tx's bytes"),
    Option("copy.barrier_complete_tx", "bytes", "mbarriers", "%bars[%c0], 64 :",
           "%bars[%c0], 128 :", why="mbarrier.complete_tx's bytes"),
    Option("copy.barrier_complete_tx", "issuer", "mbarriers", "%bars[%c0], 64 :",
           "%bars[%c0], 64 issuer warps :", why="the completion under each warp's elected lane"),
    Option("copy.barrier_wait", "suspend_hint", "mbarriers",
           "copy.barrier_wait %bars[%c0], %false :",
           "copy.barrier_wait %bars[%c0], %false suspend_hint 1000 :",
           why="mbarrier.try_wait's suspend-time hint operand"),
    Option("copy.barrier_reinit", "arrivals", "mbarriers", "reinit %bars arrivals 2 :",
           "reinit %bars arrivals 6 :", why="mbarrier.init's count"),
    # roles
    Option("copy.warp_specialize", "warps", "roles", "warps [4, 4]", "warps [2, 6]",
           why="the role boundary (warp id < 2 instead of < 4)"),
    Option("copy.warp_specialize", "maxnreg", "roles", "warps [4, 4]",
           "warps [4, 4] maxnreg [40, 232]", why="setmaxnreg.dec/.inc per role"),
    Option("copy.named_barrier_sync", "id", "mbarriers", "named_barrier_sync 1, 128",
           "named_barrier_sync 3, 128", why="bar.sync's barrier id"),
    Option("copy.named_barrier_sync", "threads", "mbarriers", "named_barrier_sync 1, 128",
           "named_barrier_sync 1, 64", why="bar.sync's thread count"),
    Option("copy.named_barrier_arrive", "id", "mbarriers", "named_barrier_arrive 2, 128",
           "named_barrier_arrive 4, 128", why="bar.arrive's barrier id"),
    Option("copy.named_barrier_arrive", "threads", "mbarriers", "named_barrier_arrive 2, 128",
           "named_barrier_arrive 2, 96", why="bar.arrive's thread count"),
    # SMEM
    Option("copy.alloc_smem", "alignment", "tma", "%tile = copy.alloc_smem :",
           "%tile = copy.alloc_smem {alignment = 1024 : i64} :",
           why="the buffer's offset in the SMEM arena (after %pad: 128 -> 1024)"),
    # TMEM
    Option("copy.tmem_load", "shape", "tmem", TMEM_LOAD, "shape shape_16x256b num 1 : memref",
           why="tcgen05.ld.16x256b"),
    Option("copy.tmem_load", "num", "tmem", TMEM_LOAD_4,
           TMEM_LOAD_4.replace("num 4", "num 8").replace("<4xf32>", "<8xf32>"),
           why="tcgen05.ld's .x8 (the vector's length)"),
    Option("copy.tmem_load", "offset", "tmem", TMEM_LOAD_4,
           TMEM_LOAD_4.replace("shape_32x32b num 4", "shape_16x32bx2 num 4 {offset = 16 : i64}"),
           why="tcgen05.ld.16x32bx2's immHalfSplitoff (16; the shape takes it)"),
    Option("copy.tmem_load", "reduce", "tmem_reduce", "reduce max :", "reduce min :",
           why="tcgen05.ld.red.min"),
    Option("copy.tmem_load", "abs", "tmem_reduce", "reduce max :", "reduce max abs :",
           why="tcgen05.ld.red's .abs"),
    Option("copy.tmem_load", "nan", "tmem_reduce", "reduce max :", "reduce max nan :",
           why="tcgen05.ld.red's .NaN"),
    Option("copy.tmem_store", "shape", "tmem",
           "copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4",
           "copy.tmem_store %v, %acc[%col] shape shape_16x256b num 1", why="tcgen05.st.16x256b"),
    Option("copy.tmem_store", "num", "tmem",
           "copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4",
           "copy.tmem_store %v, %acc[%col] shape shape_16x128b num 2",
           why="tcgen05.st's .x2 (with the 16x128b shape the same 4 registers take)"),
    Option("copy.tmem_store", "offset", "tmem",
           "copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4 :",
           "copy.tmem_store %v, %acc[%col] shape shape_16x32bx2 num 4 {offset = 8 : i64} :",
           why="tcgen05.st.16x32bx2's immHalfSplitoff"),
    Option("copy.tmem_load", "pack", "tmem_pack",
           "num 4 : memref<128x128xi32, #copy.tmem> -> vector<4xi32>",
           "num 4 pack : memref<128x128xi32, #copy.tmem> -> vector<8xi16>",
           why="tcgen05.ld's .pack::16b (two columns' 16-bit values a register)"),
    Option("copy.tmem_store", "unpack", "tmem_pack",
           "copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4 : vector<4xi32>",
           "copy.tmem_store %h, %acc[%col] shape shape_32x32b num 4 unpack : vector<8xi16>",
           why="tcgen05.st's .unpack::16b (a register's halves to two columns)"),
    Option("copy.tmem_wait", "kind", "tmem", "copy.tmem_wait store", "copy.tmem_wait load",
           why="tcgen05.wait::ld instead of ::st"),
    Option("copy.smem_to_tmem", "shape", "tmem",
           SMEM_TO_TMEM,
           SMEM_TO_TMEM.replace("128x8xf32, #copy.smem<swizzle = 32>", "128x4xf32, #copy.smem")
           .replace("shape_128x256b", "shape_128x128b"),
           why="tcgen05.cp.128x128b"),
    Option("copy.smem_to_tmem", "multicast", "tmem",
           SMEM_TO_TMEM,
           SMEM_TO_TMEM.replace("128x8xf32, #copy.smem<swizzle = 32>", "32x4xf32, #copy.smem")
           .replace("shape_128x256b", "shape_32x128b multicast warpx4"),
           why="tcgen05.cp.32x128b.warpx4"),
    # TMEM of a CTA pair, the permit, scale copies, slices, shifts (a kernel names one CTA
    # group, J28: switched alone, an op's cta_group is rejected)
    Option("copy.tmem_alloc", "cta_group", "tmem_moves", PAIR_BODY, pair(PAIR_BODY),
           why=".cta_group::2 on every tcgen05 instruction (all the kernel's ops switched)"),
    Option("copy.tmem_dealloc", "cta_group", "tmem_moves", "copy.tmem_dealloc %acc :",
           "copy.tmem_dealloc %acc cta_group 2 :", REJECTED,
           "J27: a dealloc of another group than the allocation's"),
    Option("copy.tmem_relinquish", "cta_group", "tmem_moves", "copy.tmem_relinquish\n",
           "copy.tmem_relinquish cta_group 2\n", REJECTED,
           "J28: one CTA group for every tcgen05 op of a kernel"),
    Option("copy.smem_to_tmem", "cta_group", "tmem_moves", "multicast warpx4 :",
           "multicast warpx4 cta_group 2 :", REJECTED,
           "J28: one CTA group for every tcgen05 op of a kernel"),
    Option("copy.smem_to_tmem", "scales", "tmem_moves", "multicast warpx4 :",
           "multicast warpx4 scales :", NONE,
           "marks a scale-factor copy: facts for the verifier (J13), the same tcgen05.cp"),
    Option("copy.smem_to_tmem", "metadata", "tmem_metadata", "shape_128x128b :",
           "shape_128x128b metadata :", NONE,
           "marks a sparse-metadata copy: facts for the verifier (J13), the same tcgen05.cp"),
    Option("copy.tmem_slice", "column", "tmem_moves", "%acc[0] :", "%acc[32] :",
           why="the slice's TMEM address (+8 columns: 32 8-bit elements)"),
    Option("copy.tmem_shift", "cta_group", "tmem_moves", "copy.tmem_shift %h[%col] :",
           "copy.tmem_shift %h[%col] cta_group 2 :", REJECTED,
           "J28: one CTA group for every tcgen05 op of a kernel"),
    # DSMEM and the cluster
    Option("copy.peer_store", "reduction", "dsmem", "copy.peer_store %n,",
           "copy.peer_store reduce add %n,", why="red.async .add instead of st.async"),
    Option("copy.peer_arrive", "expect_tx", "dsmem", "peer %peer : !copy.barrier<1>",
           "peer %peer expect_tx 4 : !copy.barrier<1>",
           why="mbarrier.arrive.expect_tx on the peer's barrier"),
    Option("copy.peer_arrive", "relaxed", "dsmem", "peer %peer : !copy.barrier<1>",
           "peer %peer relaxed : !copy.barrier<1>",
           why="mbarrier.arrive.relaxed.cluster instead of .release.cluster"),
    Option("copy.cluster_sync", "arrive", "mbarriers", "copy.cluster_sync\n",
           "copy.cluster_sync arrive\n", why="barrier.cluster.arrive alone"),
    Option("copy.cluster_sync", "wait", "mbarriers", "copy.cluster_sync\n",
           "copy.cluster_sync wait\n", why="barrier.cluster.wait alone"),
    Option("copy.cluster_sync", "relaxed", "mbarriers", "copy.cluster_sync\n",
           "copy.cluster_sync arrive relaxed\n    copy.cluster_sync wait\n",
           why="barrier.cluster.arrive.relaxed"),
    Option("copy.cluster_sync", "aligned", "mbarriers", "copy.cluster_sync\n",
           "copy.cluster_sync arrive aligned\n    copy.cluster_sync wait aligned\n",
           why="barrier.cluster.arrive.aligned / wait.aligned"),
    # tensor maps in global memory
    Option("copy.tensormap_global", "slots", "tensormap", "slot %c0 of 4", "slot %c0 of 8", ABI,
           "the workspace's size in maps, which the runtime allocates (tensor_map_workspace in the "
           "ABI); the kernel addresses slot 0 alike"),
    Option("copy.tensormap_replace", "field", "tensormap",
           "global_dim[0] to %rows : !copy.tensormap<8x64xf32>, i32",
           "global_stride[0] to %pitch : !copy.tensormap<8x64xf32>, i64",
           why="tensormap.replace.global_stride instead of global_dim"),
    Option("copy.tensormap_replace", "dim", "tensormap", "global_dim[0]", "global_dim[1]",
           why="tensormap.replace's ord"),
    # warp-collective matrix loads and stores
    Option("copy.ldmatrix", "num", "matrix", LDMATRIX,
           LDMATRIX.replace("num 2", "num 4").replace("<4xf16>", "<8xf16>"),
           why="ldmatrix's .x4 (the result's registers)"),
    Option("copy.ldmatrix", "trans", "matrix", "num 2 : memref<32x64xf16",
           "num 2 trans : memref<32x64xf16", why="ldmatrix.trans"),
    Option("copy.ldmatrix", "format", "matrix", "shape m16n16 num 1 trans :",
           "shape m16n16 num 1 trans format b4x16_p64 :", why="ldmatrix's .b8x16.b4x16_p64"),
    Option("copy.ldmatrix", "shape", "matrix", LDMATRIX_B8, LDMATRIX_B8,
           why="ldmatrix.m16n16 .b8 instead of the default m8n8 .b16 (the shape goes with the "
           "buffer's element width: an 8-bit buffer here, a 16-bit one in the default form)",
           default=LDMATRIX_B16),
    Option("copy.stmatrix", "num", "matrix",
           "copy.stmatrix %v, %h[%lane, %col] num 2 : vector<4xf16>",
           "copy.stmatrix %w, %h[%lane, %col] num 4 : vector<4xi32>",
           why="stmatrix's .x4 (the value's registers)"),
    Option("copy.stmatrix", "trans", "matrix", "copy.stmatrix %v, %h[%lane, %col] num 2 :",
           "copy.stmatrix %v, %h[%lane, %col] num 2 trans :", why="stmatrix.trans"),
    Option("copy.stmatrix", "shape", "matrix", STMATRIX_B8, STMATRIX_B8,
           why="stmatrix.m16n8 .b8 instead of the default m8n8 .b16 (the shape goes with the "
           "buffer's element width)",
           default="copy.stmatrix %w, %h[%lane, %col] num 4 trans : vector<4xi32>, "
           "memref<32x64xf16, #copy.smem>"),
    # tensor-core operand descriptors
    Option("copy.matrix_descriptor", "major", "descriptor", "major k :", "major mn :",
           why="the descriptor's LBO: 16 bytes (unused) for K-major, the next atom along N "
           "(64 rows of 128 bytes) for MN-major"),
    Option("copy.matrix_descriptor", "tcgen05", "descriptor", "major k :", "major k tcgen05 :",
           why="the sm_100a form: version bits 46-48 and the layout at 61-63 (128B: 2 << 61 "
           "instead of 1 << 62)"),
    # tcgen05.mma instruction descriptors
    Option("copy.mma_instruction_descriptor", "kind", "instruction_descriptor", IDESC,
           "kind f16 m 128 n 128 a f16 b f16 d f32 :", NONE,
           "the kind is the MMA's (.kind::f16), no field of the descriptor: it says how the A/B "
           "format bits read (f16 and e4m3 are both 0) and which types verify"),
    Option("copy.mma_instruction_descriptor", "m", "instruction_descriptor", "m 128", "m 64",
           why="M >> 4 in bits 24-28"),
    Option("copy.mma_instruction_descriptor", "n", "instruction_descriptor", "n 128", "n 256",
           why="N >> 3 in bits 17-22"),
    Option("copy.mma_instruction_descriptor", "a", "instruction_descriptor", "a f8E4M3FN",
           "a f8E5M2", why="A's format in bits 7-9 (e5m2: 1)"),
    Option("copy.mma_instruction_descriptor", "b", "instruction_descriptor", "b f8E4M3FN",
           "b f6E2M3FN", why="B's format in bits 10-12 (e2m3: 3)"),
    Option("copy.mma_instruction_descriptor", "d", "instruction_descriptor", "d f32", "d f16",
           why="D's format in bits 4-5 (f16 0, f32 1)"),
    Option("copy.mma_instruction_descriptor", "cta_group", "instruction_descriptor", "d f32 :",
           "d f32 cta_group 2 :", NONE,
           "the CTA group is the MMA's (.cta_group::2), no field of the descriptor: it decides "
           "which M and N verify (M 256 over a pair is encoded as M)"),
    Option("copy.mma_instruction_descriptor", "a_major", "instruction_descriptor", "d f32 :",
           "d f32 a_major mn :", why="A MN-major: bit 15"),
    Option("copy.mma_instruction_descriptor", "b_major", "instruction_descriptor", "d f32 :",
           "d f32 b_major mn :", why="B MN-major: bit 16"),
    Option("copy.mma_instruction_descriptor", "negate_a", "instruction_descriptor", "d f32 :",
           "d f32 negate_a :", why="negate A: bit 13"),
    Option("copy.mma_instruction_descriptor", "negate_b", "instruction_descriptor", "d f32 :",
           "d f32 negate_b :", why="negate B: bit 14"),
    Option("copy.mma_instruction_descriptor", "saturate", "instruction_descriptor", IDESC,
           "kind i8 m 128 n 128 a si8 b si8 d i32 saturate :",
           why="saturate (kind i8): bit 3",
           default="kind i8 m 128 n 128 a si8 b si8 d i32 :"),
    Option("copy.mma_instruction_descriptor", "sparse", "instruction_descriptor", "d f32 :",
           "d f32 sparse :", why="sparse (tcgen05.mma.sp): bit 2"),
    Option("copy.mma_instruction_descriptor", "selector", "instruction_descriptor", "d f32 :",
           "d f32 sparse selector 1 :",
           why="the sparsity selector (a sparse MMA's metadata column): bits 0-1, with sparse "
           "(bit 2), which it needs (MI9)"),
    # assumptions
    Option("copy.assume", "lower", "tma", "%n ge 1 :", "%n ge 2 :", NONE,
           "a fact the verifier and the analysis use; without --debug-guards it lowers to nothing "
           "(no llvm.intr.assume: the code never relies on it), with them to the AS3 check"),
    Option("copy.assume", "upper", "tma", "%n ge 1 :", "%n in [1, 64] :", NONE,
           "a fact, as lower (AS3 under --debug-guards)"),
    Option("copy.assume", "divisor", "tma", "%n ge 1 :", "%n ge 1 multiple_of 8 :", NONE,
           "a fact, as lower (AS3 under --debug-guards)"),
]  # fmt: skip


def options_of(op_name: str) -> set[str]:
    """The properties and attributes an op's definition accepts, but the structural ones."""
    op = next(o for o in Copy.operations if o.name == op_name)
    definition = op.get_irdl_definition()
    return {*definition.properties, *definition.attributes} - STRUCTURAL


def test_every_option_is_listed():
    """Each property and attribute of every copy op has a row in OPTIONS, and each row names
    one (a new option needs a row: its PTX effect, or why it has none)."""
    listed = {(o.op, o.name) for o in OPTIONS}
    defined = {(op.name, name) for op in Copy.operations for name in options_of(op.name)}
    assert sorted(defined - listed) == [], "options without a row in OPTIONS"
    assert sorted(listed - defined) == [], "rows of options no op defines"
    assert all(o.why for o in OPTIONS), "every row says what the option does"


@cache
def compiled(text: str) -> Compiled:
    module = Parser(make_context(), text).parse_module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProtocolWarning)
        return compile_module(module, make_context(), verify_protocol=False)


def variants(option: Option) -> tuple[str, str]:
    base = KERNELS[option.kernel]
    assert base.count(option.old) == 1, f"{option.old!r} is not once in kernel {option.kernel}"
    default = base if option.default is None else base.replace(option.old, option.default)
    return default, base.replace(option.old, option.new)


def kernel_abi(result: Compiled) -> str:
    return repr(result.abi)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: f"{o.op}:{o.name}")
def test_option_changes_the_ptx_or_says_why_not(option: Option):
    """The option's kernel compiles; its PTX differs from the default's, or (ABI) its PTX is
    the default's and its tensor map differs, or (NONE) neither differs, as documented."""
    default_text, option_text = variants(option)
    if option.effect == REJECTED:
        compiled(default_text)
        with pytest.raises(CopyVerifyException) as err:
            compiled(option_text)
        assert option.why.split(":")[0] in err.value.rules
        return
    default, changed = compiled(default_text), compiled(option_text)
    same_ptx = default.ptx == changed.ptx
    if option.effect == PTX:
        assert not same_ptx, f"{option.op} {option.name}: accepted, but the PTX is the default's"
        return
    assert same_ptx, (
        f"{option.op} {option.name} is documented as no PTX effect, but the PTX differs"
    )
    same_abi = kernel_abi(default) == kernel_abi(changed)
    if option.effect == ABI:
        assert not same_abi, f"{option.op} {option.name}: neither the PTX nor the ABI differs"
    else:
        assert same_abi, f"{option.op} {option.name}: documented as no effect, but the ABI differs"


def test_option_table(report):
    """The table of options and their PTX effect, in the terminal summary."""
    targets = {
        name: text.split('#copy.target<"')[1].split('"')[0] for name, text in KERNELS.items()
    }
    width = max(len(f"{o.op} {o.name}") for o in OPTIONS)
    lines = [f"{'op option':<{width}}  target   effect    what changes"]
    for o in OPTIONS:
        effect = {PTX: "PTX", ABI: "ABI only", NONE: "none", REJECTED: "rejected"}[o.effect]
        lines.append(
            f"{o.op + ' ' + o.name:<{width}}  {targets[o.kernel]:<7}  {effect:<8}  {o.why}"
        )
    counts = {e: sum(o.effect == e for o in OPTIONS) for e in (PTX, ABI, NONE, REJECTED)}
    lines.append(
        f"{len(OPTIONS)} options of {len(list(Copy.operations))} ops: {counts[PTX]} change the "
        "PTX, "
        f"{counts[ABI]} only the tensor map (ABI), {counts[NONE]} neither (facts for the "
        f"verifier), {counts[REJECTED]} taken only to be rejected (a rule)"
    )
    report("option effects (tests/passes/test_option_effects.py)", lines)
