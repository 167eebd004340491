%a = "test.op"() : () -> i32
"test.op"(%a) : (f32) -> ()
