"""Errors from Python as good as copy-opt's (issue 32, item 1): a kernel built with
`frontends.locations`' builder whose op breaks a rule is reported at this file's line that
made the op, with the source line, a caret, the note and the rule id, through
`runtime.compile`, `runtime.verify_module` and `analysis.verify.verify_module` (what the
builders verify with), one mistake per rule family (a TMA box,
an mbarrier's count, a cp.async barrier's arrivals, a protocol race, a swizzle, a cp.async
size); MLIR text is named `<string>` (or `name=`); `at()` gives a frontend's own location;
and copy-opt reads the locations back from `--mlir-print-debuginfo` output."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f32,
    i1,
    i8,
    i32,
)
from xdsl.ir import Block, Region
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint

from analysis.verify import verify_module as analysis_verify_module
from copy_dialect import ops as copy
from copy_dialect.errors import CopyDiagnosticError, CopyVerifyException
from copy_tools import runtime
from frontends.locations import ImplicitBuilder, LocatingBuilder, at

HERE = str(Path(__file__))
LINES = Path(__file__).read_text().splitlines()
ROOT = Path(__file__).resolve().parents[2]


def line_of(marker: str) -> int:
    """The line of this file that carries the comment `# <marker>`."""
    found = [n for n, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, marker
    return found[0]


def kernel(body, args, *, target="sm_90a", block=128) -> ModuleOp:
    """A kernel whose entry block `body` fills with a locating builder."""
    entry = Block(arg_types=args)
    b = LocatingBuilder(InsertPoint.at_end(entry))
    body(b, entry.args)
    b.insert(func.ReturnOp())
    fn = func.FuncOp("k", FunctionType.from_lists(args, []), Region(entry))
    fn.attributes["gpu.kernel"] = UnitAttr()
    fn.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, [block, 1, 1])
    module = ModuleOp([fn])
    module.attributes["copy.target"] = copy.TargetAttr(target)
    return module


def const(b, value, type_=None):
    return b.insert(arith.ConstantOp(IntegerAttr(value, type_ or IndexType()))).result


def smem(elt, shape, swizzle=16):
    return MemRefType(elt, list(shape), memory_space=copy.SmemSpaceAttr(swizzle))


def tile_load(
    box=(64, 64), *, elt=f32, gmem=(256, 256), swizzle=16, arrivals=1, cp_async=False,
    race=False, target="sm_90a",
) -> ModuleOp:  # fmt: skip
    """One tile loaded into SMEM and waited for; the arguments make the mistakes."""

    def body(b, args):
        x, y = args
        c0 = const(b, 0)
        phase = const(b, 0, i1)
        buf = b.insert(copy.AllocSmemOp(smem(elt, box, swizzle))).result
        bar = b.insert(copy.BarrierInitOp(1, arrivals=arrivals)).result  # mistake: arrivals
        load = copy.AsyncCopyOp(
            x, buf, src_indices=[c0, c0], barrier=bar, barrier_index=c0,
            implementation="cp_async" if cp_async else None,
        )  # fmt: skip
        b.insert(load)  # mistake: copy
        if race:
            v = b.insert(memref.LoadOp.get(buf, [c0, c0])).res  # mistake: race
            b.insert(memref.StoreOp.get(v, y, [c0, c0]))
        b.insert(copy.BarrierWaitOp(bar, c0, phase))

    return kernel(body, [MemRefType(elt, list(gmem))] * 2, target=target)


MISTAKES = {
    # family: (module, the marker of the line that made the bad op, the rule, the note's words)
    "tma-box": (lambda: tile_load((64, 512)), "copy", "C7", "at most 256 elements"),
    "swizzle": (lambda: tile_load(swizzle=128), "copy", "C5", "narrow the innermost box"),
    "mbarrier-count": (lambda: tile_load(arrivals=0), "arrivals", "I7", "use 1 or more"),
    "cp-async-arrivals": (
        lambda: tile_load((64, 4), gmem=(256, 4), cp_async=True, target="sm_80"),
        "arrivals",
        "P5",
        "initialize the barrier with arrivals 128",
    ),
    "cp-async-size": (
        lambda: tile_load(
            (64, 1), elt=i8, gmem=(256, 3), cp_async=True, arrivals=128, target="sm_80"
        ),  # fmt: skip
        "copy",
        "H2",
        "multiple of 4 bytes",
    ),
    "protocol-race": (lambda: tile_load(race=True), "race", "P1", "before the read"),
}


def check_error(exc: CopyDiagnosticError, marker: str, rule: str, note: str) -> None:
    line = line_of(f"mistake: {marker}")
    assert isinstance(exc, CopyVerifyException)
    assert exc.location is not None
    assert exc.location[:2] == (HERE, line), exc.location
    text = str(exc)
    head = f"{HERE}:{line}:{exc.location[2]}: error: "
    assert text.startswith(head), text
    shown = LINES[line - 1]
    assert f"\n{shown}\n" in text, text  # the source line, then the caret under the column
    caret = text.split(f"\n{shown}\n", 1)[1].splitlines()[0]
    assert caret == " " * (exc.location[2] - 1) + "^"
    assert "note: " in text
    assert note in text, text
    assert exc.note
    assert rule in exc.rules, exc.rules
    assert "Traceback" not in text
    assert "/copy_dialect/" not in text


@pytest.mark.parametrize("family", MISTAKES)
def test_a_builder_mistake_is_reported_at_its_python_line_by_compile(family):
    build, marker, rule, note = MISTAKES[family]
    with pytest.raises(CopyDiagnosticError) as info:
        runtime.compile(build())
    check_error(info.value, marker, rule, note)


@pytest.mark.parametrize("family", MISTAKES)
def test_and_by_verify_module(family):
    build, marker, rule, note = MISTAKES[family]
    with pytest.raises(CopyDiagnosticError) as info:
        runtime.verify_module(build())
    check_error(info.value, marker, rule, note)


@pytest.mark.parametrize("family", MISTAKES)
def test_and_by_the_analysis_verify_module_the_builders_call(family):
    # analysis.verify.verify_module is what the builders (frontends.kernels, frontends.dsl)
    # and compile_module verify with: the same exception, text and location
    build, marker, rule, note = MISTAKES[family]
    with pytest.raises(CopyDiagnosticError) as info:
        analysis_verify_module(build())
    check_error(info.value, marker, rule, note)
    assert info.value.__cause__ is None
    with pytest.raises(CopyDiagnosticError) as again:
        runtime.verify_module(build())
    assert str(info.value) == str(again.value)


def test_the_race_names_the_copy_in_a_note_at_its_own_line():
    with pytest.raises(CopyDiagnosticError) as info:
        runtime.verify_module(tile_load(race=True))
    copy_line = line_of("mistake: copy")
    notes = [d for d in info.value.diagnostics if d[0] == "note"]
    assert any(
        loc[:2] == (HERE, copy_line) and "the copy that fills it" in m for _, loc, m in notes
    )


def test_a_good_kernel_verifies_and_compiles():
    runtime.verify_module(tile_load())
    assert runtime.compile(tile_load()).cubin


def test_a_frontend_gives_its_own_location():
    def body(b, args):
        b.insert(copy.AllocSmemOp(smem(f32, (64, 64))))
        with at("model.tl", 7, 3):
            b.insert(copy.BarrierInitOp(1, arrivals=0))

    with pytest.raises(CopyDiagnosticError) as info:
        runtime.compile(kernel(body, [MemRefType(f32, [256, 256])] * 2))
    assert info.value.location == ("model.tl", 7, 3)
    assert str(info.value).startswith("model.tl:7:3: error: 'copy.barrier_init' op")


def test_implicit_builder_ops_are_located_too():
    entry = Block(arg_types=[MemRefType(f32, [128])])
    with ImplicitBuilder(entry):
        t = gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))  # implicit: here
    assert t.location.line.data == line_of("implicit: here")
    assert t.location.filename.data == HERE


# --- text ------------------------------------------------------------------------------

TEXT = (ROOT / "examples" / "tma_tile_copy.mlir").read_text()


def test_a_parse_error_names_the_string_and_shows_the_line():
    bad = TEXT.replace("copy.async_copy", "copy.async_cpy", 1)
    with pytest.raises(CopyDiagnosticError) as info:
        runtime.compile(bad)
    line = next(n for n, t in enumerate(bad.splitlines(), 1) if "copy.async_cpy" in t)
    text = str(info.value)
    assert text.startswith(f"<string>:{line}:5: error: unknown operation 'copy.async_cpy'")
    assert "<unknown>" not in text
    assert text.splitlines()[1] == bad.splitlines()[line - 1]
    assert text.splitlines()[2] == "    ^"


def test_a_parse_error_names_the_given_file():
    with pytest.raises(
        CopyDiagnosticError, match=r"^tile\.mlir:1:6: error: operation name expected"
    ):
        runtime.compile("%x = ", name="tile.mlir")


def test_a_stray_quote_is_a_parse_error_at_once():
    # xDSL's string-literal pattern backtracks exponentially on an unterminated string
    # (found by test_api_fuzz.py); copy-opt's parser uses a linear one.
    bad = TEXT.replace("%phase = arith.constant false", '%phase = arith.co"nstant false', 1)
    with pytest.raises(CopyDiagnosticError, match="closing string literal"):
        runtime.compile(bad)


def test_a_module_without_a_target_is_an_argument_error():
    with pytest.raises(runtime.ArgumentError, match="no target"):
        runtime.compile(TEXT.replace('attributes {copy.target = #copy.target<"sm_90a">} ', ""))


def test_a_verifier_error_in_text_has_the_note_and_the_fix():
    bad = TEXT.replace("#copy.smem>", "#copy.smem<swizzle = 128>>")
    with pytest.raises(CopyDiagnosticError) as info:
        runtime.compile(bad)
    text = str(info.value)
    assert text.startswith("<string>:"), text
    assert "error: 'copy.async_copy' op Async copies with swizzle=128" in text
    assert "\n<string>:" in text
    assert ": note: narrow the innermost box dim" in text
    assert "narrow the innermost box dim" in (info.value.note or "")
    assert "^" in text


def test_what_copy_opt_prints_is_what_python_raises(tmp_path):
    bad = TEXT.replace("#copy.smem>", "#copy.smem<swizzle = 128>>")
    path = tmp_path / "bad.mlir"
    path.write_text(bad)
    cli = subprocess.run(
        [sys.executable, "-m", "copy_tools.copy_opt", str(path)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    with pytest.raises(CopyDiagnosticError) as info:
        runtime.compile(bad, name=str(path))
    assert cli.returncode == 1
    assert cli.stderr.rstrip("\n") == str(info.value)


def test_copy_opt_reads_a_builder_modules_locations_back(tmp_path):
    stream = io.StringIO()
    Printer(stream=stream, print_debuginfo=True).print_op(tile_load(swizzle=128))
    dumped = stream.getvalue()
    line = line_of("mistake: copy")
    assert f'loc("{HERE}":{line}:' in dumped
    path = tmp_path / "built.mlir"
    path.write_text(dumped)
    run = subprocess.run(
        [sys.executable, "-m", "copy_tools.copy_opt", str(path), "--mlir-print-debuginfo"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 1
    assert run.stderr.startswith(f"{HERE}:{line}:"), run.stderr


# --- a string where an enum belongs -------------------------------------------------


@pytest.mark.parametrize("value", ["zeros", StringAttr("zeros")])
def test_a_string_where_an_enum_belongs_fails_verification_cleanly(value):
    def body(b, args):
        x, _ = args
        c0 = const(b, 0)
        buf = b.insert(copy.AllocSmemOp(smem(f32, (64, 64)))).result
        bar = b.insert(copy.BarrierInitOp(1)).result
        op = copy.AsyncCopyOp(x, buf, src_indices=[c0, c0], barrier=bar, barrier_index=c0)
        op.properties["oob"] = value
        b.insert(op)  # enum: here

    for entry in (runtime.verify_module, runtime.compile):
        with pytest.raises(CopyDiagnosticError) as info:
            entry(kernel(body, [MemRefType(f32, [256, 256])] * 2))
        assert info.value.location[:2] == (HERE, line_of("enum: here"))
        assert "should be of base attribute copy.oob" in str(info.value)
        assert info.value.__cause__ is None
        assert info.value.__suppress_context__
