"""Attributes in LLVM IR: parameter attributes (`byval(T) align A "nvvm.grid_constant"`),
function attributes (NVPTX's launch bounds from the nvvm attributes, and llvm.func's
properties), and the linkage words of functions and globals.

An `llvm.*` or `nvvm.*` attribute without a translation here is an error; attributes of
other dialects are skipped.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Attribute

from passes.translate_llvm.spelling import Unsupported, quote

LINKAGE_DEFAULT = "external"
VISIBILITY = {0: "", 1: "hidden", 2: "protected"}
UNNAMED_ADDR = {0: "", 1: "local_unnamed_addr", 2: "unnamed_addr"}


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


def param_attr_table(
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
        # to local memory; TMA needs that address (docs/hardware.md).
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
KERNEL_ATTR = "nvvm.kernel"

# `passthrough` strings that are LLVM enum attributes (printed bare); others are quoted.
_ENUM_FN_ATTRS = frozenset(
    "alwaysinline cold convergent hot inlinehint minsize mustprogress noduplicate nofree "
    "noinline norecurse noreturn nosync nounwind optnone optsize readnone readonly "
    "speculatable willreturn writeonly".split()
)


def function_attributes(func: llvm.FuncOp, attrs: dict[str, Attribute], where: str) -> list[str]:
    """Function attributes from the nvvm launch bounds and llvm.func's properties.

    xDSL parses `attributes {passthrough = ..., no_unwind}` of a custom-form llvm.func
    into discardable attributes, not properties; both places are read.
    """

    def prop(name: str) -> Attribute | None:
        return func.properties.get(name) or attrs.pop(name, None)

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
            out.append(f"{quote(name)}={quote(value.data)}")
    if isinstance(value := prop("target_features"), llvm.TargetFeaturesAttr):
        features = ",".join(f.data for f in value.features.data)
        out.append(f'"target-features"={quote(features)}')
    if isinstance(value := prop("frame_pointer"), llvm.FramePointerKindAttr):
        out.append(f'"frame-pointer"={quote(str(value.data.value))}')
    passthrough = prop("passthrough")
    for entry in passthrough.data if isinstance(passthrough, ArrayAttr) else ():
        if isinstance(entry, StringAttr):
            out.append(entry.data if entry.data in _ENUM_FN_ATTRS else quote(entry.data))
        elif (
            isinstance(entry, ArrayAttr)
            and len(entry.data) == 2
            and all(isinstance(e, StringAttr) for e in entry.data)
        ):
            key, value = (e.data for e in entry.data)  # pyright: ignore
            out.append(f"{quote(key)}={quote(value)}")
        else:
            raise Unsupported(f"{where}: passthrough entry {entry} is not supported")
    for key, value in attrs.items():
        if key in _NVVM_LIST_ATTRS and (ints := _int_list(value)):
            out.append(f'"{_NVVM_LIST_ATTRS[key]}"="{",".join(map(str, ints))}"')
        elif key in _NVVM_INT_ATTRS and (n := _int_value(value)) is not None:
            out.append(f'"{_NVVM_INT_ATTRS[key]}"="{n}"')
        elif key.startswith(("llvm.", "nvvm.")):
            raise Unsupported(
                f"{where}: function attribute '{key} = {value}' has no translation here"
            )
    return out
