"""`python -m copy_dialect`: versions and what was found, with or without a GPU."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

from copy_dialect import __main__ as about


def run() -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "copy_dialect"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_it_prints_every_version_and_what_was_found():
    lines = run()
    heads = [line.split()[0] for line in lines]
    assert heads[:5] == ["copy-dialect", "xdsl", "llvmlite", "cuda-bindings", "nvJitLink"]
    assert heads[5] == "driver"
    assert lines[0].split()[1] == metadata.version("copy-dialect")
    assert lines[1].split()[1] == "0.75.0"
    assert "(LLVM " in lines[2]
    assert "nvidia-nvjitlink" in lines[4]
    gpus = lines[6:]
    assert gpus, "a GPU line (or `no GPU`)"
    assert all(line.startswith("GPU") for line in gpus)
    assert all("compute capability" in line or "no GPU" in line for line in gpus)


def test_without_a_driver_it_says_no_gpu(monkeypatch):
    def no_driver():
        raise RuntimeError("no driver here")

    monkeypatch.setattr(about, "_import_driver", no_driver)
    lines = dict(about.driver_lines())
    assert lines["driver"].startswith("no CUDA driver found")
    assert lines["GPU"] == "no GPU"


def test_it_imports_no_xdsl_and_takes_no_arguments():
    script = (
        "import sys, copy_dialect.__main__ as m; m.report(); "
        "print(any(k == 'xdsl' or k.startswith('xdsl.') for k in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.split() == ["False"], result.stderr
    assert about.main(["--bogus"]) == 2


class FakeDriver:
    """The few driver calls `driver_lines` makes, answering as an H200 with a 13.0 driver."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUdevice_attribute:  # noqa: N801 (the binding's name)
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = "major"
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = "minor"

    def cuDriverGetVersion(self):  # noqa: N802
        return 0, 13000

    def cuInit(self, flags):  # noqa: N802
        return (0,)

    def cuDeviceGetCount(self):  # noqa: N802
        return 0, 1

    def cuDeviceGet(self, ordinal):  # noqa: N802
        return 0, ordinal

    def cuDeviceGetName(self, size, dev):  # noqa: N802
        return 0, b"NVIDIA H200\x00\x00"

    def cuDeviceGetAttribute(self, attr, dev):  # noqa: N802
        return 0, {"major": 9, "minor": 0}[attr]


def test_with_a_gpu_it_names_it(monkeypatch):
    monkeypatch.setattr(about, "_import_driver", FakeDriver)
    assert about.driver_lines() == [
        ("driver", "CUDA 13.0 (13000)"),
        ("GPU 0", "NVIDIA H200, compute capability 9.0"),
    ]
