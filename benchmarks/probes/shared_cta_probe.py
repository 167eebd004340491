"""Probe (a measurement kept for RESULTS.md run 28, not a benchmark of the suite): the TMA copy kernels with their loads' destination
switched from .shared::cluster to .shared::cta by editing the PTX, timed against the unedited
kernels and torch's copy, interleaved over 3 rounds."""
import re, statistics, sys
sys.path.insert(0, "benchmarks")
import torch
from bench_common import timed
from copy_dialect import kernels
from copy_tools.universe import make_context
from passes.pipeline import compile_module
from passes import backend

M, N = 16384, 32768

def to_cta(ptx):
    lines = ptx.split("\n")
    defs = {}
    for l in lines:
        m = re.match(r"\s*cvta\.to\.shared::cluster\.u64\s+(%rd\d+), (%rd\d+);", l)
        if m: defs[m.group(1)] = ("c", m.group(2))
        m = re.match(r"\s*cvta\.shared\.u64\s+(%rd\d+), (%rd\d+);", l)
        if m: defs[m.group(1)] = ("s", m.group(2))
    out, n = [], 0
    for l in lines:
        m = re.search(r"cp\.async\.bulk\.tensor\.(\d)d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes \[(%rd\d+)\]", l)
        if m and m.group(2) in defs and defs[m.group(2)][0] == "c" and defs.get(defs[m.group(2)][1], ("",))[0] == "s":
            src = defs[defs[m.group(2)][1]][1]
            l = l.replace(f"shared::cluster.global.tile", "shared::cta.global.tile").replace(f"[{m.group(2)}]", f"[{src}]", 1)
            n += 1
        out.append(l)
    s = "\n".join(out).replace(".version 8.0", ".version 8.6")
    return s, n

def build(module):
    c = compile_module(module, make_context(), "sm_90a")
    ptx2, n = to_cta(c.ptx)
    total = c.ptx.count("shared::cluster.global.tile")
    cub2 = backend.compile_cubin(ptx2, "sm_90a")
    from copy_tools import runtime
    return runtime.Program(c.cubin, c.abi), runtime.Program(cub2, c.abi), n, total

x = torch.randn(M, N, device="cuda"); y = torch.empty_like(x)
sms = torch.cuda.get_device_properties(0).multi_processor_count
cfgs = []
for tile, stages, per_sm in [((128, 128), 3, 1), ((64, 128), 3, 2), ((64, 256), 3, 1), ((64,128),4,1)]:
    cfgs.append((f"pipelined {tile} s{stages} x{per_sm}", kernels.tma_copy_pipelined((M, N), "f32", tile, stages=stages), (per_sm*sms,)))
for tile in [(128, 128), (64, 256), (256, 64)]:
    cfgs.append((f"1 tile {tile}", kernels.tma_copy((M, N), "f32", tile), kernels.grid((M, N), tile)))
progs = []
for name, mod, grid in cfgs:
    a, b, n, total = build(mod)
    la = a.kernel().prepare(x, y, grid=grid); lb = b.kernel().prepare(x, y, grid=grid)
    for l in (la, lb):
        y.zero_(); l(); torch.cuda.synchronize(); assert torch.equal(x, y), name
    progs.append((name, la, lb, n, total))
res = {p[0]: ([], []) for p in progs}; tor = []
for r in range(3):
    tor.append(timed(lambda: y.copy_(x), 20))
    for name, la, lb, n, total in progs:
        res[name][0].append(timed(la, 20)); res[name][1].append(timed(lb, 20))
t0 = statistics.median(tor)
print(f"torch copy {2*M*N*4/t0/1e9:.0f} GB/s (median of 3 rounds x 20 reps); x {M}x{N} f32")
print("| kernel | loads edited | cluster GB/s | cta GB/s | cluster/torch | cta/torch |")
for name, la, lb, n, total in progs:
    a, b = statistics.median(res[name][0]), statistics.median(res[name][1])
    print(f"| {name} | {n}/{total} | {2*M*N*4/a/1e9:.0f} | {2*M*N*4/b/1e9:.0f} | {t0/a:.3f} | {t0/b:.3f} |")
