"""`kernels.broadcast_row_dot`'s sums computed by numpy in the kernel's own order, so that a
GPU run can be compared bit for bit: lane l of a warp multiplies columns l, l + 32, ... of
the tile row by v in float32 (bf16 and f16 widened first) and adds the products in that
order starting from 0, then a butterfly (xor 16, 8, 4, 2, 1) adds the lanes' sums and lane
0's is stored. The PTX's `mul.rn.f32` and `add.rn.f32` round each step as numpy's float32
does (no fused multiply-add: `.rn` forbids the contraction)."""

from __future__ import annotations

from math import ceil

import numpy as np

WARP = 32


def row_dot_in_kernel_order(x: np.ndarray, v: np.ndarray, tile_columns: int) -> np.ndarray:
    """y (C, T, M) float32 for x (M, N) and v (C, N), T = ceil(N / tile_columns)."""
    m, n = x.shape
    c = v.shape[0]
    t = ceil(n / tile_columns)
    per_lane = tile_columns // WARP
    xp = np.zeros((m, t * tile_columns), np.float32)
    xp[:, :n] = x.astype(np.float32)
    vp = np.zeros((c, t * tile_columns), np.float32)
    vp[:, :n] = v.astype(np.float32)
    # Column k * 32 + l of a tile is lane l's k-th.
    xs = xp.reshape(1, m, t, per_lane, WARP)
    vs = vp.reshape(c, 1, t, per_lane, WARP)
    acc = np.zeros((c, m, t, WARP), np.float32)
    for k in range(per_lane):
        acc = acc + xs[:, :, :, k, :] * vs[:, :, :, k, :]
    lanes = np.arange(WARP)
    for offset in (16, 8, 4, 2, 1):
        acc = acc + acc[..., lanes ^ offset]
    return np.ascontiguousarray(acc[..., 0].transpose(0, 2, 1))


def row_dot_bound(x: np.ndarray, v: np.ndarray, tile_columns: int) -> np.ndarray:
    """The documented bound on |y - exact|: (tile_columns / 32 + 6) * 2**-24 * the sum of
    |x[i, j] v[r, j]| over the tile's columns, (C, T, M)."""
    m, n = x.shape
    c = v.shape[0]
    t = ceil(n / tile_columns)
    xp = np.zeros((m, t * tile_columns))
    xp[:, :n] = np.abs(x.astype(np.float64))
    vp = np.zeros((c, t * tile_columns))
    vp[:, :n] = np.abs(v.astype(np.float64))
    sums = np.einsum("itj,rtj->rti", xp.reshape(m, t, -1), vp.reshape(c, t, -1))
    return sums * (tile_columns // WARP + 6) * 2.0**-24


def row_dot_exact(x: np.ndarray, v: np.ndarray, tile_columns: int) -> np.ndarray:
    """The float64 sums, (C, T, M)."""
    m, n = x.shape
    c = v.shape[0]
    t = ceil(n / tile_columns)
    xp = np.zeros((m, t * tile_columns))
    xp[:, :n] = x.astype(np.float64)
    vp = np.zeros((c, t * tile_columns))
    vp[:, :n] = v.astype(np.float64)
    return np.einsum("itj,rtj->rti", xp.reshape(m, t, -1), vp.reshape(c, t, -1))
