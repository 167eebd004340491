"""Whatever the verifier accepts compiles for its target.

A differential fuzz over every op of the dialect and every target of copy_dialect.target:
random kernels from a fixed seed, one family of ops per kernel (TMA loads with multicast and
leader-tracked copies, TMA stores and reductions, prefetches, cp.async loads, barriers and
bulk/cp.async groups, SMEM allocations, TMEM allocations, loads, stores, waits and
SMEM->TMEM copies), each choice mostly valid so that about half of the kernels verify.
Every kernel the verifier accepts must lower and compile to a cubin (llvmlite's NVPTX
backend, then nvJitLink): a lowering error, an LLVM abort or an nvJitLink rejection is a
failure. What the verifier rejects is counted by rule id (`CopyVerifyException.rules`) and
shown in the terminal summary.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_dialect.target import TARGETS
from copy_tools.universe import make_context
from passes.pipeline import compile_module

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


class Kernel:
    """One random kernel under construction: its arguments, constants and body text."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.args: list[str] = []
        self.consts: dict[tuple[int, str], str] = {}
        self.body: list[str] = []
        self.ops: set[str] = set()
        self.cluster: Sequence[int] | None = None
        self.names = 0

    def pick(self, default, *others, p: float = 0.85):
        """`default` with probability p, else one of `others`."""
        return default if not others or self.rng.random() < p else self.rng.choice(others)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

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

    def op(self, name: str, line: str) -> None:
        self.ops.add(name)
        self.body.append(line)

    def text(self, target: str) -> str:
        attrs = ""
        if self.cluster is not None:
            shape = ", ".join(map(str, self.cluster))
            attrs = f" attributes {{copy.cluster = array<i32: {shape}>}}"
        consts = [
            f"    {name} = arith.constant {('false', 'true')[v] if t == 'i1' else f'{v} : {t}'}"
            for (v, t), name in self.consts.items()
        ]
        body = [f"    {line}" for line in self.body]
        return "\n".join(
            [
                f'builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{',
                f"  func.func @k({', '.join(self.args)}){attrs} {{",
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


def barrier_group(k: Kernel, count: int | None = None) -> tuple[str, str, int]:
    count = count or k.pick(k.rng.choice([1, 2, 4]), 8, 32)
    name = k.fresh("bars")
    k.op("barrier_init", f"{name} = copy.barrier_init arrivals 1 : !copy.barrier<{count}>")
    return name, f"!copy.barrier<{count}>", count


def barrier_index(k: Kernel, count: int) -> str:
    return k.index(list(range(count)) if k.chance(0.95) else [count, count + 3], dynamic=0.3)


def tma_load(k: Kernel, target: str) -> None:
    b = random_box(k)
    g = k.arg(b.gmem_type, "g")
    buf = k.fresh("buf")
    k.op("alloc_smem", f"{buf} = copy.alloc_smem : {b.smem_type}")
    bars, bar_type, count = barrier_group(k)
    index = barrier_index(k, count)
    clauses = []
    if k.chance(0.12):
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
    arrive = None if k.chance(0.8) else "false"
    attrs = suffix(
        collective=None if collective is None else f"array<i64: {', '.join(map(str, collective))}>",
        arrive=arrive,
        swizzle=None if k.chance(0.9) else f"{k.pick(b.swizzle, 16, 128, p=0.6)} : i64",
        cache_hint=None if k.chance(0.9) else "7 : i64",
    )
    if arrive:
        expected = k.pick(b.box_bytes, 0, b.box_bytes + 16, 1 << 20, p=0.9)
        k.op(
            "barrier_arrive_expect_tx",
            f"copy.barrier_arrive_expect_tx {bars}[{index}], {expected} : {bar_type}",
        )
    coords = ", ".join(coordinates(k, b))
    k.op(
        kind,
        f"copy.async_copy {g}[{coords}] to {buf}{slot_indices(k, b)} barrier {bars}[{index}] "
        f"{' '.join(clauses)}{attrs} : {b.gmem_type} to {b.smem_type}, {bar_type}",
    )
    if k.chance(0.85):
        parity = k.arg("i1", "p") if k.chance(0.7) else k.const(1, "i1")
        k.op("barrier_wait", f"copy.barrier_wait {bars}[{index}], {parity} : {bar_type}")


def tma_store(k: Kernel, target: str) -> None:
    b = random_box(k)
    g = k.arg(b.gmem_type, "g")
    buf = k.fresh("buf")
    k.op("alloc_smem", f"{buf} = copy.alloc_smem : {b.smem_type}")
    if k.chance(0.2):
        where = ", ".join([k.const(0)] * (len(b.slots) + len(b.box)))
        k.op("memref.store", f"memref.store {k.arg(b.elt, 'v')}, {buf}[{where}] : {b.smem_type}")
    if k.chance(0.85):
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
    k.op(
        kind,
        f"copy.async_copy {buf}{slot_indices(k, b)} to {g}[{coords}] {' '.join(clauses)}{attrs} "
        f": {b.smem_type} to {b.gmem_type}{bar_suffix}",
    )
    if k.chance(0.9):
        k.op("commit_group", "copy.commit_group bulk")
        read_only = " read_only" if k.chance(0.5) else ""
        k.op("wait_group", f"copy.wait_group bulk {k.pick(0, 1, 63)}{read_only}")


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
    if k.chance(0.9):
        k.op("commit_group", "copy.commit_group cp_async")
        k.op("wait_group", f"copy.wait_group cp_async {k.pick(0, 1, 2)}")


def barriers(k: Kernel, target: str) -> None:
    groups = []
    for _ in range(k.pick(1, 2, 3)):
        count = k.pick(k.rng.choice([1, 2, 4, 8]), 32, 33, 0, p=0.92)
        arrivals = k.pick(k.rng.choice([1, 1, 2, 32, 128]), (1 << 20) - 1, 1 << 20, 0, 1 << 30)
        name = k.fresh("bars")
        k.op(
            "barrier_init",
            f"{name} = copy.barrier_init arrivals {arrivals} : !copy.barrier<{count}>",
        )
        groups.append((name, f"!copy.barrier<{count}>", max(count, 1)))
    if k.chance(0.3):
        k.cluster = k.rng.choice([[2, 1, 1], [1, 1, 1], [1, 2, 1]])
    for _ in range(k.rng.randint(1, 5)):
        name, type_, count = k.rng.choice(groups)
        where = "" if count == 1 and k.chance(0.3) else f"[{barrier_index(k, count)}]"
        what = k.rng.choice(["arrive", "arrive", "expect_tx", "wait", "wait", "fence", "group"])
        if what == "arrive":
            extra = ""
            if k.chance(0.3):
                extra += f" count {k.pick(k.rng.choice([1, 2, 32]), 0, 1 << 20)}"
            if k.chance(0.3):
                extra += f" scope {k.rng.choice(['cta', 'cluster'])}"
            k.op("barrier_arrive", f"copy.barrier_arrive {name}{where}{extra} : {type_}")
        elif what == "expect_tx":
            nbytes = k.pick(k.rng.choice([0, 128, 4096]), (1 << 20) - 1, 1 << 20, -1)
            k.op(
                "barrier_arrive_expect_tx",
                f"copy.barrier_arrive_expect_tx {name}{where}, {nbytes} : {type_}",
            )
        elif what == "wait":
            parity = k.arg("i1", "p") if k.chance(0.7) else k.const(0, "i1")
            k.op("barrier_wait", f"copy.barrier_wait {name}{where}, {parity} : {type_}")
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
            f"{name} = copy.alloc_smem{suffix(alignment=alignment)} "
            f": {smem(dims, elt, swizzle)}",
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
            if k.chance(0.12) or target == "sm_103a" and k.chance(0.3):
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
            if k.chance(0.7):
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
            if k.chance(0.7):
                k.op("tmem_wait", "copy.tmem_wait store")
        elif what == "copy":
            smem_to_tmem(k, t)
        else:
            k.op("tmem_wait", f"copy.tmem_wait {k.rng.choice(['load', 'store'])}")
    for t in allocs:
        if k.chance(0.7):
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


def rejection(err: VerifyException) -> str:
    """The rule id(s) of a verifier rejection; xDSL's own structural checks as `xdsl`."""
    if isinstance(err, CopyVerifyException):
        return "/".join(err.rules) or "untagged: " + re.sub(r"-?\d+", "N", str(err))[:50]
    return "xdsl"


def signature(err: Exception) -> str:
    """A failure's kind: the exception and its message, numbers masked."""
    message = re.sub(r"\d+", "N", str(err).strip().splitlines()[0] if str(err).strip() else "")
    return f"{type(err).__name__}: {message[:110]}"


def test_accepted_kernels_compile_for_their_target(report):
    """Every random kernel the verifier accepts lowers to a cubin for its target (0
    failures); over every op and every target."""
    rng = random.Random(SEED)
    ctx = make_context()
    rejected: Counter[str] = Counter()
    compiled: Counter[str] = Counter()
    ops_compiled: Counter[str] = Counter()
    failures: list[tuple[str, str, str]] = []
    for _ in range(KERNELS):
        target, text, used = random_kernel(rng)
        try:  # attributes and types verify while they are parsed
            module = Parser(ctx, text).parse_module()
            module.verify()
        except VerifyException as err:
            rejected[rejection(err)] += 1
            continue
        try:
            result = compile_module(module, ctx)
            assert result.cubin.startswith(ELF_MAGIC), "nvJitLink returned no ELF"
        except Exception as err:  # any failure to compile what verified
            failures.append((signature(err), target, text))
            continue
        compiled[target] += 1
        ops_compiled.update(used)
    kinds = Counter(kind for kind, _, _ in failures)
    lines = [
        f"seed {SEED}: {KERNELS} kernels, {sum(compiled.values()) + len(failures)} accepted, "
        f"{sum(compiled.values())} compiled, {len(failures)} failed, "
        f"{sum(rejected.values())} rejected",
        "compiled per target: " + ", ".join(f"{t} {compiled[t]}" for t in TARGETS),
        "compiled per op: " + ", ".join(f"{op} {ops_compiled[op]}" for op in sorted(ALL_OPS)),
        "rejected per rule: " + ", ".join(f"{r} {n}" for r, n in sorted(rejected.items())),
        *(f"FAILED {n} x {kind}" for kind, n in kinds.most_common()),
    ]
    report("compile fuzz (tests/test_compile_fuzz.py)", lines)
    first = {kind: text for kind, _, text in reversed(failures)}
    assert not failures, "accepted but not compiled:\n" + "\n\n".join(
        f"{n} x {kind}\n{first[kind]}" for kind, n in kinds.most_common()
    )
    # The fuzz reaches every target and every op with kernels that compile.
    assert all(compiled[t] >= 5 for t in TARGETS), compiled
    assert all(ops_compiled[op] >= 5 for op in ALL_OPS), ops_compiled
    assert sum(compiled.values()) >= 400
