// RUN: copy-opt %s -t ptx | filecheck %s

// `copy.tmem_slice` through the whole pipeline to PTX (assembled for sm_100a, sm_100f and
// sm_103a by tests/passes/test_tmem_slice.py; never run: the project's GPU is an H200): the
// slice of columns 64-127 is the allocation's address plus 64, which its load reads from.
// CHECK: .target sm_100a
// CHECK: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// CHECK: add.s32 [[SLICE:%r[0-9]+]], {{%r[0-9]+}}, 64;
// CHECK: tcgen05.st.sync.aligned.32x32b.x4.b32
// CHECK: tcgen05.ld.sync.aligned.32x32b.x4.b32
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_slice(%x: memref<128x4xf32>, %y: memref<128x4xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = gpu.thread_id x
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    %h = copy.tmem_slice %acc[64] : memref<128x128xf32, #copy.tmem> -> memref<128x64xf32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x4xf32>, vector<4xf32>
    copy.tmem_store %v, %h[%c0] shape shape_32x32b num 4 : vector<4xf32>, memref<128x64xf32, #copy.tmem>
    copy.tmem_wait store
    %w = copy.tmem_load %h[%c0] shape shape_32x32b num 4 : memref<128x64xf32, #copy.tmem> -> vector<4xf32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x4xf32>, vector<4xf32>
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    func.return
  }
}
