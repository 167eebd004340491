"""benchmarks/bench_pdl.py without a GPU: its arguments, every size of its table a chain
`kernels.pdl_chain` builds and compiles, and a run that says there is no GPU and exits 0
with nothing measured."""

from __future__ import annotations

import pytest

from copy_tools import runtime
from frontends import kernels
from tests.tools.bench_scripts import bench_script


@pytest.fixture(scope="module")
def bench():
    with bench_script("bench_pdl") as module:
        yield module


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
