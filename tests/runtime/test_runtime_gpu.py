"""On a GPU (an H200 here), or on the CPU under the interpreter at smaller shapes: every
example kernel runs and matches numpy bit for bit on fresh random data, for several shapes
and dtypes."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from copy_tools import runtime
from frontends import kernels
from tests import device

pytestmark = device.marks()

TARGET = "sm_90a"
SHAPES = device.shapes([(256, 256), (1000, 1000), (130, 264)], [(130, 264)])
DTYPES = ["f32", "f16", "bf16", "i32"]


def numpy_dtype(name: str):
    if name == "bf16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return ml_dtypes.bfloat16
    return {"f32": np.float32, "f16": np.float16, "i32": np.int32, "f64": np.float64}[name]


def random(shape, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "i32":
        return rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)
    return (rng.standard_normal(shape) * 100).astype(numpy_dtype(dtype))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]
    return a.shape == b.shape and bool(np.array_equal(a.view(unsigned), b.view(unsigned)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_tma_copy(shape, dtype):
    # 1000x1000 and 130x264 are not multiples of the 64x64 tile: zero-filled loads and
    # clipped stores.
    program = runtime.compile(kernels.tma_copy(shape, dtype, target=TARGET))
    x = random(shape, dtype, seed=zlib.crc32(f"{shape}{dtype}".encode()))
    y = np.zeros_like(x)
    program(x, y, grid=kernels.grid(shape, (64, 64)))
    assert same_bits(y, x)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape", [(256, 256), (500, 384)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_swizzled_copy(shape, dtype):
    tile = (64, 128 // np.dtype(numpy_dtype(dtype)).itemsize)  # rows of one 128-byte span
    program = runtime.compile(kernels.tma_copy(shape, dtype, tile, swizzle=128, target=TARGET))
    x = random(shape, dtype, seed=7)
    y = np.zeros_like(x)
    program(x, y, grid=kernels.grid(shape, tile))
    assert same_bits(y, x)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32"])
@pytest.mark.parametrize("shape", [(256, 256), (130, 264)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_reduce_add(shape, dtype):
    program = runtime.compile(kernels.tma_copy(shape, dtype, reduce="add", target=TARGET))
    x = random(shape, dtype, seed=11)
    o = random(shape, dtype, seed=12)
    expected = o + x  # numpy's sum, rounded to the dtype (ints wrap)
    program(x, o, grid=kernels.grid(shape, (64, 64)))
    assert same_bits(o, expected)


def tf32_kernel(shape, reduce: str | None = None):
    """kernels.tma_copy on tf32 arrays (stored as f32; the builder takes no tf32): its
    maps are TFLOAT32."""
    from xdsl.parser import Parser

    from copy_tools.universe import make_context

    text = str(kernels.tma_copy(shape, "f32", reduce=reduce, target=TARGET))
    return Parser(make_context(), text.replace("xf32", "xtf32")).parse_module()


@pytest.mark.parametrize("reduce", [None, "add"])
def test_a_tfloat32_map_rounds_what_it_loads_to_tf32(reduce):
    """A TMA load through a TFLOAT32 map leaves each element rounded to tf32, to nearest
    even (what Triton's round_f32_to_tf32 descriptors rely on); a reduce add then adds that
    in f32 (docs/hardware.md: the model that gives run 84's counts). x's low 13 bits cover
    every rounding case: below, at and above the half, the tie to even both ways."""
    from interpreter.values import f32_to_tf32

    shape = (128, 192)
    program = runtime.compile(tf32_kernel(shape, reduce))
    rng = np.random.default_rng(13)
    x = (rng.standard_normal(shape) * 100).astype(np.float32)
    low = np.array([0x1000, 0x0FFF, 0x1001, 0x1FFF, 0x0001, 0x0000], np.uint32)
    x = ((x.view(np.uint32) & ~np.uint32(0x1FFF)) | rng.choice(low, size=shape)).view(np.float32)
    o = random(shape, "f32", seed=14) if reduce else np.zeros_like(x)
    expected = f32_to_tf32(x) + (o if reduce else np.float32(0))
    program(x, o, grid=kernels.grid(shape, (64, 64)))
    assert same_bits(o, expected.astype(np.float32))


@pytest.mark.parametrize("dtype", ["f32", "f16", "i32"])
@pytest.mark.parametrize("shape", [(256, 256), (100, 300)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_cp_async_copy(shape, dtype):
    # sm_80 code paths (cp.async), compiled for the H200's sm_90a.
    program = runtime.compile(kernels.cp_async_copy(shape, dtype, target=TARGET))
    x = random(shape, dtype, seed=3)
    y = np.zeros_like(x)
    program(x, y, grid=kernels.grid(shape, (32, 128)))
    assert same_bits(y, x)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("shape", [(256, 256), (128, 1024)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_multicast_copy(shape, dtype):
    program = runtime.compile(kernels.multicast_copy(shape, dtype, target=TARGET))
    view = (shape[0] // 32, 32, shape[1])
    x = random(view, dtype, seed=5)
    y = np.zeros_like(x)
    # A pair of CTAs per 64-column tile.
    program(x, y, grid=(2 * shape[1] // 64, shape[0] // 64))
    assert same_bits(y, x)


EXAMPLES = {
    # file: (target to compile for on the H200, array shape, grid, elements each block writes)
    "tma_tile_copy.mlir": (None, (4096, 4096), (64, 64), 64 * 64),
    "swizzled_copy.mlir": (None, (4096, 4096), (128, 64), 64 * 32),
    "oob_copy.mlir": (None, (1000, 1000), (16, 16), 64 * 64),
    "cp_async_copy.mlir": ("sm_90a", (1024, 1024), (8, 32), 32 * 128),
    "multicast_copy.mlir": (None, (128, 32, 4096), (128, 64), 32 * 64),
    "reduce_add.mlir": (None, (4096, 4096), (64, 64), 64 * 64),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_run_as_written(name):
    """The .mlir examples themselves, on their fixed shapes, against numpy: on the GPU over
    their whole grid; interpreted, over the first 2 x 2 blocks (the elements they write)."""
    from pathlib import Path

    target, shape, grid, per_block = EXAMPLES[name]
    source = (Path(__file__).resolve().parents[2] / "examples" / name).read_text()
    program = runtime.compile(source, target)
    x = random(shape, "f32", seed=zlib.crc32(name.encode()))
    y = random(shape, "f32", seed=1) if name == "reduce_add.mlir" else np.zeros_like(x)
    expected = y + x if name == "reduce_add.mlir" else x
    if not device.INTERPRETED:
        program(x, y, grid=grid)
        assert same_bits(y, expected)
        return
    before = y.copy()
    program(x, y, grid=(2, 2))
    written = ~same_elements(y, before)
    assert int(written.sum()) == 4 * per_block
    assert same_bits(y[written], expected[written])


def same_elements(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]
    return a.view(unsigned) == b.view(unsigned)


def test_device_arrays_in_place():
    torch = pytest.importorskip("torch")
    program = runtime.compile(kernels.tma_copy((512, 256), "bf16", target=TARGET))
    x = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    y = torch.zeros_like(x)
    program(x, y, grid=kernels.grid((512, 256), (64, 64)))
    assert torch.equal(x.view(torch.int16), y.view(torch.int16))


def test_wrong_dtype_is_a_value_error():
    program = runtime.compile(kernels.tma_copy((256, 256), "f32", target=TARGET))
    x = np.zeros((256, 256), np.float16)
    with pytest.raises(ValueError, match="expected argument 0 of tma_copy of dtype float32"):
        program(x, x, grid=(4, 4))


@pytest.mark.parametrize(("tile", "stages", "blocks"), [((128, 128), 3, 8), ((64, 128), 4, 5)])
def test_pipelined_copy(tile, stages, blocks):
    # Each block walks several tiles through the ring: every slot is reused, both parities.
    shape = (1024, 2048)
    program = runtime.compile(kernels.tma_copy_pipelined(shape, "f32", tile, stages=stages))
    x = random(shape, "f32", seed=9)
    y = np.zeros_like(x)
    program(x, y, grid=(blocks,))
    assert same_bits(y, x)


def test_reduce_add_with_destination_prefetch():
    shape = (256, 512)
    module = kernels.tma_copy(shape, "f32", (64, 256), reduce="add", prefetch_destination=True)
    program = runtime.compile(module)
    x, o = random(shape, "f32", seed=21), random(shape, "f32", seed=22)
    expected = o + x
    program(x, o, grid=kernels.grid(shape, (64, 256)))
    assert same_bits(o, expected)


def test_cupy_arrays_in_place():
    cupy = pytest.importorskip("cupy")
    program = runtime.compile(kernels.tma_copy((256, 512), "f32", target=TARGET))
    x = cupy.random.standard_normal((256, 512), dtype=cupy.float32)
    y = cupy.zeros_like(x)
    program(x, y, grid=kernels.grid((256, 512), (64, 64)))
    assert bool((x == y).all())


def test_jax_arrays_through_dlpack():
    import os

    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    torch = pytest.importorskip("torch")
    program = runtime.compile(kernels.tma_copy((256, 512), "f32", target=TARGET))
    x = jax.random.normal(jax.random.key(0), (256, 512), jnp.float32)
    y = torch.zeros(256, 512, device="cuda")  # the output: a PyTorch tensor in place
    program(x, y, grid=kernels.grid((256, 512), (64, 64)))
    assert np.array_equal(np.asarray(x), y.cpu().numpy())


def test_one_dynamic_kernel_for_every_shape():
    program = runtime.compile(kernels.tma_copy((0, 0), "f32", dynamic=True, target=TARGET))
    for shape in [(64, 64), (1000, 1000), (130, 264), (3, 4096)]:
        x = random(shape, "f32", seed=shape[0])
        y = np.zeros_like(x)
        program(x, y, grid=kernels.grid(shape, (64, 64)))
        assert same_bits(y, x), shape


DYNAMIC_CP_ASYNC = [
    ("sm_80", "f32"),
    ("sm_80", "f16"),
    ("sm_86", "bf16"),
    ("sm_86", "i32"),
    ("sm_90a", "f32"),
    ("sm_90a", "f16"),
]
"""cp_async_copy(dynamic=True) kernels as (target, dtype): sm_80 and sm_86 PTX runs on the
H200 assembled for sm_90, sm_90a's is its own."""


def dynamic_shapes(dtype: str) -> list[tuple[int, int]]:
    """Shapes that are no multiple of the 32x128 tile (tails in both dims), with row pitches
    of 16, 8 and 4 bytes' alignment (each picks its own chunk size at run time); 2-byte
    elements need even rows (cp.async moves 4 bytes at least)."""
    even = device.shapes(
        [(64, 128), (130, 258), (999, 998), (257, 36), (3, 4098), (1, 2)],
        [(64, 128), (130, 258), (257, 36), (3, 520), (1, 2)],
    )
    odd = device.shapes([(999, 997), (33, 1), (5, 131)], [(99, 97), (33, 1), (5, 131)])
    return even + (odd if dtype in ("f32", "i32") else [])


def poisoned(shape, dtype: str) -> np.ndarray:
    """An output no element of `random` equals in bits (NaN, or the most negative int)."""
    fill = np.iinfo(np.int32).min if dtype == "i32" else np.nan
    return np.full(shape, fill, dtype=numpy_dtype(dtype))


@pytest.mark.parametrize(("target", "dtype"), DYNAMIC_CP_ASYNC, ids=lambda v: str(v))
def test_one_dynamic_cp_async_kernel_for_every_shape(target, dtype):
    """One compiled cp.async kernel of ?x? arrays copies every shape (the runtime passes the
    sizes; the row pitch picks 16-, 8- or 4-byte chunks), tails included: the bytes of
    numpy's array and of the static kernel compiled for that shape."""
    arch = None if target == "sm_90a" else "sm_90"
    program = runtime.compile(
        kernels.cp_async_copy((0, 0), dtype, dynamic=True, target=target), arch=arch
    )
    for shape in dynamic_shapes(dtype):
        x = random(shape, dtype, seed=zlib.crc32(f"{shape}{dtype}{target}".encode()))
        grid = kernels.grid(shape, (32, 128))
        y = poisoned(shape, dtype)
        program(x, y, grid=grid)
        assert same_bits(y, x), shape
        static = poisoned(shape, dtype)
        runtime.compile(kernels.cp_async_copy(shape, dtype, target=target), arch=arch)(
            x, static, grid=grid
        )
        assert same_bits(y, static), shape


@pytest.mark.parametrize("offset", [0, 1, 2, 3], ids=lambda n: f"offset{n}")
def test_dynamic_cp_async_picks_its_chunk_from_the_address(offset):
    """A device array 4, 8 or 12 bytes into its allocation (a PyTorch view): the copy picks
    the chunk size that divides its address too, and copies the same bytes."""
    torch = pytest.importorskip("torch")
    program = runtime.compile(
        kernels.cp_async_copy((0, 0), "f32", dynamic=True, target="sm_80"), arch="sm_90"
    )
    shape = (130, 264)
    x = random(shape, "f32", seed=31)
    flat = torch.full((offset + x.size,), float("nan"), device="cuda")
    source = flat[offset:].view(*shape)
    source.copy_(torch.from_numpy(x))
    y = torch.full(shape, float("nan"), device="cuda")
    program(source, y, grid=kernels.grid(shape, (32, 128)))
    assert same_bits(y.cpu().numpy(), x)


@pytest.mark.parametrize("offset", [1, 2, 3])
def test_static_cp_async_refuses_a_view_that_starts_mid_chunk(offset):
    """A static cp.async copy moves 16-byte chunks: a device array 4, 8 or 12 bytes into
    its allocation is refused before the launch (it would fault), the output untouched."""
    torch = pytest.importorskip("torch")
    program = runtime.compile(
        kernels.cp_async_copy((130, 264), "f32", target="sm_80"), arch="sm_90"
    )
    shape = (130, 264)
    flat = torch.zeros((offset + 130 * 264,), device="cuda")
    y = torch.full(shape, float("nan"), device="cuda")
    with pytest.raises(ValueError, match="aligned to 16 bytes"):
        program(flat[offset:].view(*shape), y, grid=kernels.grid(shape, (32, 128)))
    assert bool(torch.isnan(y).all())


BLOCK_3D = """
builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{
  func.func @copy_3d_block(%x: memref<100x136xf32>, %y: memref<100x136xf32>)
      attributes {{gpu.kernel{known}}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c136 = arith.constant 136 : index
    %c2 = arith.constant 2 : index
    %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %row = arith.muli %bx, %c32 : index
    %tile = copy.alloc_smem : memref<32x136xf32, #copy.smem>
    copy.async_copy %x[%row, %c0] to %tile impl cp_async oob zeros
      : memref<100x136xf32> to memref<32x136xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    %tx = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %ty = "gpu.thread_id"() <{{dimension = #gpu<dim y>}}> : () -> index
    %tz = "gpu.thread_id"() <{{dimension = #gpu<dim z>}}> : () -> index
    %nx = "gpu.block_dim"() <{{dimension = #gpu<dim x>}}> : () -> index
    %ny = "gpu.block_dim"() <{{dimension = #gpu<dim y>}}> : () -> index
    %nz = "gpu.block_dim"() <{{dimension = #gpu<dim z>}}> : () -> index
    %zy = arith.muli %tz, %ny : index
    %plane = arith.addi %zy, %ty : index
    %scaled = arith.muli %plane, %nx : index
    %t = arith.addi %scaled, %tx : index
    %nxy = arith.muli %nx, %ny : index
    %n = arith.muli %nxy, %nz : index
    %rows = arith.constant 100 : index
    %count = arith.constant 4352 : index
    scf.for %i = %t to %count step %n {{
      %r = arith.divui %i, %c136 : index
      %c = arith.remui %i, %c136 : index
      %gr = arith.addi %row, %r : index
      %inside = arith.cmpi ult, %gr, %rows : index
      scf.if %inside {{
        %v = memref.load %tile[%r, %c] : memref<32x136xf32, #copy.smem>
        memref.store %v, %y[%gr, %c] : memref<100x136xf32>
      }}
    }}
    func.return
  }}
}}
"""


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("block", [(32, 2, 4), (64, 1, 2), (16, 4, 1)])
@pytest.mark.parametrize("known", [True, False])
def test_cp_async_copy_on_a_3d_block(block, known, target):
    """The block's threads share the cp.async chunks by their linear index (x fastest): with
    gpu.known_block_size the lowering computes it from the block shape it knows (a dim of
    extent 1 adds nothing), without from tid and ntid; every element of a 100 x 136 array
    (a tail tile of 4 rows) arrives either way."""
    known_attr = f", gpu.known_block_size = array<i32: {block[0]}, {block[1]}, {block[2]}>"
    text = BLOCK_3D.format(target=target, known=known_attr if known else "")
    program = runtime.compile(text, arch=None if target == "sm_90a" else "sm_90")
    x = random((100, 136), "f32", zlib.crc32(f"{block}{known}{target}".encode()))
    y = np.full_like(x, np.nan)
    program(x, y, grid=(4, 1), block=None if known else block)
    assert same_bits(y, x)
