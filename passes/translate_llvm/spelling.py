"""How LLVM IR spells names, strings and scalar literals, and the errors of the translation:
`Unsupported` below the op level, `TranslationError` (naming the op) above it."""

from __future__ import annotations

import re
import struct

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException


class TranslationError(DiagnosticException):
    """An op (or an attribute of it) that has no LLVM IR translation; `op` says which."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


class Unsupported(Exception):
    """Raised below the op level; the op being translated turns it into a TranslationError."""


IDENTIFIER = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*")


def quote(text: str) -> str:
    """An LLVM IR string literal: `"`, `\\` and non-printable bytes as `\\XX`."""
    out: list[str] = []
    for byte in text.encode():
        if 0x20 <= byte < 0x7F and byte not in (0x22, 0x5C):
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def symbol(name: str, sigil: str = "@") -> str:
    """`@name` (or `%name` for a named type), quoted where LLVM needs it."""
    return sigil + (name if IDENTIFIER.fullmatch(name) else quote(name))


def float_literal(value: float, type: Attribute) -> str:
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
    raise Unsupported(f"no LLVM IR literal for a {type} constant")


def scalar_literal(value: float, type: Attribute) -> str:
    if isinstance(type, IntegerType):
        if type.width.data == 1:
            return "true" if value else "false"
        return str(int(value))
    if isinstance(type, IndexType):
        return str(int(value))
    return float_literal(float(value), type)
