"""Programmatic dependent launch on the GPU: `kernels.pdl_chain` (produce: y = 2 x + 1;
consume: z = w y + w) timed with and without PDL, in the same run.

    python benchmarks/bench_pdl.py [--reps 50] [--chains 20] [--sizes 16896,67584,...]
        [--triggers start,end] [--graph] [--json PATH]

Each row times `--chains` chains issued back to back on one stream (produce, consume,
produce, consume, ...; no synchronization between them) and reports the median time of one
chain (CUDA events around the whole run, divided by the chains; median of `--reps` runs,
`bench_common.measure`). "PDL" launches `consume` with programmatic stream serialization
(the runtime's default for a kernel that waits: its ABI's `grid_dependent`), so that it may
start while `produce` drains and load w before its `griddepcontrol.wait`; "no PDL" launches
the same code without the attribute (the wait then returns at once: `consume` starts only
once `produce` completed). Both kernels are one element per thread, 128 threads a block:
short, latency-bound launches, where PDL's overlap shows. Every row's result is checked
against numpy (z, bit for bit) after its timed runs. Prints a markdown table with the
conditions (GPU, clocks, driver, versions, commit). Without a GPU it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bench_common import conditions, describe, device_limits, markdown, measure

SIZES = (128 * 132, 128 * 132 * 4, 128 * 132 * 16)
"""Elements: one block per SM of an H100/H200 (132), four, sixteen."""


def parse_ints(text: str, what: str) -> list[int]:
    items = [t for t in text.split(",") if t]
    if not items or not all(t.isdigit() for t in items):
        raise SystemExit(f"expected {what} as N[,N...], got {text!r}")
    return [int(t) for t in items]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--chains", type=int, default=20)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--triggers", default="start,end")
    parser.add_argument("--json", help="also write the rows as JSON to this path")
    parser.add_argument(
        "--graph",
        action="store_true",
        help="time the chains replayed from a CUDA graph (captured once), not launched by the "
        "host: what is left is the GPU's time (a host-bound chain of short kernels measures "
        "the launches otherwise)",
    )
    args = parser.parse_args(argv)
    sizes = parse_ints(args.sizes, "sizes")
    triggers = [t for t in args.triggers.split(",") if t]
    if any(t not in ("start", "end") for t in triggers) or not triggers:
        raise SystemExit(f"expected triggers among start,end, got {args.triggers!r}")
    if args.chains < 1 or args.reps < 1:
        raise SystemExit("expected --chains and --reps of at least 1")

    from copy_tools import runtime

    if not runtime.gpu_available():
        print("bench_pdl: no CUDA driver or GPU here; nothing measured")
        return 0

    import numpy as np
    import torch
    from cuda.bindings import driver

    from frontends import kernels

    found = conditions(device_limits())
    rows: list[list[object]] = []
    records: list[dict[str, object]] = []
    stream = torch.cuda.Stream()
    handle = driver.CUstream(stream.cuda_stream)
    for n in sizes:
        rng = np.random.default_rng(n)
        x_host = rng.standard_normal(n).astype(np.float32)
        w_host = rng.standard_normal(n).astype(np.float32)
        want = w_host * (x_host * np.float32(2) + np.float32(1)) + w_host
        x, w = torch.from_numpy(x_host).cuda(), torch.from_numpy(w_host).cuda()
        y = torch.empty(n, device="cuda")
        z = torch.empty(n, device="cuda")
        grid = kernels.pdl_grid(n)
        for trigger in triggers:
            program = runtime.compile(kernels.pdl_chain(n, trigger=trigger))
            timings: dict[str, float] = {}
            for name, programmatic in (("no PDL", False), ("PDL", None)):
                produce = program.kernel("produce").prepare(x, y, grid=grid, stream=handle)
                consume = program.kernel("consume").prepare(
                    w, y, z, grid=grid, stream=handle, programmatic=programmatic
                )

                def chains(produce=produce, consume=consume) -> None:
                    for _ in range(args.chains):
                        produce()
                        consume()

                timed = chains
                if args.graph:
                    # the launches go to `handle`, the capturing stream: the graph holds the
                    # chains, with programmatic edges where the launch is programmatic
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph, stream=stream):
                        chains()
                    timed = graph.replay
                with torch.cuda.stream(stream):
                    z.fill_(float("nan"))
                    seconds, used = measure(timed, f"pdl chain n={n} {name}", args.reps)
                stream.synchronize()
                ok = bool(np.array_equal(z.cpu().numpy(), want))
                produce.release()
                consume.release()
                per_chain = seconds / args.chains
                timings[name] = per_chain
                rows.append(
                    [
                        n,
                        grid[0],
                        trigger,
                        name,
                        f"{per_chain * 1e6:.2f}",
                        "-" if name == "no PDL" else f"{timings['no PDL'] / per_chain:.3f}",
                        used,
                        "yes" if ok else "NO",
                    ]
                )
                records.append(
                    {
                        "n": n,
                        "blocks": grid[0],
                        "trigger": trigger,
                        "launch": name,
                        "us_per_chain": per_chain * 1e6,
                        "reps": used,
                        "ok": ok,
                    }
                )
                print(f"  {rows[-1]}", file=sys.stderr, flush=True)

    print(describe(found))
    print(
        f"\nproduce (y = 2x + 1) then consume (z = w y + w), f32, 128 threads a block, one "
        f"element a thread; {args.chains} chains back to back on one stream per timed run, "
        f"median of up to {args.reps} runs (CUDA events) / {args.chains}"
        f"{', replayed from a CUDA graph' if args.graph else ', launched by the host'}; "
        "speedup = no PDL's time / PDL's\n"
    )
    print(
        markdown(
            ["elements", "blocks", "trigger", "launch", "us per chain", "speedup", "reps", "ok"],
            rows,
        )
    )
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump({"conditions": found, "rows": records}, f, indent=1, default=str)
    return 0 if all(r["ok"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
