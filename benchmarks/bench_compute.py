"""Elementwise and reduction bandwidth on the GPU: copy-dialect warp-specialized kernels against
PyTorch and Triton.

    python benchmarks/bench_compute.py [--reps 20] [--json PATH] [--ops add,axpb,...]

One run: z = x + y (f32, bf16, f16), y = a * x + b (f32, bf16, f16; a and b f32 scalars,
computed in f32 and rounded once to the dtype), row sums (f32 in, f32 out), y = x cast f32 ->
bf16 and f32 -> f16; each on 16384 x 16384 arrays (1 GiB per f32 input, the same element count
for the 16-bit types) and on one odd shape, 10000 x 10008 (tiles cut at both edges; 10008
elements keep the rows 16-byte aligned, as TMA needs). Rows: torch (eager, the fastest
single-call form, named), Triton (a plain masked kernel, a few BLOCK/num_warps configurations,
the best shown), copy-dialect ws (`frontends.kernels.ws_elementwise`, a sweep of tile,
stages, consumer warps, output buffers and the grid: one block per tile or persistent blocks
per SM; the best shown; every configuration in the sweep
table). The odd shape runs the best configuration of the large one (a row-sum band as
tall as `balanced_band_rows` gives for its own rows; `--sweep-odd`: its own sweep). Every
row's result is
checked against torch's; GB/s counts bytes read plus bytes written. `--compile-only` builds
and compiles every copy-dialect configuration without a GPU (what fits, what compiles).
`--plot PATH`: a bar chart of the main table's GB/s (.svg, or .png when matplotlib is
importable), a panel per op, dtype and shape with its torch copy as a dashed line.
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from typing import Any

from bench_common import (
    H200_SMEM_PER_SM,
    H200_SMS,
    WARMUPS,
    DeviceLimits,
    Fatal,
    PlotGroup,
    conditions,
    describe,
    device_limits,
    fits_per_sm,
    markdown,
    measure,
    plot_path_problem,
    recover,
    write_json,
    write_plot,
)

OPS = ("add", "axpb", "row_sum", "cast")
SHAPE = (16384, 16384)
ODD_SHAPE = (10000, 10008)
ELEMENT_BYTES = {"f32": 4, "bf16": 2, "f16": 2}
AXPB_A, AXPB_B = 1.5, 0.25
"""Exact in f32, bf16 and f16, so that no form of torch rounds the scalars differently."""
ROW_SUM_RTOL = 1e-5
"""A row sum is right when |s - s64| <= ROW_SUM_RTOL * sum(|x|) of its row (s64: in float64)."""

# The persistent sweep, narrowed by RESULTS.md runs 23-24 (two blocks per SM and 6 stages
# never won) and run 36 (one block per tile beat every persistent configuration).
WS_TILES = ((64, 128), (32, 256))
WS_STAGES = (2,)
WS_CONSUMER_WARPS = (8,)
WS_BLOCKS_PER_SM = (1,)
WS_PER_TILE = (
    # (tile, stages, consumer warps, output buffers[, tiles per block]): one block per tile
    # (`tiles_grid`), the launch that streamed fastest in RESULTS.md run 36; small blocks,
    # many per SM.
    ((32, 128), 1, 4, 1),
    ((32, 128), 1, 4, 2),
    ((32, 128), 1, 8, 1),
    ((16, 256), 1, 4, 1),
    ((16, 256), 1, 4, 2),
    ((32, 256), 1, 8, 1),
    ((64, 128), 1, 8, 1),
    ((16, 128), 1, 4, 1),
    # Two tiles a block on a ring of 2, the second tile's load under the first's compute:
    # fewer blocks for the 2-byte types' small tiles.
    ((16, 256), 2, 4, 2, 2),
    ((32, 128), 2, 4, 2, 2),
    ((64, 256), 1, 8, 1),
)
"""Elementwise ops only: `ws_row_sum` deals out row bands, not tiles."""
WS_BAND_COLUMNS = (128, 256)
"""Row sums: tile widths swept with the band height `kernels.balanced_band_rows` gives for
the shape and the GPU's SMs (2 stages, 8 consumer warps, one block per SM): a fixed tile
height leaves the busiest block a whole band more than the average on some shapes (10000
rows in 32-row bands: 96 rows against 76)."""
WS_HINTS = ("loads evict-first", "loads and stores evict-first")
"""L2 policies tried on the sweep's best configuration (where the builder takes cache_hints)."""
WS_DEFAULTS = (
    ((32, 128), 1, 4, 1, "", 1, 1),
    ((32, 256), 2, 8, 1),
    ((64, 128), 4, 8, 1),
    ((64, 128), 2, 8, 1),
)
"""--no-sweep: the first of these that fits the SMEM (and that the op's builder takes)."""
TRITON_ELEMENTWISE = ((1024, 4), (2048, 4), (4096, 4), (4096, 8), (8192, 8))
"""(BLOCK, num_warps) of the Triton elementwise kernels."""
TRITON_ROW_SUM = ((1, 4096, 4), (1, 8192, 8), (4, 1024, 4), (4, 2048, 8))
"""(BLOCK_M, BLOCK_N, num_warps) of the Triton row-sum kernel."""
TRITON_DEFAULT, TRITON_ROW_SUM_DEFAULT = (4096, 4), (1, 4096, 4)
"""--no-sweep: the one Triton configuration."""


# ===----------------------------------------------------------------------=== #
# Cases and rows (plain Python: no GPU)
# ===----------------------------------------------------------------------=== #


@dataclass(frozen=True)
class Case:
    """One operation on one input dtype and shape."""

    op: str
    dtype: str
    out: str
    shape: tuple[int, int]

    @property
    def label(self) -> str:
        return self.dtype if self.out == self.dtype else f"{self.dtype}->{self.out}"

    @property
    def elements(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def nbytes(self) -> int:
        """Bytes read plus bytes written."""
        n, size, out = self.elements, ELEMENT_BYTES[self.dtype], ELEMENT_BYTES[self.out]
        if self.op == "add":
            return n * (2 * size + out)
        if self.op == "row_sum":
            return n * size + self.shape[0] * out
        return n * (size + out)

    @property
    def shape_text(self) -> str:
        return f"{self.shape[0]}x{self.shape[1]}"


def cases(ops: Sequence[str], shapes: Sequence[tuple[int, int]]) -> list[Case]:
    """The run's cases, shape by shape, in the order of OPS."""
    per_op = {
        "add": [("f32", "f32"), ("bf16", "bf16"), ("f16", "f16")],
        "axpb": [("f32", "f32"), ("bf16", "bf16"), ("f16", "f16")],
        "row_sum": [("f32", "f32")],
        "cast": [("f32", "bf16"), ("f32", "f16")],
    }
    return [
        Case(op, dtype, out, tuple(shape))
        for shape in shapes
        for op in OPS
        if op in ops
        for dtype, out in per_op[op]
    ]


@dataclass
class Row:
    case: Case
    kernel: str
    """"torch copy", "torch", "Triton", "copy-dialect ws"."""
    config: str
    seconds: float | None
    correct: str
    ok: bool | None
    note: str = ""
    peer: bool = False
    """A row the copy-dialect kernels are measured against (torch's single-call form, Triton)."""
    sweep: bool = False
    """A row of the sweep table (every configuration) rather than the main table."""

    @property
    def gbps(self) -> float | None:
        if self.seconds is None:
            return None
        nbytes = self.copy_bytes if self.kernel == "torch copy" else self.case.nbytes
        return nbytes / self.seconds / 1e9

    @property
    def copy_bytes(self) -> int:
        return 2 * self.case.elements * ELEMENT_BYTES[self.case.dtype]


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    skipped: dict[Case, list[str]] = field(default_factory=dict)
    """Per case, the ws configurations not run and why (SMEM)."""
    stopped: str = ""
    """Why the run stopped early (a hang or a fault), if it did."""

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        gbps = row.gbps
        shown = "failed" if gbps is None else f"{gbps:.0f} GB/s"
        print(
            f"  {row.case.op} {row.case.label} {row.case.shape_text} {row.kernel} {row.config}: "
            f"{shown} ({row.correct}) {row.note}",
            file=sys.stderr,
            flush=True,
        )
        return row

    def copy_gbps(self, case: Case) -> float | None:
        """The torch copy of x (same dtype, same shape) in this run."""
        for r in self.rows:
            if (
                r.kernel == "torch copy"
                and r.case.dtype == case.dtype
                and r.case.shape == case.shape
                and r.gbps is not None
            ):
                return r.gbps
        return None

    def peer_gbps(self, case: Case) -> float | None:
        """The best of the torch and Triton rows of the case (main table)."""
        speeds = [
            r.gbps for r in self.rows if r.case == case and r.peer and r.ok and r.gbps is not None
        ]
        return max(speeds, default=None)


def _ratio(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.3f}"


HEADERS = (
    "op",
    "dtype",
    "shape",
    "kernel",
    "GB/s",
    "/ torch copy",
    "/ best peer",
    "correct",
    "config, notes",
)


def table_rows(results: Results, sweep: bool) -> list[list[str]]:
    out = []
    for r in results.rows:
        if r.sweep != sweep:
            continue
        gbps = r.gbps
        peer = "" if r.kernel == "torch copy" else _ratio(gbps, results.peer_gbps(r.case))
        notes = ", ".join(p for p in (r.config, r.note) if p)
        out.append(
            [
                r.case.op if r.kernel != "torch copy" else "copy",
                r.case.label if r.kernel != "torch copy" else r.case.dtype,
                r.case.shape_text,
                r.kernel,
                "-" if gbps is None else f"{gbps:.0f}",
                _ratio(gbps, results.copy_gbps(r.case)),
                peer,
                r.correct,
                notes,
            ]
        )
    return out


METHOD = (
    "Method: each row launches once and is checked against torch's result (the output filled "
    "with NaN before), then {warmups} warm-ups and the median of {reps} launches timed with CUDA "
    "events on the default stream (a row slower than 0.5 s for {reps} launches takes fewer, "
    "named). GB/s = (bytes read + bytes written) / time: add 3 n s, axpb 2 n s, cast n (4 + 2), "
    "row sums 4 n + 4 M (n elements, s bytes each, M rows). / torch copy: against y.copy_(x) of "
    "the same x (its dtype and shape) in this run. / best peer: against the faster of the torch "
    "single-call row and the best Triton row of the same op, dtype and shape.\n"
    "Data: torch.randn (seed 0) rounded to the dtype; axpb: x uniform in [0, 8), a = {a}, b = {b} "
    "(exact in every dtype; all terms positive, so a fused and an unfused a*x+b differ by at most "
    "1 ulp). Correct: add and cast bit-exact (count of differing elements), axpb at most 1 ulp "
    "from torch's result (torch's rows: from the float64 result rounded once), row sums "
    "|s - s64| <= {rtol:g} * sum|x| per row (s64 in float64).\n"
    "torch forms: add torch.add(x, y, out=z); axpb the fastest of torch.add(b, x, alpha=a, out=y) "
    "(b a 0-dim CPU tensor) and torch.addcmul(b, x, a, out=y) (a, b 0-dim GPU tensors), the "
    "two-kernel torch.mul + add_ shown for reference only; cast y.copy_(x); row sums "
    "torch.sum(x, dim=1, out=s). Triton: masked 1-D loads/stores over the flat array computing "
    "in f32 (row sums: BLOCK_M rows per program, a BLOCK_N-wide f32 accumulator), the best of the "
    "configurations in the sweep table. copy-dialect ws: kernels.ws_elementwise on "
    "tiles_grid (one block per tile) and on ws_grid(SMs, blocks per SM) (persistent), every "
    "configuration that fits the SMEM in the sweep table (blocks per SM 2 only where two "
    "blocks' SMEM fits one SM), then the best of them again "
    "with evict-first L2 policies (loads; loads and stores). The odd shape runs the large "
    "shape's best Triton and ws configurations{odd}."
)


def render(
    results: Results,
    conditions_: dict[str, Any],
    reps: int,
    warmups: int,
    sweep_odd: bool = False,
) -> str:
    """The report: conditions, method, main table, sweep table, what was skipped."""
    odd = " (with --sweep-odd: its own sweeps instead)" if sweep_odd else ""
    parts = [
        describe(conditions_),
        "",
        METHOD.format(reps=reps, warmups=warmups, a=AXPB_A, b=AXPB_B, rtol=ROW_SUM_RTOL, odd=odd),
        "",
    ]
    if results.stopped:
        parts += [f"**The run stopped early: {results.stopped}**", ""]
    parts += [markdown(HEADERS, table_rows(results, sweep=False)), ""]
    sweep = table_rows(results, sweep=True)
    if sweep:
        parts += ["Sweep (every configuration run):", "", markdown(HEADERS, sweep), ""]
    for case, why in results.skipped.items():
        if why:
            parts.append(
                f"- {case.op} {case.label} {case.shape_text}: {len(why)} ws configurations not "
                f"run: {'; '.join(why)}"
            )
    return "\n".join(parts).rstrip() + "\n"


def plot_groups(results: Results) -> list[PlotGroup]:
    """The plot's panels: per case, the main table's kernels (config in the label) against the
    torch copy of the same dtype and shape."""
    groups: dict[Case, list[tuple[str, float | None]]] = {}
    for r in results.rows:
        if r.sweep or r.kernel == "torch copy":
            continue
        label = f"{r.kernel} ({r.config})" if r.config else r.kernel
        groups.setdefault(r.case, []).append((label, r.gbps))
    return [
        PlotGroup(f"{c.op} {c.label} {c.shape_text}", bars, results.copy_gbps(c))
        for c, bars in groups.items()
    ]


def json_rows(results: Results) -> list[dict[str, Any]]:
    out = []
    for r in results.rows:
        row = asdict(r)
        row["case"] = {**asdict(r.case), "shape": list(r.case.shape)}
        row["gbps"] = r.gbps
        row["bytes"] = r.copy_bytes if r.kernel == "torch copy" else r.case.nbytes
        row["ratio_torch_copy"] = None
        row["ratio_best_peer"] = None
        copy, peer = results.copy_gbps(r.case), results.peer_gbps(r.case)
        if r.gbps is not None and copy:
            row["ratio_torch_copy"] = r.gbps / copy
        if r.gbps is not None and peer and r.kernel != "torch copy":
            row["ratio_best_peer"] = r.gbps / peer
        out.append(row)
    return out


def skipped_json(results: Results) -> dict[str, list[str]]:
    return {f"{c.op} {c.label} {c.shape_text}": why for c, why in results.skipped.items() if why}


# ===----------------------------------------------------------------------=== #
# copy-dialect configurations
# ===----------------------------------------------------------------------=== #


@dataclass(frozen=True)
class WsConfig:
    tile: tuple[int, int]
    stages: int
    consumer_warps: int
    blocks_per_sm: int
    hints: str = ""
    """"" (the default policy) or one of WS_HINTS."""
    per_block: int = 0
    """Tiles per block on `kernels.tiles_grid`; 0: persistent, `blocks_per_sm` per SM."""
    out_buffers: int = 2
    """ws_elementwise's output buffers."""
    flat: bool = False
    """Elementwise ops on contiguous arrays: the kernel sees them as rows exactly one tile
    wide (`flat_shape`), as torch and the Triton kernels see them as one run of elements,
    so no tile is cut at the right edge."""

    def shape(self, shape: tuple[int, int]) -> tuple[int, int]:
        """The shape the kernel is built and launched for."""
        return flat_shape(shape, self.tile[1]) if self.flat else shape

    @property
    def text(self) -> str:
        grid = (
            f"{self.blocks_per_sm}/SM"
            if not self.per_block
            else f"{self.per_block} tile{'s' if self.per_block > 1 else ''}/block"
        )
        text = (
            f"{self.tile[0]}x{self.tile[1]}, {self.stages} stages, {self.consumer_warps} consumer "
            f"warps, {grid}"
        )
        if self.out_buffers != 2:
            text += f", {self.out_buffers} out buffer{'s' if self.out_buffers > 1 else ''}"
        if self.flat:
            text += f", flattened to rows of {self.tile[1]}"
        return f"{text}, {self.hints}" if self.hints else text

    def grid(self, shape: tuple[int, int], sms: int) -> tuple[int, int]:
        from frontends import kernels

        if self.per_block:
            return kernels.tiles_grid(self.shape(shape), self.tile, self.per_block)
        return kernels.ws_grid(sms, self.blocks_per_sm)

    def cache_hints(self) -> tuple[str | None, str | None]:
        from frontends import kernels

        first = kernels.EVICT_FIRST
        return {
            "": (None, None),
            "loads evict-first": (first, None),
            "loads and stores evict-first": (first, first),
        }[self.hints]


def ws_configs(
    sweep: bool, op: str = "add", shape: tuple[int, int] | None = None, sms: int = H200_SMS
) -> list[WsConfig]:
    """The configurations of `op`'s ws rows: one block per tile first (elementwise ops), then
    persistent ones; for row sums over `shape`, also bands balanced over `sms` SMs."""
    per_tile = op != "row_sum"
    if not sweep:
        return [WsConfig(*c) for c in WS_DEFAULTS if per_tile or len(c) < 6]
    tiled = [
        WsConfig(tile, stages, warps, 1, per_block=(rest or (1,))[0], out_buffers=buffers)
        for tile, stages, warps, buffers, *rest in (WS_PER_TILE if per_tile else ())
    ]
    persistent = [
        WsConfig(tile, stages, warps, per_sm)
        for tile in WS_TILES
        for stages in WS_STAGES
        for warps in WS_CONSUMER_WARPS
        for per_sm in WS_BLOCKS_PER_SM
    ]
    bands = band_configs(shape, sms, persistent) if shape and not per_tile else []
    flat = [replace(c, flat=True) for c in tiled if shape and flattens(shape, c.tile[1])]
    return tiled + flat + persistent + bands


def flattens(shape: tuple[int, int], cols: int) -> bool:
    """Whether rows of `cols` elements hold `shape`'s elements exactly, with fewer cut tiles
    than its own rows (whose width `cols` does not divide)."""
    return shape[1] % cols != 0 and (shape[0] * shape[1]) % cols == 0


def flat_shape(shape: tuple[int, int], cols: int) -> tuple[int, int]:
    """`shape`'s elements as rows of `cols` (`flattens`)."""
    return (shape[0] * shape[1] // cols, cols)


def band_configs(shape: tuple[int, int], sms: int, swept: Sequence[WsConfig]) -> list[WsConfig]:
    """Row-sum tiles as tall as `kernels.balanced_band_rows` for `shape` on `sms` SMs, those
    not swept already."""
    from frontends import kernels

    rows = kernels.balanced_band_rows(shape[0], sms)
    bands = [WsConfig((rows, n), 2, 8, 1) for n in WS_BAND_COLUMNS]
    return [c for c in bands if c not in swept]


def rebanded(
    config: WsConfig, first: tuple[int, int], shape: tuple[int, int], sms: int
) -> WsConfig:
    """`config`, a row-sum configuration of the first shape, for `shape`: a band height that
    `kernels.balanced_band_rows` gave for the first shape's rows becomes the one it gives for
    `shape`'s (125 rows for 16384 on 132 SMs would leave 10000 rows 80 bands: 52 SMs idle);
    any other height is kept."""
    from frontends import kernels

    if config.tile[0] != kernels.balanced_band_rows(first[0], sms):
        return config
    return replace(config, tile=(kernels.balanced_band_rows(shape[0], sms), config.tile[1]))


def ws_builder(op: str) -> Callable[..., Any] | None:
    """The copy-dialect builder of `op`, None where this build has none."""
    from frontends import kernels

    if op == "row_sum":
        return getattr(kernels, "ws_row_sum", None)
    return getattr(kernels, "ws_elementwise", None)


def build_ws(case: Case, config: WsConfig) -> Any:
    """The case's ws module for `config` (raises the builder's or the verifier's error)."""
    builder = ws_builder(case.op)
    if builder is None:
        raise LookupError(f"frontends.kernels has no builder for {case.op}")
    kwargs: dict[str, Any] = {"stages": config.stages, "consumer_warps": config.consumer_warps}
    if config.out_buffers != 2:
        kwargs["out_buffers"] = config.out_buffers
    if config.hints:
        kwargs["cache_hints"] = config.cache_hints()
    if case.op == "row_sum":
        taken = inspect.signature(builder).parameters
        kwargs = {k: v for k, v in kwargs.items() if k in taken}
        return builder(case.shape, case.dtype, config.tile, **kwargs)
    if case.op == "cast":
        kwargs["out_dtype"] = case.out
    return builder(case.op, config.shape(case.shape), case.dtype, config.tile, **kwargs)


def takes_cache_hints(op: str) -> bool:
    builder = ws_builder(op)
    return builder is not None and "cache_hints" in inspect.signature(builder).parameters


def smem_error(exc: Exception) -> bool:
    """Whether a builder's error says the configuration does not fit the SMEM (TR6)."""
    rules = getattr(exc, "rules", ()) or ()
    return "TR6" in rules or "SMEM" in str(exc)


def compiled_ws(case: Case, config: WsConfig, smem_per_sm: int) -> tuple[Any, str]:
    """(program, "") for a configuration that fits, (None, why) for one that does not; any
    other error propagates."""
    from copy_tools import runtime

    try:
        module = build_ws(case, config)
    except Exception as exc:
        if not smem_error(exc):
            raise
        return None, f"{config.text}: over the block's SMEM"
    program = runtime.compile(module)
    smem = program.kernel().abi.smem_bytes
    if not config.per_block and not fits_per_sm(smem, config.blocks_per_sm, smem_per_sm):
        return None, f"{config.text}: {config.blocks_per_sm} blocks of {smem} B SMEM per SM"
    return program, ""


def compile_only(results_cases: Sequence[Case], sweep: bool) -> int:
    """Builds and compiles every ws configuration of the cases (no GPU): prints what fits."""
    failures = 0
    for case in results_cases:
        if ws_builder(case.op) is None:
            print(f"{case.op} {case.label} {case.shape_text}: no builder in this build")
            continue
        ran, skipped = [], []
        for config in ws_configs(sweep, case.op, case.shape):
            try:
                program, why = compiled_ws(case, config, H200_SMEM_PER_SM)
            except Exception as exc:
                failures += 1
                print(f"{case.op} {case.label} {case.shape_text} {config.text}: ERROR {exc}")
                continue
            if program is None:
                skipped.append(why)
            else:
                ran.append(f"{config.text} ({program.kernel().abi.smem_bytes} B)")
        print(
            f"{case.op} {case.label} {case.shape_text}: {len(ran)} configurations compile and "
            f"fit, {len(skipped)} do not fit"
        )
        for line in ran:
            print(f"  {line}")
    return 1 if failures else 0


# ===----------------------------------------------------------------------=== #
# The GPU part
# ===----------------------------------------------------------------------=== #


TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
DEVICE = "cuda"
"""Where the arrays live (a test may run the torch part on the CPU)."""


def torch_dtype(name: str) -> Any:
    import torch

    return getattr(torch, TORCH_DTYPES[name])


@cache
def triton_kernels() -> Any:
    """The Triton kernels (built once; an ImportError when Triton is missing)."""
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
        tl.store(z_ptr + offs, (x + y).to(z_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def axpb(x_ptr, y_ptr, a, b, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(y_ptr + offs, (x * a + b).to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def cast(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(
            y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(y_ptr.dtype.element_ty), mask=mask
        )

    @triton.jit
    def row_sum(x_ptr, s_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = (rows[:, None] < M) & (cols[None, :] < N)
            acc += tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
        tl.store(s_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)

    return {"add": add, "axpb": axpb, "cast": cast, "row_sum": row_sum, "cdiv": triton.cdiv}


@dataclass
class Arrays:
    """A case's inputs, its output, torch's reference result and the check against it."""

    case: Case
    inputs: list[Any]
    out: Any
    expected: Any = None
    exact: Any = None
    """axpb: the float64 result rounded once (what torch's own rows are checked against)."""

    def kernel_args(self) -> list[Any]:
        """The arguments of the case's kernels: inputs, output, then the scalars."""
        scalars = [AXPB_A, AXPB_B] if self.case.op == "axpb" else []
        return [*self.inputs, self.out, *scalars]

    def reset(self) -> None:
        self.out.fill_(float("nan"))

    def check(self, reference: Any = None) -> tuple[str, bool]:
        """The output against `reference` (default: torch's result)."""
        import torch

        want = self.expected if reference is None else reference
        got = self.out
        if self.case.op == "row_sum":
            x = self.inputs[0]
            err = (got.double() - want).abs()
            scale = x.abs().double().sum(dim=1)
            rel = float((err / scale.clamp_min(1e-300)).max())
            ok = bool((err <= ROW_SUM_RTOL * scale).all())
            return f"{'yes' if ok else 'NO'} (rel err {rel:.1e})", ok
        if self.case.op == "axpb":
            worst = ulp_distance(got, want)
            ok = worst <= 1
            return f"{'yes' if ok else 'NO'} (max {worst} ulp)", ok
        wrong = int((got != want).sum())
        if wrong == 0 and torch.equal(got, want):
            return "yes (bit-exact)", True
        return f"NO ({wrong} of {got.numel()} elements differ)", False


def ulp_distance(a: Any, b: Any, chunk: int = 1 << 26) -> int:
    """The largest distance in units in the last place between two float tensors of one dtype
    (f32, bf16, f16), in chunks; NaN is far from every number, -0 and +0 are 0 apart."""
    import torch

    bits, mask = (torch.int32, 0x7FFFFFFF) if a.element_size() == 4 else (torch.int16, 0x7FFF)

    def ordered(t: Any) -> Any:
        """The float's place on the number line (sign and magnitude to two's complement)."""
        i = t.view(bits).to(torch.int64)
        magnitude = i & mask
        return torch.where(i < 0, -magnitude, magnitude)

    fa, fb = a.reshape(-1), b.reshape(-1)
    worst = 0
    for start in range(0, fa.numel(), chunk):
        part = slice(start, start + chunk)
        worst = max(worst, int((ordered(fa[part]) - ordered(fb[part])).abs().max()))
    return worst


def make_arrays(case: Case) -> Arrays:
    import torch

    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(0)
    dtype, out_dtype = torch_dtype(case.dtype), torch_dtype(case.out)
    shape = case.shape

    def randn() -> Any:
        return torch.randn(shape, device=DEVICE, generator=gen).to(dtype)

    if case.op == "add":
        inputs = [randn(), randn()]
    elif case.op == "axpb":
        inputs = [(torch.rand(shape, device=DEVICE, generator=gen) * 8).to(dtype)]
    else:
        inputs = [randn()]
    out_shape = (shape[0],) if case.op == "row_sum" else shape
    arrays = Arrays(case, inputs, torch.empty(out_shape, device=DEVICE, dtype=out_dtype))
    x = inputs[0]
    if case.op == "add":
        arrays.expected = torch.add(x, inputs[1])
    elif case.op == "axpb":
        arrays.exact = x.double().mul_(AXPB_A).add_(AXPB_B).to(dtype)
    elif case.op == "row_sum":
        arrays.expected = x.double().sum(dim=1)
    else:
        arrays.expected = x.to(out_dtype)
    return arrays


def run_row(
    results: Results,
    case: Case,
    kernel: str,
    config: str,
    fn: Callable[[], object],
    check: Callable[[], tuple[str, bool]],
    reset: Callable[[], object],
    opts: argparse.Namespace,
    *,
    peer: bool = False,
    sweep: bool = False,
    note: str = "",
) -> Row:
    """Resets the output, launches `fn` once under the hang guard, checks what it wrote, times
    it (the timed launches rewrite the same values)."""
    reset()
    what = f"{kernel} ({config}) on {case.op} {case.label} {case.shape_text}"
    try:
        seconds, used = measure(fn, what, opts.reps, timeout_s=opts.hang_timeout)
    except Fatal:
        raise
    except Exception as exc:  # a row that cannot run is reported, not fatal
        recover(what)
        return results.add(
            Row(
                case,
                kernel,
                config,
                None,
                f"error: {type(exc).__name__}",
                False,
                _short(exc),
                peer,
                sweep,
            )
        )
    correct, ok = check()
    if used < opts.reps:
        note = ", ".join(p for p in (note, f"{used} reps") if p)
    return results.add(Row(case, kernel, config, seconds, correct, ok, note, peer, sweep))


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__


def torch_rows(results: Results, arrays: Arrays, opts: argparse.Namespace) -> None:
    """The torch copy of x (once per dtype and shape) and torch's forms of the case; the
    fastest single-call form is the peer, and (axpb) the reference of the other rows."""
    import torch

    case = arrays.case
    x, out = arrays.inputs[0], arrays.out
    if results.copy_gbps(case) is None:
        tmp = torch.empty_like(x)
        run_row(
            results,
            case,
            "torch copy",
            "y.copy_(x)",
            lambda: tmp.copy_(x),
            lambda: ("yes (bit-exact)", True) if torch.equal(tmp, x) else ("NO", False),
            lambda: tmp.fill_(float("nan")),
            opts,
        )
        del tmp
    forms: list[tuple[str, Callable[[], object], bool]]
    if case.op == "add":
        y = arrays.inputs[1]
        forms = [("torch.add(x, y, out=z)", lambda: torch.add(x, y, out=out), True)]
    elif case.op == "axpb":
        b_cpu = torch.tensor(AXPB_B, dtype=torch.float32)
        a_gpu = torch.tensor(AXPB_A, dtype=torch.float32, device=DEVICE)
        b_gpu = torch.tensor(AXPB_B, dtype=torch.float32, device=DEVICE)
        forms = [
            (
                "torch.add(b, x, alpha=a, out=y)",
                lambda: torch.add(b_cpu, x, alpha=AXPB_A, out=out),
                True,
            ),
            (
                "torch.addcmul(b, x, a, out=y)",
                lambda: torch.addcmul(b_gpu, x, a_gpu, out=out),
                True,
            ),
            (
                "torch.mul(x, a, out=y).add_(b)",
                lambda: torch.mul(x, AXPB_A, out=out).add_(AXPB_B),
                False,
            ),
        ]
    elif case.op == "row_sum":
        forms = [("torch.sum(x, dim=1, out=s)", lambda: torch.sum(x, dim=1, out=out), True)]
    else:
        forms = [("y.copy_(x)", lambda: out.copy_(x), True)]
    # axpb: torch's own rows are checked against the float64 result rounded once.
    reference = arrays.exact if case.op == "axpb" else None
    best: Row | None = None
    best_out = None
    for name, fn, single in forms:
        row = run_row(
            results,
            case,
            "torch",
            name,
            fn,
            lambda: arrays.check(reference),
            arrays.reset,
            opts,
            peer=single,
            note="" if single else "2 kernels: not a peer",
        )
        if single and faster(row, best):
            best = row
            best_out = out.clone() if case.op == "axpb" else None
    if sum(single for _, _, single in forms) > 1 and best is not None:
        # Only the fastest single-call form is the peer; the others stay for reference.
        for r in results.rows:
            if r.case == case and r.kernel == "torch" and r is not best:
                r.peer = False
        best.note = ", ".join(p for p in (best.note, "the fastest single call: the peer") if p)
    if case.op == "axpb":
        arrays.expected = best_out if best_out is not None else arrays.exact


def faster(row: Row, than: Row | None) -> bool:
    """Whether `row` is correct, timed and faster than `than` (None: any)."""
    if not row.ok or row.gbps is None:
        return False
    return than is None or than.gbps is None or row.gbps > than.gbps


def triton_rows(
    results: Results,
    arrays: Arrays,
    opts: argparse.Namespace,
    configs: Sequence[tuple[int, ...]],
    sweep: bool,
    note: str = "",
) -> tuple[int, ...] | None:
    """The Triton kernel of the case in each configuration (sweep rows, then the best in the
    main table; without `sweep`, the one row in the main table); returns the best configuration."""
    case = arrays.case
    try:
        k = triton_kernels()
    except Exception as exc:
        results.add(Row(case, "Triton", "", None, "not run", None, f"Triton: {_short(exc)}"))
        return None
    args = arrays.kernel_args()
    n = case.elements
    best: tuple[int, ...] | None = None
    best_row: Row | None = None
    for config in configs:
        if case.op == "row_sum":
            bm, bn, warps = config
            text = f"BLOCK_M {bm}, BLOCK_N {bn}, {warps} warps"
            grid = (k["cdiv"](case.shape[0], bm),)

            def fn(grid=grid, bm=bm, bn=bn, warps=warps) -> None:
                k["row_sum"][grid](*args, *case.shape, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps)
        else:
            block, warps = config
            text = f"BLOCK {block}, {warps} warps"
            grid = (k["cdiv"](n, block),)

            def fn(grid=grid, block=block, warps=warps) -> None:
                k[case.op][grid](*args, n, BLOCK=block, num_warps=warps)

        row = run_row(
            results,
            case,
            "Triton",
            text,
            fn,
            arrays.check,
            arrays.reset,
            opts,
            peer=not sweep,
            sweep=sweep,
            note=note,
        )
        if faster(row, best_row):
            best, best_row = config, row
    if sweep:
        if best_row is None:
            results.add(Row(case, "Triton", "", None, "no configuration ran", False))
        else:
            results.add(
                Row(
                    case,
                    "Triton",
                    best_row.config,
                    best_row.seconds,
                    best_row.correct,
                    True,
                    "best of the sweep",
                    peer=True,
                )
            )
    return best


def ws_rows(
    results: Results,
    arrays: Arrays,
    opts: argparse.Namespace,
    configs: Sequence[WsConfig],
    sweep: bool,
    limits: DeviceLimits,
    note: str = "",
) -> WsConfig | None:
    """The copy-dialect ws kernel of the case in each configuration that fits (sweep rows,
    then the best in the main table; without `sweep`, the first that runs, in the main
    table); returns the best configuration."""
    case = arrays.case
    if ws_builder(case.op) is None:
        what = "kernels.ws_row_sum" if case.op == "row_sum" else "kernels.ws_elementwise"
        results.add(
            Row(case, "copy-dialect ws", "", None, "not run", None, f"{what} is not in this build")
        )
        return None
    skipped = results.skipped.setdefault(case, [])
    best: WsConfig | None = None
    best_row: Row | None = None
    queue = list(configs)
    hinted = not sweep or not takes_cache_hints(case.op)
    while queue or not hinted:
        if not queue:
            # The sweep's best configuration again under each L2 policy.
            hinted = True
            queue = [] if best is None else [replace(best, hints=h) for h in WS_HINTS]
            continue
        config = queue.pop(0)
        args = arrays.kernel_args()
        try:
            program, why = compiled_ws(case, config, limits.smem_per_sm)
            if program is None:
                skipped.append(why)
                continue
            kernel = program.kernel()
            if case.op == "row_sum":  # the output as the kernel's ABI shapes it
                shape = tuple(kernel.arguments[1].shape)
                if shape != (case.shape[0],) and math.prod(shape) == case.shape[0]:
                    args[1] = arrays.out.view(shape)
            elif config.flat:  # the same contiguous arrays, as rows of one tile's width
                flat = config.shape(case.shape)
                args = [a.view(flat) if hasattr(a, "view") else a for a in args]
            launch = kernel.prepare(*args, grid=config.grid(case.shape, limits.sms))
        except Exception as exc:
            results.add(
                Row(
                    case,
                    "copy-dialect ws",
                    config.text,
                    None,
                    f"error: {type(exc).__name__}",
                    False,
                    _short(exc),
                    sweep=sweep,
                )
            )
            continue
        row = run_row(
            results,
            case,
            "copy-dialect ws",
            config.text,
            launch,
            arrays.check,
            arrays.reset,
            opts,
            sweep=sweep,
            note=note,
        )
        launch.release()
        if faster(row, best_row):
            best, best_row = config, row
        if not sweep and row.ok:
            break  # --no-sweep (and the odd shape): the first configuration that runs
    if sweep:
        if best_row is None:
            results.add(Row(case, "copy-dialect ws", "", None, "no configuration ran", False))
        else:
            results.add(
                Row(
                    case,
                    "copy-dialect ws",
                    best_row.config,
                    best_row.seconds,
                    best_row.correct,
                    True,
                    "best of the sweep",
                )
            )
    return best


def run_case(
    results: Results,
    case: Case,
    opts: argparse.Namespace,
    limits: DeviceLimits,
    best_configs: dict[tuple[str, str, str], tuple[Any, Any, tuple[int, int]]],
) -> None:
    """One case: torch rows, Triton, copy-dialect ws. The first shape of an op and dtype runs
    the sweeps and records their best configurations in `best_configs`; a later shape (the odd
    one) runs those only. A row-sum band as tall as `kernels.balanced_band_rows` gives for the
    first shape's rows is as tall as it gives for the later shape's: the height is the
    shape's, the rest of the configuration is carried."""
    import torch

    arrays = make_arrays(case)
    key = (case.op, case.dtype, case.out)
    torch_rows(results, arrays, opts)
    later = key in best_configs and not opts.sweep_odd
    sweep = opts.sweep and not later
    note = "the first shape's best configuration" if later and opts.sweep else ""
    if later:
        triton_best, ws_best, first_shape = best_configs[key]
        if case.op == "row_sum" and ws_best is not None:
            ws_best = rebanded(ws_best, first_shape, case.shape, limits.sms)
        triton_configs = [] if triton_best is None else [triton_best]
        ws_list = [] if ws_best is None else [ws_best]
    else:
        triton_configs = (
            list(TRITON_ROW_SUM if case.op == "row_sum" else TRITON_ELEMENTWISE)
            if opts.sweep
            else [TRITON_ROW_SUM_DEFAULT if case.op == "row_sum" else TRITON_DEFAULT]
        )
        ws_list = ws_configs(opts.sweep, case.op, case.shape, limits.sms)
    triton_best = ws_best = None
    if triton_configs and not opts.skip_triton:
        triton_best = triton_rows(results, arrays, opts, triton_configs, sweep, note)
    elif not opts.skip_triton:
        results.add(Row(case, "Triton", "", None, "not run", None, "no configuration ran before"))
    if ws_list:
        ws_best = ws_rows(results, arrays, opts, ws_list, sweep, limits, note)
    elif ws_builder(case.op) is not None:
        results.add(
            Row(case, "copy-dialect ws", "", None, "not run", None, "no configuration ran before")
        )
    else:
        ws_rows(results, arrays, opts, [], sweep, limits)  # the row that says why
    best_configs.setdefault(key, (triton_best, ws_best, case.shape))  # the first shape's
    del arrays
    torch.cuda.empty_cache()


def shape_arg(text: str) -> tuple[int, int]:
    """`MxN`, rows of whole 16-byte chunks in every dtype (TMA's row-stride rule)."""
    try:
        m, n = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a shape MxN (e.g. 16384x16384), got {text!r}"
        ) from None
    if m < 1 or n < 1:
        raise argparse.ArgumentTypeError(f"expected positive extents, got {text!r}")
    if n % 8:
        raise argparse.ArgumentTypeError(
            f"expected an inner extent that is a multiple of 8 (rows of 16-byte chunks in 16-bit "
            f"types, as TMA needs), got {n}; use {n + 8 - n % 8}"
        )
    return m, n


def ops_arg(text: str) -> tuple[str, ...]:
    ops = tuple(o.strip() for o in text.split(",") if o.strip())
    unknown = [o for o in ops if o not in OPS]
    if unknown or not ops:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated list of {', '.join(OPS)}, got {text!r}"
        )
    return ops


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="timed launches per row")
    parser.add_argument("--ops", type=ops_arg, default=OPS, help="e.g. add,cast (default: all)")
    parser.add_argument("--shape", type=shape_arg, default=SHAPE, help="the large shape, MxN")
    parser.add_argument("--odd-shape", type=shape_arg, default=ODD_SHAPE, help="the tail shape")
    parser.add_argument("--no-odd", action="store_true", help="the large shape only")
    parser.add_argument(
        "--sweep-odd",
        action="store_true",
        help="sweep the odd shape too (default: it runs the large shape's best configurations)",
    )
    parser.add_argument(
        "--no-sweep",
        dest="sweep",
        action="store_false",
        help="one Triton and one ws configuration per case, not the sweeps",
    )
    parser.add_argument("--skip-triton", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write every row as JSON")
    parser.add_argument(
        "--plot", metavar="PATH", help="also write a bandwidth bar chart (.svg, or .png)"
    )
    parser.add_argument(
        "--hang-timeout",
        type=float,
        default=10.0,
        help="seconds a first launch may take before the run stops as hung",
    )
    parser.add_argument(
        "--compile-only",
        action="store_true",
        help="build and compile every ws configuration (no GPU) and print what fits",
    )
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"expected --reps of at least 1, got {args.reps}")
    if args.plot and (problem := plot_path_problem(args.plot)):
        parser.error(f"--plot: {problem}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    shapes = [opts.shape] if opts.no_odd else [opts.shape, opts.odd_shape]
    if opts.compile_only:
        # The odd shape runs configurations of the large one's sweep: compiling the sweep on
        # both shapes covers them.
        return compile_only(cases(opts.ops, shapes), opts.sweep)

    import torch

    torch.empty(1, device=DEVICE)  # torch's context first: the runtime shares it
    limits = device_limits()
    found = conditions(limits)  # the clocks before the run
    results = Results()
    best_configs: dict[tuple[str, str, str], tuple[Any, Any, tuple[int, int]]] = {}
    started = time.perf_counter()
    try:
        for case in cases(opts.ops, shapes):
            run_case(results, case, opts, limits, best_configs)
    except Fatal as exc:
        results.stopped = f"{exc}; the process exits so that the GPU is released"
    elapsed = time.perf_counter() - started
    found.update(elapsed_s=round(elapsed, 1), reps=opts.reps, warmups=WARMUPS)
    print(render(results, found, opts.reps, WARMUPS, opts.sweep_odd))
    print(f"(the run took {elapsed:.0f} s)")
    if opts.json:
        write_json(opts.json, found, json_rows(results), skipped_json(results))
    if opts.plot:
        write_plot(
            opts.plot, "bench_compute: elementwise and reduction bandwidth", plot_groups(results)
        )
    sys.stdout.flush()
    sys.stderr.flush()
    if results.stopped:
        os._exit(3)  # a hung kernel would block a normal exit
    return 0 if all(r.ok is not False for r in results.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
