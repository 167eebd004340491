"""A fuzz over `nvvm.tcgen05.mma`'s (and `nvvm.tcgen05.mma.sp`'s) and
`copy.mma_instruction_descriptor`'s configurations (issue Q): every MMA configuration the
verifier accepts (dense or sparse x kind x CTA group x A in SMEM or TMEM x collector usage x
A-shift x scale-input-d x disable-output-lane) compiles through
LLVM 22 and nvJitLink for each tcgen05 target and, where `ptxas` is on PATH, assembles with
it; the rejected ones are counted by message, as are the instruction descriptors the
verifier rejects, by rule id. The counts are printed in the terminal summary."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from copy_dialect.attributes import TargetAttr
from copy_dialect.errors import CopyVerifyException
from copy_dialect.instruction_descriptor import MMA_I8, MmaInstructionDescriptorOp, MmaKind
from copy_tools.universe import make_context
from facts.target import TCGEN05, target_named
from passes import backend, nvvm
from passes.nvvm.tcgen05_mma import COLLECTOR_OPS, MMAOpBase, Tcgen05MMAKind
from tests.passes.test_nvvm import Kernel, const, module_ir
from tests.ptxas import check_ptxas

KINDS = tuple(Tcgen05MMAKind)
GROUPS = ("cta_1", "cta_2")


def _mma_configs():
    yield from itertools.product(
        (False, True),
        KINDS,
        GROUPS,
        ("desc", "tmem"),
        COLLECTOR_OPS,
        (False, True),
        (None, 0, 15, 16),
        (None, "v4", "v8"),
    )


def _build(kernel: Kernel, config) -> MMAOpBase:
    sparse, kind, group, a, collector, shift, scale, mask = config
    operands = [kernel["tmem"], kernel[a], kernel["desc"], kernel["i"], kernel["p"]]
    options = dict(
        kind=kind.value, group=group, collector=collector.value, a_shift=shift,
        scale_input_d=None if scale is None else const(scale),
        disable_output_lane=None if mask is None else kernel[mask],
    )  # fmt: skip
    if sparse:  # the metadata: a TMEM pointer after enable-input-d
        return nvvm.Tcgen05MMASparseOp(*operands, kernel["tmem"], **options)
    return nvvm.Tcgen05MMAOp(*operands, **options)


def _sorted_mma():
    """(accepted configurations per CTA group, rejections by message)."""
    accepted: dict[str, list] = {g: [] for g in GROUPS}
    rejected: Counter[str] = Counter()
    for config in _mma_configs():
        try:
            _build(Kernel("probe"), config).verify()
        except VerifyException as exc:
            rejected[str(exc).split(", got")[0]] += 1
            continue
        accepted[config[2]].append(config)
    return accepted, rejected


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_every_accepted_mma_assembles(target: str, tmp_path: Path, report):
    accepted, rejected = _sorted_mma()
    if not MMA_I8.has(target_named(target)):
        # kind::i8 is sm_100a's and sm_110a's alone: the nvvm op, like upstream's, leaves the
        # target to the backend; copy.mma_instruction_descriptor rejects it (MI7).
        accepted = {g: [c for c in cs if c[1] != Tcgen05MMAKind.I8] for g, cs in accepted.items()}
    if not target_named(target).has_mma_scale_input_d:
        # Nor has every tcgen05 target scale-input-d: sm_110a/f lack it (docs/targets.md;
        # in a kernel with a copy.target the verifier rejects it, MI8).
        accepted = {g: [c for c in cs if c[6] is None] for g, cs in accepted.items()}
    kernels = []
    # ptxas rejects a kernel that mixes cta_group::1 and ::2: one kernel per group.
    for group, configs in accepted.items():
        kernel = Kernel(f"mma_{group}")
        kernel.add(*(_build(kernel, c) for c in configs))
        kernel.add(nvvm.Tcgen05CommitOp(kernel["bar"], group=group))
        kernels.append(kernel)
    ptx = backend.compile_ptx(module_ir(kernels), target)
    mmas = sum(line.strip().startswith("tcgen05.mma") for line in ptx.splitlines())
    assert mmas == sum(map(len, accepted.values()))
    assert backend.compile_cubin(ptx, target).startswith(b"\x7fELF")
    check_ptxas(ptx, target, tmp_path)
    if target == "sm_100a":
        report(
            "tcgen05.mma configurations (tests/passes/test_tcgen05_mma_fuzz.py)",
            [f"{sum(map(len, accepted.values()))} accepted, assembled; rejected by message:"]
            + [f"  {n:4}  {message}" for message, n in rejected.most_common()],
        )


def test_every_mma_rejection_is_a_verifier_message():
    accepted, rejected = _sorted_mma()
    # the block-scaled kinds, the mask's length (both ways), A-shift of an SMEM A or with
    # fill/use, scale-d of kinds f8f6f4/i8 or out of range: each check rejects some
    assert {message.split(" ")[0] for message in rejected} == {
        "attribute", "Disable", "A-shift", "Cannot", "scaleInputD",
    }, rejected  # fmt: skip
    assert len(rejected) == 7, rejected
    assert all(accepted.values())
    assert {c[0] for cs in accepted.values() for c in cs} == {False, True}


TYPES = ("f16", "bf16", "tf32", "f8E4M3FN", "f6E3M2FN", "f4E2M1FN", "si8", "ui8", "f64")
B_TYPES = ("f16", "f8E4M3FN", "si8")
D_TYPES_TRIED = ("f16", "f32", "i32")
SHAPES = ((64, 8), (64, 24), (128, 24), (128, 48), (256, 32), (256, 48), (256, 512))
FLAGS = ({}, {"majors": ("mn", "k")}, {"negate": (True, False)}, {"saturate": True})
SPARSE_FLAGS = ({"sparse": True, "selector": 1}, {"selector": 1}, {"sparse": True, "selector": 4})
"""The sparse flags, tried with every kind and type on a sample of the shapes (`SHAPES[::3]`)."""


def test_descriptor_rejections_by_rule(report):
    ctx = make_context()
    types = {t: Parser(ctx, t).parse_type() for t in {*TYPES, *B_TYPES, *D_TYPES_TRIED}}
    counts: Counter[str] = Counter()
    accepted = 0
    configs = list(itertools.product(MmaKind, TYPES, B_TYPES, D_TYPES_TRIED, SHAPES, (1, 2), FLAGS))
    configs += itertools.product(
        MmaKind, TYPES, B_TYPES, D_TYPES_TRIED, SHAPES[::3], (1, 2), SPARSE_FLAGS
    )
    # Every configuration on sm_100a; on sm_103a and sm_90a (the target rule) one per kind.
    for target, tried in (("sm_100a", configs), ("sm_103a", configs[:: len(configs) // 8]),
                          ("sm_90a", configs[:: len(configs) // 8])):  # fmt: skip
        module = ModuleOp([])
        module.attributes["copy.target"] = TargetAttr(target)
        for kind, a, b, d, shape, group, flags in tried:
            op = MmaInstructionDescriptorOp(
                kind, shape, (types[a], types[b], types[d]), cta_group=group, **flags
            )
            module.body.block.add_op(op)
            try:
                op.verify()
                accepted += 1
            except CopyVerifyException as exc:
                counts[",".join(exc.rules)] += 1
            op.detach()
    assert set(counts) == {*(f"MI{i}" for i in range(1, 8)), "MI9"}, counts
    assert accepted
    report(
        "copy.mma_instruction_descriptor configurations (tests/passes/test_tcgen05_mma_fuzz.py)",
        [f"{accepted} accepted; rejected by rule:"]
        + [f"  {rule:4} {n:6}" for rule, n in sorted(counts.items())],
    )
