"""Distributed shared memory (copy.peer_store, copy.peer_copy, copy.peer_arrive): every
kernel test_dsmem_gpu.py launches (kernels.dsmem_exchange in each mode, for clusters of 2
and 4) verifies, protocol included, and compiles to PTX and a cubin for sm_90a here; the
PTX has the DSMEM instructions of its mode. A relaxed peer_arrive orders what had
completed, not the threads' own reads: the proof and the interpreter agree on a multicast
ring that releases a slot its threads read."""

from __future__ import annotations

import pytest
from xdsl.dialects import func, gpu, scf

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_dialect.smem import arena_layout
from copy_tools.universe import make_context
from facts.target import TARGETS
from frontends import kernels
from passes.legalize import CopyLegalizePass
from passes.pipeline import compile_module

CASES = [
    (mode, dtype, cluster)
    for mode, dtypes in (
        ("store", ("f32", "i32", "f64")),
        ("reduce", ("i32",)),
        ("bulk", ("f32", "bf16")),
    )
    for dtype in dtypes
    for cluster in (2, 4)
]
"""(mode, element type, cluster size) of each GPU case."""

SHAPES = [(64, 128), (100, 120), (130, 248), (200, 504)]
"""Array shapes of the GPU cases for a cluster of 2 (the columns of a cluster of 4 are
`columns(shape, 4)`): whole tiles, partial edge tiles in rows and columns."""

TILE = (64, 64)

INSTRUCTIONS = {
    "store": "st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v",
    "reduce": "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.",
    "bulk": "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",
}


def columns(shape: tuple[int, int], cluster: int) -> tuple[int, int]:
    """`shape` with its tile columns a multiple of the cluster (partial last tile kept)."""
    tiles = -(-shape[1] // TILE[1])
    extra = (-tiles) % cluster
    return shape[0], shape[1] + extra * TILE[1]


def module(mode: str, dtype: str, cluster: int, shape: tuple[int, int]):
    return kernels.dsmem_exchange(columns(shape, cluster), dtype, TILE, cluster=cluster, mode=mode)


@pytest.mark.parametrize(("mode", "dtype", "cluster"), CASES)
def test_exchange_kernel_compiles(mode, dtype, cluster):
    compiled = compile_module(module(mode, dtype, cluster, SHAPES[1]), make_context(), "sm_90a")
    assert compiled.cubin
    assert INSTRUCTIONS[mode] in compiled.ptx
    assert "mapa.shared::cluster" in compiled.ptx
    assert ".version 8.6" in compiled.ptx  # sm_90a's PTX ISA (st.async needs 8.1 or later)
    arrives = compiled.ptx.count("mbarrier.arrive.release.cluster.shared::cluster.b64")
    assert arrives == (mode != "store")


def test_exchange_sources_are_the_ring():
    assert kernels.exchange_sources((64, 256), TILE, 2) == [1, 0, 3, 2]
    assert kernels.exchange_sources((64, 256), TILE, 4) == [3, 0, 1, 2]


def test_exchange_rejects_what_it_cannot_build():
    with pytest.raises(ValueError, match="multiple of the cluster"):
        kernels.dsmem_exchange((64, 192), "f32", TILE, cluster=2)
    with pytest.raises(ValueError, match="32-bit integers"):
        kernels.dsmem_exchange((64, 128), "f32", TILE, mode="reduce")
    with pytest.raises(ValueError, match="32- or 64-bit"):
        kernels.dsmem_exchange((64, 128), "bf16", TILE, mode="store")


RECEIVE_WAIT_RULES = {"store": ("P7",), "reduce": ("P7",), "bulk": ("P1",)}
"""The rule the protocol analysis gives each mode of the exchange without its receive wait
(see the test's docstring)."""


def without_receive_wait(mode: str, before_return: bool):
    """The exchange of `mode` with its wait for what it receives dropped, or moved to just
    before the return (`before_return`: after the TMA store that sends the received tile)."""
    dtype = "i32" if mode == "reduce" else "f32"
    built = module(mode, dtype, 2, SHAPES[0])
    inits = [op for op in built.walk() if isinstance(op, copy.BarrierInitOp)]
    full = inits[1].result
    (wait,) = [
        op for op in built.walk() if isinstance(op, copy.BarrierWaitOp) and op.barrier is full
    ]
    wait.detach()
    if before_return:
        (ret,) = [op for op in built.walk() if isinstance(op, func.ReturnOp)]
        block = ret.parent_block()
        assert block is not None
        block.insert_op_before(wait, ret)
    else:
        wait.erase()
    return built


@pytest.mark.parametrize("mode", ["store", "reduce", "bulk"])
def test_exchange_without_the_receive_wait_races(mode):
    """The analysis credits each CTA with what it sends: drop the wait for what it receives,
    and the TMA store of the received tile reads it before it lands. The interpreter
    (copy-opt --interpret, grid 2, random, round_robin and adversarial schedules) reports
    that race first in every mode (P3: the async copy reads bytes the peer's DSMEM write
    writes, unordered); the adversarial schedule also finds the peer's write reaching a
    CTA that returned (P7).

    The analysis reports, for bulk, P1 at the TMA store (it reads the tile before the
    peer's copy that fills it, `smem.read_before_first_fill`); for store and reduce, where
    the walk runs CTA 0 to its return before CTA 1 sends, P7 first: real, and its fix (a
    wait before the return) leads to the P1 at the store (the next test)."""
    with pytest.raises(CopyVerifyException) as caught:
        verify_module(without_receive_wait(mode, before_return=False))
    assert caught.value.rules == RECEIVE_WAIT_RULES[mode]


@pytest.mark.parametrize("mode", ["store", "reduce", "bulk"])
def test_receive_wait_after_the_store_is_p1_at_the_store(mode):
    """The receive wait moved after the TMA store that sends the received tile: the store
    reads it before the peer's write lands, P1 at the store with the wait as the fix (it
    was P2 at the peer's write, with a fix that ordered the write after the store's read,
    the reverse of the missing wait)."""
    built = without_receive_wait(mode, before_return=True)
    with pytest.raises(CopyVerifyException) as caught:
        verify_module(built)
    assert caught.value.rules == ("P1",)
    assert "the TMA store reads" in str(caught.value)
    assert "(copy.barrier_wait with parity 0) before the read" in (caught.value.note or "")


LEGAL_TARGETS = ("sm_80", "sm_86")


def folded_fits(built, cluster: int, target: str) -> bool:
    """Whether the cluster folded into one block (each CTA's SMEM once per rank) fits the
    target's SMEM."""
    (kernel,) = [op for op in built.walk() if isinstance(op, func.FuncOp)]
    return cluster * arena_layout(kernel)[1] <= TARGETS[target].max_smem_bytes


def legalized(built, target: str):
    CopyLegalizePass(target=target).apply(make_context(), built)
    return built


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize(("mode", "dtype", "cluster"), CASES)
def test_exchange_legalizes_where_the_folded_cluster_fits(mode, dtype, cluster, target):
    """copy-legalize folds each cluster into one block, a role per CTA (passes/
    legalize_cluster.py): the peer writes become SMEM stores, atomics (red.shared) or the
    role's copy loop, and the result verifies, protocol included, and compiles; where the
    cluster's SMEM exceeds the target's, LG3 says so and the module is left as it was."""
    built = module(mode, dtype, cluster, SHAPES[2])
    before = str(built)
    if not folded_fits(built, cluster, target):
        with pytest.raises(CopyVerifyException, match=f"SMEM .* exceeds .* on {target}") as caught:
            legalized(built, target)
        assert caught.value.rules == ("LG3",)
        assert str(built) == before
        return
    verify_module(legalized(built, target))
    (kernel,) = [op for op in built.walk() if isinstance(op, func.FuncOp)]
    assert "copy.cluster" not in kernel.attributes
    assert str(kernel.attributes["gpu.known_block_size"]) == (
        f"array<i32: {cluster * kernels.TMA_BLOCK}, 1, 1>"
    )
    compiled = compile_module(built, make_context())
    assert "shared::cluster" not in compiled.ptx
    assert "mapa" not in compiled.ptx
    assert ("red.shared.add.u32" in compiled.ptx) == (mode == "reduce")
    assert compiled.ptx.count("barrier.sync") >= cluster  # each role's own barrier
    assert compiled.cubin


def test_exchange_peer_rank_must_be_the_same_in_every_cluster():
    """A peer computed from something other than the CTA's place (here the thread) cannot
    pick the peer's buffers in the folded block: LG3 at the op."""
    built = module("bulk", "f32", 2, SHAPES[0])
    (send,) = [op for op in built.walk() if isinstance(op, copy.PeerCopyOp)]
    tid = gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))
    send.parent_block().insert_op_before(tid, send)
    send.operands[send.operands.index(send.peer)] = tid.result
    with pytest.raises(CopyVerifyException, match="peer rank is not the same") as caught:
        legalized(built, "sm_80")
    assert caught.value.rules == ("LG3",)


PHASE_LOOP = """builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @exchange_twice(%x: memref<256x256xf32>, %y: memref<256x256xf32>)
    attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>,
      copy.cluster = array<i32: 2, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
  scf.for %it = %c0 to %c2 step %c1 {
    %odd = arith.remui %it, %c2 : index
    %p = arith.index_cast %odd : index to i1
    %row = arith.muli %it, %c64 : index
    copy.async_copy %x[%row, %col] to %mine barrier %loaded[%c0]
      : memref<256x256xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %loaded[%c0], %p : !copy.barrier<1>
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
    copy.barrier_wait %full[%c0], %p : !copy.barrier<1>
    copy.fence_async_shared
    copy.async_copy %recv to %y[%row, %col] : memref<64x16xf32, #copy.smem> to memref<256x256xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    copy.barrier_wait %done[%c0], %p : !copy.barrier<1>
  }
  func.return
}
}"""
"""A pair that exchanges two tiles of 64 x 16, one per iteration of a loop over phases:
each iteration loads, sends, waits for what it receives, stores it and meets the peer
(`done`) before the next overwrites the buffers. y's first 128 rows get x's with each pair of
16-column blocks swapped; the rest is not written."""


def test_phase_loop_arrives_once_per_phase():
    """The folded sender's arrival goes after the loop over the tile's pieces, inside the
    loop over phases (which also waits): one arrival per phase, as the bytes were."""
    from xdsl.parser import Parser

    built = Parser(make_context(), PHASE_LOOP).parse_module()
    verify_module(legalized(built, "sm_80"))
    inits = [op.result for op in built.walk() if isinstance(op, copy.BarrierInitOp)]
    loaded, full, done, loaded_1, full_1, done_1 = inits
    phase_loops = [
        op
        for op in built.walk()
        if isinstance(op, scf.ForOp) and op.body.block.args[0].name_hint == "it"
    ]
    assert len(phase_loops) == 2  # one per role
    for loop, mine, theirs in zip(
        phase_loops, (full, full_1), ((full_1, done_1), (full, done)), strict=True
    ):
        arrivals = [
            op.barrier for op in loop.body.block.ops if isinstance(op, copy.BarrierArriveOp)
        ]
        assert arrivals == [mine, *theirs]
    assert [init.owner.arrivals.value.data for init in inits] == [128, 2, 1] * 2
    assert compile_module(built, make_context()).cubin


@pytest.mark.parametrize("target", LEGAL_TARGETS)
@pytest.mark.parametrize("cluster", [2, 4, 8])
@pytest.mark.parametrize("tile", [(8, 64), (32, 64), (64, 128)], ids=lambda t: f"{t[0]}x{t[1]}")
@pytest.mark.parametrize(("mode", "dtype"), [("store", "f32"), ("bulk", "bf16"), ("reduce", "i32")])
def test_every_exchange_folds_or_names_what_does_not_fit(mode, dtype, tile, cluster, target):
    """Over tiles and clusters: the folded kernel verifies (protocol included) and compiles
    with one block of cluster x 128 threads, or copy-legalize names the SMEM it would need
    (LG3) and leaves the module as it was."""
    # Rows of 16-byte multiples (TMA), a partial last tile column, whole clusters of tiles.
    shape = (100, tile[1] * cluster * 2 - 8)
    try:
        built = kernels.dsmem_exchange(shape, dtype, tile, cluster=cluster, mode=mode)
    except ValueError as exc:  # the builder's own limits (a tile too small for its threads)
        pytest.skip(str(exc))
    before = str(built)
    if not folded_fits(built, cluster, target):
        with pytest.raises(CopyVerifyException, match="SMEM") as caught:
            legalized(built, target)
        assert caught.value.rules == ("LG3",)
        assert str(built) == before
        return
    legalized(built, target)
    compiled = compile_module(built, make_context())  # verifies it first, protocol included
    assert f".reqntid {cluster * kernels.TMA_BLOCK}, 1, 1" in compiled.ptx
    assert "shared::cluster" not in compiled.ptx


CLUSTER_Y = """builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
func.func @exchange_along_y(%x: memref<256x256xf32>, %y: memref<256x256xf32>)
    attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>,
      copy.cluster = array<i32: 1, 2, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %false = arith.constant false
  %bx = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %col = arith.muli %bx, %c16 : index
  %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  %mine = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %recv = copy.alloc_smem : memref<64x16xf32, #copy.smem>
  %loaded = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  copy.async_copy %x[%c0, %col] to %mine barrier %loaded[%c0]
    : memref<256x256xf32> to memref<64x16xf32, #copy.smem>, !copy.barrier<1>
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
  copy.async_copy %recv to %y[%c0, %col] : memref<64x16xf32, #copy.smem> to memref<256x256xf32>
  copy.commit_group bulk
  copy.wait_group bulk 0
  func.return
}
}"""
"""A pair along y (copy.cluster = 1 x 2): the CTA at block (0, b) loads the 64 x 16 tile of x
at column 16 b and sends it to its peer's %recv; each stores what it receives at its own
column. y's first 64 rows get x's with each pair of 16-column blocks swapped; the rest is
not written."""


def test_cluster_along_y_folds():
    """The first block of each cluster in y runs it; role 1's block id y is that block's + 1."""
    from xdsl.parser import Parser

    built = Parser(make_context(), CLUSTER_Y).parse_module()
    verify_module(legalized(built, "sm_80"))
    (ws,) = [op for op in built.walk() if isinstance(op, copy.WarpSpecializeOp)]
    ids = [op for op in ws.walk() if isinstance(op, gpu.BlockIdOp)]
    assert {op.dimension.data for op in ids} == {gpu.DimensionEnum.Y}
    assert compile_module(built, make_context()).cubin


RING = """
func.func @ring(%x: memref<256x64xf16>, %y: memref<256xf16>) attributes {
    gpu.known_block_size = array<i32: 64, 1, 1>, copy.cluster = array<i32: 2, 1, 1>,
    copy.target = #copy.target<"sm_90a">} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %buf = copy.alloc_smem : memref<64x64xf16, #copy.smem<swizzle = 128>>
  %full = copy.barrier_init arrivals 1 : !copy.barrier<1>
  %empty = copy.barrier_init arrivals 2 : !copy.barrier<1>
  %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
  %rank = arith.remui %bx, %c2 : index
  %peer = arith.xori %rank, %c1 : index
  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
  scf.for %i = %c0 to %c4 step %c1 {
    %ip = arith.remui %i, %c2 : index
    %phase = arith.cmpi ne, %ip, %c0 : index
    %acquire = arith.xori %phase, %true : i1
    copy.barrier_wait %empty[%c0], %acquire : !copy.barrier<1>
    copy.barrier_arrive_expect_tx %full[%c0], 8192 : !copy.barrier<1>
    %row = arith.muli %i, %c64 : index
    copy.async_copy %x[%row, %c0] to %buf barrier %full[%c0]
        {arrive = false, collective = array<i64: 0>}
        : memref<256x64xf16> to memref<64x64xf16, #copy.smem<swizzle = 128>>, !copy.barrier<1>
    copy.barrier_wait %full[%c0], %phase : !copy.barrier<1>
    %v = memref.load %buf[%t, %c0] : memref<64x64xf16, #copy.smem<swizzle = 128>>
    %out = arith.addi %row, %t : index
    memref.store %v, %y[%out] : memref<256xf16>
    gpu.barrier
    copy.barrier_arrive %empty[%c0] issuer elected : !copy.barrier<1>
    copy.peer_arrive %empty[%c0] peer %peer : !copy.barrier<1>
  }
  // The last phase of %empty (3, parity 1): the peer's last release has arrived.
  copy.barrier_wait %empty[%c0], %true : !copy.barrier<1>
  func.return
}
"""
"""A cluster of 2 whose threads read each multicast slot with loads and release it to the
peer (lit_tests/dialects/copy/invalid-protocol-cluster.mlir has its relaxed form)."""


@pytest.mark.parametrize("relaxed", [False, True])
def test_a_relaxed_release_does_not_order_the_threads_reads(relaxed):
    """With the release the ring is proven and runs race-free; relaxed, the peer's next
    multicast may land while this CTA's threads still read the slot: the proof rejects it
    (P3) and the interpreter, running it, reports the race."""
    import numpy as np
    from xdsl.parser import Parser

    import interpreter

    text = RING.replace(" peer %peer :", " peer %peer relaxed :") if relaxed else RING
    assert (text != RING) == relaxed
    module = Parser(make_context(), text).parse_module()
    x = (np.arange(256 * 64) % 251).astype(np.float16).reshape(256, 64)
    y = np.zeros(256, np.float16)
    found = set()
    for seed in range(4):
        run = interpreter.run(module, x, y, grid=(2, 1, 1), seed=seed)
        found |= {v.rule for v in run.violations}
    if not relaxed:
        verify_module(module)
        assert found == set()
        return
    with pytest.raises(CopyVerifyException) as err:
        verify_module(module)
    assert "P3" in err.value.rules
    assert "P3" in found
