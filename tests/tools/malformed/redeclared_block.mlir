func.func @f() {
^bb0:
  func.return
^bb0:
  func.return
}
