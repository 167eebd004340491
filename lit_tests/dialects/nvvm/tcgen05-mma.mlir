// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// nvvm.tcgen05.mma and nvvm.tcgen05.commit (upstream NVVMOps.td's spelling) in their custom
// form, printed back after a trip through the generic form (CHECK), and in the generic form
// (CHECK-GENERIC). lit_tests/passes/tcgen05-mma-ptx.mlir checks their PTX (sparse-mma-ptx.mlir
// the sparse MMA's); the last chunk is nvvm.tcgen05.fence.

// CHECK-LABEL: llvm.func @tcgen05_mma(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "tcgen05_mma"
llvm.func @tcgen05_mma(%d: !llvm.ptr<6>, %a_tmem: !llvm.ptr<6>, %a_desc: i64, %b_desc: i64, %idesc: i32, %enable_input_d: i1, %lanes4: vector<4xi32>, %lanes8: vector<8xi32>) {
  %scale = llvm.mlir.constant(3 : i64) : i64
  // A through an SMEM descriptor, one CTA.
  // CHECK: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  // CHECK-GENERIC: "nvvm.tcgen05.mma"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (!llvm.ptr<6>, i64, i64, i32, i1) -> ()
  nvvm.tcgen05.mma %d, %a_desc, %b_desc, %idesc, %enable_input_d {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  // A in TMEM, the collector buffer filled, a CTA pair.
  // CHECK-NEXT: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<fill>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.mma"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<fill>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1) -> ()
  nvvm.tcgen05.mma %d, %a_tmem, %b_desc, %idesc, %enable_input_d {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<fill>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
  // scale-input-d and the output-lane mask of a pair (8 words), A shifted.
  // CHECK-NEXT: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale = %{{.*}} mask = %{{.*}} {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, aShift} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, i64, vector<8xi32>)
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.mma"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, aShift, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>}>
  nvvm.tcgen05.mma %d, %a_tmem, %b_desc, %idesc, %enable_input_d scale = %scale mask = %lanes8 {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, aShift} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, i64, vector<8xi32>)
  // The mask alone (4 words: one CTA).
  // CHECK-NEXT: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} mask = %{{.*}} {kind = #nvvm.tcgen05_mma_kind<f8f6f4>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, vector<4xi32>)
  // CHECK-GENERIC-NEXT: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1>
  nvvm.tcgen05.mma %d, %a_desc, %b_desc, %idesc, %enable_input_d mask = %lanes4 {kind = #nvvm.tcgen05_mma_kind<f8f6f4>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, vector<4xi32>)
  llvm.return
}

// -----

// nvvm.tcgen05.mma.sp (upstream's NVVM_Tcgen05MMASparseOp): the structured-sparse MMA, its
// metadata's TMEM pointer after enable-input-d, then the optional scale and mask.
// CHECK-LABEL: llvm.func @tcgen05_mma_sp(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "tcgen05_mma_sp"
llvm.func @tcgen05_mma_sp(%d: !llvm.ptr<6>, %a_tmem: !llvm.ptr<6>, %a_desc: i64, %b_desc: i64, %idesc: i32, %enable_input_d: i1, %meta: !llvm.ptr<6>, %lanes8: vector<8xi32>) {
  %scale = llvm.mlir.constant(2 : i64) : i64
  // CHECK: nvvm.tcgen05.mma.sp %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
  // CHECK-GENERIC: "nvvm.tcgen05.mma.sp"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>}> : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>) -> ()
  nvvm.tcgen05.mma.sp %d, %a_desc, %b_desc, %idesc, %enable_input_d, %meta {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>)
  // A in TMEM, a CTA pair, the scale and the pair's 8-word mask, A's collector buffer last used.
  // CHECK-NEXT: nvvm.tcgen05.mma.sp %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale = %{{.*}} mask = %{{.*}} {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, !llvm.ptr<6>, i64, vector<8xi32>)
  // CHECK-GENERIC-NEXT: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1>
  nvvm.tcgen05.mma.sp %d, %a_tmem, %b_desc, %idesc, %enable_input_d, %meta scale = %scale mask = %lanes8 {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_2>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, !llvm.ptr<6>, i64, vector<8xi32>)
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @tcgen05_commit(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "tcgen05_commit"
llvm.func @tcgen05_commit(%bar: !llvm.ptr<3>, %generic: !llvm.ptr, %mask: i16) {
  // CHECK-NEXT: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
  // CHECK-GENERIC: "nvvm.tcgen05.commit"(%{{.*}}) : (!llvm.ptr<3>) -> ()
  nvvm.tcgen05.commit %bar : !llvm.ptr<3>
  // CHECK-NEXT: nvvm.tcgen05.commit %{{.*}} {group = #nvvm.cta_group<cta_2>} : !llvm.ptr
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.commit"(%{{.*}}) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr) -> ()
  nvvm.tcgen05.commit %generic {group = #nvvm.cta_group<cta_2>} : !llvm.ptr
  // CHECK-NEXT: nvvm.tcgen05.commit %{{.*}}, multicast_mask = %{{.*}} : !llvm.ptr<3>, i16
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.commit"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, i16) -> ()
  nvvm.tcgen05.commit %bar, multicast_mask = %mask : !llvm.ptr<3>, i16
  llvm.return
}

// -----

// nvvm.tcgen05.fence (upstream's op; printed with the kind's <before> / <after>, as this
// project prints nvvm.tcgen05.wait), which P14 asks for at TMEM hand-offs between threads.
// CHECK-LABEL: llvm.func @tcgen05_fence(
// CHECK-GENERIC-LABEL: "llvm.func"() <{unnamed_addr = 0 : i64, sym_name = "tcgen05_fence"
llvm.func @tcgen05_fence() {
  // CHECK-NEXT: nvvm.tcgen05.fence <before>
  // CHECK-GENERIC: "nvvm.tcgen05.fence"() <{kind = #nvvm.tcgen05_fence<before>}> : () -> ()
  nvvm.tcgen05.fence <before>
  // CHECK-NEXT: nvvm.tcgen05.fence <after>
  // CHECK-GENERIC-NEXT: "nvvm.tcgen05.fence"() <{kind = #nvvm.tcgen05_fence<after>}> : () -> ()
  nvvm.tcgen05.fence <after>
  llvm.return
}
