"""A gather4 that reaches other CTAs. A multicast one (`copy.gather4 ... multicast %mask`):
one CTA gathers four rows into the same slot of every CTA of the mask, completing the
tile's bytes on the barrier at the same offset in each (PTX ISA, cp.async.bulk.tensor
`.tile::gather4 ... .multicast::cluster`).

- Clusters of 2 and 4, the issuer at rank 0 or not, masks that leave CTAs out: the
  protocol analysis proves each kernel, and the interpreter, running it under several
  schedules, gives every receiving CTA the four rows bit for bit (numpy's), no other CTA
  anything, and no violation.
- The mistakes a kernel author makes with it, each rejected by the analysis with its rule
  and caught by the interpreter running the kernel: a receiver that never arms its
  barrier (P6), one that arms it for half the bytes (P5), one that reads its tile before
  its wait (P1; the interpreter sees the race), one that returns before the tile lands
  (P7), an issuer outside its own mask that still arrives (P5).

A leader-tracked gather4 (`... leader_tracked`, `.cta_group::2`): each CTA of a pair gathers
its own rows, both tiles' bytes on the pair leader's barrier; the leader waits and tells its
peer. Clusters of 2 and 4 (two pairs) are proven and interpreted bit for bit; the peer that
waits on its own barrier (P6), reads with no word from the leader (P1) or whose leader never
arms the barrier (P6) is rejected by the proof and caught by the interpreter.

Their verifier rules (G6, G7, A14), the PTX and the assembly for each target are the lit
tests' (lit_tests/dialects/copy/invalid-gather4.mlir, lit_tests/passes/gather4-multicast-ptx.mlir,
lit_tests/passes/gather4-pair-ptx.mlir) and tests/dialect/test_gather4.py's."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.protocol import check_protocol
from analysis.verify import verify_module
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context

KERNEL = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<64x128xf16>, %z: memref<{size}x4x64xf16>, %r0: index, %r1: index,
      %r2: index, %r3: index) attributes {{gpu.kernel,
      gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: {size}, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %csize = arith.constant {size} : index
    %cissuer = arith.constant {issuer} : index
    %cmask = arith.constant {mask} : index
    %true = arith.constant true
    %false = arith.constant false
    %mask = arith.constant {mask} : i16
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %rank = arith.remui %bx, %csize : index
    %issues = arith.cmpi eq, %rank, %cissuer : index
    %bit = arith.shrui %cmask, %rank : index
    %in = arith.andi %bit, %c1 : index
    %receives = arith.cmpi ne, %in, %c0 : index
    %other = arith.xori %issues, %true : i1
    %arms = arith.andi %receives, %other : i1
    scf.if %issues {{
      copy.gather4 %x rows [%r0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0]
          multicast %mask : memref<64x128xf16> to memref<4x64xf16, #copy.smem>,
          !copy.barrier<1>
    }}
    scf.if %arms {{
      copy.barrier_arrive_expect_tx %bar[%c0], {expect} : !copy.barrier<1>
    }}
    scf.if %receives {{
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.async_copy %tile to %z[%rank, %c0, %c0]
          : memref<4x64xf16, #copy.smem> to memref<{size}x4x64xf16>
      copy.commit_group bulk
      copy.wait_group bulk 0
    }}
    func.return
  }}
}}
"""

ROWS = (5, 63, 0, 17)
"""The rows gathered (the last of the array's 64 among them), columns 64 to 127."""

# (cluster size, issuing rank, mask)
CASES = {
    "pair-both": (2, 0, 0b11),
    "pair-issuer-1": (2, 1, 0b11),
    "four-all": (4, 0, 0b1111),
    "four-skips-rank-2": (4, 0, 0b1011),
    "four-issuer-2-of-two": (4, 2, 0b0110),
}


def instantiate(template: str, edits: dict[str, tuple[str, str]], **fields: object) -> str:
    """`template` with its `fields` filled and each edit (old, new) made (old must occur)."""
    text = template.format(**fields)
    for old, new in edits.values():
        assert old in text, old
        text = text.replace(old, new)
    return text


def kernel(size: int, issuer: int, mask: int, expect: int = 512, **edits: tuple[str, str]):
    return instantiate(KERNEL, edits, size=size, issuer=issuer, mask=mask, expect=expect)


def rejected_and_caught(text: str, rule: str, seeds: int) -> None:
    """The proof rejects the kernel with `rule`; running it (`seeds` schedules) the
    interpreter reports what `CAUGHT` says such a mistake runs into."""
    module = parse(text)
    with pytest.raises(CopyVerifyException) as err:
        verify_module(module)
    assert rule in err.value.rules, str(err.value)
    x, z = arrays(2)
    found = set()
    for seed in range(seeds):
        run = interpreter.run(module, x, z, *ROWS, grid=(2, 1, 1), seed=seed)
        found |= {v.rule for v in run.violations}
    assert found & CAUGHT[rule], found


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def arrays(size: int):
    x = (np.arange(64 * 128) % 1999 - 999).astype(np.float16).reshape(64, 128)
    z = np.full((size, 4, 64), -1, np.float16)
    return x, z


@pytest.mark.parametrize("name", list(CASES))
def test_every_receiver_gets_the_rows(name: str):
    size, issuer, mask = CASES[name]
    module = parse(kernel(size, issuer, mask))
    verify_module(module)  # the protocol proven: no error, no warning
    assert check_protocol(module) == []
    x, z = arrays(size)
    tile = x[list(ROWS), 64:128]
    for seed in range(3):
        run = interpreter.run(module, x, z, *ROWS, grid=(2 * size, 1, 1), seed=seed)
        assert run.violations == []
        for rank in range(size):
            want = tile if mask >> rank & 1 else z[rank]
            assert run.arrays[1][rank].tobytes() == want.tobytes(), rank


WAIT = "      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>\n      copy.async_copy"
MISTAKES = {
    # CTA 1 receives the tile but never arms its barrier: its wait never returns.
    "never-armed": ("P6", {}, {"arm": ("scf.if %arms {", "scf.if %false {")}),
    # CTA 1 arms its barrier for 256 of the tile's 512 bytes.
    "short-expect": ("P5", {"expect": 256}, {}),
    # The receivers store their tile before waiting for it.
    "reads-before-wait": ("P1", {}, {"wait": (WAIT, "      copy.async_copy")}),
    # The issuer multicasts to CTA 1 only but arrives on its own barrier expecting the tile.
    "issuer-outside-mask": ("P5", {"mask": 0b10}, {}),
    # CTA 1 arms its barrier and returns: the tile may land in a CTA that is gone.
    "returns-early": ("P7", {}, {"return": ("scf.if %receives {", "scf.if %issues {")}),
}
CAUGHT = {"P1": {"P1", "P3"}, "P5": {"P5", "P6"}, "P6": {"P6"}, "P7": {"P7"}}
"""What the interpreter reports for each mistake: the rule, or (a read before its wait) the
race it runs into, or (bytes not expected) the wait that then never returns."""


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_is_rejected_and_caught_running(name: str):
    rule, options, edits = MISTAKES[name]
    text = kernel(2, 0, options.get("mask", 0b11), options.get("expect", 512), **edits)
    rejected_and_caught(text, rule, seeds=1)


PAIR = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: memref<64x128xf16>, %z: memref<{size}x4x64xf16>, %r0: index, %r1: index,
      %r2: index, %r3: index) attributes {{gpu.kernel,
      gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: {size}, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %csize = arith.constant {size} : index
    %false = arith.constant false
    %tile = copy.alloc_smem : memref<4x64xf16, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %done = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %rank = arith.remui %bx, %csize : index
    %in_pair = arith.andi %rank, %c1 : index
    %peer = arith.xori %rank, %c1 : index
    %leader = arith.cmpi eq, %in_pair, %c0 : index
    %s0 = arith.addi %r0, %rank : index
    copy.gather4 %x rows [%s0, %r1, %r2, %r3] column [%c64] to %tile barrier %bar[%c0]
        leader_tracked {attrs}: memref<64x128xf16> to memref<4x64xf16, #copy.smem>,
        !copy.barrier<1>
    scf.if %leader {{
      copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
      copy.peer_arrive %done[%c0] peer %peer : !copy.barrier<1>
    }} else {{
      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>
    }}
    copy.async_copy %tile to %z[%rank, %c0, %c0]
        : memref<4x64xf16, #copy.smem> to memref<{size}x4x64xf16>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""
"""Each CTA of a pair gathers rows (r0 + its rank, r1, r2, r3); the leader waits for both
tiles and tells its peer; each stores its tile."""


def pair_kernel(size: int, attrs: str = "", **edits: tuple[str, str]) -> str:
    return instantiate(PAIR, edits, size=size, attrs=attrs)


def pair_rows(x: np.ndarray, rank: int) -> np.ndarray:
    rows = np.zeros((4, 64), x.dtype)
    for i, r in enumerate((ROWS[0] + rank, *ROWS[1:])):
        if 0 <= r < x.shape[0]:
            rows[i] = x[r, 64:128]
    return rows


@pytest.mark.parametrize("size", [2, 4])
def test_each_cta_of_a_pair_gets_its_rows(size: int):
    module = parse(pair_kernel(size))
    verify_module(module)
    assert check_protocol(module) == []
    x, z = arrays(size)
    for seed in range(3):
        run = interpreter.run(module, x, z, *ROWS, grid=(size, 1, 1), seed=seed)
        assert run.violations == []
        for rank in range(size):
            assert run.arrays[1][rank].tobytes() == pair_rows(x, rank).tobytes(), rank


PEER_WAIT = "      copy.barrier_wait %done[%c0], %false : !copy.barrier<1>\n"
PAIR_MISTAKES = {
    # The peer waits on its own barrier, which no byte reaches.
    "peer-waits-on-its-own": ("P6", "", {"wait": (PEER_WAIT, PEER_WAIT.replace("%done", "%bar"))}),
    # The peer stores its tile with no word from the leader.
    "no-handshake": ("P1", "", {"wait": (PEER_WAIT, "")}),
    # Nobody arms the leader's barrier (the gather4 leaves its arrival to the kernel).
    "never-armed": ("P6", "{arrive = false} ", {}),
}


@pytest.mark.parametrize("name", list(PAIR_MISTAKES))
def test_each_pair_mistake_is_rejected_and_caught_running(name: str):
    rule, attrs, edits = PAIR_MISTAKES[name]
    rejected_and_caught(pair_kernel(2, attrs, **edits), rule, seeds=3)
