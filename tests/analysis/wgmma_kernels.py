"""Warp-specialized GEMM mainloops whose consumers read their ring slots with wgmma through
SMEM descriptors, as CUTLASS's sm90 kernels do (`collective/sm90_mma_tma_gmma_ss_warpspecialized`),
written for the protocol analysis's tests (test_protocol_wgmma.py) and the lit kernels
protocol-wgmma.mlir and invalid-protocol-wgmma.mlir; `tcgen05_kernel` is the sm_100a form.

Role 0 (a warpgroup, as CUTLASS's producer warpgroup: the consumer's warps must be a
warpgroup of the block, warps 4..7) is the TMA producer: for each k-block k it waits on
empty[k mod S] (from the second lap on) and loads A (64x64 f16) and B (64x64 f16, K-major,
128B-swizzled) into slot k mod S, both loads arriving on full[k mod S]. Role 1 (one
warpgroup) is the consumer: it waits on full[k mod S], takes the slots' descriptors, issues
`steps` m64n64k16 wgmmas along K (the descriptors plus 2, 32 bytes >> 4, per step), commits
them as one group and waits until at most `depth` groups are in flight; it then releases
the slot whose group that wait retired: slot k mod S for depth 0, slot (k - depth) mod S
otherwise, and after the loop, once `wgmma.wait_group 0` retired every group, the slots of
the last `depth` k-blocks. The trip count is K / 64 for a kernel argument K, so the
analysis proves every count.

`bug` makes one mistake: `release_before_wait` (the release before the group's wait),
`release_newest` (the wait of `depth` groups, then the release of slot k, whose group is the
newest, still in flight), `no_commit` (no commit: the wait retires nothing), `exit` (no wait
after the loop: the role ends with its last groups in flight), `declared` (the wgmmas are one
`llvm.inline_asm` that declares `async_read ... until wgmma_wait_group` on both descriptors,
released before the wait)."""

from __future__ import annotations

N = 64
ACC = "!llvm.struct<(" + ", ".join(["f32"] * (N // 2)) + ")>"
BUGS = ("release_before_wait", "release_newest", "no_commit", "exit", "declared")


def kernel(
    stages: int = 4,
    depth: int = 1,
    bug: str | None = None,
    steps: int = 4,
    producer_warps: int = 4,
) -> str:
    """The kernel's text (one module). `producer_warps`: the producer role's warps (4, a
    warpgroup, as CUTLASS's; else the consumer's warps are not a warpgroup of the block)."""
    s = stages
    ta = f"memref<{s}x64x64xf16, #copy.smem<swizzle = 128>>"
    tb = f"memref<{s}x{N}x64xf16, #copy.smem<swizzle = 128>>"
    bar = f"!copy.barrier<{s}>"
    name = f"ws_wgmma_s{s}_d{depth}" + (f"_{bug}" if bug else "")
    lines = [
        'builtin.module attributes {copy.target = #copy.target<"sm_90a">} {',
        f"  func.func @{name}(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, "
        "%C: memref<128x64xf32>, %K: index) attributes {gpu.kernel, gpu.known_block_size "
        f"= array<i32: {32 * (producer_warps + 4)}, 1, 1>}} {{",
    ]
    w = lines.append
    for c in sorted({0, 1, 2, s, depth, 32, 64}):
        w(f"    %c{c} = arith.constant {c} : index")
    w("    %k_tiles = arith.divui %K, %c64 : index")
    w(f"    %smem_a = copy.alloc_smem : {ta}")
    w(f"    %smem_b = copy.alloc_smem : {tb}")
    w(f"    %full = copy.barrier_init arrivals 2 : {bar}")
    w(f"    %empty = copy.barrier_init arrivals 4 : {bar}")
    w(f"    copy.warp_specialize warps [{producer_warps}, 4] {{")
    w("    ^bb0(%t: index):")
    # Only the producer warpgroup's first warp runs the loop (CUTLASS's producer warp): the
    # other warps would wait on empty[s] for nothing, and could lag two phases behind.
    w("      %producer_warp = arith.divui %t, %c32 : index")
    w("      %first_warp = arith.cmpi eq, %producer_warp, %c0 : index")
    w("      scf.if %first_warp {")
    producer = len(lines)
    w("      scf.for %k = %c0 to %k_tiles step %c1 {")
    w(f"        %s = arith.remui %k, %c{s} : index")
    w(f"        %lap = arith.divui %k, %c{s} : index")
    w(f"        %again = arith.cmpi uge, %k, %c{s} : index")
    w("        scf.if %again {")
    w("          %prev = arith.subi %lap, %c1 : index")
    w("          %pm = arith.remui %prev, %c2 : index")
    w("          %pp = arith.cmpi ne, %pm, %c0 : index")
    w(f"          copy.barrier_wait %empty[%s], %pp : {bar}")
    w("        }")
    w("        %k0 = arith.muli %k, %c64 : index")
    for m, t in (("A", ta), ("B", tb)):
        w(
            f"        copy.async_copy %{m}[%c0, %k0] to %smem_{m.lower()}[%s] barrier "
            f"%full[%s] : memref<1024x1024xf16> to {t}, {bar}"
        )
    w("      }")
    lines[producer:] = ["  " + line for line in lines[producer:]]
    w("      }")
    w("    }, {")
    w("    ^bb0(%t: index):")
    w(f"      %zero = llvm.mlir.zero : {ACC}")
    w("      %two = arith.constant 2 : i64")
    w(f"      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%d = %zero) -> ({ACC}) {{")
    w(f"        %s = arith.remui %k, %c{s} : index")
    w(f"        %lap = arith.divui %k, %c{s} : index")
    w("        %lm = arith.remui %lap, %c2 : index")
    w("        %lp = arith.cmpi ne, %lm, %c0 : index")
    w(f"        copy.barrier_wait %full[%s], %lp : {bar}")
    w(f"        %da0 = copy.matrix_descriptor %smem_a[%s] major k : {ta} -> i64")
    w(f"        %db0 = copy.matrix_descriptor %smem_b[%s] major k : {tb} -> i64")
    w("        nvvm.wgmma.fence.aligned")
    last = "%d"
    if bug == "declared":
        w(
            '        llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n64k16'
            '.f32.f16.f16 {...}, $0, $1, p, 1, 1, 0, 0;", "l,l" %da0, %db0 {copy.effects = '
            "[#copy.effect<async_read 0 until wgmma_wait_group>, #copy.effect<async_read 1 "
            "until wgmma_wait_group>]} : (i64, i64) -> ()"
        )
    for j in range(steps if bug != "declared" else 0):
        if j:
            w(f"        %da{j} = arith.addi %da{j - 1}, %two : i64")
            w(f"        %db{j} = arith.addi %db{j - 1}, %two : i64")
        w(
            f"        %d{j} = nvvm.wgmma.mma_async %da{j}, %db{j}, {last}, <m = 64, n = {N}, "
            "k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>] : "
            f"{ACC} -> {ACC}"
        )
        last = f"%d{j}"
    if bug != "no_commit":
        w("        nvvm.wgmma.commit.group.sync.aligned")
    release = f"copy.barrier_arrive %empty[%s] issuer warps : {bar}"
    if bug in ("release_before_wait", "declared"):
        w(f"        {release}")
        w(f"        nvvm.wgmma.wait.group.sync.aligned {depth}")
    elif bug in ("release_newest", "no_commit") or depth == 0:
        w(f"        nvvm.wgmma.wait.group.sync.aligned {depth}")
        w(f"        {release}")
    else:
        w(f"        nvvm.wgmma.wait.group.sync.aligned {depth}")
        w(f"        %old = arith.cmpi uge, %k, %c{depth} : index")
        w("        scf.if %old {")
        w(f"          %pk = arith.subi %k, %c{depth} : index")
        w(f"          %ps = arith.remui %pk, %c{s} : index")
        w(f"          copy.barrier_arrive %empty[%ps] issuer warps : {bar}")
        w("        }")
    w(f"        scf.yield {last} : {ACC}")
    w("      }")
    if bug != "exit":
        w("      nvvm.wgmma.wait.group.sync.aligned 0")
    if bug is None:
        for j in range(depth, 0, -1):
            w(f"      %held{j} = arith.cmpi uge, %k_tiles, %c{j} : index")
            w(f"      scf.if %held{j} {{")
            w(f"        %lk{j} = arith.subi %k_tiles, %c{j} : index")
            w(f"        %ls{j} = arith.remui %lk{j}, %c{s} : index")
            w(f"        copy.barrier_arrive %empty[%ls{j}] issuer warps : {bar}")
            w("      }")
    w(f"      %e = llvm.extractvalue %acc[0] : {ACC}")
    w("      memref.store %e, %C[%t, %c0] : memref<128x64xf32>")
    w("    }")
    w("    func.return")
    w("  }")
    w("}")
    return "\n".join(lines) + "\n"


TC_SLOT = "memref<{s}x128x64xf16, #copy.smem<swizzle = 128>>"
TC_BUGS = ("release_before_commit", "no_commit")


def tcgen05_kernel(stages: int = 4, bug: str | None = None) -> str:
    """The sm_100a form: role 1 (one warp) is the MMA warp, whose elected thread (lane 0)
    issues a tcgen05.mma m128n128k16 on the slots' descriptors into a TMEM accumulator and
    releases the slot as CUTLASS's sm100 mainloop does: `nvvm.tcgen05.commit` on empty[s]
    (the group cast to a pointer, plus s), whose arrival comes once the MMA has read the
    slot. After the loop it commits to a barrier of its own and waits on it. `bug`:
    `release_before_commit` (a copy.barrier_arrive on empty[s] in place of the commit: the
    producer refills the slot while the MMA may read it), `no_commit` (that, and no commit
    at all)."""
    s = stages
    t = TC_SLOT.format(s=s)
    bar = f"!copy.barrier<{s}>"
    name = f"tcgen05_s{s}" + (f"_{bug}" if bug else "")
    lines = [
        'builtin.module attributes {copy.target = #copy.target<"sm_100a">} {',
        f"  func.func @{name}(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, "
        "%K: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {",
    ]
    w = lines.append
    for c in sorted({0, 1, 2, s, 64}):
        w(f"    %c{c} = arith.constant {c} : index")
    w("    %false = arith.constant false")
    w("    %k_tiles = arith.divui %K, %c64 : index")
    w("    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>")
    w(f"    %smem_a = copy.alloc_smem : {t}")
    w(f"    %smem_b = copy.alloc_smem : {t}")
    w(f"    %full = copy.barrier_init arrivals 2 : {bar}")
    w(f"    %empty = copy.barrier_init arrivals 1 : {bar}")
    w("    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>")
    w(
        "    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> "
        "to !llvm.ptr<6>"
    )
    w(f"    %empty_ptr = builtin.unrealized_conversion_cast %empty : {bar} to !llvm.ptr<3>")
    w("    %done_ptr = builtin.unrealized_conversion_cast %done : !copy.barrier<1> to !llvm.ptr<3>")
    w("    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32")
    w("    copy.warp_specialize warps [1, 1] {")
    w("    ^bb0(%t: index):")
    w("      scf.for %k = %c0 to %k_tiles step %c1 {")
    w(f"        %s = arith.remui %k, %c{s} : index")
    w(f"        %lap = arith.divui %k, %c{s} : index")
    w(f"        %again = arith.cmpi uge, %k, %c{s} : index")
    w("        scf.if %again {")
    w("          %prev = arith.subi %lap, %c1 : index")
    w("          %pm = arith.remui %prev, %c2 : index")
    w("          %pp = arith.cmpi ne, %pm, %c0 : index")
    w(f"          copy.barrier_wait %empty[%s], %pp : {bar}")
    w("        }")
    w("        %k0 = arith.muli %k, %c64 : index")
    for m in ("A", "B"):
        w(
            f"        copy.async_copy %{m}[%c0, %k0] to %smem_{m.lower()}[%s] barrier "
            f"%full[%s] : memref<1024x1024xf16> to {t}, {bar}"
        )
    w("      }")
    w("    }, {")
    w("    ^bb0(%t: index):")
    w("      %lead = arith.cmpi eq, %t, %c0 : index")
    w("      scf.for %k = %c0 to %k_tiles step %c1 {")
    w(f"        %s = arith.remui %k, %c{s} : index")
    w(f"        %lap = arith.divui %k, %c{s} : index")
    w("        %lm = arith.remui %lap, %c2 : index")
    w("        %lp = arith.cmpi ne, %lm, %c0 : index")
    w(f"        copy.barrier_wait %full[%s], %lp : {bar}")
    w(f"        %da = copy.matrix_descriptor %smem_a[%s] major k tcgen05 : {t} -> i64")
    w(f"        %db = copy.matrix_descriptor %smem_b[%s] major k tcgen05 : {t} -> i64")
    w("        %accumulate = arith.cmpi ne, %k, %c0 : index")
    w("        scf.if %lead {")
    w(
        "          nvvm.tcgen05.mma %d, %da, %db, %idesc, %accumulate {kind = "
        "#nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, "
        "i64, i64, i32, i1)"
    )
    if bug is None:
        w("          %si = arith.index_cast %s : index to i64")
        w(
            "          %slot_empty = llvm.getelementptr %empty_ptr[%si] : (!llvm.ptr<3>, i64) "
            "-> !llvm.ptr<3>, i64"
        )
        w("          nvvm.tcgen05.commit %slot_empty : !llvm.ptr<3>")
    w("        }")
    if bug is not None:
        w(f"        copy.barrier_arrive %empty[%s] issuer elected : {bar}")
    w("      }")
    if bug != "no_commit":
        w("      scf.if %lead {")
        w("        nvvm.tcgen05.commit %done_ptr : !llvm.ptr<3>")
        w("      }")
        w("      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>")
    w("    }")
    w("    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>")
    w("    func.return")
    w("  }")
    w("}")
    return "\n".join(lines) + "\n"
