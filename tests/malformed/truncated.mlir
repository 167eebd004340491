func.func @f() {
