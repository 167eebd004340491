"""TMA gather4 and scatter4 (`copy.gather4`, `copy.scatter4`, `copy.gather4_prefetch`):

- every kernel of their positive lit tests, for each target of the table that accepts it,
  through the whole pipeline to PTX that nvJitLink assembles into a cubin and, where a
  `ptxas` is on PATH, that ptxas assembles too; the targets that accept each kernel are the
  PTX ISA's (gather4 into the CTA's SMEM: sm_100 and newer; scatter4 and the prefetch:
  sm_100a/f, sm_103a, sm_110a/f);
- a fuzz over their configurations (op, target, element type, tile width, swizzle, slots,
  GMEM rank and extents, row and column counts and constants, L2 policy, arrive, a
  multicast from CTA 0 in clusters of 1, 2 and 4 with masks in and out of the cluster, and
  the options the ops reject): every configuration the verifier accepts assembles, and the
  rejections are counted by rule id (printed; each of the ops' rule ids is reached);
- under the interpreter: gather4 and scatter4 against numpy (rows and columns outside the
  array zero-filled on the load and left unwritten on the store, past its end: a negative
  store coordinate is TR13), bit-exact and race-free,
  and a scatter4 issued before the gather4 it reads has landed, which the protocol analysis
  rejects and the interpreter catches as a race.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import interpreter
from analysis.verify import verify_module
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts.target import TARGETS
from passes.pipeline import compile_module, retarget
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
LIT_TESTS = [
    ROOT / "lit_tests" / "dialects" / "copy" / "gather4.mlir",
    ROOT / "lit_tests" / "passes" / "gather4-ptx.mlir",
    ROOT / "lit_tests" / "passes" / "gather4-multicast-ptx.mlir",
    ROOT / "lit_tests" / "passes" / "gather4-pair-ptx.mlir",
]
ELF_MAGIC = b"\x7fELF"
GATHER4_TARGETS = {"sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f", "sm_120", "sm_120a"}
SCATTER4_TARGETS = {"sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f"}


def kernels(path: Path) -> list[str]:
    """The `// -----` chunks of a lit test that hold a kernel."""
    return [c for c in path.read_text().split("// -----") if "gpu.kernel" in c]


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def valid_for(text: str, target: str):
    """The module retargeted to `target`, or None if it does not verify there."""
    module = parse(text)
    retarget(module, target)
    try:
        verify_module(module)
    except VerifyException:
        return None
    return module


def assemble(module, target: str, tmp_path: Path) -> None:
    """The module through the pipeline: a cubin from nvJitLink, and ptxas's if on PATH."""
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    check_ptxas(compiled.ptx, target, tmp_path)


CASES = [
    pytest.param(path, i, target, id=f"{path.stem}-{i}-{target}")
    for path in LIT_TESTS
    for i in range(len(kernels(path)))
    for target in TARGETS
]


@pytest.mark.parametrize(("path", "index", "target"), CASES)
def test_assembles(path: Path, index: int, target: str, tmp_path: Path):
    text = kernels(path)[index]
    module = valid_for(text, target)
    # The targets that accept the kernel are the ISA's for the ops it holds.
    narrow = any(
        form in text
        for form in ("copy.scatter4 ", "copy.gather4_prefetch ", "multicast %", " leader_tracked")
    )
    needs = SCATTER4_TARGETS if narrow else GATHER4_TARGETS
    assert (module is not None) == (target in needs)
    if module is None:
        pytest.skip(f"kernel {index} of {path.name} is not valid for {target}")
    assemble(module, target, tmp_path)


# --- fuzz ----------------------------------------------------------------------------------

DTYPES = ("i8", "f16", "bf16", "f32", "i32", "f64", "i64", "f8E4M3FN", "i4")
BITS = {"i8": 8, "f16": 16, "bf16": 16, "f32": 32, "i32": 32, "f64": 64, "i64": 64}
BITS |= {"f8E4M3FN": 8, "i4": 4}

KERNEL = """builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{
  func.func @k({args})
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>{cluster}}} {{
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
{constants}
{body}
    func.return
  }}
}}
"""


def fuzz_kernel(rng: random.Random) -> tuple[str, str]:
    """A random kernel with one gather4, scatter4 or gather4 prefetch, and its target."""
    blackwell = [t for t in TARGETS if t.startswith(("sm_10", "sm_12"))]
    target = rng.choice(blackwell * 4 + list(TARGETS))
    kind = rng.choice(("gather4", "gather4", "scatter4", "prefetch"))
    dtype = rng.choice(DTYPES[:-1] * 4 + DTYPES[-1:])
    bits = BITS[dtype]
    width = rng.choice(
        (rng.randrange(1, 300), 128 * 8 // bits, 64 * 8 // bits, 32 * 8 // bits, 16 * 8 // bits)
    )
    width = max(1, width)
    swizzle = rng.choice((16, 16, 32, 64, 128))
    slots = rng.choice((0, 0, 1, 2, 3))
    rank = rng.choice((2,) * 30 + (1, 3))
    cols = rng.choice((width, width * 2, rng.randrange(1, 600), 256 * 8 // bits))
    shape = [rng.choice((64, 1000, 7))] * (rank - 1) + [max(1, cols)]
    nrows = rng.choice((4,) * 30 + (3, 5))
    ncols = rng.choice((1,) * 30 + (2,))
    const = [rng.choice((0, 5, -3, 63) * 10 + (2**31,)) for _ in range(nrows)]
    const += [rng.choice((0, 64, 128) * 5 + (5, -3, 2**31)) for _ in range(ncols)]
    use_const = [rng.random() < 0.3 for _ in const]
    args = [f"%x: memref<{'x'.join(map(str, shape))}x{dtype}>"]
    args += [f"%a{i}: index" for i in range(nrows + ncols)]
    constants = [f"    %k{i} = arith.constant {v} : index" for i, v in enumerate(const)]
    names = [f"%k{i}" if c else f"%a{i}" for i, c in enumerate(use_const)]
    rows, column = ", ".join(names[:nrows]), ", ".join(names[nrows:])
    tile_rows = rng.choice((4,) * 30 + (8, 2))
    space = "#copy.smem" if swizzle == 16 else f"#copy.smem<swizzle = {swizzle}>"
    lead = [2] * slots
    tile_t = f"memref<{'x'.join(map(str, [*lead, tile_rows, width]))}x{dtype}, {space}>"
    x_t = f"memref<{'x'.join(map(str, shape))}x{dtype}>"
    slot = f"[{', '.join(['%c0'] * slots)}]" if slots else ""
    l2 = rng.choice(("", "", " l2 evict_last", " l2 evict_first fraction 0.5"))
    extra, cluster, body = "", "", []
    odd = rng.random()
    if kind == "gather4":
        props = []
        if rng.random() < 0.15:
            props.append("arrive = false")
        if odd < 0.04:
            props.append("collective = array<i64: 0>")
            cluster = ", copy.cluster = array<i32: 2, 1, 1>"
        if 0.04 <= odd < 0.08:
            args.append("%p: i1")
            extra = " if %p"
        attrs = f" {{{', '.join(props)}}}" if props else ""
        body += [
            f"    %t = copy.alloc_smem : {tile_t}",
            "    %b = copy.barrier_init arrivals 1 : !copy.barrier<1>",
        ]
        nbytes = tile_rows * width * bits // 8
        expect = f"copy.barrier_arrive_expect_tx %b[%c0], {nbytes} : !copy.barrier<1>"
        if "arrive = false" in props:
            body.append(f"    {expect}")
        gather = (
            f"copy.gather4 %x rows [{rows}] column [{column}] to %t{slot} barrier "
            f"%b[%c0]{extra}@MULTICAST@{l2}{attrs} : {x_t} to {tile_t}, !copy.barrier<1>"
        )
        if 0.08 <= odd < 0.35:
            # CTA 0 multicasts the tile to the CTAs of a mask (the others arm their barrier),
            # in a cluster of 1, 2 or 4: masks of every CTA, of CTA 0 alone, of none, beyond
            size = rng.choice((1, 2, 2, 4))
            target = rng.choice(blackwell)  # (the multicast's targets are among them)
            cluster = f", copy.cluster = array<i32: {size}, 1, 1>" if size > 1 else ""
            mask = rng.choice(((1 << size) - 1,) * 3 + (1, 0, 1 << size))
            body += [
                f"    %size = arith.constant {size} : index",
                f"    %mask = arith.constant {mask} : i16",
                '    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index',
                "    %rank = arith.remui %bx, %size : index",
                "    %lead = arith.cmpi eq, %rank, %c0 : index",
                "    %peer = arith.cmpi ne, %rank, %c0 : index",
                f"    scf.if %lead {{ {gather.replace('@MULTICAST@', ' multicast %mask')} }}",
            ]
            if "arrive = false" not in props:
                body.append(f"    scf.if %peer {{ {expect} }}")
            body.append("    copy.barrier_wait %b[%c0], %phase : !copy.barrier<1>")
        elif 0.35 <= odd < 0.5:
            # A CTA pair's gather4 (leader_tracked) in a cluster of 1, 2 or 4: each CTA its
            # rows, the leader waits for both tiles and tells its peer
            size = rng.choice((1, 2, 2, 4))
            target = rng.choice(blackwell)
            cluster = f", copy.cluster = array<i32: {size}, 1, 1>" if size > 1 else ""
            if "arrive = false" in props:  # the leader arms its barrier for both tiles
                body[-1] = body[-1].replace(f"], {nbytes} :", f"], {2 * nbytes} :")
            body += [
                "    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>",
                f"    %size = arith.constant {size} : index",
                "    %one = arith.constant 1 : index",
                '    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index',
                "    %rank = arith.remui %bx, %size : index",
                "    %bit = arith.andi %rank, %one : index",
                "    %other = arith.xori %rank, %one : index",
                "    %lead = arith.cmpi eq, %bit, %c0 : index",
                f"    {gather.replace('@MULTICAST@', ' leader_tracked')}",
                "    scf.if %lead { copy.barrier_wait %b[%c0], %phase : !copy.barrier<1> "
                "copy.peer_arrive %done[%c0] peer %other : !copy.barrier<1> } else { "
                "copy.barrier_wait %done[%c0], %phase : !copy.barrier<1> }",
            ]
        else:
            body.append(f"    {gather.replace('@MULTICAST@', '')}")
            body.append("    copy.barrier_wait %b[%c0], %phase : !copy.barrier<1>")
    elif kind == "scatter4":
        if odd < 0.04:
            extra = " reduce add"
        if 0.04 <= odd < 0.08:
            args.append("%p: i1")
            extra = " if %p"
        body += [
            f"    %t = copy.alloc_smem : {tile_t}",
            f"    copy.scatter4 %t{slot} to %x rows [{rows}] column [{column}]{extra}{l2} "
            f": {tile_t} to {x_t}",
            "    copy.commit_group bulk",
            "    copy.wait_group bulk 0",
        ]
    else:
        body.append(
            f"    copy.gather4_prefetch %x rows [{rows}] column [{column}]{l2} "
            f"{{width = {width}}} : {x_t}"
        )
    text = KERNEL.format(
        target=target,
        args=", ".join(args),
        cluster=cluster,
        constants="\n".join(constants),
        body="\n".join(body),
    )
    return text, target


def rejection(err: VerifyException) -> str:
    if isinstance(err, CopyVerifyException):
        return "/".join(err.rules) or "untagged"
    return "xdsl"


RULES = ("G1", "G2", "G3", "G4", "G5", "G6", "G7", "D6", "E4", "F5", "A14")
"""The rule ids of the ops' own checks, each of which the fuzz reaches."""


def test_fuzz_accepted_configurations_assemble(tmp_path: Path):
    rng = random.Random(33)
    rejected: Counter[str] = Counter()
    accepted: Counter[str] = Counter()
    for _ in range(700):
        text, target = fuzz_kernel(rng)
        module = parse(text)
        try:
            verify_module(module)
        except VerifyException as err:
            rejected[rejection(err)] += 1
            continue
        op = next(o.name for o in module.walk() if "4" in o.name and o.name.startswith("copy."))
        op += " multicast" if " multicast %" in text else ""
        op += " leader_tracked" if " leader_tracked" in text else ""
        accepted[f"{op} {target}"] += 1
        try:
            assemble(module, target, tmp_path)
        except AssertionError as err:  # pragma: no cover - the message is the point
            raise AssertionError(f"{err}\n{text}") from err
    print(f"\naccepted {sum(accepted.values())}: {dict(sorted(accepted.items()))}")
    print(f"rejected {sum(rejected.values())} by rule: {dict(rejected.most_common())}")
    reached = {r for key in rejected for r in key.split("/")}
    assert set(RULES) <= reached, set(RULES) - reached
    assert "untagged" not in rejected
    assert "xdsl" not in rejected
    assert sum(accepted.values()) >= 100
    ops = ("copy.gather4", "copy.gather4 multicast", "copy.gather4 leader_tracked")
    for op in (*ops, "copy.scatter4", "copy.gather4_prefetch"):
        assert any(key.startswith(op + " ") for key in accepted), op


# --- interpreter -----------------------------------------------------------------------------

ROUND_TRIP = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: {xt}, %y: {xt}, %z: {zt}, %r0: index, %r1: index, %r2: index, %r3: index,
      %c: index, %s0: index, %s1: index, %s2: index, %s3: index, %d: index)
      attributes {{gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %phase = arith.constant false
    %t = copy.alloc_smem : {tt}
    %b = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c] to %t[{slot}] barrier %b[%c1]
        : {xt} to {tt}, !copy.barrier<2>
    copy.barrier_wait %b[%c1], %phase : !copy.barrier<2>
    {store}
    copy.scatter4 %t[{slot}] to %y rows [%s0, %s1, %s2, %s3] column [%d] : {tt} to {xt}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""
STORE = (
    "copy.async_copy %t[{slot}] to %z[%c0, %c0] : {tt} to {zt}\n"
    "    copy.commit_group bulk\n    copy.wait_group bulk 0"
)
NP = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "f64": np.float64, "i32": np.int32}


def gather4_reference(x, rows, column, width):
    tile = np.zeros((4, width), x.dtype)
    for i, r in enumerate(rows):
        for k in range(width):
            if 0 <= r < x.shape[0] and 0 <= column + k < x.shape[1]:
                tile[i, k] = x[r, column + k]
    return tile


def scatter4_reference(y, tile, rows, column):
    y = y.copy()
    for i, r in enumerate(rows):
        for k in range(tile.shape[1]):
            if 0 <= r < y.shape[0] and 0 <= column + k < y.shape[1]:
                y[r, column + k] = tile[i, k]
    return y


# (dtype, array shape, tile width, swizzle, rows, column, scatter rows, scatter column)
RUNS = {
    "f32-inside": ("f32", (40, 64), 32, 16, (3, 17, 0, 39), 8, (1, 2, 3, 4), 32),
    # A negative store coordinate is an illegal instruction (TR13): rows past the end only.
    "f16-rows-outside": ("f16", (20, 128), 64, 16, (-1, 19, 20, 7), 64, (19, 25, 0, 20), 0),
    "f32-columns-past-the-end": ("f32", (12, 40), 32, 16, (0, 1, 2, 3), 24, (4, 5, 6, 7), 16),
    "i8-swizzle-128": ("i8", (33, 256), 128, 128, (32, 0, 16, 8), 128, (0, 0, 1, 1), 128),
    "f64-swizzle-64": ("f64", (9, 24), 8, 64, (8, 4, 2, 1), 16, (0, 3, 6, 9), 8),
    "i32-swizzle-32-repeated-rows": ("i32", (16, 32), 8, 32, (5, 5, 5, 5), 0, (2, 2, 9, 9), 24),
}


def round_trip(name: str):
    dtype, shape, width, swizzle, rows, column, srows, scol = RUNS[name]
    space = "#copy.smem" if swizzle == 16 else f"#copy.smem<swizzle = {swizzle}>"
    xt = f"memref<{shape[0]}x{shape[1]}x{dtype}>"
    zt = f"memref<4x{width}x{dtype}>"
    tt = f"memref<2x4x{width}x{dtype}, {space}>"
    # A swizzled slot starts on its swizzle's period (TR11): slot 0 of those, slot 1 of the
    # others.
    slot = "%c0" if swizzle != 16 else "%c1"
    store = STORE.format(tt=tt, zt=zt, slot=slot)
    text = ROUND_TRIP.format(xt=xt, zt=zt, tt=tt, store=store, slot=slot)
    rng = np.random.default_rng(len(name))
    x = (rng.standard_normal(shape) * 50).astype(NP[dtype])
    y = np.full(shape, 7, NP[dtype])
    z = np.full((4, width), 9, NP[dtype])
    return text, (x, y, z, *rows, column, *srows, scol), (rows, column, width, srows, scol)


@pytest.mark.parametrize("name", list(RUNS))
def test_gather4_and_scatter4_against_numpy(name: str):
    text, arrays, (rows, column, width, srows, scol) = round_trip(name)
    module = parse(text)
    verify_module(module)
    x, y = arrays[0], arrays[1]
    for seed in range(3):
        run = interpreter.run(module, *arrays, seed=seed)
        assert run.violations == []
        tile = gather4_reference(x, rows, column, width)
        assert run.arrays[2].tobytes() == tile.tobytes()  # the tile as the 4 rows, bit-exact
        assert run.arrays[1].tobytes() == scatter4_reference(y, tile, srows, scol).tobytes()
        assert run.arrays[0].tobytes() == x.tobytes()


def test_a_scatter4_before_its_gather4_lands_is_caught_by_both():
    """The scatter4 reads the slot before the barrier wait: the protocol analysis rejects
    the kernel (P1) and the interpreter, running it, reports the race."""
    text, arrays, _ = round_trip("f32-inside")
    wait = "    copy.barrier_wait %b[%c1], %phase : !copy.barrier<2>\n"
    broken = text.replace(wait, "").replace(
        "    copy.commit_group bulk\n    copy.wait_group bulk 0\n    func.return",
        "    copy.commit_group bulk\n    copy.wait_group bulk 0\n" + wait + "    func.return",
    )
    assert broken != text
    module = parse(broken)
    with pytest.raises(CopyVerifyException) as err:
        verify_module(module)
    assert "P1" in err.value.rules
    run = interpreter.run(module, *arrays, seed=0)
    assert run.violations
