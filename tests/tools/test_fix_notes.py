"""Every negative lit test's fix note, followed literally, leads to IR that verifies.

Each chunk of a negative lit test (a chunk with an `expected-error`, or a FileCheck line
that expects an `error:`) carries, next to its `// rule:` line, either fix lines

    // fix: s|OLD|NEW|

(replace the first occurrence of the literal text OLD by NEW, in order; NEW may be
empty), or one line `// fix: none -- <why no mechanical edit exists>`. For each chunk
with fix lines this test checks:

* the original chunk fails under copy-opt, with the options of the file's RUN line
  (`--target`, `-p`, ...);
* every OLD occurs in the chunk's IR at the point its line is applied. The IR is the
  chunk without its full-line `//` comments, so that an OLD names code and never the
  text of an `expected-*` or `CHECK` comment;
* the fixed chunk goes through copy-opt with the same options (parse, `--target`
  retargeting, verification, the `-p` passes) without any diagnostic. A chunk of an op's
  rule is an op fragment rather than a whole kernel (its load may never be waited on), so
  it is verified with `--no-verify-protocol`; a chunk of a protocol rule (`P..`, and the
  `PROTOCOL_RULES` of other families) is a kernel, verified whole;
* the note mentions the edit: some token that the fix lines add (a token of a NEW that is
  not a token of its OLD) is a token of the note; where the lines add none (pure
  deletions), some token that they remove is. A line whose OLD and NEW have the same set
  of tokens (`%x[%c0]` -> `%x[%c0, %c0]`) gives nothing to look for, and a chunk whose
  lines are all such is checked for verification only. Tokens are words and names.
  Words are the maximal runs of letters, digits, `_` and `.` outside names, plus the parts
  of a shape or else the digit runs inside them: `sm_90a` and its `90`,
  `copy.fence_async_shared`, `64x8xf32`, its `64`, `8` and `f32` are each a word. Names
  are SSA values, blocks and symbols with their sigil: `%bar`, `^bb0`, `@f`. Where the
  diagnostic has no note (a pass failure that carries its fix in the message), the
  message stands for the note.
  The rule asks for one token of the edit, not all: a note that names the main edit but
  leaves out a secondary one passes.

The chunks run in-process through copy-opt's own driver (`CopyOptMain.process_chunk`),
which registers the same dialects as `copy_tools.universe.make_context()`.

The driver's own tests (lit_tests/copy-opt/) are left out: their diagnostics are xDSL's
parser and IR errors, which carry no fix notes, and Inputs/mismatch.mlir is wrong on
purpose with line numbers that verify-diagnostics-mismatch.mlir checks.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from copy_tools.copy_opt import CopyOptMain
from copy_tools.diagnostics import Chunk, SourceFile, split_chunks
from copy_tools.rule_coverage import tag_ids

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "lit_tests"
DRIVER_TESTS = LIT / "copy-opt"
PROTOCOL_RULES = frozenset({"MB8", "MB9", "MB10", "MB11", "TU10", "TU11", "TU12", "FX1"})
"""The protocol analysis' rules whose ids are not P..: their chunks are kernels too."""

FIX_LINE = re.compile(r"^[ \t]*// fix:(.*)$", re.MULTILINE)
COMMENT_LINE = re.compile(r"^[ \t]*//[^\n]*(?:\n|\Z)", re.MULTILINE)
EXPECTS_ERROR = re.compile(r"expected-error|^[ \t]*// [\w-]*CHECK[\w-]*:.* error: ", re.MULTILINE)
RUN_LINE = re.compile(r"^[ \t]*// RUN:(.*)$", re.MULTILINE)
NONE_REASON = re.compile(r"^none -- (\S.*)$")
WORD = re.compile(r"(?<![%^@\w.])[\w.]+")
NAME = re.compile(r"[%^@][\w.$-]+")
DIGITS = re.compile(r"\d+")
SHAPE = re.compile(r"(?:\d+x)+\w+")
IGNORED_OPTIONS = ("--split-input-file", "--verify-diagnostics")
"""The test feeds copy-opt one chunk and reads its diagnostics itself."""


@dataclass
class NegativeChunk:
    path: Path
    first_line: int
    text: str
    options: tuple[str, ...]
    fixes: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    none_reason: str | None = None
    problems: list[str] = field(default_factory=list[str])
    """Malformed fix lines."""

    @property
    def id(self) -> str:
        name = re.search(r"func\.func @(\w+)", self.text)
        where = f"{self.path.relative_to(LIT)}:{self.first_line}"
        return f"{where}:{name.group(1)}" if name else where


def words(text: str) -> set[str]:
    """The words of `text` (see the module docstring)."""
    runs = {w.strip(".") for w in WORD.findall(text)} - {""}
    parts = set()
    for run in runs:
        parts |= set(run.split("x")) if SHAPE.fullmatch(run) else set(DIGITS.findall(run))
    return runs | parts


def tokens(text: str) -> set[str]:
    """The words and the names (`%x`, `^bb0`, `@f`) of `text`."""
    return words(text) | set(NAME.findall(text))


def edit_tokens(fixes: list[tuple[str, str]]) -> set[str]:
    """The tokens the fix lines add, or, where they add none, the tokens they remove."""
    added = set().union(*(tokens(new) - tokens(old) for old, new in fixes))
    if added:
        return added
    return set().union(*(tokens(old) - tokens(new) for old, new in fixes))


def copy_opt_options(path: Path, text: str) -> tuple[str, ...]:
    """The copy-opt options of the file's first `copy-opt %s` RUN line, `--split-input-file`
    and `--verify-diagnostics` included."""
    for match in RUN_LINE.finditer(text):
        argv = shlex.split(match.group(1))
        if "copy-opt" not in argv or "%s" not in argv:
            continue
        options: list[str] = []
        for arg in argv[argv.index("copy-opt") + 1 :]:
            if arg == "|" or arg.startswith(("2>", ">")):
                break
            if arg != "%s":
                options.append(arg)
        return tuple(options)
    raise AssertionError(f"{path}: no `copy-opt %s` RUN line")


def parse_fix_lines(chunk: NegativeChunk) -> None:
    for match in FIX_LINE.finditer(chunk.text):
        body = match.group(1).strip()
        reason = NONE_REASON.match(body)
        if reason:
            if chunk.none_reason is not None:
                chunk.problems.append("two `fix: none` lines")
            chunk.none_reason = reason.group(1)
            continue
        parts = body.split("|")
        if len(parts) != 4 or parts[0] != "s" or parts[3] != "" or not parts[1]:
            chunk.problems.append(
                f"malformed fix line {match.group(0).strip()!r}: expected `// fix: s|OLD|NEW|` "
                "(OLD non-empty, no `|` inside) or `// fix: none -- <why>`"
            )
            continue
        chunk.fixes.append((parts[1], parts[2]))
    if chunk.none_reason is not None and chunk.fixes:
        chunk.problems.append("both `fix: none` and `fix: s|...|...|` lines")


def negative_lit_files() -> list[Path]:
    return sorted(
        path
        for path in LIT.rglob("*.mlir")
        if DRIVER_TESTS not in path.parents and EXPECTS_ERROR.search(path.read_text())
    )


def negative_chunks(path: Path) -> list[NegativeChunk]:
    text = path.read_text()
    options = copy_opt_options(path, text)
    source = SourceFile(str(path), text)
    split = "--split-input-file" in options
    options = tuple(o for o in options if o not in IGNORED_OPTIONS)
    chunks = []
    for part in split_chunks(source, split):
        if not EXPECTS_ERROR.search(part.text):
            continue
        chunk = NegativeChunk(path, part.first_line, part.text, options)
        parse_fix_lines(chunk)
        chunks.append(chunk)
    return chunks


ALL_CHUNKS = [chunk for path in negative_lit_files() for chunk in negative_chunks(path)]


@cache
def driver(options: tuple[str, ...]) -> CopyOptMain:
    return CopyOptMain(["-", *options])


def run_copy_opt(text: str, options: tuple[str, ...], name: str):
    """copy-opt's diagnostics for `text` as one chunk."""
    source = SourceFile(name, text)
    return driver(options).process_chunk(source, Chunk(text, 0, 1, source.line_count)).diagnostics


def chunk_rules(text: str) -> set[str]:
    """The rule ids of a chunk's `// rule:` lines."""
    return {
        rid for line in text.splitlines() if line.lstrip().startswith("//") for rid in tag_ids(line)
    }


def apply_fixes(chunk: NegativeChunk) -> tuple[str, list[str]]:
    """The chunk's IR with its fixes applied, and the problems found applying them."""
    ir = COMMENT_LINE.sub("", chunk.text)
    problems = []
    for old, new in chunk.fixes:
        if old not in ir:
            problems.append(f"fix s|{old}|{new}|: OLD does not occur in the chunk's IR")
            continue
        ir = ir.replace(old, new, 1)
    return ir, problems


def fixed_ir(text: str) -> str:
    """A negative chunk's IR with its fix lines applied (`apply_fixes`), for the tests that
    run the fixed kernel (the interpreter's)."""
    chunk = NegativeChunk(LIT, 0, text, ())
    parse_fix_lines(chunk)
    ir, problems = apply_fixes(chunk)
    assert chunk.problems == []
    assert problems == []
    return ir


def fix_note_problems(chunk: NegativeChunk) -> list[str]:
    """Everything wrong with the chunk's fix lines and its note; empty when all is well."""
    if chunk.problems:
        return chunk.problems
    if chunk.none_reason is not None:
        return []
    if not chunk.fixes:
        return ["no `// fix: s|OLD|NEW|` line and no `// fix: none -- <why>` line"]
    name = f"{chunk.path.name}:{chunk.first_line}"
    before = run_copy_opt(COMMENT_LINE.sub("", chunk.text), chunk.options, name)
    if not any(d.severity == "error" for d in before):
        return ["the original chunk gives no error"]
    # A pass failure may carry its fix in the message, without a note.
    notes = [d.message for d in before if d.severity == "note"]
    advice = " ".join(notes or [d.message for d in before])
    problems = []
    wanted = edit_tokens(chunk.fixes)
    if wanted and not wanted & tokens(advice):
        problems.append(
            f"the note does not mention the fix: none of {sorted(wanted)} is a token of "
            f"{advice!r}"
        )
    fixed, apply_problems = apply_fixes(chunk)
    problems += apply_problems
    # A chunk of an op's rule is an op fragment, not a whole kernel: its fix must satisfy
    # the op verifiers; a chunk of a protocol rule (P..) is a kernel: its fix must verify
    # as a whole, protocol included.
    protocol = any(
        rule.startswith("P") or rule in PROTOCOL_RULES for rule in chunk_rules(chunk.text)
    )
    options = chunk.options if protocol else (*chunk.options, "--no-verify-protocol")
    after = run_copy_opt(fixed, options, name + " (fixed)")
    if after:
        problems.append(
            "the fixed chunk still fails:\n  "
            + "\n  ".join(f"{d.location}: {d.severity}: {d.message}" for d in after)
            + "\n"
            + fixed
        )
    return problems


@pytest.mark.parametrize("chunk", ALL_CHUNKS, ids=lambda c: c.id)
def test_fix_note_leads_to_valid_ir(chunk: NegativeChunk):
    problems = fix_note_problems(chunk)
    assert not problems, f"{chunk.id}:\n" + "\n".join(problems)


def test_every_negative_file_is_checked():
    names = {chunk.path.relative_to(LIT).as_posix() for chunk in ALL_CHUNKS}
    assert {
        "dialects/copy/invalid-attributes.mlir",
        "dialects/copy/invalid-copies.mlir",
        "dialects/copy/invalid-prefetch.mlir",
        "dialects/copy/invalid-groups.mlir",
        "dialects/copy/invalid-barriers.mlir",
        "dialects/copy/invalid-smem.mlir",
        "dialects/copy/invalid-tmem.mlir",
        "dialects/copy/seed-diagnostics.mlir",
        "passes/convert-copy-to-nvvm-errors.mlir",
        "passes/backend-errors.mlir",
    } <= names


def test_run_line_options():
    text = "// RUN: not copy-opt %s -p a,b -t ptx --target sm_80 --split-input-file 2>&1 | x\n"
    options = ("-p", "a,b", "-t", "ptx", "--target", "sm_80", "--split-input-file")
    assert copy_opt_options(Path("f.mlir"), text) == options


def test_tokens():
    assert words("memref<64x8xf32, #copy.smem>") == {
        "memref", "64x8xf32", "64", "8", "f32", "copy.smem"
    }
    assert tokens("sm_90a, %bar[%c0] @f ^bb0 end.") == {
        "sm_90a", "90", "end", "%bar", "%c0", "@f", "^bb0"
    }
    assert edit_tokens([("impl cp_async", "impl tma")]) == {"tma"}
    assert edit_tokens([(" barrier %bar[%c0]", "")]) == {"barrier", "%bar", "%c0"}
    assert edit_tokens([("%x[%c0]", "%x[%c0, %c0]")]) == set()


# The checker itself must be able to fail: each of these chunks is wrong in one way.

TMA_STORE_ON_SM80 = """
func.func @k(%x: memref<256x256xf32>) attributes {copy.target = #copy.target<"sm_80">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
  copy.async_copy %buf to %x[%c0, %c0] impl tma
      : memref<64x64xf32, #copy.smem> to memref<256x256xf32>
  func.return
}
"""


def synthetic(fix_lines: str, body: str = TMA_STORE_ON_SM80) -> NegativeChunk:
    chunk = NegativeChunk(Path(LIT / "synthetic.mlir"), 1, fix_lines + body, ())
    parse_fix_lines(chunk)
    return chunk


@pytest.mark.parametrize(
    ("fix_lines", "problem"),
    [
        # cp.async cannot store (rule B5): following that advice gives another error.
        ("// fix: s|impl tma|impl cp_async|\n", "the fixed chunk still fails"),
        ("// fix: s|sm_80|sm_90|\n// fix: s|no such text|x|\n", "OLD does not occur"),
        # It verifies, but no token of the edit (sm_100a, 100) is in the note.
        ("// fix: s|sm_80|sm_100a|\n", "the note does not mention the fix"),
        ("", "no `// fix: s|OLD|NEW|` line"),
        ("// fix: s/sm_80/sm_90a/\n", "malformed fix line"),
        ("// fix: none\n", "malformed fix line"),
        ("// fix: none -- why\n// fix: s|sm_80|sm_90|\n", "both `fix: none`"),
    ],
)
def test_checker_catches(fix_lines: str, problem: str):
    assert any(problem in p for p in fix_note_problems(synthetic(fix_lines)))


def test_checker_accepts_a_good_fix():
    assert fix_note_problems(synthetic("// fix: s|sm_80|sm_90|\n")) == []


# A note that offers several ways out must be right about each of them; the `// fix:` lines
# of a chunk follow one. These are the others, for the notes that offered a way that does
# not verify (cp.async for a store or for a load that keeps its barrier, a wider swizzle
# where none fits).
ALTERNATIVES = {
    "a1_tma_before_sm90": ["s| impl tma||"],
    "c1_contiguous_rows_not_16_bytes": [
        "s| barrier %bar[%c0]||",
        "s|, !copy.barrier<1>||",
        "s|to %buf |to %buf impl cp_async |",
    ],
    "c5_minor_box_wider_than_swizzle": ["s|, #copy.smem<swizzle = 64>>|, #copy.smem>|"] * 2,
    "c5_row_of_256_bytes_under_swizzle_128": ["s|, #copy.smem<swizzle = 128>>|, #copy.smem>|"] * 2,
}


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_other_ways_out_of_a_note(name: str):
    [chunk] = [c for c in ALL_CHUNKS if c.id.endswith(f":{name}")]
    lines = "".join(f"// fix: {fix}\n" for fix in ALTERNATIVES[name])
    other = synthetic(lines, COMMENT_LINE.sub("", chunk.text))
    other.options = chunk.options
    assert fix_note_problems(other) == []


RANK_6_STORE = """
func.func @k(%x: memref<2x2x2x2x2x300xf16>) attributes {copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %buf = copy.alloc_smem : memref<2x64xf16, #copy.smem>
  copy.async_copy %buf to %x[%c0, %c0, %c0, %c0, %c0, %c0]
      : memref<2x64xf16, #copy.smem> to memref<2x2x2x2x2x300xf16>
  func.return
}
"""


@pytest.mark.parametrize("body", [RANK_6_STORE, TMA_STORE_ON_SM80])
def test_store_notes_do_not_offer_cp_async(body: str):
    """cp.async cannot store (rule B5): no note of a store may send the user there."""
    notes = [d.message for d in run_copy_opt(body, (), "store.mlir") if d.severity == "note"]
    assert notes
    assert not any("cp_async" in note for note in notes), notes
