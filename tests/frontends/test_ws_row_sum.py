"""`kernels.ws_row_sum` without a GPU: it builds and verifies (the builder runs
`verify_module`), compiles to an sm_90a cubin for every case the GPU test launches, reduces
with warp shuffles and no atomics, and rejects what it cannot build with a ValueError that
says what was expected and how to fix it. `balanced_band_rows` against a brute force."""

from __future__ import annotations

import re
from math import ceil

import pytest
from xdsl.dialects import memref, scf

from copy_dialect import ops as copy
from copy_dialect.upstream_gpu import ShuffleMode, ShuffleOp
from copy_tools.universe import make_context
from frontends import kernels
from passes.pipeline import compile_module
from tests.frontends.test_ws_row_sum_gpu import CASES

PARAMS = [pytest.param(case, id=case.id) for case in CASES]


@pytest.fixture(scope="module")
def compiled() -> dict[str, object]:
    return {}


def compile_case(case, cache):
    if case.id not in cache:
        module = kernels.ws_row_sum(
            case.shape,
            case.dtype,
            case.tile,
            stages=case.stages,
            consumer_warps=case.warps,
        )
        cache[case.id] = (module, compile_module(module.clone(), make_context()))
    return cache[case.id]


@pytest.mark.parametrize("case", PARAMS)
def test_every_gpu_case_compiles(case, compiled):
    module, result = compile_case(case, compiled)
    assert result.cubin[:4] == b"\x7fELF"
    (abi,) = result.abi.kernels.values()
    assert abi.block == ((1 + case.warps) * 32, 1, 1)
    # The lanes' partial sums meet through shuffles; no float atomics (red/atom) anywhere:
    # one block owns each sum.
    assert "shfl.sync.bfly.b32" in result.ptx
    atomics = re.findall(r"^\s*(?:@!?%p\d+\s+)?((?:red|atom)\.\S+)", result.ptx, re.M)
    assert atomics == []


@pytest.mark.parametrize("case", PARAMS)
def test_kernel_structure(case, compiled):
    module, _ = compile_case(case, compiled)
    (ws,) = [op for op in module.walk() if isinstance(op, copy.WarpSpecializeOp)]
    assert ws.role_warps == (1, case.warps)
    rows = ceil(case.tile[0] / case.warps)
    consumer = list(ws.roles[1].walk())
    shuffles = [op for op in consumer if isinstance(op, ShuffleOp)]
    assert len(shuffles) == 5 * rows
    assert {op.mode.data for op in shuffles} == {ShuffleMode.XOR}
    # The tile loop carries one partial sum per row the warp owns.
    (tile_loop,) = [op for op in ws.roles[1].block.ops if isinstance(op, scf.ForOp)]
    assert len(tile_loop.iter_args) == rows
    stores = [op for op in consumer if isinstance(op, memref.StoreOp)]
    assert len(stores) == rows
    barriers = [op for op in module.walk() if isinstance(op, copy.BarrierInitOp)]
    assert [op.arrivals.value.data for op in barriers] == [1, case.warps]
    assert [op.result.type.count.data for op in barriers] == [case.stages] * 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dtype": "i32"}, r"expected a float element type \(f32, bf16, f16\), got 'i32'"),
        ({"tile": (64, 48)}, r"expected tile\[1\] to be a multiple of 32 .* use tile\[1\] = 64"),
        ({"tile": (64, 512)}, r"expected a 2-D tile of 1 to 256 per dim"),
        ({"shape": (64, 130)}, r"rows of a multiple of 16 bytes .* multiple of 4 with zeros"),
        ({"shape": (64, 130), "dtype": "bf16"}, r"multiple of 8 with zeros"),
        ({"consumer_warps": 0}, r"expected 1 to 16 consumer warps, got 0"),
        ({"consumer_warps": 17}, r"expected 1 to 16 consumer warps, got 17"),
        ({"stages": 0}, r"expected 1 to 32 stages, got stages=0"),
        ({"tile": (256, 128), "stages": 1, "consumer_warps": 2}, r"at most 64 tile rows per"),
        ({"tile": (125, 32), "dtype": "bf16"}, r"multiple of 128 bytes .* 8000 bytes"),
        ({"tile": (128, 128), "stages": 4}, r"at most 3 stages .* use stages=3 or fewer"),
        ({"tile": (256, 256), "stages": 1, "consumer_warps": 16}, r"use a smaller tile$"),
        ({"target": "sm_80"}, r"'copy.async_copy' with impl tma needs a target with TMA \(sm_90, "),
        ({"shape": (0, 64)}, r"expected a 2-D shape of positive extents"),
    ],
)
def test_bad_parameters(kwargs, message):
    args = {"shape": (256, 256), "dtype": "f32", "tile": (64, 128), **kwargs}
    shape = args.pop("shape")
    with pytest.raises(ValueError, match=message):
        kernels.ws_row_sum(shape, **args)


def test_stage_limit_in_the_message_fits():
    """The stages the SMEM message offers build (and one more does not)."""
    with pytest.raises(ValueError, match="use stages=3 or fewer"):
        kernels.ws_row_sum((256, 256), tile=(128, 128), stages=4)
    kernels.ws_row_sum((256, 256), tile=(128, 128), stages=3)


@pytest.mark.parametrize(
    ("tile", "dtype", "stages"),
    [((64, 128), "f32", 4), ((125, 128), "f32", 3), ((256, 256), "bf16", 1)],
)
def test_stages_default_to_what_fits(tile, dtype, stages):
    module = kernels.ws_row_sum((1024, 1024), dtype, tile, consumer_warps=8)
    full = next(op for op in module.walk() if isinstance(op, copy.BarrierInitOp))
    assert full.result.type.count.data == stages == min(4, kernels.ws_stages_limit(tile, [dtype]))


def busiest_block_rows(rows: int, blocks: int, h: int) -> int:
    """Rows the busiest block sums: band b (h rows, the last one partial) goes to block
    b % blocks, as the kernel assigns them."""
    load = [0] * blocks
    for band in range(ceil(rows / h)):
        load[band % blocks] += min(h, rows - band * h)
    return max(load)


def test_balanced_band_rows_for_the_benchmark():
    h = kernels.balanced_band_rows(16384, 132)
    assert h == 125
    assert busiest_block_rows(16384, 132, h) == ceil(16384 / 132) == 125
    assert busiest_block_rows(16384, 132, 64) == busiest_block_rows(16384, 132, 128) == 128


def objective(rows: int, blocks: int, h: int) -> int:
    """What `balanced_band_rows` minimizes: bands per busiest block x band height."""
    return ceil(ceil(rows / h) / blocks) * h


@pytest.mark.parametrize(
    ("rows", "blocks"), [(16384, 132), (1000, 132), (5000, 7), (300, 300), (1, 4), (4096, 114)]
)
def test_balanced_band_rows_is_optimal(rows, blocks):
    """The height minimizes the busiest block's rows over every height 1..256, and is the
    tallest that does; the rows it really sums (the last band partial) are no more."""
    h = kernels.balanced_band_rows(rows, blocks)
    heights = range(1, 257)
    best = min(objective(rows, blocks, g) for g in heights)
    assert objective(rows, blocks, h) == best
    assert h == max(g for g in heights if objective(rows, blocks, g) == best)
    assert busiest_block_rows(rows, blocks, h) <= best


def test_balanced_band_rows_multiple():
    h = kernels.balanced_band_rows(16384, 132, multiple=4)
    assert h % 4 == 0
    assert ceil(ceil(16384 / h) / 132) * h == min(
        ceil(ceil(16384 / g) / 132) * g for g in range(4, 257, 4)
    )


def test_cache_hint_reaches_the_loads():
    hinted = kernels.ws_row_sum((256, 256), cache_hint=kernels.EVICT_FIRST)
    plain = kernels.ws_row_sum((256, 256))
    ptx = compile_module(hinted, make_context()).ptx
    assert "L2::cache_hint" in ptx
    assert "L2::cache_hint" not in compile_module(plain, make_context()).ptx
