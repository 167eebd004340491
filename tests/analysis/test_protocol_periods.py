"""The steady-state proof of a loop whose trip count is unknown rests on what the protocol
reads in it repeating with the lap (analysis/protocol/periods.py): a condition that repeats
every 64 iterations, or changes at iteration 100, beyond the iterations the analysis walks,
is a warning that names it, never a silent proof; a loop whose slots, parities and
conditions repeat within a few iterations (ring slots, a tile's last k-block, the prefetch
of the next iteration under i + 1 < n, a phase bit or a counter the loop carries) is
proven."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from analysis.protocol import check_protocol
from copy_tools.universe import make_context

HEAD = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%a: memref<?x64xf32>, %c: memref<?x64xf32>, %n: index, %m: index)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %t = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %ring = copy.alloc_smem : memref<4x64x64xf32, #copy.smem>
    %out = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<4>
{body}
    copy.wait_group bulk 0
    func.return
  }}
}}
"""

# One loop over every k-block of every tile: the ring's slot and parity from i, the
# tile's epilogue (a TMA store of %out) when {cond}; without the wait after the store, the
# next tile's first k-block rewrites %out while the store may still read it (P2).
FLAT = """
    %cl = arith.constant {value} : index
    scf.for %i = %c0 to %n step %c1 {{
      %s = arith.remui %i, %c4 : index
      %lap = arith.divui %i, %c4 : index
      %pm = arith.remui %lap, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index
      %row = arith.muli %i, %c64 : index
      copy.async_copy %a[%row, %c0] to %ring[%s] barrier %bars[%s]
        : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
      copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
      %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
      memref.store %v, %out[%c0, %t] : memref<64x64xf32, #copy.smem>
      "gpu.barrier"() : () -> ()
      {cond}
      scf.if %epilogue {{
        copy.fence_async_shared
        "gpu.barrier"() : () -> ()
        copy.async_copy %out to %c[%row, %c0] : memref<64x64xf32, #copy.smem> to memref<?x64xf32>
        copy.commit_group bulk
        {wait}
      }}
    }}
"""

LAST_OF = """%kb = arith.remui %i, %cl : index
      %km = arith.subi %cl, %c1 : index
      %epilogue = arith.cmpi eq, %kb, %km : index"""
"""The last k-block of a tile of %cl k-blocks: i mod %cl == %cl - 1."""

AT = "%epilogue = arith.cmpi eq, %i, %cl : index"
"""Only iteration %cl."""

WAIT = "copy.wait_group bulk 0 read_only"


def findings(body: str) -> list[tuple[str, str, str]]:
    module = Parser(make_context(), HEAD.format(body=body)).parse_module()
    return [(f.severity, f.op.name, str(f)) for f in check_protocol(module)]


def flat(cond: str, value: int, wait: str) -> list[tuple[str, str, str]]:
    return findings(FLAT.format(cond=cond, value=value, wait=wait))


@pytest.mark.parametrize("blocks", [2, 8])
def test_a_tiles_last_k_block_within_the_walk_is_proven(blocks):
    assert flat(LAST_OF, blocks, WAIT) == []
    [(severity, op, message)] = flat(LAST_OF, blocks, "")
    assert (severity, op) == ("error", "memref.store")
    assert "while a TMA store from it may still be reading it" in message


@pytest.mark.parametrize("wait", [WAIT, ""])
def test_a_period_longer_than_the_walk_is_a_warning_never_a_proof(wait):
    """64 k-blocks a tile: the epilogue comes once every 64 iterations, beyond the
    iterations walked; with or without the mistake, the loop is not proven."""
    [(severity, op, message)] = flat(LAST_OF, 64, wait)
    assert (severity, op) == ("warning", "scf.for")
    assert "'arith.remui' repeats every 64 iterations" in message


def test_a_condition_that_changes_beyond_the_walk_is_a_warning():
    [(severity, op, message)] = flat(AT, 100, "")
    assert (severity, op) == ("warning", "scf.for")
    assert "'arith.cmpi' holds the same value only from iteration 101 on" in message


def test_a_condition_that_changes_within_the_walk_is_followed():
    assert flat(AT, 5, WAIT) == []
    [(severity, op, _)] = flat(AT, 5, "")
    assert (severity, op) == ("error", "memref.store")


# Double buffering: the load of iteration i + 1 is issued under i + 1 < n before the
# threads read slot i mod 2; only the last iteration issues none.
PREFETCH = """
    %has = arith.cmpi sgt, %n, %c0 : index
    scf.if %has {{
      copy.async_copy %a[%c0, %c0] to %ring[%c0] barrier %bars[%c0]
        : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
    }}
    scf.for %i = %c0 to %n step %c1 {{
      %i1 = arith.addi %i, %c1 : index
      %more = arith.cmpi {pred}, %i1, %n : index
      scf.if %more {{
        %s1 = arith.remui %i1, %c2 : index
        %row = arith.muli %i1, %c64 : index
        copy.async_copy %a[%row, %c0] to %ring[%s1] barrier %bars[%s1]
          : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
      }}
      %s = arith.remui %i, %c2 : index
      %lap = arith.divui %i, %c2 : index
      %pm = arith.remui %lap, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index
      copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
      %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
      memref.store %v, %c[%i, %t] : memref<?x64xf32>
      "gpu.barrier"() : () -> ()
    }}
"""


def test_the_prefetch_of_the_next_iteration_is_proven():
    assert findings(PREFETCH.format(pred="slt")) == []


def test_a_prefetch_one_past_the_end_is_caught():
    """i + 1 <= n issues a load in the last iteration that nothing waits for (P7, at the
    copy, the comparison and the return its notes)."""
    found = findings(PREFETCH.format(pred="sle"))
    assert [(s, op) for s, op, _ in found] == [("error", "copy.async_copy")], found


# A ring position the loop carries, as CUTLASS's PipelineState: the slot wraps to 0 after
# the last stage and the phase flips then.
CARRIED = """
    %false = arith.constant false
    %true = arith.constant true
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%slot = %c0, %phase = %false)
        -> (index, i1) {{
      %row = arith.muli %i, %c64 : index
      copy.async_copy %a[%row, %c0] to %ring[%slot] barrier %bars[%slot]
        : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
      copy.barrier_wait %bars[%slot], %phase : !copy.barrier<4>
      %v = memref.load %ring[%slot, %c0, %t] : memref<4x64x64xf32, #copy.smem>
      memref.store %v, %c[%i, %t] : memref<?x64xf32>
      "gpu.barrier"() : () -> ()
      %next = arith.addi %slot, %c1 : index
      %wrap = arith.cmpi eq, %next, %c{stages} : index
      %slot2 = arith.select %wrap, %c0, %next : index
      %flip = arith.xori %phase, %true : i1
      %phase2 = arith.select %wrap, %flip, %phase : i1
      scf.yield %slot2, %phase2 : index, i1
    }}
"""


def test_a_ring_position_the_loop_carries_is_proven():
    assert findings(CARRIED.format(stages=4)) == []


def test_a_carried_phase_that_flips_every_iteration_is_caught():
    """The phase flips each iteration instead of at the wrap: slot 1's first wait is for
    parity 1, which passes before its first load lands (P1 at the read)."""
    broken = CARRIED.format(stages=4).replace("select %wrap, %flip", "select %true, %flip")
    found = findings(broken)
    assert [(s, op) for s, op, _ in found] == [("error", "memref.load")], found


# A counter the loop carries (its k-block number across tiles), the slot from it.
COUNTER = """
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%k = %m) -> (index) {{
      %s = arith.remui %k, %c4 : index
      %lap = arith.divui %k, %c4 : index
      %pm = arith.remui %lap, %c2 : index
      %p = arith.cmpi ne, %pm, %c0 : index
      %row = arith.muli %i, %c64 : index
      copy.async_copy %a[%row, %c0] to %ring[%s] barrier %bars[%s]
        : memref<?x64xf32> to memref<4x64x64xf32, #copy.smem>, !copy.barrier<4>
      copy.barrier_wait %bars[%s], %p : !copy.barrier<4>
      %v = memref.load %ring[%s, %c0, %t] : memref<4x64x64xf32, #copy.smem>
      memref.store %v, %c[%i, %t] : memref<?x64xf32>
      "gpu.barrier"() : () -> ()
      %k1 = arith.addi %k, %c1 : index
      scf.yield %k1 : index
    }}
"""


def test_a_value_computed_from_an_unknown_in_the_loop_is_a_warning_naming_it():
    """A condition on i * %m == %n: the driver binds a block-uniform unknown once for the
    whole run, which would stand for every iteration alike: the loop is not proven."""
    body = FLAT.format(
        cond="%x = arith.muli %i, %m : index\n      %epilogue = arith.cmpi eq, %x, %n : index",
        value=0,
        wait=WAIT,
    )
    found = findings(body)
    assert [(s, op) for s, op, _ in found] == [("warning", "scf.for")], found
    assert "'arith.cmpi' compares a value that grows with the iteration" in found[0][2]
