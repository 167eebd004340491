"""LLVM IR text from a module of llvm + nvvm ops: the `translate` step of the lowering.

This is our `mlir-translate --mlir-to-llvmir` for the llvm dialect of xDSL 0.75 (its 72 ops)
plus any op that implements `ToLLVMIR` (`passes/llvm_ir.py`; the nvvm ops do). It prints
text for LLVM 22 (opaque pointers), which `backend.compile_ptx` hands to llvmlite. xDSL's own
`-t llvm` converter is not used: it emits typed pointers, drops the address space of GEPs,
and has no `ptx_kernel`, function attributes or global alignment (toolchain.md, section 2).

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
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    Float80Type,
    Float128Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from copy_dialect.passes.llvm_ir import ToLLVMIR

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
NVPTX_DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
"""LLVM 22's default for nvptx64 (`TargetMachine.target_data`): 64-bit pointers except TMEM
(addrspace 6, 32-bit). Shared-memory pointers are 64-bit, so inline asm takes them as "l"."""


class TranslationError(DiagnosticException):
    """An op (or an attribute of it) that has no LLVM IR translation; `op` says which."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


def translate_module(module: ModuleOp) -> str:
    """The LLVM IR text of `module`, which holds only llvm ops and `ToLLVMIR` ops."""
    return _ModuleTranslator(module).translate()


class _Unsupported(Exception):
    """Raised below the op level; the op being translated turns it into a TranslationError."""


# --- spelling of names, strings, types and constants -------------------------------------

_IDENTIFIER = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*")
_LABEL_LINE = re.compile(r'^\s*([-a-zA-Z$._0-9]+|"[^"]*"):\s*(;.*)?$')
_DECLARED_NAME = re.compile(r'@([-a-zA-Z$._0-9]+|"[^"]*")')


def _quote(text: str) -> str:
    """An LLVM IR string literal: `"`, `\\` and non-printable bytes as `\\XX`."""
    out: list[str] = []
    for byte in text.encode():
        if 0x20 <= byte < 0x7F and byte not in (0x22, 0x5C):
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def _symbol(name: str) -> str:
    """`@name`, quoted where LLVM needs it."""
    return "@" + (name if _IDENTIFIER.fullmatch(name) else _quote(name))


def _float_literal(value: float, type: Attribute) -> str:
    """LLVM's exact hexadecimal spelling: double bits for float/double, 0xH/0xR for halves."""
    if isinstance(type, Float64Type):
        return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"
    if isinstance(type, Float32Type | BFloat16Type):
        try:
            bits32 = struct.unpack("<I", struct.pack("<f", value))[0]
        except OverflowError:  # finite but beyond float: rounds to infinity
            bits32 = 0xFF800000 if value < 0 else 0x7F800000
        if isinstance(type, BFloat16Type):
            # Round to nearest even on the upper 16 bits (NaNs keep their payload's top).
            if (bits32 & 0x7FFFFFFF) <= 0x7F800000:
                bits32 += 0x7FFF + ((bits32 >> 16) & 1)
            return f"0xR{(bits32 >> 16) & 0xFFFF:04X}"
        single = struct.unpack("<f", struct.pack("<I", bits32))[0]
        return f"0x{struct.unpack('<Q', struct.pack('<d', single))[0]:016X}"
    if isinstance(type, Float16Type):
        try:
            return f"0xH{struct.unpack('<H', struct.pack('<e', value))[0]:04X}"
        except OverflowError:
            return "0xHFC00" if value < 0 else "0xH7C00"
    raise _Unsupported(f"no LLVM IR literal for a {type} constant")


def _scalar_literal(value: float, type: Attribute) -> str:
    if isinstance(type, IntegerType):
        if type.width.data == 1:
            return "true" if value else "false"
        return str(int(value))
    if isinstance(type, IndexType):
        return str(int(value))
    return _float_literal(float(value), type)


def _int_list(attr: Attribute) -> list[int] | None:
    """The integers of a dense array or an array of integer attributes (else None)."""
    if isinstance(attr, DenseArrayBase):
        return [int(v) for v in attr.get_values()]
    if isinstance(attr, ArrayAttr) and all(isinstance(a, IntegerAttr) for a in attr.data):
        return [a.value.data for a in attr.data]  # pyright: ignore[reportAttributeAccessIssue]
    return None


def _int_value(attr: Attribute) -> int | None:
    return attr.value.data if isinstance(attr, IntegerAttr) else None


# Parameter attributes in the order they are printed. `(key, spelling)`: a str spelling is
# a keyword; a callable turns the attribute's value into the spelling (None: not valid).
_TypeSpelling = Callable[[Attribute], str]


def _param_attr_table(
    type_of: _TypeSpelling,
) -> list[tuple[str, Callable[[Attribute], str | None]]]:
    def typed(keyword: str) -> Callable[[Attribute], str | None]:
        return lambda value: f"{keyword}({type_of(value)})"

    def integer(keyword: str, parens: bool) -> Callable[[Attribute], str | None]:
        def spell(value: Attribute) -> str | None:
            n = _int_value(value)
            if n is None:
                return None
            return f"{keyword}({n})" if parens else f"{keyword} {n}"

        return spell

    def unit(keyword: str) -> Callable[[Attribute], str | None]:
        return lambda value: keyword if isinstance(value, UnitAttr) else None

    table: list[tuple[str, Callable[[Attribute], str | None]]] = [
        ("llvm.byval", typed("byval")),
        ("llvm.byref", typed("byref")),
        ("llvm.sret", typed("sret")),
        ("llvm.inalloca", typed("inalloca")),
        ("llvm.preallocated", typed("preallocated")),
    ]
    for name in (
        "noalias",
        "nonnull",
        "noundef",
        "nofree",
        "readonly",
        "writeonly",
        "readnone",
        "returned",
        "zeroext",
        "signext",
        "inreg",
        "nest",
        "immarg",
    ):
        table.append((f"llvm.{name}", unit(name)))
    table += [
        # LLVM 21 replaced `nocapture` by `captures(none)`.
        ("llvm.nocapture", unit("captures(none)")),
        ("llvm.align", integer("align", parens=False)),
        ("llvm.dereferenceable", integer("dereferenceable", parens=True)),
        ("llvm.dereferenceable_or_null", integer("dereferenceable_or_null", parens=True)),
        # The kernel reads the byval parameter in place (param space) instead of copying it
        # to local memory; TMA needs that address (h200-findings.md).
        ("nvvm.grid_constant", unit('"nvvm.grid_constant"')),
    ]
    return table


# Function attributes of NVPTX (LLVM 22 spellings, each checked in the PTX it gives).
_NVVM_LIST_ATTRS = {
    "nvvm.reqntid": "nvvm.reqntid",  # .reqntid x, y, z
    "nvvm.maxntid": "nvvm.maxntid",  # .maxntid x, y, z
    "nvvm.cluster_dim": "nvvm.cluster_dim",  # .explicitcluster .reqnctapercluster x, y, z
}
_NVVM_INT_ATTRS = {
    "nvvm.cluster_max_blocks": "nvvm.maxclusterrank",  # .maxclusterrank n (sm_90+)
    "nvvm.minctasm": "nvvm.minctasm",  # .minnctapersm n
    "nvvm.maxnreg": "nvvm.maxnreg",  # .maxnreg n
}
_KERNEL_ATTR = "nvvm.kernel"

# `passthrough` strings that are LLVM enum attributes (printed bare); others are quoted.
_ENUM_FN_ATTRS = frozenset(
    "alwaysinline cold convergent hot inlinehint minsize mustprogress noduplicate nofree "
    "noinline norecurse noreturn nosync nounwind optnone optsize readnone readonly "
    "speculatable willreturn writeonly".split()
)

_FLOAT_TYPES: dict[type[Attribute], str] = {
    Float16Type: "half",
    BFloat16Type: "bfloat",
    Float32Type: "float",
    Float64Type: "double",
    Float80Type: "x86_fp80",
    Float128Type: "fp128",
}
_LINKAGE_DEFAULT = "external"
_VISIBILITY = {0: "", 1: "hidden", 2: "protected"}
_UNNAMED_ADDR = {0: "", 1: "local_unnamed_addr", 2: "unnamed_addr"}
_ATOMIC_ORDERING = {
    1: "unordered",
    2: "monotonic",
    4: "acquire",
    5: "release",
    6: "acq_rel",
    7: "seq_cst",
}


def _fastmath(attr: Attribute | None) -> str:
    """`fast` or the flags (`nnan ninf ...`), each followed by a space; '' for none."""
    if not isinstance(attr, llvm.FastMathAttr) or not attr.data:
        return ""
    if len(attr.data) == len(llvm.FastMathFlag):
        return "fast "
    return "".join(f"{flag.value} " for flag in llvm.FastMathFlag if flag in attr.data)


def _overflow(attr: Attribute | None) -> str:
    """`nuw nsw ` from llvm's overflow flags (an i32 bit set or `#llvm.overflow<...>`)."""
    if isinstance(attr, llvm.OverflowAttr):
        bits = attr.to_int()
    elif isinstance(attr, IntegerAttr):
        bits = attr.value.data
    else:
        bits = 0
    return ("nuw " if bits & 2 else "") + ("nsw " if bits & 1 else "")


# --- the module ----------------------------------------------------------------------------


class _ModuleTranslator:
    """Collects globals, functions, declarations, attribute groups and metadata."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.functions: dict[str, llvm.FuncOp] = {
            op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)
        }
        self.struct_defs: dict[str, str] = {}
        """Named struct types: `%name` -> its body, defined at the top of the module."""
        self.declarations: dict[str, str] = {}
        """Module-level lines from `IREmitter.declare` and intrinsic calls, by symbol."""
        self.attribute_groups: dict[str, int] = {}
        self.metadata: dict[str, int] = {}
        self._param_attrs = _param_attr_table(self.type)

    def translate(self) -> str:
        globals_: list[str] = []
        functions: list[str] = []
        for op in self.module.ops:
            try:
                if isinstance(op, llvm.GlobalOp):
                    globals_.append(self.global_(op))
                elif isinstance(op, llvm.FuncOp):
                    functions.append(_FunctionTranslator(self, op).translate())
                else:
                    raise _Unsupported(
                        f"'{op.name}' cannot appear at module level in LLVM IR "
                        "(expected llvm.func or llvm.mlir.global)"
                    )
            except _Unsupported as exc:
                raise TranslationError(op, str(exc)) from None
        sections = [
            f'target datalayout = "{NVPTX_DATA_LAYOUT}"\ntarget triple = "{NVPTX_TRIPLE}"',
            "\n".join(f"{name} = type {body}" for name, body in self.struct_defs.items()),
            "\n".join(globals_),
            "\n\n".join(functions),
            "\n".join(self.declarations.values()),
            "\n".join(
                f"attributes #{n} = {{ {text} }}" for text, n in self.attribute_groups.items()
            ),
            "\n".join(f"!{n} = {text}" for text, n in self.metadata.items()),
        ]
        return "\n\n".join(s for s in sections if s) + "\n"

    # Types.

    def type(self, type: Attribute) -> str:
        if isinstance(type, IntegerType):
            return f"i{type.width.data}"
        if isinstance(type, IndexType):
            return "i64"
        if isinstance(type, llvm.LLVMPointerType):
            space = type.addr_space
            if isinstance(space, llvm.IntAttr) and space.data != 0:
                return f"ptr addrspace({space.data})"
            return "ptr"
        if isinstance(type, llvm.LLVMVoidType):
            return "void"
        if isinstance(type, llvm.LLVMArrayType):
            return f"[{type.size.data} x {self.type(type.type)}]"
        if isinstance(type, llvm.LLVMStructType):
            body = "{ " + ", ".join(self.type(t) for t in type.types.data) + " }"
            if body == "{  }":
                body = "{}"
            if not type.struct_name.data:
                return body
            name = "%" + (
                type.struct_name.data
                if _IDENTIFIER.fullmatch(type.struct_name.data)
                else _quote(type.struct_name.data)
            )
            if self.struct_defs.setdefault(name, body) != body:
                raise _Unsupported(f"struct type {name} is used with two different bodies")
            return name
        if isinstance(type, VectorType):
            if type.get_num_dims() != 1:
                raise _Unsupported(f"LLVM IR has only 1-D vectors, got {type}")
            prefix = "vscale x " if type.get_num_scalable_dims() else ""
            return f"<{prefix}{type.get_shape()[0]} x {self.type(type.get_element_type())}>"
        if isinstance(type, llvm.LLVMFunctionType):
            params = [self.type(t) for t in type.inputs.data]
            if type.is_variadic:
                params.append("...")
            return f"{self.type(type.output)} ({', '.join(params)})"
        for cls, spelling in _FLOAT_TYPES.items():
            if isinstance(type, cls):
                return spelling
        raise _Unsupported(f"type {type} has no LLVM IR equivalent")

    # Constants.

    def constant(self, value: Attribute, type: Attribute) -> str:
        """The literal of a constant attribute (`llvm.mlir.constant`, a global's value)."""
        if isinstance(value, IntegerAttr | FloatAttr) and not isinstance(
            type, VectorType | llvm.LLVMArrayType
        ):
            return _scalar_literal(value.value.data, type)
        if isinstance(value, StringAttr) and isinstance(type, llvm.LLVMArrayType):
            return "c" + _quote(value.data)
        if isinstance(value, DenseIntOrFPElementsAttr):
            values = list(value.get_values())
            count = _element_count(type)
            if len(values) == 1 and count != 1:
                values = values * count  # a splat
            if len(values) != count:
                raise _Unsupported(f"{len(values)} values do not fill {self.type(type)}")
            return self._aggregate(iter(values), type)
        if isinstance(value, IntegerAttr | FloatAttr) and isinstance(
            type, VectorType | llvm.LLVMArrayType
        ):  # a scalar splat into a vector or array
            return self._aggregate(iter([value.value.data] * _element_count(type)), type)
        raise _Unsupported(f"constant {value} of type {type} has no LLVM IR literal")

    def _aggregate(self, values: Any, type: Attribute) -> str:
        if isinstance(type, VectorType):
            element = type.get_element_type()
            items = [
                f"{self.type(element)} {_scalar_literal(next(values), element)}"
                for _ in range(type.get_shape()[0])
            ]
            return "<" + ", ".join(items) + ">"
        if isinstance(type, llvm.LLVMArrayType):
            element = type.type
            items = [
                f"{self.type(element)} {self._aggregate(values, element)}"
                for _ in range(type.size.data)
            ]
            return "[" + ", ".join(items) + "]"
        return _scalar_literal(next(values), type)

    # Module-level lines.

    def declare(self, line: str) -> None:
        """Adds a module-level line once; two different lines for one symbol are an error."""
        match = _DECLARED_NAME.search(line)
        key = match.group(0) if match else line
        if key in self.declarations:
            if self.declarations[key] != line:
                raise _Unsupported(
                    f"{key} is declared twice, differently:\n  {self.declarations[key]}\n  {line}"
                )
            return
        if match and key[1:] in self.functions:
            return  # the module declares or defines it itself (as an llvm.func)
        self.declarations[key] = line

    def attribute_group(self, attrs: Sequence[str]) -> str:
        """` #N` for a function attribute set ('' when empty), shared by equal sets."""
        if not attrs:
            return ""
        text = " ".join(attrs)
        number = self.attribute_groups.setdefault(text, len(self.attribute_groups))
        return f" #{number}"

    def metadata_node(self, text: str) -> str:
        number = self.metadata.setdefault(text, len(self.metadata))
        return f"!{number}"

    def param_attrs(self, attrs: DictionaryAttr | None, where: str) -> str:
        """`byval([128 x i8]) align 64 "nvvm.grid_constant" ` for a parameter or result."""
        if attrs is None:
            return ""
        data = dict(attrs.data)
        out: list[str] = []
        for key, spell in self._param_attrs:
            if key in data:
                spelling = spell(data.pop(key))
                if spelling is None:
                    raise _Unsupported(f"{where}: bad value for {key}")
                out.append(spelling)
        for key in data:
            if key.startswith(("llvm.", "nvvm.")):
                raise _Unsupported(f"{where}: attribute '{key}' has no LLVM IR translation here")
        return "".join(s + " " for s in out)

    def global_(self, op: llvm.GlobalOp) -> str:
        """`@g = internal addrspace(3) global [4096 x i8] undef, align 1024`"""
        linkage = op.linkage.linkage.data
        words = [_symbol(op.sym_name.data), "="]
        initializer = self._global_initializer(op)
        if initializer is None and linkage not in ("external", "extern_weak"):
            initializer = "undef"  # MLIR's rule for a global without value or region
        if linkage != _LINKAGE_DEFAULT or initializer is None:
            words.append(linkage)
        if op.dso_local is not None:
            words.append("dso_local")
        if op.visibility_ is not None and _VISIBILITY.get(op.visibility_.value.data):
            words.append(_VISIBILITY[op.visibility_.value.data])
        if op.thread_local_ is not None:
            words.append("thread_local")
        if op.unnamed_addr is not None and _UNNAMED_ADDR.get(op.unnamed_addr.value.data):
            words.append(_UNNAMED_ADDR[op.unnamed_addr.value.data])
        space = op.addr_space.value.data
        if space:
            words.append(f"addrspace({space})")
        words.append("constant" if op.constant is not None else "global")
        words.append(self.type(op.global_type))
        if initializer is not None:
            words.append(initializer)
        line = " ".join(words)
        if op.section is not None:
            line += f", section {_quote(op.section.data)}"
        if op.alignment is not None:
            line += f", align {op.alignment.value.data}"
        return line

    def _global_initializer(self, op: llvm.GlobalOp) -> str | None:
        if op.value is not None:
            return self.constant(op.value, op.global_type)
        if not op.body.blocks:
            return None
        # An initializer region: only a returned literal (constant, zero, undef, address).
        block = op.body.blocks[0]
        terminator = block.last_op
        if isinstance(terminator, llvm.ReturnOp) and terminator.arg is not None:
            literal = _literal_of(self, terminator.arg)
            if literal is not None and len(block.ops) <= 2:
                return literal
        raise _Unsupported(
            "only an initializer region that returns one constant, zero, undef or address "
            "can be translated"
        )


def _element_count(type: Attribute) -> int:
    if isinstance(type, VectorType):
        return type.get_shape()[0]
    if isinstance(type, llvm.LLVMArrayType):
        return type.size.data * _element_count(type.type)
    return 1


def _literal_of(module: _ModuleTranslator, value: SSAValue) -> str | None:
    """The inline literal for a value made by constant, zero, undef or addressof."""
    op = value.owner
    if isinstance(op, llvm.ConstantOp):
        return module.constant(op.value, op.result.type)
    if isinstance(op, llvm.UndefOp):
        return "undef"
    if isinstance(op, llvm.ZeroOp):
        type = op.res.type
        if isinstance(type, llvm.LLVMPointerType):
            return "null"
        if isinstance(type, IntegerType | IndexType):
            return "0"
        if type in _FLOAT_ZERO_TYPES:
            return _float_literal(0.0, type)
        return "zeroinitializer"
    if isinstance(op, llvm.AddressOfOp):
        return _symbol(op.global_name.root_reference.data)
    return None


_FLOAT_ZERO_TYPES = (Float16Type(), BFloat16Type(), Float32Type(), Float64Type())
_LITERAL_OPS = (llvm.ConstantOp, llvm.UndefOp, llvm.ZeroOp, llvm.AddressOfOp)


# --- functions -------------------------------------------------------------------------------


class _FunctionTranslator:
    """Translates one `llvm.func`; it is the `IREmitter` that `ToLLVMIR` ops print into."""

    def __init__(self, module: _ModuleTranslator, func: llvm.FuncOp):
        self.module = module
        self.func = func
        self.used_names: set[str] = set()
        self.names: dict[SSAValue, str] = {}
        """LLVM IR names (or literals) of values, fixed before any instruction is printed."""
        self.bound: dict[SSAValue, str] = {}
        """Names of the results of `ToLLVMIR` ops, known once the op has printed itself."""
        self.placeholders: dict[str, Callable[[], str | None]] = {}
        self.labels: dict[Block, str] = {}
        self.exit_labels: dict[Block, str] = {}
        """The LLVM block that ends each block (a `ToLLVMIR` op may open new blocks)."""
        self.lines: list[str] = []
        self.op: Operation = func
        self.block: Block | None = None
        self.counter = 0
        self.fresh_counter = 0
        self._toir_results: set[SSAValue] = set()

    # IREmitter.

    def value(self, value: SSAValue) -> str:
        if value in self.names:
            return self.names[value]
        if value in self.bound:
            return self.bound[value]
        if value in self._toir_results:
            token = f"\0{len(self.placeholders)}\0"
            self.placeholders[token] = lambda: self.bound.get(value)
            return token
        raise _Unsupported(f"value {value} is not defined in function @{self.func.sym_name.data}")

    def type(self, type: Attribute) -> str:
        return self.module.type(type)

    def typed(self, value: SSAValue) -> str:
        return f"{self.type(value.type)} {self.value(value)}"

    def fresh(self) -> str:
        while f"t{self.fresh_counter}" in self.used_names:
            self.fresh_counter += 1
        name = f"t{self.fresh_counter}"
        self.used_names.add(name)
        return "%" + name

    def emit(self, instruction: str) -> None:
        for line in instruction.splitlines():
            if match := _LABEL_LINE.match(line):  # a ToLLVMIR op opens a block of its own
                self.lines += ["", line.strip()]
                assert self.block is not None
                self.exit_labels[self.block] = "%" + match.group(1)
            else:
                self.lines.append("  " + line.strip())

    def declare(self, declaration: str) -> None:
        self.module.declare(declaration)

    def bind(self, result: SSAValue, name: str) -> None:
        self.bound[result] = name

    # Naming, before any instruction is printed.

    def _name(self, value: SSAValue) -> str:
        hint = value.name_hint
        if hint and _IDENTIFIER.fullmatch(hint):
            name, suffix = hint, 0
            while name in self.used_names:
                suffix += 1
                name = f"{hint}_{suffix}"
            self.used_names.add(name)
            return "%" + name
        name = str(self.counter)
        self.counter += 1
        return "%" + name

    def _assign_names(self, blocks: list[Block], edges: dict[Block, list[Any]]) -> None:
        # Labels first, so that a value hint `bb1` gets the suffix rather than the block.
        for index, block in enumerate(blocks):
            self.labels[block] = f"bb{index}"
            self.exit_labels[block] = f"%bb{index}"
            self.used_names.add(f"bb{index}")
        for index, block in enumerate(blocks):
            for arg in block.args:
                # A block nothing branches to has no phi; its arguments are poison.
                has_edges = index == 0 or edges.get(block)
                self.names[arg] = self._name(arg) if has_edges else "poison"
            for op in block.ops:
                self.op = op
                if isinstance(op, _LITERAL_OPS):
                    literal = _literal_of(self.module, op.results[0])
                    assert literal is not None
                    self.names[op.results[0]] = literal
                elif _is_llvm_op(op):
                    for result in op.results:
                        self.names[result] = self._name(result)
                else:
                    self._toir_results.update(op.results)

    # The function.

    def translate(self) -> str:
        """The function's text; an error is reported at the op being translated (`self.op`)."""
        try:
            return self._translate()
        except _Unsupported as exc:
            raise TranslationError(self.op, str(exc)) from None

    def _translate(self) -> str:
        func = self.func
        blocks = list(func.body.blocks)
        edges = self._edges(blocks)
        self._assign_names(blocks, edges)
        self.op = func
        header = self._header(func.function_type, blocks)
        if not blocks:
            return header
        for index, block in enumerate(blocks):
            self.block = block
            if index:
                self.lines += ["", f"{self.labels[block]}:"]
                self._phis(block, edges.get(block, []))
            else:
                self.lines.append(f"{self.labels[block]}:")
            for op in block.ops:
                self.op = op
                self._translate_op(op)
        self.op = func
        body = self._resolve_placeholders("\n".join(self.lines))
        return f"{header} {{\n{body}\n}}"

    def _resolve_placeholders(self, body: str) -> str:
        def resolve(match: re.Match[str]) -> str:
            name = self.placeholders[match.group(0)]()
            if name is None:
                raise _Unsupported("a result of a ToLLVMIR op is used but was never bound")
            return name

        if not self.placeholders:
            return body
        return re.sub("\0[0-9]+\0", resolve, body)

    def _header(self, ftype: llvm.LLVMFunctionType, blocks: list[Block]) -> str:
        func = self.func
        module = self.module
        where = f"@{func.sym_name.data}"
        attrs = dict(func.attributes)
        is_kernel = attrs.pop(_KERNEL_ATTR, None) is not None
        fn_attrs = self._function_attributes(attrs, where)
        words = ["define" if blocks else "declare"]
        linkage = func.linkage.linkage.data
        if linkage != _LINKAGE_DEFAULT:
            words.append(linkage)
        if visibility := _VISIBILITY.get(func.visibility_.value.data):
            words.append(visibility)
        cconv = func.CConv.convention.data
        if is_kernel:
            if cconv != "ccc" or not isinstance(ftype.output, llvm.LLVMVoidType):
                raise _Unsupported(
                    "an nvvm.kernel must return void and use the default calling convention"
                )
            words.append("ptx_kernel")
        elif cconv != "ccc":
            words.append(cconv)
        res_attrs = func.res_attrs.data[0] if func.res_attrs else None
        ret = module.param_attrs(res_attrs, f"{where} result") + module.type(ftype.output)
        words.append(ret)
        arg_attrs = func.arg_attrs.data if func.arg_attrs else ()
        params: list[str] = []
        for i, type in enumerate(ftype.inputs.data):
            text = module.type(type)
            if i < len(arg_attrs):
                attrs_i = module.param_attrs(arg_attrs[i], f"{where} argument #{i}")
                text += " " + attrs_i.rstrip() if attrs_i else ""
            if blocks:
                text += " " + self.names[blocks[0].args[i]]
            params.append(text)
        if ftype.is_variadic:
            params.append("...")
        header = " ".join(words) + f" {_symbol(func.sym_name.data)}({', '.join(params)})"
        if func.unnamed_addr is not None and _UNNAMED_ADDR.get(func.unnamed_addr.value.data):
            header += " " + _UNNAMED_ADDR[func.unnamed_addr.value.data]
        return header + module.attribute_group(fn_attrs)

    def _function_attributes(self, attrs: dict[str, Attribute], where: str) -> list[str]:
        """Function attributes from the nvvm launch bounds and llvm.func's properties.

        xDSL parses `attributes {passthrough = ..., no_unwind}` of a custom-form llvm.func
        into discardable attributes, not properties; both places are read.
        """

        def prop(name: str) -> Attribute | None:
            return self.func.properties.get(name) or attrs.pop(name, None)

        out: list[str] = []
        for key, keyword in (
            ("no_inline", "noinline"),
            ("no_unwind", "nounwind"),
            ("optimize_none", "optnone"),
        ):
            if prop(key) is not None:
                out.append(keyword)
        for key, name in (("target_cpu", "target-cpu"), ("tune_cpu", "tune-cpu")):
            if isinstance(value := prop(key), StringAttr):
                out.append(f"{_quote(name)}={_quote(value.data)}")
        if isinstance(value := prop("target_features"), llvm.TargetFeaturesAttr):
            features = ",".join(f.data for f in value.features.data)
            out.append(f'"target-features"={_quote(features)}')
        if isinstance(value := prop("frame_pointer"), llvm.FramePointerKindAttr):
            out.append(f'"frame-pointer"={_quote(str(value.data.value))}')
        passthrough = prop("passthrough")
        for entry in passthrough.data if isinstance(passthrough, ArrayAttr) else ():
            if isinstance(entry, StringAttr):
                out.append(entry.data if entry.data in _ENUM_FN_ATTRS else _quote(entry.data))
            elif (
                isinstance(entry, ArrayAttr)
                and len(entry.data) == 2
                and all(isinstance(e, StringAttr) for e in entry.data)
            ):
                key, value = (e.data for e in entry.data)  # pyright: ignore
                out.append(f"{_quote(key)}={_quote(value)}")
            else:
                raise _Unsupported(f"{where}: passthrough entry {entry} is not supported")
        for key, value in attrs.items():
            if key in _NVVM_LIST_ATTRS and (ints := _int_list(value)):
                out.append(f'"{_NVVM_LIST_ATTRS[key]}"="{",".join(map(str, ints))}"')
            elif key in _NVVM_INT_ATTRS and (n := _int_value(value)) is not None:
                out.append(f'"{_NVVM_INT_ATTRS[key]}"="{n}"')
            elif key.startswith(("llvm.", "nvvm.")):
                raise _Unsupported(
                    f"{where}: function attribute '{key} = {value}' has no translation here"
                )
        return out

    # Control flow.

    def _edges(self, blocks: list[Block]) -> dict[Block, list[Any]]:
        """For each block, the (predecessor, operands) of each edge that reaches it."""
        edges: dict[Block, list[Any]] = {}
        for block in blocks:
            terminator = block.last_op
            if terminator is None or not terminator.successors:
                continue
            if isinstance(terminator, llvm.BrOp):
                targets = [(terminator.successor, tuple(terminator.arguments))]
            elif isinstance(terminator, llvm.CondBrOp):
                targets = [
                    (terminator.then_block, tuple(terminator.then_arguments)),
                    (terminator.else_block, tuple(terminator.else_arguments)),
                ]
            else:
                raise TranslationError(
                    terminator, f"'{terminator.name}' branches, but only llvm.br/cond_br can"
                )
            for target, operands in targets:
                edges.setdefault(target, []).append((block, operands, terminator))
        return edges

    def _phis(self, block: Block, edges: list[Any]) -> None:
        if not edges:
            return
        # One phi entry per edge; a cond_br with both edges to one block must agree.
        seen: dict[Block, tuple[SSAValue, ...]] = {}
        for pred, operands, terminator in edges:
            if seen.setdefault(pred, operands) != operands:
                raise TranslationError(
                    terminator,
                    "both successors are the same block with different arguments; "
                    "LLVM IR cannot express that without an extra block",
                )
        for i, arg in enumerate(block.args):
            self.op = edges[0][2]
            incoming = ", ".join(
                f"[ {self.value(operands[i])}, {self._exit_label(pred)} ]"
                for pred, operands, _ in edges
            )
            self.lines.append(f"  {self.names[arg]} = phi {self.type(arg.type)} {incoming}")

    def _exit_label(self, block: Block) -> str:
        """The label of the LLVM block that ends `block`, known once `block` is printed."""
        token = f"\0{len(self.placeholders)}\0"
        self.placeholders[token] = lambda: self.exit_labels[block]
        return token

    # Ops.

    def _translate_op(self, op: Operation) -> None:
        if isinstance(op, _LITERAL_OPS):
            return  # printed inline where used
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if _is_llvm_op(op):
            raise _Unsupported(f"'{op.name}' has no LLVM IR translation yet")
        if isinstance(op, UnrealizedConversionCastOp):
            raise _Unsupported(
                "'builtin.unrealized_conversion_cast' has no LLVM IR equivalent; "
                "run reconcile-unrealized-casts first"
            )
        if isinstance(op, ToLLVMIR):
            op.to_llvm_ir(self)
            for i, result in enumerate(op.results):
                if result not in self.bound:
                    raise _Unsupported(f"'{op.name}' did not bind its result #{i}")
            return
        raise _Unsupported(
            f"'{op.name}' cannot be translated to LLVM IR: it is not an llvm dialect op and "
            "has no to_llvm_ir method"
        )

    def define(self, op: Operation, text: str) -> None:
        """Prints `%name = text` for the op's result, or `text` when it has none."""
        if op.results and not isinstance(op.results[0].type, llvm.LLVMVoidType):
            self.lines.append(f"  {self.names[op.results[0]]} = {text}")
        else:
            self.lines.append(f"  {text}")

    def call_intrinsic(
        self,
        op: Operation,
        name: str,
        args: Iterable[SSAValue],
        result_type: Attribute | None,
        fastmath: str = "",
        arg_prefixes: Sequence[str] = (),
    ) -> None:
        """`call T @llvm.x(args)`, declaring `@llvm.x` at module level."""
        args = list(args)
        ret = self.type(result_type) if result_type is not None else "void"
        types = [self.type(a.type) for a in args]
        self.declare(f"declare {ret} {_symbol(name)}({', '.join(types)})")
        prefixes = list(arg_prefixes) + [""] * (len(args) - len(arg_prefixes))
        operands = ", ".join(
            f"{t} {p}{self.value(a)}" for t, p, a in zip(types, prefixes, args, strict=True)
        )
        self.define(op, f"call {fastmath}{ret} {_symbol(name)}({operands})")


def _is_llvm_op(op: Operation) -> bool:
    return op.name.startswith("llvm.")


# --- one handler per llvm op -----------------------------------------------------------------

_Handler = Callable[[_FunctionTranslator, Any], None]
_HANDLERS: dict[type[Operation], _Handler] = {}


def _handles(*classes: type[Operation]) -> Callable[[_Handler], _Handler]:
    def register(handler: _Handler) -> _Handler:
        for cls in classes:
            _HANDLERS[cls] = handler
        return handler

    return register


_INT_BINARY = {
    llvm.AddOp: "add",
    llvm.SubOp: "sub",
    llvm.MulOp: "mul",
    llvm.UDivOp: "udiv",
    llvm.SDivOp: "sdiv",
    llvm.URemOp: "urem",
    llvm.SRemOp: "srem",
    llvm.AndOp: "and",
    llvm.OrOp: "or",
    llvm.XOrOp: "xor",
    llvm.ShlOp: "shl",
    llvm.LShrOp: "lshr",
    llvm.AShrOp: "ashr",
}
_FLOAT_BINARY = {
    llvm.FAddOp: "fadd",
    llvm.FSubOp: "fsub",
    llvm.FMulOp: "fmul",
    llvm.FDivOp: "fdiv",
    llvm.FRemOp: "frem",
}
_CASTS = {
    llvm.TruncOp: "trunc",
    llvm.ZExtOp: "zext",
    llvm.SExtOp: "sext",
    llvm.PtrToIntOp: "ptrtoint",
    llvm.IntToPtrOp: "inttoptr",
    llvm.BitcastOp: "bitcast",
    llvm.SIToFPOp: "sitofp",
    llvm.FPExtOp: "fpext",
    llvm.FPTruncOp: "fptrunc",
}
# Float intrinsics of the llvm dialect: op -> LLVM name, overloaded on the result type.
_FLOAT_INTRINSICS = {
    llvm.FAbsOp: "llvm.fabs",
    llvm.FCeilOp: "llvm.ceil",
    llvm.FFloorOp: "llvm.floor",
    llvm.FSqrtOp: "llvm.sqrt",
    llvm.FExp2Op: "llvm.exp2",
    llvm.FExpOp: "llvm.exp",
    llvm.FLogOp: "llvm.log",
    llvm.FLog2Op: "llvm.log2",
    llvm.FSinOp: "llvm.sin",
    llvm.FCosOp: "llvm.cos",
    llvm.FCopySignOp: "llvm.copysign",
    llvm.VectorFMaxOp: "llvm.maxnum",
    llvm.VectorFMinOp: "llvm.minnum",
    llvm.FPowOp: "llvm.pow",
    llvm.FMAOp: "llvm.fma",
}


def _mangle(type: Attribute) -> str:
    """The overload suffix of an intrinsic name: f32, v4f32, p3, i64."""
    if isinstance(type, VectorType):
        return f"v{type.get_shape()[0]}{_mangle(type.get_element_type())}"
    if isinstance(type, llvm.LLVMPointerType):
        space = type.addr_space
        return f"p{space.data if isinstance(space, llvm.IntAttr) else 0}"
    if isinstance(type, IntegerType):
        return f"i{type.width.data}"
    names = {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "f32", Float64Type: "f64"}
    for cls, name in names.items():
        if isinstance(type, cls):
            return name
    raise _Unsupported(f"no intrinsic overload for type {type}")


@_handles(*_INT_BINARY)
def _int_binary(t: _FunctionTranslator, op: Any) -> None:
    flags = ""
    if isinstance(op, llvm.ArithmeticBinOpOverflow):
        flags = _overflow(op.overflowFlags)
    elif isinstance(op, llvm.ArithmeticBinOpExact) and op.is_exact is not None:
        flags = "exact "
    elif isinstance(op, llvm.ArithmeticBinOpDisjoint) and op.is_disjoint is not None:
        flags = "disjoint "
    opcode = _INT_BINARY[type(op)]
    t.define(op, f"{opcode} {flags}{t.typed(op.lhs)}, {t.value(op.rhs)}")


@_handles(*_FLOAT_BINARY)
def _float_binary(t: _FunctionTranslator, op: Any) -> None:
    opcode = _FLOAT_BINARY[type(op)]
    t.define(op, f"{opcode} {_fastmath(op.fastmathFlags)}{t.typed(op.lhs)}, {t.value(op.rhs)}")


@_handles(llvm.FNegOp)
def _fneg(t: _FunctionTranslator, op: llvm.FNegOp) -> None:
    t.define(op, f"fneg {_fastmath(op.fastmathFlags)}{t.typed(op.arg)}")


@_handles(llvm.ICmpOp)
def _icmp(t: _FunctionTranslator, op: llvm.ICmpOp) -> None:
    predicate = llvm.ICmpPredicateFlag.from_int(op.predicate.value.data).value
    t.define(op, f"icmp {predicate} {t.typed(op.lhs)}, {t.value(op.rhs)}")


@_handles(llvm.FCmpOp)
def _fcmp(t: _FunctionTranslator, op: llvm.FCmpOp) -> None:
    predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value.lstrip("_")
    t.define(
        op,
        f"fcmp {_fastmath(op.fastmathFlags)}{predicate} {t.typed(op.lhs)}, {t.value(op.rhs)}",
    )


@_handles(llvm.SelectOp)
def _select(t: _FunctionTranslator, op: llvm.SelectOp) -> None:
    fmf = _fastmath(op.fastmathFlags)
    t.define(op, f"select {fmf}{t.typed(op.cond)}, {t.typed(op.lhs)}, {t.typed(op.rhs)}")


@_handles(*_CASTS)
def _cast(t: _FunctionTranslator, op: Any) -> None:
    flags = ""
    if isinstance(op, llvm.TruncOp):
        flags = _overflow(op.overflowFlags)
    elif isinstance(op, llvm.ZExtOp) and op.non_neg is not None:
        flags = "nneg "
    result = op.results[0]
    t.define(op, f"{_CASTS[type(op)]} {flags}{t.typed(op.operands[0])} to {t.type(result.type)}")


@_handles(llvm.GEPOp)
def _gep(t: _FunctionTranslator, op: llvm.GEPOp) -> None:
    # MLIR's GEPNoWrapFlags: inbounds = 1 (| nusw), nusw = 2, nuw = 4.
    bits = op.noWrapFlags.value.data
    flags = ""
    if op.inbounds is not None or bits & 1:
        flags += "inbounds "
    elif bits & 2:
        flags += "nusw "
    if bits & 4:
        flags += "nuw "
    dynamic = iter(op.ssa_indices)
    indices: list[str] = []
    for index in op.rawConstantIndices.get_values():
        if index == llvm.GEP_USE_SSA_VAL:
            indices.append(t.typed(next(dynamic)))
        else:
            indices.append(f"i32 {index}")  # struct field indices must be i32
    # The pointer keeps its address space: `ptr addrspace(3) %p` (xDSL's converter drops it).
    operands = ", ".join([t.type(op.elem_type), t.typed(op.ptr), *indices])
    t.define(op, f"getelementptr {flags}{operands}")


def _alignment(op: Any) -> str:
    return f", align {op.alignment.value.data}" if op.alignment is not None else ""


def _ordering(op: Any) -> str | None:
    ordering = op.ordering.value.data if op.ordering is not None else 0
    if ordering == 0:
        return None
    if ordering not in _ATOMIC_ORDERING:
        raise _Unsupported(f"unknown atomic ordering {ordering}")
    return _ATOMIC_ORDERING[ordering]


@_handles(llvm.LoadOp)
def _load(t: _FunctionTranslator, op: llvm.LoadOp) -> None:
    ordering = _ordering(op)
    atomic = "atomic " if ordering else ""
    order = f" {ordering}" if ordering else ""
    result_type = t.type(op.dereferenced_value.type)
    t.define(op, f"load {atomic}{result_type}, {t.typed(op.ptr)}{order}{_alignment(op)}")


@_handles(llvm.StoreOp)
def _store(t: _FunctionTranslator, op: llvm.StoreOp) -> None:
    ordering = _ordering(op)
    atomic = "atomic " if ordering else ""
    volatile = "volatile " if op.volatile_ is not None else ""
    order = f" {ordering}" if ordering else ""
    text = f"store {atomic}{volatile}{t.typed(op.value)}, {t.typed(op.ptr)}{order}"
    text += _alignment(op)
    if op.nontemporal is not None:
        text += f", !nontemporal {t.module.metadata_node('!{i32 1}')}"
    t.define(op, text)


@_handles(llvm.AllocaOp)
def _alloca(t: _FunctionTranslator, op: llvm.AllocaOp) -> None:
    text = f"alloca {t.type(op.elem_type)}, {t.typed(op.size)}{_alignment(op)}"
    space = op.res.type.addr_space if isinstance(op.res.type, llvm.LLVMPointerType) else None
    if isinstance(space, llvm.IntAttr) and space.data:
        text += f", addrspace({space.data})"
    t.define(op, text)


_TAIL_CALL = {"none": "", "tail": "tail ", "musttail": "musttail ", "notail": "notail "}


@_handles(llvm.InlineAsmOp)
def _inline_asm(t: _FunctionTranslator, op: llvm.InlineAsmOp) -> None:
    """`call T asm sideeffect "ptx", "constraints"(args)`; several results come as a struct."""
    ret = t.type(op.res.type) if op.res is not None else "void"
    keywords = ""
    if op.has_side_effects is not None:
        keywords += "sideeffect "
    if op.is_align_stack is not None:
        keywords += "alignstack "
    if op.asm_dialect is not None and op.asm_dialect.value.data == 1:
        keywords += "inteldialect "
    args = ", ".join(t.typed(a) for a in op.operands_)
    tail = _TAIL_CALL[op.tail_call_kind.data.value]
    asm = f"{_quote(op.asm_string.data)}, {_quote(op.constraints.data)}"
    t.define(op, f"{tail}call {ret} asm {keywords}{asm}({args})")


@_handles(llvm.CallIntrinsicOp)
def _call_intrinsic(t: _FunctionTranslator, op: llvm.CallIntrinsicOp) -> None:
    if op.op_bundle_operands:
        raise _Unsupported("operand bundles are not supported")
    result = op.ress.type if op.ress is not None else None
    t.call_intrinsic(op, op.intrin.data, op.args, result, _fastmath(op.fastmathFlags))


@_handles(llvm.CallOp)
def _call(t: _FunctionTranslator, op: llvm.CallOp) -> None:
    if op.op_bundle_operands:
        raise _Unsupported("operand bundles are not supported")
    words = _TAIL_CALL[op.TailCallKind.data.value] + "call "
    cconv = op.CConv.convention.data
    if cconv != "ccc":
        words += cconv + " "
    words += _fastmath(op.fastmathFlags)
    ret = t.type(op.returned.type) if op.returned is not None else "void"
    args = list(op.args)
    if op.callee is None:  # indirect: the first operand is the callee pointer
        callee, args = t.value(args[0]), args[1:]
    else:
        callee = _symbol(op.callee.root_reference.data)
    signature = ret
    ftype = op.var_callee_type
    if ftype is None and op.callee is not None:
        target = t.module.functions.get(op.callee.root_reference.data)
        if target is not None and target.function_type.is_variadic:
            ftype = target.function_type
    if ftype is not None and ftype.is_variadic:
        signature = t.type(ftype)  # varargs calls spell the callee's type: `void (i32, ...)`
    t.define(op, f"{words}{signature} {callee}({', '.join(t.typed(a) for a in args)})")


@_handles(*_FLOAT_INTRINSICS)
def _float_intrinsic(t: _FunctionTranslator, op: Any) -> None:
    result = op.results[0]
    name = f"{_FLOAT_INTRINSICS[type(op)]}.{_mangle(result.type)}"
    t.call_intrinsic(op, name, op.operands, result.type, _fastmath(op.fastmathFlags))


@_handles(llvm.VectorReduceFAddOp, llvm.VectorReduceFMulOp)
def _vector_reduce(t: _FunctionTranslator, op: Any) -> None:
    kind = "fadd" if isinstance(op, llvm.VectorReduceFAddOp) else "fmul"
    name = f"llvm.vector.reduce.{kind}.{_mangle(op.vector.type)}"
    t.call_intrinsic(
        op, name, [op.start_value, op.vector], op.res.type, _fastmath(op.fastmathFlags)
    )


@_handles(llvm.MaskedStoreOp)
def _masked_store(t: _FunctionTranslator, op: llvm.MaskedStoreOp) -> None:
    # LLVM 22 moved the alignment from an i32 operand to an `align` on the pointer.
    name = f"llvm.masked.store.{_mangle(op.value.type)}.{_mangle(op.data.type)}"
    align = f"align {op.alignment.value.data} "
    t.call_intrinsic(op, name, [op.value, op.data, op.mask], None, arg_prefixes=["", align])


@_handles(llvm.StackSaveOp)
def _stacksave(t: _FunctionTranslator, op: llvm.StackSaveOp) -> None:
    t.call_intrinsic(op, f"llvm.stacksave.{_mangle(op.res.type)}", [], op.res.type)


@_handles(llvm.StackRestoreOp)
def _stackrestore(t: _FunctionTranslator, op: llvm.StackRestoreOp) -> None:
    t.call_intrinsic(op, f"llvm.stackrestore.{_mangle(op.ptr.type)}", [op.ptr], None)


@_handles(llvm.ExtractValueOp)
def _extractvalue(t: _FunctionTranslator, op: llvm.ExtractValueOp) -> None:
    position = ", ".join(str(i) for i in op.position.get_values())
    t.define(op, f"extractvalue {t.typed(op.container)}, {position}")


@_handles(llvm.InsertValueOp)
def _insertvalue(t: _FunctionTranslator, op: llvm.InsertValueOp) -> None:
    position = ", ".join(str(i) for i in op.position.get_values())
    t.define(op, f"insertvalue {t.typed(op.container)}, {t.typed(op.value)}, {position}")


@_handles(llvm.InsertElementOp)
def _insertelement(t: _FunctionTranslator, op: llvm.InsertElementOp) -> None:
    t.define(op, f"insertelement {t.typed(op.vector)}, {t.typed(op.value)}, {t.typed(op.index)}")


@_handles(llvm.ShuffleVectorOp)
def _shufflevector(t: _FunctionTranslator, op: llvm.ShuffleVectorOp) -> None:
    mask = [int(i) for i in op.mask.get_values()]
    items = ", ".join("i32 poison" if i < 0 else f"i32 {i}" for i in mask)
    t.define(
        op,
        f"shufflevector {t.typed(op.v1)}, {t.typed(op.v2)}, <{len(mask)} x i32> <{items}>",
    )


@_handles(llvm.BrOp)
def _br(t: _FunctionTranslator, op: llvm.BrOp) -> None:
    t.define(op, f"br label %{t.labels[op.successor]}")


@_handles(llvm.CondBrOp)
def _cond_br(t: _FunctionTranslator, op: llvm.CondBrOp) -> None:
    then, else_ = t.labels[op.then_block], t.labels[op.else_block]
    t.define(op, f"br {t.typed(op.cond)}, label %{then}, label %{else_}")


@_handles(llvm.ReturnOp)
def _return(t: _FunctionTranslator, op: llvm.ReturnOp) -> None:
    t.define(op, f"ret {t.typed(op.arg)}" if op.arg is not None else "ret void")


@_handles(llvm.UnreachableOp)
def _unreachable(t: _FunctionTranslator, op: llvm.UnreachableOp) -> None:
    t.define(op, "unreachable")
