"""The swizzled SMEM layout (copy_dialect/layout.py) against a model of where TMA puts each
byte, and the thread-access kernels of test_swizzle_gpu.py compiled to a cubin (no GPU)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import Float32Type
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from copy_dialect import layout
from copy_dialect import ops as copy
from copy_dialect.ops import arena_layout as layout_arena
from copy_tools.universe import make_context
from passes.pipeline import compile_module
from tests.dialect.swizzle_kernels import ESIZE, configs, module, widths

ELF_MAGIC = b"\x7fELF"


def tma_image(box: np.ndarray, swizzle: int, base: int, size: int) -> np.ndarray:
    """The SMEM bytes [0, size) after TMA writes `box` (rows x row bytes, uint8) at byte
    `base`, as measured on an H200: unswizzled rows are packed; swizzled rows start one span
    apart (a row narrower than the span is padded to it), and 16-byte chunk j of a row at
    absolute byte a lands at chunk j ^ ((a / 128) % (span / 16)) of it (128B: j ^ (r % 8),
    64B: j ^ ((r / 2) % 4), 32B: j ^ ((r / 4) % 2) for rows of one span from byte 0)."""
    image = np.zeros(size, np.uint8)
    rows, row_bytes = box.shape
    for r in range(rows):
        if swizzle == 16:
            start = base + r * row_bytes
            image[start : start + row_bytes] = box[r]
            continue
        start = base + r * swizzle
        phase = (start // 128) % (swizzle // 16)
        for j in range(row_bytes // 16):
            dst = start + 16 * (j ^ phase)
            image[dst : dst + 16] = box[r, 16 * j : 16 * j + 16]
    return image


def layout_cases():
    for swizzle in (16, 32, 64, 128):
        for dtype, esize in ESIZE.items():
            for width in widths(swizzle):
                yield swizzle, dtype, esize, width


@pytest.mark.parametrize(("swizzle", "dtype", "esize", "width"), list(layout_cases()))
@pytest.mark.parametrize("slots", [0, 3], ids=["rank2", "ring3"])
def test_layout_is_where_tma_puts_each_element(swizzle, dtype, esize, width, slots):
    rows, cols = 24, width // esize
    shape = (slots, rows, cols) if slots else (rows, cols)
    bits = 8 * esize
    size = layout.size_bytes(shape, bits, swizzle)
    rng = np.random.default_rng(swizzle * 1000 + width + esize)
    data = rng.integers(0, 256, size=(*shape[:-1], width), dtype=np.uint8)
    if slots:
        # TMA loads each slot at its own start, a multiple of the swizzle period.
        slot_bytes = layout.dim_strides(shape, bits, swizzle)[0]
        assert slot_bytes % max(16, copy.swizzle_period(swizzle)) == 0
        image = sum(
            (tma_image(data[k], swizzle, k * slot_bytes, size) for k in range(slots)),
            np.zeros(size, np.uint8),
        )
    else:
        image = tma_image(data, swizzle, 0, size)
    # The layout evaluated on numpy index grids, one byte of each element at a time.
    grids = np.indices(shape)
    offsets = layout.element_offset(list(grids), shape, bits, swizzle)
    assert len(np.unique(offsets)) == offsets.size
    assert offsets.min() >= 0
    assert offsets.max() + esize <= size
    elements = data.reshape(*shape, esize)
    for b in range(esize):
        assert np.array_equal(image[offsets + b], elements[..., b])


def test_layout_sizes_match_the_tma_footprint():
    # 16-byte f32 rows under 128B swizzle occupy a whole span each (docs/hardware.md, TR9:
    # 16 KiB for a 4 x 128 box of 2 KiB).
    assert layout.size_bytes((128, 4), 32, 128) == 16384
    assert layout.size_bytes((64, 8), 32, 64) == 4096
    assert layout.size_bytes((128, 4), 32, 16) == 2048
    assert copy.smem_bytes((2, 64, 8), Float32Type(), 128) == 2 * 64 * 128


@pytest.mark.parametrize("swizzle", [32, 64, 128])
@pytest.mark.parametrize(
    ("shape", "bits"), [((8, 36), 32), ((5, 48), 16), ((3, 200), 8), ((2, 4, 64), 32)]
)
def test_rows_wider_than_the_span_are_a_bijection_inside_the_buffer(swizzle, shape, bits):
    """No TMA box writes such rows (C5); thread accesses still get one element per place."""
    size = layout.size_bytes(shape, bits, swizzle)
    assert size % swizzle == 0
    offsets = layout.element_offset(list(np.indices(shape)), shape, bits, swizzle)
    esize = bits // 8
    assert len(np.unique(offsets // esize)) == offsets.size
    assert offsets.min() >= 0
    assert offsets.max() + esize <= size
    assert (offsets % esize == 0).all()


def test_swizzle_is_cutlass_swizzle_b_4_3():
    # CUTLASS Swizzle<B, M, S>: o ^ ((o & (((1 << B) - 1) << (M + S))) >> S), B = log2(S/16).
    for span, b in ((32, 1), (64, 2), (128, 3)):
        for o in range(4 * 8 * span):
            assert layout.swizzled(o, span) == o ^ ((o & (((1 << b) - 1) << 7)) >> 3)
    assert layout.swizzled(1234, 16) == 1234


def test_swizzled_buffers_start_at_a_period_multiple():
    text = """builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
      func.func @k() attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
        %a = copy.alloc_smem : memref<40x4xf32, #copy.smem>
        %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
        %b = copy.alloc_smem : memref<8x32xf32, #copy.smem<swizzle = 128>>
        %c = copy.alloc_smem : memref<8x8xf32, #copy.smem<swizzle = 32>>
        func.return
      }
    }"""
    mod = Parser(make_context(), text).parse_module()
    mod.verify()
    offsets, _ = layout_arena(next(iter(mod.body.block.ops)))
    for op, offset in offsets.items():
        if isinstance(op, copy.AllocSmemOp):
            swizzle = copy.swizzle_of(op.result.type)
            assert offset % max(128, copy.swizzle_period(swizzle)) == 0


@pytest.fixture(scope="module")
def compiled():
    ctx = make_context()
    mod = Parser(ctx, module(configs())).parse_module()
    return mod, compile_module(mod, ctx)


def test_thread_access_kernels_compile(compiled):
    _, result = compiled
    assert result.cubin.startswith(ELF_MAGIC)
    names = {f"{d}_{c.name}" for c in configs() for d in ("load", "store")}
    assert set(result.abi.kernels) == names


def test_swizzled_thread_access_lowers_to_xor(compiled):
    """Each swizzled kernel's thread access XORs its offset, each unswizzled one does not."""
    mod, _ = compiled
    kernels = [fn for fn in mod.body.block.ops if isinstance(fn, llvm.FuncOp | func.FuncOp)]
    kernels = [fn for fn in kernels if fn.sym_name.data.startswith(("load_", "store_"))]
    assert len(kernels) == 2 * len(configs())
    for fn in kernels:
        name = fn.sym_name.data
        xors = sum(isinstance(op, llvm.XOrOp) for op in fn.walk())
        assert (xors > 0) == ("_s16_" not in name), name


@pytest.mark.parametrize("space", ["#copy.smem<swizzle = 128>", "#copy.smem"])
@pytest.mark.parametrize("element", ["i4", "i1"])
def test_sub_byte_elements_in_smem_get_a_diagnostic(element, space):
    # SMEM packs sub-byte elements; a thread access of one byte per element would run past
    # the buffer (unswizzled) or has no byte address (swizzled).
    ref = f"memref<8x256x{element}, {space}>"
    text = f"""builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
      func.func @k(%i: index) attributes {{gpu.kernel}} {{
        %b = copy.alloc_smem : {ref}
        %v = memref.load %b[%i, %i] : {ref}
        memref.store %v, %b[%i, %i] : {ref}
        func.return
      }}
    }}"""
    ctx = make_context()
    mod = Parser(ctx, text).parse_module()
    with pytest.raises(PassFailedException, match=f"cannot address elements of type {element}"):
        compile_module(mod, ctx)
