// Command-line problems: one `copy-opt: error:` line saying what is wrong and how to fix
// it, exit status 1 (also for the flags argparse rejects).

// RUN: not copy-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN-PASS
// UNKNOWN-PASS: copy-opt: error: unknown pass 'no-such-pass' in -p 'no-such-pass'; available passes: {{.*}}canonicalize{{.*}}

// RUN: not copy-opt %s -p canonicalise 2>&1 | filecheck %s --check-prefix=CLOSE-PASS
// CLOSE-PASS: copy-opt: error: unknown pass 'canonicalise' in -p 'canonicalise'; did you mean 'canonicalize'{{.*}}

// RUN: not copy-opt %s -p 'canonicalize,cse{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=BAD-OPTION
// BAD-OPTION: copy-opt: error: invalid options for pass 'cse' in -p 'canonicalize,cse{no-such-option=1}': {{.*}}; pass 'cse' takes no options

// RUN: not copy-opt %s -p 'convert-scf-to-openmp{collapse=many}' 2>&1 | filecheck %s --check-prefix=BAD-VALUE
// BAD-VALUE: copy-opt: error: invalid options for pass 'convert-scf-to-openmp' in -p 'convert-scf-to-openmp{collapse=many}': Incompatible types: {{.*}}; options of 'convert-scf-to-openmp': collapse: int|None = none, {{.*}}

// RUN: not copy-opt %s -p 'canonicalize{' 2>&1 | filecheck %s --check-prefix=BAD-SYNTAX
// BAD-SYNTAX: copy-opt: error: invalid pass pipeline -p 'canonicalize{': Expected argument name here at column 14; expected 'pass-a,pass-b{option=value other-option=value}'

// RUN: not copy-opt %S/Inputs/no-such-file.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: copy-opt: error: cannot read input file '{{.*}}no-such-file.mlir': no such file or directory (check the path and its permissions, or use '-' to read stdin)

// RUN: not copy-opt %S 2>&1 | filecheck %s --check-prefix=DIRECTORY
// DIRECTORY: copy-opt: error: input '{{.*}}' is a directory; expected an MLIR file (or '-' for stdin)

// RUN: not copy-opt %s -o %s 2>&1 | filecheck %s --check-prefix=SAME-FILE
// SAME-FILE: copy-opt: error: output file '{{.*}}command-line.mlir' is the input file; refusing to overwrite the input (choose another -o path)

// RUN: not copy-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=BAD-FLAG
// BAD-FLAG: copy-opt: error: unrecognized arguments: --no-such-flag (see 'copy-opt --help')

// RUN: not copy-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=BAD-TARGET
// BAD-TARGET: copy-opt: error: unknown target -t 'no-such-target'; available targets: {{.*}}mlir{{.*}}
