"""The oracle's table over the whole corpus: the protocol analysis and the interpreter on
every kernel of the lit tests' protocol files, the examples, builder kernels and the compile
fuzz's kernels (tests/interpreter/oracle.py says how each is judged).

    python scripts/oracle.py [--fuzz N] [--seed S]

Prints the conditions, the table (analysis verdict x interpreter verdict), and each kernel
the analysis proves that a run breaks (with the rules and the first reports), each it
rejects that every schedule ran clean, and what the interpreter could not run, by reason.
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.interpreter import oracle  # noqa: E402
from tests.interpreter.test_oracle import KNOWN_UNSOUND  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=1200, help="fuzz kernels to generate")
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(
        f"commit {commit}; Python {platform.python_version()}; schedules per kernel: "
        f"{', '.join(f'{s}/{seed}' for s, seed in oracle.SCHEDULES)}; fuzz: {args.fuzz} "
        f"kernels of seed {args.seed} (those the op and kernel rules accept are judged)\n"
    )
    start = time.perf_counter()
    verdicts = []
    for gen in (
        oracle.lit_cases(),
        oracle.example_cases(),
        oracle.builder_cases(),
        oracle.fuzz_cases(args.fuzz, args.seed),
    ):
        verdicts += [v for v in map(oracle.judge, gen) if v is not None]
    print(oracle.table(verdicts))
    print(f"\n{len(verdicts)} kernels in {time.perf_counter() - start:.0f} s\n")
    print("## Proved, but a run breaks a rule\n")
    for v in verdicts:
        if v.cell == ("proved", "violation"):
            why = KNOWN_UNSOUND.get(v.case.name, "not yet explained")
            print(f"- {v.case.name} {sorted(v.run_rules)}: {why}\n  {v.detail[:300]}")
    print("\n## Rejected, and every schedule ran clean\n")
    for v in verdicts:
        if v.cell == ("rejected", "clean"):
            print(f"- {v.case.name} {sorted(v.analysis_rules)}")
    print("\n## What the interpreter could not run\n")
    reasons = Counter(
        re.sub(r"\d+", "N", v.detail.split(";")[0])[:110] for v in verdicts
        if v.run in ("unsupported", "error")
    )  # fmt: skip
    for reason, n in reasons.most_common():
        print(f"- {n}: {reason}")


if __name__ == "__main__":
    main()
