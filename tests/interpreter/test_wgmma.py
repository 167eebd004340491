"""The warpgroup MMA in the interpreter: the SMEM matrix descriptor's decode (from its bits
alone) against the layout TMA writes (copy_dialect.layout) for every swizzle, type,
major-ness and tile, in the wgmma and the tcgen05 forms; and `nvvm.wgmma.mma_async` kernels
(descriptors of ring slots, K loops along the tile, M = 64 and N from 8 to 256, K- and
MN-major operands, f16, bf16, tf32, s8, negated operands, one and two warpgroups)
bit-exact against a numpy model written here from the PTX ISA (the canonical layouts'
tile indices, the accumulator's fragment formula, products rounded to f32 and added in k
order); the race of a slot rewritten before the wait, an accumulator read before it, a
missing fence, a missing wait, a partial warpgroup."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType
from xdsl.parser import Parser

import interpreter
from copy_dialect import layout
from copy_dialect.descriptors import MatrixMajor, descriptor
from copy_tools.universe import make_context
from interpreter import mma

ROOT = Path(__file__).resolve().parents[2]
BITS = {"f16": 16, "bf16": 16, "f32": 32, "f8E4M3FN": 8, "f8E5M2": 8, "i8": 8}


def memref(shape: tuple[int, ...], element: str, swizzle: int) -> MemRefType:
    space = "#copy.smem" if swizzle == 16 else f"#copy.smem<swizzle = {swizzle}>"
    t = Parser(make_context(), f"memref<{'x'.join(map(str, shape))}x{element}, {space}>")
    parsed = t.parse_type()
    assert isinstance(parsed, MemRefType)
    return parsed


def tile_shape(k_major: bool, swizzle: int, rows: int, k: int, bits: int) -> tuple[int, ...]:
    """The tile of copy.matrix_descriptor's canonical forms for a rows x k operand."""
    per = 128 // bits  # elements in 16 bytes
    width = swizzle * 8 // bits  # elements of a swizzle atom's row
    if k_major and swizzle != 16:
        return (rows, width)
    if k_major:
        return (k // per, rows, per)
    if swizzle != 16:
        return (rows // width, k, width)
    return (rows // per, k, per)


def tile_index(k_major: bool, swizzle: int, bits: int, r: int, c: int) -> tuple[int, ...]:
    """The tile index of element (r, c) of the operand (r along M/N, c along K)."""
    per = 128 // bits
    width = swizzle * 8 // bits
    if k_major and swizzle != 16:
        return (r, c)
    if k_major:
        return (c // per, r, c % per)
    if swizzle != 16:
        return (r // width, c, r % width)
    return (r // per, c, r % per)


def k_steps(k_major: bool, swizzle: int, shape: tuple[int, ...], bits: int) -> tuple[int, int]:
    """(steps, descriptor increment per step) of one 32-byte K step along the tile."""
    if k_major and swizzle != 16:
        return shape[-1] * bits // 8 // 32, 2
    if k_major:
        return shape[0] // 2, 2 * shape[1]  # two 16-byte blocks of K: 2 LBO
    rows = 256 // bits  # 32 bytes of K: K rows of the tile
    return shape[-2] // rows, rows * shape[-1] * bits // 8 // 16


# --- the decode --------------------------------------------------------------------------------

FORMS = [
    (e, s, k_major, tc)
    for e, s, k_major, tc in itertools.product(
        BITS, (16, 32, 64, 128), (True, False), (False, True)
    )
    if k_major or BITS[e] == 16 or tc
]


@pytest.mark.parametrize(("element", "swizzle", "k_major", "tcgen05"), FORMS, ids=str)
def test_decode_reads_each_element_where_the_layout_puts_it(element, swizzle, k_major, tcgen05):
    bits = BITS[element]
    per = 128 // bits
    width = swizzle * 8 // bits
    k = 256 // bits  # one instruction's 32 bytes of K
    majors = MatrixMajor.K if k_major else MatrixMajor.MN
    tiles = 0
    for rows in (64, 128, 256):
        if not k_major and rows % (width if swizzle != 16 else per):
            continue
        for ktotal in sorted({k, 2 * k, width}):
            if k_major and swizzle != 16 and ktotal != width:
                continue
            shape = tile_shape(k_major, swizzle, rows, ktotal, bits)
            t = memref((3, *shape), element, swizzle)
            d = descriptor(t, majors, tcgen05)
            base = 4096 * 3  # a buffer at a multiple of every swizzle's repeat
            steps, step = k_steps(k_major, swizzle, shape, bits)
            for slot, s in itertools.product(range(3), range(steps)):
                start = base + layout.element_offset(
                    [slot, *[0] * len(shape)], (3, *shape), bits, swizzle
                )
                desc = d.encoded(start) + s * step
                got = mma.operand_offsets(desc, k_major, rows, k, bits, tcgen05)
                # every (r, c) at once: the layout's offsets work on arrays as on ints
                r, c = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
                index = tile_index(k_major, swizzle, bits, r, c + s * k)
                want = base + layout.element_offset([slot, *index], (3, *shape), bits, swizzle)
                assert np.array_equal(got, want), (shape, slot, s)
                tiles += 1
    assert tiles


def test_decode_reads_the_bits_not_the_buffer():
    """A descriptor of a wrong slot, or with a wrong SBO, reads other bytes, as on the GPU;
    the forms it does not model stop with a reason."""
    t = memref((2, 64, 64), "f16", 128)
    d = descriptor(t, MatrixMajor.K)
    right = mma.operand_offsets(d.encoded(0), True, 64, 16, 16)
    assert np.array_equal(mma.operand_offsets(d.encoded(8192), True, 64, 16, 16), right + 8192)
    wrong_sbo = d.encoded(0) + (1 << 32)  # SBO 1024 + 16 bytes
    shifted = mma.operand_offsets(wrong_sbo, True, 64, 16, 16)
    assert np.array_equal(shifted[:8], right[:8])
    assert not np.array_equal(shifted[8:], right[8:])
    with pytest.raises(mma.DecodeError, match="base offset"):
        mma.operand_offsets(d.encoded(0) | 1 << 49, True, 64, 16, 16)
    tc = descriptor(t, MatrixMajor.K, tcgen05=True)
    with pytest.raises(mma.DecodeError, match="not tcgen05's"):
        mma.operand_offsets(d.encoded(0), True, 64, 16, 16, tcgen05=True)
    assert np.array_equal(mma.operand_offsets(tc.encoded(0), True, 64, 16, 16, True), right)


def test_elements_are_the_isa_encodings():
    codes = np.arange(256, dtype=np.uint8)[:, None]
    e4m3 = mma.elements(codes, "e4m3")
    assert (e4m3[0x38], e4m3[0x7E], e4m3[0x01], e4m3[0xB8]) == (1.0, 448.0, 2.0**-9, -1.0)
    assert np.isnan(e4m3[[0x7F, 0xFF]]).all()
    assert np.isfinite(e4m3[0x78])
    e5m2 = mma.elements(codes, "e5m2")
    assert (e5m2[0x3C], e5m2[0x7B], e5m2[0x01], e5m2[0x7C]) == (1.0, 57344.0, 2.0**-16, np.inf)
    tf32 = np.array([1 + 2**-10 + 2**-11], np.float32).view(np.uint8)[None]
    assert mma.elements(tf32, "tf32")[0] == np.float32(1 + 2**-10)  # low 13 bits dropped


def test_accumulator_fragment_is_the_isa_figure():
    rows, cols = mma.accumulator_fragment(16)
    # thread 0 holds (0,0) (0,1) (8,0) (8,1) (0,8) (0,9) (8,8) (8,9); thread 37 (warp 1, lane 5)
    assert list(zip(rows[0], cols[0], strict=True)) == [
        (0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]  # fmt: skip
    assert (rows[37, 0], cols[37, 0], rows[37, 3], cols[37, 3]) == (17, 2, 25, 3)
    every = set(zip(rows.ravel().tolist(), cols.ravel().tolist(), strict=True))
    assert every == set(itertools.product(range(64), range(16)))


# --- kernels -----------------------------------------------------------------------------------

TYPES = {"f16": ("f16", np.float16), "bf16": ("bf16", np.uint16), "tf32": ("f32", np.float32),
         "s8": ("i8", np.int8), "u8": ("i8", np.int8), "e4m3": ("i8", np.int8),
         "e5m2": ("i8", np.int8)}  # fmt: skip
"""Each operand type's buffer element (f8 operands in i8 buffers: the interpreter stores no
f8 element, and the MMA reads bytes) and numpy storage."""
SLOTS = 2


def struct(n: int, element: str) -> str:
    return f"!llvm.struct<({', '.join([element] * (n // 2))})>"


ACC = "!acc"
"""The accumulator's struct type in the kernels' text: a type alias `kernel` defines (the
struct of up to 128 elements, spelled out at each of the hundreds of insertvalue and
extractvalue ops, would take most of the test's time to parse)."""


def operand_fill(
    name: str, arg: str, shape: tuple[int, ...], smem: str, element: str, c: str = "%c"
) -> str:
    """Every thread copies rows tid, tid + threads.. of GMEM `arg` (the buffer flattened to
    rows x cols) into SMEM `name`, element by element (`c`: the prefix of the index
    constants it uses, `%nthreads` the block's threads)."""
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    lines = [
        f"    scf.for %{name}r = %tid to {c}{rows} step %nthreads {{",
        f"      scf.for %{name}j = {c}0 to {c}{cols} step {c}1 {{",
        f"        %{name}x = memref.load %{arg}[%{name}r, %{name}j] "
        f": memref<{rows}x{cols}x{element}>",
    ]
    idx, rest = [], f"%{name}r"
    for d, n in enumerate(reversed(shape[:-1])):
        lines.append(f"        %{name}i{d} = arith.remui {rest}, {c}{n} : index")
        lines.append(f"        %{name}q{d} = arith.divui {rest}, {c}{n} : index")
        idx.insert(0, f"%{name}i{d}")
        rest = f"%{name}q{d}"
    lines += [
        f"        memref.store %{name}x, %{name}[{', '.join(idx)}, %{name}j] : {smem}",
        "      }",
        "    }",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Case:
    dtype: str = "f16"
    n: int = 64
    swizzle: int = 128
    a_k: bool = True
    """A K-major (layout row); else M-major (col, a transpose)."""
    b_k: bool = True
    """B K-major (layout col); else N-major (row)."""
    warpgroups: int = 1
    neg: tuple[bool, bool] = (False, False)
    first_zero: bool = False
    """scale-d zero on the first step (D = A B, the accumulator's input ignored)."""

    @property
    def bits(self) -> int:
        return {"tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8}.get(self.dtype, 16)

    @property
    def k(self) -> int:
        return 256 // self.bits

    @property
    def ktotal(self) -> int:
        width = self.swizzle * 8 // self.bits
        if self.swizzle != 16 and (self.a_k or self.b_k):
            return width
        return 2 * self.k if self.swizzle == 16 else width

    def tile(self, which: str) -> tuple[int, ...]:
        k_major, rows = (self.a_k, 64) if which == "A" else (self.b_k, self.n)
        return tile_shape(k_major, self.swizzle, rows, self.ktotal, self.bits)

    @property
    def accumulator(self) -> str:
        return "i32" if self.dtype in ("s8", "u8") else "f32"

    def __str__(self) -> str:
        majors = f"{'k' if self.a_k else 'm'}{'k' if self.b_k else 'n'}"
        extra = f"-wg{self.warpgroups}" * (self.warpgroups > 1) + "-neg" * any(self.neg)
        return (
            f"{self.dtype}-n{self.n}-sw{self.swizzle}-{majors}{extra}" + "-zero" * self.first_zero
        )


def kernel(case: Case, body: str | None = None) -> str:
    """A warpgroup's (or two's) K loop over the tiles of slot %slot of B and slot (%slot +
    warpgroup) % 2 of A, filled by the threads from GMEM, on an accumulator from GMEM;
    each thread writes its registers to %out. `body` replaces the MMA loop."""
    element = TYPES[case.dtype][0]
    threads = 128 * case.warpgroups
    n2, acc = case.n // 2, case.accumulator
    s = ACC
    space = "#copy.smem" if case.swizzle == 16 else f"#copy.smem<swizzle = {case.swizzle}>"
    ta, tb = case.tile("A"), case.tile("B")
    sa = f"memref<{SLOTS}x{'x'.join(map(str, ta))}x{element}, {space}>"
    sb = f"memref<{SLOTS}x{'x'.join(map(str, tb))}x{element}, {space}>"
    ga = (SLOTS * int(np.prod(ta[:-1])), ta[-1])
    gb = (SLOTS * int(np.prod(tb[:-1])), tb[-1])
    steps_a, inc_a = k_steps(case.a_k, case.swizzle, ta, case.bits)
    steps_b, inc_b = k_steps(case.b_k, case.swizzle, tb, case.bits)
    assert steps_a == steps_b, case
    numbers = sorted({0, 1, 2, 128, threads, n2, *ga, *gb, *ta, *tb, SLOTS})
    consts = "\n".join(f"    %c{c} = arith.constant {c} : index" for c in numbers)
    kind = {"tf32": "tf32", "s8": "s8", "u8": "u8"}.get(case.dtype, case.dtype)
    scale = ["neg" if x else "one" for x in case.neg]
    lay_a, lay_b = "row" if case.a_k else "col", "col" if case.b_k else "row"
    inserts = "\n".join(
        f"    %v{j} = memref.load %acc[%tid, %c{j}] : memref<{threads}x{n2}x{acc}>\n"
        f"    %s{j + 1} = llvm.insertvalue %v{j}, %s{j}[{j}] : {s}"
        for j in range(n2)
    )
    consts += "\n" + "\n".join(
        f"    %c{j} = arith.constant {j} : index" for j in range(n2) if j not in numbers
    )
    extracts = "\n".join(
        f"    %e{j} = llvm.extractvalue %r[{j}] : {s}\n"
        f"    memref.store %e{j}, %out[%tid, %c{j}] : memref<{threads}x{n2}x{acc}>"
        for j in range(n2)
    )

    def mma(d: str, scale_d: str, da: str, db: str, result: str) -> str:
        return (
            f"      {result} = nvvm.wgmma.mma_async {da}, {db}, {d}, <m = 64, n = {case.n}, "
            f"k = {case.k}>, D[<{'s32' if acc == 'i32' else 'f32'}>, <{scale_d}>], "
            f"A[<{kind}>, <{scale[0]}>, <{lay_a}>], B[<{kind}>, <{scale[1]}>, <{lay_b}>] "
            f": {s} -> {s}"
        )

    first = "zero" if case.first_zero else "one"
    regs = f"memref<{threads}x{n2}x{acc}>"
    params = (
        f"%ga: memref<{ga[0]}x{ga[1]}x{element}>, %gb: memref<{gb[0]}x{gb[1]}x{element}>, "
        f"%acc: {regs}, %out: {regs}, %slot: index"
    )
    attributes = f"gpu.kernel, gpu.known_block_size = array<i32: {threads}, 1, 1>"
    loop = (
        body
        or f"""
    nvvm.wgmma.fence.aligned
    %steps = arith.constant {steps_a} : index
{mma("%s" + str(n2), first, "%da", "%db", "%r0")}
    nvvm.wgmma.commit.group.sync.aligned
    %r = scf.for %i = %c1 to %steps step %c1 iter_args(%d = %r0) -> ({s}) {{
      %i64 = arith.index_cast %i : index to i64
      %ia = arith.muli %i64, %inc_a : i64
      %ib = arith.muli %i64, %inc_b : i64
      %dai = arith.addi %da, %ia : i64
      %dbi = arith.addi %db, %ib : i64
{mma("%d", "one", "%dai", "%dbi", "%next")}
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 1
      scf.yield %next : {s}
    }}
    nvvm.wgmma.wait.group.sync.aligned 0"""
    )
    return f"""
{ACC} = {struct(case.n, acc)}
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k({params}) attributes {{{attributes}}} {{
    %tid = gpu.thread_id x
{consts}
    %nthreads = arith.constant {threads} : index
    %sa = copy.alloc_smem : {sa}
    %sb = copy.alloc_smem : {sb}
{operand_fill("sa", "ga", (SLOTS, *ta), sa, element)}
{operand_fill("sb", "gb", (SLOTS, *tb), sb, element)}
    copy.fence_async_shared
    %wg = arith.divui %tid, %c128 : index
    %sw = arith.addi %slot, %wg : index
    %aslot = arith.remui %sw, %c2 : index
    %da = copy.matrix_descriptor %sa[%aslot] major {"k" if case.a_k else "mn"} : {sa} -> i64
    %db = copy.matrix_descriptor %sb[%slot] major {"k" if case.b_k else "mn"} : {sb} -> i64
    %inc_a = arith.constant {inc_a} : i64
    %inc_b = arith.constant {inc_b} : i64
    %s0 = llvm.mlir.zero : {s}
{inserts}
{loop}
{extracts}
    func.return
  }}
}}
"""


def values(case: Case, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if case.dtype in ("s8", "u8"):
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    if case.dtype in ("e4m3", "e5m2"):  # finite codes only (no NaN, no infinity)
        codes = rng.integers(0, 256, size=shape).astype(np.uint8)
        top = 0x7E if case.dtype == "e4m3" else 0x7B
        return np.where((codes & 0x7F) > top, codes & 0xB8, codes).astype(np.uint8).view(np.int8)
    x = rng.standard_normal(shape).astype(np.float32)
    if case.dtype == "f16":
        return x.astype(np.float16)
    if case.dtype == "bf16":
        return (x.view(np.uint32) >> 16).astype(np.uint16)  # truncated to bf16 bits
    return x


def as_numbers(case: Case, x: np.ndarray) -> np.ndarray:
    """The numbers the ISA multiplies (written here, apart from the interpreter's)."""
    if case.dtype == "f16":
        return x.astype(np.float32)
    if case.dtype == "bf16":
        return (x.astype(np.uint32) << 16).view(np.float32)
    if case.dtype == "tf32":
        return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    if case.dtype in ("e4m3", "e5m2"):
        return f8(x.view(np.uint8), 4 if case.dtype == "e4m3" else 5)
    return (x.view(np.uint8) if case.dtype == "u8" else x).astype(np.int64)


def f8(codes: np.ndarray, exponent: int) -> np.ndarray:
    """The values of 8-bit float codes (1 sign, `exponent`, 7 - `exponent` mantissa bits,
    bias 2^(e-1) - 1; subnormal at exponent 0), finite codes only."""
    mantissa = 7 - exponent
    bias = (1 << (exponent - 1)) - 1
    c = codes.astype(np.int64)
    e, m = (c >> mantissa) & ((1 << exponent) - 1), c & ((1 << mantissa) - 1)
    scale = np.where(e == 0, 2.0 ** (1 - bias - mantissa), 2.0 ** (e - bias - mantissa))
    value = np.where(e == 0, m, m + (1 << mantissa)) * scale
    return np.where(c & 0x80, -value, value).astype(np.float32)


def logical(case: Case, which: str, array: np.ndarray, slot: int) -> np.ndarray:
    """Operand A (64 x K) or B (N x K) of GMEM `array` (the buffer flattened), slot `slot`."""
    k_major, rows = (case.a_k, 64) if which == "A" else (case.b_k, case.n)
    t = case.tile(which)
    tiles = array.reshape(SLOTS, *t)[slot]
    out = np.zeros((rows, case.ktotal), array.dtype)
    for r, c in itertools.product(range(rows), range(case.ktotal)):
        out[r, c] = tiles[tile_index(k_major, case.swizzle, case.bits, r, c)]
    return as_numbers(case, out)


def model(case: Case, ga: np.ndarray, gb: np.ndarray, acc: np.ndarray, slot: int) -> np.ndarray:
    """Each thread's registers after the loop: D = A B^T + C, products rounded to f32 and
    added in k order (the ISA's accumulator fragment: warp w, lane l, register 4b + 2h + v
    holds row 16w + 8h + l/4, column 8b + 2(l%4) + v)."""
    out = np.zeros_like(acc)
    b = logical(case, "B", gb, slot) * (-1 if case.neg[1] else 1)
    for g in range(case.warpgroups):
        a = logical(case, "A", ga, (slot + g) % SLOTS) * (-1 if case.neg[0] else 1)
        d = np.zeros((64, case.n), acc.dtype)
        for t, i in itertools.product(range(128), range(case.n // 2)):
            w, lane = divmod(t, 32)
            row, col = (
                16 * w + 8 * ((i // 2) % 2) + lane // 4,
                8 * (i // 4) + 2 * (lane % 4) + i % 2,
            )
            d[row, col] = 0 if case.first_zero else acc[128 * g + t, i]
        if acc.dtype == np.int32:
            d = (d.astype(np.int64) + a @ b.T).astype(np.uint32).view(np.int32)
        else:
            for k in range(case.ktotal):
                d = (d + (a[:, k, None] * b[None, :, k]).astype(np.float32)).astype(np.float32)
        for t, i in itertools.product(range(128), range(case.n // 2)):
            w, lane = divmod(t, 32)
            row, col = (
                16 * w + 8 * ((i // 2) % 2) + lane // 4,
                8 * (i // 4) + 2 * (lane % 4) + i % 2,
            )
            out[128 * g + t, i] = d[row, col]
    return out


def arrays(case: Case) -> list[np.ndarray]:
    ta, tb = case.tile("A"), case.tile("B")
    ga = values(case, (SLOTS * int(np.prod(ta[:-1])), ta[-1]), 1)
    gb = values(case, (SLOTS * int(np.prod(tb[:-1])), tb[-1]), 2)
    threads, dtype = 128 * case.warpgroups, np.int32 if case.accumulator == "i32" else np.float32
    rng = np.random.default_rng(3)
    acc = (rng.integers(-1000, 1000, (threads, case.n // 2)) if dtype == np.int32 else
           rng.standard_normal((threads, case.n // 2))).astype(dtype)  # fmt: skip
    return [ga, gb, acc, np.zeros_like(acc)]


def run(case: Case, text: str | None = None, slot: int = 1, **options):
    module = Parser(make_context(), text or kernel(case)).parse_module()
    return interpreter.run(module, *arrays(case), slot, **options)


CASES = [
    *[Case(n=n, swizzle=s) for s in (16, 32, 64, 128) for n in (8, 16, 64, 128, 256)],
    *[Case("bf16", 64, s, False, False) for s in (16, 32, 64, 128)],
    Case("bf16", 128, 128, neg=(True, False), first_zero=True),
    Case("f16", 256, 128, False, True),
    Case("f16", 128, 64, True, False, neg=(False, True)),
    Case("f16", 64, 32, False, True, warpgroups=2),
    Case("f16", 64, 128, warpgroups=2),
    *[Case("tf32", 64, s) for s in (16, 32, 128)],
    Case("s8", 64, 128),
    Case("e4m3", 64, 128),
    Case("e5m2", 128, 32, first_zero=True),
    Case("u8", 32, 64, first_zero=True),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_mma_is_bit_exact_with_the_model(case):
    result = run(case)
    assert result.violations == [], [str(v) for v in result.violations]
    ga, gb, acc, _ = arrays(case)
    want = model(case, ga, gb, acc, 1)
    assert np.array_equal(result.arrays[3].view(np.uint8), want.view(np.uint8)), case


# --- what a run reports ------------------------------------------------------------------------

BASE = Case()
"""f16, m64n64k16 over a 128B-swizzled K-major slot: 4 K steps."""
SA = "memref<2x64x64xf16, #copy.smem<swizzle = 128>>"
S = ACC  # (BASE's: 32 f32)


def one_step(middle: str = "", after: str = "", fence: bool = True) -> str:
    """The first K step only: fence, mma, commit, `middle`, wait 0, `after`."""
    mma = (
        f"    %r = nvvm.wgmma.mma_async %da, %db, %s32, <m = 64, n = 64, k = 16>, "
        f"D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : {S} -> {S}"
    )
    return (
        ("    nvvm.wgmma.fence.aligned\n" if fence else "")
        + mma
        + "\n    nvvm.wgmma.commit.group.sync.aligned\n"
        + middle
        + "    nvvm.wgmma.wait.group.sync.aligned 0\n"
        + after
    )


def first_step_model(case: Case = BASE, slot: int = 1, shift: int = 0) -> np.ndarray:
    """The registers after the first K step (A's K columns from `shift`)."""
    ga, gb, acc, _ = arrays(case)
    a = logical(case, "A", ga, slot)[:, shift : shift + 16]
    b = logical(case, "B", gb, slot)[:, :16]
    d = np.zeros((64, 64), np.float32)
    rows, cols = mma.accumulator_fragment(64)
    d[rows, cols] = acc
    for k in range(16):
        d = (d + a[:, k, None] * b[None, :, k]).astype(np.float32)
    return d[rows, cols]


def test_a_descriptor_one_unit_off_reads_the_shifted_columns():
    """%da + 1 starts 16 bytes into each row: the GPU reads A's columns 8..23."""
    text = kernel(BASE, one_step()).replace(
        "%r = nvvm.wgmma.mma_async %da,",
        "%c1_i64 = arith.constant 1 : i64\n    %off = arith.addi %da, %c1_i64 : i64\n"
        "    %r = nvvm.wgmma.mma_async %off,",
    )
    result = run(BASE, text)
    assert result.violations == []
    assert np.array_equal(result.arrays[3], first_step_model(shift=8))
    assert not np.array_equal(result.arrays[3], first_step_model())


@pytest.mark.parametrize("schedule", ["random", "round_robin", "adversarial"])
def test_the_kernels_run_clean_under_every_schedule(schedule):
    for seed in range(3):
        result = run(Case(n=64, swizzle=64, warpgroups=2), schedule=schedule, seed=seed)
        assert result.violations == [], [str(v) for v in result.violations]


def test_a_slot_rewritten_before_the_wait_races_and_reads_the_new_data():
    store = (
        "    %row = arith.remui %tid, %c64 : index\n"
        "    %h = arith.constant 2.0 : f16\n"
        f"    memref.store %h, %sa[%aslot, %row, %c0] : {SA}\n"
    )
    result = run(BASE, kernel(BASE, one_step(middle=store)), schedule="adversarial")
    races = [v for v in result.violations if v.rule == "P2"]
    assert races, [str(v) for v in result.violations]
    assert races[0].op.name == "memref.store"
    assert races[0].other is not None
    assert races[0].other.name == "nvvm.wgmma.mma_async"
    assert "wgmma.mma_async reads" in races[0].message
    # the MMA completes at the wait, after the store: the GPU could read either
    assert not np.array_equal(result.arrays[3], first_step_model())
    fixed = run(BASE, kernel(BASE, one_step(after=store)), schedule="adversarial")
    assert fixed.violations == []
    assert np.array_equal(fixed.arrays[3], first_step_model())


def test_a_tma_load_into_the_slot_before_the_wait_races():
    load = (
        "    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>\n"
        f"    copy.async_copy %ga[%c0, %c0] to %sa[%aslot] barrier %bar[%c0] : "
        f"memref<128x64xf16> to {SA}, !copy.barrier<1>\n"
    )
    waited = (
        "    %false = arith.constant false\n"
        "    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>\n"
    )
    result = run(BASE, kernel(BASE, one_step(middle=load, after=waited)))
    # P2, as the analysis has it: SMEM rewritten while an async read may still go on
    races = [v for v in result.violations if v.rule == "P2"]
    assert races, [str(v) for v in result.violations]
    assert races[0].op.name == "copy.async_copy"
    assert races[0].other is not None
    assert races[0].other.name == "nvvm.wgmma.mma_async"


def test_threads_writes_need_the_async_fence():
    text = kernel(BASE).replace("    copy.fence_async_shared\n", "    gpu.barrier\n")
    result = run(BASE, text)
    assert {v.rule for v in result.violations} == {"P4"}
    assert result.violations[0].op.name == "nvvm.wgmma.mma_async"


def test_the_accumulator_before_its_wait_is_reported():
    early = f"    %early = llvm.extractvalue %r[0] : {S}\n"
    result = run(BASE, kernel(BASE, one_step(middle=early)), schedule="adversarial")
    assert [v.rule for v in result.violations] == ["wgmma"]
    v = result.violations[0]
    assert v.op.name == "llvm.extractvalue"
    assert "before the nvvm.wgmma.wait" in v.message
    # in the pipelined loop (wait 1) the accumulator only passes between MMAs: no report
    assert run(BASE).violations == []


def test_registers_written_after_the_fence_are_reported():
    text = kernel(BASE, one_step()).replace(
        "    nvvm.wgmma.fence.aligned\n", ""
    )  # the accumulator's insertvalues, then no fence
    result = run(BASE, text)
    assert [v.rule for v in result.violations] == ["wgmma"]
    assert "no nvvm.wgmma.fence.aligned" in result.violations[0].message


def test_an_mma_never_waited_for_is_in_flight_at_return():
    text = kernel(BASE, one_step().replace("    nvvm.wgmma.wait.group.sync.aligned 0\n", ""))
    text = text.replace(
        f"    %e0 = llvm.extractvalue %r[0] : {S}", f"    %e0 = llvm.extractvalue %s1[0] : {S}"
    )
    result = run(BASE, text)
    assert "P7" in {v.rule for v in result.violations}, [str(v) for v in result.violations]


def test_a_warpgroup_that_partly_reaches_the_mma_stops():
    step = (
        one_step()
        .replace(
            "    %r = nvvm.wgmma.mma_async",
            "    %low = arith.cmpi ult, %tid, %c64 : index\n"
            f"    %r = scf.if %low -> ({S}) {{\n    %q = nvvm.wgmma.mma_async",
        )
        .replace(
            "    nvvm.wgmma.commit.group",
            f"    scf.yield %q : {S}\n    }} else {{\n    scf.yield %s32 : {S}\n    }}\n"
            "    nvvm.wgmma.commit.group",
        )
    )
    result = run(BASE, kernel(BASE, step))
    assert [v.rule for v in result.violations] == ["P10"]
    assert (
        "of warpgroup 0 (threads 0-127) only threads 0-63 reach it" in result.violations[0].message
    )


def test_the_lit_kernel_runs_on_loaded_slots():
    """lit_tests/passes/wgmma-ptx.mlir (two m64n128k16 steps along K on slot %slot of A and
    B, the second through descriptors + 2), its slots filled from GMEM first."""
    text = (ROOT / "lit_tests/passes/wgmma-ptx.mlir").read_text()
    sa = "memref<2x64x64xf16, #copy.smem<swizzle = 128>>"
    sb = "memref<2x128x64xf16, #copy.smem<swizzle = 128>>"
    fill = "\n".join(
        [
            "    %nthreads = arith.constant 128 : index",
            *(f"    %f{c} = arith.constant {c} : index" for c in (0, 1, 2, 64, 128, 256)),
            operand_fill("a", "ga", (2, 64, 64), sa, "f16", "%f"),
            operand_fill("b", "gb", (2, 128, 64), sb, "f16", "%f"),
            "    copy.fence_async_shared",
        ]
    )
    params = "%out: memref<128x64xf32>, %slot: index"
    text = text.replace(params, f"{params}, %ga: memref<128x64xf16>, %gb: memref<256x64xf16>")
    text = text.replace(
        "    %da = copy.matrix_descriptor", fill + "\n    %da = copy.matrix_descriptor"
    )
    module = Parser(make_context(), text).parse_module()
    case = Case(n=128)
    ga, gb, _, _ = arrays(case)
    result = interpreter.run(module, np.zeros((128, 64), np.float32), 1, ga, gb)
    assert result.violations == [], [str(v) for v in result.violations]
    a, b = logical(case, "A", ga, 1)[:, :32], logical(case, "B", gb, 1)[:, :32]
    d = np.zeros((64, 128), np.float32)
    for k in range(32):
        d = (d + a[:, k, None] * b[None, :, k]).astype(np.float32)
    rows, cols = mma.accumulator_fragment(128)
    want = np.zeros((128, 64), np.float32)
    want[:, 0], want[:, 63] = d[rows[:, 0], cols[:, 0]], d[rows[:, 63], cols[:, 63]]
    assert np.array_equal(result.arrays[0], want)
    assert np.abs(want).max() > 1


def test_the_accumulator_passes_through_an_empty_tied_asm():
    """CUTLASS's warpgroup_fence_operand (frontends' fence_operand): an empty llvm.inline_asm
    whose outputs are tied to the registers is their identity; other asm stops the run."""
    parts = [f"    %x{j} = llvm.extractvalue %r[{j}] : {S}" for j in range(32)]
    ties = ",".join(["=f"] * 32 + [str(j) for j in range(32)])
    operands = ", ".join(f"%x{j}" for j in range(32))
    parts.append(
        f'    %rf = llvm.inline_asm has_side_effects "", "{ties}" {operands} '
        f": ({', '.join(['f32'] * 32)}) -> {S}"
    )
    text = kernel(BASE).replace(
        "    %e0 = llvm.extractvalue %r[0]",
        "\n".join(parts) + "\n    %e0 = llvm.extractvalue %r[0]",
    )
    text = text.replace("llvm.extractvalue %r[", "llvm.extractvalue %rf[").replace(
        "%x0 = llvm.extractvalue %rf[", "%x0 = llvm.extractvalue %r["
    )
    for j in range(1, 32):
        text = text.replace(f"%x{j} = llvm.extractvalue %rf[", f"%x{j} = llvm.extractvalue %r[")
    result = run(BASE, text)
    assert result.violations == []
    ga, gb, acc, _ = arrays(BASE)
    assert np.array_equal(result.arrays[3], model(BASE, ga, gb, acc, 1))
    other = text.replace('has_side_effects ""', 'has_side_effects "mov.b32 $0, $0;"')
    with pytest.raises(interpreter.InterpretError, match="inline_asm"):
        run(BASE, other)


def test_groups_are_each_warpgroups_own():
    """Two warpgroups of one block: a wait that only warpgroup 0 reaches retires only its
    own group, so warpgroup 1's registers are still undefined; a wait in each is clean."""
    case = Case(n=64, swizzle=128, warpgroups=2)
    only0 = one_step().replace(
        "    nvvm.wgmma.wait.group.sync.aligned 0\n",
        "    %is0 = arith.cmpi eq, %wg, %c0 : index\n"
        "    scf.if %is0 {\n    nvvm.wgmma.wait.group.sync.aligned 0\n    }\n",
    )
    result = run(case, kernel(case, only0))
    early = [v for v in result.violations if v.rule == "wgmma"]
    assert early, [str(v) for v in result.violations]
    assert "(warpgroup 1)" in early[0].message
    each = only0.replace(
        "    }\n", "    } else {\n    nvvm.wgmma.wait.group.sync.aligned 0\n    }\n"
    )
    clean = run(case, kernel(case, each))
    assert clean.violations == [], [str(v) for v in clean.violations]
    ga, gb, acc, _ = arrays(case)
    rows, cols = mma.accumulator_fragment(64)
    b = logical(case, "B", gb, 1)[:, :16]
    for g in (0, 1):  # warpgroup g's A is slot (1 + g) % 2
        a = logical(case, "A", ga, (1 + g) % 2)[:, :16]
        d = np.zeros((64, 64), np.float32)
        d[rows, cols] = acc[128 * g : 128 * (g + 1)]
        for k in range(16):
            d = (d + a[:, k, None] * b[None, :, k]).astype(np.float32)
        assert np.array_equal(clean.arrays[3][128 * g : 128 * (g + 1)], d[rows, cols])
