"""The Python builder API: each op's keyword constructor builds IR that verifies, prints in
the custom form and parses back; a bad configuration raises a CopyVerifyException with a
note (the same error copy-opt prints)."""

from __future__ import annotations

import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    VectorType,
    f32,
    i1,
    i32,
)
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException

GMEM = MemRefType(f32, [1024, 1024])
SMEM = MemRefType(f32, [2, 64, 32], memory_space=copy.SmemSpaceAttr(128))


def kernel(arg_types, build, *, target="sm_90a", cluster=None) -> ModuleOp:
    """A module with one function whose body `build(builder, args)` fills."""
    block = Block(arg_types=arg_types)
    builder = Builder(InsertPoint.at_end(block))
    build(builder, block.args)
    builder.insert(func.ReturnOp())
    fn = func.FuncOp("k", FunctionType.from_lists(arg_types, []), Region(block))
    if cluster is not None:
        fn.attributes["copy.cluster"] = DenseArrayBase.from_list(i32, cluster)
    module = ModuleOp([fn])
    module.attributes["copy.target"] = copy.TargetAttr(target)
    return module


def tile_copy(b: Builder, args) -> None:
    x, y, parity = args
    c0 = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType())).result
    buf = b.insert(copy.AllocSmemOp(SMEM)).result
    bars = b.insert(copy.BarrierInitOp(2, arrivals=1)).result
    b.insert(
        copy.AsyncCopyOp(
            x, buf, src_indices=[c0, c0], dst_indices=[c0], barrier=bars, barrier_index=c0
        )
    )
    b.insert(copy.BarrierWaitOp(bars, c0, parity))
    b.insert(copy.FenceAsyncSharedOp())
    b.insert(copy.AsyncCopyOp(buf, y, src_indices=[c0], dst_indices=[c0, c0], reduction="add"))
    b.insert(copy.CommitGroupOp("bulk"))
    b.insert(copy.WaitGroupOp("bulk", 0, read_only=True))
    b.insert(copy.PrefetchOp(x, [c0, c0], [64, 64]))


def test_tile_copy_kernel_verifies_and_round_trips(ctx):
    module = kernel([GMEM, GMEM, i1], tile_copy)
    module.verify()
    text = str(module)
    assert "copy.async_copy" in text
    assert "reduce add" in text
    reparsed = Parser(ctx, text).parse_module()
    reparsed.verify()
    assert str(reparsed) == text


def test_derived_facts_of_a_copy():
    module = kernel([GMEM, GMEM, i1], tile_copy)
    load, store = [op for op in module.walk() if isinstance(op, copy.AsyncCopyOp)]
    assert load.is_load
    assert not store.is_load
    g = load.geometry()
    assert g.box_shape == (64, 32)
    assert g.box_bytes == 64 * 32 * 4
    assert g.swizzle_bytes == 128
    assert load.arrives
    assert load.oob_mode == copy.OOBMode.ZEROS
    assert store.oob_mode == copy.OOBMode.UNDEFINED
    assert load.resolved_implementation() == copy.Implementation.TMA


def test_geometry_of_a_multicast_load_and_a_prefetch():
    def build(b, args):
        c0 = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType())).result
        buf = b.insert(copy.AllocSmemOp(SMEM)).result
        bars = b.insert(copy.BarrierInitOp(2, arrivals=1)).result
        b.insert(
            copy.AsyncCopyOp(
                args[0],
                buf,
                src_indices=[c0, c0],
                dst_indices=[c0],
                barrier=bars,
                barrier_index=c0,
                collective=[0],
            )
        )
        b.insert(copy.PrefetchOp(args[0], [c0, c0], [64]))

    module = kernel([GMEM], build, cluster=[2, 1, 1])
    module.verify()
    (load,) = [op for op in module.walk() if isinstance(op, copy.AsyncCopyOp)]
    g = load.geometry()
    assert g.cluster == (2, 1, 1)
    assert g.multicast == copy.MulticastSplit(dim=0, size=2, box_shape=(64, 32))
    assert g.issued_box == g.gmem_box == (32, 32)
    assert g.share_bytes == 32 * 128
    assert g.box_bytes == 64 * 32 * 4
    assert (g.element_bits, g.row_bytes, g.gmem_dim(0)) == (32, 128, 0)
    assert (g.gmem_argument, g.tensor_map_type, g.tensor_map_oob) == (0, "FLOAT32", "zeros")
    (prefetch,) = [op for op in module.walk() if isinstance(op, copy.PrefetchOp)]
    p = prefetch.geometry()
    assert (p.gmem_box, p.swizzle_bytes, p.tensor_map_type) == ((1, 64), 16, "FLOAT32")


def test_target_chooses_the_implementation():
    def build(b, args):
        c0 = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType())).result
        buf = b.insert(
            copy.AllocSmemOp(MemRefType(f32, [64, 32], memory_space=copy.SmemSpaceAttr()))
        ).result
        b.insert(copy.AsyncCopyOp(args[0], buf, src_indices=[c0, c0], cache="cg"))

    module = kernel([GMEM], build, target="sm_80")
    module.verify()
    (op,) = [o for o in module.walk() if isinstance(o, copy.AsyncCopyOp)]
    assert op.resolved_implementation() == copy.Implementation.CP_ASYNC


def test_seed_error_from_the_builder_carries_a_note():
    def build(b, args):
        c0 = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType())).result
        buf = b.insert(
            copy.AllocSmemOp(MemRefType(f32, [64, 32], memory_space=copy.SmemSpaceAttr()))
        ).result
        b.insert(
            copy.AsyncCopyOp(
                buf, args[0], dst_indices=[c0, c0], implementation="cp_async", reduction="add"
            )
        )

    module = kernel([GMEM], build)
    with pytest.raises(CopyVerifyException) as info:
        module.verify()
    assert str(info.value) == "Only the TMA implementation supports reductions"
    assert info.value.note
    assert "impl tma" in info.value.note


def test_tmem_ops_build_on_sm100a():
    tmem = MemRefType(f32, [128, 128], memory_space=copy.TmemSpaceAttr())

    def build(b, args):
        col = args[0]
        acc = b.insert(copy.TmemAllocOp(tmem)).result
        load = b.insert(
            copy.TmemLoadOp(acc, col, shape="shape_32x32b", num=8, result_type=VectorType(f32, [8]))
        )
        b.insert(copy.TmemWaitOp("load"))
        b.insert(copy.TmemStoreOp(load.results[0], acc, col, shape="shape_32x32b", num=8))
        b.insert(copy.TmemWaitOp("store"))
        tile = b.insert(
            copy.AllocSmemOp(MemRefType(f32, [128, 8], memory_space=copy.SmemSpaceAttr(32)))
        ).result
        b.insert(copy.SmemToTmemOp(tile, acc, col, shape="shape_128x256b"))
        b.insert(copy.TmemDeallocOp(acc))

    module = kernel([IndexType()], build, target="sm_100a")
    module.verify()
    with pytest.raises(
        VerifyException,
        match=r"needs a target with tcgen05 \(TMEM\) \(sm_100a, sm_100f, sm_103a, sm_110a, "
        r"sm_110f\)",
    ):
        kernel([IndexType()], build, target="sm_90a").verify()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"collective": [0]}, "needs a cluster larger than 1"),
        (
            {"oob": "nan", "implementation": "cp_async"},
            "only supports oob promise_in_bounds or zeros",
        ),
        ({"swizzle": 64}, "TMA descriptor layout must match shared layout"),
    ],
)
def test_constructor_keywords_are_verified(kwargs, message):
    def build(b, args):
        c0 = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType())).result
        buf = b.insert(copy.AllocSmemOp(SMEM)).result
        bars = b.insert(copy.BarrierInitOp(2)).result
        barrier = (
            {}
            if kwargs.get("implementation") == "cp_async"
            else {"barrier": bars, "barrier_index": c0}
        )
        b.insert(
            copy.AsyncCopyOp(
                args[0], buf, src_indices=[c0, c0], dst_indices=[c0], **barrier, **kwargs
            )
        )

    with pytest.raises(CopyVerifyException, match=message):
        kernel([GMEM], build).verify()
