"""Multicast that pays off: kernels whose C CTAs of a cluster need the same tile of x, with and
without multicast.

    python3 benchmarks/bench_multicast.py --ncu [--workload copy|row_dot|both]

One run (well under 3 minutes on the H200, the profiled pass of `--ncu` included) prints a
markdown table per workload with its conditions. x is 1 GiB of float32 (16384 x 16384),
twenty times the H200's 50 MB L2; clusters of C = 2 and 4, 64x256 tiles, one tile per
block. The two workloads:

- `copy` (`kernels.broadcast_copy`): y[r] = x, y of (C, 16384, 16384); its C stores of each
  tile are most of its DRAM traffic;
- `row_dot` (`kernels.broadcast_row_dot`): C matrix-vector products sharing x, y[r, t, i] =
  the dot of x's row i with v[r] over tile column t (a parallel split-K: y.sum(1) is
  (x @ v.T).T); it writes 1/64 of what it reads per rank, so its time is the loads': what
  L2 must serve for the unicast kernels is C times x, for multicast x once. Its peer is
  torch's `x @ v.T` (cuBLAS), which reads x once.

For each workload and C:

- multicast: the C CTAs of a cluster need the same tile of x; each loads 1/C of its rows
  with .multicast::cluster, so every CTA receives the whole tile, and each stores it to y[r];
- unicast twin: the same kernel, cluster and grid, each CTA loading the whole tile itself.
  Its C loads of a tile are issued together (the cluster starts together), so L2 may serve
  all but the first: the DRAM bytes show whether it does;
- unicast, rank-major order: the same grid, the rank the slowest index of the launch, so the
  CTAs that need a tile are a whole x (1 GiB) apart and L2 cannot keep it between them;
- for `copy`: torch `y.copy_(x.expand(C, M, N))` (the same operation) and torch's plain copy
  of the same bytes (`dst.copy_(src)`, src and dst of (1 + C)/2 x's size each); for
  `row_dot`: torch `x @ v.T`.

Time: median of `--reps` launches after 3 warm-ups (CUDA events). GB/s: for `copy`, x read
once plus y written, (1 + C) GiB, for every row, each kernel's y checked bit for bit
against x; for `row_dot`, x read once (1 GiB) for every row, each kernel's y checked
against float64 sums on 1024 of its rows (within the bound `broadcast_row_dot` documents)
and for no unwritten (NaN) entry anywhere.
`--ncu`: the script runs itself again under Nsight Compute (`ncu --metrics
dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_op_read.sum`,
caches flushed before each kernel, clocks not locked), one profiled launch per row between
cudaProfilerStart/Stop, each followed by a small marker kernel that separates the rows (torch
may split a copy into several kernels: a row sums its kernels), and adds the DRAM bytes read
and written, their ratio multicast / this row, the bytes read from L2 (what L2 serves the
twin shows there) and ncu's kernel time. Without ncu, or without the permission to
read the GPU's counters, the line under the table says so and those columns stay empty.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from bench_common import timed

M, N = 16384, 16384
TILE = (64, 256)
CLUSTERS = (2, 4)
X_BYTES = M * N * 4
WORKLOADS = ("copy", "row_dot")
TILE_COLUMNS = -(-N // TILE[1])
PEERS = {
    "copy": (("torch expand", "torch_expand"), ("torch copy", "torch_copy")),
    "row_dot": (("torch x @ v.T", "torch_mm"),),
}
"""Per workload, the peer rows each row's time is compared with (header, kind)."""


def use_tile(tile: tuple[int, int]) -> None:
    """The copy-dialect kernels' tile for this run (`--tile`)."""
    global TILE, TILE_COLUMNS
    TILE, TILE_COLUMNS = tile, -(-N // tile[1])


METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum")
"""What the table needs from ncu."""
L2_READ = "lts__t_sectors_op_read.sum"
"""Also asked for (L2 sectors read, by every unit): where L2, not DRAM, serves the twin's
extra loads, it shows here. Should this ncu not know it, the pass is run without it."""
MARKER = "ncu_marker"
"""The name of the kernel launched after each profiled row (it closes the row)."""


def ncu_options(metrics: tuple[str, ...]) -> list[str]:
    return [
        "--csv",
        "--page",
        "raw",
        "--profile-from-start",
        "off",
        "--target-processes",
        "application-only",
        "--cache-control",
        "all",
        "--clock-control",
        "none",
        "--metrics",
        ",".join(metrics),
    ]


@dataclass
class Row:
    cluster: int
    name: str
    kind: str
    """"multicast", "unicast", "rank_major", or a peer's kind of `PEERS`."""
    launch: Callable[[], object]
    check: Callable[[], bool] | None
    note: str = ""
    seconds: float | None = None
    correct: str = ""
    ncu: dict[str, float] | None = None
    ncu_kernels: int = 0
    """Kernels ncu profiled for the row (torch may split one copy into several)."""
    profiled: bool = False
    """Whether the ncu pass launched the row."""
    error: str = ""
    workload: str = "copy"

    @property
    def label(self) -> tuple[str, int, str]:
        return (self.workload, self.cluster, self.kind)


def moved_bytes(workload: str, c: int) -> int:
    """What a row's GB/s counts: x read once plus y written (`copy`), x read once
    (`row_dot`)."""
    return (1 + c) * X_BYTES if workload == "copy" else X_BYTES


VARIANTS = [
    ("multicast", "multicast", {"multicast": True}, "each CTA loads 1/C of the tile"),
    ("unicast twin", "unicast", {"multicast": False}, "same cluster and grid"),
    (
        "unicast, rank-major order",
        "rank_major",
        {"multicast": False, "order": "rank_major"},
        "the CTAs of a tile 1 GiB apart in launch order",
    ),
]


def build_rows(arrays: dict, workloads: tuple[str, ...] = WORKLOADS) -> list[Row]:
    """Every row, in the order the parent times them and the ncu child profiles them."""
    rows: list[Row] = []
    if "copy" in workloads:
        rows += copy_rows(arrays["x"], arrays["y"], arrays["src"], arrays["dst"])
    if "row_dot" in workloads:
        rows += row_dot_rows(arrays["x"], arrays["v"], arrays["dots"])
    return rows


def row_dot_rows(x, v, dots) -> list[Row]:
    """The `row_dot` workload's rows."""
    import torch

    from copy_tools import runtime
    from frontends import kernels

    rows: list[Row] = []
    # The rows checked: the first and last 512 of x, in float64.
    checked = torch.cat([torch.arange(512), torch.arange(M - 512, M)]).cuda()
    xs = x[checked].double().view(len(checked), TILE_COLUMNS, TILE[1])
    for c in CLUSTERS:
        vc, yc = v[:c], dots[:c]
        grid = kernels.broadcast_grid((M, N), TILE, c)
        vs = vc.double().view(c, TILE_COLUMNS, TILE[1])
        exact = torch.einsum("itj,rtj->rti", xs, vs)
        bound = torch.einsum("itj,rtj->rti", xs.abs(), vs.abs())
        bound *= (TILE[1] // 32 + 6) * 2.0**-24

        def close(yc=yc, exact=exact, bound=bound) -> bool:
            if not bool(torch.isfinite(yc).all()):
                return False  # an entry left as the NaN it was filled with
            got = yc[:, :, checked].double()
            return bool(((got - exact).abs() <= bound).all())

        for name, kind, options, note in VARIANTS:
            row = Row(c, name, kind, lambda: None, close, note, workload="row_dot")
            try:
                module = kernels.broadcast_row_dot((M, N), "f32", TILE, cluster=c, **options)
                row.launch = runtime.compile(module).kernel().prepare(x, vc, yc, grid=grid)
            except Exception as exc:  # a row that cannot run is reported, not fatal
                row.error = f"{type(exc).__name__}: {str(exc)[:160]}"
            rows.append(row)
        out = torch.empty(M, c, device="cuda")
        rows.append(
            Row(
                c,
                "torch x @ v.T",
                "torch_mm",
                lambda vc=vc, out=out: torch.mm(x, vc.T, out=out),
                None,
                "cuBLAS; full sums (M, C)",
                workload="row_dot",
            )
        )
    return rows


def copy_rows(x, y, src, dst) -> list[Row]:
    """The `copy` workload's rows."""
    import torch

    from copy_tools import runtime
    from frontends import kernels

    rows: list[Row] = []
    xi = x.view(torch.int32)
    for c in CLUSTERS:
        yc = y[:c]
        grid = kernels.broadcast_grid((M, N), TILE, c)

        def same(yc=yc, c=c) -> bool:
            return bool(torch.equal(yc.view(torch.int32), xi.expand(c, M, N)))

        for name, kind, options, note in VARIANTS:
            row = Row(c, name, kind, lambda: None, same, note)
            try:
                module = kernels.broadcast_copy((M, N), "f32", TILE, cluster=c, **options)
                row.launch = runtime.compile(module).kernel().prepare(x, yc, grid=grid)
            except Exception as exc:  # a row that cannot run is reported, not fatal
                row.error = f"{type(exc).__name__}: {str(exc)[:160]}"
            rows.append(row)
        rows.append(
            Row(
                c,
                f"torch y.copy_(x.expand({c}, M, N))",
                "torch_expand",
                lambda yc=yc, c=c: yc.copy_(x.expand(c, M, N)),
                same,
                "the same operation",
            )
        )
        n = (1 + c) * M * N // 2
        rows.append(
            Row(
                c,
                "torch plain copy, same bytes",
                "torch_copy",
                lambda n=n: dst[:n].copy_(src[:n]),
                None,
                f"dst.copy_(src), {n * 4 / 2**30:.1f} GiB each",
            )
        )
    return rows


def allocate(workloads: tuple[str, ...]) -> dict:
    import torch

    arrays = {"x": torch.randn(M, N, device="cuda")}
    if "copy" in workloads:
        arrays["y"] = torch.empty(max(CLUSTERS), M, N, device="cuda")
        arrays["src"] = torch.empty((1 + max(CLUSTERS)) * M * N // 2, device="cuda")
        arrays["dst"] = torch.empty_like(arrays["src"])
    if "row_dot" in workloads:
        arrays["v"] = torch.randn(max(CLUSTERS), N, device="cuda")
        arrays["dots"] = torch.empty(max(CLUSTERS), TILE_COLUMNS, M, device="cuda")
    return arrays


def marker_launch(x):
    """A small copy-dialect kernel named `MARKER`: launched after each profiled row."""
    import torch
    from xdsl.dialects import func
    from xdsl.dialects.builtin import StringAttr

    from copy_tools import runtime
    from frontends import kernels

    module = kernels.tma_copy((64, 64), "f32")
    (fn,) = (op for op in module.walk() if isinstance(op, func.FuncOp))
    fn.properties["sym_name"] = StringAttr(MARKER)
    a, b = x[:64, :64].contiguous(), torch.empty(64, 64, device="cuda")
    launch = runtime.compile(module).kernel().prepare(a, b, grid=(1, 1))
    # The launch holds the arrays' addresses, not the arrays: they live as long as it does.
    return lambda a=a, b=b: launch()


def profile_once(launch, marker) -> None:
    """One launch of `launch` between cudaProfilerStart and Stop, followed by `marker`, so
    that ncu (`--profile-from-start off`) sees the kernel and then the marker that closes
    its group (`group_by_marker`)."""
    import torch

    torch.cuda.cudart().cudaProfilerStart()
    launch()
    marker()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


# --- the profiled pass (the child under ncu) ---------------------------------------------


def child(labels_path: str, workloads: tuple[str, ...]) -> int:
    """Under ncu: each row's launch once between cudaProfilerStart/Stop, then the marker;
    the rows launched are written to `labels_path` as they go."""
    import torch

    arrays = allocate(workloads)
    marker = marker_launch(arrays["x"])
    launched: list[list] = []
    for row in build_rows(arrays, workloads):
        if row.error:
            continue
        row.launch()  # outside the profiled range: loads the module, touches the pages
        torch.cuda.synchronize()
        profile_once(row.launch, marker)
        launched.append(list(row.label))
        Path(labels_path).write_text(json.dumps(launched))
    return 0


def find_ncu() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in (
        "/usr/local/cuda/bin/ncu",
        "/usr/local/cuda-*/bin/ncu",
        "/opt/nvidia/nsight-compute/*/ncu",
    ):
        for path in sorted(glob.glob(pattern), reverse=True):
            if Path(path).is_file():
                return path
    return None


SIZE_PREFIXES = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
SIZE_PREFIXES |= {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30}
SIZES = {"byte": 1.0, "sector": 32.0}
TIMES = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}
TIMES |= {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def unit_scale(unit: str) -> float:
    """ncu's unit (`Mbyte`, `Ksector`, `usecond`, `ms`, ...) as a factor to bytes or seconds
    (a sector is 32 bytes); ValueError for a unit it does not know. Case matters: `Mbyte`
    is 10^6 bytes, `msecond` 10^-3 seconds."""
    u = unit.strip()
    if u in TIMES:
        return TIMES[u]
    for prefix in sorted(SIZE_PREFIXES, key=len, reverse=True):
        if u.startswith(prefix) and u[len(prefix) :] in SIZES:
            return SIZE_PREFIXES[prefix] * SIZES[u[len(prefix) :]]
    raise ValueError(f"unknown ncu unit {unit!r}")


def parse_ncu_csv(text: str, optional: tuple[str, ...] = ()) -> list[dict]:
    """The kernels of `ncu --csv --page raw` output, in launch order: {"id", "name": kernel
    name, metric: value in bytes or seconds} for `METRICS` and those of `optional` the table
    has. Lines that are not the table (ncu's `==PROF==` messages) are skipped; ValueError if
    there is no table or it lacks a column of METRICS."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("==")]
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no CSV table in ncu's output")
    table = list(csv.reader(lines[start:]))
    header = table[0]
    column = {name: i for i, name in enumerate(header)}
    missing = [m for m in ("ID", "Kernel Name", *METRICS) if m not in column]
    if missing:
        raise ValueError(f"ncu's table has no column {', '.join(missing)}")
    metrics = [*METRICS, *(m for m in optional if m in column)]
    units = dict.fromkeys(metrics, 1.0)
    kernels = []
    for cells in table[1:]:
        if len(cells) < len(header):
            continue
        if not cells[column["ID"]].strip():  # the units row of the raw page
            units = {m: unit_scale(cells[column[m]]) if cells[column[m]] else 1.0 for m in metrics}
            continue
        kernel: dict = {"id": int(cells[column["ID"]]), "name": cells[column["Kernel Name"]]}
        for m in metrics:
            raw = cells[column[m]].replace(",", "").strip()
            try:
                kernel[m] = float(raw) * units[m]
            except ValueError:  # "n/a"
                kernel[m] = float("nan")
        kernels.append(kernel)
    return sorted(kernels, key=lambda k: k["id"])


def group_by_marker(kernels: list[dict]) -> list[list[dict]]:
    """The kernels between markers: one group per profiled row (the marker closes it)."""
    groups, current = [], []
    for k in kernels:
        if MARKER in k["name"]:
            groups.append(current)
            current = []
        else:
            current.append(k)
    return groups


def ncu_diagnosis(text: str) -> str:
    """Why ncu gave no table, in a line."""
    if "ERR_NVGPUCTRPERM" in text:
        return (
            "ncu has no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM): "
            "run as root or with NVreg_RestrictProfilingToAdminUsers=0"
        )
    errors = [line.strip() for line in text.splitlines() if "==ERROR==" in line]
    if errors:
        return "ncu: " + " / ".join(errors[:2])[:300]
    tail = " ".join(text.strip().splitlines()[-3:])
    return f"ncu gave no metrics: {tail[:300]}" if tail else "ncu gave no output"


def profile(
    ncu: str, metrics: tuple[str, ...], timeout: int, workloads: tuple[str, ...]
) -> tuple[list | None, list, str]:
    """The child under ncu once: (its kernels, or None; the rows it launched; what went
    wrong, or how long it took)."""
    with tempfile.TemporaryDirectory() as tmp:
        log, labels = Path(tmp) / "ncu.csv", Path(tmp) / "labels.json"
        command = [ncu, *ncu_options(metrics), "--log-file", str(log)]
        command += [sys.executable, str(Path(__file__).resolve()), "--workload"]
        command += [",".join(workloads), "--tile", f"{TILE[0]}x{TILE[1]}"]
        command += ["--child", str(labels)]
        t0 = time.perf_counter()
        # In a session of its own, so that a timeout ends ncu and the profiled child both.
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return None, [], f"ncu did not finish in {timeout} s (--ncu-timeout)"
        elapsed = time.perf_counter() - t0
        text = log.read_text(errors="replace") if log.exists() else ""
        launched = json.loads(labels.read_text()) if labels.exists() else []
    problem = ""
    for candidate in (text, stdout):  # the log file, else ncu's stdout
        try:
            return parse_ncu_csv(candidate, metrics), launched, f"{elapsed:.0f} s"
        except ValueError as exc:
            problem = problem or str(exc)
    why = ncu_diagnosis("\n".join([text, stdout, stderr]))
    return None, launched, f"{why} ({problem}; exit status {process.returncode})"


def run_ncu(rows: list[Row], timeout: int) -> str:
    """Profiles the rows in a child process under ncu and fills `row.ncu`; returns the line
    under the table (what ran, or why the DRAM columns are empty)."""
    ncu = find_ncu()
    if ncu is None:
        return "ncu not found (not on PATH, nor in /usr/local/cuda/bin): no DRAM bytes"
    try:
        about = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"ncu ({ncu}) does not run: {exc}; no DRAM bytes"
    ncu_version = (about.stdout.strip().splitlines() or ["ncu (version unknown)"])[-1].strip()
    metrics = (*METRICS, L2_READ)
    workloads = tuple(w for w in WORKLOADS if any(r.workload == w for r in rows))
    kernels, launched, how = profile(ncu, metrics, timeout, workloads)
    if kernels is None and "ERR_NVGPUCTRPERM" not in how and "did not finish" not in how:
        first = how  # perhaps the optional metric: once more with the table's own
        metrics = METRICS
        kernels, launched, how = profile(ncu, metrics, timeout, workloads)
        how += f"; with {L2_READ} too: {first}" if kernels is None else ""
    if kernels is None:
        return f"{how}; no DRAM bytes"
    groups = group_by_marker(kernels)
    if len(groups) != len(launched):
        return (
            f"ncu profiled {len(groups)} rows for the {len(launched)} launched: the DRAM "
            "columns are left empty rather than matched wrongly"
        )
    by_label = {tuple(label): group for label, group in zip(launched, groups, strict=True)}
    for row in rows:
        group = by_label.get(row.label)
        if group is None:
            continue
        row.profiled, row.ncu_kernels = True, len(group)
        if group:
            row.ncu = {m: sum(k[m] for k in group if m in k) for m in metrics}
    return (
        f"{ncu_version}, `ncu {' '.join(ncu_options(metrics))}`, one launch per row "
        f"({len(kernels)} kernels profiled in {how})"
    )


# --- the table ---------------------------------------------------------------------------


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(rows: list[Row], ncu_line: str) -> None:
    """A table per workload that has rows, then the DRAM columns' line and the summaries."""
    workloads = [w for w in WORKLOADS if any(r.workload == w for r in rows)]
    for workload in workloads:
        print_workload(workload, [r for r in rows if r.workload == workload])
        print()
    print(f"DRAM columns: {ncu_line}.")
    print()
    for workload in workloads:
        for c in CLUSTERS:
            mine = [r for r in rows if r.workload == workload and r.cluster == c]
            if mine:
                print(summary(c, mine))


def print_workload(workload: str, rows: list[Row]) -> None:
    peers = PEERS[workload]
    print(f"`{workload}`:")
    print()
    ratios = "".join(f"ratio to {header} | " for header, _ in peers)
    print(
        f"| C | kernel | time (ms) | GB/s | {ratios}"
        "correct | DRAM read (GiB, ncu) | read / x | multicast read / this | "
        "L2 read (GiB, ncu) | DRAM written (GiB, ncu) | ncu time (ms) | notes |"
    )
    print("|---" * (12 + len(peers)) + "|")
    for c in CLUSTERS:
        mine = [r for r in rows if r.cluster == c]
        if not mine:
            continue
        ref = {r.kind: r for r in mine}
        multi = ref.get("multicast")
        for r in mine:
            ms = gbps = None
            to_peer: list[float | None] = [None] * len(peers)
            if r.seconds is not None:
                ms, gbps = r.seconds * 1e3, moved_bytes(workload, c) / r.seconds / 1e9
                for i, (_, kind) in enumerate(peers):
                    peer = ref.get(kind)
                    if peer is not None and peer.seconds is not None:
                        to_peer[i] = peer.seconds / r.seconds
            read = per_x = ratio = l2 = written = ncu_ms = None
            if r.ncu is not None:
                l2 = r.ncu[L2_READ] / 2**30 if L2_READ in r.ncu else None
                read, per_x = r.ncu[METRICS[0]] / 2**30, r.ncu[METRICS[0]] / X_BYTES
                written, ncu_ms = r.ncu[METRICS[1]] / 2**30, r.ncu[METRICS[2]] * 1e3
                if (
                    multi is not None
                    and multi.ncu is not None
                    and r is not multi
                    and r.ncu[METRICS[0]] > 0
                ):
                    ratio = multi.ncu[METRICS[0]] / r.ncu[METRICS[0]]
            notes = [r.error or r.note] if (r.error or r.note) else []
            if r.ncu_kernels > 1:
                notes.append(f"ncu: {r.ncu_kernels} kernels summed")
            if r.profiled and r.ncu_kernels == 0:
                notes.append("ncu: no kernel launched (a memcpy)")
            cells = [
                str(c),
                r.name,
                fmt(ms, ".3f"),
                fmt(gbps, ".0f"),
                *(fmt(t, ".3f") for t in to_peer),
                r.correct,
                fmt(read, ".3f"),
                fmt(per_x, ".2f"),
                fmt(ratio, ".3f"),
                fmt(l2, ".3f"),
                fmt(written, ".3f"),
                fmt(ncu_ms, ".3f"),
                "; ".join(notes),
            ]
            print("| " + " | ".join(cells) + " |")


def summary(c: int, rows: list[Row]) -> str:
    """The issue's target for cluster C, against each unicast order: multicast reads at most
    0.6 x its DRAM bytes (ncu) and is faster; with L2's reads beside them."""
    ref = {r.kind: r for r in rows}
    multi = ref["multicast"]
    parts = []
    for other, what in ((ref["unicast"], "unicast twin"), (ref["rank_major"], "rank-major")):
        if multi.seconds is None or other.seconds is None:
            parts.append(f"vs the {what}: no time")
            continue
        speed = other.seconds / multi.seconds
        text = f"vs the {what}: speed {speed:.3f}x"
        if multi.ncu is not None and other.ncu is not None and other.ncu[METRICS[0]] > 0:
            ratio = multi.ncu[METRICS[0]] / other.ncu[METRICS[0]]
            met = ratio <= 0.6 and speed > 1
            text += f", DRAM read {ratio:.3f}x"
            if L2_READ in multi.ncu and L2_READ in other.ncu and other.ncu[L2_READ] > 0:
                text += f", L2 read {multi.ncu[L2_READ] / other.ncu[L2_READ]:.3f}x"
            text += f" (target: <= 0.6x the DRAM read and faster: {'met' if met else 'not met'})"
        else:
            text += ", DRAM read not measured"
        parts.append(text)
    return f"- `{rows[0].workload}`, C = {c}, multicast " + "; ".join(parts) + "."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--ncu", action="store_true", help="add DRAM bytes from Nsight Compute")
    parser.add_argument("--ncu-timeout", type=int, default=150, help="seconds for the ncu pass")
    parser.add_argument(
        "--workload",
        default="both",
        help="copy, row_dot, or both (default); a comma-separated list also works",
    )
    parser.add_argument(
        "--tile", default="64x256", help="the copy-dialect kernels' tile, ROWSxCOLUMNS"
    )
    parser.add_argument("--child", metavar="LABELS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        rows_, columns = (int(n) for n in args.tile.split("x"))
    except ValueError:
        parser.error(f"expected --tile ROWSxCOLUMNS, such as 64x256, got {args.tile!r}")
    use_tile((rows_, columns))
    names = WORKLOADS if args.workload == "both" else tuple(args.workload.split(","))
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        parser.error(f"expected --workload of copy, row_dot or both, got {args.workload!r}")
    workloads = tuple(w for w in WORKLOADS if w in names)
    if args.child:
        return child(args.child, workloads)

    import torch

    t0 = time.perf_counter()
    props = torch.cuda.get_device_properties(0)
    arrays = allocate(workloads)
    rows = build_rows(arrays, workloads)
    for row in rows:
        if row.error:
            row.correct = "error"
            continue
        try:
            if row.check is not None:
                for name in ("y", "dots"):
                    if name in arrays:  # poisoned: an entry left unwritten shows
                        arrays[name].fill_(float("nan"))
                row.launch()
                torch.cuda.synchronize()
                row.correct = "yes" if row.check() else "NO"
            else:
                row.correct = "-"
            row.seconds = timed(row.launch, args.reps)
        except Exception as exc:  # reported in the row (a fault ends the context: the rest too)
            row.correct, row.error = "error", f"{type(exc).__name__}: {str(exc)[:160]}"
            continue
        shown = f"{row.seconds * 1e3:.3f} ms"
        label = f"{row.workload} C={row.cluster} {row.name}"
        print(f"  {label}: {shown} ({row.correct})", file=sys.stderr)
    ncu_line = run_ncu(rows, args.ncu_timeout) if args.ncu else "not measured (add --ncu)"
    print(conditions(props, args.reps, time.perf_counter() - t0))
    print()
    print_table(rows, ncu_line)
    return 0


def conditions(props, reps: int, seconds: float) -> str:
    def output(command: list[str]) -> str:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip()

    driver = output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    commit = output(["git", "rev-parse", "--short", "HEAD"]) or "(no git)"
    versions = ", ".join(
        f"{p} {version(p)}" for p in ("torch", "xdsl", "llvmlite", "cuda-bindings") if _has(p)
    )
    l2 = getattr(props, "L2_cache_size", 0)
    return (
        f"GPU: {props.name} ({props.multi_processor_count} SMs, L2 {l2 / 2**20:.0f} MiB), "
        f"driver {driver or '?'}; {versions}; commit {commit}. x: float32 {M}x{N} (1 GiB); "
        f"`copy`: y (C, {M}, {N}); `row_dot`: v (C, {N}), y (C, {TILE_COLUMNS}, {M}) float32; "
        f"copy-dialect tiles {TILE[0]}x{TILE[1]}, 128 threads, clusters (C, 1, 1); median of "
        f"{reps} launches after 3 warm-ups (CUDA events); GB/s = (1 + C) GiB (x read once + "
        f"y written, `copy`) or 1 GiB (x read once, `row_dot`) / time; ratios: the peer "
        f"row's time / this row's. Run took {seconds:.0f} s."
    )


def _has(package: str) -> bool:
    try:
        version(package)
    except Exception:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
