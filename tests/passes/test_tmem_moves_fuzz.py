"""A fuzz over the TMEM ops of issue 33 item 4 (the CTA group of copy.tmem_alloc /
tmem_dealloc / tmem_relinquish, copy.smem_to_tmem's shapes, multicasts, CTA group and
`scales` or `metadata`, copy.tmem_shift): configurations drawn from a grid (seeded), each
one a kernel verified by the op verifiers and the kernel rules; every configuration the
verifier accepts is lowered and assembled with nvJitLink (and ptxas, where on PATH) for its
target, and the rejections are counted by rule id (the set of ids seen is asserted, not the
counts). Never run: the project's GPU is an H200."""

from __future__ import annotations

import itertools
import random
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from xdsl.parser import Parser

from analysis.verify import verify_module
from copy_dialect.attributes import TmemCopyShape
from copy_dialect.errors import CopyDiagnosticError
from copy_dialect.tmem import TMEM_COPY_BYTES
from copy_tools.universe import make_context
from passes import backend
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

ELF_MAGIC = b"\x7fELF"
BITS = {"f32": 32, "i8": 8, "f8E8M0FNU": 8, "f8E4M3FN": 8, "i2": 2}
CLUSTERS = {"none": None, "2x1": (2, 1, 1), "3x2": (3, 2, 1)}
TARGETS = ("sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f", "sm_120a")


def header(name: str, cluster: str) -> str:
    shape = CLUSTERS[cluster]
    attrs = "gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>"
    if shape is not None:
        attrs += f", copy.cluster = array<i32: {', '.join(map(str, shape))}>"
    return f"  func.func @{name}() attributes {{{attrs}}} {{\n"


def group(g: int) -> str:
    return "" if g == 1 else f" cta_group {g}"


def copy_kernel(name, shape, multicast, g, kind, element, swizzle, column, cluster) -> str:
    """A copy of one shape's worth of SMEM (rows of 16 bytes, or of one 32-byte swizzle span)
    into a 32-column TMEM ref, at a constant column; `kind`: None, "scales" or "metadata"."""
    row_bytes = 16 if swizzle == 16 else 32
    rows = TMEM_COPY_BYTES[TmemCopyShape(shape)] // row_bytes
    src = f"memref<{rows}x{row_bytes * 8 // BITS[element]}x{element}, #copy.smem"
    src += ">" if swizzle == 16 else f"<swizzle = {swizzle}>>"
    tmem = f"memref<128x{32 * 32 // BITS[element]}x{element}, #copy.tmem>"
    cast = "" if multicast is None else f" multicast {multicast}"
    return (
        header(name, cluster) + f"    %c = arith.constant {column} : index\n"
        f"    %t = copy.tmem_alloc{group(g)} : {tmem}\n"
        f"    %s = copy.alloc_smem : {src}\n"
        f"    copy.smem_to_tmem %s to %t[%c] shape {shape}{cast}{group(g)}"
        f"{'' if kind is None else ' ' + kind} : {src}, {tmem}\n"
        f"    copy.tmem_dealloc %t{group(g)} : {tmem}\n"
        "    func.return\n  }\n"
    )


def shift_kernel(name, lanes, g, column, relinquish, cluster) -> str:
    tmem = f"memref<{lanes}x32xf32, #copy.tmem>"
    alloc = "memref<128x32xf32, #copy.tmem>"
    return (
        header(name, cluster) + f"    %c = arith.constant {column} : index\n"
        f"    %t = copy.tmem_alloc{group(g)} : {alloc}\n"
        + (f"    copy.tmem_relinquish{group(relinquish)}\n" if relinquish else "")
        + (
            f"    %v = memref.subview %t[0, 0] [64, 32] [1, 1] : {alloc} to {tmem}\n"
            if lanes == 64
            else ""
        )
        + f"    copy.tmem_shift %{'v' if lanes == 64 else 't'}[%c]{group(g)} : {tmem}\n"
        f"    copy.tmem_dealloc %t{group(g)} : {alloc}\n"
        "    func.return\n  }\n"
    )


COPY_GRID = list(
    itertools.product(
        [s.value for s in TmemCopyShape],
        [None, "warpx4", "warpx2_01_23", "warpx2_02_13"],
        (1, 2, 3),
        (None, "scales", "metadata"),
        tuple(BITS),
        (16, 32),
        (0, 30),
        tuple(CLUSTERS),
        TARGETS,
    )
)
SHIFT_GRID = list(
    itertools.product((128, 64), (1, 2), (0, 24, 28), (None, 1, 2), tuple(CLUSTERS), TARGETS)
)


def module_text(target: str, kernels: list[str]) -> str:
    body = "".join(kernels)
    return f'builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{\n{body}}}'


def verdict(target: str, kernel: str) -> str:
    """'ok', or the rule ids of the verifier's first error."""
    module = Parser(make_context(), module_text(target, [kernel])).parse_module()
    try:
        verify_module(module, protocol=False)
    except CopyDiagnosticError as exc:
        return " ".join(exc.rules) or "?"
    return "ok"


def sample(seed: int, size: int) -> list[tuple[str, str]]:
    """(target, kernel) pairs: `size` configurations of each grid, drawn with `seed`."""
    rng = random.Random(seed)
    drawn = []
    for n, (*config, target) in enumerate(rng.sample(COPY_GRID, size)):
        drawn.append((target, copy_kernel(f"cp{n}", *config)))
    for n, (*config, target) in enumerate(rng.sample(SHIFT_GRID, min(size, len(SHIFT_GRID)))):
        drawn.append((target, shift_kernel(f"sh{n}", *config)))
    return drawn


def test_accepted_configurations_assemble_and_rejections_are_counted(tmp_path: Path):
    counts: Counter[str] = Counter()
    accepted: dict[str, list[str]] = {}
    for target, kernel in sample(33, 400):
        got = verdict(target, kernel)
        counts[got] += 1
        if got == "ok":
            accepted.setdefault(target, []).append(kernel)
    print(
        dict(counts)
    )  # seed 33: 36 accepted; J26 346, A14 192, J13 91, J30 61, J14 36, J23 28, J28 10
    assert counts["ok"] >= 20, counts
    assert set(accepted) == {"sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f"}, set(accepted)
    for target, kernels in accepted.items():
        module = Parser(make_context(), module_text(target, kernels)).parse_module()
        compiled = compile_module(module, make_context(), target, verify_protocol=False)
        assert compiled.cubin.startswith(ELF_MAGIC)
        assert compiled.ptx.count("tcgen05.dealloc") == len(kernels)
        check_ptxas(compiled.ptx, target, tmp_path)
    assert set(counts) - {"ok"} == {"A14", "J13", "J14", "J23", "J26", "J28", "J30"}, counts


@pytest.mark.parametrize("target", ["sm_100a", "sm_103a", "sm_110a"])
def test_shift_scales_and_metadata_assemble(target: str, tmp_path: Path):
    kernels = [
        shift_kernel("shift_one", 128, 1, 24, None, "none"),
        shift_kernel("shift_pair", 128, 2, 0, 2, "2x1"),
        copy_kernel("sfa", "shape_32x128b", "warpx4", 1, "scales", "f8E8M0FNU", 16, 0, "none"),
        copy_kernel("sfb", "shape_64x128b", "warpx2_01_23", 2, "scales", "f8E4M3FN", 16, 4, "2x1"),
        copy_kernel("meta", "shape_128x128b", None, 1, "metadata", "i2", 16, 8, "none"),
        copy_kernel("meta2", "shape_128x128b", None, 2, "metadata", "i2", 16, 28, "2x1"),
    ]
    module = Parser(make_context(), module_text(target, kernels)).parse_module()
    compiled = compile_module(module, make_context(), target, verify_protocol=False)
    assert compiled.cubin.startswith(ELF_MAGIC)
    for instruction in (
        "tcgen05.shift.cta_group::1.down",
        "tcgen05.shift.cta_group::2.down",
        "tcgen05.cp.cta_group::1.32x128b.warpx4",
        "tcgen05.cp.cta_group::2.64x128b.warpx2::01_23",
        "tcgen05.cp.cta_group::1.128x128b",
        "tcgen05.cp.cta_group::2.128x128b",
    ):
        assert instruction in compiled.ptx, instruction
    check_ptxas(compiled.ptx, target, tmp_path)


RAW_CP = """.version 8.8
.target sm_100a
.address_size 64
.visible .entry k() {{
.reg .b32 %r<2>;
.reg .b64 %rd<2>;
mov.u32 %r1, 0;
mov.u64 %rd1, 0;
tcgen05.cp.cta_group::{group}.{shape}{multicast} [%r1], %rd1;
ret;
}}
"""


@pytest.mark.skipif(not backend.ptxas_available(), reason="no ptxas on PATH")
def test_j14_is_the_pairing_ptxas_accepts(tmp_path: Path):
    """J14 (a shape's multicast) accepts exactly the tcgen05.cp forms ptxas assembles, for
    both CTA groups: 64x128b with warpx2::02_13 or ::01_23, 32x128b with warpx4, the others
    with none."""
    casts = {None: "", "warpx4": ".warpx4", "warpx2_01_23": ".warpx2::01_23"}
    casts["warpx2_02_13"] = ".warpx2::02_13"
    for shape, multicast, group in itertools.product(TmemCopyShape, casts, (1, 2)):
        kernel = copy_kernel(
            "k", shape.value, multicast, group, None, "f32", 16, 0, "2x1" if group == 2 else "none"
        )
        verified = verdict("sm_100a", kernel)
        source = tmp_path / "cp.ptx"
        source.write_text(
            RAW_CP.format(
                group=group, shape=shape.value.removeprefix("shape_"), multicast=casts[multicast]
            )
        )
        assembled = (
            subprocess.run(
                ["ptxas", "-arch=sm_100a", str(source), "-o", str(tmp_path / "cp.o")],
                capture_output=True,
            ).returncode
            == 0
        )
        assert verified in ("ok", "J14"), (shape, multicast, group, verified)
        assert (verified == "ok") == assembled, (shape, multicast, group, verified)
