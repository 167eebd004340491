"""The measured hardware facts (facts/hardware.toml) and what reads them, without a GPU:
the checks use the file's values, the store-overrun model fits its measurements, and every
probe of scripts/measure_hardware.py (which measures them again on a GPU:
tests/facts/test_hardware_gpu.py) builds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from copy_dialect import geometry, memory
from copy_dialect.attributes import SWIZZLES, swizzle_period
from facts import hardware

ROOT = Path(__file__).resolve().parents[2]


def harness():
    spec = importlib.util.spec_from_file_location(
        "measure_hardware", ROOT / "scripts" / "measure_hardware.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["measure_hardware"] = module
    spec.loader.exec_module(module)
    return module


def test_the_verifier_reads_the_reduction_table_from_the_data():
    assert geometry.REDUCTIONS_BY_MAP is hardware.REDUCTIONS_BY_MAP
    assert hardware.REDUCTIONS_BY_MAP["UINT32"] == set(hardware.REDUCTION_OPS)
    assert hardware.REDUCTIONS_BY_MAP["INT64"] == {"min", "max"}
    assert "UINT8" not in hardware.REDUCTIONS_BY_MAP  # it took no op
    assert len(hardware.MEASURED_REDUCTIONS) * len(hardware.REDUCTION_OPS) == 13 * 8


def test_smem_and_swizzle_facts_come_from_the_data():
    assert SWIZZLES == (16, *hardware.SWIZZLE_SPANS)
    assert [swizzle_period(s) for s in SWIZZLES] == [0, 256, 512, 1024]
    assert memory.smem_alignment(16) == hardware.SMEM_ALIGNMENT == 128
    assert memory.smem_alignment(128) == 1024


def test_the_chunk_model_fits_every_store_overrun_measured():
    sizes = {"f32": 4, "f16": 2, "i8": 1}
    assert len(hardware.STORE_OVERRUNS) == 11
    for o in hardware.STORE_OVERRUNS:
        assert hardware.store_overrun_elements(o.n, sizes[o.element]) == o.overwritten, o


def test_every_encoder_case_sits_at_a_limit_of_the_data():
    cases = harness().encoder_cases()
    rules = {c.rule for c in cases}
    assert rules == {"TR1", "TR2", "TR3", "TR4", "TR5", "TR7", "TR8", "TR15"}
    accepted = {c.case for c in cases if c.accepted}
    assert f"box dim {hardware.MAX_BOX_DIM}" in accepted
    assert f"box dim {hardware.MAX_BOX_DIM + 1}" not in accepted
    assert "rank 5" in accepted
    assert "rank 6" not in accepted


def test_the_reduction_probes_are_plain_copies_made_reductions():
    m = harness()
    ptx = "\tcp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd2, {%r2}], [%rd5];"
    assert "shared::cta.inc.tile.bulk_group" in m.reduction_ptx(ptx, "inc")
    with pytest.raises(RuntimeError, match="expected one TMA store"):
        m.reduction_ptx(ptx * 2, "add")


def test_the_reduction_model_on_known_values():
    m = harness()
    x = np.array([5, 0xFFFFFFFF, 0], np.uint32)  # the source (SMEM)
    y = np.array([7, 1, 0], np.uint32)  # reduced into (GMEM)
    assert list(m.reduction_model("UINT32", "min", x, y)) == [5, 1, 0]
    assert list(m.reduction_model("INT32", "min", x, y).view(np.int32)) == [5, -1, 0]
    assert list(m.reduction_model("UINT32", "add", x, y)) == [12, 0, 0]  # wraps
    # inc: y >= x ? 0 : y + 1;  dec: y == 0 or y > x ? x : y - 1 (PTX's unsigned definitions).
    assert list(m.reduction_model("UINT32", "inc", x, y)) == [0, 2, 0]
    assert list(m.reduction_model("UINT32", "dec", x, y)) == [5, 0, 0]
    one, two = np.float32(1.0), np.float32(2.0)
    fx, fy = np.array([one]).view(np.uint32), np.array([two]).view(np.uint32)
    assert m.reduction_model("FLOAT32", "add", fx, fy).view(np.float32)[0] == 3.0
    bx = np.array([0x3F80], np.uint16)  # bf16 1.0
    assert m.reduction_model("BFLOAT16", "add", bx, bx)[0] == 0x4000  # 2.0


def test_the_tfloat32_model_gives_the_counts_run_84_measured():
    """A reduce add on a TFLOAT32 map, its x loaded through a TFLOAT32 map too (the probe's
    both maps re-typed): on an H100 (benchmarks/RESULTS.md run 84) its 65,536 results
    differed from five models in 35,771, 35,710, 38,592, 50,807 and 52,131 elements. The
    model the facts now hold, x rounded to tf32 to nearest even by the load and then a
    plain f32 add, differs from those five in exactly those counts (rounding to nearest
    away gives 35,711 against the second, toward zero 50,673): the load rounds, the add
    does not."""
    m = harness()
    x, y = m.random_operands("TFLOAT32", seed=len("add") * 131 + 32)
    got = m.reduction_model("TFLOAT32", "add", x, y)
    a, b = y.view(np.float32), x.view(np.float32)

    def tf32(v: np.ndarray) -> np.ndarray:  # (run 84's rounding: no Inf or NaN among these)
        u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        return (
            ((u + 0xFFF + ((u >> 13) & 1)) & ~np.uint64(0x1FFF)).astype(np.uint32).view(np.float32)
        )

    def trunc(v: np.ndarray) -> np.ndarray:
        return (v.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)

    with np.errstate(all="ignore"):
        models = [a + b, tf32(a) + tf32(b), tf32(a + b), trunc(a) + trunc(b), trunc(a + b)]
    counts = [int(np.sum(got != v.astype(np.float32).view(np.uint32))) for v in models]
    assert counts == [35771, 35710, 38592, 50807, 52131]


def test_every_pair_has_operands_and_a_model():
    m = harness()
    for map_type in hardware.MEASURED_REDUCTIONS:
        x, y = m.random_operands(map_type, seed=1)
        assert x.shape == y.shape == m.SHAPE
        for op in hardware.REDUCTION_OPS:
            assert m.reduction_model(map_type, op, x, y).dtype == y.dtype


def test_dry_run_builds_every_probe(tmp_path: Path):
    lines = list(harness().dry_run(["encoder", "store-overrun", "reductions"], tmp_path))
    assert sum(line.startswith("reductions ") for line in lines) == 4 * 8
    assert sum(line.startswith("store-overrun ") for line in lines) == 3
    cubins = sorted(tmp_path.glob("*.cubin"))
    assert len(cubins) == 35
    assert all(p.read_bytes()[:4] == b"\x7fELF" for p in cubins)


def tf32_probe():
    harness()  # (the probe imports measure_hardware's helpers)
    spec = importlib.util.spec_from_file_location("probe_tf32", ROOT / "scripts" / "probe_tf32.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tf32_probe_builds_and_its_roundings_round_as_tf32(tmp_path: Path):
    """scripts/probe_tf32.py (the open TFLOAT32 question, docs/hardware.md): its probes build,
    and its roundings keep 10 significand bits: to nearest even (ties to the even one),
    to nearest away, toward zero, with Inf and NaN as they are."""
    probe = tf32_probe()
    paths = probe.compile_probes(tmp_path)
    assert all(p.read_bytes()[:4] == b"\x7fELF" for p in paths.values())
    u = np.array([0x3F801000, 0x3F803000, 0x3F800FFF, 0x3F801001, 0x7FC00001, 0xFF800000],
                 np.uint32)  # fmt: skip
    assert list(probe.rne(u)) == [0x3F800000, 0x3F804000, 0x3F800000, 0x3F802000, 0x7FC00001,
                                  0xFF800000]  # fmt: skip
    assert list(probe.rna(u)) == [0x3F802000, 0x3F804000, 0x3F800000, 0x3F802000, 0x7FC00001,
                                  0xFF800000]  # fmt: skip
    assert list(probe.rz(u)) == [0x3F800000, 0x3F802000, 0x3F800000, 0x3F800000, 0x7FC00001,
                                 0xFF800000]  # fmt: skip
    x, y = np.array([0x3F801000], np.uint32), np.array([0x3F800000], np.uint32)
    found = probe.models("add", x, y)
    assert found["y as is + x as is, sum as is"][0] == 0x40000800  # 1 + 1.000488...: exact
    assert found["y as is + x rne, sum as is"][0] == 0x40000000
    assert len(probe.operand_sets(64)) == 6
