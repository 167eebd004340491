"""Bandwidth of each sm_90a builder and example kernel against its copy-legalize'd sm_80 and
sm_86 forms.

    python3 benchmarks/bench_legalize.py [--reps 20] [--only NAME[,NAME...]]

x is 8192 x 8192 float32 (256 MiB, five times the H200's L2). For each kernel, the sm_90a
original (TMA loads on mbarriers, TMA stores or reductions) and the same kernel after
`copy-legalize{target=sm_80}` and `{target=sm_86}` (mbarrier-tracked cp.async loads on
the original barriers, thread stores or red.global atomics), each compiled to its own
target's PTX and assembled for sm_90 (`runtime.compile(..., arch="sm_90")`: an sm_80 cubin
does not load on sm_90). Time: median of `--reps` launches after warm-ups (CUDA events);
GB/s counts the bytes each launch must read and write (a copy: x read plus y written; a
reduction: x and o read, o written; the im2col gather: its input read once plus the matrix
written). Each row's ratio is to torch's copy, in the same run, of an array of the row's
reference size: x for the 8192 x 8192 kernels, the example's own array for the examples
(written for 4096 x 4096, and 1000 x 1000 for oob_copy.mlir), the pool for the grouped copy,
the matrix for the im2col gather. Each row's result is checked bit for bit against torch
(the row sums, the grouped copy and the im2col gather: against the sm_90a original's).
Prints a markdown table (for benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import timed  # noqa: E402

M = N = 8192
NBYTES = M * N * 4


LEGAL_TARGETS = ("sm_80", "sm_86")


def legalized(module, target: str):
    from xdsl.parser import Parser

    from copy_tools.universe import make_context
    from passes.legalize import CopyLegalizePass

    copy = Parser(make_context(), str(module)).parse_module()
    CopyLegalizePass(target=target).apply(make_context(), copy)
    return copy


@dataclass(frozen=True)
class Case:
    """One builder kernel: how to build it, launch it and check it."""

    name: str
    build: Callable[[], Any]
    grid: tuple[int, ...]
    operands: Callable[[Any], tuple[list[Any], Any, Any]]
    """x (torch, f32 M x N) -> (the kernel's arguments, its output, the expected output; None:
    the sm_90a original's, where torch does not add in the kernel's order)."""
    moved: int
    """Bytes read plus bytes written."""
    reference: int = NBYTES
    """Bytes of the array whose torch copy this row is compared with."""


def _copy(x):
    y = torch_module().empty_like(x)
    return [x, y], y, x


def _reduce(x):
    y = torch_module().randn_like(x)
    return [x, y], y, y + x


def _add(x):
    torch = torch_module()
    y, z = torch.randn_like(x), torch.empty_like(x)
    return [x, y, z], z, x + y


def _broadcast(cluster: int):
    def operands(x):
        y = torch_module().empty((cluster, *x.shape), dtype=x.dtype, device=x.device)
        return [x, y], y, x.expand(cluster, *x.shape)

    return operands


def _exchange(reduce: bool):
    """dsmem_exchange in clusters of 2, 64-column tiles: each tile column gets its
    neighbour's tile (pairs swap), plus its own with `reduce` (int32, wrapping)."""

    def operands(x):
        if reduce:
            x = x.view(torch_module().int32)
        y = torch_module().empty_like(x)
        swapped = x.view(M, N // 128, 2, 64).flip(2).reshape(M, N)
        return [x, y], y, swapped + x if reduce else swapped

    return operands


def _flat(x):
    y = torch_module().empty_like(x).reshape(-1)
    return [x.reshape(-1), y], y, x.reshape(-1)


def _example_input(shape):
    def operands(x):
        torch = torch_module()
        rows, cols = shape[0] * (shape[1] if len(shape) == 3 else 1), shape[-1]
        src = x[:rows, :cols].reshape(shape).contiguous()
        y = torch.empty_like(src)
        return [src, y], y, src

    return operands


def _example_reduce(shape):
    def operands(x):
        src = x[: shape[0], : shape[1]].contiguous()
        o = x[-shape[0] :, -shape[1] :].contiguous()
        return [src, o], o, o + src

    return operands


def _multicast_view(x):
    view = x.reshape(M // 32, 32, N)
    y = torch_module().empty_like(view)
    return [view, y], y, view


GROUPS = [(4096, 4100), (3001, 2999), (2048, 2048), (1, 8191), (513, 77)]
"""The grouped copy's groups: odd rows and columns, a one-row group, a narrow one."""
GROUP_TILE = (32, 128)


def _grouped_table():
    from frontends import kernels

    table = kernels.grouped_layout(GROUPS, "f32")
    capacity = max(off + rows * pitch for off, rows, _, pitch in table)
    return table, capacity


def _grouped(x):
    torch = torch_module()
    table, capacity = _grouped_table()
    src = x.reshape(-1)[:capacity]
    off, rows, _, pitch = table[0]
    first = src[off : off + rows * pitch].reshape(rows, pitch).contiguous()
    meta = torch.tensor(table, dtype=torch.int64, device=x.device)
    dst = torch.full((capacity,), -7.0, device=x.device)
    return [first, meta, src, dst], dst, None


def _grouped_bytes() -> int:
    return 2 * 4 * sum(rows * cols for rows, cols in GROUPS)


CONV = ((16, 56, 56, 64), 3, 1, 1)
"""The im2col gather's convolution: NHWC 16 x 56 x 56 x 64 f16, 3 x 3 filter, stride 1,
padding 1 (a ResNet layer's shape): a 50176 x 576 matrix."""


def _conv():
    from frontends import kernels

    shape, filt, stride, padding = CONV
    return kernels.conv2d(shape, filt, stride=stride, padding=padding)


def _im2col(x):
    torch = torch_module()
    conv = _conv()
    src = x.reshape(-1)[: prod(conv.shape)].to(torch.float16).reshape(conv.shape)
    y = torch.full(conv.matrix, -7.0, dtype=torch.float16, device=x.device)
    return [src, y], y, None


def _im2col_bytes() -> tuple[int, int]:
    conv = _conv()
    matrix = prod(conv.matrix) * 2
    return prod(conv.shape) * 2 + matrix, matrix


def _example(name: str):
    from importlib import resources

    from xdsl.parser import Parser

    from copy_tools.universe import make_context

    text = (resources.files("copy_tools.examples") / name).read_text()
    return lambda: Parser(make_context(), text).parse_module()


EXAMPLE_BYTES = 4096 * 4096 * 4


def _row_sums(x):
    s = torch_module().empty(x.shape[0], device=x.device)
    return [x, s], s, None


def torch_module():
    import torch

    return torch


def cases(sms: int) -> list[Case]:
    from frontends import kernels

    shape, f32 = (M, N), "f32"
    table, capacity = _grouped_table()
    im2col_moved, matrix = _im2col_bytes()
    oob = 1000 * 1000 * 4
    return [
        Case("tma_copy 64x64", lambda: kernels.tma_copy(shape, f32),
             kernels.grid(shape, (64, 64)), _copy, 2 * NBYTES),
        Case("tma_copy 64x32 swizzle 128",
             lambda: kernels.tma_copy(shape, f32, (64, 32), swizzle=128),
             kernels.grid(shape, (64, 32)), _copy, 2 * NBYTES),
        Case("tma_copy_pipelined 64x64, 3 stages",
             lambda: kernels.tma_copy_pipelined(shape, f32, (64, 64), stages=3), (2 * sms, 1),
             _copy, 2 * NBYTES),
        Case("tma_copy 64x64, dynamic shape", lambda: kernels.tma_copy(shape, f32, dynamic=True),
             kernels.grid(shape, (64, 64)), _copy, 2 * NBYTES),
        Case("tma_copy reduce add", lambda: kernels.tma_copy(shape, f32, reduce="add"),
             kernels.grid(shape, (64, 64)), _reduce, 3 * NBYTES),
        Case("bulk_copy 1-D, 4096-element boxes", lambda: kernels.bulk_copy(M * N, f32, 4096),
             (M * N // 4096, 1), _flat, 2 * NBYTES),
        Case("broadcast_copy 64x256, cluster 2, multicast",
             lambda: kernels.broadcast_copy(shape, f32, (64, 256), cluster=2),
             kernels.broadcast_grid(shape, (64, 256), 2), _broadcast(2), 3 * NBYTES),
        Case("ws_copy 32x256, 2 stages, 1 tile/block",
             lambda: kernels.ws_copy(shape, f32, (32, 256), stages=2),
             kernels.tiles_grid(shape, (32, 256)), _copy, 2 * NBYTES),
        Case("ws_row_sum 32x256, 2 stages, 8 warps, 1/SM",
             lambda: kernels.ws_row_sum(shape, f32, (32, 256), stages=2, consumer_warps=8),
             kernels.ws_grid(sms), _row_sums, NBYTES + M * 4),
        Case("ws_elementwise add 16x256, 1 stage, 1 tile/block",
             lambda: kernels.ws_elementwise("add", shape, f32, (16, 256), stages=1),
             kernels.tiles_grid(shape, (16, 256)), _add, 3 * NBYTES),
        # The same three kernels in configurations that suit thread copies too: the legalized
        # producer is a warp issuing every cp.async chunk and the storer a warp storing every
        # element, so they need more blocks on an SM than the sm_90a kernels' TMA issuers.
        Case("ws_copy 8x256, 2 stages, 1 tile/block",
             lambda: kernels.ws_copy(shape, f32, (8, 256), stages=2),
             kernels.tiles_grid(shape, (8, 256)), _copy, 2 * NBYTES),
        Case("ws_row_sum 32x256, 2 stages, 8 warps, 3/SM",
             lambda: kernels.ws_row_sum(shape, f32, (32, 256), stages=2, consumer_warps=8),
             kernels.ws_grid(sms, 3), _row_sums, NBYTES + M * 4),
        Case("ws_elementwise add 8x256, 2 stages, 1 tile/block",
             lambda: kernels.ws_elementwise("add", shape, f32, (8, 256), stages=2),
             kernels.tiles_grid(shape, (8, 256)), _add, 3 * NBYTES),
        # DSMEM: the legalized forms fold each cluster into one block, a role per CTA.
        Case("dsmem_exchange 64x64, cluster 2, st.async",
             lambda: kernels.dsmem_exchange(shape, f32),
             kernels.exchange_grid(shape, (64, 64), 2), _exchange(False), 2 * NBYTES),
        Case("dsmem_exchange 64x64, cluster 2, bulk SMEM -> SMEM",
             lambda: kernels.dsmem_exchange(shape, f32, mode="bulk"),
             kernels.exchange_grid(shape, (64, 64), 2), _exchange(False), 2 * NBYTES),
        Case("dsmem_exchange 64x64, cluster 2, red.async add (i32; x read twice)",
             lambda: kernels.dsmem_exchange(shape, "i32", mode="reduce"),
             kernels.exchange_grid(shape, (64, 64), 2), _exchange(True), 3 * NBYTES),
        Case("multicast_copy 64x64, cluster 2", lambda: kernels.multicast_copy(shape, f32),
             (2 * N // 64, M // 64), _multicast_view, 2 * NBYTES),
        Case(f"grouped_copy {GROUP_TILE[0]}x{GROUP_TILE[1]}, {len(GROUPS)} odd groups",
             lambda: kernels.grouped_copy(len(table), capacity, (4096, 8191), f32, GROUP_TILE),
             kernels.grouped_grid((4096, 8191), GROUP_TILE, len(table)), _grouped,
             _grouped_bytes(), capacity * 4),
        Case("im2col_gather f16 16x56x56x64, 3x3, 64 pixels",
             lambda: kernels.im2col_gather(_conv(), "f16"), kernels.im2col_grid(_conv()),
             _im2col, im2col_moved, matrix),
        Case("example tma_tile_copy.mlir", _example("tma_tile_copy.mlir"), (64, 64),
             _example_input((4096, 4096)), 2 * EXAMPLE_BYTES, EXAMPLE_BYTES),
        Case("example oob_copy.mlir (1000x1000)", _example("oob_copy.mlir"), (16, 16),
             _example_input((1000, 1000)), 2 * oob, oob),
        Case("example multicast_copy.mlir", _example("multicast_copy.mlir"), (128, 64),
             _example_input((128, 32, 4096)), 2 * EXAMPLE_BYTES, EXAMPLE_BYTES),
        Case("example swizzled_copy.mlir", _example("swizzled_copy.mlir"), (128, 64),
             _example_input((4096, 4096)), 2 * EXAMPLE_BYTES, EXAMPLE_BYTES),
        Case("example reduce_add.mlir", _example("reduce_add.mlir"), (64, 64),
             _example_reduce((4096, 4096)), 3 * EXAMPLE_BYTES, EXAMPLE_BYTES),
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument(
        "--only", default="", help="comma-separated words: the kernels whose name has one"
    )
    args = parser.parse_args()

    import torch

    from copy_tools import runtime

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.randn(M, N, device="cuda")
    references: dict[int, float] = {}

    def torch_copy(nbytes: int) -> float:
        """GB/s of torch's copy of an `nbytes` float32 array (at most x's size), measured once
        per size."""
        if nbytes not in references:
            src = x.reshape(-1)[: nbytes // 4]
            out = torch.empty_like(src)
            references[nbytes] = 2 * nbytes / timed(lambda: out.copy_(src), args.reps) / 1e9
        return references[nbytes]

    torch_gbps = torch_copy(NBYTES)
    rows = [("torch copy (y.copy_(x)), x", "-", "-", f"{torch_gbps:.0f}", "1.000", True)]
    words = [w for w in args.only.split(",") if w]
    for case in cases(sms):
        if words and not any(w in case.name for w in words):
            continue
        if case.reference != NBYTES:
            ref = torch_copy(case.reference)
            rows.append((f"torch copy, {case.reference / 2**20:.1f} MiB", "-", "-",
                         f"{ref:.0f}", "1.000", True))  # fmt: skip
        else:
            ref = torch_gbps
        original = None
        for form, target in [("sm_90a", None)] + [
            (f"{t} legalized, as sm_90 SASS", t) for t in LEGAL_TARGETS
        ]:
            try:
                module = case.build() if target is None else legalized(case.build(), target)
                program = runtime.compile(module, arch=None if target is None else "sm_90")
                operands, result, expected = case.operands(x)
                launch = program.kernel().prepare(*operands, grid=case.grid)
            # The table says which form failed, and why.
            except Exception as exc:  # noqa: BLE001
                rows.append((case.name, form, "-", "-", "-", f"not run: {exc}".splitlines()[0]))
                continue
            launch()
            torch.cuda.synchronize()
            if original is None:
                original = result.clone()
            correct = bool(torch.equal(result, original if expected is None else expected))
            t = timed(launch, args.reps)
            launch.release()
            gbps = case.moved / t / 1e9
            rows.append(
                (case.name, form, f"{t * 1e6:.1f}", f"{gbps:.0f}", f"{gbps / ref:.3f}", correct)
            )
    print(f"{torch.cuda.get_device_name()}; x {M}x{N} float32; median of {args.reps} launches")
    print("| kernel | form | us | GB/s | ratio to torch copy | bit-exact |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
