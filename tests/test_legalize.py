"""copy-legalize (passes/legalize.py) on the CPU: every example (examples/*.mlir) and every
builder kernel of copy_dialect.kernels written for sm_90a, legalized to sm_80 and to sm_86,
verifies (ops, dominance, the protocol analysis) and compiles to PTX and a cubin; what it
cannot keep fails with its LG rule. Legalizing twice equals legalizing once, and legalizing
to the IR's own target changes nothing. test_legalize_gpu.py runs the legalized kernels."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from copy_dialect import kernels
from copy_dialect.errors import CopyVerifyException
from copy_dialect.verify import verify_module
from copy_tools.universe import make_context
from passes.legalize import CopyLegalizePass
from passes.pipeline import compile_module

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.mlir"))
TARGETS = ["sm_80", "sm_86"]

LEGAL: dict[str, Callable[[], ModuleOp]] = {
    "tma_copy": lambda: kernels.tma_copy((256, 256), "f32"),
    "tma_copy_odd": lambda: kernels.tma_copy((999, 996), "f32"),
    "tma_copy_bf16": lambda: kernels.tma_copy((130, 200), "bf16", (32, 64)),
    "tma_copy_swizzle128": lambda: kernels.tma_copy((256, 256), "f32", (64, 32), swizzle=128),
    "tma_copy_prefetch": lambda: kernels.tma_copy((256, 256), "f32", prefetch_destination=True),
    "tma_copy_hints": lambda: kernels.tma_copy(
        (256, 256), "f32", cache_hints=("evict_first", "evict_last")
    ),
    "tma_copy_pipelined_1": lambda: kernels.tma_copy_pipelined(
        (512, 256), "f32", (64, 64), stages=1
    ),
    "tma_copy_pipelined_3": lambda: kernels.tma_copy_pipelined(
        (512, 256), "f32", (64, 64), stages=3
    ),
    "tma_reduce_add_f32": lambda: kernels.tma_copy((999, 996), "f32", reduce="add"),
    "tma_reduce_add_f16": lambda: kernels.tma_copy((256, 256), "f16", reduce="add"),
    "tma_reduce_add_f64": lambda: kernels.tma_copy((256, 256), "f64", reduce="add"),
    "tma_reduce_umin_i32": lambda: kernels.tma_copy((256, 256), "i32", reduce="umin"),
    "tma_reduce_smax_i64": lambda: kernels.tma_copy((256, 256), "i64", reduce="smax"),
    "tma_reduce_xor_i32": lambda: kernels.tma_copy((256, 256), "i32", reduce="xor"),
    "tma_copy_pipelined_reduce": lambda: kernels.tma_copy_pipelined(
        (512, 256), "f32", (64, 64), reduce="add"
    ),
    "bulk_copy": lambda: kernels.bulk_copy(1000, "f32", 256),
    "multicast_copy": lambda: kernels.multicast_copy((256, 256), "f32"),
    "broadcast_copy": lambda: kernels.broadcast_copy((256, 512), "f32"),
    "broadcast_copy_4": lambda: kernels.broadcast_copy((130, 32), "bf16", (32, 64), cluster=4),
}
"""Builder kernels written for sm_90a that legalize to sm_80 and sm_86."""

ILLEGAL: dict[str, tuple[Callable[[], ModuleOp], str]] = {
    "tma_reduce_bf16": (lambda: kernels.tma_copy((256, 256), "bf16", reduce="add"), "LG2"),
    "tma_reduce_f16_min": (lambda: kernels.tma_copy((256, 256), "f16", reduce="min"), "LG2"),
    "tma_reduce_inc": (lambda: kernels.tma_copy((256, 256), "i32", reduce="inc"), "LG2"),
    "tma_copy_dynamic": (lambda: kernels.tma_copy((256, 256), "f32", dynamic=True), "LG3"),
    "ws_copy": (lambda: kernels.ws_copy((256, 256), "f32"), "LG3"),
    "ws_elementwise": (lambda: kernels.ws_elementwise("add", (256, 256), "f32"), "LG3"),
    "ws_row_sum": (lambda: kernels.ws_row_sum((256, 256)), "LG3"),
    "dsmem_exchange": (lambda: kernels.dsmem_exchange((256, 256), "f32"), "LG3"),
    "im2col_gather": (
        lambda: kernels.im2col_gather(kernels.conv2d((2, 9, 7, 16), 3, padding=1), "f16"),
        "LG3",
    ),
    "grouped_copy": (lambda: kernels.grouped_copy(2, 4, (64, 64)), "LG3"),
}
"""Builder kernels written for sm_90a that copy-legalize cannot keep on sm_80, and why:
reductions with no thread atomic of their op and type (LG2: bf16 add and f16/bf16 min/max
need sm_90, inc/dec have no memref.atomic_rmw kind); a dynamic shape, warp-specialized
TMA (cp.async groups complete for the issuing thread, not a consumer role), DSMEM, im2col
and tensor maps in global memory have no pre-Hopper form (LG3)."""


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def example(name: str) -> ModuleOp:
    return parse((EXAMPLES / name).read_text())


def legalized(module: ModuleOp, target: str) -> ModuleOp:
    CopyLegalizePass(target=target).apply(make_context(), module)
    verify_module(module)
    return module


def test_every_builder_is_listed():
    """Each public builder of copy_dialect.kernels that makes a kernel is classified here."""
    named = {n.split("_pipelined")[0] for n in [*LEGAL, *ILLEGAL]} | {"cp_async_copy"}
    builders = {
        "tma_copy", "cp_async_copy", "bulk_copy", "multicast_copy", "broadcast_copy",
        "tma_copy_pipelined", "ws_copy", "ws_elementwise", "ws_row_sum", "dsmem_exchange",
        "im2col_gather", "grouped_copy",
    }  # fmt: skip
    made = {
        n
        for n in dir(kernels)
        if callable(f := getattr(kernels, n))
        and getattr(f, "__module__", "") == kernels.__name__
        and not n.startswith("_")
        and "return" in (f.__annotations__ or {})
        and f.__annotations__["return"] in ("ModuleOp", ModuleOp)
    }
    assert made == builders
    assert builders <= named | {"tma_copy_pipelined"}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_legalizes_and_compiles(name, target):
    module = example(name)
    compiled = compile_module(legalized(module, target), make_context())
    assert compiled.target == target
    assert f".target {target}" in compiled.ptx
    assert "cp.async.bulk" not in compiled.ptx
    assert "mbarrier" not in compiled.ptx
    assert compiled.cubin


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(LEGAL))
def test_builder_legalizes_and_compiles(name, target):
    compiled = compile_module(legalized(LEGAL[name](), target), make_context())
    assert "cp.async.ca" in compiled.ptx or "cp.async.cg" in compiled.ptx
    assert bool(re.search(r"\bred\.global\.", compiled.ptx)) == ("reduce" in name)
    assert "cp.async.bulk" not in compiled.ptx
    assert "mbarrier" not in compiled.ptx
    assert compiled.cubin


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legalized_builder_compiles_for_the_h200(name):
    """What test_legalize_gpu.py launches: the sm_80-legalized IR compiled for sm_90a (an
    sm_80 cubin does not load on sm_90: SASS is compatible within a major version only)."""
    compiled = compile_module(legalized(LEGAL[name](), "sm_80"), make_context(), "sm_90a")
    assert "cp.async.bulk" not in compiled.ptx
    assert compiled.cubin


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_builder_that_cannot_be_kept_names_its_rule(name):
    build, rule = ILLEGAL[name]
    with pytest.raises(CopyVerifyException) as info:
        legalized(build(), "sm_80")
    assert info.value.rules == (rule,)
    assert "sm_80" in str(info.value)


def _twice(module: ModuleOp, target: str) -> tuple[str, str]:
    once = str(legalized(module, target))
    return once, str(legalized(parse(once), target))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legalizing_twice_changes_nothing(name, target):
    once, twice = _twice(LEGAL[name](), target)
    assert once == twice


@pytest.mark.parametrize("name", [*sorted(LEGAL), *sorted(ILLEGAL)])
def test_legalizing_to_the_own_target_changes_nothing(name):
    build = LEGAL[name] if name in LEGAL else ILLEGAL[name][0]
    before = str(build())
    assert str(legalized(parse(before), "sm_90a")) == before


def test_cp_async_builder_is_a_fixed_point():
    before = str(kernels.cp_async_copy((1024, 1024), "f32"))
    assert str(legalized(parse(before), "sm_80")) == before


def test_module_target_is_the_new_one():
    module = legalized(example("tma_tile_copy.mlir"), "sm_86")
    assert str(module.attributes["copy.target"]) == '#copy.target<"sm_86">'


def test_an_unknown_target_is_an_error():
    from xdsl.utils.exceptions import PassFailedException

    with pytest.raises(PassFailedException, match="expected a target of"):
        CopyLegalizePass(target="sm_70").apply(make_context(), example("tma_tile_copy.mlir"))


def test_gpu_cases_compile_for_the_h200():
    """Every case of test_legalize_gpu.py, original and legalized, compiles for sm_90a."""
    from test_legalize_gpu import CASES
    from test_legalize_gpu import legalized as gpu_legalized

    for case in CASES.values():
        assert compile_module(case.build(), make_context(), "sm_90a").cubin
        module = gpu_legalized(case.build())
        compiled = compile_module(module, make_context(), "sm_90a")
        assert "cp.async.bulk" not in compiled.ptx
        assert compiled.cubin


def test_gpu_reductions_compile_for_the_h200():
    """Every reduction of test_legalize_gpu.py, legalized, compiles to red.global for sm_90a."""
    from test_legalize_gpu import REDUCTIONS
    from test_legalize_gpu import legalized as gpu_legalized

    for op, dtype, shape in REDUCTIONS.values():
        module = gpu_legalized(kernels.tma_copy(shape, dtype, reduce=op))
        compiled = compile_module(module, make_context(), "sm_90a")
        assert re.search(r"\bred\.global\.", compiled.ptx)
        assert compiled.cubin


@pytest.mark.parametrize("name", ["multicast_copy", "broadcast_copy", "broadcast_copy_4"])
def test_multicast_builder_legalizes_to_sm_90(name):
    """sm_90 has TMA but no multicast: each CTA loads the whole tile with TMA itself."""
    compiled = compile_module(legalized(LEGAL[name](), "sm_90"), make_context())
    assert ".multicast::cluster" not in compiled.ptx
    assert "cp.async.bulk.tensor" in compiled.ptx
    assert compiled.cubin
