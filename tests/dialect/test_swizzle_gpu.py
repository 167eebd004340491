"""On a GPU (an H200 here): threads read what TMA wrote into swizzled SMEM, and TMA stores
what threads wrote there, bit for bit, for every swizzle x {f32, f16, i8} x inner width
{16 B, half span, span} and a two-slot ring (kernels in swizzle_kernels.py; test_swizzle.py
compiles them where there is no GPU). Without a GPU, under the interpreter, which places
each element where the swizzle puts it."""

from __future__ import annotations

import functools
import zlib

import numpy as np
import pytest

from copy_tools import runtime
from tests import device
from tests.dialect.swizzle_kernels import Config, configs, module

pytestmark = device.marks()

NUMPY = {"f32": np.float32, "f16": np.float16, "i8": np.int8}
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}
POISON = 0xA5


@functools.cache
def program() -> runtime.Program:
    return runtime.compile(module(configs()))


def random_bits(cfg: Config) -> np.ndarray:
    """Fresh random bit patterns (NaNs and all) of the configuration's GMEM shape."""
    rng = np.random.default_rng(zlib.crc32(cfg.name.encode()))
    dtype = np.dtype(NUMPY[cfg.dtype])
    raw = rng.integers(0, 256, size=(*cfg.shape, dtype.itemsize), dtype=np.uint8)
    return raw.view(dtype).reshape(cfg.shape)


def run(kind: str, cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    x = random_bits(cfg)
    y = np.full(x.shape + (x.itemsize,), POISON, np.uint8).view(x.dtype).reshape(x.shape)
    program().kernel(f"{kind}_{cfg.name}")(x, y, grid=cfg.grid)
    return x, y


def wrong(x: np.ndarray, y: np.ndarray) -> int:
    unsigned = UNSIGNED[x.itemsize]
    return int((x.view(unsigned) != y.view(unsigned)).sum())


@pytest.mark.parametrize("cfg", configs(), ids=lambda c: c.name)
def test_threads_read_what_tma_loaded(cfg):
    x, y = run("load", cfg)
    assert wrong(x, y) == 0, f"{wrong(x, y)} of {x.size} elements wrong"


@pytest.mark.parametrize("cfg", configs(), ids=lambda c: c.name)
def test_tma_stores_what_threads_wrote(cfg):
    x, y = run("store", cfg)
    assert wrong(x, y) == 0, f"{wrong(x, y)} of {x.size} elements wrong"
