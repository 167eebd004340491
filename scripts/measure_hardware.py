"""Measure the hardware facts of facts/hardware.toml again, on this machine's GPU, and
compare them with the file (docs/hardware.md says how each was first measured).

    python scripts/measure_hardware.py                       # every group
    python scripts/measure_hardware.py encoder reductions    # some groups
    python scripts/measure_hardware.py --dry-run             # build every probe, launch none

Groups:
- `encoder` (TR1..TR8, TR15): what `cuTensorMapEncodeTiled` accepts, probed at each limit of
  `[tensor_map]` (the value accepted, the next one refused);
- `store-overrun` (TR19): 1-D TMA stores clipped at n elements, counting the elements after
  the tensor that the store overwrote, against `[store_overrun]`;
- `reductions` (E1, E5): every cp.reduce.async.bulk.tensor op on every tensor-map type, each
  in its own process (an op a map type does not take is a context-killing
  CUDA_ERROR_ILLEGAL_INSTRUCTION), against a numpy model of the op, against `[reductions]`.

Each line printed is `ok` or `DIFFERS`, with the rule, the case, what the file says and what
was measured. The exit status is 0 when every measurement agrees with the file, 1 otherwise,
2 without a GPU (`--dry-run` needs none: it compiles every probe kernel to a cubin and lists
the encoder cases). The runtime's own checks refuse what the probes must do (a store into a
tensor whose extent breaks TR19, a map type the ABI does not record): the probes bypass them,
on purpose and only here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from facts import hardware as hw  # noqa: E402

TARGET = "sm_90a"
GROUPS = ("encoder", "store-overrun", "reductions")
CHILD_TIMEOUT_S = 60


@dataclass(frozen=True)
class Result:
    rule: str
    case: str
    expected: str
    measured: str

    @property
    def ok(self) -> bool:
        return self.expected == self.measured

    def line(self) -> str:
        verdict = "ok     " if self.ok else "DIFFERS"
        expected = f"file: {self.expected:<10}"
        return f"{verdict} {self.rule:<5} {self.case:<58} {expected} GPU: {self.measured}"


# ===----------------------------------------------------------------------=== #
# encoder: cuTensorMapEncodeTiled at each limit
# ===----------------------------------------------------------------------=== #


@dataclass(frozen=True)
class EncodeCase:
    """One call of the encoder: the default map (FLOAT32, rank 2, 64 x 64, 256-byte rows, box
    32 x 32, unit element strides, no swizzle, zero fill) changed where the case says."""

    rule: str
    case: str
    accepted: bool
    """What hardware.toml says the encoder does."""
    dtype: str = "FLOAT32"
    dims: tuple[int, ...] = (64, 64)
    """Outermost first, as the dialect writes shapes (the driver gets them reversed)."""
    strides: tuple[int, ...] = (256,)
    """The rank - 1 outer byte strides, outermost first."""
    box: tuple[int, ...] = (32, 32)
    element_strides: tuple[int, ...] | None = None
    swizzle: int = 16
    nan_fill: bool = False
    offset: int = 0
    """Bytes added to the (aligned) base address."""


def _rank_case(rank: int, accepted: bool) -> EncodeCase:
    dims = (4,) * rank
    strides = tuple(256 * 4 ** (rank - 2 - i) for i in range(rank - 1)) or (256,)
    return EncodeCase("TR1", f"rank {rank}", accepted, dims=dims, strides=strides,
                      box=(4,) * rank)  # fmt: skip


def encoder_cases() -> list[EncodeCase]:
    """The cases, each at a limit of facts/hardware.toml and just past it."""
    m, b = hw.BOX_ROW_MULTIPLE, hw.MAX_BOX_DIM
    # A rank-1 map gets one (ignored) stride: the driver refuses none (docs/hardware.md).
    cases = [_rank_case(r, True) for r in range(hw.MIN_RANK, hw.MAX_RANK + 1)]
    cases += [_rank_case(hw.MIN_RANK - 1, False), _rank_case(hw.MAX_RANK + 1, False)]
    cases += [
        EncodeCase("TR2", "global dim 0", False, dims=(0, 64)),
        EncodeCase("TR2", f"global dim {hw.MAX_GLOBAL_DIM}", True, dims=(hw.MAX_GLOBAL_DIM, 64)),
        EncodeCase("TR2", f"global dim {hw.MAX_GLOBAL_DIM + 1}", False,
                   dims=(hw.MAX_GLOBAL_DIM + 1, 64)),
        EncodeCase("TR3", f"stride {256 + hw.GLOBAL_STRIDE_MULTIPLE}", True,
                   strides=(256 + hw.GLOBAL_STRIDE_MULTIPLE,)),
        EncodeCase("TR3", f"stride {256 + hw.GLOBAL_STRIDE_MULTIPLE // 2}", False,
                   strides=(256 + hw.GLOBAL_STRIDE_MULTIPLE // 2,)),
        EncodeCase("TR3", f"stride {hw.MAX_GLOBAL_STRIDE - hw.GLOBAL_STRIDE_MULTIPLE}", True,
                   strides=(hw.MAX_GLOBAL_STRIDE - hw.GLOBAL_STRIDE_MULTIPLE,)),
        EncodeCase("TR3", f"stride {hw.MAX_GLOBAL_STRIDE}", False,
                   strides=(hw.MAX_GLOBAL_STRIDE,)),
        EncodeCase("TR4", f"base + {hw.GLOBAL_ADDRESS_ALIGNMENT}", True,
                   offset=hw.GLOBAL_ADDRESS_ALIGNMENT),
        EncodeCase("TR4", f"base + {hw.GLOBAL_ADDRESS_ALIGNMENT // 2}", False,
                   offset=hw.GLOBAL_ADDRESS_ALIGNMENT // 2),
        EncodeCase("TR5", "box dim 0", False, box=(0, 32)),
        EncodeCase("TR5", "box dim 1", True, box=(1, 32)),
        EncodeCase("TR5", f"box dim {b}", True, box=(b, 32)),
        EncodeCase("TR5", f"box dim {b + 1}", False, box=(b + 1, 32)),
        EncodeCase("TR5", f"f32 box row {m} bytes", True, box=(32, m // 4)),
        EncodeCase("TR5", f"f32 box row {3 * m} bytes", True, box=(32, 3 * m // 4)),
        EncodeCase("TR5", f"f32 box row {m // 2} bytes", False, box=(32, m // 8)),
        EncodeCase("TR5", f"f32 box row {m + 8} bytes", False, box=(32, (m + 8) // 4)),
        EncodeCase("TR7", "element stride 0", False, element_strides=(0, 1)),
        EncodeCase("TR7", f"element stride {hw.MAX_ELEMENT_STRIDE}", True,
                   element_strides=(hw.MAX_ELEMENT_STRIDE, 1)),
        EncodeCase("TR7", f"element stride {hw.MAX_ELEMENT_STRIDE + 1}", False,
                   element_strides=(hw.MAX_ELEMENT_STRIDE + 1, 1)),
        EncodeCase("TR15", "NaN fill on FLOAT32", True, nan_fill=True),
        EncodeCase("TR15", "NaN fill on UINT32", not hw.NAN_FILL_FLOATS_ONLY, dtype="UINT32",
                   nan_fill=True),
    ]  # fmt: skip
    for span in hw.SWIZZLE_SPANS:
        for row in (16, span, 2 * span):
            accepted = row <= span if hw.ROW_AT_MOST_SPAN else row == span
            cases.append(
                EncodeCase(
                    "TR8",
                    f"swizzle {span}, f32 box row {row} bytes",
                    accepted,
                    box=(8, row // 4),
                    swizzle=span,
                )  # fmt: skip
            )
    return cases


SWIZZLE_NAMES = {16: "NONE", 32: "32B", 64: "64B", 128: "128B"}


def encode(driver: Any, base: int, case: EncodeCase) -> bool:
    """Whether the encoder accepts the case (a binding that refuses the arguments counts as
    refused)."""
    rank = len(case.dims)
    element_strides = case.element_strides or (1,) * rank
    try:
        err, _ = driver.cuTensorMapEncodeTiled(
            getattr(driver.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{case.dtype}"),
            rank,
            base + case.offset,
            [driver.cuuint64_t(d) for d in reversed(case.dims)],
            [driver.cuuint64_t(s) for s in reversed(case.strides)],
            [driver.cuuint32_t(x) for x in reversed(case.box)],
            [driver.cuuint32_t(e) for e in reversed(element_strides)],
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(driver.CUtensorMapSwizzle,
                    f"CU_TENSOR_MAP_SWIZZLE_{SWIZZLE_NAMES[case.swizzle]}"),
            driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
            if case.nan_fill
            else driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )  # fmt: skip
    except (ValueError, TypeError, OverflowError):
        return False
    return err == driver.CUresult.CUDA_SUCCESS


def encode_in_this_process(index: int) -> bool:
    """Case `index` of `encoder_cases()`, encoded on this machine's GPU."""
    from cuda.bindings import driver

    from runtime.driver import call, device

    device()
    base = int(call("cuMemAlloc", 1 << 20))
    try:
        return encode(driver, base, encoder_cases()[index])
    finally:
        call("cuMemFree", base)


def measure_encoder() -> list[Result]:
    """Each case in its own process: a call the binding cannot stop might crash it."""
    return [
        Result(c.rule, c.case, _accepted(c.accepted), child(["encode", str(i)]))
        for i, c in enumerate(encoder_cases())
    ]


def _accepted(ok: bool) -> str:
    return "accepted" if ok else "refused"


# ===----------------------------------------------------------------------=== #
# store-overrun: 1-D TMA stores clipped at n elements (TR19)
# ===----------------------------------------------------------------------=== #

NUMPY = {"f32": np.float32, "f16": np.float16, "i8": np.int8}
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SPARE_BYTES = 256


def store_1d(dtype: str) -> str:
    """`y = x` over a 1-D array of any size, one box of STORE_OVERRUN_BOX_BYTES: a TMA load
    (zero-filled past n) and a TMA store at coordinate 0 (clipped at n)."""
    box = hw.STORE_OVERRUN_BOX_BYTES // np.dtype(NUMPY[dtype]).itemsize
    ref, tile = f"memref<?x{dtype}>", f"memref<{box}x{dtype}, #copy.smem>"
    return f"""
builtin.module attributes {{copy.target = #copy.target<"{TARGET}">}} {{
  func.func @store_1d(%x: {ref}, %y: {ref}) attributes {{gpu.kernel,
      gpu.known_block_size = array<i32: 128, 1, 1>}} {{
    %c0 = arith.constant 0 : index
    %phase = arith.constant false
    %tile = copy.alloc_smem : {tile}
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%c0] to %tile barrier %bar[%c0] : {ref} to {tile}, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>
    copy.async_copy %tile to %y[%c0] : {tile} to {ref}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""


def compile_store_probes(folder: Path) -> dict[str, Path]:
    """One cubin (and its ABI) per element type of the measurement."""
    from copy_tools.runtime import compile as compile_mlir

    paths = {}
    for dtype in sorted({o.element for o in hw.STORE_OVERRUNS}):
        program = compile_mlir(store_1d(dtype))
        path = folder / f"store_1d_{dtype}.cubin"
        path.write_bytes(program.cubin)
        Path(f"{path}.json").write_text(program.abi.to_json())
        paths[dtype] = path
    return paths


class Buffer:
    """A device buffer whose first `n` elements are passed in place
    (`__cuda_array_interface__`), the rest of it a sentinel."""

    def __init__(self, host: np.ndarray) -> None:
        from runtime.driver import call, device

        device()
        self.host = host
        self.pointer = int(call("cuMemAlloc", host.nbytes))
        call("cuMemcpyHtoD", self.pointer, host.ctypes.data, host.nbytes)

    def view(self, n: int) -> Any:
        interface = {"shape": (n,), "typestr": self.host.dtype.str,
                     "data": (self.pointer, False), "strides": None, "version": 3}  # fmt: skip
        return type("View", (), {"__cuda_array_interface__": interface})()

    def read(self) -> np.ndarray:
        from runtime.driver import call

        out = np.empty_like(self.host)
        call("cuMemcpyDtoH", out.ctypes.data, self.pointer, out.nbytes)
        return out

    def free(self) -> None:
        from runtime.driver import call

        call("cuMemFree", self.pointer)


def nonzero_bits(count: int, itemsize: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(1, 2 ** (8 * itemsize), size=count, dtype=np.uint64).astype(
        UNSIGNED[itemsize]
    )


def overwritten_after(path: Path, dtype: str, n: int) -> int:
    """Launches the store into a buffer of n elements and a sentinel; the number of sentinel
    elements after the tensor that the store changed."""
    import runtime
    import runtime.kernel

    runtime.kernel.check_tensor_map_array = lambda *args: None  # the probe breaks TR19
    itemsize = np.dtype(NUMPY[dtype]).itemsize
    x = nonzero_bits(n, itemsize, seed=n).view(NUMPY[dtype])
    before = nonzero_bits(n + SPARE_BYTES // itemsize, itemsize, seed=n + 1).view(NUMPY[dtype])
    buffer = Buffer(before)
    try:
        runtime.load(path).kernel()(x, buffer.view(n), grid=(1,))
        after = buffer.read()
    finally:
        buffer.free()
    bits = UNSIGNED[itemsize]
    if not np.array_equal(after[:n].view(bits), x.view(bits)):
        return -1  # the tensor itself is wrong
    changed = np.flatnonzero(after[n:].view(bits) != before[n:].view(bits))
    return 0 if not changed.size else int(changed[-1]) + 1


def measure_store_overrun(folder: Path) -> list[Result]:
    paths = compile_store_probes(folder)
    results = []
    for o in hw.STORE_OVERRUNS:
        measured = child(["store-overrun", str(paths[o.element]), o.element, str(o.n)])
        results.append(
            Result(
                "TR19",
                f"{o.element} n={o.n}: elements overwritten after the tensor",
                str(o.overwritten),
                measured,
            )  # fmt: skip
        )
        model = hw.store_overrun_elements(o.n, np.dtype(NUMPY[o.element]).itemsize)
        if model != o.overwritten:
            results.append(Result("TR19", f"{o.element} n={o.n}: the chunk model",
                                  str(o.overwritten), str(model)))  # fmt: skip
    return results


# ===----------------------------------------------------------------------=== #
# reductions: every op on every tensor-map type (E1, E5)
# ===----------------------------------------------------------------------=== #

CARRIERS = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}
"""The kernel each map type's probe uses, by element width: a plain TMA copy, its store made
a reduction in the PTX and its maps re-typed in the ABI (the cubin does not know the type)."""
MAP_BITS = {
    "UINT8": 8, "UINT16": 16, "UINT32": 32, "INT32": 32, "UINT64": 64, "INT64": 64,
    "FLOAT16": 16, "BFLOAT16": 16, "FLOAT32": 32, "FLOAT32_FTZ": 32, "TFLOAT32": 32,
    "TFLOAT32_FTZ": 32, "FLOAT64": 64,
}  # fmt: skip
SHAPE, TILE = (256, 256), (64, 64)
STORE = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"


def reduction_ptx(ptx: str, op: str) -> str:
    if ptx.count(STORE) != 1:
        raise RuntimeError(f"expected one TMA store in the probe's PTX, got {ptx.count(STORE)}")
    return ptx.replace(STORE, f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.{op}.tile"
                       ".bulk_group")  # fmt: skip


def compile_reduction_probes(folder: Path) -> dict[tuple[int, str], Path]:
    """A cubin per (element width, op), with the plain copy's ABI."""
    from copy_tools.universe import make_context
    from frontends import kernels
    from passes.backend import compile_cubin
    from passes.pipeline import compile_module

    paths = {}
    for bits, carrier in CARRIERS.items():
        compiled = compile_module(kernels.tma_copy(SHAPE, carrier, TILE), make_context())
        for op in hw.REDUCTION_OPS:
            path = folder / f"reduce_{bits}_{op}.cubin"
            path.write_bytes(compile_cubin(reduction_ptx(compiled.ptx, op), TARGET))
            Path(f"{path}.json").write_text(compiled.abi.to_json())
            paths[bits, op] = path
    return paths


def random_operands(map_type: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x (the SMEM side) and y (GMEM, reduced into) as unsigned bit patterns: random, finite
    and nonzero for float maps (NaN and signed zeros are not re-measured here)."""
    bits = MAP_BITS[map_type]
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**bits, size=(2, *SHAPE), dtype=np.uint64).astype(UNSIGNED[bits // 8])
    if map_type.startswith(("FLOAT", "BFLOAT", "TFLOAT")):
        exponent = {"FLOAT16": (10, 0x1F), "BFLOAT16": (7, 0xFF), "FLOAT64": (52, 0x7FF)}.get(
            map_type, (23, 0xFF)
        )
        shift, mask = exponent
        field = (raw >> shift) & mask
        raw = np.where(field == mask, raw ^ (UNSIGNED[bits // 8](1) << shift), raw)
        raw = np.where(raw << 1 == 0, UNSIGNED[bits // 8](1) << shift, raw)
    return raw[0], raw[1]


def _flush(v: np.ndarray, ftz: bool) -> np.ndarray:
    if not ftz:
        return v
    tiny = np.finfo(v.dtype).tiny
    return np.where(np.abs(v) < tiny, np.copysign(0, v), v).astype(v.dtype)


def _to_bf16(v: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest even), as uint16 bits."""
    u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def reduction_model(map_type: str, op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y <op>= x as the map type defines it (the semantics docs/hardware.md describes), as
    bits, x having been loaded into SMEM through a map of the same type."""
    from interpreter.values import f32_to_tf32

    with np.errstate(all="ignore"):
        if map_type.startswith(("UINT", "INT")):
            signed = map_type.startswith("INT")
            view = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[x.itemsize * 8]
            a, b = (y.view(view), x.view(view)) if signed else (y, x)
            out = {
                "add": lambda: a + b,
                "min": lambda: np.minimum(a, b),
                "max": lambda: np.maximum(a, b),
                "inc": lambda: np.where(y >= x, 0, y + 1).astype(y.dtype),
                "dec": lambda: np.where((y == 0) | (y > x), x, y - 1).astype(y.dtype),
                "and": lambda: a & b,
                "or": lambda: a | b,
                "xor": lambda: a ^ b,
            }[op]()
            return out.view(y.dtype)
        if map_type == "BFLOAT16":
            a = (y.astype(np.uint32) << 16).view(np.float32)
            b = (x.astype(np.uint32) << 16).view(np.float32)
            return _to_bf16(_float_op(op, a, b))
        float_type = {"FLOAT16": np.float16, "FLOAT64": np.float64}.get(map_type, np.float32)
        ftz = map_type.endswith("_FTZ")
        a, b = _flush(y.view(float_type), ftz), _flush(x.view(float_type), ftz)
        if map_type.startswith("TFLOAT32"):
            # x reaches SMEM through a load on the same map type, which rounds it to tf32
            # (to nearest even); the add itself is a plain f32 add (docs/hardware.md)
            b = f32_to_tf32(b)
        return _flush(_float_op(op, a, b).astype(float_type), ftz).view(y.dtype)


def _float_op(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return {"add": np.add, "min": np.fmin, "max": np.fmax}.get(op, np.add)(a, b)


def run_reduction(path: Path, map_type: str, op: str) -> str:
    """In a child process: launch one (map type, op) probe; `ok`, `wrong` or the fault."""
    import runtime
    import runtime.kernel
    from facts.abi import TensorMapParam

    runtime.kernel.check_tensor_map_array = lambda *args: None  # the map type is re-typed
    program = runtime.load(path)
    kernel_abi = next(iter(program.abi.kernels.values()))
    params = tuple(
        replace(p, dtype=map_type) if isinstance(p, TensorMapParam) else p
        for p in kernel_abi.params
    )
    kernels = {kernel_abi.name: replace(kernel_abi, params=params)}
    program = runtime.Program(program.cubin, replace(program.abi, kernels=kernels))
    x, y = random_operands(map_type, seed=len(op) * 131 + MAP_BITS[map_type])
    signed = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[x.itemsize * 8]
    xs, ys = x.view(signed).copy(), y.view(signed).copy()
    try:
        program(xs, ys, grid=(SHAPE[1] // TILE[1], SHAPE[0] // TILE[0]))
    except runtime.CudaError as exc:
        text = str(exc)
        return next((e for e in ("ILLEGAL_INSTRUCTION", "MISALIGNED_ADDRESS") if e in text), text)
    expected = reduction_model(map_type, op, x, y)
    return "ok" if np.array_equal(ys.view(expected.dtype), expected) else "wrong"


def measure_reductions(folder: Path) -> list[Result]:
    paths = compile_reduction_probes(folder)
    results = []
    for map_type, ops in hw.MEASURED_REDUCTIONS.items():
        for op in hw.REDUCTION_OPS:
            path = paths[MAP_BITS[map_type], op]
            measured = child(["reduction", str(path), map_type, op])
            expected = "ok" if op in ops else "ILLEGAL_INSTRUCTION"
            rule = "E1" if map_type.startswith(("FLOAT", "BFLOAT", "TFLOAT")) else "E5"
            results.append(Result(rule, f"reduce {op} on a {map_type} map", expected, measured))
    return results


# ===----------------------------------------------------------------------=== #
# Driver
# ===----------------------------------------------------------------------=== #


def child(args: Sequence[str]) -> str:
    """Runs one probe in its own process (a fault kills the CUDA context); its answer."""
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", *args],
            capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, cwd=ROOT,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return "hang"
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"failed ({tail[:80]})"
    return lines[-1]


def run_child(args: Sequence[str]) -> int:
    what, path, *rest = args  # `path` is the case's index for `encode`
    if what == "encode":
        print(_accepted(encode_in_this_process(int(path))))
    elif what == "store-overrun":
        print(overwritten_after(Path(path), rest[0], int(rest[1])))
    elif what == "reduction":
        print(run_reduction(Path(path), rest[0], rest[1]))
    else:
        raise SystemExit(f"unknown probe {what}")
    return 0


def dry_run(groups: Sequence[str], folder: Path) -> Iterator[str]:
    """Builds every probe of `groups` without a GPU: the encoder cases and the cubins."""
    if "encoder" in groups:
        for c in encoder_cases():
            yield f"encoder  {c.rule:<5} {c.case:<58} file: {_accepted(c.accepted)}"
    if "store-overrun" in groups:
        for dtype, path in compile_store_probes(folder).items():
            yield f"store-overrun {dtype}: {path.name} ({path.stat().st_size} bytes)"
    if "reductions" in groups:
        for (bits, op), path in compile_reduction_probes(folder).items():
            yield f"reductions {bits}-bit {op}: {path.name} ({path.stat().st_size} bytes)"


MEASURE: dict[str, Callable[[Path], list[Result]]] = {
    "encoder": lambda folder: measure_encoder(),
    "store-overrun": measure_store_overrun,
    "reductions": measure_reductions,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return run_child(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", choices=[*GROUPS, []], default=[])
    parser.add_argument("--dry-run", action="store_true", help="build the probes, launch none")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    groups = args.groups or list(GROUPS)
    with tempfile.TemporaryDirectory() as tmp:
        if args.dry_run:
            for line in dry_run(groups, Path(tmp)):
                print(line)
            return 0
        import runtime

        if not runtime.gpu_available():
            print("no CUDA driver or GPU here: nothing to measure (try --dry-run)")
            return 2
        machine = ", ".join(f"{k} {v}" for k, v in hw.MACHINE.items())
        print(f"hardware.toml was measured on: {machine}")
        results: list[Result] = []
        for group in groups:
            print(f"== {group}")
            for result in MEASURE[group](Path(tmp)):
                print(result.line())
                results.append(result)
    differ = [r for r in results if not r.ok]
    print(f"{len(results) - len(differ)}/{len(results)} measurements agree with hardware.toml")
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=1))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
