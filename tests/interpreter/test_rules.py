"""Every rule the interpreter checks, caught at its op: one table of cases (rule, the mistake,
the kernel and the edits that make the mistake), for each of P1..P13, the range rules
(`bounds`, P9, DS1, TU4, MB8) and the tensor-map rules (TU10..TU12). Each broken kernel
breaks its rule under some schedule, and the violation names the op that is wrong; each
fixed kernel runs clean under 102 schedules (34 seeds of each of the three) and leaves its
output bit-exact with numpy.

What the interpreter does not catch, by design (docs/interpreter.md, "What it checks"):
- a TMA copy whose coordinates put its box partly or wholly outside the array: no rule
  breaks, the hardware reads the OOB fill and clips stores (test_interpret.py's shapes with
  tails run that);
- P10's warnings (cf branches, loops the analysis cannot follow): a limit of the static
  analysis, not of a kernel; the interpreter runs such loops (cf branches it does not
  model);
- a named barrier that counts more threads than ever reach it (P13's hang): it hangs, and
  the interpreter reports the hang, P6, at the bar.sync;
- MB8 on a copy that names an invalidated barrier: the interpreter checks the arrivals,
  expect_tx and complete_tx, waits and tests, so the kernel below is caught at its next
  wait, not at the copy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools.universe import make_context

SCHEDULES = ("random", "adversarial", "round_robin")
CLEAN_SEEDS = 34
"""34 seeds of each schedule: each fixed kernel runs clean under 102 schedules."""
BROKEN_SEEDS = 3


def data(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 100).astype(np.float32)


@dataclass(frozen=True)
class Kernel:
    """A correct kernel, its arguments and what it leaves in its output arrays."""

    name: str
    text: str
    inputs: Callable[[np.random.Generator], list]
    expected: Callable[[list], dict[int, np.ndarray]]
    """The arrays the kernel leaves, by argument index, from its inputs."""
    grid: tuple[int, int, int] = (1, 1, 1)


@dataclass(frozen=True)
class Case:
    """A rule, the mistake, the kernel the edits break, and the op the violation names (the
    `nth` op of that name in the kernel, in program order; for a race, either access)."""

    id: str
    rule: str
    mistake: str
    kernel: Kernel
    edits: tuple[tuple[str, str], ...]
    op: str
    nth: int = 0

    @property
    def broken(self) -> str:
        text = self.kernel.text
        for old, new in self.edits:  # each occurrence
            assert old in text, (self.id, old)
            text = text.replace(old, new)
        return text


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def guarded(body: str, *condition: str, indent: int = 4) -> str:
    """`body` under `scf.if %cond`, after the lines that compute `%cond`."""
    pad = " " * indent
    lines = "".join(f"{pad}{line}\n" for line in condition)
    return f"{lines}{pad}scf.if %cond {{\n{body}{pad}}}\n"


# --- a TMA tile: load, threads rewrite a row, fence, TMA store ------------------------------

TILE = Kernel(
    "tile",
    """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<64x64xf32>, %y: memref<64x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %phase = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]
      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    %v = memref.load %tile[%c1, %t] : memref<64x64xf32, #copy.smem>
    memref.store %v, %tile[%c0, %t] : memref<64x64xf32, #copy.smem>
    copy.fence_async_shared
    copy.async_copy %tile to %y[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
""",
    lambda rng: [data(rng, 64, 64), np.zeros((64, 64), np.float32)],
    lambda a: {1: np.concatenate([a[0][1:2], a[0][1:]])},
)
WAIT = "    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>\n"
READ = "    %v = memref.load %tile[%c1, %t] : memref<64x64xf32, #copy.smem>\n"
WRITE = "    memref.store %v, %tile[%c0, %t] : memref<64x64xf32, #copy.smem>\n"
FENCE = "    copy.fence_async_shared\n"
STORE_WAIT = "    copy.wait_group bulk 0\n"
LOAD = (
    "    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]\n"
    "      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>\n"
)

# --- a ring of two stages: each trip loads a tile and copies its first row ------------------

RING_TEXT = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<256x64xf32>, %y: memref<256x64xf32>, %n: index)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %cs = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %ring = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    scf.for %k = %c0 to %n step %c1 {
      %s = arith.remui %k, %cs : index
      %lap = arith.divui %k, %cs : index
      %pm = arith.remui %lap, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index
      %row = arith.muli %k, %c64 : index
      copy.async_copy %x[%row, %c0] to %ring[%s] barrier %bars[%s]
        : memref<256x64xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
      copy.barrier_wait %bars[%s], %p : !copy.barrier<2>
      %v = memref.load %ring[%s, %c0, %t] : memref<2x64x64xf32, #copy.smem>
      memref.store %v, %y[%row, %t] : memref<256x64xf32>
      "gpu.barrier"() : () -> ()
    }
    func.return
  }
}
"""


def first_rows(a: list) -> dict[int, np.ndarray]:
    y = np.zeros_like(a[0])
    y[::64] = a[0][::64]
    return {1: y}


RING = Kernel(
    "ring",
    RING_TEXT,
    lambda rng: [data(rng, 256, 64), np.zeros((256, 64), np.float32), 4],
    first_rows,
)
STAGES = ("    %cs = arith.constant 2 : index\n", "    %cs = arith.constant 3 : index\n")

# --- warp-specialized: a producer warp fills a ring of two slots, a consumer warp drains it --

PIPELINE = Kernel(
    "pipeline",
    """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<128x32xf32>, %y: memref<128x32xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %ring = copy.alloc_smem : memref<2x32x32xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 32 : !copy.barrier<2>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c4 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %again = arith.cmpi uge, %k, %c2 : index
        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<2>
        }
        %row = arith.muli %k, %c32 : index
        copy.async_copy %x[%row, %c0] to %ring[%s] barrier %full[%s]
          : memref<128x32xf32> to memref<2x32x32xf32, #copy.smem>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c4 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
        %v = vector.load %ring[%s, %t, %c0] : memref<2x32x32xf32, #copy.smem>, vector<32xf32>
        %row = arith.muli %k, %c32 : index
        %r = arith.addi %row, %t : index
        vector.store %v, %y[%r, %c0] : memref<128x32xf32>, vector<32xf32>
        copy.barrier_arrive %empty[%s] : !copy.barrier<2>
      }
    }
    func.return
  }
}
""",
    lambda rng: [data(rng, 128, 32), np.zeros((128, 32), np.float32)],
    lambda a: {1: a[0]},
)
PRODUCER_WAIT = """        scf.if %again {
          %prev = arith.subi %lap, %c1 : index
          %pm = arith.remui %prev, %c2 : index
          %pp = arith.cmpi ne, %pm, %c0 : index
          copy.barrier_wait %empty[%s], %pp : !copy.barrier<2>
        }
"""
PRODUCE = """        copy.async_copy %x[%row, %c0] to %ring[%s] barrier %full[%s]
          : memref<128x32xf32> to memref<2x32x32xf32, #copy.smem>, !copy.barrier<2>
"""

# --- a consumer warpgroup: four warps read each slot, meet, and one thread releases it --------

WARPGROUP = Kernel(
    "warpgroup",
    """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<512x32xf32>, %y: memref<512x32xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 160, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %true = arith.constant true
    %ring = copy.alloc_smem : memref<2x128x32xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c4 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        %acquire = arith.xori %lp, %true : i1
        copy.barrier_wait %empty[%s], %acquire : !copy.barrier<2>
        %row = arith.muli %k, %c128 : index
        copy.async_copy %x[%row, %c0] to %ring[%s] barrier %full[%s]
          : memref<512x32xf32> to memref<2x128x32xf32, #copy.smem>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t: index):
      scf.for %k = %c0 to %c4 step %c1 {
        %s = arith.remui %k, %c2 : index
        %lap = arith.divui %k, %c2 : index
        %lm = arith.remui %lap, %c2 : index
        %lp = arith.cmpi ne, %lm, %c0 : index
        copy.barrier_wait %full[%s], %lp : !copy.barrier<2>
        %v = vector.load %ring[%s, %t, %c0] : memref<2x128x32xf32, #copy.smem>, vector<32xf32>
        %row = arith.muli %k, %c128 : index
        %r = arith.addi %row, %t : index
        vector.store %v, %y[%r, %c0] : memref<512x32xf32>, vector<32xf32>
        copy.named_barrier_sync 1, 128
        copy.barrier_arrive %empty[%s] issuer elected : !copy.barrier<2>
      }
    }
    func.return
  }
}
""",
    lambda rng: [data(rng, 512, 32), np.zeros((512, 32), np.float32)],
    lambda a: {1: a[0]},
)
WARPGROUP_SYNC = "        copy.named_barrier_sync 1, 128\n"

# --- two roles meet at a named barrier: one writes a buffer, the other reads it -------------

NAMED_TEXT = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%y: memref<64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %one = arith.constant 1.0 : f32
    %buf = copy.alloc_smem : memref<64xf32, #copy.smem>
    copy.warp_specialize warps [2, 2] {
    ^bb0(%t: index):
      memref.store %one, %buf[%t] : memref<64xf32, #copy.smem>
      copy.named_barrier_arrive 1, 128
    }, {
    ^bb0(%t: index):
      copy.named_barrier_sync 1, 128
      %v = memref.load %buf[%t] : memref<64xf32, #copy.smem>
      memref.store %v, %y[%t] : memref<64xf32>
    }
    func.return
  }
}
"""
NAMED = Kernel(
    "named",
    NAMED_TEXT,
    lambda rng: [np.zeros(64, np.float32)],
    lambda a: {0: np.ones(64, np.float32)},
)


def count(n: int) -> tuple[tuple[str, str], ...]:
    return (
        ("copy.named_barrier_arrive 1, 128", f"copy.named_barrier_arrive 1, {n}"),
        ("copy.named_barrier_sync 1, 128", f"copy.named_barrier_sync 1, {n}"),
    )


# --- TMEM (sm_100a): a register round trip through tensor memory ----------------------------

TMEM = Kernel(
    "tmem",
    """
builtin.module attributes {copy.target = #copy.target<"sm_100a">} {
  func.func @k(%x: memref<128x4xf32>, %y: memref<128x4xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %acc = copy.tmem_alloc : memref<128x32xf32, #copy.tmem>
    %v = vector.load %x[%t, %c0] : memref<128x4xf32>, vector<4xf32>
    copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 4
      : vector<4xf32>, memref<128x32xf32, #copy.tmem>
    copy.tmem_wait store
    %w = copy.tmem_load %acc[%c0] shape shape_32x32b num 4
      : memref<128x32xf32, #copy.tmem> -> vector<4xf32>
    copy.tmem_wait load
    vector.store %w, %y[%t, %c0] : memref<128x4xf32>, vector<4xf32>
    copy.tmem_dealloc %acc : memref<128x32xf32, #copy.tmem>
    func.return
  }
}
""",
    lambda rng: [data(rng, 128, 4), np.zeros((128, 4), np.float32)],
    lambda a: {1: a[0]},
)
TMEM_STORE = """    copy.tmem_store %v, %acc[%c0] shape shape_32x32b num 4
      : vector<4xf32>, memref<128x32xf32, #copy.tmem>
"""

# --- a cp.async load (sm_80) of each CTA's group of a pool, through a view ------------------

VIEW = Kernel(
    "view",
    """
builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @k(%pool: memref<2048xf32>, %y: memref<2x16x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c1024 = arith.constant 1024 : index
    %b = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %off = arith.muli %b, %c1024 : index
    %g = memref.reinterpret_cast %pool to offset: [%off], sizes: [16, 64], strides: [64, 1]
      : memref<2048xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
    %buf = copy.alloc_smem : memref<16x64xf32, #copy.smem>
    copy.async_copy %g[%c0, %c0] to %buf impl cp_async
      : memref<16x64xf32, strided<[64, 1], offset: ?>> to memref<16x64xf32, #copy.smem>
    copy.commit_group cp_async
    copy.wait_group cp_async 0
    %r = arith.divui %t, %c8 : index
    %q = arith.remui %t, %c8 : index
    %c = arith.muli %q, %c8 : index
    %v = vector.load %buf[%r, %c] : memref<16x64xf32, #copy.smem>, vector<8xf32>
    vector.store %v, %y[%b, %r, %c] : memref<2x16x64xf32>, vector<8xf32>
    func.return
  }
}
""",
    lambda rng: [data(rng, 2048), np.zeros((2, 16, 64), np.float32)],
    lambda a: {1: a[0].reshape(2, 16, 64)},
    grid=(2, 1, 1),
)

# --- a cluster of two exchanges tiles by st.async (DSMEM) -----------------------------------

EXCHANGE = Kernel(
    "exchange",
    """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<64x32xf32>, %y: memref<64x32xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>,
                  copy.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c128 = arith.constant 128 : index
    %false = arith.constant false
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %rank = arith.remui %bx, %c2 : index
    %peer = arith.xori %rank, %c1 : index
    %col = arith.muli %bx, %c16 : index
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %mine = copy.alloc_smem : memref<64x16xf32, #copy.smem>
    %recv = copy.alloc_smem : memref<64x16xf32, #copy.smem>
    %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0]
      : memref<64x32xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 4096 : !copy.barrier<1>
    scf.for %k = %c0 to %c2 step %c1 {
      %step = arith.muli %k, %c128 : index
      %e = arith.addi %tid, %step : index
      %r = arith.divui %e, %c4 : index
      %q = arith.remui %e, %c4 : index
      %c = arith.muli %q, %c4 : index
      %v = vector.load %mine[%r, %c] : memref<64x16xf32, #copy.smem>, vector<4xf32>
      copy.peer_store %v, %recv[%r, %c] peer %peer, %full[%c0]
        : vector<4xf32>, memref<64x16xf32, #copy.smem>, !copy.barrier<1>
    }
    copy.barrier_wait %full[%c0], %false : !copy.barrier<1>
    copy.fence_async_shared
    copy.async_copy %recv to %y[%c0, %col] : memref<64x16xf32, #copy.smem> to memref<64x32xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }
}
""",
    lambda rng: [data(rng, 64, 32), np.zeros((64, 32), np.float32)],
    lambda a: {1: np.concatenate([a[0][:, 16:], a[0][:, :16]], axis=1)},
    grid=(2, 1, 1),
)

# --- a tensor map re-pointed between two loads ----------------------------------------------

REPOINT = Kernel(
    "repoint",
    """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<?x?xf32>, %pool: memref<1024xf32>, %y: memref<16x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c512 = arith.constant 512 : index
    %false = arith.constant false
    %true = arith.constant true
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %r = arith.divui %t, %c8 : index
    %q = arith.remui %t, %c8 : index
    %c = arith.muli %q, %c8 : index
    %buf = copy.alloc_smem : memref<8x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %m = copy.tensormap_global %x slot %c0 of 1 : memref<?x?xf32> -> !copy.tensormap<8x64xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>)
      : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %v = vector.load %buf[%r, %c] : memref<8x64xf32, #copy.smem>, vector<8xf32>
    vector.store %v, %y[%r, %c] : memref<16x64xf32>, vector<8xf32>
    "gpu.barrier"() : () -> ()
    copy.tensormap_replace %m global_address to %pool[%c512]
      : !copy.tensormap<8x64xf32>, memref<1024xf32>
    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>
    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] map(%m : !copy.tensormap<8x64xf32>)
      : memref<?x?xf32> to memref<8x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    %w = vector.load %buf[%r, %c] : memref<8x64xf32, #copy.smem>, vector<8xf32>
    %r2 = arith.addi %r, %c8 : index
    vector.store %w, %y[%r2, %c] : memref<16x64xf32>, vector<8xf32>
    func.return
  }
}
""",
    lambda rng: [data(rng, 8, 64), data(rng, 1024), np.zeros((16, 64), np.float32)],
    lambda a: {2: np.concatenate([a[0], a[1][512:].reshape(8, 64)])},
)
FIRST_MAP_WAIT = "    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>\n"
RELEASE = "    copy.tensormap_fence_release %m : !copy.tensormap<8x64xf32>\n"
ACQUIRE = "    copy.tensormap_fence_acquire %m : !copy.tensormap<8x64xf32>\n"
REPLACE = """    copy.tensormap_replace %m global_address to %pool[%c512]
      : !copy.tensormap<8x64xf32>, memref<1024xf32>
"""

# --- one barrier for two tiles: invalidated and initialized again between them --------------

REINIT = Kernel(
    "reinit",
    """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<128x64xf32>, %y: memref<128x64xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %false = arith.constant false
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %tile = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %tile barrier %bar[%c0]
      : memref<128x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %v = vector.load %tile[%t, %c0] : memref<64x64xf32, #copy.smem>, vector<64xf32>
    vector.store %v, %y[%t, %c0] : memref<128x64xf32>, vector<64xf32>
    copy.barrier_inval %bar : !copy.barrier<1>
    copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c64, %c0] to %tile barrier %bar[%c0]
      : memref<128x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    %w = vector.load %tile[%t, %c0] : memref<64x64xf32, #copy.smem>, vector<64xf32>
    %r = arith.addi %t, %c64 : index
    vector.store %w, %y[%r, %c0] : memref<128x64xf32>, vector<64xf32>
    func.return
  }
}
""",
    lambda rng: [data(rng, 128, 64), np.zeros((128, 64), np.float32)],
    lambda a: {1: a[0]},
)

# --- the table ------------------------------------------------------------------------------

CASES = [
    Case("P1", "P1", "threads read the tile before the wait that completes its load", TILE,
         ((WAIT, ""), (FENCE, WAIT + FENCE)), "memref.load"),
    Case("P2", "P2", "threads rewrite the tile while the TMA store may still read it", TILE,
         ((STORE_WAIT, "    memref.store %v, %tile[%c1, %t] : memref<64x64xf32, #copy.smem>\n"
           + STORE_WAIT),), "memref.store", 1),
    Case("P3", "P3", "the TMA store is issued before the load into its tile is known to land",
         TILE, ((WAIT, ""), (READ, ""), (WRITE, ""), (STORE_WAIT, STORE_WAIT + WAIT)),
         "copy.async_copy", 1),
    Case("P3-ring", "P3", "the producer refills a slot without waiting for the consumer to "
         "release it", PIPELINE, ((PRODUCER_WAIT, ""),), "copy.async_copy"),
    Case("P3-named", "P3", "each role completes a generation of named barrier 1 alone (64 "
         "threads): the reads race the writes", NAMED, count(64), "memref.load"),
    Case("P4", "P4", "the threads' writes reach the TMA store with a block barrier, no fence",
         TILE, ((FENCE, '    "gpu.barrier"() : () -> ()\n'),), "copy.async_copy", 1),
    Case("P5", "P5", "a second arrival on a barrier that awaits one", TILE,
         ((WAIT, "    copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>\n"
           + WAIT),), "copy.barrier_arrive"),
    Case("P6", "P6", "the wait is for a phase that never completes (two arrivals awaited, one "
         "made)", TILE, (("arrivals 1", "arrivals 2"),), "copy.barrier_wait"),
    Case("P7", "P7", "the kernel returns with its TMA store in flight", TILE,
         ((STORE_WAIT, ""),), "copy.async_copy", 1),
    Case("P8", "P8", "TMEM still allocated when the kernel returns", TMEM,
         (("    copy.tmem_dealloc %acc : memref<128x32xf32, #copy.tmem>\n", ""),),
         "copy.tmem_alloc"),
    Case("P9", "P9", "a ring of 3 stages over a group of 2 barriers: barrier 2 is out of range",
         RING, (STAGES, ("memref<2x64x64xf32", "memref<3x64x64xf32")), "copy.async_copy"),
    Case("P10", "P10", "the TMA load is issued under %t == 5: thread 0, which issues it, does "
         "not reach it", TILE,
         ((LOAD, guarded(LOAD, "%c5 = arith.constant 5 : index",
                         "%cond = arith.cmpi eq, %t, %c5 : index")),), "copy.async_copy"),
    Case("P10-role", "P10", "the producer's load is issued under %t == 0: the role's elected "
         "thread is the lane of its first warp that elect.sync picks", PIPELINE,
         ((PRODUCE, guarded(PRODUCE, "%cond = arith.cmpi eq, %t, %c0 : index", indent=8)),),
         "copy.async_copy"),
    Case("P10-group", "P10", "only warp 0 waits for the store's group (a block barrier)", TILE,
         ((STORE_WAIT, guarded(STORE_WAIT, "%c32 = arith.constant 32 : index",
                               "%cond = arith.cmpi ult, %t, %c32 : index")),),
         "copy.wait_group"),
    Case("P10-warp", "P10", "half of each warp stores to TMEM (tcgen05.st is .sync.aligned)",
         TMEM, ((TMEM_STORE, guarded(TMEM_STORE, "%c32 = arith.constant 32 : index",
                                     "%c16 = arith.constant 16 : index",
                                     "%lane = arith.remui %t, %c32 : index",
                                     "%cond = arith.cmpi ult, %lane, %c16 : index")),),
         "copy.tmem_store"),
    Case("P11", "P11", "the loaded registers are stored before tmem_wait load", TMEM,
         (("    copy.tmem_wait load\n", ""),), "vector.store"),
    Case("P12", "P12", "TMEM read back before tmem_wait store", TMEM,
         (("    copy.tmem_wait store\n", ""),), "copy.tmem_load"),
    Case("P3-ring-barrier", "P3", "no block barrier between the threads' reads of a slot "
         "and thread 0's next load into it: warp 1 may still read the slot", RING,
         (('      "gpu.barrier"() : () -> ()\n', ""),), "copy.async_copy"),
    Case("P1-one-thread-waits", "P1", "only thread 0 waits for the load: warp 1 reads the "
         "tile with no wait of its own and no barrier after thread 0's", TILE,
         ((WAIT, guarded(WAIT, "%cond = arith.cmpi eq, %t, %c0 : index")),), "memref.load"),
    Case("P3-warpgroup", "P3", "the consumer warpgroup's elected thread releases the slot "
         "before the warps meet: the other warps may still read it when the producer refills "
         "it", WARPGROUP, ((WARPGROUP_SYNC, ""),), "copy.async_copy"),
    Case("P13", "P13", "named barrier 1 counts 96 threads, and 128 meet at it", NAMED,
         count(96), "copy.named_barrier_sync"),
    Case("P13-counts", "P13", "the consumer counts 160 threads at named barrier 1 where the "
         "producer's arrival counts 128: the counts differ (undefined behaviour)", NAMED,
         (("copy.named_barrier_sync 1, 128", "copy.named_barrier_sync 1, 160"),),
         "copy.named_barrier_sync"),
    Case("bounds-smem", "bounds", "threads read column t + 1: thread 63 reads past the tile",
         TILE, ((READ, "    %t1 = arith.addi %t, %c1 : index\n"
                 + READ.replace("[%c1, %t]", "[%c1, %t1]")),), "memref.load"),
    Case("bounds-gmem", "bounds", "the consumer role indexes %y by the block's thread id, not "
         "the role's", NAMED,
         (("      memref.store %v, %y[%t] : memref<64xf32>\n",
           '      %g = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index\n'
           "      memref.store %v, %y[%g] : memref<64xf32>\n"),), "memref.store", 1),
    Case("bounds-slot", "bounds", "a ring of 3 stages over a buffer of 2 slots", RING,
         (STAGES, ("!copy.barrier<2>", "!copy.barrier<3>")), "copy.async_copy"),
    Case("bounds-tmem", "bounds", "the load reads 4 columns from column 30 of an allocation of "
         "32", TMEM, (("    %w = copy.tmem_load %acc[%c0]", "    %c30 = arith.constant 30 : "
                       "index\n    %w = copy.tmem_load %acc[%c30]"),), "copy.tmem_load"),
    Case("bounds-view", "bounds", "each CTA views its group with a row pitch of 68 the pool "
         "does not have: CTA 1's view runs past its end", VIEW,
         (("strides: [64, 1]\n", "strides: [68, 1]\n"), ("strided<[64, 1]", "strided<[68, 1]")),
         "memref.reinterpret_cast"),
    Case("bounds-map", "bounds", "the map is re-pointed 768 elements into a pool of 1024: its "
         "8x64 box runs past the end", REPOINT,
         (("%c512 = arith.constant 512", "%c512 = arith.constant 768"),), "copy.async_copy", 1),
    Case("DS1", "DS1", "the peer is rank + 1, not rank ^ 1: CTA 1 names CTA 2 of a cluster of 2",
         EXCHANGE, (("%peer = arith.xori %rank, %c1", "%peer = arith.addi %rank, %c1"),),
         "copy.peer_store"),
    Case("MB8", "MB8", "the barrier is invalidated and used again without a reinit", REINIT,
         (("    copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1>\n", ""),),
         "copy.barrier_wait", 1),
    Case("TU4", "TU4", "the map is slot 1 of a workspace of 1", REPOINT,
         (("slot %c0 of 1", "slot %c1 of 1"), ("%c8 = arith.constant 8 : index\n",
           "%c8 = arith.constant 8 : index\n    %c1 = arith.constant 1 : index\n")),
         "copy.tensormap_global"),
    Case("TU10", "TU10", "the map is re-pointed right after the load through it is issued, "
         "before the wait for it", REPOINT, ((REPLACE, ""), (FIRST_MAP_WAIT, REPLACE
                                                               + FIRST_MAP_WAIT)),
         "copy.tensormap_replace"),
    Case("TU11", "TU11", "the second load goes through the rewritten map with no fences",
         REPOINT, ((RELEASE, ""), (ACQUIRE, "")), "copy.async_copy", 1),
    Case("TU12", "TU12", "the acquire has no release of the rewrite before it", REPOINT,
         ((RELEASE, ""),), "copy.tensormap_fence_acquire"),
]  # fmt: skip
KERNELS = list({case.kernel.name: case.kernel for case in CASES}.values())


def test_the_table_covers_every_rule():
    """P1..P13, and every rule id the interpreter raises or reports (interpreter/*.py)."""
    covered = {case.rule for case in CASES}
    assert {f"P{i}" for i in range(1, 14)} <= covered
    assert {"bounds", "DS1", "TU4", "MB8", "TU10", "TU11", "TU12"} <= covered


def the_op(module, name: str, nth: int):
    return [op for op in module.walk() if op.name == name][nth]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_broken_kernel_breaks_its_rule_at_its_op(case: Case):
    module = parse(case.broken)
    wrong = the_op(module, case.op, case.nth)
    found: list[str] = []
    for seed in range(BROKEN_SEEDS):
        for schedule in SCHEDULES:
            args = case.kernel.inputs(np.random.default_rng(seed))
            run = interpreter.run(
                module, *args, grid=case.kernel.grid, schedule=schedule, seed=seed
            )
            for v in run.violations:
                if v.rule == case.rule and wrong in (v.op, v.other):
                    assert f"[{case.rule}]" in str(v)
                    return
            found += [str(v) for v in run.violations]
    pytest.fail(f"{case.id}: no {case.rule} at '{case.op}' #{case.nth}; found {found[:6]}")


def bits(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


@functools.cache
def clean_runs(name: str) -> int:
    """Runs the fixed kernel `name` under every schedule; the schedules it ran clean."""
    kernel = next(k for k in KERNELS if k.name == name)
    module = parse(kernel.text)
    runs = 0
    for seed in range(CLEAN_SEEDS):
        for schedule in SCHEDULES:
            args = kernel.inputs(np.random.default_rng(seed))
            run = interpreter.run(module, *args, grid=kernel.grid, schedule=schedule, seed=seed)
            assert run.violations == [], (name, schedule, seed, [str(v) for v in run.violations])
            for i, expected in kernel.expected(args).items():
                assert np.array_equal(bits(run.arrays[i]), bits(expected)), (name, schedule, seed)
            runs += 1
    return runs


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_fixed_kernel_runs_clean_under_102_schedules(case: Case):
    assert clean_runs(case.kernel.name) == CLEAN_SEEDS * len(SCHEDULES)


def test_an_op_of_the_elected_thread_under_a_condition_it_meets_runs():
    """P10 asks who issues the op: a TMA load under %t == 0 is thread 0's, as the lowering
    issues it, and the kernel runs as the unconditional one does."""
    text = TILE.text.replace(LOAD, guarded(LOAD, "%cond = arith.cmpi eq, %t, %c0 : index"))
    module = parse(text)
    for schedule in SCHEDULES:
        args = TILE.inputs(np.random.default_rng(0))
        run = interpreter.run(module, *args, schedule=schedule)
        assert run.violations == [], [str(v) for v in run.violations]
        assert np.array_equal(bits(run.arrays[1]), bits(TILE.expected(args)[1]))


def test_each_warps_own_release_needs_no_barrier_among_the_warps():
    """CUTLASS's consumer_release: each warp's elected lane arrives (the empty barrier counts
    the warps), so each warp releases its own reads and the warps need not meet first. The
    warpgroup kernel in that form runs clean and bit-exact, and the protocol analysis proves
    it; with one thread's release (P3-warpgroup) the meeting is what orders the other warps'
    reads before the refill."""
    from analysis.protocol import check_protocol

    kernel = WARPGROUP
    text = kernel.text.replace(WARPGROUP_SYNC, "")
    text = text.replace(
        "%empty = copy.barrier_init arrivals 1", "%empty = copy.barrier_init arrivals 4"
    )
    text = text.replace("%empty[%s] issuer elected", "%empty[%s] issuer warps")
    module = parse(text)
    assert check_protocol(module) == []
    for seed in range(BROKEN_SEEDS):
        for schedule in SCHEDULES:
            args = kernel.inputs(np.random.default_rng(seed))
            run = interpreter.run(module, *args, schedule=schedule, seed=seed)
            assert run.violations == [], [str(v) for v in run.violations]
            assert np.array_equal(run.arrays[1], args[0])
