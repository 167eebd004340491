#a = #undefined_alias
"test.op"() {a = #a} : () -> ()
