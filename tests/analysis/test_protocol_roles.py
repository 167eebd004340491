"""The kernels of lit_tests/dialects/copy/protocol-roles.mlir (one per `// -----` chunk, each a
warp-specialized y = x copy the protocol analysis proves) compile to PTX and a cubin for
sm_90a: what test_protocol_roles_gpu.py launches on a GPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from copy_tools import runtime

LIT = Path(__file__).resolve().parents[2] / "lit_tests/dialects/copy/protocol-roles.mlir"
CHUNKS = LIT.read_text().split("// -----")
SOURCES = {re.search(r"func\.func @(\w+)", c).group(1): c for c in CHUNKS}
KERNELS = sorted(SOURCES)


def kernel_source(name: str) -> str:
    return SOURCES[name]


def test_every_chunk_is_one_named_kernel():
    assert len(SOURCES) == len(CHUNKS) >= 8


@pytest.mark.parametrize("name", KERNELS)
def test_protocol_roles_kernel_compiles(name):
    program = runtime.compile(kernel_source(name))
    assert program.kernels  # one kernel, with its (x, y) arguments
