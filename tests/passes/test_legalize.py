"""copy-legalize (passes/legalize.py) on the CPU: every example (examples/*.mlir) and every
builder kernel of frontends.kernels written for sm_90a, legalized to sm_80 and to sm_86,
verifies (ops, dominance, the protocol analysis) and compiles to PTX and a cubin; what it
cannot keep fails with its LG rule. Legalizing twice equals legalizing once, and legalizing
to the IR's own target changes nothing. test_legalize_gpu.py runs the legalized kernels."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.dialects import func, gpu, memref, scf, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from frontends import kernels
from passes.legalize import CopyLegalizePass
from passes.pipeline import compile_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.mlir"))
TARGETS = ["sm_80", "sm_86"]

LEGAL: dict[str, Callable[[], ModuleOp]] = {
    "tma_copy": lambda: kernels.tma_copy((256, 256), "f32"),
    "tma_copy_odd": lambda: kernels.tma_copy((999, 996), "f32"),
    "tma_copy_dynamic": lambda: kernels.tma_copy((0, 0), "f32", dynamic=True),
    "tma_copy_dynamic_bf16": lambda: kernels.tma_copy((0, 0), "bf16", (32, 64), dynamic=True),
    "tma_copy_bf16": lambda: kernels.tma_copy((130, 200), "bf16", (32, 64)),
    "tma_copy_swizzle128": lambda: kernels.tma_copy((256, 256), "f32", (64, 32), swizzle=128),
    "tma_copy_prefetch": lambda: kernels.tma_copy((256, 256), "f32", prefetch_destination=True),
    "tma_copy_hints": lambda: kernels.tma_copy(
        (256, 256), "f32", cache_hints=("evict_first", "evict_last")
    ),
    "tma_copy_pipelined_1": lambda: kernels.tma_copy_pipelined(
        (512, 256), "f32", (64, 64), stages=1
    ),
    "tma_copy_pipelined_3": lambda: kernels.tma_copy_pipelined(
        (512, 256), "f32", (64, 64), stages=3
    ),
    "tma_reduce_add_f32": lambda: kernels.tma_copy((999, 996), "f32", reduce="add"),
    "tma_reduce_add_dynamic": lambda: kernels.tma_copy((0, 0), "f32", reduce="add", dynamic=True),
    "tma_reduce_add_f16": lambda: kernels.tma_copy((256, 256), "f16", reduce="add"),
    "tma_reduce_add_f64": lambda: kernels.tma_copy((256, 256), "f64", reduce="add"),
    "tma_reduce_umin_i32": lambda: kernels.tma_copy((256, 256), "i32", reduce="umin"),
    "tma_reduce_smax_i64": lambda: kernels.tma_copy((256, 256), "i64", reduce="smax"),
    "tma_reduce_xor_i32": lambda: kernels.tma_copy((256, 256), "i32", reduce="xor"),
    "tma_reduce_inc_i32": lambda: kernels.tma_copy((256, 256), "i32", reduce="inc"),
    "tma_reduce_dec_i32": lambda: kernels.tma_copy((200, 136), "i32", reduce="dec"),
    "tma_copy_pipelined_reduce": lambda: kernels.tma_copy_pipelined(
        (512, 256), "f32", (64, 64), reduce="add"
    ),
    "bulk_copy": lambda: kernels.bulk_copy(1000, "f32", 256),
    "multicast_copy": lambda: kernels.multicast_copy((256, 256), "f32"),
    "broadcast_copy": lambda: kernels.broadcast_copy((256, 512), "f32"),
    "broadcast_copy_4": lambda: kernels.broadcast_copy((130, 32), "bf16", (32, 64), cluster=4),
    "broadcast_row_dot": lambda: kernels.broadcast_row_dot((256, 512), "f32"),
    "broadcast_row_dot_4": lambda: kernels.broadcast_row_dot(
        (130, 264), "bf16", (32, 64), cluster=4
    ),
    "ws_copy": lambda: kernels.ws_copy((256, 256), "f32", stages=2),
    "ws_copy_odd": lambda: kernels.ws_copy((200, 300), "f32", (32, 128), stages=3, in_flight=0),
    "ws_elementwise": lambda: kernels.ws_elementwise(
        "add", (256, 256), "f32", (32, 128), stages=2
    ),
    "ws_elementwise_axpb": lambda: kernels.ws_elementwise(
        "axpb", (300, 200), "f32", (32, 128), stages=2, out_buffers=1
    ),
    "ws_elementwise_cast": lambda: kernels.ws_elementwise(
        "cast", (256, 256), "f32", (64, 128), out_dtype="bf16", stages=2
    ),
    "ws_elementwise_maxnreg": lambda: kernels.ws_elementwise(
        "add", (256, 256), "f32", (32, 128), stages=2, maxnreg=(40, 232)
    ),
    "im2col_gather": lambda: kernels.im2col_gather(
        kernels.conv2d((2, 9, 7, 16), 3, padding=1), "f16"
    ),
    "im2col_gather_swizzle128_f32": lambda: kernels.im2col_gather(
        kernels.conv2d((1, 9, 7, 64), 3, stride=2, padding=1), "f32", channels=32, swizzle=128
    ),
    "im2col_gather_stride2_dilation2": lambda: kernels.im2col_gather(
        kernels.conv2d((2, 9, 11, 8), (2, 3), stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
        "f32",
    ),
    "ws_row_sum": lambda: kernels.ws_row_sum((256, 256), stages=2),
    # Tensor maps rewritten in the kernel: the loads read views of the pool instead.
    "grouped_copy": lambda: kernels.grouped_copy(3, 11139, (64, 129)),
    "grouped_copy_persistent": lambda: kernels.grouped_copy(
        3, 11139, (64, 129), persistent=True
    ),
    "ws_row_sum_bf16": lambda: kernels.ws_row_sum((130, 256), "bf16", (64, 128), stages=3),
    # DSMEM: each cluster folded into one block, a role per CTA.
    "dsmem_exchange": lambda: kernels.dsmem_exchange((256, 256), "f32"),
    "dsmem_exchange_bulk": lambda: kernels.dsmem_exchange((256, 256), "bf16", mode="bulk"),
    "dsmem_exchange_add": lambda: kernels.dsmem_exchange((256, 256), "i32", mode="reduce"),
    "dsmem_exchange_4": lambda: kernels.dsmem_exchange((100, 512), "f32", (32, 64), cluster=4),
    "dsmem_exchange_8": lambda: kernels.dsmem_exchange((64, 512), "f32", (8, 64), cluster=8),
}
"""Builder kernels written for sm_90a that legalize to sm_80 and sm_86 (the ring sizes of
the ws kernels fit sm_86's 99 KiB of SMEM: the defaults are sized for sm_90a's 227)."""

ILLEGAL: dict[str, tuple[Callable[[], ModuleOp], str]] = {
    "tma_reduce_bf16": (lambda: kernels.tma_copy((256, 256), "bf16", reduce="add"), "LG2"),
    "tma_reduce_f16_min": (lambda: kernels.tma_copy((256, 256), "f16", reduce="min"), "LG2"),
    "tma_reduce_inc_ui32": (lambda: kernels.tma_copy((256, 256), "ui32", reduce="inc"), "LG2"),
    "dsmem_exchange_8_64x64": (
        lambda: kernels.dsmem_exchange((256, 512), "f32", cluster=8), "LG3"
    ),
    "gemm": (lambda: kernels.gemm(128, 128, 64), "LG3"),
}
"""Builder kernels written for sm_90a that copy-legalize cannot keep on sm_80, and why:
reductions with no thread atomic of their op and type (LG2: bf16 add and f16/bf16 min/max
need sm_90, the thread atomics take signless integers); a cluster of 8 CTAs with DSMEM
folded into one block needs 8 times a CTA's SMEM, over sm_80's (LG3); the GEMM's wgmma has
no pre-Hopper form (LG3)."""


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def example(name: str) -> ModuleOp:
    return parse((EXAMPLES / name).read_text())


def legalized(module: ModuleOp, target: str) -> ModuleOp:
    CopyLegalizePass(target=target).apply(make_context(), module)
    verify_module(module)
    return module


def test_every_builder_is_listed():
    """Each public builder of frontends.kernels that makes a kernel is classified here."""
    named = {n.split("_pipelined")[0] for n in [*LEGAL, *ILLEGAL]}
    named |= {"cp_async_copy", "grouped_view_copy"}  # sm_80 kernels already
    # The PDL chain loses its griddepcontrol ops and is thread code then
    # (lit_tests/passes/copy-legalize-griddepcontrol.mlir).
    named |= {"pdl_chain"}
    # The persistent chain's cluster launch control has no form before sm_100: copy-legalize
    # leaves copy.try_cancel, which the verifier then rejects (LC1) at the op.
    named |= {"persistent_chain"}
    # The TMEM pipeline is an sm_100a kernel: copy-legalize keeps no TMEM op on an older
    # target (LG1, tests/frontends/test_tmem_pipeline.py).
    named |= {"tmem_pipeline"}
    builders = {
        "tma_copy", "cp_async_copy", "bulk_copy", "multicast_copy", "broadcast_copy",
        "broadcast_row_dot", "tma_copy_pipelined", "ws_copy", "ws_elementwise", "ws_row_sum",
        "dsmem_exchange", "im2col_gather", "grouped_copy", "grouped_view_copy", "gemm",
        "pdl_chain", "persistent_chain", "tmem_pipeline",
    }  # fmt: skip
    made = {
        n
        for n in kernels.__all__
        if callable(f := getattr(kernels, n))
        and "return" in (getattr(f, "__annotations__", None) or {})
        and f.__annotations__["return"] in ("ModuleOp", ModuleOp)
    }
    assert made == builders
    assert builders <= named | {"tma_copy_pipelined"}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_legalizes_and_compiles(name, target):
    module = example(name)
    compiled = compile_module(legalized(module, target), make_context())
    assert compiled.target.name == target
    assert f".target {target}" in compiled.ptx
    assert "cp.async.bulk" not in compiled.ptx
    # The loads keep their barriers: mbarrier-tracked cp.async.
    tracked = "cp.async.mbarrier.arrive.noinc" in compiled.ptx
    assert tracked == (name != "cp_async_copy.mlir")
    assert compiled.cubin


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(LEGAL))
def test_builder_legalizes_and_compiles(name, target):
    compiled = compile_module(legalized(LEGAL[name](), target), make_context())
    assert "cp.async.ca" in compiled.ptx or "cp.async.cg" in compiled.ptx
    assert bool(re.search(r"\bred\.global\.", compiled.ptx)) == ("reduce" in name)
    assert "cp.async.bulk" not in compiled.ptx
    assert "cp.async.mbarrier.arrive.noinc" in compiled.ptx
    assert "mbarrier.test_wait.parity" in compiled.ptx
    assert "mbarrier.try_wait" not in compiled.ptx
    assert "expect_tx" not in compiled.ptx
    assert compiled.cubin


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legalized_builder_compiles_for_the_h200(name):
    """What test_legalize_gpu.py launches: the sm_80-legalized IR compiled for sm_90a (an
    sm_80 cubin does not load on sm_90: SASS is compatible within a major version only)."""
    compiled = compile_module(legalized(LEGAL[name](), "sm_80"), make_context(), "sm_90a")
    assert "cp.async.bulk" not in compiled.ptx
    assert compiled.cubin


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legalized_builder_has_no_protocol_warning(name):
    """The protocol analysis proves the legalized kernels (sm_80: the barriers count the
    issuing threads' arrivals) without a warning."""
    import warnings

    from analysis.protocol import ProtocolWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ProtocolWarning)
        legalized(LEGAL[name](), "sm_80")


@pytest.mark.parametrize(
    ("name", "threads"),
    [("tma_copy_pipelined_3", 128), ("ws_copy", 32), ("ws_elementwise", 32), ("ws_row_sum", 32)],
)
def test_rings_keep_their_barriers(name, threads):
    """A ring's loads stay on their slot's barrier (its arrivals scaled from one per load to
    one per issuing thread per load) and its waits are kept: no cp.async group waits, so
    the loads of the other slots stay in flight (the overlap of the TMA ring)."""
    module = legalized(LEGAL[name](), "sm_80")
    text = str(module)
    loads = [op for op in module.walk() if isinstance(op, copy.AsyncCopyOp) and op.is_load]
    assert loads
    assert all(op.barrier is not None for op in loads)
    assert all(str(op.implementation.data) == "cp_async" for op in loads)
    inits = [op for op in module.walk() if isinstance(op, copy.BarrierInitOp)]
    full = {op.barrier.owner for op in loads}
    per_load = 2 if name == "ws_elementwise" else 1  # add: two inputs a slot
    assert all(init.arrivals.value.data == per_load * threads for init in full)
    assert len(inits) == len(full) + (0 if name.startswith("tma") else 1)
    assert "copy.barrier_wait" in text
    assert "copy.commit_group cp_async" not in text
    assert "wait_group cp_async" not in text or name.startswith("ws")


def test_producer_warpgroup_splits():
    """ws_elementwise with maxnreg: only the first warp of the producer warpgroup runs the
    ring (`%t / 32 == 0`), so its cp.async form is issued by a role of that warp, and the
    other three warps become an idle role (setmaxnreg, sm_90a, is dropped)."""
    module = legalized(LEGAL["ws_elementwise_maxnreg"](), "sm_80")
    ws = next(op for op in module.walk() if isinstance(op, copy.WarpSpecializeOp))
    assert ws.role_warps == (1, 3, 4)
    assert ws.maxnreg is None
    assert not list(ws.regions[1].block.ops)
    loads = [op for op in module.walk() if isinstance(op, copy.AsyncCopyOp) and op.is_load]
    assert {op.barrier.owner.arrivals.value.data for op in loads} == {64}  # 2 inputs x 32


def test_role_stores_use_the_role_barrier():
    """A TMA store in a role becomes thread stores by the role's threads (its index argument
    as the first element, its thread count as the stride), and its bulk waits the role's
    own barrier (copy.wait_group cp_async 0, bar.sync 2 for role 1), not the block's."""
    module = legalized(LEGAL["ws_copy"](), "sm_80")
    ws = next(op for op in module.walk() if isinstance(op, copy.WarpSpecializeOp))
    storer = ws.regions[1].block
    assert not any(isinstance(op, gpu.BarrierOp) for op in ws.walk())
    loops = [op for op in storer.walk() if isinstance(op, scf.ForOp)]
    assert any(loop.lb is storer.args[0] for loop in loops)
    waits = [op for op in storer.walk() if isinstance(op, copy.WaitGroupOp)]
    assert waits
    assert all(str(op.group.data) == "cp_async" for op in waits)
    compiled = compile_module(module, make_context())
    assert "barrier.sync 2, 32;" in compiled.ptx


STORE_FORMS = {
    # builder: (vector elements of a thread store; 1: element by element)
    "tma_copy": 4,
    "tma_copy_odd": 4,
    "tma_copy_bf16": 8,
    "tma_copy_swizzle128": 4,
    "bulk_copy": 4,
    "ws_copy": 4,
    "tma_copy_dynamic": 1,
    "tma_reduce_add_f32": 1,
}
"""What the TMA store of a builder becomes: 16-byte vector stores where the array is a
static-shape kernel argument (every such TMA store's rows are whole 16-byte chunks), the
element-wise walk for a dynamic shape (no alignment is known of its rows) and for a
reduction (thread atomics)."""


@pytest.mark.parametrize("name", sorted(STORE_FORMS))
def test_thread_stores_are_16_bytes_where_the_array_allows(name):
    width = STORE_FORMS[name]
    module = legalized(LEGAL[name](), "sm_80")
    vectors = [op for op in module.walk() if isinstance(op, vector.StoreOp)]
    assumes = [op for op in module.walk() if isinstance(op, memref.AssumeAlignmentOp)]
    compiled = compile_module(module, make_context())
    (abi,) = compiled.abi.kernels.values()
    if width == 1:
        assert not vectors
        assert not assumes
        return
    assert {op.vector.type.get_shape()[0] for op in vectors} == {width}
    (assume,) = assumes
    assert assume.alignment.value.data == 16
    assert all(op.base is assume.result for op in vectors)
    # The runtime is asked for the alignment the stores assume, and they are one wide st.
    (target,) = [p for p in abi.params if getattr(p, "arg", None) == assume.memref.index]
    assert target.align == 16
    assert re.search(r"st\.global\.v[248]\.b(16|32|64)", compiled.ptx)
    assert not re.search(r"st\.global\.[buf](16|32|64)\s", compiled.ptx)


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_builder_that_cannot_be_kept_names_its_rule(name):
    build, rule = ILLEGAL[name]
    with pytest.raises(CopyVerifyException) as info:
        legalized(build(), "sm_80")
    assert info.value.rules == (rule,)
    assert "sm_80" in str(info.value)


def _twice(module: ModuleOp, target: str) -> tuple[str, str]:
    once = str(legalized(module, target))
    return once, str(legalized(parse(once), target))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legalizing_twice_changes_nothing(name, target):
    once, twice = _twice(LEGAL[name](), target)
    assert once == twice


@pytest.mark.parametrize("name", [*sorted(LEGAL), *sorted(ILLEGAL)])
def test_legalizing_to_the_own_target_changes_nothing(name):
    build = LEGAL[name] if name in LEGAL else ILLEGAL[name][0]
    before = str(build())
    assert str(legalized(parse(before), "sm_90a")) == before


def test_cp_async_builder_is_a_fixed_point():
    before = str(kernels.cp_async_copy((1024, 1024), "f32"))
    assert str(legalized(parse(before), "sm_80")) == before


def test_module_target_is_the_new_one():
    module = legalized(example("tma_tile_copy.mlir"), "sm_86")
    assert str(module.attributes["copy.target"]) == '#copy.target<"sm_86">'


def test_an_unknown_target_is_an_error():
    from xdsl.utils.exceptions import PassFailedException

    match = "copy-legalize: unknown target 'sm_70': expected one of sm_80"
    with pytest.raises(PassFailedException, match=match):
        CopyLegalizePass(target="sm_70").apply(make_context(), example("tma_tile_copy.mlir"))


def test_gpu_cases_compile_for_the_h200():
    """Every case of test_legalize_gpu.py, original and legalized, compiles for sm_90a."""
    from tests.passes.test_legalize_gpu import CASES
    from tests.passes.test_legalize_gpu import legalized as gpu_legalized

    for case in CASES.values():
        assert compile_module(case.build(), make_context(), "sm_90a").cubin
        module = gpu_legalized(case.build())
        compiled = compile_module(module, make_context(), "sm_90a")
        assert "cp.async.bulk" not in compiled.ptx
        assert compiled.cubin


@pytest.mark.parametrize("target", TARGETS)
def test_gpu_ws_cases_compile_for_the_h200(target):
    """Every ws_elementwise and ws_row_sum case of test_legalize_gpu.py, legalized, verifies
    and its PTX assembles for the H200 (sm_90), as the GPU test launches it."""
    from tests.passes.test_legalize_gpu import WS_ELEMENTWISE, WS_ROW_SUM
    from tests.passes.test_legalize_gpu import legalized as gpu_legalized

    builds = [
        lambda c=c: kernels.ws_elementwise(
            c[0], c[1], c[2], c[4], out_dtype=c[3], stages=c[5], consumer_warps=c[6],
            out_buffers=c[7], maxnreg=c[9],
        )
        for c in WS_ELEMENTWISE.values()
    ]  # fmt: skip
    builds += [
        lambda c=c: kernels.ws_row_sum(c[0], c[1], c[2], stages=c[3], consumer_warps=c[4])
        for c in WS_ROW_SUM.values()
    ]
    for build in builds:
        module = gpu_legalized(build(), target)
        verify_module(module)
        compiled = compile_module(module, make_context(), arch="sm_90")
        assert "cp.async.mbarrier.arrive.noinc" in compiled.ptx
        assert compiled.cubin


def test_gpu_reductions_compile_for_the_h200():
    """Every reduction of test_legalize_gpu.py, legalized, compiles to red.global for sm_90a."""
    from tests.passes.test_legalize_gpu import REDUCTIONS
    from tests.passes.test_legalize_gpu import legalized as gpu_legalized

    for op, dtype, shape in REDUCTIONS.values():
        module = gpu_legalized(kernels.tma_copy(shape, dtype, reduce=op))
        compiled = compile_module(module, make_context(), "sm_90a")
        assert re.search(r"\bred\.global\.", compiled.ptx)
        assert compiled.cubin


@pytest.mark.parametrize(
    "name", ["multicast_copy", "broadcast_copy", "broadcast_copy_4", "broadcast_row_dot_4"]
)
def test_multicast_builder_legalizes_to_sm_90(name):
    """sm_90 has TMA but no multicast: each CTA loads the whole tile with TMA itself."""
    compiled = compile_module(legalized(LEGAL[name](), "sm_90"), make_context())
    assert ".multicast::cluster" not in compiled.ptx
    assert "cp.async.bulk.tensor" in compiled.ptx
    assert compiled.cubin


@pytest.mark.parametrize(("op", "shape"), [("inc", (256, 256)), ("dec", (200, 136))])
def test_wrapping_reduction_becomes_red_inc_dec(op, shape):
    """A TMA inc/dec (u32, wrapping) becomes a memref.generic_atomic_rmw whose body is PTX's
    wrapping increment of the element with the SMEM value, lowered to red.global.<op>.u32:
    the TMA reduction's semantics on its UINT32 map (docs/design.md)."""
    from copy_dialect.upstream_memref import GenericAtomicRMWOp, wrapping_kind

    module = legalized(kernels.tma_copy(shape, "i32", reduce=op), "sm_80")
    (rmw,) = [o for o in module.walk() if isinstance(o, GenericAtomicRMWOp)]
    kind, value = wrapping_kind(rmw)
    assert kind == op
    assert value.owner.name == "memref.load"  # the SMEM element
    assert not rmw.result.uses
    compiled = compile_module(module, make_context())
    assert f"red.global.{op}.u32" in compiled.ptx
    assert compiled.cubin


def _rmw_chunk(body: str) -> str:
    return f"""func.func @f(%g: memref<64xi32>, %i: index, %s: i32) {{
      %old = memref.generic_atomic_rmw %g[%i] : memref<64xi32> {{
      ^bb0(%current: i32):
        {body}
      }}
      func.return
    }}"""


def test_other_generic_atomic_rmw_body_is_a_diagnostic():
    """Only the two wrapping bodies are lowered (red.global.inc/dec.u32): any other body
    (here inc with `ugt`, an off-by-one) fails with the reason, not a traceback."""
    from xdsl.utils.exceptions import PassFailedException

    from passes.convert_memref_to_llvm import ConvertMemrefToLLVMPass

    module = parse(
        _rmw_chunk(
            "%c0 = arith.constant 0 : i32\n%c1 = arith.constant 1 : i32\n"
            "%w = arith.cmpi ugt, %current, %s : i32\n%n = arith.addi %current, %c1 : i32\n"
            "%new = arith.select %w, %c0, %n : i32\nmemref.atomic_yield %new : i32"
        )
    )
    module.verify()
    with pytest.raises(PassFailedException, match="wrapping increment of an i32"):
        ConvertMemrefToLLVMPass().apply(make_context(), module)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("memref.atomic_yield %s : i32", None),
        ("%c = arith.constant 1 : i64\nmemref.atomic_yield %c : i64", "atomic_yield of a i32"),
        ("memref.store %s, %g[%i] : memref<64xi32>\nmemref.atomic_yield %s : i32",
         "only side-effect-free ops"),
    ],
)  # fmt: skip
def test_generic_atomic_rmw_verifier(body, message):
    from xdsl.utils.exceptions import VerifyException

    module = parse(_rmw_chunk(body))
    if message is None:
        module.verify()
        assert str(parse(str(module))) == str(module)
        return
    with pytest.raises(VerifyException, match=message):
        module.verify()


# -- im2col: the cp.async gather -------------------------------------------------------


def _walk(start, lower, ends, strides, pixels):
    """The TMA unit's im2col traversal, step by step (test_im2col.tma_im2col's, for any
    rank): the filter base (n, spatial...) of each pixel; the innermost spatial dim steps by
    its stride, and a dim that reaches its end restarts at its lower corner and carries."""
    n, pos = start[0], list(start[1:])
    out = []
    for _ in range(pixels):
        out.append((n, *pos))
        d = len(pos) - 1
        while True:
            pos[d] += strides[d]
            if pos[d] < ends[d]:
                break
            pos[d] = lower[d]
            if d == 0:
                n += 1
                break
            d -= 1
    return out


_BINARY = {
    "llvm.add": lambda a, b: a + b, "llvm.sub": lambda a, b: a - b,
    "llvm.mul": lambda a, b: a * b, "llvm.udiv": lambda a, b: a // b,
    "llvm.urem": lambda a, b: a % b,
}  # fmt: skip


def _evaluate(ops, env):
    """Runs the llvm ops `im2col_pixel` emits on i64 values (two's complement)."""
    mask = (1 << 64) - 1

    def signed(v):
        return v - (1 << 64) if v >> 63 else v

    predicates = {"ult": lambda a, b: a < b, "sgt": lambda a, b: signed(a) > signed(b)}
    for op in ops:
        args = [env[v] for v in op.operands]
        name = op.name
        if name == "llvm.mlir.constant":
            value = op.properties["value"].value.data & mask
        elif name == "llvm.icmp":
            flag = op.properties["predicate"].value.data
            predicate = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"][flag]
            value = int(predicates[predicate](*args))
        elif name == "llvm.select":
            value = args[1] if args[0] else args[2]
        elif name == "llvm.sdiv":
            a, b = signed(args[0]), signed(args[1])
            value = (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)) & mask
        else:
            value = _BINARY[name](*args) & mask
        env[op.results[0]] = value
    return env


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("spatial", [1, 2, 3])
def test_im2col_gather_walks_the_pixels_as_tma_does(spatial, seed):
    """The cp.async gather's closed-form pixel (`im2col_pixel`, evaluated on its llvm ops)
    is the TMA traversal's, stepped pixel by pixel, for ranks 3 to 5, negative corners,
    traversal strides 1 to 3, and starts on and off the lattice and past the box's end."""
    import random

    from xdsl.dialects.builtin import IndexType, MemRefType, f32, i16, i64
    from xdsl.ir import Block

    from passes.convert_copy_to_nvvm.emit import Emit
    from passes.convert_copy_to_nvvm.im2col import im2col_pixel

    rng = random.Random(seed * 10 + spatial)
    extents = [rng.randint(1, 9) for _ in range(spatial)]
    lower = [-rng.randint(0, 2) for _ in range(spatial)]
    upper = [rng.randint(-2, 1) for _ in range(spatial)]
    strides = [rng.randint(1, 3) for _ in range(spatial)]
    upper = [max(u, lo - e + 1) for u, lo, e in zip(upper, lower, extents, strict=True)]
    rank = spatial + 2
    args = Block(arg_types=[IndexType()] * rank + [i16] * spatial + [i64])
    ref = Block(arg_types=[MemRefType(f32, [3, *extents, 8])]).args[0]
    smem = Block(arg_types=[MemRefType(f32, [16, 8], memory_space=copy.SmemSpaceAttr())]).args[0]
    bar = Block(arg_types=[copy.BarrierType(1)]).args[0]
    op = copy.Im2colLoadOp(
        ref, smem, coordinates=args.args[:rank], offsets=args.args[rank:-1], barrier=bar,
        lower=lower, upper=upper, strides=strides,
    )  # fmt: skip
    origin = list(args.args[:rank])
    e = Emit()
    pixel = im2col_pixel(e, op.geometry(), origin, args.args[-1])
    ends = [x + u for x, u in zip(extents, upper, strict=True)]
    for trial in range(8):
        start = [rng.randint(0, 2)] + [
            rng.randint(lo - 2, end + 1) if trial % 2 else lo + strides[d] * rng.randint(0, 3)
            for d, (lo, end) in enumerate(zip(lower, ends, strict=True))
        ]
        want = _walk(start, lower, ends, strides, 40)
        for row in range(40):
            env = {v: x & ((1 << 64) - 1) for v, x in zip(origin, [*start, 0], strict=True)}
            env[args.args[-1]] = row
            got = _evaluate(e.ops, env)
            signed = [v - (1 << 64) if v >> 63 else v for v in (got[p] for p in pixel)]
            assert tuple(signed) == want[row], (start, row)


def test_im2col_load_becomes_a_cp_async_gather():
    """The load keeps its pixels, offsets, corners, strides and barrier, gathered by the
    block's 128 threads (`impl cp_async`, each arriving once: 128 arrivals); the L2 policy
    and the swizzle go; the wait and the tile's store (thread stores) follow."""
    conv = kernels.conv2d((1, 9, 7, 64), 3, stride=2, padding=1)
    module = legalized(
        kernels.im2col_gather(conv, "f32", channels=32, swizzle=128, cache_hint="evict_last"),
        "sm_86",
    )
    (load,) = [op for op in module.walk() if isinstance(op, copy.Im2colLoadOp)]
    assert str(load.implementation.data) == "cp_async"
    assert load.l2 is None
    assert load.arrive is None
    g = load.geometry()
    assert (g.lower, g.upper, g.traversal_strides) == (conv.lower, conv.upper, conv.stride)
    assert g.swizzle_bytes == 16
    assert g.barrier.owner.arrivals.value.data == 128
    compiled = compile_module(module, make_context())
    assert ".im2col" not in compiled.ptx
    assert "cp.async.cg.shared.global" in compiled.ptx
    assert compiled.cubin


def test_im2col_off_a_four_byte_boundary_is_reported():
    """A constant channel coordinate off a 4-byte boundary (f16 channel 3): cp.async copies
    aligned chunks (LG3). The TMA load is invalid too (IC13, issue S: it verified), so the
    verifier rejects it first; the pass, given it unverified, still reports LG3."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IndexType, IntegerAttr

    module = kernels.im2col_gather(kernels.conv2d((2, 9, 7, 16), 3, padding=1), "f16")
    load = next(op for op in module.walk() if isinstance(op, copy.Im2colLoadOp))
    c3 = arith.ConstantOp(IntegerAttr(3, IndexType()))
    load.parent_block().insert_op_before(c3, load)
    load.operands[len(load.coordinates)] = c3.result  # the channel coordinate (after src)
    with pytest.raises(CopyVerifyException) as info:
        verify_module(module)
    assert info.value.rules == ("IC13",)
    with pytest.raises(CopyVerifyException) as info:
        legalized(module, "sm_80")
    assert info.value.rules == ("LG3",)
    assert "4-byte boundary" in str(info.value)


@pytest.mark.parametrize("target", TARGETS)
def test_gpu_im2col_cases_compile_for_the_h200(target):
    """Every im2col case of test_legalize_gpu.py, legalized, verifies without a protocol
    warning, is a fixed point, and its PTX assembles for the H200 (sm_90), as the GPU test
    launches it."""
    import warnings

    from analysis.protocol import ProtocolWarning
    from tests.dialect.test_im2col import CASES
    from tests.dialect.test_im2col import module as im2col_module

    for case in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ProtocolWarning)
            once, twice = _twice(im2col_module(case), target)
        assert once == twice
        compiled = compile_module(parse(once), make_context(), arch="sm_90")
        assert ".im2col" not in compiled.ptx
        assert "cp.async.mbarrier.arrive.noinc" in compiled.ptx
        assert compiled.cubin


@pytest.mark.parametrize("persistent", [False, True], ids=["per_group", "persistent"])
def test_grouped_copy_loads_read_views_of_the_pool(persistent):
    """The map's value at the load (its rewrites before it: the pool at the group's offset,
    its rows, columns and pitch) becomes a view of the pool, which the cp.async copy reads;
    the map, its rewrites and fences go."""
    module = legalized(kernels.grouped_copy(3, 11139, (64, 129), persistent=persistent), "sm_80")
    ops = list(module.walk())
    assert not [op for op in ops if op.name.startswith("copy.tensormap")]
    (view,) = [op for op in ops if isinstance(op, memref.ReinterpretCastOp)]
    fn = next(op for op in ops if isinstance(op, func.FuncOp))
    assert view.source is fn.args[2]  # src, the pool
    (load,) = [op for op in ops if isinstance(op, copy.AsyncCopyOp)]
    assert load.src is view.result
    assert load.resolved_implementation() == copy.Implementation.CP_ASYNC


@pytest.mark.parametrize(("name", "chunks"), [("shift_2", {4, 8}), ("halved", {4, 8, 16})])
def test_load_at_a_coordinate_not_known_aligned_picks_its_chunk_at_run_time(name, chunks):
    """cp.async needs its global address aligned to its size. A cp.async load at `%bx * 64
    + 2` (8 bytes mod 16 in f32) picks 8- or 4-byte chunks at run time from the coordinate
    (LLVM drops the 16-byte loop it proves never taken), one at `%bx * 128 / 2` every size;
    the array need only be 4-byte aligned, checked at launch. (The sm_90a form of shift_2
    breaks TR12; its legalized form is a valid sm_80 kernel.)"""
    from tests.passes.test_legalize_gpu import ORIGINS, SHIFTED_STORE

    text = SHIFTED_STORE.replace("ORIGIN", ORIGINS[name][0])
    module = legalized(Parser(make_context(), text).parse_module(), "sm_80")
    compiled = compile_module(module, make_context())
    chunk = r"cp\.async\.c[ag]\.shared\.global \[[^]]*\], \[[^]]*\], (\d+)"
    found = re.findall(chunk, compiled.ptx)
    assert {int(size) for size in found} == chunks
    (abi,) = compiled.abi.kernels.values()
    assert abi.params[0].align == 4


def test_a_roles_cp_async_loop_issues_several_chunks_an_iteration():
    """A legalized producer warp issues a whole tile's chunks (32 x 256 f32: 64 per thread):
    its loop issues 8 an iteration, their address arithmetic independent; the block's loops
    and shares that 2 does not divide issue one."""
    from passes.convert_copy_to_nvvm.cp_async import unroll_factor

    assert unroll_factor(2048, 32) == 8
    assert unroll_factor(96, 32) == 1  # 3 a thread
    assert unroll_factor(2048, None) == 1
    assert unroll_factor(2000, 32) == 1  # not a whole share each
    module = legalized(kernels.ws_row_sum((256, 256), "f32", (32, 256), stages=2), "sm_80")
    ptx = compile_module(module, make_context()).ptx
    assert ptx.count("cp.async.cg.shared.global") == 8
