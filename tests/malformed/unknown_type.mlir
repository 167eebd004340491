"test.op"() : () -> !arith.nonexistent
