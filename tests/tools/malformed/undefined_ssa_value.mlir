func.func @f() -> i32 {
  %0 = arith.addi %x, %x : i32
  func.return %0 : i32
}
