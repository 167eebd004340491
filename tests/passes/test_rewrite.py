"""passes.rewrite drives the lowering passes exactly as xDSL's PatternRewriteWalker over a
GreedyRewritePatternApplier would: the same lowered IR, op for op, the same dead ops erased,
the same error for a pattern that raises.

The reference is xDSL's own walker, put in the place of `apply_patterns` in every module
that uses it; both lowerings of each module are printed and compared. The modules: every
example for every target it verifies for, with and without debug guards; the builders of
frontends.kernels (rings of 1 to 4 slots: scf.for, whose lowering is recursive; the
warp-specialized kernels: roles, shuffles, vector loads); and the
first kernels of the compile fuzz (tests/passes/test_compile_fuzz.py) that verify.
"""

from __future__ import annotations

import io
import random
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from importlib import resources

import pytest
from xdsl.dialects import arith, builtin, func, test
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Operation, Region
from xdsl.parser import Parser
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from copy_tools.universe import make_context
from facts.target import TARGETS
from frontends import kernels
from passes import rewrite
from passes.pipeline import LowerCopyToLLVMPass, verify_module
from tests.passes import test_compile_fuzz as fuzz

FUZZ_KERNELS = 300
"""How many kernels of the compile fuzz's sequence are tried (about half verify)."""


def reference(
    module: ModuleOp,
    patterns: Sequence[RewritePattern],
    *,
    dce: bool = True,
    recursive: bool = False,
) -> None:
    """What apply_patterns stands for: xDSL's walker and greedy applier."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier(list(patterns), dce_enabled=dce),
        apply_recursively=recursive,
    ).rewrite_module(module)


def users_of_apply_patterns() -> list[object]:
    LowerCopyToLLVMPass()  # the passes' modules are imported
    return [
        m
        for m in list(sys.modules.values())
        if m is not rewrite and getattr(m, "apply_patterns", None) is rewrite.apply_patterns
    ]


def printed(module: Operation) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def lowered(text: str, target: str | None, guards: bool) -> str | None:
    """The printed lowering of `text` for `target`, None if it does not verify."""
    ctx = make_context()
    try:  # attributes and types verify while they are parsed
        module = Parser(ctx, text).parse_module()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verify_module(module)
    except VerifyException:
        return None
    LowerCopyToLLVMPass(target=target or "", debug_guards=guards).apply(ctx, module)
    return printed(module)


def modules() -> Iterator[tuple[str, str, str | None, bool]]:
    for path in sorted(resources.files("copy_tools.examples").iterdir(), key=str):
        if path.name.endswith(".mlir"):
            text = path.read_text()
            for target in [None, *TARGETS]:
                for guards in (False, True):
                    yield f"{path.name} {target} guards={guards}", text, target, guards
    built: dict[str, Callable[[], ModuleOp]] = {
        "tma_copy": lambda: kernels.tma_copy((1000, 1000), "f32"),
        "tma_copy swizzle=128": lambda: kernels.tma_copy((512, 512), "f32", (64, 32), swizzle=128),
        "cp_async_copy": lambda: kernels.cp_async_copy((1024, 1024), "f32"),
        "multicast_copy": lambda: kernels.multicast_copy((1024, 1024), "f32"),
        "broadcast_copy": lambda: kernels.broadcast_copy((1024, 1024), "f32"),
        "ws_copy": lambda: kernels.ws_copy((1000, 1000), "f32", stages=2, in_flight=1),
        "ws_elementwise cast": lambda: kernels.ws_elementwise(
            "cast", (513, 776), "f32", out_dtype="bf16", consumer_warps=4
        ),
        "ws_row_sum": lambda: kernels.ws_row_sum((1024, 1024), "f32", (64, 128), consumer_warps=8),
        **{
            f"tma_copy_pipelined stages={n}": (
                lambda n=n: kernels.tma_copy_pipelined((1024, 1024), "f32", (64, 64), stages=n)
            )
            for n in range(1, 5)
        },
    }
    for name, build in built.items():
        yield name, printed(build()), None, False
        yield name + " guards", printed(build()), None, True
    rng = random.Random(fuzz.SEED)
    for i in range(FUZZ_KERNELS):
        _, text, _ = fuzz.random_kernel(rng)
        yield f"fuzz kernel {i}", text, None, i % 2 == 1


def test_lowering_is_the_same_as_with_xdsls_walker(monkeypatch: pytest.MonkeyPatch):
    users = users_of_apply_patterns()
    assert len(users) >= 7, users  # the lowering's passes and the pipeline's xDSL passes
    compared = 0
    for name, text, target, guards in modules():
        fast = lowered(text, target, guards)
        with monkeypatch.context() as patch:
            for module in users:
                patch.setattr(module, "apply_patterns", reference)
            slow = lowered(text, target, guards)
        assert fast == slow, name
        compared += fast is not None
    assert compared >= 240  # of the fuzz kernels the op rules and the protocol accept


def test_every_pattern_of_convert_copy_to_nvvm_names_its_op_types():
    """The driver reads each pattern's op types from its op_type_rewrite_pattern method; a
    pattern it cannot read is tried on every op (correct, but slower)."""
    from passes.convert_copy_to_nvvm import kernel

    patterns = [
        cls
        for m in list(sys.modules.values())
        if getattr(m, "__name__", "").startswith("passes.convert_copy_to_nvvm.")
        for cls in vars(m).values()
        if isinstance(cls, type)
        and issubclass(cls, kernel.KernelPattern)
        and cls is not kernel.KernelPattern
    ]
    assert len(patterns) >= 16
    for cls in patterns:
        types = rewrite.op_types(cls)
        assert types, cls
        assert all(t.name.startswith("copy.") for t in types), cls


class EraseAdds(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [], [op.lhs])


class Explodes(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MuliOp, rewriter: PatternRewriter, /):
        raise ValueError("boom")


class CountsEveryOp(RewritePattern):
    """No op type: tried on every op."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        self.seen.append(op.name)


def chain_module() -> ModuleOp:
    """A function with a chain of dead arith ops, an add whose replacement leaves its
    operand dead, and ops that stay."""
    block = Block(arg_types=[i32])
    x = block.args[0]
    one = arith.ConstantOp.from_int_and_width(1, 32)
    dead1 = arith.MuliOp(x, one)
    dead2 = arith.SubiOp(dead1, one)
    add = arith.AddiOp(x, one)
    live = test.TestOp([add.result])
    block.add_ops([one, dead1, dead2, add, live, func.ReturnOp()])
    body = Region(block)
    return ModuleOp([func.FuncOp("f", ((i32,), ()), body)])


@pytest.mark.parametrize("dce", [True, False])
@pytest.mark.parametrize("recursive", [True, False])
def test_dead_ops_and_order_are_xdsls(dce: bool, recursive: bool):
    results = []
    for apply in (rewrite.apply_patterns, reference):
        module = chain_module()
        counter = CountsEveryOp()
        apply(module, [EraseAdds(), counter], dce=dce, recursive=recursive)
        results.append((printed(module), counter.seen))
    assert results[0] == results[1]


def test_a_pattern_that_raises_gives_xdsls_error():
    messages = []
    for apply in (rewrite.apply_patterns, reference):
        module = chain_module()
        with pytest.raises(ValueError, match="boom") as info:
            apply(module, [Explodes()], dce=False)
        messages.append("\n".join(getattr(info.value, "__notes__", [])))
    assert "Error while applying pattern: boom" in messages[0]
    assert messages[0] == messages[1]


def test_modules_without_ops_are_left_alone():
    for recursive in (True, False):
        module = builtin.ModuleOp([])
        rewrite.apply_patterns(module, [EraseAdds()], recursive=recursive)
        assert printed(module) == printed(builtin.ModuleOp([]))


def test_every_pattern_of_the_lowering_names_its_op_types(monkeypatch: pytest.MonkeyPatch):
    """Each pattern the lowering's passes apply names the op types it acts on (by its
    op_type_rewrite_pattern annotation or its OP_TYPES), so that the driver passes over
    the others: a pattern it cannot read is tried on every op of its pass."""
    applied: set[type[RewritePattern]] = set()

    def recording(module: ModuleOp, patterns: Sequence[RewritePattern], **options: bool) -> None:
        applied.update(type(p) for p in patterns)
        rewrite.apply_patterns(module, patterns, **options)

    for module in users_of_apply_patterns():
        monkeypatch.setattr(module, "apply_patterns", recording)
    for path in sorted(resources.files("copy_tools.examples").iterdir(), key=str):
        if path.name.endswith(".mlir"):
            lowered(path.read_text(), None, True)
    assert len(applied) >= 30
    assert [t.__name__ for t in applied if not rewrite.op_types(t)] == []
