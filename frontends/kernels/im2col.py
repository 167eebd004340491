"""im2col, the A operand of an implicit-GEMM convolution: `Conv2d` (made by `conv2d`) is a
2-D convolution over an NHWC input as TMA's im2col mode sees it, and `im2col_gather`
gathers its im2col matrix with `copy.im2col_load`, one block per pixel tile, filter tap and
channel block (`im2col_grid`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil

from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType, ModuleOp, i16

from copy_dialect import ops as copy
from frontends.dsl import Value, block_id, boolean, emit, index, kernel, result
from frontends.kernels.checks import checked
from frontends.kernels.common import TMA_BLOCK, _smem, element_type
from frontends.kernels.parts import drain_bulk


def _pair(value: int | Sequence[int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (value[0], value[1])


@dataclass(frozen=True)
class Conv2d:
    """A 2-D convolution over an NHWC input (`shape`), as im2col sees it: the output's
    spatial size, the im2col matrix `[N*P*Q, R*S*C]` (row (n, p, q), column (r, s, c)) and the
    im2col map's bounding box. With TMA im2col, padding is the box's corners (lower =
    -padding, and the upper corner ends the box after the last filter base) and dilation
    the offsets (tap (r, s) reads at base + (r, s) * dilation); the stride is the traversal
    stride."""

    shape: tuple[int, int, int, int]
    filter: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]

    @property
    def output(self) -> tuple[int, int]:
        """(P, Q): the filter bases along H and W."""
        return tuple(  # type: ignore[return-value]
            (size + 2 * pad - dil * (k - 1) - 1) // st + 1
            for size, k, st, pad, dil in zip(
                self.shape[1:3], self.filter, self.stride, self.padding, self.dilation,
                strict=True,
            )
        )  # fmt: skip

    @property
    def matrix(self) -> tuple[int, int]:
        """The im2col matrix: N*P*Q rows, R*S*C columns."""
        (n, _, _, c), (p, q), (r, s) = self.shape, self.output, self.filter
        return n * p * q, r * s * c

    @property
    def lower(self) -> tuple[int, int]:
        """The box's lower corner: the first filter base, -padding."""
        return (-self.padding[0], -self.padding[1])

    @property
    def upper(self) -> tuple[int, int]:
        """The box's upper corner, relative to the extent: the box [lower, extent + upper)
        ends one element after the last filter base, (out - 1) * stride - padding."""
        return tuple(  # type: ignore[return-value]
            (out - 1) * st + 1 - size - pad
            for out, st, size, pad in zip(
                self.output, self.stride, self.shape[1:3], self.padding, strict=True
            )
        )


@checked(shape=4)
def conv2d(
    shape: Sequence[int],
    filter: int | Sequence[int],
    *,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
) -> Conv2d:
    """The `Conv2d` of an NHWC input of `shape` and an R x S `filter`; the filter, `stride`,
    `padding` and `dilation` are an int (the same along H and W) or a pair (H, W)."""
    n, h, w, c = shape
    return Conv2d((n, h, w, c), _pair(filter), _pair(stride), _pair(padding), _pair(dilation))


@checked()
def im2col_grid(conv: Conv2d, pixels: int = 64, channels: int | None = None) -> tuple[int, ...]:
    """Blocks of `im2col_gather`: (pixel tiles, filter taps, channel blocks)."""
    block = conv.shape[3] if channels is None else channels
    return (ceil(conv.matrix[0] / pixels), conv.filter[0] * conv.filter[1], conv.shape[3] // block)


@checked()
def im2col_gather(
    conv: Conv2d,
    dtype: str,
    *,
    pixels: int = 64,
    channels: int | None = None,
    swizzle: int = 16,
    cache_hint: str | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = im2col(x)` for `conv` over the NHWC array x: y is the `[N*P*Q, R*S*C]` matrix of
    an implicit GEMM. Block (i, t, j) loads `pixels` rows from row i * pixels on, for filter
    tap t = r * S + s and channels [j * channels, (j + 1) * channels) (all C by default), with
    one `copy.im2col_load` (the first row's filter base as coordinates, the tap times the
    dilation as offsets), waits on its barrier and stores the tile with TMA (clipped at the
    last row). `cache_hint` is the loads' L2 cache policy (`"evict_last"`: every tap reads
    the input again)."""
    n, h, w, c = conv.shape
    block = c if channels is None else channels
    (_, q), (_, s) = conv.output, conv.filter
    rows, cols = conv.matrix
    elt = element_type(dtype)
    gmem = MemRefType(elt, [n, h, w, c])
    out = MemRefType(elt, [rows, cols])
    smem = _smem(elt, [pixels, block], swizzle)
    p_q = conv.output[0] * q

    def tap_offset(tap: Value, dilation: int) -> Value:
        return result(arith.IndexCastOp, tap * dilation, i16)

    def body(x: Value, y: Value) -> None:
        c0, phase = index(0), boolean(False)
        first = block_id("x") * pixels
        tap = block_id("y")
        channel = block_id("z") * block
        # Row `first` is output pixel (image, p, q); its filter base is (p, q) * stride - pad.
        image, rest = first // p_q, first % p_q
        at = (rest // q, rest % q)
        base = [at[d] * conv.stride[d] - conv.padding[d] for d in (0, 1)]
        offsets = [
            tap_offset(tap // s, conv.dilation[0]),
            tap_offset(tap % s, conv.dilation[1]),
        ]
        buf = result(copy.AllocSmemOp, smem)
        bar = result(copy.BarrierInitOp, 1)
        emit(copy.Im2colLoadOp, x, buf, coordinates=[image, *base, channel], offsets=offsets,
             barrier=bar, barrier_index=c0, lower=conv.lower, upper=conv.upper,
             strides=conv.stride, l2=cache_hint)  # fmt: skip
        emit(copy.BarrierWaitOp, bar, c0, phase)
        column = tap * c + channel
        emit(copy.AsyncCopyOp, buf, y, dst_indices=[first, column])
        drain_bulk()

    return kernel("im2col_gather", [gmem, out], body, target=target, block=TMA_BLOCK)
