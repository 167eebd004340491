"""Where the GPU tests run: on the GPU when there is one; else on the CPU, under the
interpreter (tests/conftest.py sets COPY_INTERPRET=1 for each test marked `gpu`), at the
smaller shapes a test gives for it, bit-exact all the same.

    pytestmark = device.marks()                    # runs on a GPU or interpreted
    pytestmark = device.marks(interpreted="...")   # needs a GPU: why the interpreter cannot
    SHAPES = device.shapes([(1000, 1000)], [(130, 264)])

Under `COPY_INTERPRET=compare` on a GPU, each kernel call runs on the GPU and the interpreter
both, at the interpreted shapes, and their results must agree bit for bit (the interpreter's
semantics checked against the hardware's); a module the interpreter cannot run only launches.
"""

from __future__ import annotations

from typing import Any

import pytest

from copy_tools import runtime

GPU = runtime.gpu_available()
"""Whether the tests have a GPU (else the gpu-marked ones run interpreted, where they can)."""

COMPARING = GPU and runtime.comparing()
"""Whether each kernel call runs on the GPU and the interpreter both (`COPY_INTERPRET=compare`)."""

INTERPRETED = not GPU or COMPARING
"""Whether kernel calls go through the interpreter (alone, or beside the GPU): the tests
then take their smaller shapes and grids."""


def marks(interpreted: str | None = None) -> list[Any]:
    """A GPU test module's marks: `gpu`, and a skip where there is no GPU and the
    interpreter cannot run its kernels (`interpreted`: why not)."""
    if interpreted is None:
        return [pytest.mark.gpu]
    return [
        pytest.mark.gpu,
        pytest.mark.not_interpreted(interpreted),
        pytest.mark.skipif(
            not GPU, reason=f"no CUDA driver or GPU here, and the interpreter {interpreted}"
        ),
    ]


def shapes(on_gpu: list[Any], interpreted: list[Any]) -> list[Any]:
    """The parameters of a test: those for the GPU, or the smaller ones it interprets
    (also on a GPU, when comparing the two)."""
    return interpreted if INTERPRETED else on_gpu
