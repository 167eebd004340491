"""L2 cache policies (copy.async_copy's `l2`): the builders' `cache_hints` take the names,
each named policy reaches the TMA instruction's `.L2::cache_hint` operand as its encoding;
evict_unchanged and fraction-based policies are made once per kernel by createpolicy; the
tensor map's L2 promotion reaches the ABI and the runtime's encoder; the tensor maps are
prefetched at the kernel's entry; and the kernels test_cache_policy_gpu.py launches compile
here."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
from xdsl.dialects.builtin import IntegerAttr, i64

from copy_dialect import ops as copy
from copy_dialect.attributes import L2_POLICY_ENCODING, L2_PROMOTIONS, CachePolicy, L2Policy
from copy_tools import runtime
from copy_tools.universe import make_context
from facts.abi import KernelAbi, TensorMapParam
from frontends import kernels
from passes.pipeline import compile_module
from runtime import tensor_map

NAMED = [p for p in L2Policy if p in L2_POLICY_ENCODING]
"""The policies with a documented encoding (evict_unchanged has none)."""

CASES = [
    (load, store, reduce)
    for (load, store), reduce in itertools.product(
        [(None, None), *((p, q) for p in NAMED for q in NAMED)], [None, "add", "prefetch"]
    )
]
"""(load policy, store policy, "add" for a reduce-add, "prefetch" for a reduce-add that first
prefetches its destination tile with the store's policy, None for a copy)."""


FRACTIONAL = [
    CachePolicy(L2Policy.EVICT_LAST, 0.5),
    CachePolicy(L2Policy.EVICT_FIRST, 0.25, L2Policy.EVICT_UNCHANGED),
    CachePolicy(L2Policy.EVICT_LAST, 0.75, L2Policy.EVICT_FIRST),
    CachePolicy(L2Policy.EVICT_NORMAL, 1.0),
    CachePolicy(L2Policy.EVICT_UNCHANGED, 0.5, L2Policy.EVICT_FIRST),
]
"""Fraction-based policies, made in the kernel by createpolicy.fractional."""

MADE_CASES = [
    *(
        (L2Policy.EVICT_UNCHANGED, store, reduce)
        for store in (None, L2Policy.EVICT_UNCHANGED, L2Policy.EVICT_FIRST)
        for reduce in (None, "add", "prefetch")
    ),
    *((policy, policy, reduce) for policy in FRACTIONAL for reduce in (None, "prefetch")),
    (FRACTIONAL[0], FRACTIONAL[2], "add"),
    (None, FRACTIONAL[1], "prefetch"),
]
"""(load policy, store policy, reduce) with a policy made in the kernel: evict_unchanged
and the fraction-based ones, alone and mixed with named ones."""

SHAPES = [(300, 200), (64, 64), (129, 68), (1000, 36)]
"""The GPU test's shapes: whole tiles, and partial edge tiles in one or both dims (a stored
row stays a multiple of 16 bytes: rule TR19)."""

PROMOTION_CASES = [
    (promotion, reduce) for promotion in L2_PROMOTIONS for reduce in (None, "prefetch")
]
"""(L2 promotion of the load's and the prefetch's tensor maps, reduce)."""


def module(load, store, reduce, shape=(300, 200), promotion=None):
    return kernels.tma_copy(
        shape,
        "f32",
        (64, 64),
        reduce=None if reduce is None else "add",
        prefetch_destination=reduce == "prefetch",
        cache_hints=(load, store),
        l2_promotion=promotion,
    )


def made_policies(load, store, reduce) -> set[str]:
    """The createpolicy instructions the kernel of a case makes: one per distinct policy
    without a documented encoding (the prefetch takes the store's)."""
    used = [load, store] + ([store] if reduce == "prefetch" else [])
    made = set()
    for policy in used:
        if policy is None:
            continue
        if not isinstance(policy, CachePolicy):
            policy = CachePolicy(L2Policy(policy))
        if policy.constant is None:
            made.add(policy.createpolicy("").split()[0])
    return made


@pytest.mark.parametrize(("load", "store", "reduce"), CASES[:4] + CASES[-3:])
def test_policy_kernels_compile(load, store, reduce):
    compiled = compile_module(module(load, store, reduce), make_context(), "sm_90a")
    assert compiled.cubin
    for policy in (load, store):
        if policy is not None:
            assert f"{L2_POLICY_ENCODING[L2Policy(policy)]};" in compiled.ptx
    hinted = compiled.ptx.count(".L2::cache_hint")
    prefetched = reduce == "prefetch" and store is not None
    assert hinted == (load is not None) + (store is not None) + prefetched


def test_raw_cache_hint_of_a_policy_is_the_named_policy():
    named = kernels.tma_copy((128, 128), "f32", (64, 64), cache_hints=("evict_last", None))
    ptx_named = compile_module(named, make_context(), "sm_90a").ptx
    raw = kernels.tma_copy((128, 128), "f32", (64, 64))
    for op in raw.walk():
        if isinstance(op, copy.AsyncCopyOp) and op.geometry().is_load:
            op.properties["cache_hint"] = IntegerAttr(L2_POLICY_ENCODING[L2Policy.EVICT_LAST], i64)
    assert compile_module(raw, make_context(), "sm_90a").ptx == ptx_named


def test_program_of_policies_loads():
    assert runtime.compile(module("evict_first", "evict_last", None)).kernels


@pytest.mark.parametrize(("load", "store", "reduce"), MADE_CASES)
def test_made_policies_compile_once_each(load, store, reduce):
    compiled = compile_module(module(load, store, reduce), make_context(), "sm_90a")
    assert compiled.cubin
    lines = [line.strip() for line in compiled.ptx.splitlines()]
    made = [line.split()[0] for line in lines if line.startswith("createpolicy")]
    assert sorted(made) == sorted(made_policies(load, store, reduce))
    hinted = compiled.ptx.count(".L2::cache_hint")
    prefetched = reduce == "prefetch" and store is not None
    assert hinted == (load is not None) + (store is not None) + prefetched


def test_made_policy_register_is_the_hint_operand():
    ptx = compile_module(module(FRACTIONAL[2], FRACTIONAL[2], None), make_context(), "sm_90a").ptx
    (line,) = [ln for ln in ptx.splitlines() if "createpolicy" in ln]
    assert line.split()[0] == "createpolicy.fractional.L2::evict_last.L2::evict_first.b64"
    register = line.split()[1].rstrip(",")
    assert line.strip().endswith("0f3F400000;")  # 0.75 as an f32
    uses = [ln for ln in ptx.splitlines() if ".L2::cache_hint" in ln]
    assert len(uses) == 2
    assert all(ln.strip().endswith(f"{register};") for ln in uses)


@pytest.mark.parametrize(("promotion", "reduce"), PROMOTION_CASES)
def test_promotion_reaches_the_abi(promotion, reduce):
    compiled = compile_module(
        module(None, None, reduce, promotion=promotion), make_context(), "sm_90a"
    )
    assert compiled.cubin
    (abi,) = compiled.abi.kernels.values()
    maps = abi.tensor_maps
    x_map = next(m for m in maps if m.arg == 0)
    assert x_map.l2_promotion == promotion
    y_maps = sorted((m.l2_promotion, m.written) for m in maps if m.arg == 1)
    if reduce == "prefetch" and promotion != 128:
        # The prefetch's map of y and the reduction's are two: their promotions differ.
        assert y_maps == sorted([(promotion, False), (128, True)])
    else:
        assert y_maps == [(128, True)]
    # Each map is prefetched once at the kernel's entry.
    assert compiled.ptx.count("prefetch.param.tensormap") == len(maps)


def test_default_promotion_keeps_the_map_and_abi():
    default = compile_module(module(None, None, None), make_context(), "sm_90a")
    explicit = compile_module(module(None, None, None, promotion=128), make_context(), "sm_90a")
    assert default.ptx == explicit.ptx
    assert default.abi == explicit.abi


def test_abi_round_trips_the_promotion():
    param = TensorMapParam(0, (64, 64), 16, "zeros", "FLOAT32", False, l2_promotion=256)
    assert TensorMapParam.from_dict(param.to_dict()) == param
    old = param.to_dict()
    del old["l2_promotion"]  # a record of ABI format 2
    assert TensorMapParam.from_dict(old).l2_promotion == 128
    kernel = KernelAbi("k", (param,), 0, (1, 1, 1))
    assert KernelAbi.from_dict(kernel.to_dict()) == kernel


@pytest.mark.parametrize("promotion", L2_PROMOTIONS)
def test_encoder_passes_the_promotion(monkeypatch, promotion):
    from cuda.bindings import driver

    calls = []
    monkeypatch.setattr(tensor_map, "call", lambda name, *args: calls.append((name, args)))
    array = SimpleNamespace(
        pointer=0x10000, shape=(300, 200), strides=(800, 4), itemsize=4, nbytes=240000
    )
    param = TensorMapParam(0, (64, 64), 16, "zeros", "FLOAT32", False, l2_promotion=promotion)
    tensor_map.encode(array, param)  # type: ignore[arg-type]
    ((name, args),) = calls
    assert name == "cuTensorMapEncodeTiled"
    want = {
        0: driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        64: driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        128: driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        256: driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
    }[promotion]
    assert args[-2] == want


def test_prefetch_option_and_kernel_attribute():
    from xdsl.dialects.builtin import BoolAttr

    from passes.pipeline import lowering_passes

    def ptx(mod) -> str:
        return compile_module(mod, make_context(), "sm_90a").ptx

    assert ptx(module(None, None, None)).count("prefetch.param.tensormap") == 2
    opted_out = module(None, None, None)
    for op in opted_out.walk():
        if op.name == "func.func":
            op.attributes["copy.prefetch_tensormaps"] = BoolAttr.from_bool(False)
    assert "prefetch.param.tensormap" not in ptx(opted_out)
    lowered = module(None, None, None)
    for p in lowering_passes("sm_90a", prefetch_tensormaps=False):
        p.apply(make_context(), lowered)
    assert not any(op.name == "nvvm.prefetch.tensormap" for op in lowered.walk())


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_gpu_kernel_compiles(shape):
    """Each kernel test_cache_policy_gpu.py launches at `shape`, to PTX and cubin."""
    modules = [module(load, store, reduce, shape) for load, store, reduce in MADE_CASES]
    modules += [
        module("evict_last", "evict_first", reduce, shape, promotion)
        for promotion, reduce in PROMOTION_CASES
    ]
    for mod in modules:
        assert compile_module(mod, make_context(), "sm_90a").cubin


WHOLE_ROWS = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @rows(%x: memref<64x256xf32>) attributes {gpu.kernel} {
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0] oob promise_in_bounds PROMOTION
        : memref<64x256xf32> to memref<4x256xf32, #copy.smem>, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    func.return
  }
}
"""


@pytest.mark.parametrize(
    ("promotion", "implementation"),
    [("", copy.Implementation.BULK), ("{l2_promotion = 64 : i64}", copy.Implementation.TMA)],
)
def test_a_promotion_keeps_a_copy_on_tma(promotion, implementation):
    """Where the lowering would choose a bulk copy (whole rows, in bounds), a copy that names
    an L2 promotion, a tensor map's property, stays a TMA copy."""
    from xdsl.parser import Parser

    mod = Parser(make_context(), WHOLE_ROWS.replace("PROMOTION", promotion)).parse_module()
    (op,) = [o for o in mod.walk() if isinstance(o, copy.AsyncCopyOp)]
    assert op.resolved_implementation() == implementation
    abi = compile_module(mod, make_context(), "sm_90a").abi.kernels["rows"]
    assert [m.l2_promotion for m in abi.tensor_maps] == ([64] if promotion else [])


WS_CASES = [
    ((1000, 1000), (FRACTIONAL[2], L2Policy.EVICT_UNCHANGED), 3),
    ((130, 264), (L2Policy.EVICT_UNCHANGED, FRACTIONAL[0]), 2),
]
"""(shape, (load policy, store policy), blocks) of the warp-specialized copy: policies made
at the kernel's entry, used by the producer's loads and the storer's stores (roles)."""


def ws_module(shape, hints):
    return kernels.ws_copy(shape, "f32", stages=2, cache_hints=hints)


@pytest.mark.parametrize(("shape", "hints", "blocks"), WS_CASES)
def test_made_policies_in_roles(shape, hints, blocks):
    ptx = compile_module(ws_module(shape, hints), make_context(), "sm_90a").ptx
    lines = [line.strip() for line in ptx.splitlines()]
    made = [i for i, line in enumerate(lines) if line.startswith("createpolicy")]
    roles = next(i for i, line in enumerate(lines) if line.startswith("shfl.sync"))
    prefetches = [i for i, line in enumerate(lines) if "prefetch.param.tensormap" in line]
    # Made once each and prefetched, all before the roles split the block.
    assert len(made) == 2
    assert len(prefetches) == 2
    assert max(made + prefetches) < roles


IM2COL_CASES = [
    (L2Policy.EVICT_UNCHANGED, None),
    (CachePolicy(L2Policy.EVICT_LAST, 0.5, L2Policy.EVICT_FIRST), 256),
    (L2Policy.EVICT_LAST, 0),
    (None, 64),
]
"""(policy, L2 promotion) of copy.im2col_load in im2col_gather: made policies and the im2col
map's promotion."""


def im2col_module(policy, promotion):
    conv = kernels.conv2d((2, 9, 7, 16), 3, stride=2, padding=1, dilation=2)
    module = kernels.im2col_gather(conv, "f16", cache_hint=policy)  # type: ignore[arg-type]
    if promotion is not None:
        for op in module.walk():
            if isinstance(op, copy.Im2colLoadOp):
                op.properties["l2_promotion"] = IntegerAttr(promotion, i64)
    return conv, module


@pytest.mark.parametrize(("policy", "promotion"), IM2COL_CASES)
def test_im2col_load_takes_made_policies_and_promotions(policy, promotion):
    from xdsl.parser import Parser

    _, module = im2col_module(policy, promotion)
    # The custom form round-trips (l2 ... fraction ... secondary ..., l2_promotion).
    text = str(module)
    assert str(Parser(make_context(), text).parse_module()) == text
    compiled = compile_module(module, make_context(), "sm_90a")
    assert compiled.cubin
    maps = compiled.abi.kernels["im2col_gather"].tensor_maps
    (im2col_map,) = [m for m in maps if m.kind == "im2col_map"]
    assert im2col_map.l2_promotion == (128 if promotion is None else promotion)
    lines = [line.strip() for line in compiled.ptx.splitlines()]
    made = [line for line in lines if line.startswith("createpolicy")]
    (load,) = [line for line in lines if ".im2col." in line]
    assert compiled.ptx.count("prefetch.param.tensormap") == len(maps)
    if policy is None:
        assert not made
        assert ".L2::cache_hint" not in load
    elif isinstance(policy, CachePolicy) or policy == L2Policy.EVICT_UNCHANGED:
        (line,) = made
        assert load.endswith(f"{line.split()[1].rstrip(',')};")
    else:
        assert not made
        assert ".L2::cache_hint" in load
        assert f"{L2_POLICY_ENCODING[L2Policy(policy)]};" in compiled.ptx


def test_im2col_encoder_passes_the_promotion(monkeypatch):
    from cuda.bindings import driver

    from facts.abi import Im2colMapParam

    calls = []
    monkeypatch.setattr(tensor_map, "call", lambda name, *args: calls.append((name, args)))
    param = Im2colMapParam(
        0, (64, 16), 16, "zeros", "FLOAT16", False, (-1, -2), (-3, -4), (1, 2, 3, 1),
        l2_promotion=64,
    )  # fmt: skip
    array = SimpleNamespace(
        pointer=0x10000, shape=(2, 9, 7, 16), strides=(2016, 224, 32, 2), itemsize=2,
        nbytes=4032,
    )  # fmt: skip
    tensor_map.encode(array, param)  # type: ignore[arg-type]
    ((name, args),) = calls
    assert name == "cuTensorMapEncodeIm2col"
    assert args[-2] == driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_64B
    assert Im2colMapParam.from_dict(param.to_dict()) == param
