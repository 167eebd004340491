"""im2col loads (`copy.im2col_load`) under the interpreter, against a numpy model of the
PTX ISA's im2col mode that walks the bounding box pixel by pixel: ranks 3 to 5, odd sizes,
padding (negative lower corners), upper corners, traversal strides, im2col offsets, a walk
that wraps into the next image and past the last one, channels past the array's, every
swizzle the op allows, the cp.async gather (`impl cp_async`), a load that leaves its
arrival to the kernel (`arrive = false`), and the protocol rules the load takes part in."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.verify import verify_module
from copy_tools.universe import make_context

DTYPES = {"f16": np.float16, "f32": np.float32}


def reference(x, coords, offsets, lower, upper, strides, pixels, channels):
    """The PTX ISA's im2col mode, one pixel at a time: `pixels` filter bases from `coords`
    on, the innermost spatial dim fastest, each `strides` apart; a dim that reaches `extent +
    upper` restarts at `lower` and steps the next dim out (the outermost steps the image).
    Each pixel's channels `[c, c + channels)` are read at base + offsets, zeros outside."""
    n, *base, c = coords
    spatial = x.shape[1:-1]
    tile = np.zeros((pixels, channels), x.dtype)
    for row in range(pixels):
        at = [b + o for b, o in zip(base, offsets, strict=True)]
        if 0 <= n < x.shape[0] and all(0 <= a < s for a, s in zip(at, spatial, strict=True)):
            for k in range(channels):
                if 0 <= c + k < x.shape[-1]:
                    tile[row, k] = x[(n, *at, c + k)]
        d = len(spatial) - 1
        base[d] += strides[d]
        while base[d] >= spatial[d] + upper[d]:
            base[d] = lower[d]
            if d == 0:
                n += 1
                break
            d -= 1
            base[d] += strides[d]
    return tile


KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%x: {xt}, %y: {yt}, {args})
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
{casts}
    %tile = copy.alloc_smem : {tt}
    %bar = copy.barrier_init arrivals {arrivals} : !copy.barrier<1>
{body}
    func.return
  }}
}}
"""

LOAD = (
    "    copy.im2col_load %x[{coords}] offsets [{offsets}] to %tile barrier %bar[%c0]{impl} "
    "{{{props}}} : {xt} to {tt}, !copy.barrier<1>\n"
)
WAIT = "    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>\n"
STORE = (
    "    copy.async_copy %tile to %y[%c0, %c0] : {tt} to {yt}\n"
    "    copy.commit_group bulk\n"
    "    copy.wait_group bulk 0\n"
)


def source(case, body=None, arrivals=None, impl=None, arrive=True):
    shape, dtype, (pixels, channels), swizzle, lower, upper, strides = case[:7]
    elt = dtype
    rank = len(shape)
    xt = f"memref<{'x'.join(map(str, shape))}x{elt}>"
    yt = f"memref<{pixels}x{channels}x{elt}>"
    smem = "#copy.smem" if swizzle == 16 else f"#copy.smem<swizzle = {swizzle}>"
    tt = f"memref<{pixels}x{channels}x{elt}, {smem}>"
    names = [f"%a{i}" for i in range(rank)]
    offs = [f"%o{i}" for i in range(rank - 2)]
    args = ", ".join(f"{v}: index" for v in names + offs)
    casts = "\n".join(
        f"    %i{i} = arith.index_cast {v} : index to i16" for i, v in enumerate(offs)
    )
    props = f"lower = array<i64: {', '.join(map(str, lower))}>, "
    props += f"upper = array<i64: {', '.join(map(str, upper))}>, "
    props += f"strides = array<i64: {', '.join(map(str, strides))}>"
    if not arrive:
        props += ", arrive = false"
    fields = dict(xt=xt, yt=yt, tt=tt)
    load = LOAD.format(
        coords=", ".join(names),
        offsets=", ".join(f"%i{i}" for i in range(rank - 2)),
        impl=f" impl {impl}" if impl else "",
        props=props,
        **fields,
    )
    text = body or "{load}" + WAIT + STORE
    for key, value in fields.items():
        text = text.replace("{" + key + "}", value)
    text = text.replace("{load}", load)
    return KERNEL.format(
        args=args,
        casts=casts,
        arrivals=arrivals or (64 if impl == "cp_async" else 1),
        body=text,
        **fields,
    )


def parse(text, verify=True):
    module = Parser(make_context(), text).parse_module()
    if verify:  # (the broken kernels' mismatched bytes are also a kernel rule's error)
        verify_module(module, protocol=False)
    return module


def inputs(case):
    shape, dtype = case[:2]
    rng = np.random.default_rng(len(shape) * 1000 + sum(shape))
    x = (rng.standard_normal(shape) * 100).astype(DTYPES[dtype])
    pixels, channels = case[2]
    y = np.full((pixels, channels), -7, x.dtype)  # NaN-free sentinel: every element is written
    return x, y


def expected(case, x):
    _, _, (pixels, channels), _, lower, upper, strides, coords, offsets = case
    return reference(x, coords, offsets, lower, upper, strides, pixels, channels)


def bits(a):
    return a.view({2: np.uint16, 4: np.uint32}[a.itemsize])


# (shape, dtype, (pixels, channels), swizzle, lower, upper, strides, coordinates, offsets)
CASES = {
    # NHWC, padding 1, a 3 x 3 filter's tap (1, 2): the walk wraps rows and into image 1.
    "nhwc-pad": (
        (2, 7, 5, 8),
        "f32",
        (32, 8),
        16,
        (-1, -1),
        (-1, -1),
        (1, 1),
        (0, -1, -1, 0),
        (1, 2),
    ),
    # Odd sizes, stride 2 and 3, an upper corner past the extent, the walk from mid-box.
    "nhwc-strides": (
        (3, 9, 11, 16),
        "f16",
        (64, 16),
        16,
        (-2, -1),
        (1, 0),
        (2, 3),
        (1, 3, 4, 0),
        (0, 3),
    ),
    # The walk runs past the last image (zeros) and starts beyond the box's end.
    "past-the-last-image": (
        (1, 5, 5, 8),
        "f32",
        (64, 8),
        16,
        (0, 0),
        (-2, -2),
        (1, 1),
        (0, 2, 4, 0),
        (2, 2),
    ),
    # Channels past the array's end (a channel block from c = 4 of 8): zeros there.
    "channels-past-the-end": (
        (2, 3, 5, 8),
        "f32",
        (16, 8),
        16,
        (-1, -1),
        (0, 0),
        (1, 1),
        (0, -1, -1, 4),
        (0, 1),
    ),
    # NWC (rank 3), 16-bit corners, a large lower corner.
    "nwc": ((3, 37, 8), "f16", (48, 8), 16, (-5,), (-3,), (2,), (0, -5, 0), (4,)),
    # NDHWC (rank 5), corners in [-16, 15], offsets below 32.
    "ndhwc": (
        (2, 3, 5, 4, 8),
        "f32",
        (40, 8),
        16,
        (-1, -1, -1),
        (-1, 0, -1),
        (1, 2, 1),
        (0, -1, -1, -1, 0),
        (2, 1, 1),
    ),  # fmt: skip
    # Every swizzle the op allows, each with rows as wide as its span.
    "swizzle-32": (
        (2, 6, 7, 16),
        "f16",
        (32, 16),
        32,
        (-1, -1),
        (-1, -1),
        (1, 1),
        (0, -1, -1, 0),
        (1, 1),
    ),
    "swizzle-64": (
        (2, 6, 7, 16),
        "f32",
        (64, 16),
        64,
        (-1, -1),
        (-1, -1),
        (1, 2),
        (0, -1, -1, 0),
        (2, 0),
    ),
    "swizzle-128": (
        (1, 9, 7, 64),
        "f16",
        (64, 64),
        128,
        (-2, -2),
        (-2, -2),
        (2, 2),
        (0, -2, -2, 0),
        (2, 2),
    ),
    "swizzle-128-f32": (
        (2, 5, 7, 64),
        "f32",
        (32, 32),
        128,
        (-1, -1),
        (-1, -1),
        (1, 1),
        (1, 0, 2, 32),
        (0, 2),
    ),
}


def run(text, case, verify=True, **options):
    x, y = inputs(case)
    rank = len(case[0])
    scalars = [*case[7], *case[8]]
    assert len(scalars) == 2 * rank - 2
    return x, interpreter.run(parse(text, verify), x, y, *scalars, **options)


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_im2col_load_gives_the_ptx_traversal(name):
    case = CASES[name]
    for schedule in ("random", "adversarial", "round_robin"):
        x, r = run(source(case), case, schedule=schedule)
        assert r.violations == [], [str(v) for v in r.violations]
        assert np.array_equal(bits(r.arrays[1]), bits(expected(case, x))), schedule


def test_the_model_gives_numpys_im2col_of_a_convolution():
    """The reference model, fed a convolution's corners and taps, is numpy's im2col."""
    x = np.random.default_rng(3).standard_normal((2, 6, 5, 4)).astype(np.float32)
    pad, k, stride = 1, 3, 2
    p = (6 + 2 * pad - k) // stride + 1
    q = (5 + 2 * pad - k) // stride + 1
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    lower = (-pad, -pad)
    upper = (pad - (k - 1), pad - (k - 1))
    for r in range(k):
        for s in range(k):
            tile = reference(x, (0, -pad, -pad, 0), (r, s), lower, upper, (stride, stride),
                             2 * p * q, 4)  # fmt: skip
            want = padded[:, r : r + stride * p : stride, s : s + stride * q : stride]
            assert np.array_equal(tile, want[:, :p, :q].reshape(-1, 4)), (r, s)


@pytest.mark.parametrize("name", ["nhwc-pad", "nhwc-strides", "channels-past-the-end", "ndhwc"])
def test_the_cp_async_gather_gives_the_same_pixels(name):
    """`impl cp_async` (copy-legalize's form before sm_90): every thread arrives once."""
    case = CASES[name]
    for seed in range(3):
        x, r = run(source(case, impl="cp_async"), case, seed=seed)
        assert r.violations == [], [str(v) for v in r.violations]
        assert np.array_equal(bits(r.arrays[1]), bits(expected(case, x)))


def box_bytes(case):
    pixels, channels = case[2]
    return pixels * channels * np.dtype(DTYPES[case[1]]).itemsize


def expect(nbytes):
    return f"    copy.barrier_arrive_expect_tx %bar[%c0], {nbytes} : !copy.barrier<1>\n"


def test_arrive_false_leaves_the_arrival_to_the_kernel():
    case = CASES["nhwc-pad"]
    body = expect(box_bytes(case)) + "{load}" + WAIT + STORE
    x, r = run(source(case, body, arrive=False), case)
    assert r.violations == [], [str(v) for v in r.violations]
    assert np.array_equal(bits(r.arrays[1]), bits(expected(case, x)))


def rules(text, case, seeds=range(2)):
    found = set()
    for seed in seeds:
        for schedule in ("random", "adversarial"):
            _, r = run(text, case, False, schedule=schedule, seed=seed)
            found |= {v.rule for v in r.violations}
    return found


def test_the_box_bytes_complete_the_phase():
    """The load's bytes are the whole box's, padding zeros included: an arrival that
    expects fewer gets too many (P5), one that expects more never completes (P6)."""
    case = CASES["channels-past-the-end"]
    for nbytes, rule in ((box_bytes(case) // 2, "P5"), (box_bytes(case) + 16, "P6")):
        body = expect(nbytes) + "{load}" + WAIT + STORE
        assert rule in rules(source(case, body, arrive=False), case), nbytes


def test_a_read_before_the_wait_races_with_the_load():
    case = CASES["nhwc-pad"]
    read = "    %v = memref.load %tile[%c0, %c0] : {tt}\n"
    assert "P1" in rules(source(case, "{load}" + read + WAIT + STORE), case)


THREAD_COPY = """    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %rows = arith.constant {pixels} : index
    %cols = arith.constant {channels} : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    scf.for %r = %t to %rows step %c64 {
      scf.for %k = %c0 to %cols step %c1 {
        %v = memref.load %tile[%r, %k] : {tt}
        memref.store %v, %y[%r, %k] : {yt}
      }
    }
"""


@pytest.mark.parametrize("name", ["swizzle-32", "swizzle-64", "swizzle-128", "swizzle-128-f32"])
def test_threads_read_the_swizzled_box_where_the_layout_puts_it(name):
    """The threads' loads address the swizzled buffer by `layout.element_offset`, the TMA
    unit's writes by the swizzled linear offset: they must agree element by element."""
    case = CASES[name]
    pixels, channels = case[2]
    copy_out = THREAD_COPY.replace("{pixels}", str(pixels)).replace("{channels}", str(channels))
    x, r = run(source(case, "{load}" + WAIT + copy_out), case)
    assert r.violations == [], [str(v) for v in r.violations]
    assert np.array_equal(bits(r.arrays[1]), bits(expected(case, x)))
