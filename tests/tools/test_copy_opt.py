"""Tests of the copy-opt driver, run as a process of its own like a user would run it (forked
from a server that imported it once, `forked_tool`, where the platform forks).

The malformed-input corpus (files in tests/tools/malformed/ plus generated binary, deep and
long inputs, and bad command lines) must each give a diagnostic with `error:` on
stderr, exit status 1 and no Python traceback. The positive tests cover the empty
input, round trips, `-o`, `--split-input-file` line numbers, locations and
`--verify-diagnostics`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.forked_tool import FORKS, ForkedTool

MALFORMED = Path(__file__).parent / "malformed"
COPY_OPT = [sys.executable, "-m", "copy_tools.copy_opt"]
FORKED = ForkedTool("copy_tools.copy_opt")
"""copy-opt as a forked process (`forked_tool`: the same process, less Python's start and the
imports, about 0.3 s a run); `test_a_forked_run_is_a_process_run` holds it to COPY_OPT."""
DEEP = 100_000
"""Nesting depth of the deep inputs: far beyond copy-opt's limit (about 10 000)."""


def run(
    *args: str | Path,
    stdin: bytes | str = b"",
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    command: list[str] = COPY_OPT,
) -> subprocess.CompletedProcess[str]:
    if isinstance(stdin, str):
        stdin = stdin.encode()
    if command is COPY_OPT:
        result = FORKED.run([*map(str, args)], stdin, cwd, env, timeout=120)
    else:
        result = subprocess.run(
            [*command, *map(str, args)],
            input=stdin,
            capture_output=True,
            cwd=cwd,
            env=env,
            timeout=120,
        )
    return subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode("utf-8", errors="replace"),
        result.stderr.decode("utf-8", errors="replace"),
    )


def assert_fails_cleanly(result: subprocess.CompletedProcess[str], expected: str = "error:"):
    """Exit status 1, `expected` on stderr, no traceback anywhere."""
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    assert "error:" in result.stderr
    assert expected in result.stderr, result.stderr


# --- malformed inputs ----------------------------------------------------------------

# file name -> the start of the first diagnostic (location and message).
CORPUS = {
    "attribute_out_of_range.mlir": "1:18: error: Integer value 300 is out of range",
    "bad_location.mlir": "2:1: error: Unexpected location syntax",
    "duplicate_ssa_value.mlir": "2:1: error: SSA value %0 is already defined",
    "missing_terminator.mlir": "2:3: error: 'test.op' op Operation test.op terminates block",
    "operand_count_mismatch.mlir": "1:15: error: expected 1 operand types but had 0",
    "redeclared_block.mlir": "4:1: error: re-declaration of block 'bb0'",
    "self_use.mlir": "1:1: error: operand #0 does not dominate this use",
    "ssa_type_mismatch.mlir": "2:11: error: operand is used with type f32",
    "stray_closers.mlir": "1:1: error: Could not parse entire input",
    "truncated.mlir": "2:1: error: unexpected end of input",
    "undefined_alias.mlir": "1:6: error: undefined symbol alias '#undefined_alias'",
    "undefined_block.mlir": "error: region ends with missing block declarations for block(s) bb9",
    "undefined_ssa_value.mlir": "2:19: error: use of undefined SSA value %x",
    "unknown_attribute.mlir": "1:18: error: unknown attribute '#arith.nonexistent'",
    "unknown_dialect.mlir": "1:1: error: unknown operation 'nodialect.op': dialect 'nodialect'",
    "unknown_op.mlir": "2:1: error: unknown operation 'arith.frobnicate'",
    "unknown_type.mlir": "1:21: error: unknown type '!arith.nonexistent'",
    "unparsable.mlir": "1:15: error: Expected argument or type",
    "unterminated_string.mlir": "1:1: error: End of file reached before closing string literal",
    "verifier_error.mlir": "2:3: error: 'func.return' op Expected arguments to have the same",
    "wrong_operand_type.mlir": "2:1: error: 'arith.addi' op Unexpected attribute f32",
    "wrong_parent.mlir": "2:3: error: 'func.return' op expects parent op",
}


def test_corpus_is_complete():
    assert sorted(CORPUS) == sorted(p.name for p in MALFORMED.glob("*.mlir"))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_malformed_file(name: str):
    result = run(MALFORMED / name)
    assert_fails_cleanly(result, CORPUS[name])
    assert result.stderr.startswith(str(MALFORMED / name) + ":")
    assert result.stdout == ""


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_malformed_stdin(name: str):
    result = run(stdin=(MALFORMED / name).read_bytes())
    assert_fails_cleanly(result, CORPUS[name])
    assert result.stderr.startswith("<stdin>:")


def test_source_line_and_caret():
    result = run(MALFORMED / "ssa_type_mismatch.mlir")
    assert result.stderr.splitlines()[1:] == ['"test.op"(%a) : (f32) -> ()', "          ^"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'"test.op"() : () -> ()\x00\n', "1:23: error: Unexpected character: \\x00"),
        (b"\x00\x00\x00", "1:1: error: Unexpected character"),
        (b'"test.op"() {a = "\xff"} : () -> ()\n', "1:19: error: invalid UTF-8 byte 0xff"),
        (b"\n\n  \xc3\x28", "3:3: error: invalid UTF-8 byte 0xc3"),
        (random.Random(1234).randbytes(4096), "error: invalid UTF-8 byte"),
        (bytes(random.Random(99).choice(b'{}[]()<>%^#!:,="') for _ in range(4096)), "error:"),
    ],
    ids=["nul-after-op", "only-nuls", "invalid-utf8", "invalid-utf8-line3", "garbage", "punct"],
)
def test_binary_input(tmp_path: Path, data: bytes, expected: str):
    path = tmp_path / "input.mlir"
    path.write_bytes(data)
    result = run(path)
    assert_fails_cleanly(result, expected)


def test_deeply_nested_regions(tmp_path: Path):
    path = tmp_path / "deep.mlir"
    path.write_text('"test.op"() ({\n' * DEEP + "}) : () -> ()\n" * DEEP)
    result = run(path)
    assert_fails_cleanly(result, "error: nesting too deep")


def test_deeply_nested_brackets(tmp_path: Path):
    path = tmp_path / "deep.mlir"
    path.write_text('"test.op"() {a = ' + "[" * DEEP + "]" * DEEP + "} : () -> ()\n")
    result = run(path)
    assert_fails_cleanly(result, "1:")
    assert "error: nesting too deep" in result.stderr


def test_unclosed_brackets(tmp_path: Path):
    path = tmp_path / "deep.mlir"
    path.write_text('"test.op"() {a = ' + "[" * DEEP)
    assert_fails_cleanly(run(path))


def test_very_long_line(tmp_path: Path):
    # One 1 MB line whose error is at its very end.
    values = ", ".join(str(i) for i in range(150_000))
    path = tmp_path / "long.mlir"
    path.write_text(f'"test.op"() {{a = [{values},]}} : () -> ()\n')
    result = run(path)
    column = len(f'"test.op"() {{a = [{values},') + 1
    assert_fails_cleanly(result, f"long.mlir:1:{column}: error: attribute expected")


def test_no_implicit_module_empty_input():
    assert_fails_cleanly(run("--no-implicit-module"))


# --- bad command lines ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-p", "no-such-pass"], "copy-opt: error: unknown pass 'no-such-pass'"),
        (["-p", "canonicalise"], "did you mean 'canonicalize'"),
        (["-p", "cse{no-such-option=1}"], "invalid options for pass 'cse'"),
        (["-p", "convert-scf-to-openmp{collapse=many}"], "Incompatible types"),
        (["-p", "x86-set-arch"], 'x86-set-arch requires argument "arch"'),
        (["-p", "canonicalize{"], "invalid pass pipeline -p 'canonicalize{'"),
        (["-p", "canonicalize,,cse"], "Expected pass name here at column 14"),
        (["-t", "no-such-target"], "unknown target -t 'no-such-target'"),
        (["-f", "pdl"], "unsupported frontend -f 'pdl'"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["a.mlir", "b.mlir"], "unrecognized arguments: b.mlir"),
        (["--shrink"], "--shrink is not supported"),
    ],
)
def test_bad_command_line(args: list[str], expected: str):
    result = run(*args, stdin='"test.op"() : () -> ()')
    assert_fails_cleanly(result, expected)
    assert result.stderr.startswith("copy-opt: error: ")
    assert len(result.stderr.splitlines()) == 1


def test_missing_input(tmp_path: Path):
    result = run(tmp_path / "missing.mlir")
    assert_fails_cleanly(result, "cannot read input file")
    assert "no such file or directory" in result.stderr


def test_directory_input(tmp_path: Path):
    assert_fails_cleanly(run(tmp_path), "is a directory")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_input(tmp_path: Path):
    path = tmp_path / "secret.mlir"
    path.write_text('"test.op"() : () -> ()\n')
    path.chmod(0)
    assert_fails_cleanly(run(path), "permission denied")


def test_output_onto_input_is_refused(tmp_path: Path):
    path = tmp_path / "input.mlir"
    original = '"test.op"() : () -> ()\n'
    path.write_text(original)
    assert_fails_cleanly(run(path, "-o", path), "is the input file")
    link = tmp_path / "link.mlir"
    link.symlink_to(path)
    assert_fails_cleanly(run(path, "-o", link), "is the input file")
    assert path.read_text() == original


def test_output_into_missing_directory(tmp_path: Path):
    result = run("-o", tmp_path / "no" / "out.mlir", stdin='"test.op"() : () -> ()')
    assert_fails_cleanly(result, "does not exist")


def test_output_is_directory(tmp_path: Path):
    result = run("-o", tmp_path, stdin='"test.op"() : () -> ()')
    assert_fails_cleanly(result, "is a directory")


# --- errors in passes and dialects (a driver with extra test passes and dialects) ----

HARNESS = """
import sys
from dataclasses import dataclass

from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from copy_dialect.errors import CopyVerifyException
from copy_tools import copy_opt


@dataclass(frozen=True)
class CrashPass(ModulePass):
    name = "test-crash"

    def apply(self, ctx, op):
        raise KeyError("boom")


@dataclass(frozen=True)
class FailPass(ModulePass):
    name = "test-fail"

    def apply(self, ctx, op):
        raise PassFailedException("cannot do it")


@dataclass(frozen=True)
class BreakPass(ModulePass):
    # Inserts an invalid op without location before the first func.return.
    name = "test-break"

    def apply(self, ctx, op):
        ret = next(o for o in op.walk() if o.name == "func.return")
        ret.parent_block().insert_op_before(NotedOp.create(), ret)


@irdl_op_definition
class CrashVerifyOp(IRDLOperation):
    name = "crashy.verify"

    def verify_(self):
        1 / 0


@irdl_op_definition
class NotedOp(IRDLOperation):
    name = "crashy.noted"

    def verify_(self):
        raise CopyVerifyException("is wrong", note="do it right")


@irdl_op_definition
class CrashParseOp(IRDLOperation):
    name = "crashy.parse"

    @classmethod
    def parse(cls, parser):
        raise TypeError("parser bug")


def broken_dialect():
    raise ImportError("No module named 'broken_dialect_module'")


class Main(copy_opt.CopyOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        self.register_pass(CrashPass.name, lambda: CrashPass)
        self.register_pass(FailPass.name, lambda: FailPass)
        self.register_pass(BreakPass.name, lambda: BreakPass)

    def register_all_dialects(self):
        super().register_all_dialects()
        crashy = Dialect("crashy", [CrashVerifyOp, NotedOp, CrashParseOp])
        self.ctx.register_dialect("crashy", lambda: crashy)
        self.ctx.register_dialect(
            "broken", copy_opt.guarded_dialect_factory("broken", broken_dialect)
        )


sys.exit(copy_opt.main(tool=Main))
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    path = tmp_path_factory.mktemp("harness") / "harness.py"
    path.write_text(HARNESS)
    return [sys.executable, str(path)]


def test_pass_raising_internal_error(harness: list[str]):
    result = run("-p", "test-crash", stdin='"test.op"() : () -> ()', command=harness)
    assert_fails_cleanly(result, "<stdin>:1:1: error: internal error in pass 'test-crash': ")
    assert "KeyError: 'boom'" in result.stderr
    assert "<stdin>:1:1: note: this is a bug in copy-opt" in result.stderr


def test_internal_error_traceback_on_request(harness: list[str]):
    env = {**os.environ, "COPY_OPT_TRACEBACK": "1"}
    result = run("-p", "test-crash", stdin='"test.op"() : () -> ()', command=harness, env=env)
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert "internal error in pass 'test-crash'" in result.stderr


def test_pass_failure(harness: list[str]):
    result = run("-p", "test-fail", stdin='"test.op"() : () -> ()', command=harness)
    assert_fails_cleanly(result, "<stdin>:1:1: error: pass 'test-fail' failed: cannot do it")
    assert result.stdout == ""


def test_verifier_raising_internal_error(harness: list[str]):
    result = run(stdin='"test.op"() : () -> ()\n"crashy.verify"() : () -> ()', command=harness)
    assert_fails_cleanly(
        result, "<stdin>:2:1: error: internal error in verifier of 'crashy.verify': "
    )
    assert "ZeroDivisionError" in result.stderr


def test_parser_raising_internal_error(harness: list[str]):
    result = run(stdin="  crashy.parse", command=harness)
    assert_fails_cleanly(result, "<stdin>:1:3: error: internal error in parser of 'crashy.parse'")


def test_verifier_note_and_no_module_dump(harness: list[str]):
    source = '"test.op"() : () -> ()\n  "crashy.noted"() : () -> ()\n'
    result = run(stdin=source, command=harness)
    assert_fails_cleanly(result)
    assert result.stderr.splitlines() == [
        "<stdin>:2:3: error: 'crashy.noted' op is wrong",
        '  "crashy.noted"() : () -> ()',
        "  ^",
        "<stdin>:2:3: note: do it right",
    ]


def test_op_created_by_pass_is_reported_at_its_parent(harness: list[str]):
    source = "// a comment\n  func.func @f() {\n    func.return\n  }\n"
    result = run("-p", "test-break", stdin=source, command=harness)
    assert_fails_cleanly(result)
    assert result.stderr.splitlines() == [
        "<stdin>:2:3: error: 'crashy.noted' op is wrong",
        "  func.func @f() {",
        "  ^",
        "<stdin>:2:3: note: do it right",
        "<stdin>:2:3: note: the op was left invalid by pass 'test-break'",
    ]


def test_broken_dialect_module(harness: list[str]):
    result = run(stdin='"broken.op"() : () -> ()', command=harness)
    assert_fails_cleanly(result, "<stdin>:1:1: error: cannot load dialect 'broken': ImportError")


# --- successful runs -----------------------------------------------------------------

VALID = textwrap.dedent(
    """\
    func.func @add(%a: i32, %b: i32) -> i32 {
      %0 = arith.addi %a, %b : i32
      func.return %0 : i32
    }
    "test.op"() {attr = [1, 2, [3]]} : () -> ()
    """
)


@pytest.mark.parametrize("stdin_args", [[], ["-"]])
def test_empty_input(tmp_path: Path, stdin_args: list[str]):
    for result in (run(*stdin_args), run(_write(tmp_path / "empty.mlir", ""))):
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "builtin.module {\n}"
        assert result.stderr == ""


def test_round_trip(tmp_path: Path):
    first = run(stdin=VALID)
    assert first.returncode == 0, first.stderr
    assert "arith.addi %a, %b : i32" in first.stdout
    assert "loc(" not in first.stdout
    generic = run("--print-op-generic", stdin=first.stdout)
    assert '"arith.addi"' in generic.stdout
    again = run(stdin=generic.stdout)
    assert again.stdout == first.stdout


def test_pass_pipeline_with_options():
    result = run("-p", "canonicalize,cse,convert-scf-to-openmp{collapse=2}", stdin=VALID)
    assert result.returncode == 0, result.stderr


def test_repeated_pass_options_are_all_run():
    result = run("-p", "canonicalize", "-p", "cse", "--time-passes", stdin=VALID)
    assert result.returncode == 0, result.stderr
    assert "Pass canonicalize took" in result.stderr
    assert "Pass cse took" in result.stderr


def test_locations_with_debuginfo(tmp_path: Path):
    path = _write(tmp_path / "in.mlir", '\n  "test.op"() : () -> ()\n')
    result = run(path, "--print-debuginfo")
    assert f'"test.op"() : () -> () loc("{path}":2:3)' in result.stdout


def test_output_file_written_on_success(tmp_path: Path):
    out = tmp_path / "out.mlir"
    result = run("-o", out, stdin=VALID)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "arith.addi" in out.read_text()


def test_failed_run_leaves_output_untouched(tmp_path: Path):
    out = _write(tmp_path / "out.mlir", "precious\n")
    before = out.stat()
    result = run(MALFORMED / "verifier_error.mlir", "-o", out)
    assert_fails_cleanly(result)
    assert out.read_text() == "precious\n"
    assert out.stat().st_mtime_ns == before.st_mtime_ns
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]  # no temporary left


def test_split_input_file_line_numbers(tmp_path: Path):
    source = textwrap.dedent(
        """\
        "test.op"() : () -> ()
        // -----
        "test.op"() : () -> ()

        // -----
        // a comment
        func.func @f() -> i32 {
          func.return
        }
        """
    )
    path = _write(tmp_path / "split.mlir", source)
    result = run(path, "--split-input-file")
    assert_fails_cleanly(result, f"{path}:8:3: error: 'func.return' op")
    # The chunks that verified are printed, joined by the split marker.
    assert result.stdout.count("builtin.module {") == 2
    assert result.stdout.count("// -----\n") == 2


def test_huge_input(tmp_path: Path):
    # ~0.5 MB; xDSL parses roughly 0.25 MB/s, so 20 MB take about 90 s.
    lines = [f'%v{i} = "test.op"() {{value = {i} : i64}} : () -> i64\n' for i in range(10_000)]
    path = _write(tmp_path / "huge.mlir", "".join(lines))
    result = run(path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('"test.op"()') == 10_000


def test_deep_but_acceptable_nesting(tmp_path: Path):
    depth = 1000
    op, term, close = '"test.op"() ({\n', '"test.termop"() : () -> ()\n', "}) : () -> ()\n"
    path = _write(tmp_path / "deep.mlir", op * depth + term + (close + term) * (depth - 1) + close)
    result = run(path)
    assert result.returncode == 0, result.stderr[:2000]


def test_copy_dialect_error_has_note(tmp_path: Path):
    pytest.importorskip("copy_dialect.ops")
    source = textwrap.dedent(
        """\
        func.func @f() {
          %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem<swizzle = 48>>
          func.return
        }
        """
    )
    result = run(stdin=source)
    assert_fails_cleanly(result, "<stdin>:2:46: error: ")
    assert "<stdin>:2:46: note: " in result.stderr


# --- --verify-diagnostics ------------------------------------------------------------

EXPECTED_OK = textwrap.dedent(
    """\
    func.func @f() -> i32 {
      // expected-error@+1 {{expected [i32], got []}}
      func.return
    }
    // -----
    func.func @g() {
    // expected-note@+1 {{originally declared here}}
    ^bb0:
      func.return
    ^bb0: // expected-error {{re-declaration of block 'bb0'}}
      func.return
    }
    // -----
    "test.op"(%nope) : (i32) -> () // expected-error-re {{undefined SSA value %{{[a-z]+}}}}
    // -----
    "test.op"() : () -> ()
    """
)


def verify(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    path = _write(tmp_path / "input.mlir", source)
    return run(path, "--split-input-file", "--verify-diagnostics")


def test_verify_diagnostics_all_expected(tmp_path: Path):
    result = verify(tmp_path, EXPECTED_OK)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    # Like mlir-opt: nothing is printed for the chunks with errors.
    assert (
        result.stdout
        == '// -----\n// -----\n// -----\nbuiltin.module {\n  "test.op"() : () -> ()\n}\n\n'
    )


def test_verify_diagnostics_missing_error(tmp_path: Path):
    source = EXPECTED_OK + '// -----\n// expected-error@+1 {{never}}\n"test.op"() : () -> ()\n'
    result = verify(tmp_path, source)
    assert_fails_cleanly(result, 'input.mlir:18:4: error: expected error "never" was not produced')


def test_verify_diagnostics_unexpected_error(tmp_path: Path):
    source = EXPECTED_OK.replace("  // expected-error@+1 {{expected [i32], got []}}\n", "")
    result = verify(tmp_path, source)
    assert_fails_cleanly(result, "input.mlir:2:3: error: unexpected error: 'func.return' op")


def test_verify_diagnostics_unexpected_note(tmp_path: Path):
    source = EXPECTED_OK.replace("// expected-note@+1 {{originally declared here}}\n", "")
    result = verify(tmp_path, source)
    assert_fails_cleanly(result, "input.mlir:7:1: error: unexpected note: originally declared here")


def test_verify_diagnostics_wrong_line(tmp_path: Path):
    source = EXPECTED_OK.replace(
        "expected-error@+1 {{expected [i32]", "expected-error@+2 {{expected [i32]"
    )
    result = verify(tmp_path, source)
    assert_fails_cleanly(result, "unexpected error")
    assert "was not produced" in result.stderr


def test_verify_diagnostics_without_split(tmp_path: Path):
    path = _write(tmp_path / "one.mlir", '"test.op"(%x) : (i32) -> () // expected-error {{%x}}\n')
    result = run(path, "--verify-diagnostics")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_verify_op_reports_without_dumping_the_module(ctx):
    """xDSL's Operation.verify prints the whole module into each error's notes (quadratic
    for a module with many errors); copy-opt's verify_op raises the bare error."""
    from xdsl.parser import Parser

    from copy_dialect.errors import CopyVerifyException
    from copy_dialect.verification import verify_op

    text = """
    func.func @f() attributes {copy.target = #copy.target<"sm_80">} {
      copy.fence_async_shared
      func.return
    }
    """
    module = Parser(ctx, text).parse_module()
    fence = next(op for op in module.walk() if op.name == "copy.fence_async_shared")
    with pytest.raises(CopyVerifyException) as info:
        verify_op(fence)
    assert not getattr(info.value, "__notes__", None)
    assert "needs a target with fence.proxy.async (sm_90, " in str(info.value)


# --- compiling: -t llvm|ptx|cubin ----------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tma_tile_copy.mlir"


def test_cubin_and_abi_written(tmp_path):
    out = tmp_path / "k.cubin"
    result = run(EXAMPLE, "-t", "cubin", "-o", out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes().startswith(b"\x7fELF")
    abi = json.loads(Path(f"{out}.json").read_text())
    assert abi["target"] == "sm_90a"
    kinds = [p["kind"] for p in abi["kernels"]["tile_copy"]["params"]]
    assert kinds == ["pointer", "pointer", "tensor_map", "tensor_map"]


def test_cubin_for_a_later_gpu(tmp_path):
    # sm_80 code (the TMA example legalized) assembled for sm_90: the ABI records the arch.
    legal = tmp_path / "legal.mlir"
    legalized = run(EXAMPLE, "--target", "sm_80", "-p", "copy-legalize", "-o", legal)
    assert legalized.returncode == 0, legalized.stderr
    out = tmp_path / "k.cubin"
    result = run(legal, "-t", "cubin", "--arch", "sm_90", "-o", out)
    assert result.returncode == 0, result.stderr
    assert CUDA_ELF_SM(out.read_bytes()) == 90
    abi = json.loads(Path(f"{out}.json").read_text())
    assert (abi["target"], abi["arch"]) == ("sm_80", "sm_90")
    plain = tmp_path / "plain.cubin"
    assert run(legal, "-t", "cubin", "-o", plain).returncode == 0
    assert CUDA_ELF_SM(plain.read_bytes()) == 80
    assert "arch" not in json.loads(Path(f"{plain}.json").read_text())


def CUDA_ELF_SM(cubin: bytes) -> int:
    """The SM a CUDA ELF's SASS is for: bits 8-15 of e_flags (0x5a00: sm_90)."""
    return (int.from_bytes(cubin[0x30:0x34], "little") >> 8) & 0xFF


def test_cubin_for_a_gpu_that_cannot_run_the_ptx(tmp_path):
    # Arch-specific PTX (sm_90a) assembles for sm_90a only: the error says what runs it.
    result = run(EXAMPLE, "-t", "cubin", "--arch", "sm_90", "-o", tmp_path / "k.cubin")
    assert_fails_cleanly(result, "--arch sm_90: expected an arch that runs sm_90a PTX (sm_90a)")
    assert not (tmp_path / "k.cubin").exists()


def test_ptx_for_another_target_is_verified_for_it():
    # --target also retargets the verifier: the TMA kernel is rejected for sm_80 before LLVM.
    result = run(EXAMPLE, "-t", "ptx", "--target", "sm_80")
    assert_fails_cleanly(result, "only supported Hopper and newer GPUs")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-t", "cubin"], "-t cubin writes a binary: give an output file with -o"),
        (["-t", "ptx", "--target", "sm_75"], "--target: unknown target 'sm_75': expected one of"),
        (["-t", "cubin", "-o", "x.cubin", "--split-input-file"], "drop --split-input-file"),
        (["-t", "ptx", "--arch", "sm_90"], "--arch sm_90 names the cubin's GPU: use it with -t"),
        (
            ["-t", "cubin", "-o", "x.cubin", "--arch", "sm_91"],
            "--arch: unknown GPU arch 'sm_91': expected one of",
        ),
    ],
)
def test_compile_usage_errors(tmp_path, args, message):
    assert_fails_cleanly(run(EXAMPLE, *args, cwd=tmp_path), message)


def test_llvm_ir_output():
    result = run(EXAMPLE, "-t", "llvm")
    assert result.returncode == 0, result.stderr
    assert "define ptx_kernel void @tile_copy(" in result.stdout
    assert '"nvvm.grid_constant"' in result.stdout


# --- mlir-opt's flags (issue K): pipelines, --list-passes, IR printing, timing ------------

NESTED_INPUT = """\
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}
func.func @g() {
  func.return
}
func.func @h(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  func.return %1 : i32
}
"""


def test_pipeline_text_nested_and_flat():
    from copy_tools.opt_pipeline import NestText, PassText, parse_pipeline_text

    flat = parse_pipeline_text("canonicalize, cse{a=1 b=x,y}")
    assert [type(e) for e in flat] == [PassText, PassText]
    assert flat[1].spec.parameters == {"a": (1,), "b": ("x", "y")}
    (root,) = parse_pipeline_text('builtin.module(func.func(cse{s="a)b}"}), gpu.module())')
    assert isinstance(root, NestText)
    assert root.anchor == "builtin.module"
    func, gpu = root.children
    assert isinstance(func, NestText)
    assert func.anchor == "func.func"
    assert func.children[0].spec.parameters == {"s": ("a)b}",)}
    assert isinstance(gpu, NestText)
    assert gpu.children == ()
    assert parse_pipeline_text("  ") == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("canonicalize,,cse", "Expected pass name here at column 14"),
        ("builtin.module(cse", "Expected ')' closing the nested pipeline here"),
        ("builtin.module(cse))", "Expected ',' after a pass here at column 20"),
        ("builtin.module(cse cse)", "Expected ',' or ')' here at column 20"),
        ("cse{", "Expected argument name here at column 5"),
    ],
)
def test_pipeline_text_errors(text: str, message: str):
    from copy_tools.opt_pipeline import PipelineSyntaxError, parse_pipeline_text

    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline_text(text)
    assert message in str(info.value)


def test_nested_pass_keeps_op_order_and_runs_on_each():
    result = run("-p", "builtin.module(func.func(cse))", stdin=NESTED_INPUT)
    assert result.returncode == 0, result.stderr
    names = [line.split("@")[1].split("(")[0] for line in result.stdout.splitlines() if "@" in line]
    assert names == ["f", "g", "h"]
    assert result.stdout.count("arith.addi") == 2  # one left in @f and one in @h


def test_pass_pipeline_and_p_run_in_order():
    result = run(
        "--pass-pipeline=builtin.module(cse)",
        "-p",
        "canonicalize",
        "--mlir-print-ir-after-all",
        stdin=NESTED_INPUT,
    )
    assert result.returncode == 0, result.stderr
    dumps = [line for line in result.stderr.splitlines() if "IR Dump" in line]
    assert dumps == [
        "// -----// IR Dump After CommonSubexpressionElimination (cse) //----- //",
        "// -----// IR Dump After CanonicalizePass (canonicalize) //----- //",
    ]


def test_debug_guards_reach_a_nested_lowering():
    result = run(EXAMPLE, "--debug-guards", "-p", "builtin.module(lower-copy-to-llvm)")
    assert result.returncode == 0, result.stderr
    assert "copy-dialect guard TR12" in result.stdout


def test_lower_copy_to_llvm_runs_its_stages():
    from copy_tools.opt_pipeline import pass_node
    from passes.pipeline import LowerCopyToLLVMPass, lowering_passes

    node = pass_node(LowerCopyToLLVMPass(debug_guards=True))
    assert [n.pass_ for n in node.stages] == lowering_passes("", True)


def test_timing_report_leaves_stdout_alone():
    plain = run("-p", "cse", stdin=NESTED_INPUT)
    timed = run("-p", "cse", "--mlir-timing", stdin=NESTED_INPUT)
    assert timed.returncode == 0, timed.stderr
    assert timed.stdout == plain.stdout
    assert "... Execution time report ..." in timed.stderr
    assert timed.stderr.rstrip().endswith("Total")


def test_list_passes_has_every_project_pass_with_a_summary():
    from copy_tools.universe import COPY_UNIVERSE

    result = run("--list-passes")
    assert result.returncode == 0, result.stderr
    ours, _, others = result.stdout.partition("Other passes")
    lines = ours.splitlines()
    for name in COPY_UNIVERSE.all_passes:
        index = lines.index(f"  {name}")
        assert lines[index + 1].strip(), name  # its summary
        assert name not in others
    assert lines.index("  convert-copy-to-nvvm") < lines.index("  lower-copy-to-llvm")
    assert "canonicalize" in others
    assert "canonicalize" not in ours


def test_pass_summaries_and_option_docs():
    from copy_tools.opt_passes import options, summary
    from passes.convert_copy_to_nvvm import ConvertCopyToNVVMPass

    assert summary(ConvertCopyToNVVMPass).startswith("Lowers the `copy` dialect to `nvvm`")
    by_name = {o.name: o for o in options(ConvertCopyToNVVMPass)}
    assert by_name["target"].default == '""'
    assert by_name["debug-guards"].default == "false"
    assert by_name["prefetch-tensormaps"].default == "true"
    assert "copy.target" in by_name["target"].help


def test_help_lists_the_project_passes_only():
    result = run("--help")
    assert result.returncode == 0, result.stderr
    assert "convert-copy-to-nvvm    Lowers the `copy` dialect" in result.stdout
    assert "riscv-" not in result.stdout.replace("(riscv, csl, stencil, ...)", "")
    assert "so it also changes what -t mlir accepts" in " ".join(result.stdout.split())


def test_mlir_spellings_of_printing_flags(tmp_path: Path):
    path = _write(tmp_path / "in.mlir", '\n  "test.op"() : () -> ()\n')
    result = run(path, "--mlir-print-debuginfo", "--mlir-print-op-generic")
    assert f'"test.op"() : () -> () loc("{path}":2:3)' in result.stdout
    assert '"builtin.module"()' in result.stdout


# --- plain xdsl-opt (issue K): diagnostics, not tracebacks ---------------------------

XDSL_OPT = [sys.executable, "-m", "xdsl.tools.xdsl_opt"]


def test_xdsl_opt_prints_a_verifier_error_without_traceback():
    path = Path(__file__).resolve().parents[2] / "lit_tests" / "copy-opt" / "xdsl-opt.mlir"
    result = run(path, command=XDSL_OPT)
    assert_fails_cleanly(result, "xdsl-opt: error: Only the TMA implementation supports reductions")
    assert "xdsl-opt: note: use impl tma on sm_90 or newer" in result.stderr
    assert "Operation does not verify" in result.stderr  # xDSL's dump with the op underlined
    traced = run(path, command=XDSL_OPT, env={**os.environ, "COPY_OPT_TRACEBACK": "1"})
    assert "Traceback" in traced.stderr


def test_xdsl_opt_prints_a_parse_error_without_traceback():
    result = run(stdin='"test.op"(%x) : (i32) -> ()\n', command=XDSL_OPT)
    assert_fails_cleanly(result, "stdin:2:1: error: values used but not defined: [%x]")


def test_xdsl_opt_hook_is_for_xdsl_opt_only():
    from copy_tools import xdsl_opt_errors

    assert not xdsl_opt_errors.running_xdsl_opt()  # pytest is not xdsl-opt: no hook
    assert not getattr(sys.excepthook, "copy_dialect_hook", False)
    assert xdsl_opt_errors.diagnostic_text(KeyError("a bug")) is None  # bugs keep tracebacks


def test_cubin_reports_what_ptxas_left_slower(tmp_path: Path):
    """-t cubin of a kernel with setmaxnreg (kernels.gemm's roles): nvJitLink's separate
    compilation ignores it (C7504); without a ptxas on PATH that is a `warning:` line and the
    cubin is still written; with one, the cubin is ptxas's whole-program one, with no
    warning."""
    from frontends import kernels

    source = tmp_path / "gemm.mlir"
    source.write_text(str(kernels.gemm(256, 256, 128)))
    out = tmp_path / "gemm.cubin"
    env = {**os.environ, "PATH": str(tmp_path)}  # no ptxas there
    result = run(source, "-t", "cubin", "-o", out, env=env)
    assert result.returncode == 0, result.stderr
    assert "warning: sm_90a: ptxas: (C7504) Potential Performance Loss: 'setmaxnreg'" in (
        result.stderr
    )
    assert out.read_bytes()[:4] == b"\x7fELF"
    if shutil.which("ptxas") is None:
        pytest.skip("no ptxas on PATH")
    result = run(source, "-t", "cubin", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "warning:" not in result.stderr


@pytest.mark.skipif(not FORKS, reason="no os.fork: every run is a process run")
@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["malformed/unknown_op.mlir"], b""),
        (["-"], b'"test.op"() : () -> ('),
        (["--no-such-flag"], b""),
        (["--print-op-generic"], VALID.encode()),
        ([str(EXAMPLE), "-t", "ptx", "-o", "k.ptx"], b""),
        (["-p", "no-such-pass"], VALID.encode()),
        (["--help"], b""),
    ],
    ids=["malformed", "stdin", "usage", "generic", "ptx", "pass", "help"],
)
def test_a_forked_run_is_a_process_run(tmp_path: Path, args: list[str], stdin: bytes):
    """The forked copy-opt (`FORKED`) prints and exits as the process does, byte for byte,
    with files written in its cwd."""
    outputs = []
    for way in ("process", "forked"):
        cwd = tmp_path / way
        cwd.mkdir()
        (cwd / "malformed").symlink_to(MALFORMED)
        if way == "process":
            done = subprocess.run([*COPY_OPT, *args], input=stdin, capture_output=True, cwd=cwd)
        else:
            done = FORKED.run(args, stdin, cwd, None, timeout=120)
        written = {p.name: p.read_bytes() for p in cwd.iterdir() if p.name != "malformed"}
        outputs.append((done.returncode, done.stdout, done.stderr, written))
    assert outputs[0] == outputs[1]
