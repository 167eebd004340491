"""Symbol names the PTX can carry (rule AT2): a kernel's or device function's symbol is its
PTX name (`.entry`, `.func`) and the name the runtime looks the kernel up by, and a global
or function a kernel refers to (`llvm.mlir.addressof`, `func.call`) is emitted under its
name too, so each must be a PTX identifier that LLVM's NVPTX backend and ptxas take: a
letter, then letters, digits, `_` and `$`, or `_` or `$` then at least one of those (PTX
ISA, "Identifiers"), and not `WARP_SZ`, PTX's one predefined identifier without a `%`. The
ISA also allows a leading `%`, but LLVM's NVPTX backend aborts on it as on any character
outside its set ("Symbol name with unsupported characters"); ptxas cannot parse a `.` or
`WARP_SZ`. Names are checked, not mangled, so that the name the user wrote is the one the
ABI records and the runtime finds."""

from __future__ import annotations

import re
from collections.abc import Iterator

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation

from analysis.kernel.kernel import Kernel
from copy_dialect.errors import CopyVerifyException as Error

PTX_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_$]*|[_$][A-Za-z0-9_$]+")
PREDEFINED = frozenset({"WARP_SZ"})
"""PTX's predefined identifiers that take no `%` (ptxas: "Parsing error near 'WARP_SZ'")."""

_RULE = (
    "PTX names a symbol with a letter, then letters, digits, '_' and '$' (or '_' or '$' "
    "first, then one of those), and not WARP_SZ"
)


def is_ptx_name(name: str) -> bool:
    """Whether `name` is a PTX identifier LLVM's NVPTX backend and ptxas take."""
    return PTX_IDENTIFIER.fullmatch(name) is not None and name not in PREDEFINED


def legal_name(name: str) -> str:
    """A PTX identifier close to `name`, for the fix note."""
    legal = re.sub(r"[^A-Za-z0-9_$]", "_", name)
    if not is_ptx_name(legal):
        legal = f"k_{legal}"
    return legal


def check_function_name(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """`kernel`'s symbol name is a PTX identifier, and so is every symbol its ops refer to."""
    name = kernel.op.properties.get("sym_name") or kernel.op.attributes.get("sym_name")
    if isinstance(name, StringAttr):
        # rule: AT2
        if not is_ptx_name(name.data):
            yield kernel.op, Error(
                f"the function name {name.data!r} is not a PTX identifier: {_RULE}",
                note=f"rename it, e.g. @{legal_name(name.data)}: the name is the kernel's PTX "
                "entry and the one the runtime launches it by",
            )
    for op in kernel.ops[1:]:
        for symbol in _symbols(op):
            # rule: AT2
            if not is_ptx_name(symbol):
                yield op, Error(
                    f"the symbol {symbol!r} that {op.name} refers to is not a PTX "
                    f"identifier: {_RULE}",
                    note=f"rename it and its definition, e.g. @{legal_name(symbol)}: it is "
                    "emitted under its name in the PTX",
                )


def _symbols(op: Operation) -> Iterator[str]:
    """The names of the symbols `op` refers to (its `SymbolRefAttr` properties and
    attributes, each nested reference)."""
    values: list[Attribute] = [*op.properties.values(), *op.attributes.values()]
    for value in values:
        if isinstance(value, SymbolRefAttr):
            yield value.root_reference.data
            yield from (ref.data for ref in value.nested_references.data)
