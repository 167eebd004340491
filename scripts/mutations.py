"""One-op mutations of every corpus kernel, judged by the kernel rules, the protocol analysis
and the interpreter (tests/analysis/corpus_mutations.py says how each mutant is judged).

    python scripts/mutations.py [--jobs N] [--kernel NAME ...] [--slow-stride N] [--json FILE]

Prints the conditions, the table (analysis verdict x interpreter verdict) for the kernels the
analysis proves unmutated and for those it does not (there the interpreter alone judges a
mutant: the analysis already warns or rejects the kernel), then each mutant the analysis
proves that a run breaks (unsound), each it rejects that every run left clean and right,
where the first error of each rejected mutant lies, and the time taken.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import warnings
from collections import Counter
from dataclasses import asdict
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.protocol import check_protocol  # noqa: E402
from tests.analysis import corpus_mutations as cm  # noqa: E402
from tests.analysis.test_corpus_mutations import KNOWN_UNSOUND  # noqa: E402
from tests.corpus import KERNELS  # noqa: E402

FAST_SCHEDULES = cm.SCHEDULES
SLOW_SCHEDULES = (("adversarial", 0),)
"""The kernels marked slow in tests/corpus (a second or more a run) run under the
adversarial schedule only, as in tests/analysis/test_corpus.py."""


def schedules(kernel: str):
    return SLOW_SCHEDULES if cm.kernel_named(kernel).slow else FAST_SCHEDULES


def judge(case: tuple[str, str, int]) -> cm.Verdict:
    kernel, mutation, index = case
    return cm.judge(kernel, mutation, index, schedules(kernel))


def baseline() -> dict[str, str]:
    """Each kernel's unmutated verdict: proved, or the first finding's severity and rules."""
    found = {}
    for kernel in KERNELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            findings = check_protocol(cm.parse(kernel))
        errors = [f for f in findings if f.severity == "error"]
        first = (errors or findings or [None])[0]
        found[kernel.name] = (
            "proved" if first is None else f"{first.severity} {'/'.join(first.rules)}"
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--kernel", action="append", help="only these kernels")
    parser.add_argument(
        "--slow-stride", type=int, default=1,
        help="judge every N-th mutant of the slow kernels only (pingpong: 10-15 s each)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="write every verdict here")
    args = parser.parse_args()
    commit = (
        subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        or "(not a git checkout)"
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "analysis", "interpreter", "copy_dialect"],
        cwd=ROOT, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    cases = [c for c in cm.cases() if not args.kernel or c[0] in args.kernel]
    slow = [c for c in cases if cm.kernel_named(c[0]).slow]
    cases = [c for c in cases if not cm.kernel_named(c[0]).slow] + slow[:: args.slow_stride]
    print(
        f"commit {commit}{' + uncommitted changes to the analysis' if dirty else ''}; "
        f"Python {platform.python_version()}; {len(cases)} mutants of "
        f"{len({c[0] for c in cases})} corpus kernels; {len(cm.MUTATIONS)} operators"
        f"{f' (every {args.slow_stride}th of the slow kernels)' if args.slow_stride > 1 else ''}; "
        f"interpreter: the kernel's small arguments (tests/corpus), schedules "
        f"{', '.join(f'{s}/{n}' for s, n in FAST_SCHEDULES)} (the slow kernels: "
        f"{', '.join(f'{s}/{n}' for s, n in SLOW_SCHEDULES)}); {args.jobs} job(s)\n"
    )
    base = baseline()
    start = time.perf_counter()
    with Pool(args.jobs) as pool:
        verdicts = []
        for n, v in enumerate(pool.imap(judge, cases, chunksize=1), 1):
            verdicts.append(v)
            if n % 50 == 0:
                print(f"{n} mutants, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    elapsed = time.perf_counter() - start
    proven = [v for v in verdicts if base[v.kernel] == "proved"]
    other = [v for v in verdicts if base[v.kernel] != "proved"]
    print("## Kernels the analysis proves unmutated\n")
    print(", ".join(sorted({v.kernel for v in proven})) + "\n")
    print(cm.table(proven))
    print("\n## Kernels it does not prove unmutated (the interpreter alone judges)\n")
    print(", ".join(f"{k} ({base[k]})" for k in sorted({v.kernel for v in other})) + "\n")
    print(cm.table(other))
    print("\n## Proved, and a run breaks a rule (unsound)\n")
    for v in verdicts:
        if v.unsound:
            why = KNOWN_UNSOUND.get((v.kernel, v.mutation, v.index), "NOT LISTED in the test")
            print(f"- {v.name} (at {v.site}): {sorted(v.run_rules)}\n  {v.detail}\n  {why}")
    print("\n## Proved or warned, runs clean, output differs from the model\n")
    for v in verdicts:
        if v.analysis in ("proved", "warned") and v.run == "wrong":
            print(f"- {v.name} (at {v.site}) [{v.analysis}]: {v.detail}")
    print("\n## Rejected, and every run clean and right\n")
    for v in verdicts:
        if v.analysis in ("rejected", "rules") and v.run == "clean":
            print(
                f"- {v.name} (at {v.site}) [{v.analysis} {'/'.join(v.analysis_rules)}]: {v.finding}"
            )
    print("\n## Where the first error of a rejected mutant lies\n")
    places = Counter((v.mutation, v.placed) for v in verdicts if v.analysis == "rejected")
    for mutation in dict.fromkeys(m.name for m in cm.MUTATIONS):
        row = {p: places[(mutation, p)] for p in ("at", "note", "elsewhere", "deleted")}
        if any(row.values()):
            print(f"- {mutation}: " + ", ".join(f"{p} {n}" for p, n in row.items() if n))
    print("\n## Rule ids\n")
    rules = Counter(
        r for v in verdicts if v.analysis in ("rejected", "rules") for r in v.analysis_rules
    )
    print("analysis: " + ", ".join(f"{r} {n}" for r, n in sorted(rules.items())))
    rules = Counter(r for v in verdicts for r in v.run_rules)
    print("interpreter: " + ", ".join(f"{r} {n}" for r, n in sorted(rules.items())))
    errors = [v for v in verdicts if v.run == "error"]
    for v in errors:
        print(f"- interpreter error: {v.name}: {v.detail}")
    total = {k: sum(v.seconds.get(k, 0) for v in verdicts) for k in ("analysis", "interpreter")}
    print(
        f"\n{len(verdicts)} mutants in {elapsed:.0f} s ({args.jobs} job(s)); CPU in the "
        f"rules and the analysis {total['analysis']:.0f} s, in the interpreter "
        f"{total['interpreter']:.0f} s"
    )
    if args.json:
        args.json.write_text(json.dumps([asdict(v) for v in verdicts], indent=1))


if __name__ == "__main__":
    main()
