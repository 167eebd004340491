"""A fuzz over programmatic dependent launch: random dependent kernels (waits, reads and
writes of three arguments, `scf.if` on the thread index, `scf.for`, marks on the arguments)
after a fixed predecessor that writes argument 0, reads argument 1 and leaves argument 2
alone. For each:

- the proof's verdict: accepted, or rejected with its rule id (GD2, GD3), counted;
- every accepted kernel compiles for sm_90a (LLVM 22, nvJitLink), with a
  `griddepcontrol.wait;` where it waits at the kernel's level, and assembles with `ptxas`
  where it is on PATH;
- the interpreter's chain run (`run_chain`) of the same kernel after the predecessor: an
  accepted kernel whose marks are true (the predecessor writes no marked argument, and
  touches none marked "none" that the kernel writes) has no race: the proof is sound against
  the interpreter's model of the overlap; an accepted kernel that races has a false mark;
  a rejected kernel that races is counted (the early access the rule names, executed), and
  one that does not too (its early access on a path the run does not take, a branch no
  thread takes or a loop of zero trips, or of an argument this predecessor does not write:
  the rule asks for a mark there).

Seed 33, 120 kernels (this machine, the commit that added it): the proof accepts 63 and
rejects 23 with GD2 and 34 with GD3; 11 of the GD2 and 27 of the GD3 kernels race in the
chain; of the accepted, 5 race, each with a false mark, and 58 do not.

The counts are printed in the terminal summary."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
from xdsl.parser import Parser

from analysis.verify import verify_module
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from interpreter.grid_dependency import Launch, run_chain
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

KERNELS = 120
PREDECESSOR = {0: "write", 1: "read", 2: "none"}
"""What the predecessor does with each argument."""

PRODUCE = """  func.func @produce(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %t = gpu.thread_id x
    %v = memref.load %b[%t] : memref<64xf32>
    memref.store %v, %a[%t] : memref<64xf32>
    copy.launch_dependents
    func.return
  }
"""


class Generator:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.n = 0
        self.waits = 0

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def statements(self, depth: int, indent: str) -> list[str]:
        lines: list[str] = []
        for _ in range(self.rng.randint(1, 3)):
            kind = self.rng.choice(
                ["wait", "read", "write", "read", "write"] + (["if", "for"] if depth < 2 else [])
            )
            arg = "%" + "abc"[self.rng.randrange(3)]
            if kind == "wait":
                self.waits += 1
                lines.append(f"{indent}copy.grid_dependency_wait")
            elif kind == "read":
                lines.append(f"{indent}{self.fresh()} = memref.load {arg}[%t] : memref<64xf32>")
            elif kind == "write":
                lines.append(f"{indent}memref.store %one, {arg}[%t] : memref<64xf32>")
            elif kind == "if":
                cond = self.rng.choice(["%low", "%none", "%all"])
                lines.append(f"{indent}scf.if {cond} {{")
                lines += self.statements(depth + 1, indent + "  ")
                lines.append(f"{indent}}}")
            else:
                trips = self.rng.choice(["%c0", "%c2"])
                lines.append(f"{indent}scf.for %k{self.n} = %c0 to {trips} step %c1 {{")
                self.n += 1
                lines += self.statements(depth + 1, indent + "  ")
                lines.append(f"{indent}}}")
        return lines

    def kernel(self) -> tuple[str, dict[int, str]]:
        marks = {i: m for i in range(3) if (m := self.rng.choice([None, None, "read", "none"]))}
        self.waits = 0
        body = self.statements(0, "    ")
        if not self.waits:  # a dependent kernel: it waits somewhere
            body.insert(self.rng.choice([0, len(body)]), "    copy.grid_dependency_wait")
            self.waits = 1
        params = ", ".join(
            f"%{name}: memref<64xf32>"
            + (f' {{copy.predecessor_access = "{marks[i]}"}}' if i in marks else "")
            for i, name in enumerate("abc")
        )
        text = (
            'builtin.module attributes {copy.target = #copy.target<"sm_90a">} {\n'
            + PRODUCE
            + f"  func.func @consume({params})\n"
            "      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {\n"
            "    %t = gpu.thread_id x\n"
            "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
            "    %c2 = arith.constant 2 : index\n    %c32 = arith.constant 32 : index\n"
            "    %c64 = arith.constant 64 : index\n"
            "    %low = arith.cmpi ult, %t, %c32 : index\n"
            "    %none = arith.cmpi uge, %t, %c64 : index\n"
            "    %all = arith.cmpi ult, %t, %c64 : index\n"
            "    %one = arith.constant 1.0 : f32\n" + "\n".join(body) + "\n"
            "    func.return\n  }\n}\n"
        )
        return text, marks


def true_marks(marks: dict[int, str], writes: set[int]) -> bool:
    """Whether the predecessor honours the marks (for the arguments the kernel writes, a
    "none" mark must also keep the predecessor's reads away)."""
    for i, mark in marks.items():
        if PREDECESSOR[i] == "write":
            return False
        if mark == "none" and i in writes and PREDECESSOR[i] != "none":
            return False
    return True


def cases() -> list[tuple[str, dict[int, str]]]:
    gen = Generator(random.Random(33))
    return [gen.kernel() for _ in range(KERNELS)]


def written(text: str) -> set[int]:
    return {i for i, name in enumerate("abc") if f", %{name}[%t]" in text.split("@consume")[1]}


def test_fuzz(report, tmp_path: Path):
    verdicts: Counter[str] = Counter()
    races: Counter[str] = Counter()
    ctx = make_context()
    arrays = [np.arange(64, dtype=np.float32) + 100 * i for i in range(3)]
    for text, marks in cases():
        module = Parser(ctx, text).parse_module()
        try:
            verify_module(module, protocol=False)
            verdict = "accepted"
        except CopyVerifyException as exc:
            (verdict,) = exc.rules
        verdicts[verdict] += 1
        _, violations = run_chain(
            module, [Launch("produce", arrays, (1, 1, 1)), Launch("consume", arrays, (1, 1, 1))]
        )
        raced = {v.rule for v in violations}
        assert raced <= {"GD2", "GD3"}, (text, violations)
        if verdict == "accepted":
            if true_marks(marks, written(text)):
                assert not raced, f"an accepted kernel with true marks races:\n{text}"
            races["accepted, false marks, race" if raced else "accepted, no race"] += 1
            compiled = compile_module(module, ctx, "sm_90a")
            # A wait at the kernel's level stays (those under a branch no thread takes, or
            # in a loop of no trip, LLVM may remove with their branch).
            top = text.split("@consume")[1].count("\n    copy.grid_dependency_wait")
            assert compiled.ptx.count("griddepcontrol.wait;") >= min(1, top)
            check_ptxas(compiled.ptx, "sm_90a", tmp_path, context=text)
        else:
            races[f"{verdict}, {'race' if raced else 'no race in this chain'}"] += 1
    report(
        f"PDL fuzz ({KERNELS} dependent kernels)",
        [
            f"the proof: {dict(sorted(verdicts.items()))}",
            f"the interpreter's chain runs: {dict(sorted(races.items()))}",
        ],
    )
    assert verdicts["accepted"]
    assert verdicts["GD2"]
    assert verdicts["GD3"]
