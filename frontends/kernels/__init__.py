"""Copy kernels built with the Python builder API: the frontend path in a few lines.

    from frontends import kernels
    from copy_tools import runtime
    module = kernels.tma_copy((1000, 1000), "f32", tile=(64, 64))
    program = runtime.compile(module)
    program(x, y, grid=kernels.grid((1000, 1000), (64, 64)))

Every kernel copies (or, with `reduce`, reduces) a 2-D array tile by tile, one tile per block
of 128 threads (256 for cp.async); an array that is not a multiple of the tile is handled by
TMA's out-of-bounds fill and clipping.

The builders live in one module per kernel family, all re-exported here: `tiles` (one tile
per block: TMA, cp.async, bulk), `broadcast` (tiles shared by a cluster: multicast and
broadcast), `pipelines` (the pipelined persistent TMA copy), `warp_specialized` and
`row_sum` (warp-specialized persistent kernels), `dsmem` (exchanges between the CTAs of a
cluster), `im2col` (convolution gathers), `grouped` (variable-shape groups in one pool) and
`gemm` (a warp-specialized GEMM on wgmma, sm_90a) and `pdl` (a two-kernel chain under
programmatic dependent launch); `common` holds what they share.
"""

from __future__ import annotations

from frontends.kernels.broadcast import (
    BROADCAST_ORDERS,
    broadcast_copy,
    broadcast_grid,
    broadcast_row_dot,
    multicast_copy,
)
from frontends.kernels.common import (
    CP_ASYNC_BLOCK,
    EVICT_FIRST,
    EVICT_LAST,
    EVICT_NORMAL,
    EVICT_UNCHANGED,
    FLOAT_TYPES,
    TMA_BLOCK,
    element_type,
    grid,
)
from frontends.kernels.dsmem import EXCHANGE_MODES, dsmem_exchange, exchange_grid, exchange_sources
from frontends.kernels.gemm import SCHEDULES, gemm, gemm_grid
from frontends.kernels.grouped import (
    GROUP_FIELDS,
    grouped_copy,
    grouped_grid,
    grouped_layout,
    grouped_view_copy,
)
from frontends.kernels.im2col import Conv2d, conv2d, im2col_gather, im2col_grid
from frontends.kernels.pdl import PDL_BLOCK, pdl_chain, pdl_grid
from frontends.kernels.pdl import TRIGGERS as PDL_TRIGGERS
from frontends.kernels.persistent import persistent_chain
from frontends.kernels.pipelines import pipeline_stages_limit, tma_copy_pipelined
from frontends.kernels.row_sum import ROW_SUM_MAX_ROWS_PER_WARP, balanced_band_rows, ws_row_sum
from frontends.kernels.tiles import bulk_copy, cp_async_copy, tma_copy
from frontends.kernels.tmem_pipeline import tmem_pipeline
from frontends.kernels.warp_specialized import (
    ELEMENTWISE,
    tiles_grid,
    ws_copy,
    ws_elementwise,
    ws_grid,
    ws_stages_limit,
)

__all__ = [
    # common: launch constants, L2 policies, types and grids
    "TMA_BLOCK",
    "EVICT_NORMAL",
    "EVICT_FIRST",
    "EVICT_LAST",
    "EVICT_UNCHANGED",
    "CP_ASYNC_BLOCK",
    "FLOAT_TYPES",
    "element_type",
    "grid",
    # tiles
    "tma_copy",
    "cp_async_copy",
    "bulk_copy",
    # broadcast
    "multicast_copy",
    "BROADCAST_ORDERS",
    "broadcast_grid",
    "broadcast_copy",
    "broadcast_row_dot",
    # pipelines
    "pipeline_stages_limit",
    "tma_copy_pipelined",
    # warp_specialized
    "ELEMENTWISE",
    "ws_grid",
    "tiles_grid",
    "ws_stages_limit",
    "ws_copy",
    "ws_elementwise",
    # row_sum
    "ROW_SUM_MAX_ROWS_PER_WARP",
    "balanced_band_rows",
    "ws_row_sum",
    # dsmem
    "EXCHANGE_MODES",
    "exchange_grid",
    "exchange_sources",
    "dsmem_exchange",
    # im2col
    "Conv2d",
    "conv2d",
    "im2col_grid",
    "im2col_gather",
    # grouped
    "GROUP_FIELDS",
    "grouped_layout",
    "grouped_grid",
    "grouped_copy",
    "grouped_view_copy",
    # gemm
    "SCHEDULES",
    "gemm",
    "gemm_grid",
    # pdl
    "PDL_BLOCK",
    "PDL_TRIGGERS",
    "pdl_chain",
    "persistent_chain",
    "pdl_grid",
    # tmem_pipeline
    "tmem_pipeline",
]
