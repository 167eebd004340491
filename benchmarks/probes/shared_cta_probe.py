"""Probe (a measurement kept for benchmarks/RESULTS.md run 28, not one of the benchmarks): the
TMA copy kernels of bench_copy with their loads' destination switched from `.shared::cluster`
to PTX ISA 8.6's `.shared::cta` by editing the PTX, timed against the unedited kernels and
torch's copy, interleaved over 3 rounds. Needs a GPU and torch."""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from bench_common import timed

from copy_tools import runtime
from copy_tools.universe import make_context
from frontends import kernels
from passes import backend
from passes.pipeline import compile_module

M, N = 16384, 32768
LOAD = re.compile(
    r"cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
    r" \[(%rd\d+)\]"
)


def to_cta(ptx: str) -> tuple[str, int]:
    """The PTX with each load whose destination is `cvta.to.shared::cluster(cvta.shared(a))`
    rewritten to `.shared::cta` with `a`; the number of loads rewritten."""
    defs: dict[str, tuple[str, str]] = {}
    for line in ptx.splitlines():
        if m := re.match(r"\s*cvta\.to\.shared::cluster\.u64\s+(%rd\d+), (%rd\d+);", line):
            defs[m.group(1)] = ("cluster", m.group(2))
        if m := re.match(r"\s*cvta\.shared\.u64\s+(%rd\d+), (%rd\d+);", line):
            defs[m.group(1)] = ("generic", m.group(2))
    out, edited = [], 0
    for line in ptx.splitlines():
        m = LOAD.search(line)
        if m and defs.get(m.group(1), ("",))[0] == "cluster":
            generic = defs[m.group(1)][1]
            if defs.get(generic, ("",))[0] == "generic":
                line = line.replace("shared::cluster.global", "shared::cta.global")
                line = line.replace(f"[{m.group(1)}]", f"[{defs[generic][1]}]", 1)
                edited += 1
        out.append(line)
    return re.sub(r"\.version 8\.\d\b", ".version 8.6", "\n".join(out)), edited


def main() -> None:
    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    configs = [
        (
            f"pipelined {t[0]}x{t[1]}, {s} stages, {b} block(s)/SM",
            kernels.tma_copy_pipelined((M, N), "f32", t, stages=s),
            (b * sms,),
        )
        for t, s, b in [((128, 128), 3, 1), ((64, 128), 3, 2), ((64, 256), 3, 1), ((64, 128), 4, 1)]
    ] + [
        (f"1 tile/block {t[0]}x{t[1]}", kernels.tma_copy((M, N), "f32", t), kernels.grid((M, N), t))
        for t in [(128, 128), (64, 256), (256, 64)]
    ]
    rows = []
    for name, module, grid in configs:
        compiled = compile_module(module, make_context(), "sm_90a")
        ptx, edited = to_cta(compiled.ptx)
        total = compiled.ptx.count("shared::cluster.global.tile")
        launches = [
            runtime.Program(cubin, compiled.abi).kernel().prepare(x, y, grid=grid)
            for cubin in (compiled.cubin, backend.compile_cubin(ptx, "sm_90a"))
        ]
        for launch in launches:
            y.zero_()
            launch()
            torch.cuda.synchronize()
            assert torch.equal(x, y), name
        rows.append((name, launches, f"{edited}/{total}", ([], [])))
    torch_times = []
    for _ in range(3):
        torch_times.append(timed(lambda: y.copy_(x), 20))
        for _, launches, _, times in rows:
            for launch, into in zip(launches, times, strict=True):
                into.append(timed(launch, 20))
    gbs = 2 * M * N * 4 / 1e9
    t0 = statistics.median(torch_times)
    print(f"torch copy {gbs / t0:.0f} GB/s (median of 3 rounds x 20); x {M}x{N} f32")
    print("| kernel | loads edited | cluster GB/s | cta GB/s | cluster/torch | cta/torch |")
    for name, _, edited, (a, b) in rows:
        ta, tb = statistics.median(a), statistics.median(b)
        cells = [name, edited, f"{gbs / ta:.0f}", f"{gbs / tb:.0f}"]
        cells += [f"{t0 / ta:.3f}", f"{t0 / tb:.3f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
