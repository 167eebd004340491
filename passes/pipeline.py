"""The default lowering pipeline and the in-process compiler: .mlir -> PTX -> cubin.

`lower-copy-to-llvm{target=sm_90a}` runs, in order, the passes of docs/lowering.md that take
a module of copy + func/arith/scf/gpu/memref ops to llvm + nvvm ops. `compile_module` then
translates to LLVM IR, has LLVM's NVPTX backend emit PTX (in a child process, so that an
LLVM fatal error cannot end the caller) and nvJitLink assemble the cubin.
"""

from __future__ import annotations

import gc
import warnings
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.transforms.convert_scf_to_cf import (
    ConvertScfToCf,
    ForLowering,
    IfLowering,
    SwitchLowering,
)
from xdsl.transforms.reconcile_unrealized_casts import (
    ReconcileUnrealizedCastsPass,
    ReconcileUnrealizedCastsPattern,
)

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.errors import user_stacklevel
from facts.abi import KernelAbi, ModuleAbi
from facts.target import Target, check_arch, target_named
from passes.abi import kernel_abis
from passes.backend_targets import performance_warning
from passes.convert_arith_to_llvm import ConvertArithToLLVMPass
from passes.convert_cf_to_llvm import ConvertCfToLLVMPass
from passes.convert_copy_to_nvvm import ConvertCopyToNVVMPass
from passes.convert_func_to_llvm import ConvertFuncToLLVMPass
from passes.convert_gpu_to_nvvm import ConvertGpuToNVVMPass
from passes.convert_math_to_llvm import ConvertMathToLLVMPass
from passes.convert_memref_to_llvm import ConvertMemrefToLLVMPass
from passes.convert_vector_to_llvm import ConvertVectorToLLVMPass
from passes.rewrite import apply_patterns
from passes.scf_while_to_cf import WhileLowering


def lowering_passes(
    target: str = "", debug_guards: bool = False, prefetch_tensormaps: bool = True
) -> list[ModulePass]:
    return [
        ConvertCopyToNVVMPass(
            target=target, debug_guards=debug_guards, prefetch_tensormaps=prefetch_tensormaps
        ),
        ConvertVectorToLLVMPass(),
        _ConvertScfToCf(),
        ConvertMemrefToLLVMPass(),
        ConvertGpuToNVVMPass(),
        ConvertMathToLLVMPass(),
        ConvertArithToLLVMPass(),
        ConvertCfToLLVMPass(),
        ConvertFuncToLLVMPass(),
        _ReconcileUnrealizedCastsPass(),
    ]


class _ConvertScfToCf(ConvertScfToCf):
    """xDSL's convert-scf-to-cf (its patterns, recursive, with dead-code elimination), driven
    by `passes.rewrite`, with the scf.while lowering it lacks (`passes.scf_while_to_cf`)."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        patterns = [SwitchLowering(), IfLowering(), ForLowering(), WhileLowering()]
        apply_patterns(op, patterns, recursive=True)


class _ReconcileUnrealizedCastsPass(ReconcileUnrealizedCastsPass):
    """xDSL's reconcile-unrealized-casts (its pattern, recursive, warning on a cast it cannot
    remove), driven by `passes.rewrite`."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        apply_patterns(
            op, [ReconcileUnrealizedCastsPattern(warn_on_failure=True)], dce=False, recursive=True
        )


@dataclass(frozen=True)
class LowerCopyToLLVMPass(ModulePass):
    """Runs the whole lowering, copy dialect to llvm + nvvm, for the module's target."""

    name = "lower-copy-to-llvm"

    target: str = ""
    """Overrides the module's `copy.target`."""

    debug_guards: bool = False
    """convert-copy-to-nvvm's device-side checks (its `debug-guards` option)."""

    prefetch_tensormaps: bool = True
    """convert-copy-to-nvvm's tensor-map prefetch at each kernel's entry (its
    `prefetch-tensormaps` option)."""

    def stages(self) -> list[ModulePass]:
        """The passes this one runs, in order (copy-opt prints, times and verifies each)."""
        return lowering_passes(self.target, self.debug_guards, self.prefetch_tensormaps)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for p in self.stages():
            p.apply(ctx, op)

    def lower(self, ctx: Context, op: builtin.ModuleOp, target: Target) -> dict[str, KernelAbi]:
        """The passes for `target`, resolved by the caller (`compile_module`: once per
        compile): the ABI of each kernel, by name, as convert-copy-to-nvvm built it."""
        abis: dict[str, KernelAbi] = {}
        for p in self.stages():
            if isinstance(p, ConvertCopyToNVVMPass):
                abis = p.lower(op, target)
            else:
                p.apply(ctx, op)
        return abis


def retarget(module: builtin.ModuleOp, target: str) -> None:
    """Gives the module, and every op in it that names a target, `target`, so that the
    verifier checks the code against the target it is compiled for."""
    for op in [module, *module.walk()]:
        if op is module or "copy.target" in op.attributes:
            op.attributes["copy.target"] = copy.TargetAttr(target)


@dataclass
class Compiled:
    """What compiling a module gives: every stage, and the kernels' ABI."""

    target: Target
    llvm_ir: str
    ptx: str
    cubin: bytes
    abi: ModuleAbi
    notes: tuple[str, ...] = ()
    """ptxas's performance-loss lines for the cubin ("(C7509) Potential Performance Loss:
    wgmma.mma_async instructions are serialized ..."): nvJitLink's, or the whole-program
    ptxas's where the backend assembled the kernel again (`backend.whole_program`)."""


def compile_lowered(
    module: builtin.ModuleOp,
    target: Target,
    arch: Target | None = None,
    abis: dict[str, KernelAbi] | None = None,
    *,
    verify_protocol: bool = True,
) -> Compiled:
    """LLVM IR, PTX and cubin of a lowered module (SASS for `arch`, by default the target's
    own; `arch` checked by the caller, as `compile_module` does before lowering), with the
    kernels' ABI: `abis`, as the lowering built them, or else read from the kernels'
    `copy.abi` (a module lowered elsewhere). The module is verified (and its ABI read) while
    the backend's worker process emits the PTX and links the cubin (the two run at once); a
    verifier error still wins over the backend's, as if verification had come first.
    `verify_protocol=False` leaves the protocol analysis out of that verification."""
    from passes import backend, translate_llvm

    try:
        llvm_ir = translate_llvm.translate_module(module)
    except Exception:
        verify_module(module, protocol=verify_protocol)
        raise
    pending = backend.submit_ptx_and_cubin(llvm_ir, target, arch=arch)
    try:
        verify_module(module, protocol=verify_protocol)
        gpu = None if arch is None else arch.name
        if abis is None:
            abi = kernel_abis(module, target.name, gpu)
        else:
            abi = ModuleAbi(target.name, abis, None if arch == target else gpu)
    except BaseException:
        pending.discard()
        raise
    ptx, cubin = pending.result()
    for note in pending.notes:
        warnings.warn(performance_warning(target.name, note), stacklevel=user_stacklevel())
    return Compiled(target, llvm_ir, ptx, cubin, abi, tuple(pending.notes))


def compile_module(
    module: builtin.ModuleOp,
    ctx: Context,
    target: str | None = None,
    *,
    debug_guards: bool = False,
    arch: str | None = None,
    verify_protocol: bool = True,
) -> Compiled:
    """Lowers `module` in place and compiles it for `target` (default: its copy.target);
    `debug_guards`: with convert-copy-to-nvvm's device-side checks; `arch`: the GPU the
    cubin's SASS is for, where it is not the target's own (PTX for sm_80 assembled for
    sm_90: `target.check_arch` says which). The module is verified before and after the
    lowering; `verify_protocol=False` skips the protocol analysis of whole kernels (rules
    P1-P13, TU10-TU12: the costly part), as copy-opt's --no-verify-protocol does, while every
    op verifier, the kernel rules and dominance still run."""
    from passes import backend

    name = copy.module_target(module, target)
    if name is None:
        raise ValueError(
            'no target: give the module copy.target = #copy.target<"sm_90a"> or pass target='
        )
    # The target and the arch are resolved here, once per compile, and passed on.
    resolved = target_named(name)
    gpu = None if arch is None else target_named(arch, "GPU arch")
    if gpu is not None:
        check_arch(resolved, gpu)
    backend.start_worker()  # a worker that is not running yet starts while this lowers
    # Python's cyclic GC pauses meanwhile (as in a verification run): the IR the lowering
    # builds and drops set off collections through every live object, about 0.8 ms a
    # compile of the TMA example, half of which the pause saves.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if target:
            retarget(module, target)
        verify_module(module, protocol=verify_protocol)
        lowering = LowerCopyToLLVMPass(target=name, debug_guards=debug_guards)
        abis = lowering.lower(ctx, module, resolved)
        return compile_lowered(module, resolved, gpu, abis, verify_protocol=verify_protocol)
    finally:
        if collecting:
            gc.enable()
