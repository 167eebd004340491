"""The kernels of the mbarrier-breadth tests (test_mbarrier_ops.py compiles them,
test_mbarrier_ops_gpu.py runs them), for any size, with their numpy models:

- `complete_tx`: the block's threads write SMEM and complete the transaction bytes of what
  they wrote (copy.barrier_complete_tx, issuer threads or warps) on a phase the elected thread
  expects (copy.barrier_expect_tx, then one arrival); every thread then reads its neighbour's
  element: y[c*128 + t] = x[c*128 + (t + 1) % 128] in each chunk c of 128 (0 past the end).
  Two chunks a block, so that the phases flip parity.
- `arrive_drop`: a warp-specialized ring (a producer warp, four consumer warps) whose fourth
  consumer warp drops out of the empty barriers (copy.barrier_arrive_drop) after its first
  `DROP_AFTER` tiles, one arrive_drop per ring slot; the other three go on and split each
  tile's rows among them: y = x.
- `inval_reinit`: a TMA load and store on a barrier of 1 arrival, copy.barrier_inval, then
  copy.barrier_reinit with 2 arrivals (a nocomplete arrival and the load's own) and a second
  load and store that waits on parity 0 again: y = x, two 64-row tiles a block.
"""

from __future__ import annotations

import numpy as np

CHUNK = 128
"""Elements a block of the complete_tx kernel moves per phase (its 128 threads, one each)."""

CHUNKS = 2


def complete_tx_kernel(n: int, issuer: str = "threads") -> str:
    """The complete_tx kernel for `n` f32 elements; `issuer` threads (4 bytes each) or
    warps (128 bytes each)."""
    nbytes = 4 if issuer == "threads" else 128
    return f"""builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @complete_tx_{issuer}(%x: memref<{n}xf32>, %y: memref<{n}xf32>)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %n = arith.constant {n} : index
    %zero = arith.constant 0.0 : f32
    %bid = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %tid = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %buf = copy.alloc_smem : memref<128xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %base = arith.muli %bid, %c256 : index
    %next = arith.addi %tid, %c1 : index
    %src = arith.remui %next, %c128 : index
    scf.for %k = %c0 to %c2 step %c1 {{
      %km = arith.muli %k, %c128 : index
      %chunk = arith.addi %base, %km : index
      %i = arith.addi %chunk, %tid : index
      %in = arith.cmpi ult, %i, %n : index
      %v = scf.if %in -> (f32) {{
        %g = memref.load %x[%i] : memref<{n}xf32>
        scf.yield %g : f32
      }} else {{
        scf.yield %zero : f32
      }}
      copy.barrier_expect_tx %bar[%c0], 512 : !copy.barrier<1>
      memref.store %v, %buf[%tid] : memref<128xf32, #copy.smem>
      copy.barrier_complete_tx %bar[%c0], {nbytes} issuer {issuer} : !copy.barrier<1>
      copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
      %p = arith.cmpi ne, %k, %c0 : index
      copy.barrier_wait %bar[%c0], %p : !copy.barrier<1>
      %w = memref.load %buf[%src] : memref<128xf32, #copy.smem>
      scf.if %in {{
        memref.store %w, %y[%i] : memref<{n}xf32>
      }}
      "gpu.barrier"() : () -> ()
    }}
    func.return
  }}
}}
"""


def complete_tx_grid(n: int) -> tuple[int, int]:
    return (-(-n // (CHUNK * CHUNKS)), 1)


def complete_tx_model(x: np.ndarray) -> np.ndarray:
    n = x.size
    padded = np.zeros(-(-n // CHUNK) * CHUNK, x.dtype)
    padded[:n] = x
    return np.roll(padded.reshape(-1, CHUNK), -1, axis=1).reshape(-1)[:n]


TILE_ROWS = 24
"""Rows of an arrive_drop tile (32 f32 columns): 6 rows for each of 4 consumer warps, then
8 for each of 3."""

DROP_AFTER = 2
"""Tiles the arrive_drop kernel's first consumer warp copies before it drops out."""


def arrive_drop_kernel(tiles: int) -> str:
    """The arrive_drop kernel over a (tiles * 24) x 32 f32 array. The consumer role's first
    warp drops out: its class then observes nothing the others read (docs/design.md)."""
    rows = tiles * TILE_ROWS
    t = f"memref<{rows}x32xf32>"
    ring = "memref<2x24x32xf32, #copy.smem>"
    return f"""builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @arrive_drop(%x: {t}, %y: {t})
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c6 = arith.constant 6 : index
    %c8 = arith.constant 8 : index
    %c24 = arith.constant 24 : index
    %c32 = arith.constant 32 : index
    %cdrop = arith.constant {DROP_AFTER} : index
    %cdone = arith.constant {DROP_AFTER + 2} : index
    %total = arith.constant {tiles} : index
    %bid = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %nb = "gpu.grid_dim"() <{{dimension = #gpu<dim x>}}> : () -> index
    %left = arith.subi %total, %bid : index
    %nbm1 = arith.subi %nb, %c1 : index
    %num = arith.addi %left, %nbm1 : index
    %count = arith.divui %num, %nb : index
    %ring = copy.alloc_smem : {ring}
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 4 : !copy.barrier<2>
    copy.warp_specialize warps [1, 4] {{
    ^bb0(%t: index):
      scf.for %k = %c0 to %count step %c1 {{
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %again = arith.cmpi uge, %k, %c2 : index
        scf.if %again {{
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<2>
        }}
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %row = arith.muli %tile, %c24 : index
        copy.async_copy %x[%row, %c0] to %ring[%s] barrier %full[%s]
          : {t} to {ring}, !copy.barrier<2>
      }}
    }}, {{
    ^bb0(%t: index):
      %w = arith.divui %t, %c32 : index
      %lane = arith.remui %t, %c32 : index
      %first = arith.cmpi eq, %w, %c0 : index
      scf.for %k = %c0 to %count step %c1 {{
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        %tk = arith.muli %k, %nb : index
        %tile = arith.addi %bid, %tk : index
        %row = arith.muli %tile, %c24 : index
        %early = arith.cmpi ult, %k, %cdrop : index
        %late = arith.cmpi uge, %k, %cdrop : index
        %gone = arith.andi %first, %late : i1
        scf.if %gone {{
          // The first warp drops out of each slot's empty barrier once, after the fill it
          // would have read (so that its arrival counts toward that fill's phase).
          %dropping = arith.cmpi ult, %k, %cdone : index
          scf.if %dropping {{
            copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
            copy.barrier_arrive_drop %empty[%s] issuer warps : !copy.barrier<2>
          }}
        }} else {{
          copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
          %nr = arith.select %early, %c6, %c8 : index
          %off = arith.select %early, %c0, %c1 : index
          %wi = arith.subi %w, %off : index
          %start = arith.muli %wi, %nr : index
          scf.for %r = %c0 to %nr step %c1 {{
            %rr = arith.addi %start, %r : index
            %v = memref.load %ring[%s, %rr, %lane] : {ring}
            %gr = arith.addi %row, %rr : index
            memref.store %v, %y[%gr, %lane] : {t}
          }}
          copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<2>
        }}
      }}
    }}
    func.return
  }}
}}
"""


def inval_reinit_kernel(rows: int, cols: int) -> str:
    """The inval/reinit kernel over a rows x cols f32 array (cols a multiple of 4, at most
    64): block b copies rows 128 b .. 128 b + 127, in two tiles on two barrier lives."""
    t = f"memref<{rows}x{cols}xf32>"
    tile = "memref<64x64xf32, #copy.smem>"
    return f"""builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @inval_reinit(%x: {t}, %y: {t})
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %bid = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %row0 = arith.muli %bid, %c128 : index
    %row1 = arith.addi %row0, %c64 : index
    %a = copy.alloc_smem : {tile}
    %b = copy.alloc_smem : {tile}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row0, %c0] to %a barrier %bar[%c0] : {t} to {tile}, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %a to %y[%row0, %c0] : {tile} to {t}
    copy.commit_group bulk
    // Phase 0 has completed: parity 1 names the next phase. A new life starts at phase 0.
    copy.barrier_inval %bar : !copy.barrier<1>
    copy.barrier_reinit %bar arrivals 2 : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
    copy.async_copy %x[%row1, %c0] to %b barrier %bar[%c0] : {t} to {tile}, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %b to %y[%row1, %c0] : {tile} to {t}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""


def inval_reinit_grid(rows: int) -> tuple[int, int]:
    return (-(-rows // 128), 1)
