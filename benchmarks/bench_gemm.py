"""GEMM throughput on the GPU: `kernels.gemm` (warp-specialized, wgmma, sm_90a) against
`torch.matmul`, in the same run.

    python benchmarks/bench_gemm.py [--reps 20] [--shapes 4096x4096x4096,...]
        [--configs coop128,coop256,pingpong,cluster2] [--stages N] [--group G]
        [--no-verify] [--json PATH]

C = A * B^T with A M x K and B N x K (K-major, "TN"), bf16 in, f32 accumulation, bf16 out
(`--out f32` for f32 C). torch's row: `torch.matmul(a, b.T, out=c)` on the same tensors.
Each row is the median of `reps` timed launches after warm-ups (CUDA events,
`bench_common.measure`); TFLOP/s counts 2 * M * N * K. Each result is checked against
torch's f32 product: |c - ref| <= 2^-7 |ref| + K 2^-22 (|A| |B|^T) for 16-bit C (its
rounding, and f32 accumulation in any order), 2^-20 |ref| + K 2^-22 (|A| |B|^T) for f32 C
(torch's row is bf16 C either way: the ratio compares against it).
The copy-dialect rows run persistently on as many blocks as the GPU runs at once
(`gemm_grid(..., sms=...)` with the kernel's `max_active_clusters()`: one block per SM, or
fewer for a cluster of 2, whose blocks must share a GPC).
Prints a markdown table with the conditions (GPU, clocks, driver, versions, commit).
Without a GPU it says so and exits 0. Building a kernel verifies its protocol, which takes
0.5-2.6 s at 8192^3 on a 2-core machine (the pingpong schedule and `cluster2` the longest): the
kernels are built first, `--jobs` at a time in separate processes (default: one per CPU), and
then timed one after the other. `--stages` and `--group` pass `kernels.gemm`'s options of
those names to every configuration (default: its defaults); `--no-verify` builds without the
protocol proof (a sweep's kernels; the tests prove the configurations at smaller K).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from bench_common import Fatal, conditions, describe, device_limits, markdown, measure, recover

SHAPES = ((4096, 4096, 4096), (8192, 8192, 4096), (4001, 4104, 4000), (1000, 1000, 1000))
"""(M, N, K): two square-ish ones, and odd ones (edge tiles zero-filled and clipped)."""
CONFIGS = {
    # name: (tile, schedule, cluster)
    "coop128": ((128, 128, 64), "cooperative", 1),
    "coop256": ((128, 256, 64), "cooperative", 1),
    "pingpong": ((128, 128, 64), "pingpong", 1),
    "cluster2": ((128, 128, 64), "cooperative", 2),
    "cluster2_256": ((128, 256, 64), "cooperative", 2),
}
DEFAULT_CONFIGS = ("coop128", "coop256", "pingpong")


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    shapes = []
    for item in text.split(","):
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise SystemExit(f"expected shapes as MxNxK[,MxNxK...], got {item!r}")
        shapes.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return shapes


def build(shape, name, out, options=None) -> str:
    """The printed module of configuration `name` for `shape` (built, and verified unless
    `options` says verify=False; run in a worker process), or the error it raised, prefixed
    "error: "."""
    from frontends import kernels

    tile, schedule, cluster = CONFIGS[name]
    try:
        module = kernels.gemm(
            *shape, "bf16", out, tile, cluster=cluster, schedule=schedule, **(options or {})
        )
    except Exception as exc:
        return f"error: {type(exc).__name__}: {exc}"
    return str(module)


def build_all(shapes, configs, args) -> dict:
    """Every (shape, configuration)'s module text, built `args.jobs` at a time."""
    jobs = [(shape, name) for shape in shapes for name in configs]
    with ProcessPoolExecutor(max_workers=max(1, min(args.jobs, len(jobs)))) as pool:
        shapes_, names = [j[0] for j in jobs], [j[1] for j in jobs]
        chosen = {"stages": args.stages, "group": args.group}
        options = {k: v for k, v in chosen.items() if v is not None}
        options["verify"] = not args.no_verify
        texts = pool.map(build, shapes_, names, [args.out] * len(jobs), [options] * len(jobs))
        return dict(zip(jobs, texts, strict=True))


def bench_shape(shape, configs, args, sms, add, modules) -> None:
    """torch.matmul's row and each configuration's for one (M, N, K)."""
    import torch

    from copy_tools import runtime
    from frontends import kernels

    out_dtype = torch.bfloat16 if args.out == "bf16" else torch.float32
    m, n, k = shape
    gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
    ref = a.float() @ b.float().T
    summed = k * 2.0**-22 * (a.float().abs() @ b.float().abs().T)  # f32 accumulation
    bound = summed + (2.0**-7 if args.out == "bf16" else 2.0**-20) * ref.abs()
    c = torch.empty(m, n, device="cuda", dtype=out_dtype)
    # torch.matmul of bf16 tensors gives bf16 (f32 accumulation): its row is that form.
    c16 = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    loose = summed + 2.0**-7 * ref.abs()

    def check(result, tolerance) -> str:
        bad = ~((result.float() - ref).abs() <= tolerance)
        return "yes" if not bool(bad.any()) else f"no ({int(bad.sum())} elements off)"

    torch_s, reps = measure(lambda: torch.matmul(a, b.T, out=c16), "torch.matmul", args.reps)
    add(shape, "torch.matmul", torch_s, check(c16, loose), f"bf16 C, {reps} reps", torch_s)
    for name in configs:
        tile, schedule, cluster = CONFIGS[name]
        label = f"gemm {schedule} {'x'.join(map(str, tile))}" + (
            ", cluster 2" if cluster == 2 else ""
        )
        text = modules[(shape, name)]
        if text.startswith("error: "):
            add(shape, label, None, "failed", text[len("error: ") :][:200], None)
            continue
        try:
            # verified when built (build_all)
            kernel = runtime.compile(text, verify=False).kernel()
            # The persistent grid: the blocks the GPU runs at once (a cluster's blocks share
            # a GPC: fewer than one cluster of 2 per pair of SMs may fit), as CUTLASS sizes it.
            resident = min(sms, kernel.max_active_clusters() * cluster)
            grid = kernels.gemm_grid(m, n, tile, sms=resident, cluster=cluster, schedule=schedule)
            launch = kernel.prepare(a, b, c, grid=grid)
        except Exception as exc:
            add(shape, label, None, "failed", f"{type(exc).__name__}: {exc}"[:200], None)
            continue
        c.fill_(float("nan"))
        try:
            seconds, reps = measure(launch, label, args.reps)
        except Fatal:
            raise
        except Exception as exc:
            recover(label)
            add(shape, label, None, "failed", f"{type(exc).__name__}: {exc}"[:200], None)
            continue
        note = f"grid {grid[0]}, {reps} reps"
        add(shape, label, seconds, check(c, bound), note, torch_s)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in SHAPES))
    parser.add_argument("--configs", default=",".join(DEFAULT_CONFIGS))
    parser.add_argument("--out", choices=("bf16", "f32"), default="bf16")
    parser.add_argument("--json", help="also write the rows as JSON to this path")
    parser.add_argument("--stages", type=int, help="kernels.gemm's stages (default: its own)")
    parser.add_argument("--group", type=int, help="kernels.gemm's group (default: its own)")
    parser.add_argument("--no-verify", action="store_true", help="build without the protocol proof")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="kernels built at a time"
    )
    args = parser.parse_args(argv)
    shapes = parse_shapes(args.shapes)
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise SystemExit(f"expected configs among {', '.join(CONFIGS)}, got {unknown}")

    from copy_tools import runtime

    if not runtime.gpu_available():
        print("bench_gemm: no CUDA driver or GPU here; nothing measured")
        return 0

    limits = device_limits()
    found = conditions(limits)
    rows: list[list[object]] = []
    records: list[dict[str, object]] = []

    def add(shape, name, seconds, ok, note, torch_s) -> None:
        m, n, k = shape
        tflops = None if seconds is None else 2 * m * n * k / seconds / 1e12
        ratio = None if seconds is None or torch_s is None else torch_s / seconds
        rows.append(
            [
                "x".join(map(str, shape)),
                name,
                "-" if tflops is None else f"{tflops:.1f}",
                "-" if ratio is None else f"{ratio:.3f}",
                ok,
                note,
            ]
        )
        records.append(
            {"shape": shape, "kernel": name, "tflops": tflops, "ratio_torch": ratio, "ok": ok}
        )
        print(f"  {rows[-1]}", file=sys.stderr, flush=True)

    modules = build_all(shapes, configs, args)
    for shape in shapes:
        bench_shape(shape, configs, args, limits.sms, add, modules)

    print(describe(found))
    print(
        f"\nC = A B^T, bf16 in, {args.out} out; median of up to {args.reps} launches (CUDA "
        "events); TFLOP/s = 2 M N K / time; ratio = torch's time / the kernel's; stages "
        f"{args.stages or 'default'}, group {args.group or 'default (8)'}"
        f"{', built without the proof' if args.no_verify else ''}\n"
    )
    print(markdown(["M x N x K", "kernel", "TFLOP/s", "ratio to torch", "correct", "notes"], rows))
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump({"conditions": found, "rows": records}, f, indent=1, default=str)
    return 0 if all(r["ok"] in ("yes",) for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
