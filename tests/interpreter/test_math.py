"""The interpreter's math and float arith ops, `vector.insert/extract` and the gpu ids, on the
softmax-like kernel of lit_tests/passes/math-ptx.mlir, bit-exact against the same steps in
numpy (float32), NaN and signed zeros included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from copy_tools.universe import make_context

KERNEL = Path(__file__).resolve().parents[2] / "lit_tests" / "passes" / "math-ptx.mlir"


def butterfly(x: np.ndarray, combine) -> np.ndarray:
    """A warp's xor-shuffle reduction of each row, as the kernel computes it (every lane
    ends with the same value, combined in the kernel's order)."""
    for offset in (16, 8, 4, 2, 1):
        partner = x[:, np.arange(32) ^ offset]
        x = combine(x, partner)
    return x


def ieee_maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 maximum: NaN if either is NaN; of two equal values (+0.0 and -0.0
    included) the one without a sign bit, if any."""
    tie = np.where(np.signbit(a), b, a)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a == b, tie, np.fmax(a, b)))


def ieee_minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    tie = np.where(np.signbit(a), a, b)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a == b, tie, np.fmin(a, b)))


def model(x: np.ndarray) -> np.ndarray:
    f = np.float32
    m = butterfly(x, ieee_maximum).astype(f)
    e = np.exp(x - m)
    s = butterfly(e, lambda a, b: a + b)
    inv = f(1) / np.sqrt(s)
    p = e * inv
    two = np.exp2(np.abs(p))
    fused = two * p + x
    r = np.fmin(np.fmax(ieee_minimum(fused, x).astype(f), p), two)
    odd = np.arange(32) % 2 == 1
    # vector [r, 0], then p at lane % 2, then element 0 + element 1
    first = np.where(odd, r, p)
    second = np.where(odd, p, f(0))
    return (first + second).astype(f)


@pytest.mark.parametrize("special", [False, True])
def test_softmax_row_is_bit_exact(special: bool):
    module = Parser(make_context(), KERNEL.read_text()).parse_module()
    x = (np.random.default_rng(31).standard_normal((32, 32)) * 4).astype(np.float32)
    if special:
        x[1, 3] = np.nan  # maximumf propagates it through the row
        x[2, :] = -0.0
        x[3, 5] = np.inf
        x[4, :] = np.where(np.arange(32) % 3 == 0, -0.0, 0.0)  # maximumf(-0.0, +0.0) = +0.0
    with np.errstate(invalid="ignore", over="ignore"):
        expected = model(x)
        run = interpreter.run(module, x, np.zeros_like(x), grid=(32, 1))
    assert run.violations == []
    got = run.arrays[1]
    assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
