"""Every command in the README runs as written, and prints what the README shows.

The README's fenced blocks are read in order:

* a block of `$ command` lines is a terminal session: each command runs in bash, in one
  scratch folder (for the whole README, in its order) that holds the project's
  `examples/`, and the lines after it are its output, compared line by line (`...` stands
  for any number of lines; a command shown without output must exit with status 0).
  `$ cat FILE` followed by the file's text makes FILE, for the commands after it;
* a block whose every line starts with one of the project's tools (`copy-opt`,
  `copy-layout`, `python3 ...`) is a list of commands: each must exit with status 0;
* a `python` block runs as a script (with the python blocks before it in its section, whose
  names it uses); one that launches a kernel skips where there is no GPU, which it shows by
  raising `runtime.NoDriverError`;
* the `mlir` block is a lit test: its RUN line runs on it.

The counts the README states are checked against what the tools print (the catalogue's size
and scopes against `copy-rules`, rule ranges such as `LG1`-`LG7` against its ids, the targets
against `copy-opt`), its bandwidth ratios against the RESULTS.md runs it cites, and it quotes
no timings (they live in benchmarks/RESULTS.md, with their sitting).

Text blocks (diagnostics as printed, the folder map) are neither. The quick start's two
commands make a virtual environment: `.ci/run` runs the second from a clean clone, and
tests/test_install.py installs the project into a fresh venv and runs `copy-demo` (what the
first does); they are not run again here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TOOLS = ("copy-opt", "copy-rules", "copy-demo", "copy-layout", "copy-docs", "xdsl-opt")
QUICK_START = "python3 -m venv .venv"


@dataclass
class Block:
    line: int
    """The README line of the opening fence."""
    language: str
    text: str
    section: str

    @property
    def id(self) -> str:
        return f"README.md:{self.line}"


def blocks() -> list[Block]:
    found, section, current = [], "", None
    lines = README.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if current is None:
            if line.startswith("## "):
                section = line[3:]
            elif line.startswith("```"):
                current = (number, line[3:].strip(), [])
        elif line.startswith("```"):
            found.append(Block(current[0], current[1], "\n".join(current[2]), section))
            current = None
        else:
            current[2].append(line)
    return found


def is_session(b: Block) -> bool:
    return not b.language and any(line.startswith("$ ") for line in b.text.splitlines())


def is_command_list(b: Block) -> bool:
    lines = [line for line in b.text.splitlines() if line.strip()]
    starts = (*TOOLS, "python3 ", "python ")
    return not b.language and bool(lines) and all(line.startswith(starts) for line in lines)


BLOCKS = blocks()
SESSIONS = [b for b in BLOCKS if is_session(b)]
COMMANDS = [
    (b, c)
    for b in BLOCKS
    if is_command_list(b)
    for c in b.text.splitlines()
    if c.strip() and not c.startswith(QUICK_START)
]
PYTHON = [b for b in BLOCKS if b.language == "python"]
MLIR = [b for b in BLOCKS if b.language == "mlir"]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the README's commands, in order: a file one makes, later ones read."""
    if shutil.which("copy-opt") is None:
        pytest.skip("copy-opt is not on PATH (run with the project's venv on PATH)")
    folder = tmp_path_factory.mktemp("readme")
    (folder / "examples").symlink_to(ROOT / "examples")
    return folder


def bash(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, env=env, timeout=300
    )


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether `printed` is `shown`, where a `...` line stands for any number of lines."""
    pattern = "\n".join(
        ".*?" if line.strip() == "..." else re.escape(line.rstrip()) for line in shown
    )
    text = "\n".join(line.rstrip() for line in printed)
    return re.fullmatch(pattern.replace("\n.*?\n", "(\n.*?)?\n"), text, re.S) is not None


def test_the_readme_has_what_this_test_reads():
    assert SESSIONS
    assert COMMANDS
    assert PYTHON
    assert MLIR
    quick = [b for b in BLOCKS if b.text.startswith(QUICK_START)]
    assert len(quick) == 2  # the quick start: exactly two commands


def steps(block: Block) -> list[tuple[str, list[str]]]:
    """A session's commands, each with the lines shown after it."""
    found: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        else:
            found[-1][1].append(line)
    return found


def made_file(command: str) -> str | None:
    """FILE of `cat FILE`: the README shows the file it makes."""
    made = re.fullmatch(r"cat (\S+)", command)
    return None if made is None else made.group(1)


@pytest.mark.parametrize("block", SESSIONS, ids=lambda b: b.id)
def test_session(block: Block, scratch: Path):
    # The files the sessions before this one showed (`cat FILE`) exist, run in any order.
    for earlier in SESSIONS[: SESSIONS.index(block)]:
        for command, shown in steps(earlier):
            if (name := made_file(command)) is not None:
                (scratch / name).write_text("\n".join(shown) + "\n")
    for command, shown in steps(block):
        if (name := made_file(command)) is not None:
            (scratch / name).write_text("\n".join(shown) + "\n")
            continue
        result = bash(command, scratch)
        if not shown:
            assert result.returncode == 0, f"{block.id}: `{command}`:\n{result.stderr}"
            continue
        printed = (result.stdout + result.stderr).splitlines()
        assert matches(shown, printed), (
            f"{block.id}: `{command}` printed\n" + "\n".join(printed) + "\nnot\n" + "\n".join(shown)
        )


@pytest.mark.parametrize(("block", "command"), COMMANDS, ids=[f"{b.id}:{c}" for b, c in COMMANDS])
def test_command(block: Block, command: str, scratch: Path):
    result = bash(command, scratch)
    assert result.returncode == 0, f"{block.id}: `{command}`:\n{result.stdout}\n{result.stderr}"


def run_python(script: str, scratch: Path) -> subprocess.CompletedProcess:
    (scratch / "block.py").write_text(script + "\n")
    return subprocess.run(
        [sys.executable, "block.py"], cwd=scratch, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.id)
def test_python(block: Block, scratch: Path):
    if "runtime.load(" in block.text:
        # The cubin the text before the block says `copy-opt -t cubin -o K.cubin` wrote.
        made = bash("copy-opt examples/tma_tile_copy.mlir -t cubin -o K.cubin", scratch)
        assert made.returncode == 0, made.stderr
    result = run_python(block.text, scratch)
    if result.returncode and "NameError" in result.stderr:
        # A block that goes on from the blocks before it in its section, with their names.
        before = [b.text for b in PYTHON if b.section == block.section and b.line < block.line]
        result = run_python("\n".join([*before, block.text]), scratch)
    if result.returncode and "NoDriverError" in result.stderr:
        pytest.skip("launches a kernel: no CUDA driver or GPU here")
    assert result.returncode == 0, f"{block.id}:\n{result.stdout}\n{result.stderr}"
    for expression, shown in re.findall(r"print\((.+?)\)\s+# (.+)", block.text):
        # The shown repr, up to its first number that depends on the build (sizes).
        prefix = re.split(r"\d{3,}", shown)[0].split("...")[0]
        assert prefix in result.stdout, f"{block.id}: print({expression}) is not `{shown}`"


@pytest.mark.parametrize("block", MLIR, ids=lambda b: b.id)
def test_lit_example(block: Block, scratch: Path):
    run = re.search(r"// RUN: (.+)", block.text)
    assert run, f"{block.id}: a lit test has a RUN line"
    (scratch / "example.mlir").write_text(block.text + "\n")
    result = bash(run.group(1).replace("%s", "example.mlir"), scratch)
    assert result.returncode == 0, f"{block.id}:\n{result.stdout}\n{result.stderr}"


# The README's counts and measurements. A count the README states is checked against what the
# tools print; a bandwidth ratio against the RESULTS.md runs the README cites for it; timings
# (compile latency) are not stated at all: they move with the machine's speed from sitting to
# sitting, and live in benchmarks/RESULTS.md and docs/design.md with their date and commit.

RESULTS = ROOT / "benchmarks" / "RESULTS.md"
MODULES = {"copy-rules": "copy_tools.rule_coverage", "copy-opt": "copy_tools.copy_opt"}


def tool(name: str, *args: str, stdin: str = "") -> str:
    """What a project tool prints (stdout, then stderr): its console script where one is on
    PATH, else its module from this checkout."""
    script = shutil.which(name)
    argv = [script] if script else [sys.executable, "-m", MODULES[name]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [*argv, *args], cwd=ROOT, input=stdin, capture_output=True, text=True, env=env, timeout=300
    )
    return result.stdout + result.stderr


def prose() -> str:
    """The README without its fenced blocks (the shown sessions and examples)."""
    return re.sub(r"^```.*?^```", "", README.read_text(), flags=re.M | re.S)


def section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


@pytest.fixture(scope="module")
def catalogue() -> dict[str, str]:
    """Each rule id `copy-rules` prints, with its scope (`in` or `out`)."""
    printed = tool("copy-rules")
    rules = dict(re.findall(r"^([A-Z]+\d+)\s+(in|out)\s", printed, re.M))
    assert rules, printed[-2000:]
    assert printed.rstrip().splitlines()[-1].startswith("covered "), printed[-2000:]
    return rules


def test_the_catalogue_counts_are_what_copy_rules_prints(catalogue: dict[str, str]):
    stated = re.search(
        r"catalogue of (\d+) \(`copy_dialect/rules\.toml`: (\d+) checked, (\d+) out of\s+scope",
        prose(),
    )
    assert stated, "the README states the catalogue's size, in-scope and out-of-scope counts"
    total, checked, out = map(int, stated.groups())
    scopes = list(catalogue.values())
    assert (total, checked, out) == (len(scopes), scopes.count("in"), scopes.count("out")), (
        f"README: {total} rules, {checked} checked, {out} out of scope; copy-rules prints "
        f"{len(scopes)}, {scopes.count('in')} in scope, {scopes.count('out')} out"
    )


RULE_RANGE = re.compile(r"`?\b([A-Z]{1,3})(\d+)`?\s*(?:-|\.\.)\s*`?\1?(\d+)\b`?")


def test_rule_ranges_name_rules_that_exist(catalogue: dict[str, str]):
    """`LG1`-`LG7`, `IC1..IC12`: every id of a range is in the catalogue, and a range from 1
    leaves out no in-scope rule of its family that the README does not name elsewhere (a new
    LG8 would make "rules LG1-LG7" stale)."""
    text = prose()
    ranges = sorted({(f, int(a), int(b)) for f, a, b in RULE_RANGE.findall(text)})
    assert ranges
    stale = []
    for family, first, last in ranges:
        name = f"{family}{first}-{family}{last}"
        ids = [f"{family}{n}" for n in range(first, last + 1)]
        stale += [f"{name}: no {i}" for i in ids if i not in catalogue]
        if first != 1:
            continue
        for rule, scope in catalogue.items():
            number = re.fullmatch(rf"{family}(\d+)", rule)
            later = number is not None and int(number.group(1)) > last
            if later and scope == "in" and not re.search(rf"\b{rule}\b", text):
                stale.append(f"{name} leaves out {rule}")
    assert not stale, stale


def test_the_targets_are_those_copy_opt_knows():
    stated = re.search(r"`copy\.target = #copy\.target<\"sm_90a\">` \(([^)]*)\)", prose())
    assert stated, "the README lists the targets after the copy.target attribute"
    printed = tool("copy-opt", "--target", "sm_0", "-", stdin="builtin.module {}\n")
    known = re.search(r"expected one of ([\w, ]+)", printed)
    assert known, printed
    assert re.split(r",\s*", stated.group(1)) == re.split(r",\s*", known.group(1).strip())


def results_runs() -> dict[int, str]:
    """benchmarks/RESULTS.md by run: the text under each `## Run N` heading."""
    runs: dict[int, str] = {}
    for part in re.split(r"^(?=## )", RESULTS.read_text(), flags=re.M):
        heading = re.match(r"## Run (\d+)\b", part)
        if heading:
            runs[int(heading.group(1))] = part
    return runs


def cited_runs(text: str) -> list[int]:
    """The RESULTS.md runs a text cites: `run 20`, `runs 37-40`, `runs 57-58`."""
    found = []
    for first, last in re.findall(r"\bruns? (\d+)(?:-(\d+))?\b", text):
        found += range(int(first), int(last or first) + 1)
    return found


def test_every_cited_run_is_in_results():
    runs = results_runs()
    missing = [n for n in cited_runs(prose()) if n not in runs]
    assert not missing, f"README cites runs RESULTS.md lacks: {missing}"


def test_the_performance_figures_are_those_of_the_cited_runs():
    """Each ratio (0.996, 1.02) and percentage (88.1%) of the Performance section is a number
    of the runs it cites, or that number rounded to the README's digits."""
    text = section("Performance")
    runs = results_runs()
    measured = " ".join(runs[n] for n in cited_runs(text) if n in runs)
    assert measured, "the Performance section cites its runs"
    values = {Decimal(v) for v in re.findall(r"(?<![\w.])\d+\.\d+(?!\w|\.\d)", measured)}
    shown = re.findall(r"(?<![\w.])(\d\.\d{2,3}|\d{2}\.\d(?=%))(?!\w|\.\d)", text)
    assert shown

    def recorded(figure: str) -> bool:
        step = Decimal(1).scaleb(Decimal(figure).as_tuple().exponent)  # type: ignore[arg-type]
        return any(v.quantize(step, rounding=ROUND_HALF_UP) == Decimal(figure) for v in values)

    assert not [f for f in shown if not recorded(f)], [f for f in shown if not recorded(f)]


def test_the_readme_quotes_no_timings():
    """Compile and verification times live in benchmarks/RESULTS.md (and docs/design.md), with
    the sitting's date and commit: a copy here would drift (it did: 30 ms here, 18.8 there)."""
    assert not re.findall(r"\b\d+(?:\.\d+)? ?(?:ms|us|µs)\b|\b\d+(?:\.\d+)? s\b", prose())
