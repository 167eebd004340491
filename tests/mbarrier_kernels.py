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
  func.func @complete_tx_{issuer}(%x: memref<{n}xf32>, %y: memref<{n}xf32>) attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>}} {{
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
