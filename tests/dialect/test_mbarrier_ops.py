"""The mbarrier-breadth kernels (mbarrier_kernels.py: complete_tx from threads and warps, a
consumer warp that drops out of a ring with arrive_drop, inval and reinit of a barrier with a
nocomplete arrival) verify with no protocol finding at every size test_mbarrier_ops_gpu.py
launches, and compile to PTX with each new instruction and to a cubin for sm_90a; and the
sm_80 forms (nocomplete, arrive_drop, inval, reinit) compile for sm_80."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser

from analysis.protocol import check_protocol, render
from copy_tools import runtime
from copy_tools.universe import make_context
from passes.pipeline import compile_module
from tests.dialect.mbarrier_kernels import (
    arrive_drop_kernel,
    complete_tx_kernel,
    inval_reinit_kernel,
)

COMPLETE_TX_SIZES = [256, 1000, 4097, 389]
ARRIVE_DROP_TILES = [1, 4, 7, 37]
"""1 tile: the dropping warp never drops; 4: it drops on both slots and nothing follows."""
INVAL_REINIT_SHAPES = [(64, 64), (200, 36), (1000, 20), (129, 64)]

KERNELS = {
    **{f"complete_tx_{i}_{n}": complete_tx_kernel(n, i) for i in ("threads", "warps")
       for n in COMPLETE_TX_SIZES},
    **{f"arrive_drop_{t}": arrive_drop_kernel(t) for t in ARRIVE_DROP_TILES},
    **{f"inval_reinit_{r}x{c}": inval_reinit_kernel(r, c) for r, c in INVAL_REINIT_SHAPES},
}  # fmt: skip

PTX = {
    "complete_tx_threads": [
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64",
        "fence.acq_rel.cta;",
        "mbarrier.complete_tx.relaxed.cta.shared::cta.b64",
    ],
    "complete_tx_warps": ["bar.warp.sync -1;", "mbarrier.complete_tx.relaxed.cta.shared::cta.b64"],
    "arrive_drop": ["mbarrier.arrive_drop.shared::cta.b64 _,"],
    "inval_reinit": [
        "mbarrier.inval.shared::cta.b64",
        "mbarrier.arrive.noComplete.shared::cta.b64 _,",
    ],
}

SM80 = """builtin.module attributes {copy.target = #copy.target<"sm_80">} {
  func.func @sm80_forms(%x: memref<128xf32>)
      attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %bar = copy.barrier_init arrivals 3 : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] count 2 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.barrier_arrive_drop %bar[%c0] count 1 nocomplete issuer elected : !copy.barrier<1>
    copy.barrier_arrive %bar[%c0] issuer elected : !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %true : !copy.barrier<1>
    copy.barrier_inval %bar : !copy.barrier<1>
    copy.barrier_reinit %bar arrivals 1 : !copy.barrier<1>
    func.return
  }
}
"""
"""The sm_80 forms: a nocomplete arrival and an arrive_drop complete phase 0 (3 arrivals),
which lowers the count to 2; a nocomplete arrive_drop and an arrival complete phase 1."""


def findings(text: str) -> list[str]:
    """The protocol findings (errors and warnings) of the kernel `text`."""
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return [render(f) for f in check_protocol(module)]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_mbarrier_kernel_is_proved(name):
    assert findings(KERNELS[name]) == []


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_mbarrier_kernel_compiles(name):
    assert runtime.compile(KERNELS[name]).kernels
    ptx = compile_module(Parser(make_context(), KERNELS[name]).parse_module(), make_context()).ptx
    family = next(f for f in PTX if name.startswith(f))
    for instruction in PTX[family]:
        assert instruction in ptx, instruction


def test_sm80_forms_compile():
    compiled = compile_module(Parser(make_context(), SM80).parse_module(), make_context(), "sm_80")
    assert compiled.cubin
    for instruction in (
        "mbarrier.arrive.noComplete.shared::cta.b64 _,",
        "mbarrier.arrive_drop.shared::cta.b64 _,",
        "mbarrier.arrive_drop.noComplete.shared::cta.b64 _,",
        "mbarrier.inval.shared::cta.b64",
    ):
        assert instruction in compiled.ptx, instruction


def test_lit_kernels_are_the_templates():
    """protocol-mbarriers.mlir holds one instance of each template (the lit proof of the
    kernels the GPU runs)."""
    lit = (
        Path(__file__).parents[2] / "lit_tests/dialects/copy/protocol-mbarriers.mlir"
    ).read_text()
    for text in (
        complete_tx_kernel(1000, "threads"),
        complete_tx_kernel(389, "warps"),
        arrive_drop_kernel(7),
        inval_reinit_kernel(200, 36),
        SM80,
    ):
        assert text in lit
