"""`kernels.tma_copy_pipelined` without a GPU: for every stage count the built module verifies
(tests/frontends/test_pipeline_gpu.py compiles the kernels it launches), and its schedule,
run block by block in a model of TMA's asynchrony (barrier phases, bulk groups still reading
their SMEM), never waits forever, never refills a slot that a store may still read or whose
tile was not stored yet, and stores each tile once with its own data. Bad stage counts are
ValueErrors that say what to pass instead."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from xdsl.dialects import arith, func, gpu, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from copy_dialect import ops as copy
from frontends import kernels

INDEX_MASK = (1 << 64) - 1
CMPI = {
    0: lambda a, b: a == b,
    1: lambda a, b: a != b,
    6: lambda a, b: a < b,
    7: lambda a, b: a <= b,
    8: lambda a, b: a > b,
    9: lambda a, b: a >= b,
}
"""arith.cmpi eq, ne, ult, ule, ugt, uge (the model's values are unsigned)."""


class Hang(AssertionError):
    """A barrier_wait for a phase that no issued load completes: the GPU would spin forever."""


class Race(AssertionError):
    """A copy that reads or overwrites SMEM it must not touch yet."""


@dataclass
class Slot:
    tile: tuple[int, int] | None = None
    """Origin in x of the tile the slot holds (its last load)."""
    phases: int = 0
    """Completed phases of the slot's barrier: one per load."""
    waited: bool = False
    """Whether a barrier_wait saw the last load land."""
    stored: bool = True
    """Whether a store has taken the slot's tile (a fresh slot has nothing to lose)."""


@dataclass
class Machine:
    """One block's view of the GPU: a load lands at once (the soonest it could), a store
    keeps reading its slot until a `wait_group` retires its group."""

    block_id: int
    grid: int
    slots: dict[int, Slot] = field(default_factory=dict)
    open_group: list[int] = field(default_factory=list)
    groups: list[list[int]] = field(default_factory=list)
    stored: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """y tile origin -> x tile origin of the data written there."""
    values: dict[SSAValue, int] = field(default_factory=dict)

    def reading(self) -> set[int]:
        return {s for group in [*self.groups, self.open_group] for s in group}

    def run(self, block: Block) -> None:
        for op in block.ops:
            self.step(op)

    def origin(self, indices) -> tuple[int, int]:
        row, col = (self.values[i] for i in indices)
        return row, col

    def step(self, op: Operation) -> None:
        v = self.values
        match op:
            case arith.ConstantOp():
                assert isinstance(op.value, IntegerAttr)
                v[op.result] = op.value.value.data
            case arith.AddiOp():
                v[op.result] = (v[op.lhs] + v[op.rhs]) & INDEX_MASK
            case arith.SubiOp():
                v[op.result] = (v[op.lhs] - v[op.rhs]) & INDEX_MASK
            case arith.MuliOp():
                v[op.result] = (v[op.lhs] * v[op.rhs]) & INDEX_MASK
            case arith.DivUIOp():
                v[op.result] = v[op.lhs] // v[op.rhs]
            case arith.RemUIOp():
                v[op.result] = v[op.lhs] % v[op.rhs]
            case arith.AndIOp():
                v[op.result] = v[op.lhs] & v[op.rhs]
            case arith.CmpiOp():
                v[op.result] = int(CMPI[op.predicate.value.data](v[op.lhs], v[op.rhs]))
            case gpu.BlockIdOp():
                v[op.result] = self.block_id
            case gpu.GridDimOp():
                v[op.result] = self.grid
            case copy.AllocSmemOp() | copy.BarrierInitOp():
                v[op.result] = 0
            case copy.AsyncCopyOp() if op.is_load:
                (slot,) = (v[i] for i in op.dst_indices)
                assert op.barrier_index is not None
                assert v[op.barrier_index] == slot
                if slot in self.reading():
                    raise Race(f"a load refills slot {slot} while a store reads it")
                s = self.slots.setdefault(slot, Slot())
                if not s.stored:
                    raise Race(f"a load overwrites tile {s.tile} before its store")
                s.tile, s.phases = self.origin(op.src_indices), s.phases + 1
                s.waited = s.stored = False
            case copy.AsyncCopyOp():
                (slot,) = (v[i] for i in op.src_indices)
                s = self.slots.get(slot)
                if s is None or not s.waited:
                    raise Race(f"a store reads slot {slot} before a wait saw its load land")
                target = self.origin(op.dst_indices)
                assert target not in self.stored, f"tile {target} stored twice"
                self.stored[target] = s.tile  # type: ignore[assignment]
                s.stored = True
                self.open_group.append(slot)
            case copy.BarrierWaitOp():
                slot = 0 if op.index is None else v[op.index]
                s = self.slots.setdefault(slot, Slot())
                # try_wait.parity P returns once the phase of parity P completed, i.e. while
                # the barrier's current (incomplete) phase has the other parity.
                if s.phases % 2 == v[op.parity]:
                    raise Hang(
                        f"waits for parity {v[op.parity]} of slot {slot}, which has completed "
                        f"{s.phases} phases and gets no further load"
                    )
                s.waited = True
            case copy.CommitGroupOp():
                self.groups.append(self.open_group)
                self.open_group = []
            case copy.WaitGroupOp():
                pending = op.pending.value.data
                self.groups = self.groups[len(self.groups) - pending :] if pending else []
            case scf.IfOp():
                if v[op.cond]:
                    self.run(op.true_region.block)
            case scf.ForOp():
                for i in range(v[op.lb], v[op.ub], v[op.step]):
                    v[op.body.block.args[0]] = i
                    self.run(op.body.block)
            case scf.YieldOp() | func.ReturnOp():
                pass
            case _:
                raise AssertionError(f"the model has no rule for {op.name}")


def run_blocks(module: ModuleOp, grid: int) -> dict[tuple[int, int], tuple[int, int]]:
    """Every block of a 1-D `grid` through the model; the tiles written, over all blocks."""
    (fn,) = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    written: dict[tuple[int, int], tuple[int, int]] = {}
    for block_id in range(grid):
        m = Machine(block_id, grid)
        m.run(fn.body.block)
        assert not m.groups, "stores still in flight at the end"
        assert not m.open_group, "stores never committed"
        assert all(s.stored for s in m.slots.values()), "a loaded tile was never stored"
        assert not written.keys() & m.stored.keys(), "two blocks store the same tile"
        written |= m.stored
    return written


def tiles(shape, tile) -> set[tuple[int, int]]:
    return {(r, c) for r in range(0, shape[0], tile[0]) for c in range(0, shape[1], tile[1])}


SHAPE, TILE = (3 * 16, 4 * 32), (16, 32)  # 12 tiles
GRIDS = [1, 2, 5, 11, 12, 13, 20]  # many tiles per block ... more blocks than tiles


@pytest.mark.parametrize("stages", range(1, 7))
@pytest.mark.parametrize("grid", GRIDS)
def test_schedule_never_hangs_races_or_loses_a_tile(stages, grid):
    module = kernels.tma_copy_pipelined(SHAPE, "f32", TILE, stages=stages)
    written = run_blocks(module, grid)
    assert written == {t: t for t in tiles(SHAPE, TILE)}


def wait_groups(module: ModuleOp) -> list[tuple[int, bool, bool]]:
    """(pending, read_only, inside the loop) of each wait_group, in order."""
    return [
        (op.pending.value.data, op.is_read_only, isinstance(op.parent_op(), scf.IfOp))
        for op in module.walk()
        if isinstance(op, copy.WaitGroupOp)
    ]


@pytest.mark.parametrize("stages", range(1, 7))
def test_refill_waits_for_all_but_min_1_stages_minus_1_stores(stages):
    module = kernels.tma_copy_pipelined(SHAPE, "f32", TILE, stages=stages)
    assert wait_groups(module) == [(min(1, stages - 1), True, True), (0, False, False)]


def test_one_stage_ring_with_a_store_still_reading_is_caught():
    """The model catches the one-stage bug's race: refilling the only slot after
    `wait_group bulk 1 read_only`, which lets the store just committed read on."""
    module = kernels.tma_copy_pipelined(SHAPE, "f32", TILE, stages=1)
    (wait,) = [op for op in module.walk() if isinstance(op, copy.WaitGroupOp) and op.is_read_only]
    wait.properties["pending"] = IntegerAttr(1, 32)
    with pytest.raises(Race, match="refills slot 0 while a store reads it"):
        run_blocks(module, 1)


def test_a_ring_that_never_loads_the_next_tile_is_caught():
    """The model catches the one-stage bug's hang: the refill is dropped, so iteration 1
    waits for a load that is never issued."""
    module = kernels.tma_copy_pipelined(SHAPE, "f32", TILE, stages=1)
    loop = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    (refill,) = [op for op in loop.body.block.ops if isinstance(op, scf.IfOp)]
    refill.detach()
    refill.erase()
    with pytest.raises(Hang, match="waits for parity 1 of slot 0"):
        run_blocks(module, 1)


@pytest.mark.parametrize("stages", range(1, 7))
@pytest.mark.parametrize(
    ("shape", "dtype", "tile"),
    [
        ((1600, 864), "i16", (100, 48)),
        ((1600, 896), "i16", (100, 64)),
        ((256, 512), "f16", (32, 64)),
    ],
    ids=str,
)
def test_every_stage_count_verifies(shape, dtype, tile, stages):
    # tests/frontends/test_pipeline_gpu.py compiles these (and more) to cubins.
    kernels.tma_copy_pipelined(shape, dtype, tile, stages=stages).verify()


def test_stages_limit_is_the_verifiers_smem_budget():
    # 128x128 f32 tiles are 64 KiB: 3 slots and their barriers fit sm_90a's 232448 bytes.
    assert kernels.pipeline_stages_limit((128, 128), "f32", "sm_90a") == 3
    assert kernels.pipeline_stages_limit((128, 128), "f32", "sm_86") == 1
    # Small tiles: the barrier group (at most 32 barriers) is the limit.
    assert kernels.pipeline_stages_limit((8, 16), "f32") == copy.MAX_BARRIERS
    # The largest ring the builder allows verifies; one more slot breaks TR6.
    kernels.tma_copy_pipelined((1024, 1024), "f32", (128, 128), stages=3).verify()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stages": 0}, r"expected at least 1 pipeline stage, got stages=0; use stages=1 to 3"),
        ({"stages": -2}, r"got stages=-2; use stages=1 to 3"),
        (
            {"stages": 4},
            r"expected at most 3 pipeline stages of \(128, 128\) f32 tiles \(the ring and its "
            r"barriers must fit the 232448 bytes of SMEM a block can use on sm_90a\), got "
            r"stages=4; use stages=3 or fewer, or a smaller tile",
        ),
        (
            {"stages": 2, "target": "sm_86"},
            r"expected at most 1 pipeline stages .* 101376 bytes .* on sm_86\), got stages=2",
        ),
        (
            {"tile": (256, 256), "stages": 1},
            r"expected a tile whose SMEM slot fits the 232448 bytes of SMEM a block can use on "
            r"sm_90a, got a \(256, 256\) tile of f32; use a smaller tile",
        ),
        (
            {"tile": (8, 16), "stages": 33},
            r"expected at most 32 pipeline stages \(one !copy.barrier group holds at most 32 "
            r"barriers\), got stages=33; use stages=32 or fewer",
        ),
        ({"target": "sm_91"}, r"unknown target 'sm_91': expected one of sm_80, "),
    ],
)
def test_bad_rings_are_value_errors(kwargs, message):
    args = {"tile": (128, 128), "stages": 3} | kwargs
    with pytest.raises(ValueError, match=message):
        kernels.tma_copy_pipelined((1024, 1024), "f32", **args)


def test_stage_errors_name_a_stage_count_that_verifies():
    """Following the error (`use stages=N or fewer`) builds a module that verifies."""
    with pytest.raises(ValueError, match=r"use stages=\d+ or fewer") as info:
        kernels.tma_copy_pipelined((1600, 864), "i16", (100, 48), stages=99)
    fix = int(re.search(r"use stages=(\d+)", str(info.value)).group(1))  # type: ignore[union-attr]
    kernels.tma_copy_pipelined((1600, 864), "i16", (100, 48), stages=fix).verify()
