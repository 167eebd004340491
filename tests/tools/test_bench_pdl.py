"""benchmarks/bench_pdl.py without a GPU: its arguments, every size of its table a chain
`kernels.pdl_chain` builds and compiles, and a run that says there is no GPU and exits 0
with nothing measured."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from copy_tools import runtime
from frontends import kernels

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_pdl.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_pdl", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(BENCH.parent))  # it imports bench_common, as the script does
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH.parent))
        del sys.modules[spec.name]


def test_arguments(bench):
    assert bench.parse_ints("128,4096", "sizes") == [128, 4096]
    with pytest.raises(SystemExit, match="expected sizes"):
        bench.parse_ints("128,x", "sizes")
    with pytest.raises(SystemExit, match="expected triggers"):
        bench.main(["--triggers", "middle"])
    with pytest.raises(SystemExit, match="at least 1"):
        bench.main(["--chains", "0"])


@pytest.mark.parametrize("trigger", kernels.PDL_TRIGGERS)
def test_every_row_compiles(bench, trigger):
    for n in bench.SIZES:
        program = runtime.compile(kernels.pdl_chain(n, trigger=trigger))
        assert program.kernel("consume").abi.grid_dependent


@pytest.mark.skipif(runtime.gpu_available(), reason="a GPU is here: the script would run")
def test_no_gpu(bench, capsys):
    assert bench.main(["--sizes", "128"]) == 0
    assert "no CUDA driver or GPU here; nothing measured" in capsys.readouterr().out
