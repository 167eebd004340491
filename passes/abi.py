"""The kernel ABI: what the runtime needs to launch a compiled kernel.

`convert-copy-to-nvvm` records it on each kernel as the `copy.abi` attribute; `kernel_abis`
reads it back from the lowered module as plain Python data, which `copy-opt -t cubin -o
K.cubin` writes to `K.cubin.json` beside the cubin:

```json
{"format": 2, "target": "sm_90a", "kernels": {"tile_copy": {
  "params": [{"kind": "pointer", "arg": 0, "element": "f32", "shape": [4096, 4096]},
             {"kind": "tensor_map", "arg": 0, "box": [64, 64], "swizzle": 16,
              "oob": "zeros", "dtype": "FLOAT32", "written": false}],
  "block": [128, 1, 1], "cluster": [1, 1, 1], "smem_bytes": 17408}}}
```

A `pointer` parameter is the device address of the kernel's argument `arg`; a `tensor_map`
parameter is a `CUtensorMap` the runtime encodes over that same array (box outermost dim
first, one entry per array dim; `swizzle` in bytes, 16 meaning none; `oob` "zeros" or "nan";
`dtype` a `CUtensorMapDataType` name; `written` true when a TMA store or reduction writes
the array through it, whose innermost extent the runtime then checks: rule TR19); a `scalar`
parameter is passed by value.

Format 2 added `written`.
"""

from __future__ import annotations

import json
from typing import Any

from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    i1,
)
from xdsl.ir import Attribute

ABI_FORMAT = 2


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


def kernel_abis(module: builtin.ModuleOp) -> dict[str, Any]:
    """The ABI of every kernel of a lowered module (`llvm.func` or `func.func` with
    `copy.abi`), as JSON-ready data."""
    kernels: dict[str, Any] = {}
    target = None
    for op in module.walk():
        abi = op.attributes.get("copy.abi")
        if not isinstance(abi, DictionaryAttr):
            continue
        name = op.properties.get("sym_name")
        assert isinstance(name, StringAttr)
        facts = _plain(abi)
        target = facts.pop("target", target)
        kernels[name.data] = facts
        if isinstance(op, llvm.FuncOp):
            facts["name"] = name.data
    return {"format": ABI_FORMAT, "target": target, "kernels": kernels}


def dumps(abi: dict[str, Any]) -> str:
    return json.dumps(abi, indent=1, sort_keys=True) + "\n"
