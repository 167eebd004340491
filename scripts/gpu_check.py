"""One small launch of a kernel, for compute-sanitizer.

    python scripts/gpu_check.py tma|multicast
"""

from __future__ import annotations

import sys

import numpy as np

from copy_dialect import kernels, runtime


def main(which: str) -> int:
    if which == "tma":
        module, shape, grid = kernels.tma_copy((256, 320), "f32"), (256, 320), (5, 4)
    elif which == "multicast":
        module, shape, grid = kernels.multicast_copy((128, 256), "f32"), (4, 32, 256), (8, 2)
    else:
        print(f"expected tma or multicast, got {which}", file=sys.stderr)
        return 1
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    y = np.zeros_like(x)
    runtime.compile(module)(x, y, grid=grid)
    ok = bool(np.array_equal(x, y))
    print(f"{which}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tma"))
