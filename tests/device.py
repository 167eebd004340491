"""Where the GPU tests run: on the GPU when there is one; else on the CPU, under the
interpreter (tests/conftest.py sets COPY_INTERPRET=1 for each test marked `gpu`), at the
smaller shapes a test gives for it, bit-exact all the same.

    pytestmark = device.marks()                    # runs on a GPU or interpreted
    pytestmark = device.marks(interpreted="...")   # needs a GPU: why the interpreter cannot
    SHAPES = device.shapes([(1000, 1000)], [(130, 264)])
"""

from __future__ import annotations

from typing import Any

import pytest

from copy_tools import runtime

GPU = runtime.gpu_available()
"""Whether the tests have a GPU (else the gpu-marked ones run interpreted, where they can)."""


def marks(interpreted: str | None = None) -> list[Any]:
    """A GPU test module's marks: `gpu`, and a skip where there is no GPU and the
    interpreter cannot run its kernels (`interpreted`: why not)."""
    if interpreted is None:
        return [pytest.mark.gpu]
    return [
        pytest.mark.gpu,
        pytest.mark.skipif(
            not GPU, reason=f"no CUDA driver or GPU here, and the interpreter {interpreted}"
        ),
    ]


def shapes(on_gpu: list[Any], interpreted: list[Any]) -> list[Any]:
    """The parameters of a test: those for the GPU, or the smaller ones it interprets."""
    return on_gpu if GPU else interpreted
