"""The sm_110a / sm_110f feature matrix (Jetson Thor, issue 33) as data, checked two ways: each
row's gate (the `Feature` the verifiers and builders ask) against the matrix, and, where a
`ptxas` is on PATH, ptxas against the matrix with a tiny kernel of the row's instruction, so
that the gates and the assembler cannot drift apart. Each row's kernel is also assembled for a
control target that has the instruction, so that a refusal is the target's and not a broken
kernel's. docs/targets.md gives the same table with the PTX ISA's notes.

Then the verifier's side: where sm_110f lacks a feature (tcgen05.shift, kind::i8) it is refused
with the rule id the other targets get, an MMA with a scale-input-d, which neither Thor target
has, is MI8 on both, and tcgen05.ld.red, refused on sm_100a, goes through the pipeline for
sm_110a and sm_110f."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from xdsl.parser import Parser

from analysis.verify import verify_module
from copy_dialect.cluster_launch_control import CLC_MULTICAST, CLUSTER_LAUNCH_CONTROL
from copy_dialect.errors import CopyDiagnosticError
from copy_dialect.gather4_targets import GATHER4, GATHER4_PREFETCH, SCATTER4
from copy_dialect.instruction_descriptor import MMA_I8
from copy_tools.universe import make_context
from facts.target import (
    CLUSTERS,
    CTA_PAIR,
    GRID_DEPENDENCY,
    MATRIX_B8,
    MMA_SCALE_INPUT_D,
    MULTICAST,
    SETMAXNREG,
    STMATRIX,
    TARGETS,
    TCGEN05,
    TCGEN05_SHIFT,
    TENSORMAP_REPLACE,
    TMA,
    TMEM_LOAD_REDUCE,
    Feature,
)
from passes import backend
from passes.pipeline import compile_module
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
THOR = ("sm_110a", "sm_110f")

# Kernel bodies, one instruction family each (PTX ISA 8.6-9.0 syntax).
_BAR = ".shared .align 8 .b64 bar;"
_BUF = ".shared .align 128 .b8 buf[1024];"
_MMA = """.reg .b32 %r<4>; .reg .b64 %rd<2>; .reg .pred %p;
  mov.u32 %r1, 0; mov.b64 %rd1, 0; setp.ne.u32 %p, %r1, 0;"""
KERNELS = {
    "tma": f"""(.param .u64 p) {{ .reg .b64 %rd<2>; .reg .b32 %r<2>; {_BUF} {_BAR}
  ld.param.u64 %rd1, [p]; mov.u32 %r1, 0;
  cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes
    [buf], [%rd1, {{%r1, %r1}}], [bar];""",
    "clusters": """() {
  barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;""",
    "multicast": f"""(.param .u64 p) {{ .reg .b64 %rd<2>; .reg .b32 %r<2>; .reg .b16 %h<2>;
  {_BUF} {_BAR} ld.param.u64 %rd1, [p]; mov.u32 %r1, 0; mov.u16 %h1, 3;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
    [buf], [%rd1, {{%r1, %r1}}], [bar], %h1;""",
    "tensormap_replace": """(.param .u64 p) { .reg .b64 %rd<2>; ld.param.u64 %rd1, [p];
  tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd1;
  fence.proxy.tensormap::generic.release.gpu;""",
    "setmaxnreg": """() {
  setmaxnreg.inc.sync.aligned.u32 240;""",
    "griddepcontrol": """() {
  griddepcontrol.wait; griddepcontrol.launch_dependents;""",
    "stmatrix": f"""() {{ .reg .b32 %r<2>; {_BUF} mov.u32 %r1, 0;
  stmatrix.sync.aligned.m8n8.x1.shared.b16 [buf], {{%r1}};""",
    "tcgen05_alloc": """() { .reg .b32 %r<2>; .shared .align 8 .b32 slot; mov.u32 %r1, 32;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], %r1;
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;""",
    "cta_group_2": """() { .reg .b32 %r<2>; .shared .align 8 .b32 slot; mov.u32 %r1, 32;
  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [slot], %r1;""",
    "tcgen05_shift": """() { .reg .b32 %r<2>; mov.u32 %r1, 0;
  tcgen05.shift.cta_group::1.down [%r1];""",
    "tcgen05_ld_red": """() { .reg .b32 %r<2>; .reg .f32 %f<4>; mov.u32 %r1, 0;
  tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 {%f1, %f2}, %f3, [%r1];
  tcgen05.wait::ld.sync.aligned;""",
    "ldmatrix_b8": f"""() {{ .reg .b32 %r<3>; {_BUF}
  ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {{%r1, %r2}}, [buf];""",
    "stmatrix_b8": f"""() {{ .reg .b32 %r<2>; {_BUF} mov.u32 %r1, 0;
  stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [buf], {{%r1}};""",
    "gather4": f"""(.param .u64 p) {{ .reg .b64 %rd<2>; .reg .b32 %r<2>; {_BUF} {_BAR}
  ld.param.u64 %rd1, [p]; mov.u32 %r1, 0;
  cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes
    [buf], [%rd1, {{%r1, %r1, %r1, %r1, %r1}}], [bar];""",
    "scatter4": f"""(.param .u64 p) {{ .reg .b64 %rd<2>; .reg .b32 %r<2>; {_BUF}
  ld.param.u64 %rd1, [p]; mov.u32 %r1, 0;
  cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group
    [%rd1, {{%r1, %r1, %r1, %r1, %r1}}], [buf];""",
    "gather4_prefetch": """(.param .u64 p) { .reg .b64 %rd<2>; .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p]; mov.u32 %r1, 0;
  cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4 [%rd1, {%r1, %r1, %r1, %r1, %r1}];""",
    "clc": f"""() {{ .reg .pred %p; .reg .b128 %q; .shared .align 16 .b8 resp[16]; {_BAR}
  clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [resp], [bar];
  ld.shared.b128 %q, [resp]; clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p, %q;""",
    "clc_multicast": f"""() {{ .shared .align 16 .b8 resp[16]; {_BAR}
  clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128
    [resp], [bar];""",
    "mma_i8": f"""() {{ {_MMA}
  tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd1, %r1, %p;""",
    "mma_scale_input_d": f"""() {{ {_MMA}
  tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd1, %r1, %p, 3;""",
    "wgmma": """() { .reg .b64 %rd<2>; .reg .f32 %f<5>; mov.b64 %rd1, 0;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd1, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0;""",
}

# family: (the gate, or None where the project leaves the target to the backend; whether
# sm_110a and sm_110f have it; a control target that has it).
MATRIX: dict[str, tuple[Feature | None, tuple[bool, bool], str]] = {
    "tma": (TMA, (True, True), "sm_90a"),
    "clusters": (CLUSTERS, (True, True), "sm_90"),
    "multicast": (MULTICAST, (True, True), "sm_90a"),
    "tensormap_replace": (TENSORMAP_REPLACE, (True, True), "sm_90a"),
    "setmaxnreg": (SETMAXNREG, (True, True), "sm_90a"),
    "griddepcontrol": (GRID_DEPENDENCY, (True, True), "sm_90"),
    "stmatrix": (STMATRIX, (True, True), "sm_90"),
    "tcgen05_alloc": (TCGEN05, (True, True), "sm_100a"),
    "cta_group_2": (CTA_PAIR, (True, True), "sm_100a"),
    "tcgen05_shift": (TCGEN05_SHIFT, (True, False), "sm_100a"),
    "tcgen05_ld_red": (TMEM_LOAD_REDUCE, (True, True), "sm_103a"),
    "ldmatrix_b8": (MATRIX_B8, (True, True), "sm_100a"),
    "stmatrix_b8": (MATRIX_B8, (True, True), "sm_100a"),
    "gather4": (GATHER4, (True, True), "sm_100a"),
    "scatter4": (SCATTER4, (True, True), "sm_100a"),
    "gather4_prefetch": (GATHER4_PREFETCH, (True, True), "sm_100a"),
    "clc": (CLUSTER_LAUNCH_CONTROL, (True, True), "sm_100a"),
    "clc_multicast": (CLC_MULTICAST, (True, True), "sm_100a"),
    "mma_i8": (MMA_I8, (True, False), "sm_100a"),
    # nvvm.tcgen05.mma's scale_input_d: the kernel rule MI8 asks the gate (the op is
    # upstream's; LLVM 22 cannot select llvm.nvvm.tcgen05.mma.shared.scale_d there).
    "mma_scale_input_d": (MMA_SCALE_INPUT_D, (False, False), "sm_100a"),
    # wgmma is sm_90a's alone (copy-legalize's LG3 names it).
    "wgmma": (None, (False, False), "sm_90a"),
}

ROWS = [
    pytest.param(family, target, has[i], id=f"{family}-{target}")
    for family, (_, has, _) in MATRIX.items()
    for i, target in enumerate(THOR)
]


def test_every_kernel_has_a_row():
    assert set(KERNELS) == set(MATRIX)


@pytest.mark.parametrize(("family", "target", "has"), ROWS)
def test_the_gate_states_the_matrix(family: str, target: str, has: bool):
    feature = MATRIX[family][0]
    if feature is None:
        pytest.skip(f"{family}: no gate of the project; ptxas alone decides")
    assert feature.has(TARGETS[target]) is has


def ptxas(family: str, target: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`ptxas -arch=target` on the family's kernel, at the target's PTX ISA version."""
    isa = TARGETS[target].ptx_isa
    source = tmp_path / f"{family}_{target}.ptx"
    source.write_text(
        f".version {isa // 10}.{isa % 10}\n.target {target}\n.address_size 64\n"
        f".visible .entry k{KERNELS[family]}\n  ret;\n}}\n"
    )
    command = ["ptxas", f"-arch={target}", str(source), "-o", str(tmp_path / "k.cubin")]
    return subprocess.run(command, capture_output=True, text=True)


needs_ptxas = pytest.mark.skipif(not backend.ptxas_available(), reason="no ptxas on PATH")


@needs_ptxas
@pytest.mark.parametrize(("family", "target", "has"), ROWS)
def test_ptxas_states_the_matrix(family: str, target: str, has: bool, tmp_path: Path):
    out = ptxas(family, target, tmp_path)
    assert (out.returncode == 0) is has, out.stderr
    if not has:
        assert "not supported on .target" in out.stderr, out.stderr


@needs_ptxas
@pytest.mark.parametrize("family", MATRIX)
def test_each_kernel_assembles_for_its_control_target(family: str, tmp_path: Path):
    control = MATRIX[family][2]
    out = ptxas(family, control, tmp_path)
    assert out.returncode == 0, out.stderr


def lit_function(path: str, name: str) -> str:
    """The `// -----` chunk of a lit test that defines `@name`."""
    chunks = (ROOT / "lit_tests" / path).read_text().split("// -----")
    (chunk,) = [c for c in chunks if f"func.func @{name}(" in c]
    return chunk


def rules_on(text: str, old: str, target: str) -> tuple[str, ...]:
    """The rule ids the verifier gives `text` with its target `old` set to `target`; () if
    it verifies."""
    text = text.replace(f'#copy.target<"{old}">', f'#copy.target<"{target}">')
    module = Parser(make_context(), text).parse_module()
    try:
        verify_module(module, protocol=False)
    except CopyDiagnosticError as exc:
        return tuple(exc.rules)
    return ()


@pytest.mark.parametrize(
    ("path", "name", "old", "rule"),
    [
        ("dialects/copy/invalid-tmem-moves.mlir", "a14_shift_on_sm_100f", "sm_100f", "A14"),
        ("dialects/copy/invalid-instruction-descriptor.mlir", "mi7_i8_on_sm103a", "sm_103a", "MI7"),
    ],
)
def test_what_sm_110f_lacks_is_refused_with_the_rule_of_the_other_targets(
    path: str, name: str, old: str, rule: str
):
    chunk = lit_function(path, name)
    assert rules_on(chunk, old, old) == (rule,)
    assert rules_on(chunk, old, "sm_110f") == (rule,)
    assert rules_on(chunk, old, "sm_110a") == ()


@pytest.mark.parametrize("target", TCGEN05.targets)
def test_a_scaled_mma_is_refused_where_the_gate_says(target: str):
    chunk = lit_function("dialects/copy/invalid-mma-targets.mlir", "mi8_scale_on_sm_110a")
    expected = () if MMA_SCALE_INPUT_D.has(TARGETS[target]) else ("MI8",)
    assert rules_on(chunk, "sm_110a", target) == expected
    assert (target in THOR) is bool(expected)


@pytest.mark.parametrize("target", THOR)
def test_load_reduce_goes_through_the_pipeline_for_thor(target: str, tmp_path: Path):
    text = (ROOT / "tests" / "passes" / "option_kernels" / "tmem_reduce.mlir").read_text()
    assert rules_on(text, "sm_103a", "sm_100a") == ("A14",)
    text = text.replace('#copy.target<"sm_103a">', f'#copy.target<"{target}">')
    module = Parser(make_context(), text).parse_module()
    compiled = compile_module(module, make_context(), target)
    assert "tcgen05.ld.red.sync.aligned.32x32b.x8.max" in " ".join(compiled.ptx.split())
    check_ptxas(compiled.ptx, target, tmp_path)
