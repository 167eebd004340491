"builtin.module"() ({
  "func.return"() : () -> ()
}) : () -> ()
