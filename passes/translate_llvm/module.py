"""The module level of the translation: types (and the named structs they define), constant
literals, the module's declarations, attribute groups and metadata, and its globals."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
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
    VectorType,
)
from xdsl.ir import Attribute, SSAValue

from passes.translate_llvm.attributes import (
    LINKAGE_DEFAULT,
    UNNAMED_ADDR,
    VISIBILITY,
    param_attr_table,
)
from passes.translate_llvm.spelling import (
    Unsupported,
    float_literal,
    quote,
    scalar_literal,
    symbol,
)

_DECLARED_NAME = re.compile(r'@([-a-zA-Z$._0-9]+|"[^"]*")')

_FLOAT_TYPES: dict[type[Attribute], str] = {
    Float16Type: "half",
    BFloat16Type: "bfloat",
    Float32Type: "float",
    Float64Type: "double",
    Float80Type: "x86_fp80",
    Float128Type: "fp128",
}

_FLOAT_ZERO_TYPES = (Float16Type(), BFloat16Type(), Float32Type(), Float64Type())
LITERAL_OPS = (llvm.ConstantOp, llvm.UndefOp, llvm.ZeroOp, llvm.AddressOfOp)
"""The ops whose results print inline as literals, where they are used."""


class ModuleTranslator:
    """The module-level state of a translation: the module's functions, named struct types,
    declarations, attribute groups and metadata; and the spelling of types, constants and
    globals."""

    def __init__(self, module: ModuleOp):
        self.functions: dict[str, llvm.FuncOp] = {
            op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)
        }
        self.struct_defs: dict[str, str] = {}
        """Named struct types: `%name` -> its body, defined at the top of the module."""
        self.declarations: dict[str, str] = {}
        """Module-level lines from `IREmitter.declare` and intrinsic calls, by symbol."""
        self.attribute_groups: dict[str, int] = {}
        self.metadata: dict[str, int] = {}
        self._param_attrs = param_attr_table(self.type)

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
            name = symbol(type.struct_name.data, "%")
            if self.struct_defs.setdefault(name, body) != body:
                raise Unsupported(f"struct type {name} is used with two different bodies")
            return name
        if isinstance(type, VectorType):
            if type.get_num_dims() != 1:
                raise Unsupported(f"LLVM IR has only 1-D vectors, got {type}")
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
        raise Unsupported(f"type {type} has no LLVM IR equivalent")

    # Constants.

    def constant(self, value: Attribute, type: Attribute) -> str:
        """The literal of a constant attribute (`llvm.mlir.constant`, a global's value)."""
        if isinstance(value, IntegerAttr | FloatAttr) and not isinstance(
            type, VectorType | llvm.LLVMArrayType
        ):
            return scalar_literal(value.value.data, type)
        if isinstance(value, StringAttr) and isinstance(type, llvm.LLVMArrayType):
            return "c" + quote(value.data)
        if isinstance(value, DenseIntOrFPElementsAttr):
            values = list(value.get_values())
            count = _element_count(type)
            if len(values) == 1 and count != 1:
                values = values * count  # a splat
            if len(values) != count:
                raise Unsupported(f"{len(values)} values do not fill {self.type(type)}")
            return self._aggregate(iter(values), type)
        if isinstance(value, IntegerAttr | FloatAttr) and isinstance(
            type, VectorType | llvm.LLVMArrayType
        ):  # a scalar splat into a vector or array
            return self._aggregate(iter([value.value.data] * _element_count(type)), type)
        raise Unsupported(f"constant {value} of type {type} has no LLVM IR literal")

    def _aggregate(self, values: Any, type: Attribute) -> str:
        if isinstance(type, VectorType):
            element = type.get_element_type()
            items = [
                f"{self.type(element)} {scalar_literal(next(values), element)}"
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
        return scalar_literal(next(values), type)

    # Module-level lines.

    def declare(self, line: str) -> None:
        """Adds a module-level line once; two different lines for one symbol are an error."""
        match = _DECLARED_NAME.search(line)
        key = match.group(0) if match else line
        if key in self.declarations:
            if self.declarations[key] != line:
                raise Unsupported(
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
                    raise Unsupported(f"{where}: bad value for {key}")
                out.append(spelling)
        for key in data:
            if key.startswith(("llvm.", "nvvm.")):
                raise Unsupported(f"{where}: attribute '{key}' has no LLVM IR translation here")
        return "".join(s + " " for s in out)

    def global_(self, op: llvm.GlobalOp) -> str:
        """`@g = internal addrspace(3) global [4096 x i8] undef, align 1024`"""
        linkage = op.linkage.linkage.data
        words = [symbol(op.sym_name.data), "="]
        initializer = self._global_initializer(op)
        if initializer is None and linkage not in ("external", "extern_weak"):
            initializer = "undef"  # MLIR's rule for a global without value or region
        if linkage != LINKAGE_DEFAULT or initializer is None:
            words.append(linkage)
        if op.dso_local is not None:
            words.append("dso_local")
        if op.visibility_ is not None and VISIBILITY.get(op.visibility_.value.data):
            words.append(VISIBILITY[op.visibility_.value.data])
        if op.thread_local_ is not None:
            words.append("thread_local")
        if op.unnamed_addr is not None and UNNAMED_ADDR.get(op.unnamed_addr.value.data):
            words.append(UNNAMED_ADDR[op.unnamed_addr.value.data])
        space = op.addr_space.value.data
        if space:
            words.append(f"addrspace({space})")
        words.append("constant" if op.constant is not None else "global")
        words.append(self.type(op.global_type))
        if initializer is not None:
            words.append(initializer)
        line = " ".join(words)
        if op.section is not None:
            line += f", section {quote(op.section.data)}"
        if op.alignment is not None:
            line += f", align {op.alignment.value.data}"
        return line

    def literal(self, value: SSAValue) -> str | None:
        """The inline literal for a value made by constant, zero, undef or addressof."""
        op = value.owner
        if isinstance(op, llvm.ConstantOp):
            return self.constant(op.value, op.result.type)
        if isinstance(op, llvm.UndefOp):
            return "undef"
        if isinstance(op, llvm.ZeroOp):
            type = op.res.type
            if isinstance(type, llvm.LLVMPointerType):
                return "null"
            if isinstance(type, IntegerType | IndexType):
                return "0"
            if type in _FLOAT_ZERO_TYPES:
                return float_literal(0.0, type)
            return "zeroinitializer"
        if isinstance(op, llvm.AddressOfOp):
            return symbol(op.global_name.root_reference.data)
        return None

    def _global_initializer(self, op: llvm.GlobalOp) -> str | None:
        if op.value is not None:
            return self.constant(op.value, op.global_type)
        if not op.body.blocks:
            return None
        # An initializer region: only a returned literal (constant, zero, undef, address).
        block = op.body.blocks[0]
        terminator = block.last_op
        if isinstance(terminator, llvm.ReturnOp) and terminator.arg is not None:
            literal = self.literal(terminator.arg)
            if literal is not None and len(block.ops) <= 2:
                return literal
        raise Unsupported(
            "only an initializer region that returns one constant, zero, undef or address "
            "can be translated"
        )


def _element_count(type: Attribute) -> int:
    if isinstance(type, VectorType):
        return type.get_shape()[0]
    if isinstance(type, llvm.LLVMArrayType):
        return type.size.data * _element_count(type.type)
    return 1
