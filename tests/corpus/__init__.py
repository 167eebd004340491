"""The corpus: the data movement of the kernels people ship, one kernel per `.mlir` file of
this folder, each written as a kernel author writes it (issue N). Each file's header says
what real kernel it models and its protocol.

`KERNELS` gives, per file, what the tests need to run it under the interpreter: the kinds
of kernel it stands for, small arguments, the grid, how many clusters to run, and the numpy
model of what it writes. The kernels written before the dialect had wgmma stand in for
their consumers' math: they read their SMEM slots with memref loads (one element of each
16-byte unit of a row: the column 8q + t mod 8 for thread t) and sum what they read; the
models below compute the same sums (the inputs are small integers, so f32 sums are exact in
any order). `gemm_wgmma` does the math: wgmma on the slots' descriptors, A B^T.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

KINDS = (
    "cooperative GEMM",
    "pingpong GEMM",
    "FA3 K/V ring",
    "persistent grid-stride",
    "persistent scf.while",
    "dynamic K",
    "split-K reduce",
    "cluster-2 multicast",
    "cluster-4 multicast",
    "2-CTA leader-tracked",
    "DSMEM ring",
)
"""The kinds of kernel issue N's corpus must cover."""


@dataclass(frozen=True)
class Kernel:
    """A corpus kernel: its file, the kinds it covers, and how to run it interpreted.

    `arguments(rng)` gives the kernel's arguments (numpy arrays and scalars) at a small size;
    `grid` the launch; `clusters` how many clusters of the grid to run (None: all);
    `expected(arguments)` maps an argument's index to the array the kernel leaves there;
    `slow`: the interpreter takes more than about a second a run."""

    name: str
    kinds: tuple[str, ...]
    arguments: Callable[[np.random.Generator], list]
    grid: tuple[int, ...]
    expected: Callable[[list], dict[int, np.ndarray]]
    clusters: int | None = None
    slow: bool = False

    @property
    def path(self) -> Path:
        return HERE / f"{self.name}.mlir"

    def text(self) -> str:
        return self.path.read_text()


def small_ints(rng: np.random.Generator, shape: tuple[int, ...], dtype=np.float16) -> np.ndarray:
    """Integers in [-4, 4] as `dtype`: every sum the kernels make is exact in f32."""
    return rng.integers(-4, 5, size=shape).astype(dtype)


# --- the models ---------------------------------------------------------------------------


def lane_sums(x: np.ndarray, rows: slice, lanes: np.ndarray, first: int, width: int) -> np.ndarray:
    """Per row of `x[rows]` (one per thread), the f32 sum over every 64-wide k-block of the
    elements the thread reads: columns first + 8q + lane for 8q < width, where `lanes` gives
    each row's thread's t mod 8."""
    block = x[rows].astype(np.float32)
    blocks = block.reshape(block.shape[0], -1, 64)  # (rows, k-blocks, 64)
    cols = first + np.arange(0, width, 8)[None, :] + lanes[:, None]  # (rows, width / 8)
    picked = np.take_along_axis(blocks, cols[:, None, :].repeat(blocks.shape[1], 1), axis=2)
    return picked.sum(axis=(1, 2))


def half_row_sums(x: np.ndarray, rows: np.ndarray, width: int) -> np.ndarray:
    """Thread t's sum over the k-blocks of row `rows[t]`, columns width (t mod 2) + 8q +
    t mod 8 for 8q < width: the threads of a warpgroup two to a row, each half of it."""
    t = np.arange(len(rows))
    picked = x[rows].astype(np.float32).reshape(len(rows), -1, 64)
    cols = width * (t[:, None] % 2) + np.arange(0, width, 8)[None, :] + t[:, None] % 8
    return np.take_along_axis(picked, cols[:, None, :].repeat(picked.shape[1], 1), 2).sum((1, 2))


def gemm_rows(a: np.ndarray, b: np.ndarray, m0: int, n0: int, w: int) -> np.ndarray:
    """The 64 x 128 rows of C consumer warpgroup w of the cooperative GEMM writes: thread t
    reads A row m0 + 64w + t / 2, columns 32 (t mod 2) + 8q + t mod 8, and B row n0 + t,
    columns 8q + t mod 8; its sum fills columns 64 (t mod 2) .. + 64 of its row."""
    t = np.arange(128)
    rows = m0 + 64 * w + t // 2
    sa = half_row_sums(a, rows, 32)
    sb = lane_sums(b, slice(n0, n0 + 128), t % 8, 0, 64)
    return np.repeat((sa + sb).reshape(64, 2), 64, axis=1)


def gemm_tile(a: np.ndarray, b: np.ndarray, m0: int, n0: int) -> np.ndarray:
    """A 128x128 tile of the cooperative GEMM: two warpgroups of 64 rows."""
    return np.concatenate([gemm_rows(a, b, m0, n0, w) for w in range(2)])


def gemm_expected(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, tiles: list[tuple[int, int]]
) -> np.ndarray:
    """C with the 128x128 tiles (tile row, tile column) written."""
    out = c.copy()
    for tm, tn in tiles:
        out[128 * tm : 128 * tm + 128, 128 * tn : 128 * tn + 128] = gemm_tile(
            a, b, 128 * tm, 128 * tn
        )
    return out


# --- the kernels --------------------------------------------------------------------------


def _gemm_cooperative_args(rng):
    return [
        small_ints(rng, (1024, 512)),
        small_ints(rng, (1024, 512)),
        np.zeros((1024, 1024), np.float32),
    ]


KERNELS: tuple[Kernel, ...] = (
    Kernel(
        "gemm_cooperative",
        ("cooperative GEMM",),
        _gemm_cooperative_args,
        grid=(8, 8),
        clusters=2,
        expected=lambda a: {2: gemm_expected(a[0], a[1], a[2], [(0, 0), (0, 1)])},
    ),
)


def whole_row_tile(a: np.ndarray, b: np.ndarray, m0: int, n0: int) -> np.ndarray:
    """A 128x128 tile of C when one warpgroup computes it: thread t reads A row m0 + t and B
    row n0 + t, columns 8q + t mod 8 of each k-block; its sum fills row t."""
    t = np.arange(128)
    acc = lane_sums(a, slice(m0, m0 + 128), t % 8, 0, 64)
    acc += lane_sums(b, slice(n0, n0 + 128), t % 8, 0, 64)
    return np.repeat(acc[:, None], 128, axis=1)


def tiles_expected(a, b, c, tile_fn) -> np.ndarray:
    """C with every 128x128 tile written by `tile_fn(a, b, m0, n0)`."""
    out = c.copy()
    for m0 in range(0, c.shape[0], 128):
        for n0 in range(0, c.shape[1], 128):
            out[m0 : m0 + 128, n0 : n0 + 128] = tile_fn(a, b, m0, n0)
    return out


def _gemm_args(m: int, n: int, k: int):
    def make(rng):
        return [small_ints(rng, (m, k)), small_ints(rng, (n, k)), np.zeros((m, n), np.float32)]

    return make


KERNELS += (
    Kernel(
        "gemm_pingpong",
        ("pingpong GEMM", "persistent grid-stride"),
        _gemm_args(256, 256, 512),
        grid=(1,),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
        slow=True,
    ),
)


def fa3_expected(q, k, v, o, heads: int) -> np.ndarray:
    """O of the FA3 stand-in: thread t of consumer warpgroup w reads Q row 64w + t / 2,
    columns 32 (t mod 2) + 8q + t mod 8, and K row t and V row t of every key block, columns
    8q + t mod 8; its sum fills columns 32 (t mod 2) .. + 32 of its row."""
    out = o.copy()
    sq, sk = q.shape[0] // heads, k.shape[0] // heads
    t = np.arange(128)
    for h in range(heads):
        # K and V rows of every key block of the head, as 64-wide "k-blocks" of thread t.
        kv = np.zeros(128, np.float32)
        for x in (k, v):
            rows = x[h * sk : (h + 1) * sk].reshape(sk // 128, 128, 64).transpose(1, 0, 2)
            kv += lane_sums(rows.reshape(128, -1), slice(0, 128), t % 8, 0, 64)
        for mb in range(sq // 128):
            q0 = h * sq + mb * 128
            for w in range(2):
                rows = q0 + 64 * w + t // 2
                acc = (half_row_sums(q, rows, 32) + kv).reshape(64, 2)
                out[q0 + 64 * w : q0 + 64 * w + 64] = np.repeat(acc, 32, axis=1)
    return out


def _fa3_args(rng):
    heads, sq, sk = 2, 128, 384
    return [
        small_ints(rng, (heads * sq, 64)),
        small_ints(rng, (heads * sk, 64)),
        small_ints(rng, (heads * sk, 64)),
        np.zeros((heads * sq, 64), np.float32),
    ]


KERNELS += (
    Kernel(
        "fa3_kv_ring",
        ("FA3 K/V ring",),
        _fa3_args,
        grid=(1, 2),
        expected=lambda a: {3: fa3_expected(*a, heads=2)},
    ),
)


KERNELS += (
    Kernel(
        "gemm_persistent",
        ("persistent grid-stride",),
        _gemm_args(256, 384, 512),
        grid=(2,),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
        slow=True,
    ),
    Kernel(
        "gemm_persistent_while",
        ("persistent scf.while",),
        _gemm_args(256, 384, 512),
        grid=(4,),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
        slow=True,
    ),
)


def padded_k(x: np.ndarray) -> np.ndarray:
    """`x` with its K columns padded with zeros to a multiple of 64 (TMA's zero fill)."""
    k = -(-x.shape[1] // 64) * 64
    return np.pad(x, ((0, 0), (0, k - x.shape[1])))


KERNELS += (
    Kernel(
        "gemm_dynamic_k",
        ("dynamic K",),
        _gemm_args(128, 256, 456),
        grid=(2, 1),
        expected=lambda a: {
            2: tiles_expected(padded_k(a[0]), padded_k(a[1]), a[2], whole_row_tile)
        },
    ),
)


def _split_k_args(rng):
    return [
        small_ints(rng, (512, 1024)),
        small_ints(rng, (512, 1024)),
        small_ints(rng, (512, 512), np.float32),
    ]


def split_k_expected(a, b, c, tiles: list[tuple[int, int]]) -> np.ndarray:
    """C plus the stand-in's tiles (tile row, tile column): the splits' partial sums add to
    the whole K's."""
    out = c.copy()
    for tm, tn in tiles:
        m0, n0 = 128 * tm, 128 * tn
        out[m0 : m0 + 128, n0 : n0 + 128] += whole_row_tile(a, b, m0, n0)
    return out


KERNELS += (
    Kernel(
        "gemm_split_k",
        ("split-K reduce",),
        _split_k_args,
        grid=(2, 1, 4),
        expected=lambda a: {2: split_k_expected(a[0], a[1], a[2], [(0, 0), (0, 1)])},
        slow=True,
    ),
)


def _tiles(a, b, c, tiles):
    out = c.copy()
    for tm, tn in tiles:
        m0, n0 = 128 * tm, 128 * tn
        out[m0 : m0 + 128, n0 : n0 + 128] = whole_row_tile(a, b, m0, n0)
    return out


KERNELS += (
    Kernel(
        "gemm_multicast_cluster2",
        ("cluster-2 multicast",),
        _gemm_cooperative_args,
        grid=(8, 8),
        clusters=2,
        expected=lambda a: {2: _tiles(*a, [(0, n) for n in range(4)])},
    ),
    Kernel(
        "gemm_multicast_cluster4",
        ("cluster-4 multicast",),
        _gemm_cooperative_args,
        grid=(8, 8),
        clusters=1,
        expected=lambda a: {2: _tiles(*a, [(m, n) for m in range(2) for n in range(2)])},
    ),
    Kernel(
        "gemm_multicast_cluster16",
        ("cluster-16 multicast",),
        _gemm_cooperative_args,
        grid=(8, 8),
        clusters=1,
        expected=lambda a: {2: _tiles(*a, [(m, n) for m in range(4) for n in range(4)])},
    ),
)


def _pair_args(rng):
    return [
        small_ints(rng, (512, 512)),
        small_ints(rng, (256, 512)),
        np.zeros((512, 256), np.float32),
    ]


def pair_expected(a, b, c) -> np.ndarray:
    """The leaders' 128x128 tiles (rows 256 p .. + 128, columns 0 .. + 128); the peers write
    nothing in the stand-in."""
    out = c.copy()
    for m0 in range(0, a.shape[0], 256):
        out[m0 : m0 + 128, :128] = whole_row_tile(a, b, m0, 0)
    return out


KERNELS += (
    Kernel(
        "gemm_2cta_pair",
        ("2-CTA leader-tracked",),
        _pair_args,
        grid=(2, 2),
        expected=lambda a: {2: pair_expected(*a)},
    ),
)


def _ring_args(rng):
    return [small_ints(rng, (64 * 8, 64), np.float32), np.zeros((64 * 2, 64), np.float32)]


def ring_expected(x, y) -> np.ndarray:
    """Each cluster's 4 partial tiles summed."""
    return x.reshape(-1, 4, 64, 64).sum(axis=1).reshape(y.shape)


KERNELS += (
    Kernel(
        "dsmem_allreduce_ring",
        ("DSMEM ring",),
        _ring_args,
        grid=(8,),
        expected=lambda a: {1: ring_expected(*a)},
    ),
)


def _scaled_args(rng):
    m, n = 256, 256
    return [
        small_ints(rng, (m, 512)),
        small_ints(rng, (n, 512)),
        small_ints(rng, (8, m), np.float32),
        np.zeros((m, n), np.float32),
    ]


def scaled_expected(a, b, sfa, c) -> np.ndarray:
    """The stand-in of the scaled GEMM: per k-block, thread t's sum of A row t and B row t
    (columns 8q + t mod 8), times the scale of row t, summed over the k-blocks."""
    out = c.copy()
    t = np.arange(128)
    kb = a.shape[1] // 64
    for m0 in range(0, c.shape[0], 128):
        for n0 in range(0, c.shape[1], 128):
            acc = np.zeros(128, np.float32)
            for k in range(kb):
                cols = slice(64 * k, 64 * k + 64)
                part = lane_sums(a[:, cols], slice(m0, m0 + 128), t % 8, 0, 64)
                part += lane_sums(b[:, cols], slice(n0, n0 + 128), t % 8, 0, 64)
                acc += part * sfa[k, m0 : m0 + 128]
            out[m0 : m0 + 128, n0 : n0 + 128] = np.repeat(acc[:, None], 128, axis=1)
    return out


KERNELS += (
    Kernel(
        "gemm_fp8_scaled",
        ("persistent grid-stride",),
        _scaled_args,
        grid=(2,),
        expected=lambda a: {3: scaled_expected(*a)},
        slow=True,
    ),
)


def wgmma_expected(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """C = A B^T, K padded with TMA's zeros: the tensor cores' f32 sums of small integers,
    exact in any order."""
    return padded_k(a).astype(np.float32) @ padded_k(b).astype(np.float32).T + c


KERNELS += (
    Kernel(
        "gemm_wgmma",
        ("dynamic K",),
        _gemm_args(128, 128, 456),
        grid=(2, 2),
        expected=lambda a: {2: wgmma_expected(*a)},
    ),
)


def _moe_args(rng):
    """The activations (64 tokens x 128), 24 routed token indices (6 steps of 4, a few
    outside the array: a padded route), the output of both CTAs."""
    return [
        small_ints(rng, (64, 128)),
        rng.integers(-2, 66, size=24).astype(np.int64),
        np.zeros((2, 6, 4, 64), np.float16),
    ]


def moe_expected(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Each CTA's copy of step i's four gathered rows (columns 64 on; zeros outside)."""
    rows = np.zeros((24, 64), np.float16)
    inside = (idx >= 0) & (idx < x.shape[0])
    rows[inside] = x[idx[inside], 64:128]
    return np.broadcast_to(rows.reshape(1, 6, 4, 64), (2, 6, 4, 64)).copy()


KERNELS += (
    Kernel(
        "gather4_multicast_moe",
        ("cluster-2 gather4 multicast",),
        _moe_args,
        grid=(2,),
        expected=lambda a: {2: moe_expected(a[0], a[1])},
    ),
)


def tcgen05_expected(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """C = A B^T: the tensor cores' f32 sums of small integers, exact in any order."""
    return a.astype(np.float32) @ b.astype(np.float32).T + c


KERNELS += (
    Kernel(
        "gemm_tcgen05_persistent",
        ("persistent grid-stride", "Blackwell tcgen05"),
        _gemm_args(256, 128, 256),
        grid=(2,),
        expected=lambda a: {2: tcgen05_expected(*a)},
    ),
)

def format_sparse_metadata(pick: np.ndarray) -> np.ndarray:
    """Mosaic GPU's layout of kind::f16 sparse metadata (M, K / 4, 2) in TMEM (its
    format_tcgen05_sparse_metadata for 16-bit operands): per 128 rows and 128 elements of K,
    128 lanes of 64 i2 values, (M / 128, K / 128, 128, 64)."""
    m, groups, _ = pick.shape
    k = groups * 2
    tiled = pick.reshape(m // 128, 8, 2, 8, k // 64, 4, 2, 8).transpose(0, 4, 1, 6, 3, 5, 2, 7)
    return tiled.reshape(m // 128, k // 64, 128, 64)


def pack_i2(values: np.ndarray) -> np.ndarray:
    """i2 values (rows, 4 n) as bytes (rows, n), four to a byte, the first in the low bits."""
    v = values.astype(np.uint8).reshape(values.shape[0], -1, 4)
    return v[..., 0] | v[..., 1] << 2 | v[..., 2] << 4 | v[..., 3] << 6


def sparse_operand(rng: np.random.Generator, m: int, k: int):
    """A 2:4-sparse A (M x K): its kept elements (M x K / 2, in order), where each sits
    (M, K / 4, 2: two distinct indices in increasing order a group of 4) and the dense A."""
    pick = np.sort(np.argsort(rng.random((m, k // 4, 4)), axis=-1)[..., :2], axis=-1)
    kept = small_ints(rng, (m, k // 2))
    return kept, pick, dense_of(kept, pick)


def dense_of(kept: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """The dense A (f32) whose row's group g of 4 holds kept elements 2g and 2g + 1 at the
    positions `pick[row, g]` names, zeros elsewhere."""
    m, groups, _ = pick.shape
    dense = np.zeros((m, 4 * groups), np.float32)
    for j in (0, 1):
        dense[np.arange(m)[:, None], 4 * np.arange(groups)[None, :] + pick[:, :, j]] = kept[:, j::2]
    return dense


def _sparse_args(m: int, n: int, k: int):
    """gemm_tcgen05_sparse_persistent's arguments: A's kept elements, B, the metadata as one
    block of 128 rows per 128 rows of A and 128 elements of K (rows (tm * K / 128 + kb) *
    128 on), C."""

    def make(rng):
        kept, pick, _ = sparse_operand(rng, m, k)
        blocks = format_sparse_metadata(pick)  # (M / 128, K / 128, 128, 64)
        meta = pack_i2(blocks.reshape(-1, 64))
        return [kept, small_ints(rng, (n, k)), meta, np.zeros((m, n), np.float32)]

    return make


def sparse_expected(kept, b, meta, c) -> np.ndarray:
    """C = A B^T for the dense A that the kept elements and the metadata make."""
    m, k = kept.shape[0], 2 * kept.shape[1]
    fields = (meta[..., None] >> np.array([0, 2, 4, 6], np.uint8)) & 3  # (rows, 16, 4)
    blocks = fields.reshape(m // 128, k // 128, 128, 64)
    pick = blocks.reshape(m // 128, k // 128, 8, 2, 8, 4, 2, 8)
    pick = pick.transpose(0, 2, 6, 4, 1, 5, 3, 7).reshape(m, k // 4, 2)  # the formatting undone
    return dense_of(kept, pick) @ b.astype(np.float32).T + c


KERNELS += (
    Kernel(
        "gemm_tcgen05_sparse_persistent",
        ("persistent grid-stride", "Blackwell tcgen05", "structured-sparse"),
        _sparse_args(256, 128, 256),
        grid=(2,),
        expected=lambda a: {3: sparse_expected(*a)},
    ),
)

KERNELS += (
    Kernel(
        "gemm_tcgen05_2cta_persistent",
        ("persistent grid-stride", "Blackwell tcgen05", "2-CTA leader-tracked"),
        _gemm_args(512, 128, 256),
        grid=(4,),
        expected=lambda a: {2: tcgen05_expected(*a)},
    ),
)

KERNELS += (
    Kernel(
        "gemm_tcgen05_clc",
        ("persistent scf.while", "Blackwell tcgen05", "cluster launch control"),
        _gemm_args(256, 128, 256),
        grid=(4,),
        expected=lambda a: {2: tcgen05_expected(*a)},
    ),
)

KERNELS += (
    Kernel(
        "gemm_cp_async_multistage",
        ("dynamic K", "Ampere cp.async"),
        _gemm_args(256, 256, 320),
        grid=(2, 2),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
    ),
)

KERNELS += (
    Kernel(
        "gemm_tcgen05_pipeline_state",
        ("persistent grid-stride", "Blackwell tcgen05", "carried pipeline state"),
        _gemm_args(256, 128, 256),
        grid=(2,),
        expected=lambda a: {2: tcgen05_expected(*a)},
    ),
)

KERNELS += (
    Kernel(
        "gemm_pingpong_pipeline_state",
        ("pingpong GEMM", "persistent grid-stride", "carried pipeline state"),
        _gemm_args(256, 256, 512),
        grid=(1,),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
        slow=True,
    ),
)


def fmha_expected(q, k, v, o, heads: int, row_value: bool = False) -> np.ndarray:
    """O of the Blackwell FMHA stand-ins, per head and block of 128 queries: over key blocks
    of 64, S = Q K^T (f32), O = P V at the first block and O + (correction) + P V after, P
    being S's first 32 columns read as f16 pairs (little-endian: column c holds P's elements
    2c and 2c + 1). The correction adds S (`fmha_tcgen05`) or, with `row_value`, S's first
    column, the row value a softmax warpgroup hands the correction warpgroup
    (`fmha_tcgen05_pingpong`). The inputs are small integers: every sum is exact in f32."""
    out = o.copy()
    sq, sk = q.shape[0] // heads, k.shape[0] // heads
    for h in range(heads):
        for mb in range(sq // 128):
            rows = slice(h * sq + mb * 128, h * sq + mb * 128 + 128)
            qf = q[rows].astype(np.float32)
            acc = np.zeros((128, 64), np.float32)
            for n in range(sk // 64):
                keys = slice(h * sk + 64 * n, h * sk + 64 * n + 64)
                s = qf @ k[keys].astype(np.float32).T
                if n:
                    acc += s[:, :1] if row_value else s
                p = np.ascontiguousarray(s[:, :32]).view(np.float16).astype(np.float32)
                acc += p @ v[keys].astype(np.float32)
            out[rows] = acc
    return out


def _fmha_args(sq: int):
    """Two heads of `sq` queries and 192 keys (3 key blocks)."""

    def make(rng):
        heads, sk = 2, 192
        return [
            small_ints(rng, (heads * sq, 64)),
            small_ints(rng, (heads * sk, 64)),
            small_ints(rng, (heads * sk, 64)),
            np.zeros((heads * sq, 64), np.float32),
        ]

    return make


KERNELS += (
    Kernel(
        "fmha_tcgen05",
        ("Blackwell tcgen05", "FA4 S and P in TMEM"),
        _fmha_args(128),
        grid=(1, 2),
        expected=lambda a: {3: fmha_expected(*a, heads=2)},
    ),
)

KERNELS += (
    Kernel(
        "gemm_tcgen05_tma_epilogue",
        ("persistent grid-stride", "Blackwell tcgen05", "TMA store epilogue"),
        _gemm_args(256, 128, 256),
        grid=(2,),
        expected=lambda a: {2: tcgen05_expected(*a)},
    ),
)


KERNELS += (
    Kernel(
        "fmha_tcgen05_pingpong",
        ("Blackwell tcgen05", "FA4 S and P in TMEM", "FA4 softmax ping-pong and correction"),
        _fmha_args(256),
        grid=(1, 2),
        expected=lambda a: {3: fmha_expected(*a, heads=2, row_value=True)},
    ),
)

KERNELS += (
    Kernel(
        "gemm_multicast_cluster2_persistent",
        ("cluster-2 multicast", "persistent grid-stride"),
        _gemm_args(256, 512, 256),
        grid=(4,),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
    ),
)


def _split_k_to_leader_args(rng):
    """Two clusters of 4: 8 partial tiles of 64 rows, the two sums."""
    return [small_ints(rng, (512, 64), np.float32), np.zeros((128, 64), np.float32)]


KERNELS += (
    Kernel(
        "dsmem_split_k_to_leader",
        ("DSMEM ring", "rank-dependent roles"),
        _split_k_to_leader_args,
        grid=(8,),
        expected=lambda a: {1: a[0].reshape(2, 4, 64, 64).sum(1).reshape(128, 64)},
    ),
)

KERNELS += (
    Kernel(
        "fa3_pingpong",
        ("FA3 K/V ring", "FA3 inter-warpgroup pingpong"),
        _fa3_args,
        grid=(1, 2),
        expected=lambda a: {3: fa3_expected(*a, heads=2)},
    ),
)


def conv_expected(x: np.ndarray, w: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The stand-in's output: over the 9 taps, thread t sums its pixel's row of the tap's
    im2col tile (the PTX ISA's traversal: `tests.interpreter.test_im2col.reference`) and
    filter row t mod 64, at columns 8q + t mod 8, into the whole row t."""
    from tests.interpreter.test_im2col import reference

    t = np.arange(128)
    acc = np.zeros(128, np.float32)
    for kb in range(9):
        r, s = divmod(kb, 3)
        a = reference(x, (0, -1, -1, 0), (r, s), (-1, -1), (-1, -1), (1, 1), 128, 64)
        b = w[:, kb * 64 : (kb + 1) * 64]
        for q in range(8):
            acc += a[t, 8 * q + t % 8].astype(np.float32)
            acc += b[t % 64, 8 * q + t % 8].astype(np.float32)
    return y + np.repeat(acc[:, None], 64, axis=1)


KERNELS += (
    Kernel(
        "conv_fprop_im2col",
        ("implicit-GEMM convolution",),
        lambda rng: [
            small_ints(rng, (2, 8, 8, 64)),
            small_ints(rng, (64, 576)),
            np.zeros((128, 64), np.float32),
        ],
        grid=(1,),
        expected=lambda a: {2: conv_expected(*a)},
    ),
)
