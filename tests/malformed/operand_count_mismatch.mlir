"test.op"() : (i32) -> ()
