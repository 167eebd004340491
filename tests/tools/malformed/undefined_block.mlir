func.func @f() {
  cf.br ^bb9
}
