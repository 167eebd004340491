"test.op"() : () -> () loc(
