%0 = "test.op"() : () -> i32
%0 = "test.op"() : () -> i32
