"""`kernels.gemm`, the warp-specialized GEMM on wgmma: its argument checks (expected, got,
fix: never a traceback of the builder), its kernels verified with no error and no warning
(the tensor-core reads included), compiled for sm_90a and, where `ptxas` is on PATH,
assembled with no spill and no serialized wgmma; and run under the interpreter bit-exact
against a numpy model that accumulates as the interpreter documents (interpreter/mma.py:
each product exact in f32, added in k order with a rounding after each add, from a zero
accumulator, over the K-blocks' zero-filled columns too; C rounded once to nearest even).
tests/frontends/test_gemm_gpu.py compares with numpy on a GPU, under a tolerance."""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import scf
from xdsl.utils.exceptions import VerifyException

from analysis.verify import verify_module
from copy_tools import runtime
from copy_tools.universe import make_context
from frontends import kernels
from passes import backend
from passes.backend_targets import AssemblerWarning
from passes.nvvm.wgmma import WgmmaWaitGroupSyncOp
from passes.pipeline import compile_module
from tests.runtime.test_runtime_gpu import numpy_dtype

M, N, K = 256, 256, 512


def built(*args: object, **kwargs: object):
    """The module of `kernels.gemm(*args, **kwargs)` and the warnings its verification gave."""
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        module = kernels.gemm(*args, **kwargs)  # type: ignore[arg-type]
    return module, [str(w.message) for w in found]


@pytest.mark.parametrize(
    ("args", "kwargs", "words"),
    [
        ((0, N, K), {}, "positive integer M, N and K"),
        ((M, N, K), {"dtype": "f32"}, "dtype one of bf16, f16"),
        ((M, N, K), {"out": "i8"}, "out one of bf16, f16, f32"),
        ((M, N, K), {"schedule": "split"}, "schedule one of cooperative, pingpong"),
        ((M, N, K), {"cluster": 4}, "cluster 1 or 2"),
        ((M, N, 100), {}, "K a multiple of 8"),
        ((M, 100, K), {}, "N a multiple of 8"),
        ((M, 102, K), {"out": "f32"}, "N a multiple of 4"),
        ((M, N, K), {"tile": (64, 128, 64)}, "tile M in (128, 256)"),
        ((M, N, K), {"tile": (256, 128, 64), "schedule": "pingpong"}, "tile M in (64, 128)"),
        ((M, N, K), {"tile": (128, 128, 128)}, "tile K of 16, 32 or 64"),
        ((M, N, K), {"tile": (128, 120, 64)}, "tile N a multiple of 16"),
        ((M, N, K), {"tile": (128, 64)}, "a tile of three integers"),
        ((M, N, K), {"tile": (256, 256, 64)}, "at most 128 f32 accumulators"),
        ((M, N, K), {"stages": 1}, "2 to"),
        ((M, N, K), {"stages": 9}, "2 to"),
        ((M, N, K), {"target": "sm_100a"}, "target sm_90a"),
        ((M, N, K), {"target": "sm_80"}, "target sm_90a"),
    ],
    ids=lambda v: str(v) if isinstance(v, str) else None,
)
def test_rejects(args, kwargs, words):
    with pytest.raises(ValueError, match="^expected ") as info:
        kernels.gemm(*args, **kwargs)
    message = str(info.value)
    assert words in message
    assert ", got " in message
    assert "; " in message  # the fix


VERIFIED = [
    # (M, N, K, options): every one verified with no error and no warning
    ((256, 256, 512), {}),
    ((130, 72, 80), {"tile": (128, 64, 64), "out": "f32"}),
    ((200, 264, 136), {"dtype": "f16", "out": "f16", "tile": (128, 128, 32), "stages": 3}),
    ((256, 256, 192), {"schedule": "pingpong"}),
    ((256, 256, 256), {"schedule": "pingpong", "stages": 3, "out": "f32"}),
]


@pytest.mark.parametrize(("shape", "options"), VERIFIED, ids=str)
def test_verifies_without_warning(shape, options):
    _, found = built(*shape, **options)
    assert found == []


def test_unverified_is_the_same_module():
    """`verify=False` skips the proof, not the kernel: the same IR; junk for it is an
    argument error."""
    module, _ = built(256, 256, 512)
    assert str(kernels.gemm(256, 256, 512, verify=False)) == str(module)
    with pytest.raises(ValueError, match="^expected verify to be a bool, got 'no'; "):
        kernels.gemm(256, 256, 512, verify="no")


def test_early_release_is_caught():
    """The proof covers the tensor-core reads: the built kernel with each consumer's
    `wait.group 1` moved after the release of the previous slot hands a slot back while
    its wgmma may still read it (P2)."""
    module, _ = built(M, N, K)
    waits = [
        op
        for op in module.walk()
        if isinstance(op, WgmmaWaitGroupSyncOp) and op.group.value.data == 1
    ]
    assert len(waits) == 2  # one per consumer warpgroup
    for wait in waits:
        release = wait.next_op
        while not isinstance(release, scf.IfOp):
            release = release.next_op
        wait.detach()
        block = release.parent_block()
        assert block is not None
        block.insert_op_after(wait, release)
    with pytest.raises(VerifyException, match="may still be reading it"):
        verify_module(module)


@pytest.mark.parametrize(
    ("shape", "options"),
    [((256, 256, 256), {}), ((256, 256, 512), {"schedule": "pingpong"})],
    ids=str,
)
def test_late_steady_state(shape, options):
    """These kernels settle into their lap late (from tile 4, 6 for pingpong): the analysis
    walks their loops far enough (or an unsettled loop two laps further once) and proves
    them."""
    _, found = built(*shape, **options)
    assert found == []


@pytest.mark.parametrize(
    "options",
    [{}, {"out": "f32"}, {"schedule": "pingpong"}],
    ids=str,
)
def test_assembles(options, tmp_path: Path):
    """The default tile and stages for sm_90a: PTX with wgmma and stmatrix; `ptxas -v`
    reports no spill and no serialized wgmma."""
    module, _ = built(4096, 4096, 256 if options else 512, **options)
    compiled = compile_module(module, make_context(), "sm_90a", verify_protocol=False)
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in compiled.ptx
    assert "wgmma.wait_group.sync.aligned" in compiled.ptx
    # the register count at entry that the roles' setmaxnreg move from (else ptxas ignores
    # them: C7508)
    assert ".maxnreg 168" in compiled.ptx
    if options.get("out") != "f32":
        assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in compiled.ptx
    if not backend.ptxas_available():
        pytest.skip("no ptxas on PATH")
    source = tmp_path / "gemm.ptx"
    source.write_text(compiled.ptx)
    out = subprocess.run(
        ["ptxas", "-v", "-arch=sm_90a", str(source), "-o", str(tmp_path / "gemm.cubin")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "serialized" not in out.stderr, out.stderr
    assert " 0 bytes spill stores" in out.stderr
    assert " 0 bytes spill loads" in out.stderr


@pytest.mark.parametrize(
    "options", [{}, {"schedule": "pingpong"}, {"cluster": 2}, {"tile": (128, 256, 64)}], ids=str
)
def test_nvjitlink_keeps_wgmma_pipelined(options, monkeypatch):
    """What the runtime assembles with, nvJitLink, reports no serialized wgmma (C7509: a
    64-bit division by a register, a call in SASS, had serialized every wgmma of the kernel
    on the H100); without a ptxas on PATH only its ignored setmaxnreg (C7504), as an
    AssemblerWarning; with one, the cubin is ptxas's whole-program one, with no note."""
    module = kernels.gemm(4096, 4096, 512, verify=False, **options)
    with monkeypatch.context() as patch:
        patch.setattr(backend, "ptxas_available", lambda: False)
        with warnings.catch_warnings(record=True) as found:
            warnings.simplefilter("always")
            compiled = compile_module(
                module.clone(), make_context(), "sm_90a", verify_protocol=False
            )
    assert [n[:7] for n in compiled.notes] == ["(C7504)"]
    assert [type(w.message) for w in found] == [AssemblerWarning]
    assert "setmaxnreg" in str(found[0].message)
    assert found[0].filename == __file__  # at the caller's line, not the backend's
    if not backend.ptxas_available():
        pytest.skip("no ptxas on PATH")
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        whole = compile_module(module, make_context(), "sm_90a", verify_protocol=False)
    assert whole.notes == ()
    assert found == []
    assert whole.cubin[:4] == b"\x7fELF"
    assert whole.cubin != compiled.cubin


def operands(shape: tuple[int, int, int], dtype: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    M, N, K = shape
    a = rng.standard_normal((M, K)).astype(numpy_dtype(dtype))
    b = rng.standard_normal((N, K)).astype(numpy_dtype(dtype))
    return a, b


def model(a: np.ndarray, b: np.ndarray, tile_k: int, out: str) -> np.ndarray:
    """C as the interpreter computes it: f32 products added in k order, rounded after each
    add, over K rounded up to whole K-blocks (the zero-filled columns add +0.0)."""
    (M, K), N = a.shape, b.shape[0]
    padded = -(-K // tile_k) * tile_k
    af = np.zeros((M, padded), np.float32)
    bf = np.zeros((N, padded), np.float32)
    af[:, :K], bf[:, :K] = a, b
    acc = np.zeros((M, N), np.float32)
    for k in range(padded):
        acc = acc + af[:, k : k + 1] * bf[None, :, k]
    return acc.astype(numpy_dtype(out))


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    unsigned = {2: np.uint16, 4: np.uint32}[x.itemsize]
    return x.shape == y.shape and bool(np.array_equal(x.view(unsigned), y.view(unsigned)))


INTERPRETED = [
    # (M, N, K, options, sms): the interpreter's run bit-exact against `model`
    ((128, 128, 128), {}, None),
    ((130, 72, 80), {"tile": (128, 64, 64), "out": "f32"}, None),
    # row-major (the default walks 8 tile rows at a time: 4 here, the largest divisor)
    ((512, 256, 64), {"group": 1}, 3),
    ((200, 264, 136), {"dtype": "f16", "out": "f16", "tile": (128, 128, 32), "stages": 3}, 2),
    ((256, 256, 192), {"schedule": "pingpong"}, 1),
    # 4 tile rows walked 2 at a time (column by column), 3 blocks over the 8 tiles
    ((512, 256, 64), {"group": 2}, 3),
    # 3 tile rows (the last of 44 rows) walked 3 at a time, 4 tile columns (the last of 8
    # columns), 5 blocks over the 12 tiles
    ((300, 200, 64), {"tile": (128, 64, 64), "group": 3}, 5),
]


@pytest.mark.parametrize(("shape", "options", "sms"), INTERPRETED, ids=str)
def test_interpreted_bit_exact(shape, options, sms, monkeypatch):
    monkeypatch.setenv("COPY_INTERPRET", "1")
    module, found = built(*shape, **options)
    assert found == []
    program = runtime.compile(module, verify=False)  # the builder verified it
    dtype, out = options.get("dtype", "bf16"), options.get("out", "bf16")
    tile = options.get("tile", (128, 128, 64))
    a, b = operands(shape, dtype, seed=sum(shape))
    c = np.zeros(shape[:2], numpy_dtype(out))
    schedule = options.get("schedule", "cooperative")
    grid = kernels.gemm_grid(shape[0], shape[1], tile, sms=sms, schedule=schedule)
    program(a, b, c, grid=grid)
    assert same_bits(c, model(a, b, tile[2], out))


def test_grid():
    """One block per tile, a pair per cluster of 2 (an odd tile column's pair has a block
    whose tiles lie past N: its loads are zero-filled, its stores clipped away), two tiles
    per block for pingpong, at most `sms` blocks."""
    assert kernels.gemm_grid(4096, 4096) == (1024, 1)
    assert kernels.gemm_grid(4096, 4096, schedule="pingpong") == (512, 1)
    assert kernels.gemm_grid(4096, 4096, sms=132) == (132, 1)
    assert kernels.gemm_grid(4096, 4096, sms=132, cluster=2) == (132, 1)
    assert kernels.gemm_grid(130, 384, cluster=2) == (8, 1)
    assert kernels.gemm_grid(64, 64, (128, 256, 64), sms=132) == (1, 1)


def test_cluster_pair_interpreted(monkeypatch):
    """cluster=2 under the interpreter, bit-exact: two clusters, A multicast to each pair
    with the peer releases, and an odd tile column (the pair's second block's tile lies past
    N: zero-filled loads, stores clipped away). Proven with no warning: the peer CTA's
    classes never learn of this CTA's old loads, and the analysis keeps only the latest
    load of each slot (`smem.latest`), where it kept one a lap, whose phase drifted, so that
    the tile loop reached no steady state."""
    monkeypatch.setenv("COPY_INTERPRET", "1")
    shape = (130, 384, 80)
    module, found = built(*shape, cluster=2)
    assert found == []
    program = runtime.compile(module, verify=False)
    a, b = operands(shape, "bf16", seed=7)
    c = np.zeros(shape[:2], numpy_dtype("bf16"))
    grid = kernels.gemm_grid(shape[0], shape[1], cluster=2)
    assert grid == (8, 1)
    program(a, b, c, grid=grid)
    assert same_bits(c, model(a, b, 64, "bf16"))


JUNK = [
    None,
    True,
    0,
    -1,
    7,
    3.5,
    "128",
    "bf16",
    "f32",
    "pingpong",
    (),
    (128,),
    [128, 128, 64],
    (128, 128, 64),
    (64, 128, 64),
    np.int64(128),
    np.zeros(3),
    object(),
    {"a": 1},
    2,
    1,
]
"""Values every argument of `gemm` and `gemm_grid` is tried with."""


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_arguments(seed):
    """Random junk in one argument at a time of the checks `gemm` runs before it builds
    (`plan_of`) and of `gemm_grid`: an ArgumentError or a result, never another exception."""
    import random

    from frontends.kernels.gemm_plan import plan_of

    rng = random.Random(seed)
    good = {
        "shape": (M, N, K),
        "dtype": "bf16",
        "out": "bf16",
        "tile": (128, 128, 64),
        "stages": None,
        "cluster": 1,
        "schedule": "cooperative",
        "target": "sm_90a",
    }
    for _ in range(200):
        args = dict(good)
        name = rng.choice(sorted(args))
        args[name] = rng.choice(JUNK) if name != "shape" else (M, rng.choice(JUNK), K)
        try:
            plan_of(**args)
        except runtime.ArgumentError:
            pass
        grid = {
            "M": M,
            "N": N,
            "tile": (128, 128, 64),
            "sms": None,
            "cluster": 1,
            "schedule": "cooperative",
        }
        key = rng.choice(sorted(grid))
        grid[key] = rng.choice(JUNK)
        try:
            kernels.gemm_grid(grid.pop("M"), grid.pop("N"), **grid)
        except runtime.ArgumentError:
            pass
