"""The Blackwell small-tensor map workaround (issue 33 item 6; triton#9235, CUTLASS): on a
Blackwell device whose driver is at most CUDA 13.1 (13010), the map of an array spanning fewer
than 128 KiB has bit 85 (bit 21 of its 64-bit word 1) cleared after `cuTensorMapEncodeTiled`;
every other map keeps the driver's bytes. The driver call is mocked: it returns a map with every
bit set, so the test reads which bits the runtime clears."""

from __future__ import annotations

import struct

import pytest

from facts.abi import TensorMapParam
from runtime import tensor_map
from runtime.arrays import DeviceArray
from runtime.driver import DeviceFacts

ALL_ONES = 2**64 - 1


class EncodedMap:
    """What the mocked driver returns: a `CUtensorMap` whose 16 words are all ones."""

    opaque = [ALL_ONES] * 16


@pytest.fixture
def driver(monkeypatch):
    pytest.importorskip("cuda.bindings.driver")
    calls = []

    def call(name, *args):
        calls.append(name)
        return EncodedMap()

    monkeypatch.setattr(tensor_map, "call", call)
    return calls


def words(image: bytes) -> list[int]:
    return list(struct.unpack("<16Q", image))


B200 = DeviceFacts("NVIDIA B200", (10, 0), 232_448, 13010)
PARAM = TensorMapParam(0, (64, 64), 128, "zeros", "BFLOAT16", False)


def bf16(rows: int, cols: int, row_bytes: int | None = None) -> DeviceArray:
    return DeviceArray(1 << 20, (rows, cols), (row_bytes or 2 * cols, 2), "uint16", 2)


@pytest.mark.parametrize(
    ("device", "fix"),
    [
        (B200, True),
        (DeviceFacts("NVIDIA B300", (10, 3), 232_448, 12080), True),
        (DeviceFacts("RTX 5090", (12, 0), 101_376, 12090), True),
        (DeviceFacts("NVIDIA B200", (10, 0), 232_448, 13020), False),  # fixed driver
        (DeviceFacts("NVIDIA H200", (9, 0), 232_448, 12080), False),  # not Blackwell
        (DeviceFacts("NVIDIA B200", (10, 0), 232_448), False),  # version not asked
    ],
)
def test_which_devices_need_the_fix(device: DeviceFacts, fix: bool):
    assert tensor_map.small_map_fix(device) is fix


def test_a_small_map_on_an_affected_device_has_bit_85_cleared(driver):
    # 64 x 64 bf16: 8 KiB.
    image = tensor_map.map_image(bf16(64, 64), PARAM, tensor_map.small_map_fix(B200))
    assert driver == ["cuTensorMapEncodeTiled"]
    got = words(image)
    assert got[1] == ALL_ONES & ~(1 << 21)
    assert got[0] == ALL_ONES
    assert got[2:] == [ALL_ONES] * 14
    assert not image[10] & 0x20  # byte 10, bit 5: bit 85 of the 128 bytes
    assert sum(bin(b).count("1") for b in image) == 128 * 8 - 1


def test_the_span_decides_not_the_element_count(driver):
    # 256 x 255 bf16 is 127.5 KiB of elements: under 128 KiB, patched.
    assert words(tensor_map.map_image(bf16(256, 255), PARAM, True))[1] == ALL_ONES & ~(1 << 21)
    # 256 x 256 bf16 is exactly 128 KiB: not under, kept.
    assert words(tensor_map.map_image(bf16(256, 256), PARAM, True))[1] == ALL_ONES
    # 64 x 64 bf16 rows 2 KiB apart: 64 elements a row, but the span is 63 * 2048 + 128 bytes.
    assert words(tensor_map.map_image(bf16(64, 64, 2048), PARAM, True))[1] == ALL_ONES & ~(1 << 21)
    assert words(tensor_map.map_image(bf16(65, 64, 2048), PARAM, True))[1] == ALL_ONES


def test_no_fix_keeps_the_drivers_bytes(driver):
    assert tensor_map.map_image(bf16(64, 64), PARAM, False) == bytes([0xFF]) * 128
