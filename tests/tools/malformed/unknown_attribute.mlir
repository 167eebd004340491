"test.op"() {a = #arith.nonexistent<1>} : () -> ()
