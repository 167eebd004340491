"""A fuzz of the public Python API's inputs (issue 32, item 2): random arguments to every
builder of `frontends.kernels` (but the GEMM's, which its own session checks), to
`runtime.compile` (random text, mutations of an example, values that are no text) and to a
Program's call raise only the documented exceptions: `ArgumentError` for a bad argument,
`CopyDiagnosticError` for IR that does not verify (a builder: the verifier's
`VerifyException`), `NoDriverError` for a good call without a GPU. Seeded
(`random.Random`), so a failure replays; hypothesis is no test dependency."""

from __future__ import annotations

import inspect
import random
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from copy_dialect.errors import CopyDiagnosticError
from copy_tools import runtime as compiler
from frontends import kernels
from runtime import ArgumentError, NoDriverError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "tma_tile_copy.mlir").read_text()
DOCUMENTED = (ArgumentError, CopyDiagnosticError)
BUILDER_ERRORS = (ArgumentError, VerifyException)
"""A builder raises an ArgumentError, or, for arguments its checks pass that make IR the
verifier rejects, the verifier's own exception (a builder verifies with
`analysis.verify.verify_module`: the frontends may not import the tools that render it)."""
SKIPPED = {"gemm", "gemm_grid"}  # frontends/kernels/gemm.py: another session's builder

BUILDERS = [
    name
    for name in kernels.__all__
    if callable(getattr(kernels, name))
    and not isinstance(getattr(kernels, name), type)
    and name not in SKIPPED
]

SCALARS = [0, 1, 2, 3, 4, 8, 16, 64, 128, -1, -64, 2**40, 1.5, True, None, "f32", "f33", "", "x"]
SHAPES = [(256, 256), (64, 64), (128, 512), (8, 64), (1, 1), (0, 64), (-1, 64), (64,), ()]
DTYPES = ["f32", "f16", "bf16", "i8", "i32", "f33", np.float32, "float", 3]


def value(rng: random.Random, name: str, default: object, keep: float) -> object:
    """A random argument for a parameter called `name`: its default with probability
    `keep`, else mostly plausible, sometimes not."""
    pick = rng.random()
    if pick < keep and default is not inspect.Parameter.empty:
        return default
    if pick < keep:  # a required argument: a good one
        return good(rng, name)
    pick = rng.random()
    if pick < 0.15:
        return rng.choice([*SCALARS, (1, "x"), [64, 64], (64, 64, 64), np.int64(64)])
    if "shape" in name or name in ("tile", "filter", "stride", "padding", "dilation"):
        if name == "shape" and rng.random() < 0.2:
            return (1, 8, 8, rng.choice([16, 32, 64]))  # an NHWC input for conv2d
        return rng.choice(SHAPES)
    if "dtype" in name or name == "inputs" or name == "outputs":
        choice = rng.choice(DTYPES)
        return [choice] if name in ("inputs", "outputs") else choice
    if name == "target":
        return rng.choice(["sm_90a", "sm_80", "sm_100a", "sm_99", 90])
    if name == "conv":
        return kernels.conv2d((1, 8, 8, 32), 3, padding=1)
    if name in ("op", "order", "mode", "reduce", "implementation", "schedule"):
        return rng.choice(["add", "copy", "cluster", "store", "tma", "cp_async", "bogus", 7])
    return rng.choice(SCALARS)


def good(rng: random.Random, name: str) -> object:
    """A valid value for the required parameter `name` of the builders."""
    if name == "conv":
        return kernels.conv2d((1, 8, 8, 32), 3, padding=1)
    if name == "shapes":
        return [(64, 64), (100, 64)]
    if "shape" in name:
        return rng.choice([(256, 256), (512, 256), (128, 128)])
    if "dtype" in name:
        return rng.choice(["f32", "f16", "bf16"])
    if name == "tile":
        return (64, 64)
    if name == "op":
        return rng.choice(list(kernels.ELEMENTWISE))
    return rng.choice([1, 2, 4, 64, 132])


def call_builder(rng: random.Random, name: str) -> bool:
    """Call a builder with random arguments; whether it built a kernel."""
    builder = getattr(kernels, name)
    args, kwargs = [], {}
    keep = rng.choice([0.3, 0.9])  # many changes, or one or two
    for param in inspect.signature(builder).parameters.values():
        v = value(rng, param.name, param.default, keep)
        if param.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[param.name] = v
        else:
            args.append(v)
    try:
        builder(*args, **kwargs)
    except BUILDER_ERRORS:
        return False
    return True


@pytest.mark.parametrize("seed", range(4))
def test_builders_raise_only_documented_errors(seed):
    rng = random.Random(seed)
    built = 0
    for _ in range(60):
        name = rng.choice(BUILDERS)
        try:
            built += call_builder(rng, name)
        except Exception as exc:  # noqa: BLE001 (the fuzz's finding)
            pytest.fail(f"kernels.{name} (seed {seed}) raised {type(exc).__name__}: {exc}")
    assert built >= 5, built  # the fuzz reaches the builders' bodies, not only the checks


def mutate(rng: random.Random, text: str) -> str:
    """The text with a random cut, duplication or character replaced."""
    i = rng.randrange(len(text))
    j = min(len(text), i + rng.randrange(1, 40))
    kind = rng.randrange(3)
    if kind == 0:
        return text[:i] + text[j:]
    if kind == 1:
        return text[:j] + text[i:]
    return text[:i] + rng.choice('%@#<>{}()[]:,="x0 \n') + text[i + 1 :]


@pytest.mark.parametrize("seed", range(3))
def test_compile_raises_only_documented_errors(seed):
    rng = random.Random(100 + seed)
    sources: list[object] = [mutate(rng, EXAMPLE) for _ in range(25)]
    sources += [b"bytes", None, 3, "", "}", "builtin.module {", EXAMPLE[: len(EXAMPLE) // 2]]
    messages: list[str] = []
    for source in sources:
        target = rng.choice([None, None, "sm_90a", "sm_80", "sm_99", 1])
        try:
            compiler.compile(source, target)  # type: ignore[arg-type]
        except DOCUMENTED as exc:
            messages.append(str(exc))
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"compile raised {type(exc).__name__}: {exc} for {source!r:.300}")
    assert len(messages) >= len(sources) - 8  # most mutations break the kernel
    assert all(messages)
    assert not any("Traceback" in m for m in messages)


@pytest.fixture(scope="module")
def program():
    return compiler.compile(kernels.tma_copy((256, 256), "f32"))


def test_program_calls_raise_only_documented_errors(program):
    rng = random.Random(7)
    arrays = [
        np.zeros((256, 256), np.float32), np.zeros((256, 256), np.float64),
        np.zeros((64, 64), np.float32), np.zeros(3), np.zeros((256, 256), np.float32).T,
        [1, 2], "x", None, 3.0,
    ]  # fmt: skip
    grids = [(4, 4), 4, (4,), (0, 4), "ab", (1.5,), None, (1, 2, 3, 4), (2**31, 1), [2, 2]]
    for _ in range(200):
        values = [rng.choice(arrays) for _ in range(rng.choice([2, 2, 2, 1, 3]))]
        launch = {"grid": rng.choice(grids)}
        if rng.random() < 0.3:
            launch["block"] = rng.choice([(128, 1, 1), (64,), "x", 0, None])
        try:
            program(*values, **launch)
        except (*DOCUMENTED, NoDriverError):
            pass
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"a call raised {type(exc).__name__}: {exc} for {values!r:.200} {launch}")
