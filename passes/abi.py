"""The kernel ABI in the IR: a kernel's `KernelAbi` (facts.abi) as its `copy.abi`
attribute, and back.

`convert-copy-to-nvvm` records the attribute on each kernel (`abi_attr`); `kernel_abis` reads
every kernel's back from the lowered module, for `copy-opt -t cubin` and `compile_module`. The
attribute is the record's JSON form spelled in builtin attributes (dictionaries, strings, i64
integers and arrays, i1 booleans), so that the record has one definition.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import builtin
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation

from facts.abi import KernelAbi, ModuleAbi


def abi_attr(kernel: KernelAbi) -> DictionaryAttr:
    """The `copy.abi` attribute that records `kernel`."""
    attr = _attr(kernel.to_dict())
    assert isinstance(attr, DictionaryAttr)
    return attr


def recorded_abi(op: Operation) -> KernelAbi | None:
    """The ABI recorded on kernel `op` (its `copy.abi`), None where it has none."""
    attr = op.attributes.get("copy.abi")
    return KernelAbi.from_dict(_plain(attr)) if isinstance(attr, DictionaryAttr) else None


def kernel_abis(module: builtin.ModuleOp, target: str, arch: str | None = None) -> ModuleAbi:
    """The ABI of every kernel of a lowered module (an op with `copy.abi`), compiled for
    `target`, its SASS for `arch` (None, or the target itself: the target's own)."""
    kernels: dict[str, KernelAbi] = {}
    for op in module.walk():
        if (kernel := recorded_abi(op)) is not None:
            kernels[kernel.name] = kernel
    return ModuleAbi(target, kernels, None if arch == target else arch)


def _attr(value: Any) -> Attribute:
    match value:
        case dict():
            return DictionaryAttr({k: _attr(v) for k, v in value.items()})
        case bool():
            return IntegerAttr(int(value), i1)
        case int():
            return IntegerAttr(value, i64)
        case str():
            return StringAttr(value)
        case list() if all(isinstance(v, int) for v in value):
            return DenseArrayBase.from_list(i64, value)
        case _:
            return ArrayAttr([_attr(v) for v in value])


def _plain(attr: Attribute) -> Any:
    if isinstance(attr, DictionaryAttr):
        return {k: _plain(v) for k, v in attr.data.items()}
    if isinstance(attr, ArrayAttr):
        return [_plain(v) for v in attr.data]
    if isinstance(attr, DenseArrayBase):
        return [int(v) for v in attr.get_values()]
    if isinstance(attr, IntegerAttr):
        return bool(attr.value.data) if attr.type == i1 else attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    return str(attr)
