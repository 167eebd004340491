"""What a TFLOAT32 tensor map does to the bits it moves, on this machine's GPU, each side
apart (docs/hardware.md, "Reductions": run 84's counts give a load that rounds to tf32, to
nearest even, and a plain f32 add; this measures the load, the store and the add directly).

    python scripts/probe_tf32.py                  # the table below, on the GPU
    python scripts/probe_tf32.py --save raw.npz   # and every input and output, for later
    python scripts/probe_tf32.py --dry-run        # build the probes, launch none

Two probes, both `kernels.tma_copy` (a TMA load of a tile into SMEM, then a TMA store of it):
as built (`copy`), and with the store made a reduce add (`add`, as measure_hardware.py's
reduction probes). Each runs with its load map and its store map re-typed independently
among FLOAT32, TFLOAT32 and the FTZ forms, on operand sets that separate the two sides (x
loaded, y reduced into): random bit patterns, x alone (y = 0), y alone (x = 0), values
with every rounding case in their low 13 bits, tf32-exact values. For each, the models:
each operand as it is, rounded to tf32 to nearest even (`rne`), to nearest away (`rna`) or
toward zero (`rz`), the f32 sum likewise, with and without flushing subnormals; the line
prints the elements that differ from the best models (NaNs compared as NaN).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import measure_hardware as mh  # noqa: E402

MAPS = (
    ("FLOAT32", "FLOAT32"),
    ("TFLOAT32", "TFLOAT32"),
    ("TFLOAT32", "FLOAT32"),
    ("FLOAT32", "TFLOAT32"),
    ("TFLOAT32_FTZ", "TFLOAT32_FTZ"),
    ("FLOAT32_FTZ", "FLOAT32_FTZ"),
)
"""(load map, store map) types."""
LOW = np.uint32(0x1FFF)
"""The 13 low bits of an f32 significand that tf32 drops."""


# ---- models -------------------------------------------------------------------------------


def _keep_special(u: np.ndarray, rounded: np.ndarray) -> np.ndarray:
    """Inf and NaN as they were (a rounding must not carry a NaN's payload into Inf)."""
    return np.where((u & 0x7F800000) == 0x7F800000, u, rounded).astype(np.uint32)


def rne(u: np.ndarray) -> np.ndarray:
    """The model the facts hold (a TFLOAT32 map's load: `interpreter.values.f32_to_tf32`)."""
    from interpreter.values import f32_to_tf32

    return f32_to_tf32(u.view(np.float32)).view(np.uint32)


def rna(u: np.ndarray) -> np.ndarray:
    w = u.astype(np.uint64)
    return _keep_special(u, ((w + 0x1000) & ~np.uint64(LOW)).astype(np.uint32))


def rz(u: np.ndarray) -> np.ndarray:
    return _keep_special(u, u & ~LOW)


def ftz(u: np.ndarray) -> np.ndarray:
    return np.where((u & 0x7F800000) == 0, u & 0x80000000, u).astype(np.uint32)


ROUNDINGS = {"as is": lambda u: u, "rne": rne, "rna": rna, "rz": rz}


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a == b) | (np.isnan(a.view(np.float32)) & np.isnan(b.view(np.float32)))


def models(op: str, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Every model's result, as f32 bits, by its name."""
    found = {}
    for flush in (False, True):
        z = ftz if flush else ROUNDINGS["as is"]
        tag = ", ftz" if flush else ""
        for (nx, fx), (ny, fy), (ns, fs) in itertools.product(ROUNDINGS.items(), repeat=3):
            if op == "copy":
                if ny == "as is" and ns == "as is":
                    found[f"x {nx}{tag}"] = z(fx(z(x)))
                continue
            with np.errstate(all="ignore"):
                total = z(fy(z(y))).view(np.float32) + z(fx(z(x))).view(np.float32)
            found[f"y {ny} + x {nx}, sum {ns}{tag}"] = z(
                fs(total.astype(np.float32).view(np.uint32))
            )
    return found


# ---- operands -----------------------------------------------------------------------------


def operand_sets(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)

    def finite(k: int) -> np.ndarray:
        u = rng.integers(0, 2**32, size=k, dtype=np.uint64).astype(np.uint32)
        return np.where((u >> 23) & 0xFF == 0xFF, u ^ (1 << 23), u).astype(np.uint32)

    def rounding_cases(k: int) -> np.ndarray:
        low = np.array([0x1000, 0x0FFF, 0x1001, 0x1FFF, 0x0001, 0x0800, 0x17FF, 0x1800], np.uint32)
        v = (finite(k) & ~LOW) | rng.choice(low, size=k)
        special = np.array(
            [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7F7FF000,
             0x7F7FFFFF, 0x7F7FF001, 0x00000001, 0x007FFFFF, 0x00001000, 0x00003000,
             0x80001000, 0x3F800FFF, 0x3F801000, 0x3F803000, 0x3F801001, 0x3FFFFFFF,
             0x80000000, 0],
            np.uint32,
        )  # fmt: skip
        v[: special.size] = special
        return v

    zeros = np.zeros(n, np.uint32)
    x, y = mh.random_operands("TFLOAT32", seed=3 * 131 + 32)  # measure_hardware's add probe
    return {
        "random": (x.reshape(-1), y.reshape(-1)),
        "x alone": (finite(n), zeros),
        "y alone": (zeros, finite(n)),
        "x rounding": (rounding_cases(n), zeros),
        "y rounding": (zeros, rounding_cases(n)),
        "tf32-exact": (finite(n) & ~LOW, finite(n) & ~LOW),
    }


# ---- probes -------------------------------------------------------------------------------


def compile_probes(folder: Path) -> dict[str, Path]:
    """The copy probe and its reduce-add form, as cubins with the copy's ABI."""
    from copy_tools.universe import make_context
    from frontends import kernels
    from passes.backend import compile_cubin
    from passes.pipeline import compile_module

    compiled = compile_module(kernels.tma_copy(mh.SHAPE, "i32", mh.TILE), make_context())
    paths = {}
    for op, ptx in (("copy", compiled.ptx), ("add", mh.reduction_ptx(compiled.ptx, "add"))):
        paths[op] = folder / f"tf32_{op}.cubin"
        paths[op].write_bytes(compile_cubin(ptx, mh.TARGET))
        Path(f"{paths[op]}.json").write_text(compiled.abi.to_json())
    return paths


def launch(path: Path, maps: tuple[str, str], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y after the probe at `path` with its load and store maps re-typed `maps`."""
    import runtime
    import runtime.kernel
    from facts.abi import TensorMapParam

    runtime.kernel.check_tensor_map_array = lambda *args: None  # the map types are re-typed
    program = runtime.load(path)
    abi = next(iter(program.abi.kernels.values()))
    types = iter(maps)
    params = tuple(
        replace(p, dtype=next(types)) if isinstance(p, TensorMapParam) else p for p in abi.params
    )
    program = runtime.Program(
        program.cubin, replace(program.abi, kernels={abi.name: replace(abi, params=params)})
    )
    xs = x.view(np.int32).reshape(mh.SHAPE).copy()
    ys = y.view(np.int32).reshape(mh.SHAPE).copy()
    program(xs, ys, grid=(mh.SHAPE[1] // mh.TILE[1], mh.SHAPE[0] // mh.TILE[0]))
    return ys.reshape(-1).view(np.uint32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="build the probes, launch none")
    parser.add_argument("--save", type=Path, help="write every input and output here (.npz)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp())
    paths = compile_probes(folder)
    sets = operand_sets(mh.SHAPE[0] * mh.SHAPE[1])
    if args.dry_run:
        print(f"built {', '.join(p.name for p in paths.values())}; {len(sets)} operand sets, "
              f"{len(MAPS)} map pairs")  # fmt: skip
        return 0
    raw: dict[str, np.ndarray] = {}
    print("| probe | load map | store map | operands | best models (elements that differ) |")
    print("|---|---|---|---|---|")
    for op, (load, store), (name, (x, y)) in itertools.product(paths, MAPS, sets.items()):
        got = launch(paths[op], (load, store), x, y)
        raw[f"{op}/{load}/{store}/{name}"] = got
        raw[f"x/{name}"], raw[f"y/{name}"] = x, y
        ranked = sorted((int((~same_bits(got, m)).sum()), n) for n, m in models(op, x, y).items())
        best = "; ".join(f"{n} ({bad})" for bad, n in ranked[:3])
        print(f"| {op} | {load} | {store} | {name} | {best} |")
    if args.save:
        np.savez_compressed(args.save, **raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
