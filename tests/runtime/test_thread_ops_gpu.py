"""On a GPU (an H100 or H200), or on the CPU under the interpreter: the thread-level ops of
issue 31 against the numpy models of their interpreter tests: every b16 ldmatrix/stmatrix
form in unswizzled and swizzled SMEM (tests/interpreter/test_matrix.py), 4-, 8- and 16-byte
vector accesses of swizzled SMEM (tests/interpreter/test_swizzled_vectors.py), bit for bit;
and the softmax row of lit_tests/passes/math-ptx.mlir within the error of the GPU's
ex2.approx and rsqrt.approx (tests/interpreter/test_math.py's model). The 8-bit matrix
forms need a Blackwell GPU (sm_100a/f, sm_103a, sm_120a): they are interpreted only.

Run on an H100 (these kernels compiled at fb3cced, launched with CuPy, compared with the
interpreter): all 36 b16 forms and 27 vector cases bit-exact, the softmax within 8.2e-7
relative error."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from copy_tools import runtime
from tests import device
from tests.interpreter import test_matrix, test_swizzled_vectors
from tests.interpreter.test_math import KERNEL as SOFTMAX
from tests.interpreter.test_math import model as softmax_model

pytestmark = device.marks()

B16_FORMS = [f for f in test_matrix.FORMS if f[1] == "m8n8"]


def typed(arrays: list[np.ndarray], text: str) -> list[np.ndarray]:
    """Copies of the interpreter tests' arrays as the runtime takes them: bf16 bits (uint16
    there) as ml_dtypes.bfloat16."""
    bf16 = "xbf16>" in text
    return [
        a.view(ml_dtypes.bfloat16) if bf16 and a.dtype == np.uint16 else a.copy() for a in arrays
    ]


@pytest.mark.parametrize("swizzle", [16, 64, 128])
@pytest.mark.parametrize(("op", "shape", "num", "trans"), B16_FORMS, ids=str)
def test_matrix_copy(op, shape, num, trans, swizzle):
    text, arrays, expected = test_matrix.case(op, shape, num, trans, swizzle)
    arrays = typed(arrays, text)
    runtime.compile(text)(*arrays, grid=(1, 1))
    for got, want in zip(arrays, expected, strict=True):
        assert np.array_equal(test_matrix.as_bytes(got), want)


@pytest.mark.parametrize(("dtype", "lanes", "swizzle"), test_swizzled_vectors.CASES, ids=str)
def test_swizzled_vector_access(dtype, lanes, swizzle):
    text, arrays, expected = test_swizzled_vectors.case(dtype, lanes, swizzle)
    arrays = [a.copy() for a in arrays]
    runtime.compile(text)(*arrays, grid=(1, 1))
    for got, want in zip(arrays, expected, strict=True):
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.not_interpreted("the GPU's ex2.approx and rsqrt.approx are not numpy's functions")
def test_softmax_row():
    x = (np.random.default_rng(31).standard_normal((32, 32)) * 4).astype(np.float32)
    y = np.zeros_like(x)
    # An unused SMEM buffer makes the function a kernel of the copy dialect (its ABI).
    text = SOFTMAX.read_text().replace(
        "    %lane = gpu.lane_id\n",
        "    %lane = gpu.lane_id\n    %unused = copy.alloc_smem : memref<32xf32, #copy.smem>\n",
    )
    runtime.compile(text)(x, y, grid=(32, 1))
    np.testing.assert_allclose(y, softmax_model(x), rtol=1e-5)
