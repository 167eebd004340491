"""Non-tensor bulk copies (`impl bulk`, `cp.async.bulk`): the builders' kernels that
test_bulk_gpu.py launches compile to the non-tensor forms with no tensor map, the lowering
picks a bulk copy for a plain in-bounds copy of whole rows and keeps TMA elsewhere, and the
builders reject shapes a bulk copy cannot move."""

from __future__ import annotations

import pytest

from copy_dialect import ops as copy
from copy_tools.universe import make_context
from frontends import kernels
from passes.pipeline import compile_module

LOAD = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"
"""A bulk load into this CTA's own SMEM: the `.shared::cta` window (PTX ISA 8.6)."""
MULTICAST_LOAD = (
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
)
STORE = "cp.async.bulk.global.shared::cta.bulk_group"

ONE_D = [
    (1000, "f32", 256, False),  # a tail of 232 elements (928 bytes)
    (4104, "f16", 512, False),  # a tail of one 16-byte chunk
    (4144, "i8", 1024, True),  # a tail of 48 bytes, each part prefetched first
    (8192, "bf16", 4096, False),  # no tail
    (12, "f32", 4, True),  # three blocks of one chunk each
]
"""(n, dtype, tile, prefetch) of `kernels.bulk_copy`."""

ROWS = [((64, 1000), "f32", (2, 1000), stages) for stages in (1, 2, 3, 4)] + [
    ((96, 520), "f16", (8, 520), 3),
    ((33, 4096), "i8", (3, 4096), 2),
]
"""(shape, dtype, tile, stages) of `kernels.tma_copy_pipelined(implementation="bulk")`."""

MULTICAST = [((64, 1000), "f32", (4, 1000)), ((256, 128), "bf16", (16, 128))]
"""(shape, dtype, tile) of `kernels.multicast_copy(implementation="bulk")`."""


def one_d(n, dtype, tile, prefetch):
    return kernels.bulk_copy(n, dtype, tile, prefetch=prefetch)


def rows(shape, dtype, tile, stages):
    return kernels.tma_copy_pipelined(shape, dtype, tile, stages=stages, implementation="bulk")


def multicast(shape, dtype, tile):
    return kernels.multicast_copy(shape, dtype, tile, implementation="bulk")


def ptx_of(module) -> str:
    compiled = compile_module(module, make_context(), "sm_90a")
    assert compiled.cubin
    return compiled.ptx


@pytest.mark.parametrize(("n", "dtype", "tile", "prefetch"), ONE_D)
def test_one_d_kernels_are_bulk_copies(n, dtype, tile, prefetch):
    ptx = ptx_of(one_d(n, dtype, tile, prefetch))
    parts = 1 if n % tile == 0 else 2
    assert ptx.count(LOAD) == ptx.count(STORE) == parts
    assert ptx.count("cp.async.bulk.prefetch.L2.global") == (parts if prefetch else 0)
    assert "cp.async.bulk.tensor" not in ptx
    assert ".param .align 64 .b8" not in ptx  # no tensor-map parameter


@pytest.mark.parametrize(("shape", "dtype", "tile", "stages"), ROWS)
def test_row_kernels_are_bulk_copies(shape, dtype, tile, stages):
    ptx = ptx_of(rows(shape, dtype, tile, stages))
    assert LOAD in ptx
    assert STORE in ptx
    assert "cp.async.bulk.tensor" not in ptx


@pytest.mark.parametrize(("shape", "dtype", "tile"), MULTICAST)
def test_multicast_kernels_are_bulk_copies(shape, dtype, tile):
    ptx = ptx_of(multicast(shape, dtype, tile))
    assert MULTICAST_LOAD in ptx
    assert STORE in ptx


def implementations(module) -> list[copy.Implementation | None]:
    copies = [op for op in module.walk() if isinstance(op, copy.AsyncCopyOp)]
    return [op.resolved_implementation() for op in copies]


def test_lowering_picks_bulk_only_for_in_bounds_whole_rows():
    bulk = copy.Implementation.BULK
    tma = copy.Implementation.TMA
    # oob left to its default (zeros for the load, clipping for the store): TMA.
    assert set(implementations(kernels.tma_copy_pipelined((64, 256), "f32", (2, 256)))) == {tma}
    # whole rows, in bounds: bulk, whether or not the IR asks for it.
    module = kernels.tma_copy_pipelined((64, 1000), "f32", (2, 1000), implementation="bulk")
    for op in module.walk():
        if isinstance(op, copy.AsyncCopyOp):
            op.properties.pop("implementation")
    assert set(implementations(module)) == {bulk}
    # a collective load stays TMA unless the IR asks for bulk; its store is bulk.
    module = multicast((64, 1000), "f32", (4, 1000))
    for op in module.walk():
        if isinstance(op, copy.AsyncCopyOp):
            op.properties.pop("implementation")
    assert implementations(module) == [tma, bulk]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: kernels.bulk_copy(1001, "f32", 256), "multiple of 16 bytes"),
        (lambda: kernels.bulk_copy(1000, "f32", 250), "multiple of 16 bytes"),
        (
            lambda: kernels.tma_copy_pipelined((64, 1000), "f32", (2, 500), implementation="bulk"),
            "whole rows",
        ),
    ],
)
def test_builders_reject_what_bulk_cannot_move(build, message):
    with pytest.raises(ValueError, match=message):
        build()
