"""Fuzzing the verifier with random copy configurations.

Properties, for every configuration built through the Python constructors:
- verification either passes or raises a VerifyException (never another exception: a
  verifier crash would be a Python traceback in copy-opt), and so does the whole
  verification with the protocol analysis (`analysis.verify.check_module`, the first error
  as its check raised it) on what the op verifiers accept;
- every dialect error is a CopyVerifyException that carries a fix note, every protocol
  error a `ProtocolFinding` with P rule ids and a note, every protocol warning a fix note;
- what verifies prints in the custom form, parses back, verifies again and prints the same,
  and the same holds through the generic form.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter

import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    i1,
    i32,
)
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from analysis.protocol import ProtocolFinding, ProtocolWarning
from analysis.verify import check_module, verification_errors
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from facts.target import TARGETS

ELEMENT_TYPES = [
    Float32Type(),
    Float16Type(),
    BFloat16Type(),
    Float64Type(),
    IntegerType(8),
    IntegerType(4),
    IntegerType(32),
    IntegerType(32, Signedness.SIGNED),
    IntegerType(64, Signedness.UNSIGNED),
    IntegerType(1),
]


def random_module(rng: random.Random) -> ModuleOp:
    """A one-copy kernel: each choice keeps a valid default with probability 0.85, so that
    about half of the modules verify and the rest break one or two rules. The copy is
    mostly completed as the protocol asks (a load waited on, with parity 0 or one from an
    argument, groups committed and waited)."""

    def pick(default, *others):
        return default if rng.random() < 0.85 else rng.choice(others)

    elt = pick(rng.choice(ELEMENT_TYPES[:4]), *ELEMENT_TYPES)
    gmem_rank = pick(2, 1, 3, 5, 6)
    gmem_shape = [pick(4096, 1, 7, 64, 100) for _ in range(gmem_rank)]
    box_rank = pick(min(2, gmem_rank), 1, gmem_rank, gmem_rank + 1)
    box = [pick(32, 1, 2, 6, 16, 64, 256, 512) for _ in range(box_rank)]
    slots = [pick(2, 3, 5)] if rng.random() < 0.4 else []
    swizzle = pick(rng.choice([16, 64, 128]), 32)
    smem_type = MemRefType(elt, slots + box, memory_space=copy.SmemSpaceAttr(swizzle))
    gmem_type = MemRefType(elt, gmem_shape)
    is_load = rng.random() < 0.6
    arg_types = [gmem_type, i1]
    block = Block(arg_types=arg_types)
    b = Builder(InsertPoint.at_end(block))
    gmem, pred = block.args

    def index(value: int):
        return b.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).result

    buf = b.insert(copy.AllocSmemOp(smem_type)).result
    bars = b.insert(copy.BarrierInitOp(rng.choice([1, 2, 4]))).result
    gmem_indices = [index(pick(0, 1, 4, 64, -1, -32)) for _ in range(gmem_rank + pick(0, 1, -1))]
    smem_indices = [index(pick(0, 1)) for _ in slots]
    with_barrier = is_load if rng.random() < 0.85 else not is_load
    bar_index = pick(0, 1, 5)
    kwargs = dict(
        barrier=bars if with_barrier else None,
        barrier_index=index(bar_index) if with_barrier else None,
        predicate=pick(None, pred),
        implementation=pick(None, "tma", "cp_async"),
        reduction=None if is_load else pick(None, *copy.ReductionKind),
        collective=pick(None, [0], [0, 1], [0, 0], [3]) if is_load else pick(None, [0]),
        leader_tracked=pick(None, copy.LeaderTrackedAttr(), copy.LeaderTrackedAttr(0)),
        oob=pick(None, *copy.OOBMode),
        swizzle=pick(None, 16, 128),
        arrive=pick(None, False),
        cache=pick(None, "ca", "cg"),
    )
    if is_load:
        op = copy.AsyncCopyOp(
            gmem, buf, src_indices=gmem_indices, dst_indices=smem_indices, **kwargs
        )
    else:
        op = copy.AsyncCopyOp(
            buf, gmem, src_indices=smem_indices, dst_indices=gmem_indices, **kwargs
        )
    b.insert(op)
    if rng.random() < 0.3:
        b.insert(copy.BarrierArriveExpectTxOp(bars, index(0), bytes=pick(4096, 0, 1 << 20)))
    if rng.random() < (0.85 if is_load and with_barrier else 0.1):
        parity = b.insert(arith.ConstantOp.from_int_and_width(0, 1)).result
        b.insert(copy.BarrierWaitOp(bars, index(pick(bar_index, 0)), pick(parity, pred)))
    # A store completes through a bulk group, a load without a barrier (cp.async) through a
    # cp.async group, a load with one through its barrier.
    natural = None if is_load and with_barrier else "cp_async" if is_load else "bulk"
    group = pick(natural, "bulk", "cp_async")
    if group is not None:
        b.insert(copy.CommitGroupOp(group))
        b.insert(copy.WaitGroupOp(group, pick(0, 1)))
    b.insert(func.ReturnOp())
    fn = func.FuncOp("k", FunctionType.from_lists(arg_types, []), Region(block))
    cluster = pick([2, 1, 1], None, [1, 1, 1], [2, 2, 1], [4, 1, 1])
    if cluster is not None:
        fn.attributes["copy.cluster"] = DenseArrayBase.from_list(i32, cluster)
    module = ModuleOp([fn])
    target = pick(rng.choice(["sm_90a", "sm_100a"]), None, *TARGETS)
    if target is not None:
        module.attributes["copy.target"] = copy.TargetAttr(target)
    return module


def generic(module: ModuleOp) -> str:
    printer_text = []

    class _Stream:
        def write(self, s: str) -> None:
            printer_text.append(s)

    Printer(stream=_Stream(), print_generic_format=True).print_op(module)
    return "".join(printer_text)


def protocol_verdict(module: ModuleOp) -> str:
    """The whole verification on a module the op verifiers accept: "error", "warning" or
    "clean"; a ProtocolFinding carries P rule ids and a note, a ProtocolWarning a note, and
    any other exception (an internal error of the analysis) fails the test. It runs
    `check_module`, the checks of `verify_module` with the first error as raised:
    `verify_module` renders it as copy-opt's CopyDiagnosticError, whose rendering would
    report an internal error as a diagnostic and hide which check raised it."""
    error: ProtocolFinding | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProtocolWarning)
        try:
            check_module(module)
        except ProtocolFinding as err:
            error = err
    if error is not None:
        assert error.rules, f"protocol error without a rule id: {error}"
        assert all(r.startswith("P") for r in error.rules), error.rules
        assert error.note, f"protocol error without a fix note: {error}"
        return "error"
    found = [str(w.message) for w in caught if issubclass(w.category, ProtocolWarning)]
    assert all("\n  note: " in text for text in found), found
    return "warning" if found else "clean"


def verify_ops_and_kernel_rules(module: ModuleOp) -> None:
    """The first error of the op verifiers and the kernel rules (`module.verify()` runs the
    op verifiers only)."""
    errors = verification_errors(module)
    if errors:
        raise errors[0][1]


@pytest.mark.parametrize("seed", range(8))
def test_random_copies_verify_or_explain(ctx, seed):
    rng = random.Random(seed)
    verified = rejected = 0
    verdicts: Counter[str] = Counter()
    for _ in range(150):
        module = random_module(rng)
        try:
            verify_ops_and_kernel_rules(module)
        except CopyVerifyException as err:
            missing_note = None if err.note else str(err)
            rejected += 1
            assert missing_note is None, f"error without a fix note: {missing_note}"
            continue
        except VerifyException:
            # xDSL's own structural checks (operand types, segment sizes).
            rejected += 1
            continue
        verified += 1
        verdicts[protocol_verdict(module)] += 1
        text = str(module)
        again = Parser(ctx, text).parse_module()
        again.verify()
        assert str(again) == text
        from_generic = Parser(ctx, generic(module)).parse_module()
        from_generic.verify()
        assert str(from_generic) == text
    assert verified + rejected == 150
    # Both sides of the verifier are exercised (17 to 25 of 150 verify with these seeds, since
    # copies too reject barrier indexes outside their group, I2), and the protocol analysis
    # sees kernels it accepts and kernels it rejects.
    assert verified >= 10
    assert rejected >= 15
    assert verdicts["error"] >= 1, verdicts
    assert verdicts["clean"] + verdicts["warning"] >= 1, verdicts


@pytest.mark.parametrize("seed", range(3))
def test_verified_copies_compile(ctx, seed):
    """What the verifier (`check_module`: `verify_module`'s checks) accepts, the lowering
    compiles to a cubin for its target, with or without a protocol warning: a lowering
    diagnostic is a failure too (tests/passes/test_compile_fuzz.py does this for every op and
    target)."""
    from passes.pipeline import compile_module

    rng = random.Random(100 + seed)
    compiled = 0
    while compiled < 25:
        module = random_module(rng)
        try:
            verify_ops_and_kernel_rules(module)
        except VerifyException:
            continue
        if "copy.target" not in module.attributes or protocol_verdict(module) == "error":
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ProtocolWarning)
            result = compile_module(module, ctx)
        assert result.cubin.startswith(b"\x7fELF")
        compiled += 1
