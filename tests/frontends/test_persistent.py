"""`kernels.persistent_chain`: the PDL chain's producer and a persistent consumer that steals
the tiles of blocks not yet launched (cluster launch control). Under the interpreter's chain
run (`run_chain`: the consumer launched with programmatic stream serialization, its launch
queue letting its first block cancel and compute every other block's tile) the result is
numpy's, bit-exact, and race-free; it compiles and assembles (nvJitLink, and ptxas where on
PATH) for every target with cluster launch control, with one try_cancel, one query and the
griddepcontrol wait in the consumer; a target without CLC is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from copy_dialect import ops as copy
from copy_tools.universe import make_context
from facts.errors import ArgumentError
from frontends import kernels
from interpreter.grid_dependency import Launch, run_chain
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas


@pytest.mark.parametrize(("n", "seed"), [(128, 0), (512, 1), (1536, 2)])
def test_chain_interpreted(n: int, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    y = np.full(n, np.nan, dtype=np.float32)
    z = np.full(n, np.nan, dtype=np.float32)
    grid = kernels.pdl_grid(n)
    module = kernels.persistent_chain(n)
    (x_, y_, w_, z_), violations = run_chain(
        module,
        [Launch("produce", [x, y], grid), Launch("consume_persistent", [w, y, z], grid)],
        seed=seed,
    )
    assert violations == []
    two, one = np.float32(2), np.float32(1)
    expected_y = x * two + one
    np.testing.assert_array_equal(y_, expected_y)
    np.testing.assert_array_equal(z_, w * expected_y + w)


@pytest.mark.parametrize("target", copy.CLUSTER_LAUNCH_CONTROL.targets)
def test_assembles(target: str, tmp_path: Path):
    compiled = compile_module(kernels.persistent_chain(512, target=target), make_context(), target)
    assert compiled.cubin.startswith(b"\x7fELF")
    consume = compiled.ptx.split(".entry consume_persistent(")[1]
    assert consume.count("clusterlaunchcontrol.try_cancel.async.shared::cta") == 1
    assert consume.count("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128") == 1
    assert consume.count("griddepcontrol.wait;") == 1
    assert compiled.abi.kernels["consume_persistent"].grid_dependent
    check_ptxas(compiled.ptx, target, tmp_path)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_refuses_targets_without_clc(target: str):
    with pytest.raises(ArgumentError, match=f"cluster launch control .*the target is {target}"):
        kernels.persistent_chain(512, target=target)
