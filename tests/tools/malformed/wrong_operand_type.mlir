%a = "test.op"() : () -> f32
%0 = arith.addi %a, %a : f32
