"""benchmarks/bench_gemm.py without a GPU: its shapes' and configurations' arguments, every
configuration of its table a kernel `kernels.gemm` takes (checked without building), and a
run that says there is no GPU and exits 0 with nothing measured."""

from __future__ import annotations

import pytest

from copy_tools import runtime
from frontends.kernels.gemm_plan import plan_of
from tests.tools.bench_scripts import bench_script


@pytest.fixture(scope="module")
def bench():
    with bench_script("bench_gemm") as module:
        yield module


def test_shapes(bench):
    assert bench.parse_shapes("4096x4096x4096,4001X4104x4000") == [
        (4096, 4096, 4096),
        (4001, 4104, 4000),
    ]
    with pytest.raises(SystemExit, match="MxNxK"):
        bench.parse_shapes("4096x4096")


def test_unknown_config(bench):
    with pytest.raises(SystemExit, match="expected configs among"):
        bench.main(["--configs", "coop128,split"])


@pytest.mark.parametrize("out", ["bf16", "f32"])
def test_every_row_is_a_kernel(bench, out):
    """Each (shape, configuration) of the default table passes gemm's argument checks and
    fits the SMEM (plan_of raises otherwise)."""
    for shape in bench.SHAPES:
        for tile, schedule, cluster in bench.CONFIGS.values():
            plan = plan_of(shape, "bf16", out, tile, None, cluster, schedule, "sm_90a")
            assert plan.stages >= 2


@pytest.mark.skipif(runtime.gpu_available(), reason="a GPU is here: the script would run")
def test_no_gpu(bench, capsys):
    assert bench.main(["--shapes", "256x256x256"]) == 0
    assert "no CUDA driver or GPU here; nothing measured" in capsys.readouterr().out
