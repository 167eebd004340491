"""The general form of a long constant loop against the walk as written, on one-op mutants of
the corpus kernels with their constant `%k_tiles` at K k-blocks (analysis/protocol/general.py).

    python scripts/general_agreement.py K KERNEL ... [--jobs N]

For each mutant (tests/analysis/corpus_mutations.py's operators) the driver's verdict
(`check_kernel`: the general kernel first, the kernel as written where the general kernel
has any finding) and, where the general kernel proved it, the walk of the kernel as written
(`check_as_written`): a finding there is a mutant the general form proved that the walk as
written does not (unsound), printed. The kernels with a K loop inside a persistent tile
loop exercise the cuts of `cuts.cut`; a K of every residue modulo the ring's
lap (100, 256, 257) the facts the general kernel states (`general.tile_facts`).

Prints the conditions, then each unsound mutant, then the tally (general kernel with
findings, general kernel proved) and the time taken.
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import time
import warnings
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402
from xdsl.parser import Parser  # noqa: E402

from analysis.protocol import analysis as driver  # noqa: E402
from copy_tools.universe import make_context  # noqa: E402
from tests.analysis import corpus_mutations as cm  # noqa: E402

K_TILES = re.compile(r"%k_tiles = arith.constant \d+ : index")

Case = tuple[str, str, int, int]
"""(kernel, mutation, index of its target, K)."""


def module(name: str, k: int) -> ModuleOp:
    text, found = K_TILES.subn(
        f"%k_tiles = arith.constant {k} : index", cm.kernel_named(name).text()
    )
    if found != 1:
        raise SystemExit(f"{name}: no constant %k_tiles to set")
    return Parser(make_context(), text).parse_module()


def kernel_of(m: ModuleOp) -> func.FuncOp:
    return next(op for op in m.walk() if isinstance(op, func.FuncOp))


def judge(case: Case) -> tuple[Case, str, list[str]]:
    """The mutant's verdict: "invalid" (the op verifiers reject it), "findings" (the general
    kernel had some: the driver walked it as written), "proved" (by the general kernel),
    with the findings of the walk as written where proved."""
    name, mutation, index, k = case
    m = module(name, k)
    op = cm.mutation_named(mutation)
    op.apply(op.targets(m)[index])
    try:
        m.verify()
    except Exception:
        return case, "invalid", []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if driver.check_kernel(kernel_of(m)):
            return case, "findings", []
        fn = kernel_of(m)
        written = driver.check_as_written(fn, driver.protocol_ops(fn))
    return case, "proved", [str(f)[:160] for f in written]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("k", type=int, help="the k-blocks of %%k_tiles")
    parser.add_argument("kernels", nargs="+")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    cases: list[Case] = []
    for name in args.kernels:
        m = module(name, args.k)
        for op in cm.MUTATIONS:
            cases += [(name, op.name, i, args.k) for i in range(len(op.targets(m)))]
    print(
        f"commit {commit}; Python {platform.python_version()}; K = {args.k} k-blocks; "
        f"{len(cases)} mutants of {', '.join(args.kernels)}; {args.jobs} jobs\n"
    )
    start = time.perf_counter()
    tally: Counter[str] = Counter()
    unsound = 0
    with Pool(args.jobs) as pool:
        for case, verdict, written in pool.imap_unordered(judge, cases):
            tally[verdict] += 1
            if written:
                unsound += 1
                print(f"- unsound: {case[0]} {case[1]} #{case[2]}: {written[0]}")
    print(
        "\n| general kernel | mutants |\n|---|---|\n"
        + "".join(f"| {v} | {n} |\n" for v, n in sorted(tally.items()))
        + f"\nproved by the general kernel, with a finding as written: {unsound}; "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
