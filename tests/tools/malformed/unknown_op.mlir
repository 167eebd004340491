%0 = "test.op"() : () -> i32
"arith.frobnicate"(%0) : (i32) -> ()
