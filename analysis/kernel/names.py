"""Function names the PTX can carry (rule AT2): a kernel's or device function's symbol is
its PTX name (`.entry`, `.func`) and the name the runtime looks the kernel up by, so it must
be a PTX identifier (PTX ISA, "Identifiers": a letter then letters, digits, `_` and `$`, or
`_`, `$` or `%` then at least one of those). LLVM's NVPTX backend aborts on other characters
("Symbol name with unsupported characters") or writes PTX that ptxas cannot parse (a `.`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from analysis.kernel.kernel import Kernel
from copy_dialect.errors import CopyVerifyException as Error

PTX_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+")


def check_function_name(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """`kernel`'s symbol name is a PTX identifier."""
    name = kernel.op.properties.get("sym_name") or kernel.op.attributes.get("sym_name")
    if not isinstance(name, StringAttr):
        return
    # rule: AT2
    if not PTX_IDENTIFIER.fullmatch(name.data):
        legal = re.sub(r"[^A-Za-z0-9_$]", "_", name.data)
        if not PTX_IDENTIFIER.fullmatch(legal):
            legal = f"k_{legal}"
        yield kernel.op, Error(
            f"the function name {name.data!r} is not a PTX identifier: PTX names a function "
            "with a letter, then letters, digits, '_' and '$' (or '_', '$' or '%' first)",
            note=f"rename it, e.g. @{legal}: the name is the kernel's PTX entry and the one "
            "the runtime launches it by",
        )
