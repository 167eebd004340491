"""Tensor maps rewritten in the kernel (issue I, item 6), without a GPU: the grouped-copy
kernels that test_tensormap_update_gpu.py launches compile to PTX (tensormap.replace in
global memory, the tensor-map proxy fences, copies through the map's address) and to a
cubin for sm_90a; their ABI records the workspace the runtime allocates and fills; the
workspace's image is the host-encoded map in each slot; the positive kernels of
lit_tests/dialects/copy/protocol-tensormap.mlir compile too; and the grouped copy with its
acquire, release or wait deleted is reported by the protocol analysis."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects import scf

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_tools import runtime
from copy_tools.universe import make_context
from facts.abi import KernelAbi, ModuleAbi, TensorMapParam, TensorMapWorkspaceParam
from frontends import kernels
from passes.pipeline import compile_module
from runtime.tensor_map import TENSOR_MAP_BYTES, map_bytes, workspace_image

TILE = (8, 64)

CASES = {
    "three_odd": [(37, 70), (5, 3), (64, 129)],
    "one_element": [(1, 1)],
    "mixed": [(100, 64), (13, 200), (8, 64), (17, 1), (1, 255)],
    "tall_thin": [(301, 5), (2, 77)],
}
"""Group lists: odd rows and columns, groups smaller than a tile, rows of one element."""


def case(name: str) -> tuple[list[tuple[int, ...]], int, tuple[int, int]]:
    """The group table, the pool capacity and the largest shape of a case."""
    shapes = CASES[name]
    table = kernels.grouped_layout(shapes, "f32")
    capacity = max(off + rows * pitch for off, rows, _, pitch in table)
    biggest = (max(r for r, _ in shapes), max(c for _, c in shapes))
    return table, capacity, biggest


def module(name: str, persistent: bool = False):
    table, capacity, biggest = case(name)
    return kernels.grouped_copy(len(table), capacity, biggest, "f32", TILE, persistent=persistent)


@pytest.mark.parametrize("persistent", [False, True], ids=["per_group", "persistent"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_grouped_copy_compiles_to_ptx_and_cubin(name, persistent):
    program = runtime.compile(module(name, persistent))
    assert program.cubin
    (abi,) = program.abi.kernels.values()
    _, _, biggest = case(name)
    blocks = kernels.grid(biggest, TILE)[0] * kernels.grid(biggest, TILE)[1]
    slots = blocks * (1 if persistent else len(CASES[name]))
    (workspace,) = [p for p in abi.params if isinstance(p, TensorMapWorkspaceParam)]
    assert workspace == TensorMapWorkspaceParam(0, TILE, 16, "zeros", "FLOAT32", False, slots)


def test_grouped_copy_ptx_rewrites_the_map_in_global_memory():
    compiled = compile_module(module("three_odd"), make_context())
    ptx = compiled.ptx
    assert ".version 8.6" in ptx
    for field in ("global_address", "global_dim", "global_stride"):
        assert f"tensormap.replace.tile.{field}.global.b1024" in ptx
    assert re.search(r"global_dim\.global\.b1024\.b32 \[%tm\], 1, ", ptx)  # memref dim 0
    assert re.search(r"global_stride\.global\.b1024\.b64 \[%tm\], 0, ", ptx)
    assert "fence.proxy.tensormap::generic.release.gpu;" in ptx
    acquire = re.search(r"fence\.proxy\.tensormap::generic\.acquire\.gpu \[(%rd\d+)\], 128;", ptx)
    assert acquire
    # The load issues through the map the acquire made visible, not a .param map.
    load = re.search(
        r"cp\.async\.bulk\.tensor\.2d\.shared::cta\.global\S* \[%rd\d+\], \[(%rd\d+),", ptx
    )
    assert load
    assert load.group(1) == acquire.group(1)
    assert ".param .align 64 .b8" not in ptx


def test_workspace_abi_record_round_trips():
    param = TensorMapWorkspaceParam(0, (8, 64), 128, "nan", "BFLOAT16", True, 132)
    entry = param.to_dict()
    assert entry["kind"] == "tensor_map_workspace"
    assert entry["slots"] == 132
    assert TensorMapWorkspaceParam.from_dict(entry) == param
    assert param.initial_map == TensorMapParam(0, (8, 64), 128, "nan", "BFLOAT16", True)
    abi = KernelAbi("k", (param,), 0, (1, 1, 1))
    assert abi.arguments == ()
    assert abi.tensor_maps == (param.initial_map,)
    text = ModuleAbi("sm_90a", {"k": abi}).to_json()
    assert ModuleAbi.from_json(text).kernels["k"] == abi
    with pytest.raises(ValueError, match="'slots'"):
        TensorMapWorkspaceParam.from_dict({**entry, "slots": "many"})


def test_workspace_image_is_the_map_in_every_slot():
    from cuda.bindings import driver

    initial = map_bytes(driver.CUtensorMap())
    assert len(initial) == TENSOR_MAP_BYTES
    marked = bytes(range(TENSOR_MAP_BYTES))
    param = TensorMapWorkspaceParam(0, (8, 64), 16, "zeros", "FLOAT32", False, 3)
    assert workspace_image(marked, param) == marked * 3
    with pytest.raises(ValueError, match="128 bytes"):
        workspace_image(b"x", param)


def test_grouped_layout_aligns_each_group_and_pitch():
    table = kernels.grouped_layout([(3, 5), (2, 4), (1, 1)], "f32")
    assert table == [(0, 3, 5, 8), (24, 2, 4, 4), (32, 1, 1, 4)]


LIT = Path(__file__).resolve().parents[2] / "lit_tests/dialects/copy/protocol-tensormap.mlir"


@pytest.mark.parametrize(
    "chunk", LIT.read_text().split("// -----"), ids=lambda c: re.search(r"@(\w+)", c).group(1)
)
def test_protocol_tensormap_kernel_compiles(chunk):
    assert runtime.compile(chunk).cubin


def without(module, op_type: type, which: int = 0):
    """`module` with its `which`-th op of `op_type` erased."""
    ops = [op for op in module.walk() if isinstance(op, op_type)]
    ops[which].detach()
    ops[which].erase()
    return module


@pytest.mark.parametrize(
    ("op_type", "which", "rules"),
    [
        (copy.TensorMapFenceAcquireOp, 0, {"TU11"}),
        (copy.TensorMapFenceReleaseOp, 0, {"TU12"}),
        # Without the wait for a group's load, the threads' read of the tile races with it
        # (P1) before the next group's rewrite does (TU10): the first is reported.
        (copy.BarrierWaitOp, 0, {"P1", "TU10"}),
    ],
    ids=["no_acquire", "no_release", "no_wait"],
)
def test_grouped_copy_with_a_protocol_op_missing_is_reported(op_type, which, rules):
    """The persistent grouped copy, its protocol broken: the analysis reports it."""
    module = kernels.grouped_copy(2, 4096, (37, 70), persistent=True)
    assert any(isinstance(op, scf.ForOp) for op in module.walk())  # the loop over groups
    with pytest.raises(CopyVerifyException) as error:
        verify_module(without(module, op_type, which))
    assert rules & set(error.value.rules), error.value


def test_per_group_blocks_past_their_group_do_nothing():
    """Per group, the grid covers the largest group for every group: a block whose tile lies
    past its group's rows or columns skips the rewrite, the fences and the load (an scf.if
    on the table's row, which every thread reads alike)."""
    from xdsl.dialects import scf

    from copy_dialect import ops as copy

    built = module("three_odd")
    rewrites = [op for op in built.walk() if isinstance(op, copy.TensorMapReplaceOp)]
    loads = [op for op in built.walk() if isinstance(op, copy.AsyncCopyOp)]
    assert rewrites
    assert loads
    assert all(isinstance(op.parent_op(), scf.IfOp) for op in [*rewrites, *loads])
