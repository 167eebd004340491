"""TMA im2col loads (`copy.im2col_load`) on the CPU: the convolution cases
test_im2col_gpu.py launches compile to PTX and cubin; the kernel ABI records each im2col
map's parameters and the runtime hands them to `cuTensorMapEncodeIm2col` (the driver call
mocked); and a model of the PTX im2col traversal, fed the builder's coordinates, offsets,
corners and strides, gives numpy's im2col matrix tile by tile, which checks the mapping of
padding, stride and dilation onto the map (docs/design.md) without a GPU."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    bf16,
    f16,
    f32,
    f64,
    i8,
    i16,
    i32,
)
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.attributes import L2_POLICY_ENCODING, L2Policy
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts.abi import Im2colMapParam, KernelAbi, ModuleAbi, TensorMapParam
from frontends import kernels
from passes.pipeline import compile_module
from runtime import tensor_map
from runtime.arrays import DeviceArray

# (NHWC shape, filter, stride, padding, dilation, dtype, channels per load, pixels, swizzle):
# strides 1 and 2, paddings 0, 1 and 2, dilations 1 and 2 in every combination, odd H and W,
# C of 8, 16 and 64 (one or several channel blocks), f16 and f32, a 128-byte swizzle.
CASES = [
    ((2, 9, 7, 8), (3, 3), 1, 0, 1, "f16", None, 64, 16),
    ((2, 9, 7, 16), (3, 3), 1, 1, 1, "f32", None, 64, 16),
    ((1, 11, 9, 8), (3, 3), 1, 2, 1, "f32", None, 32, 16),
    ((2, 9, 7, 16), (3, 3), 1, 0, 2, "f16", None, 64, 16),
    ((2, 9, 9, 8), (3, 3), 1, 1, 2, "f32", None, 64, 16),
    ((1, 13, 11, 16), (3, 3), 1, 2, 2, "f16", None, 128, 16),
    ((2, 9, 7, 8), (3, 3), 2, 0, 1, "f32", None, 16, 16),
    ((2, 11, 9, 16), (3, 3), 2, 1, 1, "f16", None, 64, 16),
    ((1, 9, 7, 8), (3, 3), 2, 2, 1, "f16", None, 32, 16),
    ((2, 13, 11, 16), (3, 3), 2, 0, 2, "f32", None, 64, 16),
    ((2, 9, 7, 8), (3, 3), 2, 1, 2, "f16", None, 64, 16),
    ((1, 11, 13, 16), (3, 3), 2, 2, 2, "f32", None, 64, 16),
    ((2, 7, 9, 64), (3, 3), 1, 1, 1, "f16", None, 64, 128),
    ((1, 9, 7, 64), (3, 3), 2, 1, 1, "f32", 32, 64, 128),
    ((2, 9, 7, 64), (3, 3), 1, 1, 2, "f32", None, 32, 16),
    ((3, 5, 7, 16), (1, 1), 1, 0, 1, "f16", 8, 64, 16),
    ((2, 9, 11, 8), (2, 3), (2, 1), (1, 0), (1, 2), "f32", None, 64, 16),
]


def case_id(case) -> str:
    shape, filt, stride, pad, dil, dtype, channels, pixels, swizzle = case
    return (
        (
            f"{'x'.join(map(str, shape))}-k{filt[0]}{filt[1]}-s{stride}-p{pad}-d{dil}-{dtype}"
            f"-c{channels}-m{pixels}-sw{swizzle}"
        )
        .replace(" ", "")
        .replace("(", "")
        .replace(")", "")
        .replace(",", "_")
    )


def setup(case) -> tuple[kernels.Conv2d, dict[str, Any]]:
    shape, filt, stride, pad, dil, dtype, channels, pixels, swizzle = case
    conv = kernels.conv2d(shape, filt, stride=stride, padding=pad, dilation=dil)
    return conv, {"pixels": pixels, "channels": channels, "swizzle": swizzle}


def module(case):
    conv, options = setup(case)
    return kernels.im2col_gather(conv, case[5], **options)


def im2col(x: np.ndarray, conv: kernels.Conv2d) -> np.ndarray:
    """The reference: row (n, p, q), column (r, s, c) = x[n, p*st - pad + r*dil, ...], zero
    outside the input."""
    n, h, w, c = x.shape
    (p_out, q_out), (r_k, s_k) = conv.output, conv.filter
    (sh, sw), (ph, pw), (dh, dw) = conv.stride, conv.padding, conv.dilation
    padded = np.zeros((n, h + 2 * ph + dh * r_k, w + 2 * pw + dw * s_k, c), x.dtype)
    padded[:, ph : ph + h, pw : pw + w] = x
    out = np.zeros((n, p_out, q_out, r_k, s_k, c), x.dtype)
    for r in range(r_k):
        for s in range(s_k):
            rows = padded[:, r * dh : r * dh + sh * p_out : sh, s * dw : s * dw + sw * q_out : sw]
            out[:, :, :, r, s] = rows[:, :p_out, :q_out]
    return out.reshape(conv.matrix)


def tma_im2col(
    x: np.ndarray,
    coords: tuple[int, ...],
    offsets: tuple[int, ...],
    param: Im2colMapParam,
) -> np.ndarray:
    """The PTX ISA's im2col mode, for a rank-4 map: `pixels` filter bases from `coords` on,
    W fastest, `element_strides` apart, each spatial dim wrapping at the box's end [lower,
    extent + upper) to its lower corner and carrying into the next dim (H, then N); each
    pixel's channels [c, c + channels) read at base + offsets, zeros out of bounds."""
    n_size, h_size, w_size, c_size = x.shape
    n, h, w, c = coords
    (lh, lw), (uh, uw) = param.lower, param.upper
    _, sh, sw, _ = param.element_strides
    tile = np.zeros(param.box, x.dtype)
    for row in range(param.pixels):
        y, xx = h + offsets[0], w + offsets[1]
        if 0 <= n < n_size and 0 <= y < h_size and 0 <= xx < w_size:
            hi = min(c + param.channels, c_size)
            tile[row, : hi - c] = x[n, y, xx, c:hi]
        w += sw
        if w >= w_size + uw:
            w, h = lw, h + sh
            if h >= h_size + uh:
                h, n = lh, n + 1
    return tile


def im2col_map(conv: kernels.Conv2d, dtype: str, options: dict[str, Any]) -> Im2colMapParam:
    compiled = compile_module(kernels.im2col_gather(conv, dtype, **options), make_context())
    (abi,) = compiled.abi.kernels.values()
    (param,) = (p for p in abi.tensor_maps if isinstance(p, Im2colMapParam))
    return param


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_im2col_kernel_compiles(case):
    compiled = compile_module(module(case), make_context(), "sm_90a")
    assert compiled.cubin
    assert ".im2col.mbarrier::complete_tx::bytes" in compiled.ptx
    (abi,) = compiled.abi.kernels.values()
    conv, options = setup(case)
    im2col_maps = [p for p in abi.tensor_maps if isinstance(p, Im2colMapParam)]
    tiled = [p for p in abi.tensor_maps if type(p) is TensorMapParam]
    assert len(im2col_maps) == 1
    assert len(tiled) == 1
    (param,) = im2col_maps
    channels = options["channels"] or conv.shape[3]
    assert param.box == (options["pixels"], channels)
    assert (param.lower, param.upper) == (conv.lower, conv.upper)
    assert param.element_strides == (1, *conv.stride, 1)
    assert (param.swizzle, param.arg, param.written) == (options["swizzle"], 0, False)
    assert (tiled[0].box, tiled[0].written) == ((options["pixels"], channels), True)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_traversal_model_gives_numpys_im2col(case):
    """Each block's coordinates and offsets (as the builder computes them), through the
    model of the hardware's traversal, give the block's tile of numpy's im2col matrix."""
    conv, options = setup(case)
    dtype = case[5]
    param = Im2colMapParam(
        0, (options["pixels"], options["channels"] or conv.shape[3]), 16, "zeros",
        "FLOAT32", False, conv.lower, conv.upper, (1, *conv.stride, 1),
    )  # fmt: skip
    rng = np.random.default_rng(0)
    x = rng.standard_normal(conv.shape).astype(np.float16 if dtype == "f16" else np.float32)
    want = im2col(x, conv)
    rows = want.shape[0]
    (p_out, q_out), (_, s_k) = conv.output, conv.filter
    grid = kernels.im2col_grid(conv, param.pixels, options["channels"])
    for i in range(grid[0]):
        first = i * param.pixels
        n, rest = divmod(first, p_out * q_out)
        p, q = divmod(rest, q_out)
        base = (p * conv.stride[0] - conv.padding[0], q * conv.stride[1] - conv.padding[1])
        for t in range(grid[1]):
            r, s = divmod(t, s_k)
            offsets = (r * conv.dilation[0], s * conv.dilation[1])
            for j in range(grid[2]):
                c0 = j * param.channels
                tile = tma_im2col(x, (n, *base, c0), offsets, param)
                col = t * conv.shape[3] + c0
                expected = want[first : first + param.pixels, col : col + param.channels]
                assert np.array_equal(tile[: min(param.pixels, rows - first)], expected)


def test_l2_policy_reaches_the_im2col_instruction():
    conv = kernels.conv2d((2, 9, 7, 16), 3, padding=1)
    module = kernels.im2col_gather(conv, "f16", cache_hint="evict_last")
    ptx = compile_module(module, make_context(), "sm_90a").ptx
    assert compile_module(module, make_context(), "sm_90a").cubin
    (line,) = [row for row in ptx.splitlines() if ".im2col." in row]
    assert ".im2col.mbarrier::complete_tx::bytes.L2::cache_hint" in line
    assert f"{L2_POLICY_ENCODING[L2Policy.EVICT_LAST]};" in ptx


def test_abi_carries_the_im2col_parameters():
    param = Im2colMapParam(
        0, (64, 16), 16, "zeros", "FLOAT16", False, (-1, -2), (-3, -4), (1, 2, 1, 1)
    )
    abi = ModuleAbi("sm_90a", {"k": KernelAbi("k", (param,), 0, (1, 1, 1))})
    text = abi.to_json()
    entry = json.loads(text)["kernels"]["k"]["params"][0]
    assert entry["kind"] == "im2col_map"
    assert (entry["lower"], entry["upper"], entry["element_strides"]) == (
        [-1, -2], [-3, -4], [1, 2, 1, 1],
    )  # fmt: skip
    (back,) = ModuleAbi.from_json(text).kernels["k"].tensor_maps
    assert back == param
    assert isinstance(back, Im2colMapParam)
    assert (back.pixels, back.channels, back.rank) == (64, 16, 4)


def test_compiled_kernel_records_its_im2col_map():
    conv = kernels.conv2d((2, 9, 7, 16), 3, stride=2, padding=1, dilation=2)
    param = im2col_map(conv, "f16", {"pixels": 32})
    assert param == Im2colMapParam(
        0, (32, 16), 16, "zeros", "FLOAT16", False, (-1, -1), (-3, -3), (1, 2, 2, 1)
    )


def test_encoder_is_called_with_the_im2col_parameters(monkeypatch):
    from cuda.bindings import driver

    calls: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(tensor_map, "call", lambda name, *args: calls.append((name, args)))
    param = Im2colMapParam(
        0, (64, 16), 128, "zeros", "FLOAT16", False, (-1, -2), (-3, -4), (1, 2, 3, 1)
    )
    shape = (2, 9, 7, 16)
    strides = (9 * 7 * 16 * 2, 7 * 16 * 2, 16 * 2, 2)
    array = DeviceArray(0x10000, shape, strides, "float16", 2)
    tensor_map.check_tensor_map_array(array, param, "x")
    tensor_map.encode(array, param)
    ((name, args),) = calls
    assert name == "cuTensorMapEncodeIm2col"
    dtype, rank, pointer, dims, gstrides, lower, upper, channels, pixels, elem = args[:10]
    interleave, swizzle, _, oob = args[10:]
    assert dtype == driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    assert (rank, pointer) == (4, 0x10000)
    assert [int(d) for d in dims] == [16, 7, 9, 2]
    assert [int(s) for s in gstrides] == [32, 7 * 32, 9 * 7 * 32]
    assert (lower, upper) == ([-2, -1], [-4, -3])
    assert (channels, pixels) == (16, 64)
    assert [int(s) for s in elem] == [1, 3, 2, 1]
    assert interleave == driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE
    assert swizzle == driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B
    assert oob == driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE


def test_im2col_map_checks_the_arrays_rank():
    param = Im2colMapParam(0, (64, 16), 16, "zeros", "FLOAT32", False, (0,), (0,), (1, 1, 1))
    array = DeviceArray(0x10000, (4, 16), (64, 4), "float32", 4)
    with pytest.raises(ValueError, match=r"expected x of rank 3 for its tensor map"):
        tensor_map.check_tensor_map_array(array, param, "x")


def random_im2col_module(rng: random.Random) -> ModuleOp:
    """A one-load kernel: each choice keeps a valid default with probability 0.8, so that
    some modules verify and the rest break one or two rules (of im2col or shared)."""

    def pick(default, *others):
        return default if rng.random() < 0.8 else rng.choice(others)

    elt = pick(rng.choice([f16, f32, bf16]), i8, f64, IntegerType(4))
    rank = pick(rng.choice([3, 4, 5]), 2, 6)
    spatial = max(rank - 2, 0)
    shape = [pick(2, 1, 3)] + [pick(9, 1, 4, 33) for _ in range(spatial)] + [pick(16, 8, 64, 12)]
    shape = shape[:rank] if rank >= 2 else shape[-rank:]
    box = [pick(64, 1, 128, 1024, 2048), pick(16, 8, 12, 64, 512)][: pick(2, 1, 3)]
    if len(box) == 3:
        box = [2, *box]
    swizzle = pick(16, 32, 64, 128)
    smem_type = MemRefType(elt, box, memory_space=copy.SmemSpaceAttr(swizzle))
    gmem_type = MemRefType(elt, shape)
    block = Block(arg_types=[gmem_type])
    b = Builder(InsertPoint.at_end(block))

    def index(value: int):
        return b.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).result

    def offset(value: int):
        return b.insert(arith.ConstantOp.from_int_and_width(value, i16)).result

    buf = b.insert(copy.AllocSmemOp(smem_type)).result
    bars = b.insert(copy.BarrierInitOp(1)).result
    coords = [index(pick(0, -1, 1, 8)) for _ in range(rank + pick(0, 1, -1))]
    offsets = [offset(pick(1, 0, 31, 200, -1)) for _ in range(spatial + pick(0, 1, -1))]
    n = spatial + pick(0, 1, -1)
    load = copy.Im2colLoadOp(
        block.args[0],
        buf,
        coordinates=coords,
        offsets=offsets,
        barrier=bars,
        barrier_index=index(0),
        lower=[pick(-1, 0, -16, -17, -200) for _ in range(max(n, 0))],
        upper=[pick(-1, 0, 15, -9, -40) for _ in range(max(spatial + pick(0, 1), 0))],
        strides=pick(None, [pick(2, 1, 8, 9, 0) for _ in range(max(spatial + pick(0, 1), 0))]),
        dst_indices=[index(0)] if len(box) == 3 else [],
    )
    b.insert(load)
    parity = b.insert(arith.ConstantOp.from_int_and_width(0, 1)).result
    b.insert(copy.BarrierWaitOp(bars, index(0), parity))
    b.insert(func.ReturnOp())
    fn = func.FuncOp("k", FunctionType.from_lists([gmem_type], []), Region(block))
    fn.attributes["gpu.kernel"] = UnitAttr()
    fn.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, [128, 1, 1])
    module = ModuleOp([fn])
    module.attributes["copy.target"] = copy.TargetAttr(pick("sm_90a", "sm_100a", "sm_80"))
    return module


@pytest.mark.parametrize("seed", range(4))
def test_random_im2col_loads_verify_or_explain(seed):
    """Every configuration verifies, or fails with a CopyVerifyException that has a note
    (never another exception); what verifies round-trips and compiles to a cubin."""
    ctx = make_context()
    rng = random.Random(seed)
    verified = rejected = 0
    for _ in range(60):
        module = random_im2col_module(rng)
        try:
            verify_module(module)
        except CopyVerifyException as err:
            missing_note = None if err.note else str(err)
            rejected += 1
            assert missing_note is None, f"error without a fix note: {missing_note}"
            continue
        verified += 1
        text = str(module)
        assert str(Parser(ctx, text).parse_module()) == text
        if verified <= 3:
            assert compile_module(module, ctx).cubin.startswith(b"\x7fELF")
    assert verified >= 3
    assert rejected >= 10
