"""`python -m copy_dialect`: the versions of the project and its toolchain, and the GPU found.

    $ python -m copy_dialect
    copy-dialect   0.1.0
    xdsl           0.75.0
    llvmlite       0.50.0 (LLVM 22.1.0)
    cuda-bindings  13.5.0
    nvJitLink      13.5 (nvidia-nvjitlink 13.5.37)
    driver         CUDA 13.0 (13000)
    GPU 0          NVIDIA H200, compute capability 9.0

Needs no GPU: without a driver the driver line says so and the GPU line reads `no GPU`.
Compiling (PTX and cubins) needs none of it; launching (`runtime`) needs a driver and a GPU.
It asks the CUDA driver directly (`cuda.bindings.driver`), as the runtime does, without
importing the runtime (the dialect imports no runtime).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

PACKAGES = ("copy-dialect", "xdsl", "llvmlite", "cuda-bindings")
"""The distributions whose versions are printed, in order (nvJitLink follows them)."""


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def llvm_version() -> str | None:
    try:
        from llvmlite import binding
    except ImportError:
        return None
    return ".".join(str(v) for v in binding.llvm_version_info)


def nvjitlink_version() -> str:
    """The nvJitLink library's version (it links cubins without a GPU), and its wheel's."""
    wheel = package_version("nvidia-nvjitlink")
    try:
        from cuda.bindings import nvjitlink

        major, minor = nvjitlink.version()
    except Exception as exc:  # the library is missing or does not load
        return f"not found ({type(exc).__name__}: {exc})"
    return f"{major}.{minor} (nvidia-nvjitlink {wheel})"


def _checked(driver: Any, name: str, *args: Any) -> Any:
    err, *rest = getattr(driver, name)(*args)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, err_name = driver.cuGetErrorName(err)
        raise RuntimeError(err_name.decode() if isinstance(err_name, bytes) else str(err_name))
    return rest[0] if len(rest) == 1 else tuple(rest)


def _import_driver() -> Any:
    from cuda.bindings import driver

    return driver


def driver_lines() -> list[tuple[str, str]]:
    """The driver's version and each GPU (name and compute capability), or why there is none."""
    try:
        driver = _import_driver()
        version = _checked(driver, "cuDriverGetVersion")
    except Exception as exc:
        return [("driver", f"no CUDA driver found ({exc})"), ("GPU", "no GPU")]
    lines = [("driver", f"CUDA {version // 1000}.{version % 1000 // 10} ({version})")]
    try:
        _checked(driver, "cuInit", 0)
        count = _checked(driver, "cuDeviceGetCount")
    except Exception as exc:
        return [*lines, ("GPU", f"no GPU ({exc})")]
    if not count:
        return [*lines, ("GPU", "no GPU")]
    attr = driver.CUdevice_attribute
    for ordinal in range(count):
        dev = _checked(driver, "cuDeviceGet", ordinal)
        name = _checked(driver, "cuDeviceGetName", 256, dev)
        name = (name.decode() if isinstance(name, bytes) else str(name)).split("\x00")[0]
        major, minor = (
            _checked(driver, "cuDeviceGetAttribute", a, dev)
            for a in (
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            )
        )
        lines.append((f"GPU {ordinal}", f"{name}, compute capability {major}.{minor}"))
    return lines


def report() -> list[tuple[str, str]]:
    """(what, found) pairs: the packages' versions, nvJitLink's, the driver's and the GPUs."""
    lines = [(name, package_version(name)) for name in PACKAGES]
    llvm = llvm_version()
    if llvm is not None:
        lines[2] = ("llvmlite", f"{lines[2][1]} (LLVM {llvm})")
    return [*lines, ("nvJitLink", nvjitlink_version()), *driver_lines()]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    lines = report()
    width = max(len(what) for what, _ in lines) + 2
    for what, found in lines:
        print(f"{what:<{width}}{found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
