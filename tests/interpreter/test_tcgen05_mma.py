"""nvvm.tcgen05.mma and nvvm.tcgen05.commit in the interpreter: the kernels of
lit_tests/passes/tcgen05-mma-ptx.mlir and tcgen05-mma-i8-ptx.mlir themselves (kind f16 with
two K steps along 128B-swizzled slots; kind tf32 with A in TMEM, B N-major, D scaled by
2^-1 and lanes 0-31 left out; kind i8, unsigned A times signed B, saturating), their slots
(and A's TMEM) filled from GMEM first, bit-exact against a numpy model written here (the
canonical layouts' tile indices, D row r in TMEM lane r); the commit's arrival ordering the
MMA's SMEM reads (a slot rewritten before the wait on its barrier races) and an MMA no wait
covers (P7)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_dialect.errors import CopyDiagnosticError
from copy_tools import runtime
from copy_tools.universe import make_context
from tests.interpreter.test_wgmma import operand_fill, tile_index

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = (ROOT / "lit_tests/passes/tcgen05-mma-ptx.mlir").read_text().split("// -----")
I8 = (ROOT / "lit_tests/passes/tcgen05-mma-i8-ptx.mlir").read_text()
CONSTANTS = (0, 1, 2, 16, 32, 64, 128, 256)


A_ROWS_AND_D_INIT = "\n".join([
    "    %arow = vector.load %ga[%tid, %f0] : memref<128x8xf32>, vector<8xf32>",
    "    copy.tmem_store %arow, %atile[%f0] shape shape_32x32b num 8 : vector<8xf32>, "
    "memref<128x32xf32, #copy.tmem>",
    "    %three = arith.constant 3.0 : f32",
    "    %dinit = vector.broadcast %three : f32 to vector<8xf32>",
    "    copy.tmem_store %dinit, %acc[%f0] shape shape_32x32b num 8 : vector<8xf32>, "
    "memref<128x64xf32, #copy.tmem>",
    "    copy.tmem_wait store",
    "    gpu.barrier",
])  # fmt: skip
"""The kind::tf32 kernel's setup: each thread stores its row (lane tid) of A's 8 K columns
into %atile (A in TMEM), and D starts at 3."""


def filled(
    text: str, fills: list[tuple[str, str, tuple[int, ...], str, str]], extra: str = ""
) -> str:
    """`text` with a GMEM argument per fill (name, arg, buffer shape, SMEM type, element)
    copied into the buffer by every thread before the descriptors, and `extra` after."""
    args = ", ".join(
        f"%{arg}: memref<{int(np.prod(shape[:-1]))}x{shape[-1]}x{element}>"
        for _, arg, shape, _, element in fills
    )
    text = text.replace("%slot: index", f"%slot: index, {args}", 1)
    code = [
        "    %nthreads = arith.constant 128 : index",
        *(f"    %f{c} = arith.constant {c} : index" for c in CONSTANTS),
        *(
            operand_fill(name, arg, shape, smem, element, "%f")
            for name, arg, shape, smem, element in fills
        ),
        extra,
        "    copy.fence_async_shared",
    ]
    marker = "    %leader = arith.cmpi"
    return text.replace(marker, "\n".join(code) + "\n" + marker, 1)


def run(text: str, *arrays: np.ndarray, schedule: str = "random", seed: int = 0):
    module = Parser(make_context(), text).parse_module()
    return interpreter.run(module, *arrays, schedule=schedule, seed=seed)


def operand(flat: np.ndarray, shape: tuple[int, ...], slot: int, k_major: bool, swizzle: int,
            bits: int, rows: int, k: int) -> np.ndarray:  # fmt: skip
    tiles = flat.reshape(shape)[slot]
    out = np.zeros((rows, k), flat.dtype)
    for r in range(rows):
        for c in range(k):
            out[r, c] = tiles[tile_index(k_major, swizzle, bits, r, c)]
    return out


def k_order(a: np.ndarray, b: np.ndarray, d: np.ndarray | None = None) -> np.ndarray:
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32) if d is None else d.copy()
    for k in range(a.shape[1]):
        acc = (acc + a[:, k, None] * b[None, :, k]).astype(np.float32)
    return acc


F16_A = ("a", "ga", (2, 128, 64), "memref<2x128x64xf16, #copy.smem<swizzle = 128>>", "f16")
F16_B = ("b", "gb", (2, 128, 64), "memref<2x128x64xf16, #copy.smem<swizzle = 128>>", "f16")


def f16_case():
    rng = np.random.default_rng(0)
    ga = rng.standard_normal((256, 64)).astype(np.float16)
    gb = rng.standard_normal((256, 64)).astype(np.float16)
    a = operand(ga, (2, 128, 64), 1, True, 128, 16, 128, 32).astype(np.float32)
    b = operand(gb, (2, 128, 64), 1, True, 128, 16, 128, 32).astype(np.float32)
    return ga, gb, k_order(a, b)


def test_the_f16_kernel_is_bit_exact():
    ga, gb, d = f16_case()
    text = filled(CHUNKS[0], [F16_A, F16_B])
    for schedule in ("random", "round_robin", "adversarial"):
        result = run(text, np.zeros((128, 8), np.float32), 1, ga, gb, schedule=schedule)
        assert result.violations == [], [str(v) for v in result.violations]
        assert np.array_equal(result.arrays[0], d[:, :8])
    assert np.abs(d[:, :8]).max() > 1


def test_the_tf32_kernel_with_a_in_tmem_scale_and_lanes():
    rng = np.random.default_rng(1)
    gb = rng.standard_normal((2 * 2 * 32, 32)).astype(np.float32)
    ga = rng.standard_normal((128, 8)).astype(np.float32)
    fill_b = ("b", "gb", (2, 2, 32, 32), "memref<2x2x32x32xf32, #copy.smem<swizzle = 128>>", "f32")
    extra = A_ROWS_AND_D_INIT
    text = filled(CHUNKS[1], [fill_b], extra).replace(
        "%slot: index, %gb: memref<128x32xf32>, %lanes: vector<4xi32>",
        "%slot: index, %lanes: vector<4xi32>, %ga: memref<128x8xf32>, %gb: memref<128x32xf32>",
    )
    lanes = np.array([-1, 0, 0, 0], np.int32)  # lanes 0-31 keep D
    result = run(text, np.zeros((128, 8), np.float32), 1, lanes, ga, gb)
    assert result.violations == [], [str(v) for v in result.violations]
    tf32 = np.uint32(0xFFFFE000)
    a = (ga.view(np.uint32) & tf32).view(np.float32)
    b = operand(gb, (2, 2, 32, 32), 1, False, 128, 32, 64, 8)
    b = (b.view(np.uint32) & tf32).view(np.float32)
    d = k_order(a, b, np.full((128, 64), 3.0 * 0.5, np.float32))
    d[:32] = 0  # D's columns 8.. were never written: 0; its lanes 0-31 keep 3 in columns 0-7
    d[:32, :8] = 3.0
    assert np.array_equal(result.arrays[0], d[:, :8])


def test_the_i8_kernel_saturates_unsigned_times_signed():
    rng = np.random.default_rng(2)
    ga = rng.integers(0, 256, (256, 128)).astype(np.uint8).view(np.int8)
    gb = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    fills = [
        ("a", "ga", (2, 128, 128), "memref<2x128x128xui8, #copy.smem<swizzle = 128>>", "ui8"),
        ("b", "gb", (2, 32, 128), "memref<2x32x128xsi8, #copy.smem<swizzle = 128>>", "si8"),
    ]
    result = run(filled(I8, fills), np.zeros((128, 8), np.int32), 1, ga, gb)
    assert result.violations == [], [str(v) for v in result.violations]
    a = operand(ga.view(np.uint8), (2, 128, 128), 1, True, 128, 8, 128, 32).astype(np.int64)
    b = operand(gb, (2, 32, 128), 1, True, 128, 8, 32, 32).astype(np.int64)
    assert np.array_equal(result.arrays[0], np.clip(a @ b.T, -(2**31), 2**31 - 1)[:, :8])


def test_a_slot_rewritten_before_the_commit_arrives_races():
    ga, gb, _ = f16_case()
    store = (
        "      %h = arith.constant 1.0 : f16\n"
        f"      memref.store %h, %a[%slot, %c0, %c0] : {F16_A[3]}\n"
        "      nvvm.tcgen05.commit"
    )
    text = filled(CHUNKS[0], [F16_A, F16_B]).replace("      nvvm.tcgen05.commit", store, 1)
    result = run(text, np.zeros((128, 8), np.float32), 1, ga, gb, schedule="adversarial")
    races = [v for v in result.violations if v.rule == "P2"]
    assert races, [str(v) for v in result.violations]
    assert races[0].other is not None
    assert races[0].other.name == "nvvm.tcgen05.mma"
    # after the wait on the commit's barrier the slot is free again
    after = filled(CHUNKS[0], [F16_A, F16_B]).replace(
        '    llvm.inline_asm has_side_effects "tcgen05.fence::after_thread_sync;"',
        store.replace("      nvvm.tcgen05.commit", "").replace("      ", "    ").rstrip()
        + '\n    llvm.inline_asm has_side_effects "tcgen05.fence::after_thread_sync;"',
    )
    assert run(after, np.zeros((128, 8), np.float32), 1, ga, gb).violations == []


def test_an_mma_no_wait_covers_is_in_flight_at_return():
    ga, gb, _ = f16_case()
    text = filled(CHUNKS[0], [F16_A, F16_B]).replace(
        "      nvvm.tcgen05.commit %bar : !llvm.ptr<3>\n", ""
    )
    text = text.replace(
        "    nvvm.mbarrier.try_wait.parity.shared %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32\n",
        "",
    )
    result = run(text, np.zeros((128, 8), np.float32), 1, ga, gb)
    assert "P7" in {v.rule for v in result.violations}, [str(v) for v in result.violations]


@pytest.mark.parametrize(
    ("target", "refused"), [("sm_100a", False), ("sm_110a", True), ("sm_110f", True)]
)
def test_the_scaled_kernel_is_refused_where_the_target_has_no_scale_input_d(
    target: str, refused: bool
):
    """The interpreter has no target of its own: `runtime.interpret` verifies the IR (the op
    and kernel rules) before the run, so the tf32 kernel's MMA with a scale-input-d is MI8
    on Jetson Thor's sm_110a/f, which lack the operand, and runs on sm_100a."""
    rng = np.random.default_rng(1)
    gb = rng.standard_normal((2 * 2 * 32, 32)).astype(np.float32)
    ga = rng.standard_normal((128, 8)).astype(np.float32)
    fill_b = ("b", "gb", (2, 2, 32, 32), "memref<2x2x32x32xf32, #copy.smem<swizzle = 128>>", "f32")
    text = filled(CHUNKS[1], [fill_b], A_ROWS_AND_D_INIT).replace(
        "%slot: index, %gb: memref<128x32xf32>, %lanes: vector<4xi32>",
        "%slot: index, %lanes: vector<4xi32>, %ga: memref<128x8xf32>, %gb: memref<128x32xf32>",
    )
    text = text.replace('#copy.target<"sm_100a">', f'#copy.target<"{target}">')
    assert f'#copy.target<"{target}">' in text
    arrays = (np.zeros((128, 8), np.float32), 1, np.array([-1, 0, 0, 0], np.int32), ga, gb)
    if not refused:
        assert runtime.interpret(text, *arrays)[0].any()
        return
    with pytest.raises(CopyDiagnosticError, match="scale-input-d") as exc:
        runtime.interpret(text, *arrays)
    assert exc.value.rules == ("MI8",)
