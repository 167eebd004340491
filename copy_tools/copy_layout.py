"""copy-layout: pictures of where data lives, as text and as SVG (or PNG with matplotlib).

    copy-layout 'memref<64x64xf32, #copy.smem<swizzle = 128>>' [--show chunk|bank|offset]
        [--swizzle none|32|64|128] [--slot I,...] [--rows N] [--conflicts] [--svg PATH]
    copy-layout --tmem 16x256b [--num N] [--offset K] [--warp W] [--svg PATH]

An SMEM buffer: for each row of the tile (the last two dims; the leading dims of a multi-buffer
pick the slot) and each 16-byte chunk of GMEM elements of that row, the 16-byte chunk of the
row's SMEM that the elements land in, or its first bank, under the buffer's swizzle. The layout
is `copy_dialect.layout`'s, the one the verifier, the TMA lowering and the thread accesses use.
`--conflicts` measures, on that layout, the bank conflicts of a warp reading one column (thread
t reading row t). The SVG draws the SMEM rows as they are stored, each chunk coloured by the
GMEM column chunk it holds: the XOR pattern of the swizzle is the permutation of the colours.

A TMEM access: which register of which thread of a warp holds which TMEM lane and column after
a `copy.tmem_load` (`tcgen05.ld`) of a shape and `.num`; `copy.tmem_store` writes the same map.
The map is `copy_dialect.tmem.tmem_fragment`'s.

Bad input (a type that does not parse, not a memref, not in SMEM, a swizzle that does not
exist) prints one `copy-layout: error:` line and exits with 2.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from copy_dialect import layout
from copy_dialect.attributes import TmemShape
from copy_dialect.tmem import TMEM_LANES, TMEM_REGS_PER_NUM, tmem_fragment
from copy_tools.cli import guarded
from copy_tools.figure import Figure, FigureError, Line, Rect, Text, check_picture, palette

TOOL = "copy-layout"
BANKS = 32
BANK_BYTES = 4
CHUNK = layout.UNIT_BYTES
WARP = 32
SWIZZLE_NAMES = {"none": 16, "16": 16, "32": 32, "64": 64, "128": 128}


class LayoutError(Exception):
    """Bad input: printed as one `copy-layout: error:` line, exit code 2."""


# --- SMEM ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SmemTile:
    """One slot (2-D tile) of a row-major SMEM buffer, and where its 16-byte chunks lie."""

    type_text: str
    shape: tuple[int, ...]
    element: str
    bits: int
    swizzle: int
    slot: tuple[int, ...] = ()

    @property
    def rows(self) -> int:
        return self.shape[-2] if len(self.shape) >= 2 else 1

    @property
    def row_bytes(self) -> int:
        return layout.row_bytes(self.shape, self.bits)

    @property
    def pitch(self) -> int:
        return layout.row_pitch(self.row_bytes, self.swizzle)

    @property
    def chunks(self) -> int:
        """16-byte chunks of GMEM elements per row (the last one partial when the row's bytes
        are not a multiple of 16)."""
        return -(-self.row_bytes // CHUNK)

    @property
    def slot_base(self) -> int:
        strides = layout.dim_strides(self.shape, self.bits, self.swizzle)
        return sum(i * s for i, s in zip(self.slot, strides, strict=False))

    def row_base(self, row: int) -> int:
        return self.slot_base + row * self.pitch

    def offset(self, row: int, chunk: int) -> int:
        """The buffer byte offset where chunk `chunk` of row `row` is stored."""
        return layout.swizzled(self.row_base(row) + CHUNK * chunk, self.swizzle)

    def stored_chunk(self, row: int, chunk: int) -> int:
        """The 16-byte chunk of the row's SMEM (its pitch) that GMEM chunk `chunk` lands in."""
        return (self.offset(row, chunk) - self.row_base(row)) // CHUNK

    def bank(self, row: int, chunk: int) -> int:
        """The bank of the chunk's first 4 bytes (the chunk covers this bank and the next 3)."""
        return self.offset(row, chunk) % (BANKS * BANK_BYTES) // BANK_BYTES

    def element_offset(self, row: int, column: int) -> int:
        """The buffer byte offset of the byte holding element `column` of row `row`."""
        return layout.swizzled(self.row_base(row) + column * self.bits // 8, self.swizzle)

    @property
    def per_chunk(self) -> float:
        return CHUNK * 8 / self.bits

    def columns_of(self, chunk: int) -> tuple[int, int]:
        """The first and last element of a row that chunk `chunk` holds."""
        first = chunk * CHUNK * 8 // self.bits
        last = min(self.shape[-1], (chunk + 1) * CHUNK * 8 // self.bits) - 1
        return first, max(first, last)


def parse_smem_type(text: str, swizzle: str | None, slot: str | None) -> SmemTile:
    """The tile a memref type string describes (with the project's dialects), or LayoutError."""
    from xdsl.dialects.builtin import MemRefType
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    from copy_dialect.memory import SMEM, bitwidth, memory_space, swizzle_of
    from copy_tools.universe import make_context

    try:
        parser = Parser(make_context(), text)
        t = parser.parse_type()
    except ParseError as exc:
        lines = [line for line in str(exc).splitlines() if line.strip()]
        raise LayoutError(
            f"expected a memref type, {text!r} does not parse: {lines[-1].strip()}"
        ) from None
    except DiagnosticException as exc:
        note = getattr(exc, "note", None)
        raise LayoutError(
            f"the type {text.strip()!r} does not verify: {exc}" + (f" ({note})" if note else "")
        ) from None
    if parser.pos < len(text.rstrip()):
        raise LayoutError(f"expected one type, got {text[parser.pos :].strip()!r} after {t}")
    if not isinstance(t, MemRefType):
        raise LayoutError(f"expected a memref type, got {t}")
    if memory_space(t) != SMEM:
        raise LayoutError(
            f"expected a memref in shared memory (#copy.smem), got one in {memory_space(t)}: {t} "
            f"(e.g. memref<{'x'.join(map(str, t.get_shape()))}x{t.element_type}, "
            "#copy.smem<swizzle = 128>>)"
        )
    shape = tuple(t.get_shape())
    if not shape:
        raise LayoutError(f"expected a memref with at least one dim, got {t}")
    if any(d < 1 for d in shape):
        raise LayoutError(f"expected a static shape, got {t}")
    bits = bitwidth(t.element_type)
    if bits is None:
        raise LayoutError(f"expected an integer or float element type, got {t.element_type}")
    span = swizzle_of(t)
    if swizzle is not None:
        if swizzle not in SWIZZLE_NAMES:
            raise LayoutError(f"expected a swizzle of none, 32, 64 or 128, got {swizzle!r}")
        span = SWIZZLE_NAMES[swizzle]
    tile = SmemTile(text.strip(), shape, str(t.element_type), layout.layout_bits(bits, span), span)
    return _with_slot(tile, slot)


def _with_slot(tile: SmemTile, slot: str | None) -> SmemTile:
    leading = tile.shape[:-2]
    if slot is None:
        return replace(tile, slot=(0,) * len(leading))
    try:
        index = tuple(int(s) for s in slot.split(","))
    except ValueError:
        raise LayoutError(
            f"expected --slot as integers separated by commas, got {slot!r}"
        ) from None
    if len(index) != len(leading):
        raise LayoutError(
            f"expected {len(leading)} slot indices (the dims before the tile's two of "
            f"{list(tile.shape)}), got {len(index)}"
        )
    for i, d in zip(index, leading, strict=True):
        if not 0 <= i < d:
            raise LayoutError(f"expected slot indices within {list(leading)}, got {list(index)}")
    return replace(tile, slot=index)


def swizzle_name(span: int) -> str:  # `128 B`, sm_100's atoms as cuda.h: `128 B_ATOM_32B`
    return "none" if span == layout.UNSWIZZLED else layout.mode_name(span).replace("B", " B", 1)


def smem_header(tile: SmemTile) -> str:
    slot = f", slot {list(tile.slot)}" if tile.slot else ""
    per = tile.per_chunk
    per_text = f"{per:g} elements" if per >= 1 else f"1/{1 / per:g} element"
    plural = "s" if tile.chunks != 1 else ""
    return (
        f"{tile.type_text}{slot}: {tile.rows} rows of {tile.row_bytes} bytes, row pitch "
        f"{tile.pitch} bytes, swizzle {swizzle_name(tile.swizzle)}\n"
        f"{tile.chunks} chunk{plural} of 16 bytes per row ({per_text} of {tile.element} each); "
        f"the slot starts at byte {tile.slot_base}"
    )


SHOW_LEGEND = {
    "chunk": "cell = the 16-byte chunk of the row's SMEM (0 .. pitch/16 - 1) that GMEM chunk c "
    "of row r lands in",
    "bank": "cell = the first of the 4 banks (of 32, 4 bytes each) that GMEM chunk c of row r "
    "lands in",
    "offset": "cell = the byte offset in the buffer that GMEM chunk c of row r lands at",
}


def smem_text(tile: SmemTile, show: str, rows: int | None) -> str:
    """The grid: one line per row, one cell per 16-byte GMEM chunk, and a legend."""
    value = {"chunk": tile.stored_chunk, "bank": tile.bank, "offset": tile.offset}[show]
    shown = tile.rows if rows is None else min(rows, tile.rows)
    cells = [[value(r, c) for c in range(tile.chunks)] for r in range(shown)]
    width = max(3, *(len(str(v)) for line in cells for v in line)) + 1
    lines = [
        smem_header(tile),
        "",
        "   row |" + "".join(f"{c:>{width}}" for c in range(tile.chunks)),
    ]
    lines.append("-------+" + "-" * (width * tile.chunks))
    lines += [f"{r:>6} |" + "".join(f"{v:>{width}}" for v in line) for r, line in enumerate(cells)]
    if shown < tile.rows:
        lines.append(f"  ... ({tile.rows - shown} more rows)")
    first, last = tile.columns_of(0)
    lines += [
        "",
        f"columns c: 16-byte chunks of a GMEM row (c = 0 holds elements {first}-{last})",
        SHOW_LEGEND[show],
    ]
    if (s := tile.swizzle) != layout.UNSWIZZLED:  # (the flip: in the swizzle's name)
        lines.append(
            f"swizzle {swizzle_name(s)}: the {layout.atom_of(s)}-byte unit number within each "
            f"{s}-byte block is XORed with bits 7.. of the offset;\nthe pattern repeats every "
            f"{8 * s} bytes ({8 * s // tile.pitch or 1} rows here)"
        )
    return "\n".join(lines) + "\n"


def wavefronts(addresses: Sequence[int], access: int) -> tuple[int, int]:
    """(wavefronts, the conflict-free count) of a warp's shared-memory access of `access` bytes
    per thread at `addresses`: the warp is served in phases of at most 128 bytes (32 threads for
    4 bytes or less, 16 for 8, 8 for 16); a phase takes as many wavefronts as the most distinct
    4-byte words that fall in one bank (one word read by several threads is broadcast)."""
    per_phase = WARP // max(1, access // BANK_BYTES)
    total = 0
    for start in range(0, len(addresses), per_phase):
        words: dict[int, set[int]] = defaultdict(set)
        for a in addresses[start : start + per_phase]:
            for w in range(a // BANK_BYTES, (a + max(access, 1) - 1) // BANK_BYTES + 1):
                words[w % BANKS].add(w)
        total += max(len(s) for s in words.values())
    return total, -(-len(addresses) // per_phase)


def _ways(found: tuple[int, int]) -> str:
    n, ideal = found
    ways = n / ideal
    what = "conflict-free" if n == ideal else f"{ways:g}-way conflict"
    return f"{n} wavefront{'s' if n != 1 else ''} ({what})"


def conflicts_text(tile: SmemTile) -> str:
    """Per 16-byte chunk: the wavefronts of a warp reading one of its columns element by
    element, and reading the chunk with 16-byte loads, thread t reading row t of the tile."""
    rows = [t % tile.rows for t in range(WARP)]
    element = max(1, tile.bits // 8)
    which = "t" if tile.rows >= WARP else f"t % {tile.rows}"
    lines = [
        f"bank conflicts: one warp reads a column, thread t reading row {which}"
        f" (rows {min(rows)}-{max(rows)}); {BANKS} banks of {BANK_BYTES} bytes",
        f"{'chunk':>5}  {'columns':<9}  {f'{tile.element} reads ({element} B each)':<34}  "
        "16-byte reads of the chunk",
    ]
    worst_element, worst_vector = 1.0, 1.0
    for c in range(tile.chunks):
        first, last = tile.columns_of(c)
        per_column = [
            wavefronts([tile.element_offset(r, j) for r in rows], element)
            for j in range(first, last + 1)
        ]
        worst = max(per_column, key=lambda f: f[0] / f[1])
        worst_element = max(worst_element, worst[0] / worst[1])
        full = CHUNK * (c + 1) <= tile.row_bytes
        if full:
            vector = wavefronts([tile.offset(r, c) for r in rows], CHUNK)
            worst_vector = max(worst_vector, vector[0] / vector[1])
            vector_text = _ways(vector)
        else:
            vector_text = "- (a partial chunk)"
        lines.append(f"{c:>5}  {f'{first}-{last}':<9}  {_ways(worst):<34}  {vector_text}")
    lines.append(
        f"worst: {worst_element:g}-way for element reads, {worst_vector:g}-way for 16-byte reads"
        + (" (conflict-free)" if worst_element == worst_vector == 1 else "")
    )
    return "\n".join(lines) + "\n"


CELL_W, CELL_H, LEFT, TOP = 34, 20, 64, 74


def smem_figure(tile: SmemTile, rows: int | None) -> Figure:
    """The rows as stored: one rect per GMEM chunk (class `chunk`) at its SMEM position,
    coloured and numbered by its GMEM column chunk; padding of a row is grey."""
    shown = tile.rows if rows is None else min(rows, tile.rows)
    slots = tile.pitch // CHUNK if tile.pitch % CHUNK == 0 else tile.chunks
    fig = Figure(LEFT + CELL_W * max(slots, 8) + 24, TOP + CELL_H * shown + 78)
    fig.add(
        Text(LEFT, 20, f"{tile.type_text}  (swizzle {swizzle_name(tile.swizzle)})", 13, bold=True),
        Text(
            LEFT,
            38,
            "SMEM rows as stored; each box is 16 bytes, coloured and numbered by the GMEM column "
            "chunk it holds",
            11,
        ),
        Text(LEFT - 6, TOP - 22, "chunk", 9, "end"),
        Text(LEFT - 6, TOP - 8, "banks", 9, "end"),
    )
    for k in range(slots):
        x = LEFT + k * CELL_W + CELL_W / 2
        first = k * CHUNK % (BANKS * BANK_BYTES) // BANK_BYTES
        fig.add(Text(x, TOP - 22, str(k), 9, "middle"))
        fig.add(Text(x, TOP - 8, f"{first}-{first + 3}", 8, "middle", "#555555"))
    for r in range(shown):
        y = TOP + r * CELL_H
        fig.add(Text(LEFT - 6, y + CELL_H - 6, f"row {r}", 9, "end"))
        used = set()
        for c in range(tile.chunks):
            k = tile.stored_chunk(r, c)
            used.add(k)
            first, last = tile.columns_of(c)
            fig.add(
                Rect(
                    LEFT + k * CELL_W,
                    y,
                    CELL_W,
                    CELL_H,
                    palette(c, tile.chunks),
                    "chunk",
                    f"row {r}, elements {first}-{last} (GMEM chunk {c}): SMEM chunk {k}, bank "
                    f"{tile.bank(r, c)}, byte {tile.offset(r, c)}",
                ),
                Text(LEFT + k * CELL_W + CELL_W / 2, y + CELL_H - 6, str(c), 10, "middle"),
            )
        for k in range(slots):
            if k not in used:
                fig.add(Rect(LEFT + k * CELL_W, y, CELL_W, CELL_H, "#e4e4e4", "pad", "padding"))
    y = TOP + shown * CELL_H + 22
    fig.add(
        Text(LEFT, y, f"row pitch {tile.pitch} B; {tile.chunks} GMEM chunks per row", 10),
        Text(
            LEFT,
            y + 16,
            "grey: padding (a row is rounded up to the swizzle span); banks: the 4 of 32 a box "
            "covers",
            10,
        ),
    )
    if shown < tile.rows:
        fig.add(Text(LEFT, y + 32, f"(first {shown} of {tile.rows} rows)", 10))
    return fig


# --- TMEM ---------------------------------------------------------------------------------


def parse_tmem_shape(text: str) -> TmemShape:
    name = text if text.startswith("shape_") else f"shape_{text}"
    try:
        return TmemShape(name)
    except ValueError:
        known = ", ".join(s.value.removeprefix("shape_") for s in TmemShape)
        raise LayoutError(f"expected a tcgen05.ld shape ({known}), got {text!r}") from None


@dataclass(frozen=True)
class TmemAccess:
    shape: TmemShape
    num: int
    offset: int

    @property
    def registers(self) -> int:
        return self.num * TMEM_REGS_PER_NUM[self.shape]

    @property
    def lanes(self) -> int:
        return TMEM_LANES[self.shape]

    def cells(self) -> dict[tuple[int, int], tuple[int, int]]:
        """(lane, column) relative to the warp's address -> (thread, register)."""
        return {
            tmem_fragment(self.shape, t, r, self.offset): (t, r)
            for t in range(WARP)
            for r in range(self.registers)
        }

    @property
    def columns(self) -> int:
        return 1 + max(c for _, c in self.cells())


def tmem_access(shape: str, num: int, offset: int | None) -> TmemAccess:
    s = parse_tmem_shape(shape)
    if num < 1 or num > 128 or num & (num - 1):
        raise LayoutError(f"expected --num a power of 2 and <= 128, got {num}")
    if num * TMEM_REGS_PER_NUM[s] > 128:
        raise LayoutError(
            f"expected at most 128 registers per thread, shape {s.value.removeprefix('shape_')} "
            f"with num {num} moves {num * TMEM_REGS_PER_NUM[s]}"
        )
    if offset is not None and s != TmemShape.S16X32BX2:
        raise LayoutError(f"--offset applies to shape 16x32bx2 only, got {shape}")
    if offset is not None and offset < 0:
        raise LayoutError(f"expected --offset >= 0, got {offset}")
    return TmemAccess(s, num, num if offset is None and s == TmemShape.S16X32BX2 else offset or 0)


def tmem_header(a: TmemAccess) -> str:
    name = a.shape.value.removeprefix("shape_")
    half = f", second half at column +{a.offset}" if a.shape == TmemShape.S16X32BX2 else ""
    return (
        f"tcgen05.ld/st .{name}.x{a.num}{half}: {a.registers} register"
        f"{'s' if a.registers != 1 else ''} per thread, "
        f"{a.lanes} lanes x {a.columns} columns (32-bit) per warp"
    )


def tmem_text(a: TmemAccess, warp: int) -> str:
    """The warp's lanes x columns, each cell `t<thread>.r<register>` (`.` where no register
    goes), lanes absolute for warp `warp` (its quarter (warp % 4) * 32)."""
    cells = a.cells()
    base = (warp % 4) * 32
    width = max(len(f"t{t}.r{r}") for t, r in cells.values()) + 1
    lines = [
        tmem_header(a),
        f"warp {warp} reads lanes {base}-{base + a.lanes - 1} (quarter {warp % 4}); columns from "
        "the op's column; t = thread of the warp (0-31), r = register (element of the vector)",
        "",
        "  lane |" + "".join(f"{c:>{width}}" for c in range(a.columns)),
        "-------+" + "-" * (width * a.columns),
    ]
    for lane in range(a.lanes):
        row = []
        for c in range(a.columns):
            tr = cells.get((lane, c))
            row.append("." if tr is None else f"t{tr[0]}.r{tr[1]}")
        lines.append(f"{base + lane:>6} |" + "".join(f"{v:>{width}}" for v in row))
    lines += [
        "",
        "warps w of a warpgroup read the same map at lanes (w % 4) * 32 + lane; copy.tmem_store "
        "writes it",
    ]
    return "\n".join(lines) + "\n"


TCELL_W, TCELL_H = 46, 16


def tmem_figure(a: TmemAccess, warps: Sequence[int]) -> Figure:
    """The warpgroup's TMEM lanes x columns: one rect per (lane, column) a register holds
    (class `cell`), coloured by the thread of its warp, labelled thread.register; lanes the
    access does not touch are grey."""
    cells = a.cells()
    quarters = sorted({w % 4 for w in warps})
    height = TOP + TCELL_H * 32 * len(quarters)
    fig = Figure(LEFT + TCELL_W * max(a.columns, 6) + 24, height + 48)
    fig.add(
        Text(LEFT, 20, tmem_header(a), 13, bold=True),
        Text(
            LEFT,
            38,
            "TMEM lanes (rows) x 32-bit columns from the op's column; each box: thread.register "
            "of the warp that holds it, coloured by thread",
            11,
        ),
        Text(
            LEFT + 4,
            height + 20,
            "grey: lanes of the warp's quarter this shape does not touch "
            "(a 16-lane shape reads the first 16 from the address's lane)",
            10,
        ),  # fmt: skip
    )
    for c in range(a.columns):
        fig.add(Text(LEFT + c * TCELL_W + TCELL_W / 2, TOP - 8, str(c), 9, "middle"))
    for i, q in enumerate(quarters):
        y0 = TOP + i * 32 * TCELL_H
        fig.add(Line(8, y0, LEFT + TCELL_W * a.columns, y0, "#333333"))
        fig.add(Text(8, y0 + 28, f"warp {q}", 9, bold=True))
        for lane in range(32):
            y = y0 + lane * TCELL_H
            if lane % 8 == 0:
                fig.add(Text(LEFT - 6, y + TCELL_H - 4, f"lane {32 * q + lane}", 8, "end"))
            for c in range(a.columns):
                tr = cells.get((lane, c))
                x = LEFT + c * TCELL_W
                if tr is None:
                    fig.add(Rect(x, y, TCELL_W, TCELL_H, "#eeeeee", "unread"))
                    continue
                t, r = tr
                tip = (
                    f"lane {32 * q + lane}, column {c}: warp {q} thread {t} (thread "
                    f"{32 * q + t} of the warpgroup) register {r}"
                )
                fig.add(
                    Rect(x, y, TCELL_W, TCELL_H, palette(t, WARP), "cell", tip),
                    Text(x + TCELL_W / 2, y + TCELL_H - 4, f"{t}.{r}", 8, "middle"),
                )
    return fig


# --- command line -------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=TOOL,
        description="Draw an SMEM buffer's layout (16-byte chunks and banks under its swizzle) "
        "or the TMEM lane/column map of a tcgen05.ld shape, as text and SVG (PNG with "
        "matplotlib).",
        epilog="examples: copy-layout 'memref<64x64xf32, #copy.smem<swizzle = 128>>' --conflicts;"
        " copy-layout --tmem 16x256b --num 2 --svg tmem.svg",
    )
    p.add_argument("type", nargs="?", help="an SMEM memref type, e.g. 'memref<64x32xf32, "
                   "#copy.smem<swizzle = 128>>'")  # fmt: skip
    p.add_argument("--show", choices=("chunk", "bank", "offset"), default="chunk",
                   help="what each grid cell shows (default: chunk)")  # fmt: skip
    p.add_argument("--swizzle", help="draw under this swizzle instead of the type's: none, 32, "
                   "64 or 128")  # fmt: skip
    p.add_argument("--slot", help="the slot of a multi-buffer: an index per leading dim, e.g. 2 "
                   "or 1,0 (default: 0)")  # fmt: skip
    p.add_argument("--rows", type=int, help="show the first N rows (default: all)")
    p.add_argument("--conflicts", action="store_true",
                   help="also the bank conflicts of a warp reading one column")  # fmt: skip
    p.add_argument("--tmem", metavar="SHAPE", help="a tcgen05.ld shape: 32x32b, 16x64b, "
                   "16x128b, 16x256b or 16x32bx2")  # fmt: skip
    p.add_argument("--num", type=int, default=1, help="the .num repeat count (default 1)")
    p.add_argument("--offset", type=int, help="16x32bx2: the second half's column offset "
                   "(default: num)")  # fmt: skip
    p.add_argument("--warp", type=int, help="TMEM: the warp to show (default: 0 in text, the "
                   "warpgroup's 4 in the picture)")  # fmt: skip
    p.add_argument("--svg", metavar="PATH", help="also write the picture as SVG")
    p.add_argument("--png", metavar="PATH", help="also write the picture as PNG (matplotlib)")
    p.add_argument("--no-text", action="store_true", help="only write the pictures")
    args = p.parse_args(argv)
    if (args.type is None) == (args.tmem is None):
        p.error("expected an SMEM memref type or --tmem SHAPE (one of them)")
    if args.rows is not None and args.rows < 1:
        p.error(f"expected --rows of at least 1, got {args.rows}")
    if args.warp is not None and not 0 <= args.warp < 4:
        p.error(f"expected --warp 0 to 3 (a warp of the warpgroup), got {args.warp}")
    return args


def run(args: argparse.Namespace) -> int:
    if args.tmem is not None:
        access = tmem_access(args.tmem, args.num, args.offset)
        text = tmem_text(access, args.warp or 0)
        figure = tmem_figure(access, range(4) if args.warp is None else [args.warp])
    else:
        tile = parse_smem_type(args.type, args.swizzle, args.slot)
        text = smem_text(tile, args.show, args.rows)
        if args.conflicts:
            text += "\n" + conflicts_text(tile)
        figure = smem_figure(tile, args.rows)
    pictures = [(p, s) for p, s in ((args.svg, ".svg"), (args.png, ".png")) if p is not None]
    try:
        for path, suffix in pictures:
            check_picture(path, suffix)
        if not args.no_text:
            sys.stdout.write(text)
        for path, _ in pictures:
            figure.write(path)
    except BrokenPipeError:  # the reader went away: `cli.guarded` ends quietly
        raise
    except (FigureError, OSError) as exc:
        raise LayoutError(str(exc)) from None
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `copy-layout`; returns the exit status (no traceback: `cli.guarded`)."""
    return guarded(TOOL, lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except LayoutError as exc:
        print(f"{TOOL}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
