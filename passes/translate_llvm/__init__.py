"""LLVM IR text from a module of llvm + nvvm ops: the `translate` step of the lowering.

This is our `mlir-translate --mlir-to-llvmir` for the llvm dialect of xDSL 0.75 (its 72 ops)
plus any op that implements `ToLLVMIR` (`passes/llvm_ir.py`; the nvvm ops do). It prints
text for LLVM 22 (opaque pointers), which `backend.compile_ptx` hands to llvmlite. xDSL's own
`-t llvm` converter is not used: it emits typed pointers, drops the address space of GEPs,
and has no `ptx_kernel`, function attributes or global alignment (docs/hardware.md).

The module gets `target triple = "nvptx64-nvidia-cuda"` and LLVM 22's NVPTX data layout.
The conventions of the lowered IR (docs/lowering.md) translate as follows:

- `nvvm.kernel` on an `llvm.func` -> `define ptx_kernel void @f(...)`;
- `nvvm.reqntid`, `nvvm.maxntid`, `nvvm.cluster_dim` (`array<i32: x, y, z>`) -> function
  attributes `"nvvm.reqntid"="x,y,z"` etc. (`.reqntid`, `.maxntid`, `.reqnctapercluster` in
  the PTX); `nvvm.cluster_max_blocks`, `nvvm.minctasm`, `nvvm.maxnreg` likewise;
- argument attributes `llvm.byval = T`, `llvm.align = A`, `nvvm.grid_constant`, ... ->
  `ptr byval(T) align A "nvvm.grid_constant"`;
- `llvm.mlir.global internal @g() {addr_space = 3, alignment = A} : T` ->
  `@g = internal addrspace(3) global T undef, align A`.

Attributes of other dialects (`copy.abi`, ...) are metadata for other tools and are
skipped, as MLIR does; an `llvm.*` or `nvvm.*` attribute that has no translation here is an
error, so that a misspelled one cannot vanish silently.

Value names are deterministic: an SSA value with a name hint keeps it (`%bar`, uniqued
with a `_N` suffix), the others are numbered `%0, %1, ...` in the order they are defined
(LLVM 22 accepts the gaps that named values leave); blocks are `bb0, bb1, ...`; `ToLLVMIR`
ops name their results with `IREmitter.fresh()` (`%t0, %t1, ...`). Constants, `undef`, `zero`
and `addressof` are printed inline as literals, as mlir-translate does. Block arguments
become phi nodes. A `ToLLVMIR` op may open blocks of its own: a line `name:` that it emits is
a label, and the phis of its block's successors then name that block as the predecessor.

The package, by concern: `spelling` (names, strings, literals; the errors), `attributes`
(parameter and function attributes, linkage), `module` (types, constants, declarations,
globals), `function` (a function's header, names, blocks and ops), `instructions` (the llvm
ops' handlers). This module walks the module and puts its sections together.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

from passes.translate_llvm.function import FunctionTranslator
from passes.translate_llvm.module import ModuleTranslator
from passes.translate_llvm.spelling import TranslationError, Unsupported

__all__ = ["NVPTX_DATA_LAYOUT", "NVPTX_TRIPLE", "TranslationError", "translate_module"]

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
NVPTX_DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
"""LLVM 22's default for nvptx64 (`TargetMachine.target_data`): 64-bit pointers except TMEM
(addrspace 6, 32-bit). Shared-memory pointers are 64-bit, so inline asm takes them as "l"."""


def translate_module(module: ModuleOp) -> str:
    """The LLVM IR text of `module`, which holds only llvm ops and `ToLLVMIR` ops."""
    context = ModuleTranslator(module)
    globals_: list[str] = []
    functions: list[str] = []
    for op in module.ops:
        try:
            if isinstance(op, llvm.GlobalOp):
                globals_.append(context.global_(op))
            elif isinstance(op, llvm.FuncOp):
                functions.append(FunctionTranslator(context, op).translate())
            else:
                raise Unsupported(
                    f"'{op.name}' cannot appear at module level in LLVM IR "
                    "(expected llvm.func or llvm.mlir.global)"
                )
        except Unsupported as exc:
            raise TranslationError(op, str(exc)) from None
    sections = [
        f'target datalayout = "{NVPTX_DATA_LAYOUT}"\ntarget triple = "{NVPTX_TRIPLE}"',
        "\n".join(f"{name} = type {body}" for name, body in context.struct_defs.items()),
        "\n".join(globals_),
        "\n\n".join(functions),
        "\n".join(context.declarations.values()),
        "\n".join(
            f"attributes #{n} = {{ {text} }}" for text, n in context.attribute_groups.items()
        ),
        "\n".join(f"!{n} = {text}" for text, n in context.metadata.items()),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"
