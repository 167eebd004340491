// RUN: COPY_ROUNDTRIP
// RUN: COPY_GENERIC_ROUNDTRIP

// `pack` / `unpack` (tcgen05.ld .pack::16b, tcgen05.st .unpack::16b): one 16-bit value in each
// 32-bit TMEM column, two adjacent columns' values in each 32-bit register, so a vector of
// twice the registers' 16-bit elements and a span of twice the columns.
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  // CHECK-LABEL: func.func @tmem_pack(
  func.func @tmem_pack(%col: index) {
    %acc = copy.tmem_alloc : memref<128x64xi32, #copy.tmem>
    // CHECK: %[[P:.*]] = copy.tmem_load %{{.*}}[%{{.*}}] shape shape_32x32b num 4 pack : memref<128x64xi32, #copy.tmem> -> vector<8xf16>
    // CHECK-GENERIC: "copy.tmem_load"(%{{.*}}, %{{.*}}) <{shape = #copy<tmem_shape shape_32x32b>, num = 4 : i32, pack}> : (memref<128x64xi32, #copy.tmem>, index) -> vector<8xf16>
    %p = copy.tmem_load %acc[%col] shape shape_32x32b num 4 pack : memref<128x64xi32, #copy.tmem> -> vector<8xf16>
    // CHECK: copy.tmem_load %{{.*}}[%{{.*}}] shape shape_16x32bx2 num 2 pack {offset = 8 : i64} : memref<128x64xi32, #copy.tmem> -> vector<4xbf16>
    %h = copy.tmem_load %acc[%col] shape shape_16x32bx2 num 2 pack {offset = 8 : i64} : memref<128x64xi32, #copy.tmem> -> vector<4xbf16>
    copy.tmem_wait load
    // CHECK: copy.tmem_store %[[P]], %{{.*}}[%{{.*}}] shape shape_16x128b num 2 unpack : vector<8xf16>, memref<128x64xi32, #copy.tmem>
    // CHECK-GENERIC: "copy.tmem_store"(%{{.*}}, %{{.*}}, %{{.*}}) <{shape = #copy<tmem_shape shape_16x128b>, num = 2 : i32, unpack}> : (vector<8xf16>, memref<128x64xi32, #copy.tmem>, index) -> ()
    copy.tmem_store %p, %acc[%col] shape shape_16x128b num 2 unpack : vector<8xf16>, memref<128x64xi32, #copy.tmem>
    copy.tmem_wait store
    copy.tmem_dealloc %acc : memref<128x64xi32, #copy.tmem>
    func.return
  }
}
