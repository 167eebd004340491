// RUN: copy-opt %s --split-input-file -t ptx | filecheck %s

// tcgen05.mma kernels through the whole pipeline to PTX: the TMEM accumulator of
// copy.tmem_alloc, the SMEM descriptors of a ring slot of A and of B
// (copy.matrix_descriptor ... tcgen05), the instruction descriptor
// (copy.mma_instruction_descriptor), two MMAs along K issued by thread 0 (the second adds
// 32 bytes >> 4 to both descriptors), tcgen05.commit to an mbarrier, every thread's wait on
// it, then tcgen05.ld of D and the dealloc. The nvvm ops take the TMEM accumulator and the
// mbarrier's SMEM word as the pointers they are (builtin.unrealized_conversion_cast: a
// memref is its pointer, docs/lowering.md). tests/passes/test_tensor_core_assemble.py
// assembles each kernel with nvJitLink and ptxas for sm_100a, sm_100f and sm_103a, and for
// sm_110a/f all but the one with a scale-input-d (the kernel rule MI8 there: docs/targets.md).

// kind::f16, A and B through SMEM descriptors, M = 128, N = 128.
// CHECK: .target sm_100a
// CHECK: .entry mma_f16(
// CHECK: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// CHECK: mbarrier.init.shared.b64 [[[BAR:%rd[0-9]+]]], {{%r[0-9]+}};
// The instruction descriptor: D f32 (1 << 4), N 128 (16 << 17), M 128 (8 << 24).
// CHECK: mov.b32 [[IDESC:%r[0-9]+]], 136314896;
// CHECK: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [[[D:%r[0-9]+]]], %rd{{[0-9]+}}, %rd{{[0-9]+}}, [[IDESC]], %p{{[0-9]+}};
// CHECK: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [[[D]]], %rd{{[0-9]+}}, %rd{{[0-9]+}}, [[IDESC]], %p{{[0-9]+}};
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [[[BAR]]];
// CHECK: mbarrier.try_wait.parity.shared::cta.b64 P1, [[[BAR]]]
// CHECK: tcgen05.fence::after_thread_sync;
// CHECK: tcgen05.ld.sync.aligned.32x32b.x8.b32
// CHECK: tcgen05.wait::ld.sync.aligned;
// CHECK: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @mma_f16(%out: memref<128x8xf32>, %slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %ticks = arith.constant 1000000 : i32
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %a = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %word = copy.alloc_smem : memref<1xi64, #copy.smem>
    %bar = builtin.unrealized_conversion_cast %word : memref<1xi64, #copy.smem> to !llvm.ptr<3>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x128xf32, #copy.tmem> to !llvm.ptr<6>
    %da = copy.matrix_descriptor %a[%slot] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    %db = copy.matrix_descriptor %b[%slot] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    %idesc = copy.mma_instruction_descriptor kind f16 m 128 n 128 a f16 b f16 d f32 : i32
    %leader = arith.cmpi eq, %tid, %c0 : index
    scf.if %leader {
      nvvm.mbarrier.init.shared %bar, %c1_i32 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    gpu.barrier
    scf.if %leader {
      %false = arith.constant false
      %true = arith.constant true
      %k16 = arith.constant 2 : i64
      nvvm.tcgen05.mma %d, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
      %da1 = arith.addi %da, %k16 : i64
      %db1 = arith.addi %db, %k16 : i64
      nvvm.tcgen05.mma %d, %da1, %db1, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
      nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    }
    nvvm.mbarrier.try_wait.parity.shared %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
    llvm.inline_asm has_side_effects "tcgen05.fence::after_thread_sync;", "" : () -> ()
    %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x128xf32, #copy.tmem> -> vector<8xf32>
    copy.tmem_wait load
    vector.store %v, %out[%tid, %c0] : memref<128x8xf32>, vector<8xf32>
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}

// -----

// kind::tf32 with A in TMEM (the A operand a second TMEM region) and B through its
// descriptor (MN-major, 128B swizzle), M = 128, N = 64, D scaled by 2^-1 (scale-input-d
// 1), A's collector buffer marked for its last use, lanes 0-31 of D left out of the
// output (disable-output-lane, one 32-bit word per 32 lanes).
// CHECK: .entry mma_tf32_tmem_a(
// The instruction descriptor: D f32, A and B tf32 (2 << 7, 2 << 10), B MN-major (1 << 16),
// N 64 (8 << 17), M 128 (8 << 24).
// CHECK: mov.b32 [[IDESC:%r[0-9]+]], 135334160;
// CHECK: tcgen05.mma.cta_group::1.kind::tf32.collector::a::lastuse [%r{{[0-9]+}}], [%r{{[0-9]+}}], %rd{{[0-9]+}}, [[IDESC]], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %p{{[0-9]+}}, 1;
// CHECK: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @mma_tf32_tmem_a(%out: memref<128x8xf32>, %slot: index, %lanes: vector<4xi32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %ticks = arith.constant 1000000 : i32
    %acc = copy.tmem_alloc : memref<128x64xf32, #copy.tmem>
    %atile = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
    %b = copy.alloc_smem : memref<2x2x32x32xf32, #copy.smem<swizzle = 128>>
    %word = copy.alloc_smem : memref<1xi64, #copy.smem>
    %bar = builtin.unrealized_conversion_cast %word : memref<1xi64, #copy.smem> to !llvm.ptr<3>
    %d = builtin.unrealized_conversion_cast %acc : memref<128x64xf32, #copy.tmem> to !llvm.ptr<6>
    %ta = builtin.unrealized_conversion_cast %atile : memref<128x32xf32, #copy.tmem> to !llvm.ptr<6>
    %db = copy.matrix_descriptor %b[%slot] major mn tcgen05 : memref<2x2x32x32xf32, #copy.smem<swizzle = 128>> -> i64
    %idesc = copy.mma_instruction_descriptor kind tf32 m 128 n 64 a tf32 b tf32 d f32 b_major mn : i32
    %leader = arith.cmpi eq, %tid, %c0 : index
    scf.if %leader {
      nvvm.mbarrier.init.shared %bar, %c1_i32 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    gpu.barrier
    scf.if %leader {
      %true = arith.constant true
      %scale = arith.constant 1 : i64
      nvvm.tcgen05.mma %d, %ta, %db, %idesc, %true scale = %scale mask = %lanes {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_1>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, i64, vector<4xi32>)
      nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    }
    nvvm.mbarrier.try_wait.parity.shared %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
    llvm.inline_asm has_side_effects "tcgen05.fence::after_thread_sync;", "" : () -> ()
    %v = copy.tmem_load %acc[%c0] shape shape_32x32b num 8 : memref<128x64xf32, #copy.tmem> -> vector<8xf32>
    copy.tmem_wait load
    vector.store %v, %out[%tid, %c0] : memref<128x8xf32>, vector<8xf32>
    copy.tmem_dealloc %atile : memref<128x32xf32, #copy.tmem>
    copy.tmem_dealloc %acc : memref<128x64xf32, #copy.tmem>
    func.return
  }
}

// -----

// cta_group::2: an M = 256 MMA over the CTA pair of a 2x1x1 cluster, at the nvvm level for
// TMEM (copy.tmem_alloc allocates for one CTA, and ptxas rejects a kernel that mixes
// cta_group::1 and ::2): warp 0 of each CTA allocates 128 columns for the pair, thread 0 of
// each CTA initializes its mbarrier, the cluster syncs, thread 0 of CTA 0 issues the MMA and
// commits it to the mbarriers of both CTAs (multicast mask 0b11), each warp reads its 32
// lanes of its CTA's half of D, the pair deallocates after a cluster sync.
// The instruction descriptor: D f32, N 128 (16 << 17), M 256 (16 << 24).
// CHECK: .entry mma_pair(
// CHECK: .reqnctapercluster 2, 1, 1
// CHECK: tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32
// CHECK: tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
// CHECK: mov.b32 [[IDESC:%r[0-9]+]], 270532624;
// CHECK: tcgen05.mma.cta_group::2.kind::f16.collector::a::discard [%r{{[0-9]+}}], %rd{{[0-9]+}}, %rd{{[0-9]+}}, [[IDESC]], %p{{[0-9]+}};
// CHECK: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%rd{{[0-9]+}}], %rs{{[0-9]+}};
// CHECK: tcgen05.ld.sync.aligned.32x32b.x4.b32
// CHECK: tcgen05.dealloc.cta_group::2.sync.aligned.b32
// CHECK-NOT: .extern .func
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @mma_pair(%out: memref<128x4xi32>, %slot: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c16_i32 = arith.constant 16 : i32
    %c32_i32 = arith.constant 32 : i32
    %ncols = arith.constant 128 : i32
    %ticks = arith.constant 1000000 : i32
    %both = arith.constant 3 : i16
    %a = copy.alloc_smem : memref<2x128x64xf16, #copy.smem<swizzle = 128>>
    %b = copy.alloc_smem : memref<2x64x64xf16, #copy.smem<swizzle = 128>>
    %addr = copy.alloc_smem : memref<1xi32, #copy.smem>
    %word = copy.alloc_smem : memref<1xi64, #copy.smem>
    %slot_ptr = builtin.unrealized_conversion_cast %addr : memref<1xi32, #copy.smem> to !llvm.ptr<3>
    %bar = builtin.unrealized_conversion_cast %word : memref<1xi64, #copy.smem> to !llvm.ptr<3>
    %da = copy.matrix_descriptor %a[%slot] major k tcgen05 : memref<2x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    %db = copy.matrix_descriptor %b[%slot] major k tcgen05 : memref<2x64x64xf16, #copy.smem<swizzle = 128>> -> i64
    %idesc = copy.mma_instruction_descriptor kind f16 m 256 n 128 a f16 b f16 d f32 cta_group 2 : i32
    %warp = arith.divui %tid, %c32 : index
    %warp0 = arith.cmpi eq, %warp, %c0 : index
    %leader = arith.cmpi eq, %tid, %c0 : index
    scf.if %warp0 {
      nvvm.tcgen05.alloc %slot_ptr, %ncols {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
      nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
    }
    scf.if %leader {
      nvvm.mbarrier.init.shared %bar, %c1_i32 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    copy.cluster_sync
    %taddr = memref.load %addr[%c0] : memref<1xi32, #copy.smem>
    %d = llvm.inttoptr %taddr : i32 to !llvm.ptr<6>
    %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32
    %first = arith.cmpi eq, %rank, %c0_i32 : i32
    %issuer = arith.andi %first, %leader : i1
    scf.if %issuer {
      %false = arith.constant false
      nvvm.tcgen05.mma %d, %da, %db, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
      nvvm.tcgen05.commit %bar, multicast_mask = %both {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
    }
    nvvm.mbarrier.try_wait.parity.shared %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
    llvm.inline_asm has_side_effects "tcgen05.fence::after_thread_sync;", "" : () -> ()
    // Warp w reads TMEM lanes 32 w .. 32 w + 31 of its CTA's half of D (lane in bits 16-31).
    %w32 = arith.index_cast %warp : index to i32
    %lane0 = arith.muli %w32, %c32_i32 : i32
    %lane = arith.shli %lane0, %c16_i32 : i32
    %waddr = arith.addi %taddr, %lane : i32
    %wd = llvm.inttoptr %waddr : i32 to !llvm.ptr<6>
    %v = nvvm.tcgen05.ld %wd {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    nvvm.tcgen05.wait <load>
    vector.store %v, %out[%tid, %c0] : memref<128x4xi32>, vector<4xi32>
    copy.cluster_sync
    scf.if %warp0 {
      nvvm.tcgen05.dealloc %d, %ncols {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
    }
    func.return
  }
}
