"""The corpus: the data movement of the kernels people ship, one kernel per `.mlir` file of
this folder, each written as a kernel author writes it (issue N). Each file's header says
what real kernel it models and its protocol.

`KERNELS` gives, per file, what the tests need to run it under the interpreter: the kinds
of kernel it stands for, small arguments, the grid, how many clusters to run, and the numpy
model of what it writes. The consumers' math is not in the dialect yet (no wgmma), so each
kernel's consumers read their SMEM slots with vector loads and sum what they read; the
models below compute the same sums (the inputs are small integers, so f32 sums are exact
in any order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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
    notes: tuple[str, ...] = field(default=())

    @property
    def path(self) -> Path:
        return HERE / f"{self.name}.mlir"

    def text(self) -> str:
        return self.path.read_text()


def small_ints(rng: np.random.Generator, shape: tuple[int, ...], dtype=np.float16) -> np.ndarray:
    """Integers in [-4, 4] as `dtype`: every sum the kernels make is exact in f32."""
    return rng.integers(-4, 5, size=shape).astype(dtype)


# --- the models ---------------------------------------------------------------------------


def gemm_rows(a: np.ndarray, b: np.ndarray, m0: int, n0: int, rows: int) -> np.ndarray:
    """The accumulator rows of a consumer warpgroup of the GEMM stand-in: thread t reads A row
    m0 + t / 2, columns 32 (t mod 2) .. + 32 of each 64-wide k-block, and B row n0 + t, all
    its columns, summing 8-wide vectors; it writes its vector to the 8 column groups of its
    half row (64 (t mod 2) + 8c). Returns the `rows` x 128 tile of C."""
    k = a.shape[1]
    sa = a[m0 : m0 + rows].astype(np.float32).reshape(rows, k // 64, 2, 4, 8).sum(axis=(1, 3))
    sb = b[n0 : n0 + 2 * rows].astype(np.float32).reshape(2 * rows, k // 8, 8).sum(axis=1)
    acc = sa.reshape(2 * rows, 8) + sb  # thread t: row t / 2, half t mod 2
    return np.tile(acc.reshape(rows, 2, 1, 8), (1, 1, 8, 1)).reshape(rows, 128)


def gemm_tile(a: np.ndarray, b: np.ndarray, m0: int, n0: int) -> np.ndarray:
    """A 128x128 tile of C: two warpgroups of 64 rows, each reading the whole B slot."""
    return np.concatenate([gemm_rows(a, b, m0 + 64 * w, n0, 64) for w in range(2)])


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
    row n0 + t, all 64 columns of each k-block, summing 8-wide vectors, and writes its vector
    to the 16 column groups of row t."""
    k = a.shape[1]
    sa = a[m0 : m0 + 128].astype(np.float32).reshape(128, k // 8, 8).sum(axis=1)
    sb = b[n0 : n0 + 128].astype(np.float32).reshape(128, k // 8, 8).sum(axis=1)
    return np.tile(sa + sb, (1, 16))


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
        _gemm_args(256, 512, 512),
        grid=(2,),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
    ),
)


def fa3_expected(q, k, v, o, heads: int) -> np.ndarray:
    """O of the FA3 stand-in: thread t of consumer warpgroup w sums Q row 64w + t / 2, half
    t mod 2 (4 vectors), and K row t and V row t of every key block (8 vectors each); its
    vector fills the 4 column groups of its half row."""
    out = o.copy()
    sq, sk = q.shape[0] // heads, k.shape[0] // heads
    for h in range(heads):
        kv = k[h * sk : (h + 1) * sk].astype(np.float32) + v[h * sk : (h + 1) * sk]
        per_t = kv.reshape(sk // 128, 128, 8, 8).sum(axis=(0, 2))  # (t, 8)
        for mb in range(sq // 128):
            q0 = h * sq + mb * 128
            tile = q[q0 : q0 + 128].astype(np.float32).reshape(128, 2, 4, 8).sum(axis=2)
            acc = tile.reshape(256, 8)  # thread index 128w + t -> row (128w + t) / 2 ...
            rows = []
            for w in range(2):
                a = acc[128 * w : 128 * w + 128] + per_t  # thread t of warpgroup w
                rows.append(np.tile(a.reshape(64, 2, 1, 8), (1, 1, 4, 1)).reshape(64, 64))
            out[q0 : q0 + 128] = np.concatenate(rows)
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
    ),
    Kernel(
        "gemm_persistent_while",
        ("persistent scf.while",),
        _gemm_args(256, 384, 512),
        grid=(4,),
        expected=lambda a: {2: tiles_expected(a[0], a[1], a[2], whole_row_tile)},
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
)
