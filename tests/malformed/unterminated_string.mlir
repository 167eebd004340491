"test.op() : () -> ()
