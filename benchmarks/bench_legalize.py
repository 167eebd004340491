"""Bandwidth of each sm_90a builder kernel against its copy-legalize'd sm_80 and sm_86 forms.

    python3 benchmarks/bench_legalize.py [--reps 20]

x is 8192 x 8192 float32 (256 MiB, five times the H200's L2). For each kernel, the sm_90a
original (TMA loads on mbarriers, TMA stores or reductions) and the same kernel after
`copy-legalize{target=sm_80}` and `{target=sm_86}` (mbarrier-tracked cp.async loads on
the original barriers, thread stores or red.global atomics), each compiled to its own
target's PTX and assembled for sm_90 (`runtime.compile(..., arch="sm_90")`: an sm_80 cubin
does not load on sm_90). Time: median of `--reps` launches after warm-ups (CUDA events);
GB/s counts x read plus y written (a reduction: x and o read, o written), and each row's
ratio is to torch's copy of x in the same run. Each row's result is checked bit for bit
against torch (the row sums: against the sm_90a original's, which adds in its own order).
Prints a markdown table (for benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
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


def _flat(x):
    y = torch_module().empty_like(x).reshape(-1)
    return [x.reshape(-1), y], y, x.reshape(-1)


def _row_sums(x):
    s = torch_module().empty(x.shape[0], device=x.device)
    return [x, s], s, None


def torch_module():
    import torch

    return torch


def cases(sms: int) -> list[Case]:
    from copy_dialect import kernels

    shape, f32 = (M, N), "f32"
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
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()

    import torch

    from copy_tools import runtime

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.randn(M, N, device="cuda")
    out = torch.empty_like(x)
    torch_gbps = 2 * NBYTES / timed(lambda: out.copy_(x), args.reps) / 1e9
    rows = [("torch copy (y.copy_(x))", "-", "-", f"{torch_gbps:.0f}", "1.000", True)]
    for case in cases(sms):
        forms = [("sm_90a", case.build(), None)] + [
            (f"{t} legalized, as sm_90 SASS", legalized(case.build(), t), "sm_90")
            for t in LEGAL_TARGETS
        ]
        original = None
        for form, module, arch in forms:
            operands, result, expected = case.operands(x)
            launch = runtime.compile(module, arch=arch).kernel().prepare(*operands, grid=case.grid)
            launch()
            torch.cuda.synchronize()
            if original is None:
                original = result.clone()
            correct = bool(torch.equal(result, original if expected is None else expected))
            t = timed(launch, args.reps)
            launch.release()
            gbps = case.moved / t / 1e9
            rows.append(
                (
                    case.name,
                    form,
                    f"{t * 1e6:.1f}",
                    f"{gbps:.0f}",
                    f"{gbps / torch_gbps:.3f}",
                    correct,
                )
            )
    print(f"{torch.cuda.get_device_name()}; x {M}x{N} float32; median of {args.reps} launches")
    print("| kernel | form | us | GB/s | ratio to torch copy | bit-exact |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
