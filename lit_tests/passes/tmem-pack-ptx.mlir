// RUN: copy-opt %s -t ptx | filecheck %s

// `pack` / `unpack` through the whole pipeline to PTX (assembled for sm_100a by
// tests/passes/test_tmem_pack.py; never run: the project's GPU is an H200).
// CHECK: .target sm_100a
// CHECK: tcgen05.ld.sync.aligned.32x32b.x4.pack::16b.b32
// CHECK: tcgen05.wait::ld.sync.aligned
// CHECK: tcgen05.st.sync.aligned.16x128b.x2.unpack::16b.b32
// CHECK: tcgen05.ld.sync.aligned.16x32bx2.x2.pack::16b.b32
// CHECK-NOT: tcgen05.ld.red
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @tmem_pack(%col: index) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %acc = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
    %p = copy.tmem_load %acc[%col] shape shape_32x32b num 4 pack : memref<128x64xi32, #copy.tmem> -> vector<8xf16>
    copy.tmem_wait load
    copy.tmem_store %p, %acc[%col] shape shape_16x128b num 2 unpack : vector<8xf16>, memref<128x64xi32, #copy.tmem>
    copy.tmem_wait store
    %h = copy.tmem_load %acc[%col] shape shape_16x32bx2 num 2 pack {offset = 8 : i64} : memref<128x64xi32, #copy.tmem> -> vector<4xbf16>
    copy.tmem_wait load
    copy.tmem_dealloc %acc : memref<128x64xi32, #copy.tmem>
    func.return
  }
}
