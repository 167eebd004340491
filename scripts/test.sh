#!/usr/bin/env bash
# The whole test suite: lint, rule coverage, lit (dialect and passes), pytest.
# Run from the project root with the project's environment on PATH (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== ruff"
ruff check .
echo "== rule coverage"
copy-rules --missing
echo "== lit"
lit -sv lit_tests
echo "== pytest"
# One worker per core (pytest-xdist): the CPU suite, the GPU tests interpreted among it, takes
# about twice as long in one process. Work stealing: a worker that runs out of tests takes
# some of the other's (the tests take from a millisecond to half a minute).
python -m pytest -q -ra -n auto --dist worksteal tests
