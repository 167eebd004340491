"""Two leads for issue H's bandwidth misses, timed interleaved with torch (3 rounds x `--reps`
launches, median of each), every result checked:

1. How a block ends. Each one-tile TMA copy block waits for its store to *complete*
   (`cp.async.bulk.wait_group 0`) before it exits; CUTLASS's epilogues end on
   `cp.async.bulk.wait_group.read 0` (the writes complete with the grid; rule P7 accepts it).
   Also: blocks of 32 threads instead of 128, and no tensor-map prefetch at entry.
2. How the warp-specialized kernels are launched: persistent (`ws_grid(sms)`) against one
   block per tile (the same kernel on `tiles_grid`: each block's ring turns once).

    python3 benchmarks/probes/exit_and_grid_probe.py [--reps 20] [--part copy,ws]

RESULTS.md run 36 has its output.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_common import timed  # noqa: E402

M, N = 16384, 32768
CM, CN = 16384, 16384
COPY_VARIANTS = {
    "as built (wait_group 0, 128 thr)": {},
    "exit on wait_group.read": {"read_only": True},
    "read + 32 threads": {"read_only": True, "block": 32},
    "read + no tmap prefetch": {"read_only": True, "prefetch": False},
    "read + 32 thr + no prefetch": {"read_only": True, "block": 32, "prefetch": False},
}
WS_COPY = [  # (tile, stages, in flight, "ws" persistent | "tiles" one block per tile)
    ((64, 256), 3, 2, "ws"),
    ((64, 256), 1, 0, "tiles"),
    ((32, 256), 1, 0, "tiles"),
    ((32, 256), 2, 1, "tiles"),
    ((16, 256), 1, 0, "tiles"),
]
WS_CASES = [
    ("add", "f32", None),
    ("add", "bf16", None),
    ("axpb", "f32", None),
    ("cast", "f32", "bf16"),
]
WS_CONFIGS = [  # (tile, stages, consumer warps, grid)
    ((64, 128), 2, 8, "ws"),
    ((32, 256), 2, 8, "ws"),
    ((32, 128), 1, 4, "tiles"),
    ((32, 128), 1, 8, "tiles"),
    ((32, 256), 1, 8, "tiles"),
    ((16, 256), 1, 4, "tiles"),
    ((64, 128), 1, 8, "tiles"),
    ((32, 128), 2, 4, "tiles"),
]


def variant(module, *, read_only=False, block=None, prefetch=True):
    """`module` with its final bulk waits read-only, another block size, or no tensor-map
    prefetch; verified again."""
    from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, UnitAttr, i1, i32

    from analysis.verify import verify_module
    from copy_dialect import ops as copy

    for op in module.walk():
        if read_only and isinstance(op, copy.WaitGroupOp):
            if op.group.data.value == "bulk" and op.pending.value.data == 0:
                op.properties["read_only"] = UnitAttr()
        if op.name == "func.func":
            if block is not None:
                op.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, [block, 1, 1])
            if not prefetch:
                op.attributes["copy.prefetch_tensormaps"] = IntegerAttr(0, i1)
    verify_module(module)
    return module


def interleaved(base, fn, reps, check, reset):
    """Median seconds of `base` and of `fn` over 3 alternating rounds, and `check()`."""
    bt, ot = [], []
    for _ in range(3):
        bt.append(timed(base, reps))
        reset()
        ot.append(timed(fn, reps))
    return statistics.median(bt), statistics.median(ot), check()


def row(*cells) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def copy_part(reps: int) -> None:
    import torch

    from copy_tools import runtime
    from frontends import kernels

    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    nbytes = 2 * M * N * 4

    def measure(launch):
        return interleaved(
            lambda: y.copy_(x), launch, reps, lambda: bool(torch.equal(x, y)), y.zero_
        )

    print(f"\n## TMA copies, {M}x{N} f32, GB/s = read + written; torch copy in the same rounds")
    row("kernel", "variant", "torch GB/s", "ours GB/s", "ratio", "correct")
    row(*["---"] * 6)
    for box in [(32, 256), (64, 256), (16, 256), (128, 128)]:
        for name, kw in COPY_VARIANTS.items():
            module = variant(kernels.tma_copy((M, N), "f32", box), **kw)
            launch = runtime.compile(module).kernel().prepare(x, y, grid=kernels.grid((M, N), box))
            t, o, ok = measure(launch)
            launch.release()
            row(f"tma_copy {box[0]}x{box[1]}", name, f"{nbytes / t / 1e9:.0f}",
                f"{nbytes / o / 1e9:.0f}", f"{t / o:.3f}", ok)  # fmt: skip
    for tile, stages, in_flight, mode in WS_COPY:
        for read_only in (False, True):
            built = kernels.ws_copy((M, N), "f32", tile, stages=stages, in_flight=in_flight)
            module = variant(built, read_only=read_only)
            grid = kernels.ws_grid(132) if mode == "ws" else kernels.tiles_grid((M, N), tile)
            launch = runtime.compile(module).kernel().prepare(x, y, grid=grid)
            t, o, ok = measure(launch)
            launch.release()
            row(f"ws_copy {tile[0]}x{tile[1]} s{stages} f{in_flight} grid {grid[0]}",
                f"read={read_only}", f"{nbytes / t / 1e9:.0f}", f"{nbytes / o / 1e9:.0f}",
                f"{t / o:.3f}", ok)  # fmt: skip


def ws_case(op: str, dtype: str, out: str | None, reps: int) -> None:
    import torch

    from copy_tools import runtime
    from frontends import kernels

    types = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(CM, CN, device="cuda", generator=g).to(types[dtype])
    y = torch.randn(CM, CN, device="cuda", generator=g).to(types[dtype])
    z = torch.empty(CM, CN, device="cuda", dtype=types[out or dtype])
    ref = torch.empty_like(z)
    tmp = torch.empty_like(x)
    if op == "add":
        args, nbytes = (x, y, z), CM * CN * (2 * x.element_size() + z.element_size())

        def base():
            torch.add(x, y, out=ref)
    elif op == "axpb":  # the two-kernel torch form (bench_compute has the fastest one)
        args, nbytes = (x, z, 1.5, 0.25), CM * CN * (x.element_size() + z.element_size())

        def base():
            torch.add(torch.mul(x, 1.5, out=tmp), 0.25, out=ref)
    else:
        args, nbytes = (x, z), CM * CN * (x.element_size() + z.element_size())

        def base():
            ref.copy_(x)

    def check() -> bool:
        if op == "axpb":
            return bool(torch.allclose(z.float(), ref.float(), rtol=1e-2, atol=1e-2))
        return bool(torch.equal(z, ref))

    base()
    for tile, stages, warps, mode in WS_CONFIGS:
        for read_only in (False, True) if mode == "tiles" else (False,):
            built = kernels.ws_elementwise(
                op, (CM, CN), dtype, tile, out_dtype=out, stages=stages, consumer_warps=warps
            )
            grid = kernels.ws_grid(132) if mode == "ws" else kernels.tiles_grid((CM, CN), tile)
            module = variant(built, read_only=read_only)
            launch = runtime.compile(module).kernel().prepare(*args, grid=grid)
            t, o, ok = interleaved(base, launch, reps, check, z.zero_)
            launch.release()
            config = f"{tile[0]}x{tile[1]} s{stages} w{warps} read={read_only}"
            rates = (f"{nbytes / t / 1e9:.0f}", f"{nbytes / o / 1e9:.0f}", f"{t / o:.3f}")
            row(op, f"{dtype}->{out}" if out else dtype, config, grid[0], *rates, ok)


def ws_part(reps: int) -> None:
    import torch

    print(f"\n## ws_elementwise, {CM}x{CN}: persistent (132 blocks) against one block per tile")
    row("op", "dtype", "config", "grid", "torch GB/s", "ours GB/s", "ratio", "correct")
    row(*["---"] * 8)
    for op, dtype, out in WS_CASES:
        ws_case(op, dtype, out, reps)
        torch.cuda.empty_cache()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--part", default="copy,ws")
    args = parser.parse_args()
    import torch

    torch.empty(1, device="cuda")
    print(torch.cuda.get_device_name(), f"{args.reps} reps x 3 rounds, median")
    parts = args.part.split(",")
    if "copy" in parts:
        copy_part(args.reps)
        torch.cuda.empty_cache()
    if "ws" in parts:
        ws_part(args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
