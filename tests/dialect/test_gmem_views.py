"""cp.async copies and thread accesses of GMEM views made in the kernel
(`memref.reinterpret_cast` with offset, sizes and row pitch computed there), on the CPU:
the views verify (their dynamic stride is no H8; a type that disagrees with its cast is H9),
need no size parameter (`kernel_shapes`), and lower to PTX and cubins for sm_80, sm_86 and
sm_90a with the base, bounds and pitch taken from the cast, the chunk size picked at run
time from the view's address and pitch, and an element-by-element copy as the last choice
where no chunk is proven. test_gmem_views_gpu.py runs the table-driven kernel."""

from __future__ import annotations

import re

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from analysis.verify import verify_module
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from frontends import kernels
from passes.convert_copy_to_nvvm.dynamic_shapes import kernel_shapes
from passes.pipeline import compile_module

TARGETS = ["sm_80", "sm_86", "sm_90a"]
DTYPES = ["f32", "f16", "bf16", "i32", "i8"]
TILE = (8, 64)

VIEW = "memref<?x?x{e}, strided<[?, 1], offset: ?>>"
ARGUMENT = "memref<?x?xf32, strided<[?, 1]>>"

VIEW_CASES: dict[str, list[tuple[int, int, int, int]] | list[tuple[int, int]]] = {
    # grouped_layout: 16-byte aligned groups and pitches (16-byte chunks).
    "aligned": [(37, 70), (5, 3), (64, 129)],
    # (rows, cols, pitch, gap before): odd offsets and pitches (4-byte chunks for 4-byte
    # elements; the element loop for narrower ones).
    "odd": [(37, 70, 71, 3), (5, 3, 5, 2), (64, 129, 129, 0), (1, 1, 6, 5)],
    # f32 pitches and offsets of 8 bytes' alignment and no more (8-byte chunks).
    "eight": [(20, 30, 30, 0), (9, 66, 66, 0), (3, 2, 2, 0)],
}
"""Group lists of the view copy: shapes (laid out by `grouped_layout`), or rows, columns,
pitch and the gap before each group, in elements."""


def view_table(name: str, dtype: str) -> tuple[list[tuple[int, ...]], int]:
    """The table (offset, rows, cols, pitch per group) of a case, and the pool's capacity
    (some slack past the last group)."""
    groups = VIEW_CASES[name]
    if all(len(g) == 2 for g in groups):
        table = kernels.grouped_layout(groups, dtype)  # type: ignore[arg-type]
    else:
        table, offset = [], 0
        for rows, cols, pitch, gap in groups:  # type: ignore[misc]
            table.append((offset + gap, rows, cols, pitch))
            offset += gap + rows * pitch
    capacity = max(off + rows * pitch for off, rows, _, pitch in table) + 7
    return table, capacity


def biggest(name: str) -> tuple[int, int]:
    groups = VIEW_CASES[name]
    return max(g[0] for g in groups), max(g[1] for g in groups)


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def view_kernel(
    element: str = "f32", view: str = VIEW, more: str = "", target: str = "sm_80"
) -> str:
    """A kernel that cp.async-loads a 16x64 box of a view of `%pool` at (%off, %rows x
    %cols, pitch %pitch)."""
    view = view.format(e=element)
    return f"""builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{
      func.func @k(%pool: memref<4096x{element}>, %off: index, %rows: index, %cols: index,
                   %pitch: index) attributes {{gpu.known_block_size = array<i32: 128, 1, 1>}} {{
        %c0 = arith.constant 0 : index
        %v = memref.reinterpret_cast %pool to offset: [%off], sizes: [%rows, %cols],
            strides: [%pitch, 1] : memref<4096x{element}> to {view}
        %buf = copy.alloc_smem : memref<16x64x{element}, #copy.smem>
        copy.async_copy %v[%c0, %c0] to %buf impl cp_async oob zeros {more}
            : {view} to memref<16x64x{element}, #copy.smem>
        copy.commit_group cp_async
        copy.wait_group cp_async 0
        func.return
      }}
    }}"""


def compiled(module, target: str):
    return compile_module(module, make_context(), arch=None if target == "sm_90a" else "sm_90")


CP_ASYNC = re.compile(r"cp\.async\.c[ag]\.shared\.global \[.*?\], \[.*?\], (\d+)")


def chunk_sizes(ptx: str) -> list[int]:
    """The chunk sizes of the PTX's cp.async instructions."""
    return sorted({int(n) for n in CP_ASYNC.findall(ptx)})


# -- verification -----------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_view_copy_verifies(dtype, target):
    kernels.grouped_view_copy(3, 4096, dtype, TILE, target=target)  # verifies as it builds


def test_a_dynamic_stride_of_an_argument_is_still_h8():
    """An argument's `?` stride (offset 0: an offset is B14 before it) has no cast to give it."""
    text = view_kernel().replace("%v[", "%w[").replace(
        "%c0 = arith.constant 0 : index", "%c0 = arith.constant 0 : index\n"
    )
    text = text.replace(VIEW.format(e="f32") + " to", ARGUMENT + " to")
    module = parse(
        text.replace("%pool: memref<4096xf32>,", "%pool: memref<4096xf32>, %w: "
                     + ARGUMENT + ",")
    )  # fmt: skip
    with pytest.raises(CopyVerifyException) as info:
        verify_module(module)
    assert info.value.rules == ("H8",)
    assert "view the array with memref.reinterpret_cast" in str(info.value.note)


@pytest.mark.parametrize(
    ("view", "says"),
    [
        ("memref<?x?xf32, strided<[64, 1], offset: ?>>", "stride 0 is 64 where"),
        ("memref<?x?xf32, strided<[?, 1]>>", "the offset is 0 where"),
        ("memref<?x?xf32, strided<[?, 1], offset: 4>>", "the offset is 4 where"),
    ],
)  # fmt: skip
def test_a_view_type_that_disagrees_with_its_cast_is_h9(view, says):
    with pytest.raises(CopyVerifyException) as info:
        verify_module(parse(view_kernel(view=view)))
    assert info.value.rules == ("H9",)
    assert f"{says} the cast gives a value (?)" in str(info.value)
    assert "strided<[?, 1], offset: ?>" in str(info.value.note)


@pytest.mark.parametrize(
    ("pool", "found"),
    [
        ("memref<4096xf32, #copy.smem>", "memref<4096xf32, #copy.smem> to"),
        ("memref<4096xi32>", "memref<4096xi32> to"),
    ],
)  # fmt: skip
def test_a_view_of_anything_but_a_gmem_array_of_its_element_type_is_h9(pool, found):
    text = view_kernel().replace("memref<4096xf32>", pool)
    with pytest.raises(CopyVerifyException) as info:
        verify_module(parse(text))
    assert info.value.rules == ("H9",)
    assert f"got a memref.reinterpret_cast of {found}" in str(info.value)


def test_a_static_view_layout_is_checked_by_the_static_rules():
    """A cast with a static pitch: H2 reads it from the type (a 6-byte f16 pitch)."""
    text = view_kernel(
        "f16", view="memref<?x?x{e}, strided<[3, 1], offset: ?>>"
    ).replace("strides: [%pitch, 1]", "strides: [3, 1]")
    with pytest.raises(CopyVerifyException) as info:
        verify_module(parse(text))
    assert info.value.rules == ("H2",)


# -- what the kernel needs --------------------------------------------------------------


def test_a_view_needs_no_size_parameter_and_no_alignment():
    module = parse(view_kernel())
    verify_module(module)
    shapes = kernel_shapes(next(iter(module.body.block.ops)))
    assert shapes.sizes == ()
    assert dict(shapes.align) == {}


def test_the_view_copy_abi_has_no_size_parameters():
    module = kernels.grouped_view_copy(3, 4096, "f32", TILE)
    result = compiled(module, "sm_80")
    (abi,) = result.abi.kernels.values()
    assert [p.kind for p in abi.params] == ["pointer"] * 3


# -- lowering ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_view_copy_compiles(dtype, target):
    result = compiled(kernels.grouped_view_copy(3, 4096, dtype, TILE, target=target), target)
    assert result.cubin
    assert chunk_sizes(result.ptx) == [4, 8, 16]
    # Narrower elements than the smallest chunk: the element loop is the last choice.
    bits = {"f32": 32, "i32": 32, "f16": 16, "bf16": 16, "i8": 8}[dtype]
    element_loads = re.findall(rf"ld\.global(?:\.nc)?\.(?:b|u|s)?{bits} ", result.ptx)
    assert bool(element_loads) == (bits < 32), result.ptx


def test_cache_cg_on_a_view_falls_back_to_elements():
    """cache cg moves 16-byte chunks only, which no f32 view proves: a 16-byte loop, else
    the element loop."""
    module = parse(view_kernel(more="cache cg"))
    result = compile_module(module, make_context())
    assert chunk_sizes(result.ptx) == [16]
    assert "ld.global.b32" in result.ptx or "ld.global.u32" in result.ptx


def test_a_barrier_copy_fences_the_element_loop():
    """On a barrier, each thread's element stores are ordered before its arrival."""
    init = "%bar = copy.barrier_init arrivals 128 : !copy.barrier<1>\n"
    wait = "%p = arith.constant false\ncopy.barrier_wait %bar[%c0], %p : !copy.barrier<1>"
    text = (
        view_kernel("f16")
        .replace("%buf = copy.alloc_smem", init + "%buf = copy.alloc_smem")
        .replace("to %buf impl", "to %buf barrier %bar[%c0] impl")
        .replace("#copy.smem>\n        copy.commit_group cp_async", "#copy.smem>, !copy.barrier<1>")
        .replace("copy.wait_group cp_async 0", wait)
    )
    ptx = compile_module(parse(text), make_context()).ptx
    assert "fence.acq_rel.cta" in ptx
    assert ptx.index("fence.acq_rel.cta") < ptx.index("cp.async.mbarrier.arrive.noinc")


def test_a_reinterpret_cast_of_smem_is_reported_at_the_lowering():
    text = """builtin.module attributes {copy.target = #copy.target<"sm_80">} {
      func.func @k(%n: index, %y: memref<4xf32>)
          attributes {gpu.known_block_size = array<i32: 128, 1, 1>} {
        %c0 = arith.constant 0 : index
        %buf = copy.alloc_smem : memref<1024xf32, #copy.smem>
        %v = memref.reinterpret_cast %buf to offset: [0], sizes: [%n, 4], strides: [4, 1]
            : memref<1024xf32, #copy.smem> to memref<?x4xf32, strided<[4, 1]>, #copy.smem>
        %x = memref.load %v[%c0, %c0] : memref<?x4xf32, strided<[4, 1]>, #copy.smem>
        memref.store %x, %y[%c0] : memref<4xf32>
        func.return
      }
    }"""
    with pytest.raises(PassFailedException, match="expected a view of a GMEM array"):
        compile_module(parse(text), make_context())
