"""The target gates of upstream NVVM's tensor-core MMA in a kernel (rule MI8): an
`nvvm.tcgen05.mma` with a scale-input-d (`scale = %s`) needs a target that has it
(`facts.target.MMA_SCALE_INPUT_D`: sm_100a/f, sm_103a). Jetson Thor's tcgen05 lacks the
operand: ptxas 13.0 refuses it for sm_110a/f ("Feature 'argument scale-inp-d-imm' not
supported") and LLVM 22 cannot select `llvm.nvvm.tcgen05.mma.*.scale_d` there
(docs/targets.md). The op is upstream's, whose verifier leaves the target to the backend, so
the rule is the kernel's: it reads the kernel's target (`copy.target`) and the op's scale
operand, and the error comes before the lowering rather than from LLVM.

Rule MI9, the half of a sparse MMA that no one op sees: `nvvm.tcgen05.mma.sp` multiplies a
structured-sparse A and reads metadata, so its instruction descriptor has the sparse bit
(`copy.mma_instruction_descriptor ... sparse`), and a dense `nvvm.tcgen05.mma`'s has not: the
hardware reads the descriptor's bit, not the op's name (PTX ISA, tcgen05 "Instruction
descriptor", bit 2). Checked where the descriptor is the op's (a descriptor built at run
time is the frontend's to get right)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation

from analysis.kernel.kernel import Kernel
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.instruction_descriptor import MmaInstructionDescriptorOp
from copy_dialect.tmem import MMAS
from copy_dialect.verify_common import enclosing_target, feature_error, retarget_note
from facts.target import MMA_SCALE_INPUT_D

MMA, SPARSE_MMA = MMAS


def check_scale_input_d(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each `nvvm.tcgen05.mma` of `kernel` with a scale-input-d has a target that has it."""
    mmas = [t for t in kernel.positions if getattr(t, "name", None) in MMAS]
    for op in kernel.instances(*mmas) if mmas else ():
        if getattr(op, "scaleInputD", None) is None:
            continue
        target = enclosing_target(op)
        # rule: MI8
        if target is not None and not MMA_SCALE_INPUT_D.has(target):
            yield (
                op,
                feature_error(
                    op,
                    MMA_SCALE_INPUT_D,
                    target,
                    uses="with a scale",
                    note=f"{retarget_note(MMA_SCALE_INPUT_D)}, or drop `scale = ...` "
                    f"(D then accumulates unscaled: {target.name}'s tcgen05.mma has no "
                    "scale-input-d)",
                ),
            )


def check_sparse_descriptor(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each tcgen05 MMA's instruction descriptor (where `copy.mma_instruction_descriptor`
    makes it) is sparse exactly when the MMA is `nvvm.tcgen05.mma.sp`."""
    mmas = [t for t in kernel.positions if getattr(t, "name", None) in MMAS]
    for op in kernel.instances(*mmas) if mmas else ():
        desc = op.operands[3].owner
        if not isinstance(desc, MmaInstructionDescriptorOp):
            continue
        sparse = op.name == SPARSE_MMA
        if sparse == (desc.sparse is not None):
            continue
        # rule: MI9
        if sparse:
            yield (
                op,
                Error(
                    "nvvm.tcgen05.mma.sp multiplies a structured-sparse A, but its instruction "
                    "descriptor is dense: the MMA would read A as dense",
                    note="add sparse (and the selector of the metadata column) to the "
                    "copy.mma_instruction_descriptor",
                ),
            )
        else:
            # rule: MI9
            yield (
                op,
                Error(
                    "nvvm.tcgen05.mma multiplies a dense A, but its instruction descriptor is "
                    "sparse: the MMA would read A as sparse, with no metadata",
                    note="drop sparse (and the selector) from the "
                    "copy.mma_instruction_descriptor, or issue nvvm.tcgen05.mma.sp with the "
                    "metadata's TMEM pointer after enable-input-d",
                ),
            )
