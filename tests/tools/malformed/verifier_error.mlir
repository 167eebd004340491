func.func @f() -> i32 {
  func.return
}
