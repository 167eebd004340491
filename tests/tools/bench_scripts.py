"""A benchmark script of benchmarks/ imported as a module, as its tests use it: by its file
(benchmarks/ is no package), with its folder on `sys.path` (it imports bench_common, as the
script does) and itself in `sys.modules` (its dataclasses look their module up)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@contextmanager
def bench_script(name: str) -> Iterator[ModuleType]:
    """benchmarks/`name`.py, loaded for the `with` block."""
    path = BENCHMARKS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))
        del sys.modules[spec.name]
