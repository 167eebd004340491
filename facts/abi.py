"""The kernel ABI: what the runtime needs to launch a compiled kernel, as typed records.

`convert-copy-to-nvvm` builds a `KernelAbi` for each kernel and records it on the kernel as
its `copy.abi` attribute (passes.abi); `copy-opt -t cubin -o K.cubin` writes the
module's `ModuleAbi` to `K.cubin.json` beside the cubin, and the runtime reads it back. The
module is plain data (the standard library only): the passes that write the record and the
runtime that reads it, without a compiler, share this one definition.

```json
{"format": 2, "target": "sm_90a", "kernels": {"tile_copy": {"name": "tile_copy",
  "params": [{"kind": "pointer", "arg": 0, "element": "f32", "shape": [4096, 4096]},
             {"kind": "tensor_map", "arg": 0, "box": [64, 64], "swizzle": 16,
              "oob": "zeros", "dtype": "FLOAT32", "written": false,
              "l2_promotion": 128}],
  "block": [128, 1, 1], "cluster": [1, 1, 1], "smem_bytes": 17408}}}
```

Format 2 added `written`, then the `im2col_map` parameters (`Im2colMapParam`: a reader that
knows no such kind rejects the record and says to recompile) and the `tensor_map_workspace`
parameters (`TensorMapWorkspaceParam`: a tensor map in global memory that the kernel may
rewrite, `copy.tensormap_global`):

```json
{"kind": "tensor_map_workspace", "arg": 0, "box": [8, 64], "swizzle": 16, "oob": "zeros",
 "dtype": "FLOAT32", "written": false, "slots": 132}
```

Format 3 adds `l2_promotion` to the tensor and im2col maps (a record without it means 128,
the promotion every map had before). Format 4 adds the module's `arch`, the GPU the cubin's
SASS is for, where PTX for `target` was assembled for a later GPU (`runtime.compile(...,
arch="sm_90")` of sm_80 code); a record without it means the target's own. Format 5 adds
the `size` parameters (`SizeParam`: a size of a dynamic array that the kernel's cp.async
copies or thread accesses address, which the runtime passes from the array it is given) and
the pointers' `align` (a record without it means 1):

```json
{"kind": "pointer", "arg": 0, "element": "f32", "shape": [-1, -1], "align": 4},
{"kind": "size", "arg": 0, "dim": 1}
```

Format 6 adds the pointers' `strides`: the element strides of a GMEM argument's strided
layout, outermost first, where they are not the row-major strides of its shape (-1 for a `?`
stride, which only a tensor map addresses: whatever the array brings). The runtime then
takes an array of exactly those strides (a view of a padded array) instead of a contiguous
one. A record without them means row-major, as every pointer was before:

```json
{"kind": "pointer", "arg": 0, "element": "f32", "shape": [64, 60], "strides": [64, 1]}
```
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, NoReturn

ABI_FORMAT = 6

DEFAULT_L2_PROMOTION = 128
"""A tensor map's L2 promotion in bytes where the kernel names none."""


ACCESSES = ("none", "read", "write", "read-write")
"""How a kernel may access an argument (`KernelAbi.accesses`)."""
MARKS = ("", "none", "read")
"""An argument's `copy.predecessor_access` mark, "" for none (`KernelAbi.marks`)."""


class _Reader:
    """Reads the typed fields of one JSON object, each failure a ValueError naming the field."""

    def __init__(self, entry: Any, what: str):
        self.entry = entry
        self.what = what

    def _get(self, key: str, kind: type, optional: bool = False) -> Any:
        value = self.entry.get(key) if isinstance(self.entry, dict) else None
        if optional and value is None:
            return None
        # A JSON boolean is a Python int too: only a bool field may be one.
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            self.fail(key, kind.__name__)
        return value

    def fail(self, key: str, kind: str) -> NoReturn:
        raise ValueError(
            f"expected a {self.what} whose {key!r} is of type {kind} "
            f"(kernel ABI format {ABI_FORMAT}), got {self.entry}; recompile the kernel"
        )

    def int(self, key: str) -> int:
        return self._get(key, int)

    def bool(self, key: str) -> bool:
        return self._get(key, bool)

    def optional_strs(self, key: str, allowed: tuple[str, ...]) -> tuple[str, ...] | None:
        values = self._get(key, list, optional=True)
        if values is None:
            return None
        if not all(isinstance(v, str) and v in allowed for v in values):
            self.fail(key, f"list of {' or '.join(repr(a) for a in allowed)}")
        return tuple(values)

    def optional_bool(self, key: str) -> bool:
        return bool(self._get(key, bool, optional=True))

    def optional_int(self, key: str, default: int) -> int:
        value = self._get(key, int, optional=True)
        return default if value is None else value

    def str(self, key: str) -> str:
        return self._get(key, str)

    def optional_str(self, key: str) -> str | None:
        return self._get(key, str, optional=True)

    def list(self, key: str) -> list[Any]:
        return self._get(key, list)

    def dict(self, key: str) -> dict[str, Any]:
        return self._get(key, dict)

    def ints(self, key: str) -> tuple[int, ...]:
        values = self._get(key, list)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            self.fail(key, "list of int")
        return tuple(values)

    def optional_ints(self, key: str) -> tuple[int, ...] | None:
        return None if self._get(key, list, optional=True) is None else self.ints(key)


@dataclass(frozen=True)
class PointerParam:
    """The device address of the kernel's argument `arg`, an array of `element`s."""

    kind: ClassVar[str] = "pointer"

    arg: int
    element: str
    """The IR's element type: f32, bf16, i8, ..."""
    shape: tuple[int, ...]
    """-1 for a dynamic dim (whatever the array brings)."""
    align: int = 1
    """The array's address and its strides but the innermost, in bytes, are multiples of
    this: the smallest chunk a cp.async copy of the array moves (its chunks are aligned to
    their size; a dynamic pitch picks one at run time); 1 where nothing is asked."""
    strides: tuple[int, ...] | None = None
    """The element strides of the argument's strided layout, outermost first (-1: a `?`
    stride, the array's own), where they are not the row-major strides of `shape`; None for
    a row-major argument (a contiguous array)."""

    @property
    def layout(self) -> str:
        """The argument's layout as the IR spells it: `strided<[64, 1]>`, or `row-major`."""
        if self.strides is None:
            return "row-major"
        return f"strided<[{', '.join('?' if s < 0 else str(s) for s in self.strides)}]>"

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "kind": self.kind,
            "arg": self.arg,
            "element": self.element,
            "shape": [*self.shape],
        }
        if self.align > 1:
            entry["align"] = self.align
        if self.strides is not None:
            entry["strides"] = [*self.strides]
        return entry

    @classmethod
    def from_dict(cls, entry: Any) -> PointerParam:
        get = _Reader(entry, "pointer parameter")
        param = cls(
            get.int("arg"),
            get.str("element"),
            get.ints("shape"),
            get.optional_int("align", 1),
            get.optional_ints("strides"),
        )
        if param.strides is not None and len(param.strides) != len(param.shape):
            get.fail("strides", f"list of {len(param.shape)} int")
        return param


@dataclass(frozen=True)
class ScalarParam:
    """A kernel argument passed by value."""

    kind: ClassVar[str] = "scalar"

    type: str
    """The IR's type: i32, i64, index, f32, f64, i1."""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "type": self.type}

    @classmethod
    def from_dict(cls, entry: Any) -> ScalarParam:
        return cls(_Reader(entry, "scalar parameter").str("type"))


@dataclass(frozen=True)
class SizeParam:
    """Size `dim` of the array of kernel argument `arg`, a dynamic dim, passed as an i64 by
    the runtime from the array it is given (like a size of MLIR's memref descriptor; only
    the sizes the kernel's addresses and bounds need have one)."""

    kind: ClassVar[str] = "size"

    arg: int
    dim: int

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "arg": self.arg, "dim": self.dim}

    @classmethod
    def from_dict(cls, entry: Any) -> SizeParam:
        get = _Reader(entry, "size parameter")
        return cls(get.int("arg"), get.int("dim"))


@dataclass(frozen=True)
class TensorMapParam:
    """A `CUtensorMap` the runtime encodes over the array of kernel argument `arg` (a tiled
    map, `cuTensorMapEncodeTiled`; `Im2colMapParam` is the im2col one)."""

    kind: ClassVar[str] = "tensor_map"

    arg: int
    """The kernel argument (the array) the map describes."""
    box: tuple[int, ...]
    """Outermost dim first, one entry per array dim."""
    swizzle: int
    """In bytes; 16 means none."""
    oob: str
    """"zeros" or "nan" (the fill of out-of-bounds loads)."""
    dtype: str
    """A `CUtensorMapDataType` name without its prefix: FLOAT32, UINT64, ..."""
    written: bool
    """A TMA store or reduction writes the array through the map (the runtime then checks
    its innermost extent: rule TR19)."""
    l2_promotion: int = field(default=DEFAULT_L2_PROMOTION, kw_only=True)
    """The map's L2 promotion in bytes: 0 (none), 64, 128 or 256 (keyword-only, so that a
    subclass's fields may follow it)."""
    swizzle_atom: int = field(default=16, kw_only=True)
    """The unit the swizzle permutes: 16 bytes, or 32 or 64 under a 128-byte swizzle
    (`CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B`, `_ATOM_64B`; written only where it is not 16)."""
    swizzle_flip: bool = field(default=False, kw_only=True)
    """`CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B` (written only where true)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "arg": self.arg,
            "box": [*self.box],
            "swizzle": self.swizzle,
            "oob": self.oob,
            "dtype": self.dtype,
            "written": self.written,
            "l2_promotion": self.l2_promotion,
        } | self._swizzle_mode()

    def _swizzle_mode(self) -> dict[str, Any]:
        mode: dict[str, Any] = {}
        if self.swizzle_atom != 16:
            mode["swizzle_atom"] = self.swizzle_atom
        if self.swizzle_flip:
            mode["swizzle_flip"] = True
        return mode

    @classmethod
    def from_dict(cls, entry: Any) -> TensorMapParam:
        get = _Reader(entry, "tensor-map parameter")
        return cls(
            get.int("arg"),
            get.ints("box"),
            get.int("swizzle"),
            get.str("oob"),
            get.str("dtype"),
            get.bool("written"),
            l2_promotion=get.optional_int("l2_promotion", DEFAULT_L2_PROMOTION),
            swizzle_atom=get.optional_int("swizzle_atom", 16),
            swizzle_flip=get.optional_bool("swizzle_flip"),
        )

    @property
    def rank(self) -> int:
        """The rank of the array the map describes."""
        return len(self.box)


@dataclass(frozen=True)
class Im2colMapParam(TensorMapParam):
    """A `CUtensorMap` in im2col mode (`cuTensorMapEncodeIm2col`) over the channels-innermost
    array of kernel argument `arg` (NWC, NHWC, NDHWC): `box` is the SMEM box
    `[pixels, channels]` (pixelsPerColumn, channelsPerPixel), not one entry per array dim."""

    kind: ClassVar[str] = "im2col_map"

    lower: tuple[int, ...]
    """pixelBoxLowerCorner, outermost spatial dim first."""
    upper: tuple[int, ...]
    """pixelBoxUpperCorner, outermost spatial dim first."""
    element_strides: tuple[int, ...]
    """elementStrides, one per array dim, outermost first (the traversal strides)."""

    @property
    def pixels(self) -> int:
        return self.box[0]

    @property
    def channels(self) -> int:
        return self.box[1]

    @property
    def rank(self) -> int:
        return len(self.lower) + 2

    def to_dict(self) -> dict[str, Any]:
        return super().to_dict() | {
            "lower": [*self.lower],
            "upper": [*self.upper],
            "element_strides": [*self.element_strides],
        }

    @classmethod
    def from_dict(cls, entry: Any) -> Im2colMapParam:
        tiled = TensorMapParam.from_dict(entry)
        get = _Reader(entry, "im2col-map parameter")
        return cls(
            tiled.arg,
            tiled.box,
            tiled.swizzle,
            tiled.oob,
            tiled.dtype,
            tiled.written,
            get.ints("lower"),
            get.ints("upper"),
            get.ints("element_strides"),
            l2_promotion=tiled.l2_promotion,
            swizzle_atom=tiled.swizzle_atom,
            swizzle_flip=tiled.swizzle_flip,
        )


@dataclass(frozen=True)
class TensorMapWorkspaceParam:
    """The device address of a workspace of `slots` tensor maps of 128 bytes, each of which
    the runtime fills, before launch, with the `CUtensorMap` it encodes over the array of
    kernel argument `arg` (box, swizzle, oob, dtype as in `TensorMapParam`); the kernel
    may rewrite its slots (`copy.tensormap_replace`). The runtime allocates it per launch."""

    kind: ClassVar[str] = "tensor_map_workspace"

    arg: int
    box: tuple[int, ...]
    swizzle: int
    oob: str
    dtype: str
    written: bool
    slots: int

    @property
    def initial_map(self) -> TensorMapParam:
        """The map each slot starts with."""
        return TensorMapParam(self.arg, self.box, self.swizzle, self.oob, self.dtype, self.written)

    def to_dict(self) -> dict[str, Any]:
        return {**self.initial_map.to_dict(), "kind": self.kind, "slots": self.slots}

    @classmethod
    def from_dict(cls, entry: Any) -> TensorMapWorkspaceParam:
        m = TensorMapParam.from_dict(entry)
        slots = _Reader(entry, "tensor-map workspace parameter").int("slots")
        return cls(m.arg, m.box, m.swizzle, m.oob, m.dtype, m.written, slots)


Param = PointerParam | ScalarParam | SizeParam | TensorMapParam | TensorMapWorkspaceParam
PARAM_KINDS: dict[str, type[Param]] = {
    p.kind: p
    for p in (
        PointerParam,
        ScalarParam,
        SizeParam,
        TensorMapParam,
        Im2colMapParam,
        TensorMapWorkspaceParam,
    )
}


@dataclass(frozen=True)
class KernelAbi:
    """One kernel: its parameters in signature order (the caller's arguments first, then
    the sizes of its dynamic arrays, then the tensor maps), its launch shape and its dynamic
    shared memory."""

    name: str
    params: tuple[Param, ...]
    smem_bytes: int
    cluster: tuple[int, ...]
    block: tuple[int, ...] | None = None
    """The fixed block shape (gpu.known_block_size), if the kernel has one."""
    grid_dependent: bool = False
    """The kernel waits for the kernel ahead of it on the stream (`copy.grid_dependency_wait`,
    programmatic dependent launch): the runtime launches it with programmatic stream
    serialization, so that it may start before that kernel completes."""
    accesses: tuple[str, ...] | None = None
    """Under debug guards, how the kernel accesses each of the caller's arguments ("none",
    "read", "write" or "read-write"; a scalar's is "none"), and (`marks`) what each
    argument's `copy.predecessor_access` says the kernel ahead of it does with it ("none",
    "read", or "" for no mark): the runtime's launch guard of programmatic dependent launch
    reads them (runtime.pdl). None without debug guards."""
    marks: tuple[str, ...] | None = None

    @property
    def arguments(self) -> tuple[PointerParam | ScalarParam, ...]:
        """The parameters the caller passes (pointers and scalars, not sizes or tensor
        maps)."""
        return tuple(p for p in self.params if isinstance(p, PointerParam | ScalarParam))

    @property
    def sizes(self) -> dict[tuple[int, int], int]:
        """The parameter index of each size parameter, by (argument, dim)."""
        return {(p.arg, p.dim): i for i, p in enumerate(self.params) if isinstance(p, SizeParam)}

    @property
    def tensor_maps(self) -> tuple[TensorMapParam, ...]:
        """The tensor maps the runtime encodes: the `.param` maps and the initial map of
        each workspace."""
        return tuple(
            p.initial_map if isinstance(p, TensorMapWorkspaceParam) else p
            for p in self.params
            if isinstance(p, TensorMapParam | TensorMapWorkspaceParam)
        )

    def to_dict(self) -> dict[str, Any]:
        facts: dict[str, Any] = {
            "name": self.name,
            "params": [p.to_dict() for p in self.params],
            "smem_bytes": self.smem_bytes,
            "cluster": [*self.cluster],
        }
        if self.block is not None:
            facts["block"] = [*self.block]
        if self.grid_dependent:
            facts["grid_dependent"] = True
        if self.accesses is not None:
            facts["accesses"] = [*self.accesses]
        if self.marks is not None:
            facts["marks"] = [*self.marks]
        return facts

    @classmethod
    def from_dict(cls, entry: Any) -> KernelAbi:
        get = _Reader(entry, "kernel")
        params: list[Param] = []
        for param in get.list("params"):
            kind = _Reader(param, "parameter").str("kind")
            if kind not in PARAM_KINDS:
                raise ValueError(
                    f"expected a parameter of kind {', '.join(PARAM_KINDS)}, got {param}; "
                    "recompile the kernel"
                )
            params.append(PARAM_KINDS[kind].from_dict(param))
        return cls(
            get.str("name"),
            tuple(params),
            get.int("smem_bytes"),
            get.ints("cluster"),
            get.optional_ints("block"),
            get.optional_bool("grid_dependent"),
            get.optional_strs("accesses", ACCESSES),
            get.optional_strs("marks", MARKS),
        )


@dataclass(frozen=True)
class ModuleAbi:
    """Every kernel of a compiled module, by name, the target they were compiled for and
    the GPU their SASS is for (`arch`, None: the target's own)."""

    target: str
    kernels: dict[str, KernelAbi]
    arch: str | None = None

    @property
    def runs_on(self) -> str:
        """The target whose GPUs run the cubin: `arch`, or the target."""
        return self.arch or self.target

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "format": ABI_FORMAT,
            "target": self.target,
            "kernels": {name: k.to_dict() for name, k in self.kernels.items()},
        }
        if self.arch is not None:
            entry["arch"] = self.arch
        return entry

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, entry: Any) -> ModuleAbi:
        get = _Reader(entry, "kernel ABI")
        kernels = get.dict("kernels")
        return cls(
            get.str("target"),
            {n: KernelAbi.from_dict(k) for n, k in kernels.items()},
            get.optional_str("arch"),
        )

    @classmethod
    def from_json(cls, text: str) -> ModuleAbi:
        return cls.from_dict(json.loads(text))
