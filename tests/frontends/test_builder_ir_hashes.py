"""The `kernels` builders' IR, pinned (issue 32, item 3): the builders were rewritten on the
concise API (`frontends.dsl`), and what they print for each parameter set below is the
IR they printed before it, byte for byte (without locations: the locations are the lines
that made the ops, which the rewrite moves). A hash changes only on purpose: a commit that
changes a builder's IR says why and updates its hash here.

To print a hash after a deliberate change:
`python -m tests.frontends.test_builder_ir_hashes NAME` (the name of a case below)."""

from __future__ import annotations

import hashlib
import io
import sys
import warnings
from collections.abc import Callable
from functools import partial

import pytest
from xdsl.ir import Operation
from xdsl.printer import Printer

from analysis.verify import verify_module
from frontends import kernels
from frontends.dsl import control


def printed(module: Operation) -> str:
    """The module as copy-opt prints it without `--mlir-print-debuginfo`."""
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def digest(module: Operation) -> str:
    return hashlib.sha256(printed(module).encode()).hexdigest()[:16]


CONV = dict(stride=2, padding=1, dilation=2)

CASES: dict[str, Callable[[], Operation]] = {
    "tma_copy": lambda: kernels.tma_copy((300, 200), "f32", (64, 64)),
    "tma_copy_swizzle_reduce": lambda: kernels.tma_copy(
        (256, 512), "bf16", (64, 64), swizzle=128, reduce="add", prefetch_destination=True
    ),
    "tma_copy_dynamic_hints": lambda: kernels.tma_copy(
        (0, 0), "f32", dynamic=True, cache_hints=("evict_first", "evict_last"), l2_promotion=128
    ),
    "cp_async_copy": lambda: kernels.cp_async_copy((100, 200), "f32"),
    "cp_async_copy_dynamic": lambda: kernels.cp_async_copy((0, 0), "f16", dynamic=True),
    "bulk_copy": lambda: kernels.bulk_copy(10000, "f32"),
    "bulk_copy_prefetch": lambda: kernels.bulk_copy(8192, "bf16", 2048, prefetch=True),
    "multicast_copy": lambda: kernels.multicast_copy((256, 256), "f32"),
    "broadcast_copy": lambda: kernels.broadcast_copy((256, 512), "f32"),
    "broadcast_copy_rank_major": lambda: kernels.broadcast_copy(
        (256, 512), "bf16", cluster=4, multicast=False, order="rank_major"
    ),
    "broadcast_row_dot": lambda: kernels.broadcast_row_dot((256, 512)),
    "tma_copy_pipelined": lambda: kernels.tma_copy_pipelined((1024, 1024), "f32"),
    "tma_copy_pipelined_reduce": lambda: kernels.tma_copy_pipelined(
        (512, 512), "bf16", (64, 128), stages=4, reduce="add"
    ),
    "ws_copy": lambda: kernels.ws_copy((1024, 1024), "f32"),
    "ws_copy_in_flight": lambda: kernels.ws_copy(
        (512, 512), "bf16", stages=3, in_flight=2, cache_hints=("evict_first", None)
    ),
    "ws_elementwise_add": lambda: kernels.ws_elementwise("add", (1024, 1024), "f32"),
    "ws_elementwise_cast": lambda: kernels.ws_elementwise(
        "cast", (512, 512), "f32", out_dtype="bf16", consumer_warps=8, maxnreg=(40, 232)
    ),
    "ws_elementwise_axpb": lambda: kernels.ws_elementwise(
        "axpb", (512, 512), "bf16", stages=2, out_buffers=1
    ),
    "ws_row_sum": lambda: kernels.ws_row_sum((1024, 1024)),
    "ws_row_sum_hint": lambda: kernels.ws_row_sum(
        (512, 256), "bf16", (64, 128), consumer_warps=8, cache_hint="evict_first"
    ),
    "dsmem_exchange_store": lambda: kernels.dsmem_exchange((256, 256), "f32"),
    "dsmem_exchange_reduce": lambda: kernels.dsmem_exchange(
        (256, 256), "i32", cluster=4, mode="reduce"
    ),
    "dsmem_exchange_bulk": lambda: kernels.dsmem_exchange((256, 256), "f32", mode="bulk"),
    "im2col_gather": lambda: kernels.im2col_gather(
        kernels.conv2d((2, 9, 7, 16), 3, **CONV), "f16", cache_hint="evict_last"
    ),
    "im2col_gather_plain": lambda: kernels.im2col_gather(
        kernels.conv2d((1, 8, 8, 32), 3, padding=1), "f32", pixels=32, swizzle=128
    ),
    "grouped_copy": lambda: kernels.grouped_copy(3, 4096, (37, 70)),
    "grouped_copy_persistent": lambda: kernels.grouped_copy(2, 4096, (37, 70), persistent=True),
    "grouped_view_copy": lambda: kernels.grouped_view_copy(3, 4096, "f32"),
    "grouped_view_copy_barrier": lambda: kernels.grouped_view_copy(
        3, 4096, "bf16", target="sm_90a", barrier=True
    ),
    "gemm_cooperative": lambda: kernels.gemm(256, 256, 512),
    "gemm_pingpong": lambda: kernels.gemm(256, 256, 512, schedule="pingpong", out="f32"),
    "gemm_cluster": lambda: kernels.gemm(512, 256, 256, stages=4, cluster=2),
    "pdl_chain": lambda: kernels.pdl_chain(1024),
    "pdl_chain_end": lambda: kernels.pdl_chain(
        2048, "bf16", block=256, trigger="end", target="sm_100a"
    ),
    "pdl_chain_early_read": lambda: kernels.pdl_chain(512, "f16", early_read=True, verify=False),
    "pdl_chain_output_mark": lambda: kernels.pdl_chain(1024, output_mark="read"),
    "persistent_chain": lambda: kernels.persistent_chain(1024),
    "tmem_pipeline": lambda: kernels.tmem_pipeline(256, 128),
    "tmem_pipeline_pair": lambda: kernels.tmem_pipeline(512, 64, stages=2, cluster=2),
}

HASHES = {
    "tma_copy": "02965d08a43a42e8",
    "tma_copy_swizzle_reduce": "441a9d237edcb37c",
    "tma_copy_dynamic_hints": "1654a75270f25597",
    "cp_async_copy": "b78cc822df622066",
    "cp_async_copy_dynamic": "f7271e77c303d091",
    "bulk_copy": "9658c3fe563c8e57",
    "bulk_copy_prefetch": "deaf6a9415b049f5",
    "multicast_copy": "ea43031c6cebfefe",
    "broadcast_copy": "37d2eaf355f81917",
    "broadcast_copy_rank_major": "1c07450cfbd82a3d",
    "broadcast_row_dot": "1b3a0b6c69bb3989",
    "tma_copy_pipelined": "a142cc1c5eba5588",
    "tma_copy_pipelined_reduce": "adead72dc78b48ee",
    "ws_copy": "5dac54b690dac9b2",
    "ws_copy_in_flight": "54af9685e2947257",
    "ws_elementwise_add": "38503f648e81dd55",
    "ws_elementwise_cast": "5de2b003e3debf51",
    "ws_elementwise_axpb": "a9ddb2ba270059ea",
    "ws_row_sum": "b1120edc96574d2a",
    "ws_row_sum_hint": "2eeccfe9d5d6c557",
    "dsmem_exchange_store": "0f62eaee78abff4e",
    "dsmem_exchange_reduce": "00125a1b9c722b42",
    "dsmem_exchange_bulk": "864c1b9d92976711",
    "im2col_gather": "0675b99e7043ead8",
    "im2col_gather_plain": "8e08cef567285193",
    "grouped_copy": "33d3e959d21782bc",
    "grouped_copy_persistent": "0eb613aad4237e0b",
    "grouped_view_copy": "a59e4f2674616907",
    "grouped_view_copy_barrier": "793666f6cd67b19a",
    "gemm_cooperative": "1ca41ce8019113a0",
    "gemm_pingpong": "5009bc767ec4f316",
    "gemm_cluster": "b542e5adec57534a",
    "pdl_chain": "ce631b670d657ae6",
    "pdl_chain_end": "6fb66354679ac985",
    "pdl_chain_early_read": "5463850d1c5fd2ba",
    "pdl_chain_output_mark": "480c460ab713059f",
    "persistent_chain": "4b06cc31809d5471",
    "tmem_pipeline": "a392e1721f22fbb1",
    "tmem_pipeline_pair": "600bcadde4734d4b",
}


def build(name: str) -> Operation:
    """The case's module, its ops verified but not its protocol (the builders' own tests
    prove that; here it would take minutes: gemm_cluster's alone takes three; the builders
    verify through `frontends.dsl.control.kernel`)."""
    original = control.verify_module
    control.verify_module = partial(verify_module, protocol=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return CASES[name]()
    finally:
        control.verify_module = original


@pytest.mark.parametrize("name", CASES)
def test_builder_ir_is_unchanged(name):
    assert digest(build(name)) == HASHES[name]


PINNED = (
    "tma_copy", "cp_async_copy", "bulk_copy", "multicast_copy", "broadcast_copy",
    "broadcast_row_dot", "tma_copy_pipelined", "ws_copy", "ws_elementwise", "ws_row_sum",
    "dsmem_exchange", "im2col_gather", "grouped_copy", "grouped_view_copy", "gemm",
    "pdl_chain",
)  # fmt: skip
"""The builders the rewrite on `frontends.dsl` covers (those of the kernels package
when the hashes were pinned, and pdl_chain, pinned before its own rewrite); a builder added
later pins its IR with a case of its own."""


@pytest.mark.parametrize("builder", PINNED)
def test_every_builder_is_pinned(builder):
    assert builder in kernels.__all__
    assert any(case == builder or case.startswith(builder + "_") for case in CASES)


if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        print(f'    "{name}": "{digest(build(name))}",')
