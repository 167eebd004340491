"""Registers the copy dialect and its passes with xDSL (`xdsl.universe` entry point).

This is the project's one registration route: `copy-opt` and plain `xdsl-opt` both
read it through `Universe.get_multiverse()`, and `make_context` gives Python users the
same dialects. Loaded inside plain `xdsl-opt`, it also makes that program print parse and
verifier errors as diagnostics instead of tracebacks (`xdsl_opt_errors`).
"""

from collections.abc import Callable
from functools import cache
from importlib import import_module

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.universe import Universe

from copy_tools import xdsl_opt_errors


def _copy():
    from copy_dialect.ops import Copy

    return Copy


def _nvvm():
    from passes.nvvm import NVVM

    return NVVM


def _gpu():
    """xDSL's `gpu` dialect with the upstream ops it lacks (`gpu.shuffle`), and the
    `#gpu.address_space` attribute upstream's `nvgpu` types name."""
    from copy_dialect.upstream_gpu import GPU
    from copy_dialect.upstream_nvgpu import AddressSpaceAttr

    return Dialect("gpu", list(GPU.operations), [*GPU.attributes, AddressSpaceAttr])


def _nvgpu():
    """Upstream MLIR's `nvgpu` data-movement ops (`convert-nvgpu-to-copy` raises them)."""
    from copy_dialect.upstream_nvgpu import NVGPU

    return NVGPU


def _memref():
    """xDSL's `memref` dialect with the upstream ops it lacks (`memref.generic_atomic_rmw`)."""
    from copy_dialect.upstream_memref import MEMREF

    return MEMREF


def _llvm():
    """xDSL's `llvm` dialect with the upstream ops it lacks (`llvm.extractelement`,
    `llvm.intr.maximum`, `llvm.intr.minimum`)."""
    from copy_dialect.upstream_llvm import LLVM

    return LLVM


UPSTREAM = {"gpu": _gpu, "memref": _memref, "llvm": _llvm}
"""xDSL's dialects that the project registers with the upstream ops they lack."""


def _pass(module: str, cls: str):
    """A lazy factory for the pass class `cls` of `passes.<module>`."""
    return lambda: getattr(import_module(f"passes.{module}"), cls)


@cache
def dialect_factories() -> tuple[tuple[str, Callable[[], Dialect]], ...]:
    """Every registered dialect's name and factory, read from the installed packages' entry
    points once per process (the scan costs about 2 ms; a context is made per compile).
    `gpu`, `memref` and `llvm` are xDSL's with the upstream ops they lack
    (`copy_dialect.upstream_gpu`, `copy_dialect.upstream_memref`,
    `copy_dialect.upstream_llvm`): a universe cannot define a dialect name twice, so the
    substitution happens here, for copy-opt and `make_context` alike."""
    found = Universe.get_multiverse().all_dialects
    return tuple((name, UPSTREAM.get(name, f)) for name, f in found.items())


COMPILED_DIALECTS = ("builtin", "func", "arith", "scf", "cf", "memref", "gpu", "vector", "llvm")
"""The dialects a compile parses or builds besides `copy` and `nvvm` (the examples' and the
lowering's), loaded in `make_context`'s template."""


def make_context() -> Context:
    """An xDSL context with every registered dialect (xDSL's and ours), for Python users: a
    copy of one made once per process, in which the dialects of a compile are loaded already
    (the others load when first named, as in any context)."""
    return _template_context().clone()


@cache
def _template_context() -> Context:
    """The context `make_context` copies. A context loads a dialect (its ops and attributes,
    one by one) when the parser first meets its name; a compile in a new context paid that
    for seven to nine dialects, about 0.15 ms, on every compile."""
    ctx = Context()
    for name, factory in dialect_factories():
        ctx.register_dialect(name, factory)
    for name in ("copy", "nvvm", *COMPILED_DIALECTS):
        ctx.load_registered_dialect(name)
    return ctx


COPY_UNIVERSE = Universe(
    all_dialects={"copy": _copy, "nvvm": _nvvm, "nvgpu": _nvgpu},
    all_passes={
        "convert-arith-to-llvm": _pass("convert_arith_to_llvm", "ConvertArithToLLVMPass"),
        "convert-cf-to-llvm": _pass("convert_cf_to_llvm", "ConvertCfToLLVMPass"),
        "convert-copy-to-nvvm": _pass("convert_copy_to_nvvm", "ConvertCopyToNVVMPass"),
        "convert-func-to-llvm": _pass("convert_func_to_llvm", "ConvertFuncToLLVMPass"),
        "convert-gpu-to-nvvm": _pass("convert_gpu_to_nvvm", "ConvertGpuToNVVMPass"),
        "convert-math-to-llvm": _pass("convert_math_to_llvm", "ConvertMathToLLVMPass"),
        "convert-memref-to-llvm": _pass("convert_memref_to_llvm", "ConvertMemrefToLLVMPass"),
        "convert-nvgpu-to-copy": _pass("convert_nvgpu_to_copy", "ConvertNVGPUToCopyPass"),
        "copy-legalize": _pass("legalize", "CopyLegalizePass"),
        "convert-vector-to-llvm": _pass("convert_vector_to_llvm", "ConvertVectorToLLVMPass"),
        "lower-copy-to-llvm": _pass("pipeline", "LowerCopyToLLVMPass"),
    },
)


# Plain xdsl-opt prints the project's diagnostics, not tracebacks (copy_tools.xdsl_opt_errors).
xdsl_opt_errors.install()
