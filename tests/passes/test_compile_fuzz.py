"""Whatever the verifier accepts compiles for its target.

A differential fuzz over every op of the dialect and every target of facts.target:
random kernels from a fixed seed, one family of ops per kernel (TMA loads with multicast and
leader-tracked copies, single or in a ring of slots, TMA stores and reductions, prefetches,
cp.async loads, barriers and bulk/cp.async groups, SMEM allocations, TMEM allocations,
loads, stores, waits and SMEM->TMEM copies), each choice mostly valid so that about half of
the kernels verify. The kernels follow the copy protocol (analysis.protocol): a load is
waited on with its phase's parity, a store committed and waited, TMEM freed, an arrival
made by thread 0 or counted for the whole block; a few choices (`Kernel.mistake`) break it,
so that the protocol rules are among the rejections, and a few leave it undecidable (a
parity or barrier index from a kernel argument), which the analysis warns about.

"The verifier" is what users run, `passes.pipeline.verify_module` (op verifiers, dominance,
the protocol analysis). Every kernel it accepts, with or without a warning, must lower and
compile to a cubin (llvmlite's NVPTX backend, then nvJitLink): a lowering error, an LLVM
abort or an nvJitLink rejection is a failure. What the verifier rejects is counted by rule
id (`CopyVerifyException.rules`, P rules for `ProtocolFinding`s), the warnings of accepted
kernels too, and shown in the terminal summary.

Nothing accepted is ignored (issue S): each hint or option an accepted kernel carries whose
effect does not depend on its context (an L2 policy, a raw cache hint, `arrive = false`, a
bulk wait's `read_only`, a cluster-scoped arrival, a NaN fill, an L2 promotion: `OPTIONAL`)
is taken out, one at a time, and the kernel compiled again: its PTX or its ABI (the tensor
maps) must differ. A second set of kernels from a seed of its own (`EXTRA_FAMILIES`, so that
the kernel behind each index of the first set stays the same) adds im2col loads (channel
coordinates off 16 bytes: IC13), prefetches with policies and raw hints (L1, L2), stray
attributes on ops that do not define them (AT1; another dialect's is kept) and kernel names
PTX cannot carry (AT2).
"""

from __future__ import annotations

import random
import re
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from analysis.protocol import ProtocolWarning, check_protocol
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts.target import TARGETS
from passes.pipeline import Compiled, compile_module, verify_module

SEED = 9
KERNELS = 2000
ELF_MAGIC = b"\x7fELF"

BITS = {
    "f32": 32, "f16": 16, "bf16": 16, "f64": 64, "tf32": 32, "f8E4M3FN": 8, "f4E2M1FN": 4,
    "i1": 1, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "si32": 32, "ui32": 32, "i64": 64,
    "ui64": 64,
}  # fmt: skip
COMMON = ["f32", "f16", "bf16", "i8", "i32"]
RARE = [t for t in BITS if t not in COMMON]
TMA_TARGETS = [t for t, target in TARGETS.items() if target.has_tma]
TCGEN05_TARGETS = [t for t, target in TARGETS.items() if target.has_tcgen05]
MULTICAST_TARGETS = [t for t, target in TARGETS.items() if target.has_multicast]
NO_SCALAR_ARGUMENT = {"f8E4M3FN", "f4E2M1FN", "tf32"}
"""Element types the threads' stores leave out: a kernel argument of one verifies but does
not lower (xDSL's llvm.func rejects it: "LLVM function argument #0 has incompatible type"),
a known failure outside the copy ops."""
MISTAKE = 0.05
"""Probability of each deliberate protocol mistake (a wait left out, a parity flipped)."""
BLOCKS = [(128, 1, 1), (128, 1, 1), (256, 1, 1), (64, 2, 1), (32, 1, 1)]
THREAD_ID = '"gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index'


class Kernel:
    """One random kernel under construction: its arguments, constants and body text."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.args: list[str] = []
        self.consts: dict[tuple[int, str], str] = {}
        self.prelude: list[str] = []
        self.body: list[str] = []
        self.depth = 0
        self.ops: set[str] = set()
        self.cluster: Sequence[int] | None = None
        self.block = rng.choice(BLOCKS) if rng.random() < 0.95 else None
        self.threads: dict[int, str] = {}
        self.names = 0
        self.name = "k"
        """The kernel's name (the `named` family tries names PTX cannot carry)."""

    def pick(self, default, *others, p: float = 0.85):
        """`default` with probability p, else one of `others`."""
        return default if not others or self.rng.random() < p else self.rng.choice(others)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def mistake(self) -> bool:
        """Whether to break the copy protocol here (rarely)."""
        return self.rng.random() < MISTAKE

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"%{prefix}{self.names}"

    def arg(self, type_: str, prefix: str = "a") -> str:
        name = self.fresh(prefix)
        self.args.append(f"{name}: {type_}")
        return name

    def const(self, value: int, type_: str = "index") -> str:
        key = (value, type_)
        if key not in self.consts:
            self.consts[key] = f"%c{len(self.consts)}"
        return self.consts[key]

    def index(self, constants: Sequence[int], dynamic: float = 0.5) -> str:
        """A dynamic index argument, or one of `constants`."""
        if self.chance(dynamic):
            return self.arg("index", "i")
        return self.const(self.rng.choice(constants))

    def line(self, text: str) -> None:
        self.body.append("  " * self.depth + text)

    def op(self, name: str, line: str) -> None:
        self.ops.add(name)
        self.line(line)

    def value(self, prefix: str, definition: str) -> str:
        name = self.fresh(prefix)
        self.line(f"{name} = {definition}")
        return name

    def begin(self, header: str) -> None:
        """Opens a region (`scf.if %c`, `scf.for ...`); `end` closes it."""
        self.line(header + " {")
        self.depth += 1

    def end(self) -> None:
        self.depth -= 1
        self.line("}")

    def is_thread(self, t: int) -> str:
        """An i1 that holds for thread (t, 0, 0) of the block only (thread id x == t holds
        for one thread of each row of a 2-D block)."""
        if t not in self.threads:
            if not self.threads:
                self.prelude.append(f"%tid = {THREAD_ID}")
                self.prelude.append(f"%tidy = {THREAD_ID.replace('dim x', 'dim y')}")
                self.prelude.append(f"%row0 = arith.cmpi eq, %tidy, {self.const(0)} : index")
            self.threads[t] = f"%is{t}"
            self.prelude.append(f"%x{t} = arith.cmpi eq, %tid, {self.const(t)} : index")
            self.prelude.append(f"%is{t} = arith.andi %x{t}, %row0 : i1")
        return self.threads[t]

    def text(self, target: str) -> str:
        attrs = []
        if self.cluster is not None:
            attrs.append(f"copy.cluster = array<i32: {', '.join(map(str, self.cluster))}>")
        if self.block is not None:
            attrs.append(f"gpu.known_block_size = array<i32: {', '.join(map(str, self.block))}>")
        attributes = f" attributes {{{', '.join(attrs)}}}" if attrs else ""
        consts = [
            f"    {name} = arith.constant {('false', 'true')[v] if t == 'i1' else f'{v} : {t}'}"
            for (v, t), name in self.consts.items()
        ]
        body = [f"    {line}" for line in self.prelude + self.body]
        bare = re.fullmatch(r"[A-Za-z_][\w$.]*", self.name, re.ASCII)
        symbol = self.name if bare else f'"{self.name}"'
        return "\n".join(
            [
                f'builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{',
                f"  func.func @{symbol}({', '.join(self.args)}){attributes} {{",
                *consts,
                *body,
                "    func.return",
                "  }",
                "}",
            ]
        )


def element(k: Kernel, common: Sequence[str] = COMMON, rare: Sequence[str] = RARE) -> str:
    return k.rng.choice(common) if k.chance(0.85) else k.rng.choice(rare)


def smem(shape: Sequence[int], elt: str, swizzle: int = 16) -> str:
    space = "#copy.smem" if swizzle == 16 else f"#copy.smem<swizzle = {swizzle}>"
    return f"memref<{'x'.join(map(str, shape))}x{elt}, {space}>"


def gmem(shape: Sequence[int | None], elt: str, row_stride: int | None = None) -> str:
    dims = "x".join("?" if d is None else str(d) for d in shape)
    if row_stride is None or len(shape) < 2:
        return f"memref<{dims}x{elt}>"
    strides = [1, row_stride]
    for d in reversed(shape[1:-1]):
        strides.append(strides[-1] * (d or 1))
    return f"memref<{dims}x{elt}, strided<[{', '.join(map(str, reversed(strides)))}]>>"


def suffix(**attrs: object) -> str:
    """An attribute dictionary of the attributes that are not None."""
    entries = [f"{name} = {value}" for name, value in attrs.items() if value is not None]
    return f" {{{', '.join(entries)}}}" if entries else ""


# --- GMEM <-> SMEM copies --------------------------------------------------------------------


@dataclass
class Box:
    elt: str
    bits: int
    box: list[int]
    gmem_shape: list[int | None]
    row_stride: int | None
    swizzle: int
    slots: list[int] = field(default_factory=list[int])

    @property
    def gmem_type(self) -> str:
        return gmem(self.gmem_shape, self.elt, self.row_stride)

    @property
    def smem_type(self) -> str:
        return smem(self.slots + self.box, self.elt, self.swizzle)

    @property
    def box_bytes(self) -> int:
        n = 1
        for d in self.box:
            n *= d
        return n * self.bits // 8


def random_box(k: Kernel) -> Box:
    """A TMA box and the GMEM array around it, mostly one a tensor map can describe."""
    elt = element(k)
    bits = BITS[elt]
    swizzle = k.pick(16, 32, 64, 128, p=0.5)
    span = 128 if swizzle == 16 else swizzle
    widths = [b for b in (16, 32, 64, 128) if b <= span]
    inner_bytes = k.pick(k.rng.choice(widths), 4, 8, 24, 256, 512)
    inner = max(1, inner_bytes * 8 // bits)
    rank = k.pick(2, 1, 3, 4, 5, 6)
    box_rank = k.pick(min(rank, k.rng.choice([1, 2, 2, 3])), rank, rank + 1)
    box = [k.pick(k.rng.choice([1, 2, 8, 16, 32, 64]), 128, 256, 300) for _ in range(box_rank - 1)]
    box.append(k.pick(inner, 1, 3, 300, p=0.95))
    shape: list[int | None] = []
    padded = [1] * (rank - len(box)) + box
    for size in padded[:-1]:
        shape.append(k.pick(k.rng.choice([size, 2 * size, 1000, 4096]), None, 7, 1))
    row = k.pick(k.rng.choice([padded[-1], 4 * padded[-1], 1024]), 34, 36, 100, 300, 1000, 33, 6)
    shape.append(k.pick(row, None, p=0.95))
    row_stride = None
    if rank >= 2 and k.chance(0.15):
        row_stride = (row or 64) + k.rng.choice([0, 1, 4, 8, 16, 64])
    slots = [k.rng.choice([2, 3, 4])] if k.chance(0.3) else []
    return Box(elt, bits, box, shape, row_stride, swizzle, slots)


def coordinates(k: Kernel, b: Box) -> list[str]:
    """Box-origin indices, one per GMEM dim (mostly): 16-byte aligned innermost ones."""
    step = max(1, 128 // b.bits)
    count = k.pick(len(b.gmem_shape), len(b.gmem_shape) + 1, max(0, len(b.gmem_shape) - 1), p=0.97)
    coords = []
    for i in range(count):
        inner = i == count - 1
        values = [0, step, 4 * step, 64] if inner else [0, 1, 16, 100]
        odd = [1, 3, 2, -step] if inner else [-1, -16, 5000]
        coords.append(k.index(values if k.chance(0.9) else odd, dynamic=0.6 if not inner else 0.4))
    return coords


def slot_indices(k: Kernel, b: Box) -> str:
    if not b.slots:
        return ""
    slots = [0, 1] if k.chance(0.9) else [b.slots[0] - 1, b.slots[0]]
    return f"[{k.index(slots, dynamic=0.3)}]"


def barrier_group(k: Kernel, count: int | None = None, arrivals: int = 1) -> tuple[str, str, int]:
    count = count or k.pick(k.rng.choice([1, 2, 4]), 8, 32)
    name = k.fresh("bars")
    k.op(
        "barrier_init",
        f"{name} = copy.barrier_init arrivals {arrivals} : !copy.barrier<{count}>",
    )
    return name, f"!copy.barrier<{count}>", count


def barrier_index(k: Kernel, count: int) -> str:
    """Mostly a constant in the group; a kernel argument (which the analysis cannot follow:
    a warning) or one past the group (rule I2) sometimes."""
    return k.index(list(range(count)) if k.chance(0.95) else [count, count + 3], dynamic=0.08)


def parity(k: Kernel, phase: int) -> str:
    """The i1 parity of barrier phase `phase` (flipped by a mistake): a constant, or computed
    from one; sometimes a kernel argument (a warning: the analysis cannot prove the wait)."""
    if k.chance(0.05):
        return k.arg("i1", "p")
    phase += k.mistake()
    if k.chance(0.25):
        return k.value("q", f"arith.index_cast {k.const(phase)} : index to i1")
    return k.const(phase % 2, "i1")


def elected(k: Kernel, emit: Callable[[], None], p: float = 0.2) -> None:
    """Ops thread 0 issues for the block, emitted by `emit`: at the top, or (probability
    p) under `scf.if` on thread 0 (on thread 1 by a mistake, rule P10)."""
    if not k.chance(p) or k.block is None and not k.mistake():
        emit()
        return
    k.begin(f"scf.if {k.is_thread(1 if k.mistake() else 0)}")
    emit()
    k.end()


def thread_load(k: Kernel, b: Box, buf: str) -> None:
    """Threads read element 0 of `buf` (element types memref.load takes)."""
    where = ", ".join([k.const(0)] * (len(b.slots) + len(b.box)))
    k.line(f"{k.fresh('x')} = memref.load {buf}[{where}] : {b.smem_type}")


@dataclass
class Load:
    """A TMA load's text but for its barrier index and SMEM slot."""

    gmem: str
    box: Box
    buf: str
    bars: str
    bar_type: str
    kind: str
    clauses: str
    attrs: str
    coords: str
    count: int
    expected: int | None
    """Bytes the load expects with a barrier_arrive_expect_tx first (arrive = false)."""

    def emit(self, k: Kernel, index: str, slot: str) -> None:
        if self.expected is not None:
            k.op(
                "barrier_arrive_expect_tx",
                f"copy.barrier_arrive_expect_tx {self.bars}[{index}], {self.expected} : "
                f"{self.bar_type}",
            )
        b = self.box
        k.op(
            self.kind,
            f"copy.async_copy {self.gmem}[{self.coords}] to {self.buf}{slot} barrier "
            f"{self.bars}[{index}] {self.clauses}{self.attrs} : {b.gmem_type} to "
            f"{b.smem_type}, {self.bar_type}",
        )


def random_load(
    k: Kernel, target: str, b: Box, buf: str, count: int | None = None, predicate: bool = True
) -> Load:
    """A TMA load into `buf` of a fresh barrier group (`count` barriers), mostly valid."""
    g = k.arg(b.gmem_type, "g")
    bars, bar_type, count = barrier_group(k, count)
    clauses = []
    if predicate and k.chance(0.12):
        clauses.append(f"if {k.arg('i1', 'p')}")
    impl = k.pick(None, "tma", "tma", "cp_async", p=0.6)
    if impl:
        clauses.append(f"impl {impl}")
    oob = k.pick(None, "zeros", "nan", "undefined", "promise_in_bounds", p=0.6)
    if oob:
        clauses.append(f"oob {oob}")
    collective = None
    kind = "tma_load"
    mode = k.rng.random()
    if mode < (0.35 if TARGETS[target].has_tcgen05 else 0.03):
        kind = "tma_load_leader_tracked"
        k.cluster = k.pick([2, 1, 1], [1, 2, 1], [4, 1, 1], p=0.9)
        split = k.pick("<replicated>", "<partitioned 0>", "<partitioned 1>", "<partitioned 3>")
        clauses.append(f"leader_tracked {split}")
        collective = k.pick([0] if k.cluster[0] == 2 else [1], [1], [0, 1], p=0.9)
    elif mode < (0.6 if TARGETS[target].has_multicast else 0.06):
        kind = "tma_load_multicast"
        k.cluster = k.rng.choice([[2, 1, 1], [1, 2, 1], [4, 1, 1], [2, 2, 1]])
        fitting = [d for d in range(3) if k.cluster[d] > 1]
        collective = k.pick(fitting, [0], [1], [0, 1], [0, 0], [3], p=0.85)
    if k.chance(0.05):
        clauses.append(f"cache {k.rng.choice(['ca', 'cg'])}")
    named_l2 = k.chance(0.1)
    if named_l2:
        clauses.append(f"l2 {k.rng.choice(['evict_normal', 'evict_first', 'evict_last'])}")
    arrive = None if k.chance(0.8) else "false"
    attrs = suffix(
        collective=None if collective is None else f"array<i64: {', '.join(map(str, collective))}>",
        arrive=arrive,
        swizzle=None if k.chance(0.9) else f"{k.pick(b.swizzle, 16, 128, p=0.6)} : i64",
        # A raw policy, one of the encodings the verifier accepts (rule L1).
        cache_hint=None if named_l2 or k.chance(0.95) else "1364590687093260288 : i64",
    )
    expected = None
    if arrive:  # a leader-tracked load delivers both CTAs' boxes to the leader's barrier
        nbytes = b.box_bytes * (2 if kind == "tma_load_leader_tracked" else 1)
        expected = k.pick(nbytes, 0, nbytes + 16, 1 << 20, p=0.9)
    coords = ", ".join(coordinates(k, b))
    text = " ".join(clauses)
    return Load(g, b, buf, bars, bar_type, kind, text, attrs, coords, count, expected)


def loaded(k: Kernel, target: str, b: Box, buf: str) -> None:
    """A TMA load into `buf`, waited on (its phase 0, or in a ring of `b.slots` slots
    `i mod S` with parity `(i / S) mod 2`), and read by the threads sometimes."""
    if b.slots and k.chance(0.6):
        ring(k, target, b, buf)
        return
    load = random_load(k, target, b, buf)
    index = barrier_index(k, load.count)
    slot = slot_indices(k, b)
    predicate = re.search(r"if (%p\d+)", load.clauses)
    if predicate:  # the wait and the arrivals are predicated too
        k.begin(f"scf.if {predicate.group(1)}")
    elected(k, lambda: load.emit(k, index, slot))
    readable = b.elt in COMMON and not b.slots
    if readable and k.mistake():
        thread_load(k, b, buf)  # before the wait (rule P1)
    if not k.mistake():
        q = parity(k, 0)
        wait = f"copy.barrier_wait {load.bars}[{index}], {q} : {load.bar_type}"
        if load.kind == "tma_load_leader_tracked":
            # The pair's boxes complete on the leader's (even rank's) barrier: the leader
            # waits, then the cluster syncs (a peer waiting on its own barrier hangs, P6).
            dim = "x" if k.cluster[0] > 1 else "y"
            block = k.value(
                "bid", f'"gpu.block_id"() <{{dimension = #gpu<dim {dim}>}}> : () -> index'
            )
            rank = k.value("rank", f"arith.remui {block}, {k.const(2)} : index")
            leader = k.value("leader", f"arith.cmpi eq, {rank}, {k.const(0)} : index")
            k.begin(f"scf.if {leader}")
            k.op("barrier_wait", wait)
            k.end()
            k.op("cluster_sync", "copy.cluster_sync")
        else:
            k.op("barrier_wait", wait)
            if readable and k.chance(0.15):
                thread_load(k, b, buf)
    if predicate:
        k.end()


def ring(k: Kernel, target: str, b: Box, buf: str) -> None:
    """Tile i into slot i mod S of a ring, barrier i mod S, waited on with the parity of its
    lap; a trip count from a kernel argument or a constant."""
    stages = b.slots[0]
    load = random_load(k, target, b, buf, count=stages, predicate=False)
    trips = k.arg("index", "n") if k.chance(0.5) else k.const(k.rng.randint(1, 2 * stages + 2))
    i = k.fresh("i")
    k.begin(f"scf.for {i} = {k.const(0)} to {trips} step {k.const(1)}")
    s = k.value("s", f"arith.remui {i}, {k.const(stages + k.mistake())} : index")
    lap = k.value("lap", f"arith.divui {i}, {k.const(stages)} : index")
    odd = k.value("odd", f"arith.remui {lap}, {k.const(2)} : index")
    if k.mistake():
        q = k.const(0, "i1")  # a parity that never flips
    elif k.chance(0.5):
        q = k.value("q", f"arith.index_cast {odd} : index to i1")
    else:
        q = k.value("q", f"arith.cmpi ne, {odd}, {k.const(0)} : index")
    elected(k, lambda: load.emit(k, s, f"[{s}]"))
    if not k.mistake():
        k.op("barrier_wait", f"copy.barrier_wait {load.bars}[{s}], {q} : {load.bar_type}")
    k.end()


def tma_load(k: Kernel, target: str) -> None:
    b = random_box(k)
    buf = k.fresh("buf")
    k.op("alloc_smem", f"{buf} = copy.alloc_smem : {b.smem_type}")
    loaded(k, target, b, buf)


def tma_store(k: Kernel, target: str) -> None:
    b = random_box(k)
    g = k.arg(b.gmem_type, "g")
    buf = k.fresh("buf")
    k.op("alloc_smem", f"{buf} = copy.alloc_smem : {b.smem_type}")
    if k.chance(0.25):
        loaded(k, target, b, buf)
    wrote = k.chance(0.2) and b.elt not in NO_SCALAR_ARGUMENT
    if wrote:
        where = ", ".join([k.const(0)] * (len(b.slots) + len(b.box)))
        k.op("memref.store", f"memref.store {k.arg(b.elt, 'v')}, {buf}[{where}] : {b.smem_type}")
    if (not k.mistake()) if wrote else k.chance(0.5):
        k.op("fence_async_shared", "copy.fence_async_shared")
    clauses = []
    if k.chance(0.04):
        bars, bar_type, count = barrier_group(k)
        clauses.append(f"barrier {bars}[{barrier_index(k, count)}]")
    impl = k.pick(None, "tma", "tma", "cp_async", p=0.6)
    if impl:
        clauses.append(f"impl {impl}")
    kind = "tma_store"
    if k.chance(0.45):
        kind = "tma_reduce"
        ops = REDUCTIONS.get(b.elt, []) if k.chance(0.7) else []
        clauses.append(f"reduce {k.rng.choice(ops or [r.value for r in copy.ReductionKind])}")
    oob = k.pick(None, "undefined", "promise_in_bounds", "zeros", p=0.7)
    if oob:
        clauses.append(f"oob {oob}")
    coords = ", ".join(coordinates(k, b))
    attrs = suffix(collective=None if k.chance(0.97) else "array<i64: 0>")
    bar_suffix = f", {bar_type}" if clauses and clauses[0].startswith("barrier") else ""
    slot = slot_indices(k, b)
    elected(
        k,
        lambda: k.op(
            kind,
            f"copy.async_copy {buf}{slot} to {g}[{coords}] {' '.join(clauses)}{attrs} "
            f": {b.smem_type} to {b.gmem_type}{bar_suffix}",
        ),
        p=0.1,
    )
    if not k.mistake():
        elected(k, lambda: k.op("commit_group", "copy.commit_group bulk"), p=0.1)
    refill = k.chance(0.15)
    if refill and k.mistake():
        loaded(k, target, b, buf)  # while the store may still read it (rule P2)
        refill = False
    if not k.mistake():
        read_only = " read_only" if k.chance(0.5) else ""
        pending = k.pick(0, 1, 63, p=1 - MISTAKE)
        k.op("wait_group", f"copy.wait_group bulk {pending}{read_only}")
    if refill:
        loaded(k, target, b, buf)


REDUCTIONS = {
    "f32": ["add"], "f16": ["add", "min", "max"], "bf16": ["add", "min", "max"],
    "i32": ["add", "umin", "smax", "and", "or", "xor"], "ui32": ["add", "min", "inc", "dec"],
    "si32": ["add", "max"], "ui64": ["add", "min", "and"], "f64": ["add"],
}  # fmt: skip
"""Reductions the H200 table admits for some element types, to reach accepted ones often."""


def prefetch(k: Kernel, target: str) -> None:
    b = random_box(k)
    g = k.arg(b.gmem_type, "g")
    coords = ", ".join(coordinates(k, b))
    box = ", ".join(map(str, b.box))
    k.op("prefetch", f"copy.prefetch {g}[{coords}] {{box = array<i64: {box}>}} : {b.gmem_type}")


def cp_async(k: Kernel, target: str) -> None:
    elt = element(k, ["f32", "f16", "bf16", "i8", "i32"], ["f64", "i16", "ui32", "i4", "i64"])
    bits = BITS[elt]
    rank = k.pick(2, 1, 3)
    row_bytes = k.pick(k.rng.choice([16, 32, 64, 128, 256, 512]), 4, 8, 12, 24, 2, 6)
    inner = max(1, row_bytes * 8 // bits)
    box = [k.rng.choice([1, 2, 8, 16, 32])] * (rank - 1) + [inner]
    if rank >= 2 and k.chance(0.2):
        box = box[1:]
    minor = k.rng.choice([inner, 2 * inner, 34, 36, 100, 256, 300, 1000, 33, 6, 17])
    shape: list[int | None] = [k.rng.choice([64, 100, 1000])] * (rank - 1) + [minor]
    if k.chance(0.04):
        shape[0] = None
    row_stride = None
    if rank >= 2 and k.chance(0.25):
        row_stride = minor + k.rng.choice([1, 2, 4, 8, 16, 64])
    slots = [k.rng.choice([2, 3])] if k.chance(0.3) else []
    b = Box(elt, bits, box, shape, row_stride, k.pick(16, 128, p=0.97), slots)
    g = k.arg(b.gmem_type, "g")
    buf = k.fresh("buf")
    k.op("alloc_smem", f"{buf} = copy.alloc_smem : {b.smem_type}")
    clauses = []
    has_tma = TARGETS[target].has_tma
    impl = k.pick("cp_async" if has_tma or k.chance(0.5) else None, None, "tma", p=0.95)
    if impl:
        clauses.append(f"impl {impl}")
    oob = k.pick(None, "zeros", "promise_in_bounds", "nan", "undefined", p=0.5)
    if oob in ("zeros", "promise_in_bounds") or k.chance(0.1):
        clauses.append(f"oob {oob or 'zeros'}")
    cache = k.pick(None, "ca", "cg", "cg", p=0.4)
    if cache:
        clauses.append(f"cache {cache}")
    if k.chance(0.03):
        clauses.insert(0, f"if {k.arg('i1', 'p')}")
    coords = []
    step = max(1, 32 // bits)
    for i in range(len(shape)):
        if i == len(shape) - 1:
            values = [0, step, 4 * step, 16 * step] if k.chance(0.85) else [1, 2, 3, -step]
            coords.append(k.index(values, dynamic=0.4))
        else:
            coords.append(k.index([0, 1, 7, 63] if k.chance(0.9) else [-1, 5000], dynamic=0.6))
    k.op(
        "cp_async",
        f"copy.async_copy {g}[{', '.join(coords)}] to {buf}{slot_indices(k, b)} "
        f"{' '.join(clauses)} : {b.gmem_type} to {b.smem_type}",
    )
    readable = elt in COMMON and not slots
    if readable and k.mistake():
        thread_load(k, b, buf)  # before the wait (rule P1)
    if not k.mistake():
        k.op("commit_group", "copy.commit_group cp_async")
    if not k.mistake():
        k.op("wait_group", f"copy.wait_group cp_async {k.pick(0, 1, 2, p=1 - MISTAKE)}")
        if readable and k.chance(0.2):
            thread_load(k, b, buf)


@dataclass
class Group:
    """A barrier group of the `barriers` family, how its phases arrive, and the phase each
    barrier is at."""

    name: str
    type: str
    count: int
    style: str
    """"thread0" (one counted arrival by thread 0), "block" (every thread arrives: the
    group counts block threads x `per`) or "expect_tx" (thread 0's expect_tx of 0 bytes)."""
    per: int
    phases: Counter[str] = field(default_factory=Counter[str])
    """The phase each barrier (by its index operand) is at."""


def arrival(k: Kernel, g: Group, where: str, arrivals: int) -> None:
    """The arrivals of one phase of barrier `where` of `g` (on a mistake: every thread's on a
    thread-0 group, an expect_tx of bytes no copy delivers, or none at all)."""
    style = g.style
    if k.mistake():
        style = k.rng.choice(["block", "expect_tx", "none"])
    extra = f" scope {k.rng.choice(['cta', 'cluster'])}" if k.chance(0.2) else ""
    if style == "thread0":
        count = "" if arrivals == 1 and k.chance(0.5) else f" count {arrivals}"
        k.begin(f"scf.if {k.is_thread(0)}")
        k.op("barrier_arrive", f"copy.barrier_arrive {g.name}{where}{count}{extra} : {g.type}")
        k.end()
    elif style == "block":
        count = "" if g.per == 1 else f" count {g.per}"
        k.op("barrier_arrive", f"copy.barrier_arrive {g.name}{where}{count}{extra} : {g.type}")
    elif style == "expect_tx":
        nbytes = 0 if g.style == "expect_tx" else k.rng.choice([128, 4096])
        nbytes = k.pick(nbytes, (1 << 20) - 1, 1 << 20, -1, p=0.95)
        k.op(
            "barrier_arrive_expect_tx",
            f"copy.barrier_arrive_expect_tx {g.name}{where}, {nbytes} : {g.type}",
        )


def barriers(k: Kernel, target: str) -> None:
    """Barrier groups and phases on them: each phase's arrivals, then a wait with its
    parity; fences and bulk/cp.async group ops in between."""
    threads = 128 if k.block is None else k.block[0] * k.block[1] * k.block[2]
    groups = []
    for _ in range(k.pick(1, 2, 3)):
        count = k.pick(k.rng.choice([1, 2, 4, 8]), 32, 33, 0, p=0.92)
        style = k.rng.choice(["thread0", "thread0", "block", "expect_tx"])
        per = k.rng.choice([1, 1, 2])
        arrivals = {"thread0": k.rng.choice([1, 1, 2, 32]), "block": threads * per}.get(style, 1)
        arrivals = k.pick(arrivals, (1 << 20) - 1, 1 << 20, 0, 1 << 30, p=0.95)
        name = k.fresh("bars")
        k.op(
            "barrier_init",
            f"{name} = copy.barrier_init arrivals {arrivals} : !copy.barrier<{count}>",
        )
        g = Group(name, f"!copy.barrier<{count}>", max(count, 1), style, per)
        groups.append((g, arrivals))
    if k.chance(0.3):
        k.cluster = k.rng.choice([[2, 1, 1], [1, 1, 1], [1, 2, 1]])
    for _ in range(k.rng.randint(1, 5)):
        g, arrivals = k.rng.choice(groups)
        what = k.rng.choice(["phase", "phase", "phase", "fence", "group"])
        if what == "phase":
            where = f"[{barrier_index(k, g.count)}]"
            if where == f"[{k.const(0)}]" and g.count == 1 and k.chance(0.3):
                where = ""  # barrier 0 by default
            arrival(k, g, where, arrivals)
            key = where or f"[{k.const(0)}]"
            if not k.mistake():
                q = parity(k, g.phases[key])
                k.op("barrier_wait", f"copy.barrier_wait {g.name}{where}, {q} : {g.type}")
            g.phases[key] += 1
        elif what == "fence":
            k.op("fence_async_shared", "copy.fence_async_shared")
        else:
            group = k.rng.choice(["bulk", "cp_async"])
            if k.chance(0.5):
                k.op("commit_group", f"copy.commit_group {group}")
            else:
                read_only = " read_only" if k.chance(0.3) else ""
                k.op("wait_group", f"copy.wait_group {group} {k.pick(0, 1, 63, 64)}{read_only}")


def smem_buffers(k: Kernel, target: str) -> None:
    for _ in range(k.rng.randint(1, 4)):
        elt = element(k)
        swizzle = k.pick(16, 32, 64, 128, p=0.5)
        dims = [k.pick(k.rng.choice([2, 4, 8, 64, 128]), 256, 1024)] * k.rng.randint(1, 3)
        dims.append(k.rng.choice([8, 16, 32, 64, 128]))
        alignment = None
        if k.chance(0.2):
            alignment = f"{k.rng.choice([128, 256, 1024, 2048, 64, 100])} : i64"
        name = k.fresh("buf")
        k.op(
            "alloc_smem",
            f"{name} = copy.alloc_smem{suffix(alignment=alignment)} : {smem(dims, elt, swizzle)}",
        )
    if k.chance(0.5):
        barrier_group(k)


# --- TMEM ----------------------------------------------------------------------------------

TMEM_ELEMENTS = ["f32", "i32", "ui32", "si32", "f16", "bf16", "i8", "i4", "i1", "f64", "i64"]
LDST_SHAPES = [s.value for s in copy.TmemShape]


@dataclass
class Tmem:
    name: str
    type: str
    elt: str
    columns: int


def tmem_alloc(k: Kernel) -> Tmem:
    elt = k.pick("f32", *TMEM_ELEMENTS, p=0.7)
    bits = BITS[elt]
    rows = k.pick(128, 64, 32, p=0.9)
    columns = k.pick(k.rng.choice([32, 64, 128, 128, 256, 512]), 16, 33, 1024, p=0.92)
    elements = max(1, columns * 32 // bits)
    if k.chance(0.05):
        elements += 1  # a column count that does not divide evenly
    layout = ""
    if k.chance(0.06):
        layout = k.rng.choice([f", strided<[1, {rows}]>", f", strided<[{elements}, 1]>"])
    type_ = f"memref<{rows}x{elements}x{elt}{layout}, #copy.tmem>"
    if k.chance(0.04):
        name = k.arg(type_, "t")
    else:
        name = k.fresh("t")
        k.op("tmem_alloc", f"{name} = copy.tmem_alloc : {type_}")
    return Tmem(name, type_, elt, columns)


def tmem_access(k: Kernel, t: Tmem) -> tuple[str, int, str, str]:
    """A shape, num, vector type and attribute suffix for a tcgen05.ld/st of `t`."""
    shape = k.rng.choice(LDST_SHAPES)
    regs_per_num = copy.TMEM_REGS_PER_NUM[copy.TmemShape(shape)]
    num = k.pick(k.rng.choice([1, 1, 2, 4, 8, 16]), 32, 64, 128, 3)
    length = k.pick(num * regs_per_num, num, 2 * num * regs_per_num, p=0.92)
    elt = t.elt if k.chance(0.95) else k.rng.choice(["f32", "i32", "ui32", "si32", "f16"])
    offset = None
    if shape == "shape_16x32bx2" or k.chance(0.03):
        values = [0, 16, num, max(0, t.columns - num)]
        odd = [t.columns - num + 1, -1, 65536, 1 << 31, 1 << 32]
        offset = k.rng.choice(values if k.chance(0.8) else odd)
    if shape == "shape_16x32bx2" and k.chance(0.03):
        offset = None
    attrs = suffix(offset=None if offset is None else f"{offset} : i64")
    return shape, num, f"vector<{length}x{elt}>", attrs


def tmem_column(k: Kernel, t: Tmem) -> str:
    return k.index([0, 16, 32, t.columns // 2], dynamic=0.5)


def tmem(k: Kernel, target: str) -> None:
    allocs = [tmem_alloc(k) for _ in range(k.pick(1, 2, 2, 3, 4, p=0.65))]
    loaded: list[tuple[str, str]] = []
    for _ in range(k.rng.randint(1, 4)):
        t = k.rng.choice(allocs)
        what = k.rng.choice(["load", "load", "store", "store", "copy", "copy", "wait"])
        if what == "load":
            shape, num, vector, attrs = tmem_access(k, t)
            result = k.fresh("v")
            if k.chance(0.12) or TARGETS[target].has_tmem_load_reduce and k.chance(0.3):
                reduce = f" reduce {k.rng.choice(['min', 'max'])}"
                reduce += " abs" if k.chance(0.2) else ""
                reduce += " nan" if k.chance(0.2) else ""
                red = k.fresh("r")
                elt = vector.split("x")[-1].rstrip(">")
                k.op(
                    "tmem_load",
                    f"{result}, {red} = copy.tmem_load {t.name}[{tmem_column(k, t)}] shape {shape} "
                    f"num {num}{reduce}{attrs} : {t.type} -> {vector}, {elt}",
                )
            else:
                k.op(
                    "tmem_load",
                    f"{result} = copy.tmem_load {t.name}[{tmem_column(k, t)}] shape {shape} "
                    f"num {num}{attrs} : {t.type} -> {vector}",
                )
            loaded.append((result, vector))
            if not k.mistake():
                k.op("tmem_wait", "copy.tmem_wait load")
        elif what == "store":
            shape, num, vector, attrs = tmem_access(k, t)
            same = [name for name, type_ in loaded if type_ == vector]
            value = same[0] if same and k.chance(0.5) else k.arg(vector, "v")
            k.op(
                "tmem_store",
                f"copy.tmem_store {value}, {t.name}[{tmem_column(k, t)}] shape {shape} num {num}"
                f"{attrs} : {vector}, {t.type}",
            )
            if not k.mistake():
                k.op("tmem_wait", "copy.tmem_wait store")
        elif what == "copy":
            smem_to_tmem(k, t)
        else:
            k.op("tmem_wait", f"copy.tmem_wait {k.rng.choice(['load', 'store'])}")
    for t in allocs:
        if not k.mistake():
            k.op("tmem_dealloc", f"copy.tmem_dealloc {t.name} : {t.type}")


def smem_to_tmem(k: Kernel, t: Tmem) -> None:
    shape = k.rng.choice(list(copy.TmemCopyShape))
    multicast = {
        copy.TmemCopyShape.S64X128B: k.rng.choice(["warpx2_01_23", "warpx2_02_13"]),
        copy.TmemCopyShape.S32X128B: "warpx4",
    }.get(shape)
    if k.chance(0.08):
        multicast = k.rng.choice([None, "warpx4", "warpx2_01_23"])
    elt = t.elt if k.chance(0.9) else "f32"
    bits = BITS[elt]
    swizzle = k.pick(16, 32, 64, 128, p=0.5)
    row_bytes = 16 if swizzle == 16 else swizzle
    if k.chance(0.08):
        row_bytes = k.rng.choice([8, 32, 64])
    total = copy.TMEM_COPY_BYTES[shape] if k.chance(0.92) else k.rng.choice([512, 4096, 8192])
    columns = max(1, row_bytes * 8 // bits)
    rows = max(1, total // row_bytes)
    src_type = smem([rows, columns], elt, swizzle)
    src = k.fresh("s")
    k.op("alloc_smem", f"{src} = copy.alloc_smem : {src_type}")
    cast = f" multicast {multicast}" if multicast else ""
    k.op(
        "smem_to_tmem",
        f"copy.smem_to_tmem {src} to {t.name}[{tmem_column(k, t)}] shape {shape.value}{cast} "
        f": {src_type}, {t.type}",
    )
    if k.mistake():
        return
    # The copy reads its source until the tcgen05.commit after it lands (P2, P7).
    done = k.fresh("done")
    k.op("barrier_init", f"{done} = copy.barrier_init arrivals 1 : !copy.barrier<1>")
    cast = f"builtin.unrealized_conversion_cast {done} : !copy.barrier<1> to !llvm.ptr<3>"
    ptr = k.value("p", cast)
    k.begin(f"scf.if {k.is_thread(0)}")
    k.line(f"nvvm.tcgen05.commit {ptr} : !llvm.ptr<3>")
    k.end()
    wait = f"copy.barrier_wait {done}[{k.const(0)}], {k.const(0, 'i1')} : !copy.barrier<1>"
    k.op("barrier_wait", wait)
    k.line("nvvm.tcgen05.fence <after>")


# --- the fuzz ------------------------------------------------------------------------------

FAMILIES: list[tuple[Callable[[Kernel, str], None], float, list[str]]] = [
    (tma_load, 0.2, TMA_TARGETS),
    (tma_store, 0.13, TMA_TARGETS),
    (prefetch, 0.05, TMA_TARGETS),
    (cp_async, 0.16, list(TARGETS)),
    (barriers, 0.12, list(TARGETS)),
    (smem_buffers, 0.06, list(TARGETS)),
    (tmem, 0.28, TCGEN05_TARGETS),
]
ALL_OPS = {
    "tma_load", "tma_load_multicast", "tma_load_leader_tracked", "tma_store", "tma_reduce",
    "prefetch", "commit_group", "wait_group", "barrier_init", "barrier_arrive",
    "barrier_arrive_expect_tx", "barrier_wait", "fence_async_shared", "alloc_smem", "cp_async",
    "tmem_alloc", "tmem_dealloc", "tmem_load", "tmem_store", "tmem_wait", "smem_to_tmem",
}  # fmt: skip


def random_kernel(rng: random.Random) -> tuple[str, str, set[str]]:
    """(target, module text, copy ops in it) of one random kernel."""
    family, _, suited = rng.choices(FAMILIES, weights=[w for _, w, _ in FAMILIES])[0]
    target = rng.choice(suited) if rng.random() < 0.8 else rng.choice(list(TARGETS))
    k = Kernel(rng)
    family(k, target)
    return target, k.text(target), k.ops


# --- the hints and attributes of issue S ---------------------------------------------------

EXTRA_SEED = 35
EXTRA_KERNELS = 600
POLICIES = ["evict_normal", "evict_first", "evict_last", "evict_unchanged"]
RAW_HINTS = ["1152921504606846976", "1364590687093260288", "1508705875169116160"]
"""The encodings of evict_normal, evict_first and evict_last (rule L1)."""


def l2_clauses(k: Kernel) -> str:
    """An L2 policy (sometimes a fractional one), or none."""
    if not k.chance(0.4):
        return ""
    text = f" l2 {k.rng.choice(POLICIES)}"
    if k.chance(0.3):
        text += f" fraction {k.pick(0.5, 0.25, 1.0, 0.0)}"
        if k.chance(0.4):
            text += f" secondary {k.pick('evict_first', 'evict_unchanged', 'evict_last')}"
    return text


def im2col(k: Kernel, target: str) -> None:
    """An im2col load of a channels-innermost tensor, waited on: its channel coordinate
    mostly a multiple of 16 bytes (IC13 otherwise), with policies, promotions, strides."""
    elt = k.pick("f16", "f32", "bf16", "i8", "f64")
    bits = BITS[elt]
    rank = k.rng.choice([3, 4, 5])
    spatial = rank - 2
    channels = k.pick(max(1, 128 // bits), max(1, 256 // bits), max(1, 64 // bits), 3)
    extent = k.rng.choice([5, 9, 17])
    gmem_type = gmem([2, *([extent] * spatial), k.rng.choice([channels, 2 * channels, 64])], elt)
    pixels = k.pick(32, 64, 128, 2048)
    swizzle = k.pick(16, 128, 64, p=0.8)
    src = k.arg(gmem_type, "g")
    buf = k.fresh("buf")
    buf_type = smem([pixels, channels], elt, swizzle)
    k.op("alloc_smem", f"{buf} = copy.alloc_smem : {buf_type}")
    bars, bar_type, _ = barrier_group(k, 1)
    step = max(1, 128 // bits)
    channel = k.index([0, step, 2 * step] if k.chance(0.85) else [1, 3, step // 2 or 1], 0.3)
    coords = [k.index([0, 1], 0.3), *(k.index([-1, 0, 2], 0.5) for _ in range(spatial)), channel]
    offsets = [
        k.arg("i16", "o") if k.chance(0.3) else k.const(k.pick(0, 1, 2, 300), "i16")
        for _ in range(spatial)
    ]
    low, high = {3: (-4, 4), 4: (-2, 2), 5: (-1, 1)}[rank]
    lower = [k.rng.randint(low, 0) for _ in range(spatial)]
    upper = [k.rng.randint(low, high) for _ in range(spatial)]
    attrs = [
        f"lower = array<i64: {', '.join(map(str, lower))}>",
        f"upper = array<i64: {', '.join(map(str, upper))}>",
    ]
    if k.chance(0.3):
        attrs.append(f"strides = array<i64: {', '.join(str(k.pick(2, 1, 9)) for _ in lower)}>")
    if k.chance(0.2):
        attrs.append(f"l2_promotion = {k.pick(64, 256, 0, 100)} : i64")
    arrive = k.chance(0.15)
    if arrive:
        attrs.append("arrive = false")
    clauses = (" impl cp_async" if k.chance(0.08) else "") + l2_clauses(k)

    def emit() -> None:
        if arrive:
            nbytes = pixels * channels * bits // 8
            k.op(
                "barrier_arrive_expect_tx",
                f"copy.barrier_arrive_expect_tx {bars}[{k.const(0)}], {nbytes} : {bar_type}",
            )
        k.op(
            "im2col_load",
            f"copy.im2col_load {src}[{', '.join(coords)}] offsets [{', '.join(offsets)}] to "
            f"{buf} barrier {bars}[{k.const(0)}]{clauses} {{{', '.join(attrs)}}} : "
            f"{gmem_type} to {buf_type}, {bar_type}",
        )

    elected(k, emit)
    k.op("barrier_wait", f"copy.barrier_wait {bars}[{k.const(0)}], {k.const(0, 'i1')} : {bar_type}")


def hinted_prefetch(k: Kernel, target: str) -> None:
    """A TMA or bulk prefetch with an L2 policy, a raw hint (L1: one of the encodings; L2:
    not with l2) or a promotion."""
    bulk = k.chance(0.3)
    elt = k.pick("f32", "f16", "i8")
    bits = BITS[elt]
    row = 1024 * 8 // bits
    gmem_type = gmem([64, row], elt)
    src = k.arg(gmem_type, "g")
    box = [k.rng.choice([1, 4, 8]), row] if bulk else [k.rng.choice([8, 64]), 128 * 8 // bits]
    coords = [k.index([0, 8], 0.3), k.const(0)]
    clauses = (" impl bulk" if bulk else "") + l2_clauses(k)
    attrs = [f"box = array<i64: {', '.join(map(str, box))}>"]
    if k.chance(0.5):
        attrs.append(f"cache_hint = {k.pick(k.rng.choice(RAW_HINTS), '7', p=0.8)} : i64")
    if k.chance(0.2):
        attrs.append(f"l2_promotion = {k.pick(64, 256, 0)} : i64")
    elected(
        k,
        lambda: k.op(
            "prefetch",
            f"copy.prefetch {src}[{', '.join(coords)}]{clauses} {{{', '.join(attrs)}}} : "
            f"{gmem_type}",
        ),
    )


STRAY = [
    "scope = #copy<scope cluster>", "cache_hint = 1364590687093260288 : i64", "bypass_l1",
    "persistent", "copy.cluster = array<i32: 2, 1, 1>", "swizzle = 128 : i64", "count = 2 : i32",
]  # fmt: skip
"""Attributes these ops do not define (AT1); FOREIGN, another dialect's, is kept."""
FOREIGN = 'mydialect.note = "kept"'


def stray_attributes(k: Kernel, target: str) -> None:
    """A few ops, one of them with an attribute: mostly one it does not define (AT1), or
    another dialect's discardable one, which it keeps."""
    bars, bar_type, _ = barrier_group(k, 1)
    attr = FOREIGN if k.chance(0.2) else k.rng.choice(STRAY)
    at = k.rng.randrange(4)
    extra = [f" {{{attr}}}" if i == at else "" for i in range(4)]
    zero = k.const(0)
    k.op("barrier_expect_tx", f"copy.barrier_expect_tx {bars}[{zero}], 0{extra[0]} : {bar_type}")
    k.op("barrier_arrive", f"copy.barrier_arrive {bars}[{zero}]{extra[1]} : {bar_type}")
    k.op("fence_async_shared", f"copy.fence_async_shared{extra[2]}")
    k.op("commit_group", f"copy.commit_group bulk{extra[3]}")
    k.op("wait_group", "copy.wait_group bulk 0")


NAMES = ["k", "k\u00e9rnel", "%k", "k.x", "WARP_SZ", "_k", "$k", "k$1", "_", "k@1", "1k"]


def named(k: Kernel, target: str) -> None:
    """A small kernel whose name PTX may not carry (AT2): checked, never an LLVM abort."""
    k.name = k.rng.choice(NAMES)
    k.op("fence_async_shared", "copy.fence_async_shared")


EXTRA_FAMILIES: list[tuple[Callable[[Kernel, str], None], float, list[str]]] = [
    (im2col, 0.45, TMA_TARGETS),
    (hinted_prefetch, 0.25, TMA_TARGETS),
    (stray_attributes, 0.2, TMA_TARGETS),
    (named, 0.1, list(TARGETS)),
]


def extra_kernel(rng: random.Random) -> tuple[str, str, set[str]]:
    """(target, module text, copy ops in it) of one kernel of the extra families."""
    family, _, suited = rng.choices(EXTRA_FAMILIES, weights=[w for _, w, _ in EXTRA_FAMILIES])[0]
    target = rng.choice(suited) if rng.random() < 0.9 else rng.choice(list(TARGETS))
    k = Kernel(rng)
    family(k, target)
    return target, k.text(target), k.ops


def dict_entry(entry: str) -> str:
    return rf"(?:, )?{entry}(?=[,}}])"


OPTIONAL = {
    "l2": r" l2 evict_\w+(?: fraction [-\d.e]+)?(?: secondary evict_\w+)?",
    "cache_hint": dict_entry(r"cache_hint = \d+ : i64"),
    "arrive = false": dict_entry("arrive = false"),
    "read_only": " read_only",
    "scope cluster": " scope cluster",
    "oob nan": " oob nan",
    "l2_promotion": dict_entry(r"l2_promotion = \d+ : i64"),
}
"""Options whose effect does not depend on their context (none is a default written out),
as the text they take in a kernel: each accepted kernel is compiled again without each."""


def without(text: str, match: re.Match[str]) -> str:
    """`text` without the option `match` found (an emptied attribute dictionary too)."""
    out = text[: match.start()] + text[match.end() :]
    return out.replace(" {}", "").replace("{, ", "{")


def ignored_options(
    ctx: Context, text: str, result: Compiled, checked: Counter[str], ignored: list[str]
) -> None:
    """Compiles `text` without each option it carries: the PTX or the ABI must change. An
    option whose removal does not verify or compile (a fraction without its policy, the
    expect_tx that arrive = false needed) is not compared."""
    for name, pattern in OPTIONAL.items():
        for match in re.finditer(pattern, text):
            try:
                module = Parser(ctx, without(text, match)).parse_module()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ProtocolWarning)
                    other = compile_module(module, ctx)
            except Exception:  # not comparable: the kernel needs the option
                continue
            checked[name] += 1
            if other.ptx == result.ptx and repr(other.abi) == repr(result.abi):
                ignored.append(f"{name}:\n{text}")


def rejection(err: VerifyException) -> str:
    """The rule id(s) of a verifier rejection; xDSL's own structural checks as `xdsl`."""
    if isinstance(err, CopyVerifyException):
        return "/".join(err.rules) or "untagged: " + re.sub(r"-?\d+", "N", str(err))[:50]
    return "xdsl"


def signature(err: Exception) -> str:
    """A failure's kind: the exception and its message, numbers masked."""
    message = re.sub(r"\d+", "N", str(err).strip().splitlines()[0] if str(err).strip() else "")
    return f"{type(err).__name__}: {message[:110]}"


def verify(module) -> list[str]:
    """What users run (`verify_module`): raises the first error; returns the rule ids of the
    protocol analysis's warnings, once per warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProtocolWarning)
        verify_module(module)
    if not any(issubclass(w.category, ProtocolWarning) for w in caught):
        return []
    return ["/".join(f.rules) for f in check_protocol(module) if f.severity == "warning"]


def test_accepted_kernels_compile_for_their_target(report):
    """Every random kernel the verifier accepts lowers to a cubin for its target (0
    failures), over every op and every target, and ignores none of its options (0 accepted
    but ignored)."""
    ctx = make_context()
    rejected: Counter[str] = Counter()
    warned: Counter[str] = Counter()
    compiled: Counter[str] = Counter()
    ops_compiled: Counter[str] = Counter()
    failures: list[tuple[str, str, str]] = []
    checked: Counter[str] = Counter()
    ignored: list[str] = []
    extra_rejected: Counter[str] = Counter()
    extra_compiled: Counter[str] = Counter()
    sets = [
        (random_kernel, SEED, KERNELS, rejected),
        (extra_kernel, EXTRA_SEED, EXTRA_KERNELS, extra_rejected),
    ]
    for generate, seed, count, rejections in sets:
        rng = random.Random(seed)
        for _ in range(count):
            target, text, used = generate(rng)
            try:  # attributes and types verify while they are parsed
                module = Parser(ctx, text).parse_module()
                warned.update(verify(module))
            except VerifyException as err:
                rejections[rejection(err)] += 1
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ProtocolWarning)  # counted above
                    result = compile_module(module, ctx)
                assert result.cubin.startswith(ELF_MAGIC), "nvJitLink returned no ELF"
            except Exception as err:  # any failure to compile what verified
                failures.append((signature(err), target, text))
                continue
            (compiled if generate is random_kernel else extra_compiled)[target] += 1
            ops_compiled.update(used)
            ignored_options(ctx, text, result, checked, ignored)
    kinds = Counter(kind for kind, _, _ in failures)
    protocol = sum(n for r, n in rejected.items() if r.startswith("P"))
    accepted = sum(compiled.values()) + sum(extra_compiled.values()) + len(failures)
    lines = [
        f"seed {SEED}: {KERNELS} kernels, seed {EXTRA_SEED}: {EXTRA_KERNELS} of the extra "
        f"families (issue S); {accepted} accepted, {accepted - len(failures)} compiled, "
        f"{len(failures)} failed, {sum(rejected.values()) + sum(extra_rejected.values())} "
        f"rejected ({protocol} by the protocol analysis)",
        "compiled per target: " + ", ".join(f"{t} {compiled[t]}" for t in TARGETS),
        "extra families compiled per target: "
        + ", ".join(f"{t} {extra_compiled[t]}" for t in TARGETS),
        "compiled per op: "
        + ", ".join(f"{op} {ops_compiled[op]}" for op in sorted(ALL_OPS | {"im2col_load"})),
        "rejected per rule: " + ", ".join(f"{r} {n}" for r, n in sorted(rejected.items())),
        "extra families rejected per rule: "
        + ", ".join(f"{r} {n}" for r, n in sorted(extra_rejected.items())),
        "warnings of accepted kernels per rule: "
        + ", ".join(f"{r} {n}" for r, n in sorted(warned.items())),
        f"options taken out of accepted kernels and compiled again: {sum(checked.values())} "
        f"({', '.join(f'{o} {n}' for o, n in sorted(checked.items()))}); accepted but "
        f"ignored: {len(ignored)}",
        *(f"FAILED {n} x {kind}" for kind, n in kinds.most_common()),
    ]
    report("compile fuzz (tests/passes/test_compile_fuzz.py)", lines)
    first = {kind: text for kind, _, text in reversed(failures)}
    assert not failures, "accepted but not compiled:\n" + "\n\n".join(
        f"{n} x {kind}\n{first[kind]}" for kind, n in kinds.most_common()
    )
    assert not ignored, "accepted but ignored (the same PTX and ABI without):\n" + "\n".join(
        ignored[:3]
    )
    # The fuzz reaches every target and every op with kernels that compile, and the
    # protocol analysis both rejects kernels and warns about some it accepts.
    assert all(compiled[t] >= 5 for t in TARGETS), compiled
    assert all(ops_compiled[op] >= 5 for op in ALL_OPS | {"im2col_load"}), ops_compiled
    assert sum(compiled.values()) >= 400
    assert protocol >= 20, rejected
    assert sum(warned.values()) >= 5, warned
    # The extra families reach the rules of issue S, and each option is compared.
    assert {"IC13", "AT1", "AT2", "L1"} <= set(extra_rejected), extra_rejected
    assert all(checked[o] >= 1 for o in OPTIONAL), checked
