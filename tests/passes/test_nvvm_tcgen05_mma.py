"""`nvvm.tcgen05.mma` and `nvvm.tcgen05.commit` (passes/nvvm/tcgen05_mma.py): the verifier's
messages (upstream NVVMDialect.cpp's wording where upstream checks the same thing), and the
LLVM 22 intrinsic each form calls, with its immediates (kind, CTA group, collector usage).
tests/passes/test_nvvm.py compiles the ops for sm_100a through LLVM 22 and nvJitLink."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from passes import nvvm
from tests.passes.test_nvvm import FakeEmitter, Kernel, const

MMA = nvvm.Tcgen05MMAOp


def _k() -> Kernel:
    return Kernel("k")


def mma(k: Kernel, a: str = "desc", **kwargs: object) -> nvvm.Tcgen05MMAOp:
    return MMA(k["tmem"], k[a], k["desc"], k["i"], k["p"], **kwargs)  # type: ignore[arg-type]


INVALID: list[tuple[Callable[[Kernel], Operation], str]] = [
    (
        lambda k: mma(k, kind="mxf8f6f4"),
        "attribute 'kind' failed to satisfy constraint: tcgen05 MMA Supported Types whose "
        "value is one of {f16, tf32, f8f6f4, i8}",
    ),
    (
        lambda k: mma(k, disable_output_lane=k["v4"], group="cta_2"),
        "Disable Output Lane of length 4 is incompatible with CtaGroupAttr",
    ),
    (
        lambda k: mma(k, a_shift=True),
        "A-shift can be applied only when matrix A is in tensor memory",
    ),
    (
        lambda k: mma(k, "tmem", a_shift=True, collector="use"),
        "Cannot use collector buffer operation fill or use with ashift",
    ),
    (
        lambda k: mma(k, kind="f8f6f4", scale_input_d=const(1)),
        "scaleInputD is supported only for kind f16 and tf32, got kind f8f6f4",
    ),
    (
        lambda k: mma(k, scale_input_d=const(16)),
        "scaleInputD must be a constant in [0, 15], got 16",
    ),
    (
        lambda k: mma(k, scale_input_d=k["hint"]),
        "scaleInputD must be a constant in [0, 15], got a value that is not a constant",
    ),
]


@pytest.mark.parametrize(("build", "message"), INVALID, ids=[m[:40] for _, m in INVALID])
def test_verifier_messages(build: Callable[[Kernel], Operation], message: str):
    with pytest.raises(VerifyException) as info:
        build(_k()).verify()
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "a", "call"),
    [
        ({}, "desc", "@llvm.nvvm.tcgen05.mma.shared(ptr addrspace(6) %tmem, i64 %desc, "
         "i64 %desc, i32 %i, i1 %p, i32 0, i32 1, i32 0)"),
        ({"kind": "i8", "group": "cta_2", "collector": "use"}, "tmem",
         "@llvm.nvvm.tcgen05.mma.tensor(ptr addrspace(6) %tmem, ptr addrspace(6) %tmem, "
         "i64 %desc, i32 %i, i1 %p, i32 3, i32 2, i32 3)"),
        ({"kind": "tf32", "scale_input_d": "7"}, "desc",
         "@llvm.nvvm.tcgen05.mma.shared.scale_d(ptr addrspace(6) %tmem, i64 %desc, i64 %desc, "
         "i32 %i, i1 %p, i64 7, i32 1, i32 1, i32 0)"),
        ({"kind": "f8f6f4", "mask": True, "a_shift": True, "collector": "lastuse"}, "tmem",
         "@llvm.nvvm.tcgen05.mma.tensor.disable_output_lane.cg1.ashift(ptr addrspace(6) %tmem, "
         "ptr addrspace(6) %tmem, i64 %desc, i32 %i, i1 %p, <4 x i32> %v4, i32 2, i32 1)"),
    ],
)  # fmt: skip
def test_mma_intrinsic(kwargs: dict[str, object], a: str, call: str):
    k = _k()
    if "scale_input_d" in kwargs:
        kwargs["scale_input_d"] = const(int(str(kwargs["scale_input_d"])))
    if kwargs.pop("mask", False):
        kwargs["disable_output_lane"] = k["v4"]
    op = mma(k, a, **kwargs)
    op.verify()
    e = FakeEmitter({v: f"%{n}" for n, v in k.args.items()})
    op.to_llvm_ir(e)
    assert e.lines == [f"call void {call}"]


@pytest.mark.parametrize(
    ("operands", "group", "call"),
    [
        (("bar",), None, "@llvm.nvvm.tcgen05.commit.shared.cg1(ptr addrspace(3) %bar)"),
        (("slot",), "cta_2", "@llvm.nvvm.tcgen05.commit.cg2(ptr %slot)"),
        (("bar", "mask"), "cta_2",
         "@llvm.nvvm.tcgen05.commit.mc.shared.cg2(ptr addrspace(3) %bar, i16 %mask)"),
    ],
)  # fmt: skip
def test_commit_intrinsic(operands: tuple[str, ...], group: str | None, call: str):
    k = _k()
    mask = k[operands[1]] if len(operands) > 1 else None
    op = nvvm.Tcgen05CommitOp(k[operands[0]], mask, group)
    op.verify()
    e = FakeEmitter({v: f"%{n}" for n, v in k.args.items()})
    op.to_llvm_ir(e)
    assert e.lines == [f"call void {call}"]


def test_commit_takes_shared_or_generic_mbarriers():
    k = _k()
    with pytest.raises(VerifyException):
        nvvm.Tcgen05CommitOp(k["tmem"]).verify()
