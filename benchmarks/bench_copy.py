"""Copy bandwidth on the GPU: copy-dialect kernels against PyTorch, Triton and Pallas Mosaic GPU.

    python benchmarks/bench_copy.py [--reps 20] [--debug-guards]

One run, 2 GiB float32 arrays (16384 x 32768). GB/s counts bytes read plus bytes written;
each row is the median of `reps` timed launches after 3 warm-ups, timed with CUDA events
(Pallas rows: wall clock around 10 launches and block_until_ready, as JAX gives no events),
and each kernel's result is checked. Prints a markdown table with the conditions.
`--debug-guards`: the torch copy and each TMA copy twice, built normally and with debug guards
(`runtime.compile(..., debug_guards=True)`), the guarded row noting its share of the normal
build's bandwidth. The warp-specialized copy (`kernels.ws_copy`) runs a sweep (tile, stages,
stores in flight, blocks per SM), printed as a second table; the main table gets its best
configuration. `--only-ws`: the torch copy and that sweep only. Bulk (non-tensor) copies run
against TMA tensor copies of the same tiles (`--only-bulk`: the torch copy and those rows
only). `--json PATH`: the rows as JSON. `--plot PATH`: a bar chart of the GB/s (.svg, or
.png when matplotlib is importable), each table a panel with the torch copy as a dashed line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from importlib.metadata import version

from bench_common import (
    Fatal,
    PlotGroup,
    device_limits,
    fits_per_sm,
    measure,
    plot_path_problem,
    recover,
    timed,
    write_json,
    write_plot,
)

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

M, N = 16384, 32768
NBYTES = M * N * 4  # one array


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float | None, str, str]] = []
        self.ceiling: float | None = None
        self.skipped: list[str] = []
        """Configurations not run, and why (listed under the table)."""

    def json(self, table: str) -> list[dict[str, object]]:
        """The rows as dicts (`table` names the table they are in)."""
        return [
            {
                "table": table,
                "kernel": name,
                "gbps": gbps,
                "ratio_torch_copy": gbps / self.ceiling if gbps and self.ceiling else None,
                "correct": correct,
                "note": note,
            }
            for name, gbps, correct, note in self.rows
        ]

    def add(self, name: str, seconds: float | None, nbytes: int, correct: str, note: str = ""):
        gbps = None if seconds is None else nbytes / seconds / 1e9
        if name == "torch copy":
            self.ceiling = gbps
        self.rows.append((name, gbps, correct, note))
        shown = "failed" if gbps is None else f"{gbps:.0f} GB/s"
        print(f"  {name}: {shown} ({correct}) {note}", file=sys.stderr, flush=True)

    def print(self, header: str) -> None:
        print(header)
        print("| kernel | GB/s | ratio to torch copy | correct | notes |")
        print("|---|---|---|---|---|")
        for name, gbps, correct, note in self.rows:
            if gbps is None:
                print(f"| {name} | - | - | {correct} | {note} |")
                continue
            ratio = gbps / self.ceiling if self.ceiling else float("nan")
            print(f"| {name} | {gbps:.0f} | {ratio:.3f} | {correct} | {note} |")


def plot_groups(table: Table, sweep: Table) -> list[PlotGroup]:
    """The plot's panels: the main table and the sweep (when it ran), the torch copy a line."""
    groups = [("copy kernels", table)] + ([("ws_copy sweep", sweep)] if sweep.rows else [])
    return [
        PlotGroup(
            title,
            [(name, gbps) for name, gbps, _, _ in t.rows if name != "torch copy"],
            table.ceiling,
        )
        for title, t in groups
    ]


def torch_rows(table: Table, reps: int, x, y) -> None:
    table.add("torch copy", timed(lambda: y.copy_(x), reps), 2 * NBYTES, "yes", "y.copy_(x)")


def triton_rows(table: Table, reps: int, x, y) -> None:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def plain_copy(x_ptr, o_ptr, n, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    @triton.jit
    def tma_copy(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        od = tl.make_tensor_descriptor(o_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        i = tl.program_id(0)
        j = tl.program_id(1)
        od.store([i * BM, j * BN], xd.load([i * BM, j * BN]))

    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    )
    n = x.numel()
    y.zero_()
    t = timed(lambda: plain_copy[(triton.cdiv(n, 4096),)](x, y, n, 4096), reps)
    table.add(
        "Triton plain copy", t, 2 * NBYTES, str(bool(torch.equal(x, y))), "4096 elements/program"
    )
    y.zero_()
    t = timed(lambda: tma_copy[(M // 128, N // 128)](x, y, M, N, 128, 128), reps)
    table.add("Triton TMA copy", t, 2 * NBYTES, str(bool(torch.equal(x, y))), "128x128 descriptors")


def pallas_rows(table: Table) -> None:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    x = jax.random.normal(jax.random.key(0), (M, N), jnp.float32)

    def bench(f) -> tuple[float, bool]:
        out = jax.block_until_ready(f(x))
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(10):
                out = f(x)
            jax.block_until_ready(out)
            best = min(best, (time.perf_counter() - t0) / 10)
        return best, bool(jnp.array_equal(out, x))

    bm, bn = 128, 128

    def roundtrip(x_gmem, o_gmem, smem, bar):
        i, j = jax.lax.axis_index("i"), jax.lax.axis_index("j")
        window = (pl.ds(i * bm, bm), pl.ds(j * bn, bn))
        plgpu.copy_gmem_to_smem(x_gmem.at[window], smem, bar)
        plgpu.barrier_wait(bar)
        plgpu.copy_smem_to_gmem(smem, o_gmem.at[window])
        plgpu.wait_smem_to_gmem(0)

    f = jax.jit(
        plgpu.kernel(
            roundtrip,
            out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
            scratch_types=[plgpu.SMEM((bm, bn), jnp.float32), plgpu.Barrier(num_arrivals=1)],
            grid=(M // bm, N // bn),
            grid_names=("i", "j"),
        )
    )
    t, ok = bench(f)
    table.add("Pallas Mosaic GPU round trip", t, 2 * NBYTES, str(ok), "wall clock, 1 tile/block")

    pm, pn, blocks, steps = 64, 128, 128, 3
    rows_per_block = M // pm // blocks

    def pipelined(x_gmem, o_gmem):
        b = jax.lax.axis_index("b")

        def body(idx, x_smem, o_smem):
            o_smem[...] = x_smem[...]

        spec = pl.BlockSpec((pm, pn), lambda i, j: (b * rows_per_block + i, j))
        plgpu.emit_pipeline(
            body,
            grid=(rows_per_block, N // pn),
            in_specs=[spec],
            out_specs=[spec],
            max_concurrent_steps=steps,
        )(x_gmem, o_gmem)

    f = jax.jit(
        plgpu.kernel(
            pipelined,
            out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
            grid=(blocks,),
            grid_names=("b",),
        )
    )
    t, ok = bench(f)
    table.add("Pallas Mosaic GPU pipeline", t, 2 * NBYTES, str(ok), "wall clock, emit_pipeline")


PIPELINED = [((128, 128), 3, 1), ((64, 128), 3, 2), ((64, 256), 3, 1)]
"""Persistent copy variants: (tile, stages, blocks per SM)."""
ONE_TILE = [(128, 128), (64, 256), (256, 64), (128, 64)]
"""One-tile-per-block copy variants."""
CP_ASYNC_TILES = [(32, 128), (64, 128), (16, 256), (32, 256), (64, 64)]
"""cp.async tiles, one per block of 256 threads: the cp.async example's 32x128 and the shapes
around it (16-64 KiB of f32)."""


def reduce_variants(sms: int):
    from frontends import kernels

    for tile in [(64, 64), (128, 128), (128, 64)]:
        yield (
            f"1 tile/block, {tile[0]}x{tile[1]}",
            kernels.tma_copy((M, N), "f32", tile, reduce="add"),
            kernels.grid((M, N), tile),
        )
    for tile in [(64, 64), (128, 128), (64, 256)]:
        yield (
            f"1 tile/block, {tile[0]}x{tile[1]}, o prefetched to L2",
            kernels.tma_copy((M, N), "f32", tile, reduce="add", prefetch_destination=True),
            kernels.grid((M, N), tile),
        )
    for hints, label in [
        ((kernels.EVICT_FIRST, None), "x loaded evict-first"),
        ((kernels.EVICT_FIRST, kernels.EVICT_FIRST), "x and o evict-first"),
        ((None, kernels.EVICT_LAST), "o reduced evict-last"),
    ]:
        yield (
            f"1 tile/block, 64x64, {label}",
            kernels.tma_copy((M, N), "f32", (64, 64), reduce="add", cache_hints=hints),
            kernels.grid((M, N), (64, 64)),
        )
    for tile, stages, per_sm in [((128, 128), 3, 1)]:
        yield (
            f"pipelined {tile[0]}x{tile[1]}, {stages} stages, {per_sm * sms} blocks",
            kernels.tma_copy_pipelined((M, N), "f32", tile, stages=stages, reduce="add"),
            (per_sm * sms,),
        )


def reduce_rows(table: Table, reps: int, x, sms: int) -> None:
    import torch

    from copy_tools import runtime

    o = torch.randn_like(x)
    o0 = o.clone()
    t_add = timed(lambda: o.add_(x), reps)
    table.add("torch add_ (o += x)", t_add, 3 * NBYTES, "yes", "3 passes: read x, read o, write o")
    best = None
    expected = o0 + x
    for name, module, grid in reduce_variants(sms):
        o.copy_(o0)
        launch = runtime.compile(module).kernel().prepare(x, o, grid=grid)
        launch()
        torch.cuda.synchronize()
        correct = torch.equal(o, expected)
        t = timed(launch, reps)  # o keeps growing; the timing does not depend on its values
        launch.release()
        table.add(
            f"copy-dialect TMA reduce-add ({name})",
            t,
            3 * NBYTES,
            str(bool(correct)),
            "o += x; 3 passes as torch add_",
        )
        if best is None or t < best:
            best = t
    table.add(
        "copy-dialect TMA reduce-add", best, 3 * NBYTES, "yes (above)", "best of the rows above"
    )
    del expected


BULK_ROWS = [
    # (row width W of the array seen as (M*N/W, W), tile, stages, blocks per SM)
    (256, (64, 256), 3, 1),
    (256, (32, 256), 4, 2),
    (4096, (4, 4096), 3, 1),
    (4096, (2, 4096), 4, 1),
    (4096, (1, 4096), 6, 2),
]
"""Persistent ring copies of whole rows: each as a TMA tensor copy (where its box fits a
tensor map: rows of at most 256 elements) and as a non-tensor bulk copy, on the same view."""
BULK_1D = [8192, 16384]
"""One-tile-per-block 1-D bulk copies (`kernels.bulk_copy`): elements per block."""


def bulk_rows(table: Table, reps: int, x, y, sms: int) -> None:
    """Bulk (non-tensor) copies against TMA tensor copies of the same tiles of the same
    arrays: the ring copy on row views of the arrays, and the 1-D copy."""
    import torch

    from copy_tools import runtime
    from frontends import kernels

    def run(name: str, build, args, grid) -> None:
        y.zero_()
        try:
            launch = runtime.compile(build()).kernel().prepare(*args, grid=grid)
        except Exception as exc:  # a row that cannot run is reported, not fatal
            table.add(name, None, 2 * NBYTES, f"error: {type(exc).__name__}: {str(exc)[:120]}")
            return
        t = timed(launch, reps)
        table.add(
            name,
            t,
            2 * NBYTES,
            str(bool(torch.equal(x, y))),
            "persistent" if "ring" in name else "",
        )
        launch.release()

    for width, tile, stages, per_sm in BULK_ROWS:
        shape = (M * N // width, width)
        view = (x.view(shape), y.view(shape))
        for impl in ("tma", "bulk"):
            if impl == "tma" and width > 256:
                continue
            run(
                f"copy-dialect {impl} ring copy ({shape[0]}x{width} view, {tile[0]}x{tile[1]}, "
                f"{stages} stages, {per_sm * sms} blocks)",
                lambda shape=shape, tile=tile, stages=stages, impl=impl: kernels.tma_copy_pipelined(
                    shape, "f32", tile, stages=stages, implementation=impl
                ),
                view,
                (per_sm * sms,),
            )
    for tile in BULK_1D:
        run(
            f"copy-dialect bulk 1-D copy ({tile} elements/block)",
            lambda tile=tile: kernels.bulk_copy(M * N, "f32", tile),
            (x.view(-1), y.view(-1)),
            (M * N // tile,),
        )


def copy_dialect_rows(table: Table, reps: int, x, y, sms: int, only_reduce: bool = False):
    import torch

    from copy_tools import runtime
    from frontends import kernels

    if only_reduce:
        reduce_rows(table, reps, x, sms)
        return

    def run(name: str, module, args, grid, nbytes: int, check, note: str) -> float | None:
        try:
            launch = runtime.compile(module).kernel().prepare(*args, grid=grid)
        except Exception as exc:  # a row that cannot run is reported, not fatal
            table.add(name, None, nbytes, f"error: {type(exc).__name__}: {str(exc)[:120]}")
            return None
        t = timed(launch, reps)
        table.add(name, t, nbytes, str(bool(check())), note)
        launch.release()
        return t

    def fastest(rows: list[tuple]) -> float | None:
        """Runs each row (`run`'s arguments but the byte count and the check: a copy of x
        into a zeroed y) and returns the shortest time of those that ran."""
        times = []
        for name, module, grid, note in rows:
            y.zero_()
            times.append(
                run(name, module, (x, y), grid, 2 * NBYTES, lambda: torch.equal(x, y), note)
            )
        return min((t for t in times if t is not None), default=None)

    best = fastest(
        [
            (
                f"copy-dialect TMA copy (pipelined {tile[0]}x{tile[1]}, {stages} stages, "
                f"{per_sm * sms} blocks)",
                kernels.tma_copy_pipelined((M, N), "f32", tile, stages=stages),
                (per_sm * sms,),
                "persistent",
            )
            for tile, stages, per_sm in PIPELINED
        ]
        + [
            (
                f"copy-dialect TMA copy (1 tile/block, {tile[0]}x{tile[1]})",
                kernels.tma_copy((M, N), "f32", tile),
                kernels.grid((M, N), tile),
                "",
            )
            for tile in ONE_TILE
        ]
    )
    table.add("copy-dialect TMA copy", best, 2 * NBYTES, "yes (above)", "best of the rows above")
    best = fastest(
        [
            (
                f"copy-dialect cp.async copy ({tile[0]}x{tile[1]})",
                kernels.cp_async_copy((M, N), "f32", tile, target="sm_90a"),
                kernels.grid((M, N), tile),
                "1 tile/block, 256 threads, sm_80 code path",
            )
            for tile in CP_ASYNC_TILES
        ]
    )
    table.add(
        "copy-dialect cp.async copy", best, 2 * NBYTES, "yes (above)", "best of the rows above"
    )

    reduce_rows(table, reps, x, sms)

    x3, y3 = x.view(M // 32, 32, N), y.view(M // 32, 32, N)
    y.zero_()
    run(
        "copy-dialect multicast",
        kernels.multicast_copy((M, N), "f32"),
        (x3, y3),
        (2 * N // 64, M // 64),
        2 * NBYTES,
        lambda: torch.equal(x, y),
        "cluster of 2 shares each 64x64 tile load; bytes counted as a plain copy's",
    )


WS_COPY_TILES = ((64, 128), (64, 256))
"""Persistent rings: 64x256 is the one-tile-per-block copy's best tile (runs 23-25: no
persistent ring beat 0.96 of torch's copy, so the sweep keeps few)."""
WS_COPY_STAGES = (2, 3, 4)
WS_COPY_IN_FLIGHT = (1, 2)
WS_COPY_BLOCKS_PER_SM = (1,)
WS_COPY_PER_TILE = (
    # (tile, stages, stores in flight, tiles per block) on kernels.tiles_grid: each block
    # takes a few tiles, the block scheduler deals them out (RESULTS.md run 36: 0.98-0.996 of
    # torch's copy, against 0.955 persistent). A block's SMEM (stages x tile) sets how many
    # share an SM.
    ((32, 256), 1, 0, 1),
    ((32, 256), 2, 1, 1),
    ((32, 256), 2, 1, 2),
    ((32, 256), 2, 1, 4),
    ((32, 256), 3, 1, 3),
    ((16, 256), 2, 1, 1),
    ((16, 256), 4, 1, 4),
    ((16, 256), 4, 2, 8),
    ((64, 256), 1, 0, 1),
    ((64, 128), 2, 1, 2),
)
WS_COPY_HINTS = ("loads evict-first", "loads and stores evict-first")
"""L2 policies tried on the sweep's best configuration."""


def ws_copy_configs() -> list[tuple[tuple[int, int], int, int, int, int]]:
    """(tile, stages, stores in flight, blocks per SM, tiles per block) of the ws_copy sweep
    (in_flight < stages: a store in flight holds its slot); tiles per block 0: persistent
    blocks, `blocks per SM` of them on each SM."""
    return [(tile, stages, f, 0, per_block) for tile, stages, f, per_block in WS_COPY_PER_TILE] + [
        (tile, stages, in_flight, per_sm, 0)
        for tile in WS_COPY_TILES
        for stages in WS_COPY_STAGES
        for in_flight in WS_COPY_IN_FLIGHT
        if in_flight < stages
        for per_sm in WS_COPY_BLOCKS_PER_SM
    ]


def ws_copy_rows(table: Table, sweep: Table, reps: int, x, y, sms: int, smem_per_sm: int):
    """`kernels.ws_copy` in each configuration that fits (the sweep table), then the best one
    under each of WS_COPY_HINTS; the best of all in the main table. Configurations whose SMEM
    does not fit (one block, or two per SM) are listed under the sweep table, not run."""
    import inspect

    import torch

    from copy_tools import runtime
    from frontends import kernels

    policies = {
        "": (None, None),
        "loads evict-first": (kernels.EVICT_FIRST, None),
        "loads and stores evict-first": (kernels.EVICT_FIRST, kernels.EVICT_FIRST),
    }

    def run(
        tile, stages: int, in_flight: int, per_sm: int, per_block: int, hints: str = ""
    ) -> float | None:
        grid = (
            kernels.tiles_grid((M, N), tile, per_block)
            if per_block
            else kernels.ws_grid(sms, per_sm)
        )
        spread = f"{per_block} tile(s)/block, " if per_block else ""
        config = (
            f"{tile[0]}x{tile[1]}, {stages} stages, {in_flight} in flight, "
            f"{spread}{grid[0]} blocks{', ' + hints if hints else ''}"
        )
        name = f"copy-dialect ws copy ({config})"
        extra = {"cache_hints": policies[hints]} if hints else {}
        try:
            module = kernels.ws_copy(
                (M, N), "f32", tile, stages=stages, in_flight=in_flight, **extra
            )
        except Exception as exc:  # TR6: the ring does not fit one block's SMEM
            if "TR6" in (getattr(exc, "rules", ()) or ()) or "SMEM" in str(exc):
                sweep.skipped.append(f"{config} (over the block's SMEM)")
                return None
            sweep.add(name, None, 2 * NBYTES, f"error: {type(exc).__name__}: {str(exc)[:120]}")
            return None
        try:
            program = runtime.compile(module)
            smem = program.kernel().abi.smem_bytes
            if not per_block and not fits_per_sm(smem, per_sm, smem_per_sm):
                sweep.skipped.append(f"{config} ({per_sm} blocks of {smem} B SMEM per SM)")
                return None
            launch = program.kernel().prepare(x, y, grid=grid)
        except Exception as exc:  # a row that cannot run is reported, not fatal
            sweep.add(name, None, 2 * NBYTES, f"error: {type(exc).__name__}: {str(exc)[:120]}")
            return None
        y.fill_(float("nan"))
        try:
            t, used = measure(launch, name, reps)
        except Fatal:
            raise
        except Exception as exc:
            recover(name)
            sweep.add(name, None, 2 * NBYTES, f"error: {type(exc).__name__}: {str(exc)[:120]}")
            return None
        correct = bool(torch.equal(x, y))
        launch.release()
        sweep.add(name, t, 2 * NBYTES, str(correct), "" if used == reps else f"{used} reps")
        nonlocal best
        if correct and (best is None or t < best[0]):
            best = (t, config, (tile, stages, in_flight, per_sm, per_block))
        return t

    best: tuple[float, str, tuple] | None = None
    for config in ws_copy_configs():
        run(*config)
    if best is not None and "cache_hints" in inspect.signature(kernels.ws_copy).parameters:
        fastest = best[2]
        for hints in WS_COPY_HINTS:
            run(*fastest, hints=hints)
    table.add(
        "copy-dialect ws copy",
        None if best is None else best[0],
        2 * NBYTES,
        "yes (sweep)" if best else "no configuration ran",
        "" if best is None else f"warp-specialized, best of the sweep: {best[1]}",
    )


def debug_guard_rows(table: Table, reps: int, x, y, sms: int) -> None:
    """Each TMA copy variant built normally and with debug guards, one after the other."""
    import torch

    from copy_tools import runtime
    from frontends import kernels

    variants = [
        (
            f"pipelined {tile[0]}x{tile[1]}, {stages} stages, {per_sm * sms} blocks",
            lambda tile=tile, stages=stages: kernels.tma_copy_pipelined(
                (M, N), "f32", tile, stages=stages
            ),
            (per_sm * sms,),
        )
        for tile, stages, per_sm in PIPELINED
    ] + [
        (
            f"1 tile/block, {tile[0]}x{tile[1]}",
            lambda tile=tile: kernels.tma_copy((M, N), "f32", tile),
            kernels.grid((M, N), tile),
        )
        for tile in ONE_TILE
    ]
    for name, build, grid in variants:
        normal = None
        for guards in (False, True):
            row = f"copy-dialect TMA copy ({name}{', debug guards' if guards else ''})"
            y.zero_()
            try:
                launch = (
                    runtime.compile(build(), debug_guards=guards).kernel().prepare(x, y, grid=grid)
                )
            except Exception as exc:  # a row that cannot run is reported, not fatal
                table.add(row, None, 2 * NBYTES, f"error: {type(exc).__name__}: {str(exc)[:120]}")
                continue
            t = timed(launch, reps)
            correct = torch.equal(x, y)
            launch.release()
            note = ""
            if not guards:
                normal = t
            elif normal is not None:
                note = f"{normal / t:.3f} of the normal build's GB/s"
            table.add(row, t, 2 * NBYTES, str(bool(correct)), note)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument(
        "--only-reduce", action="store_true", help="the torch rows and the reduce-add rows only"
    )
    parser.add_argument(
        "--debug-guards",
        action="store_true",
        help="the torch copy and the TMA copies, each built normally and with debug guards",
    )
    parser.add_argument(
        "--only-ws", action="store_true", help="the torch copy and the ws_copy sweep only"
    )
    parser.add_argument(
        "--only-bulk",
        action="store_true",
        help="the torch copy and the bulk (non-tensor) against tensor copy rows only",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument(
        "--plot", metavar="PATH", help="also write a bandwidth bar chart (.svg, or .png)"
    )
    args = parser.parse_args()
    if args.plot and (problem := plot_path_problem(args.plot)):
        parser.error(f"--plot: {problem}")

    import torch

    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    table = Table()
    sweep = Table()
    stopped = ""
    torch_rows(table, args.reps, x, y)
    try:
        if args.debug_guards:
            debug_guard_rows(table, args.reps, x, y, sms)
        elif args.only_ws:
            ws_copy_rows(table, sweep, args.reps, x, y, sms, device_limits().smem_per_sm)
        elif args.only_bulk:
            bulk_rows(table, args.reps, x, y, sms)
        else:
            if not args.skip_peers and not args.only_reduce:
                for rows in (
                    lambda: triton_rows(table, args.reps, x, y),
                    lambda: pallas_rows(table),
                ):
                    try:
                        rows()
                    except Exception as exc:
                        print(
                            f"  peer failed: {type(exc).__name__}: {str(exc)[:300]}",
                            file=sys.stderr,
                        )
            copy_dialect_rows(table, args.reps, x, y, sms, only_reduce=args.only_reduce)
            if not args.only_reduce:
                bulk_rows(table, args.reps, x, y, sms)
                ws_copy_rows(table, sweep, args.reps, x, y, sms, device_limits().smem_per_sm)
    except Fatal as exc:
        stopped = f"{exc}; the process exits so that the GPU is released"
    driver = subprocess.run(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    commit = (
        subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "(no git)"
    )
    versions = ", ".join(
        f"{p} {version(p)}"
        for p in ("torch", "triton", "jax", "xdsl", "llvmlite", "cuda-bindings")
        if _has(p)
    )
    header = (
        f"GPU: {props.name} ({sms} SMs), driver {driver}; {versions}; commit {commit}; "
        f"2 GiB float32 ({M}x{N}) per array; median of {args.reps} launches after 3 warm-ups "
        "(CUDA events); GB/s = bytes read + written / time\n"
    )
    if stopped:
        header += f"\n**The run stopped early: {stopped}**\n"
    table.print(header)
    if sweep.rows or sweep.skipped:
        sweep.ceiling = table.ceiling
        sweep.print(
            "\nSweep of the warp-specialized copy (kernels.ws_copy: warp 0 loads tiles into a "
            "ring, warp 1 stores them; a few tiles per block on kernels.tiles_grid, or persistent "
            "blocks on kernels.ws_grid; each checked "
            "launch first fills y with NaN):\n"
        )
        for line in sweep.skipped:
            print(f"- not run (SMEM): {line}")
    if args.json:
        write_json(
            args.json,
            {"header": header.strip(), "reps": args.reps},
            table.json("main") + sweep.json("sweep"),
        )
    if args.plot:
        write_plot(args.plot, "bench_copy: copy bandwidth", plot_groups(table, sweep))
    sys.stdout.flush()
    if stopped:
        os._exit(3)  # a hung kernel would block a normal exit
    return 0


def _has(package: str) -> bool:
    try:
        version(package)
    except Exception:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
