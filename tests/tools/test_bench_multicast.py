"""benchmarks/bench_multicast.py's ncu part without a GPU: a stand-in `ncu` writes the raw
CSV page (units row, thousands separators, a torch copy split into two kernels, a memcpy
that launches none) and the script matches its kernels to the rows of both workloads
through the markers;
an ncu without the counters' permission, a missing ncu and a count mismatch each end up as
a line in the table instead of a traceback."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from tests.tools.bench_scripts import bench_script


@pytest.fixture(scope="module")
def bench():
    with bench_script("bench_multicast") as module:
        yield module


KINDS = {
    "copy": ["multicast", "unicast", "rank_major", "torch_expand", "torch_copy"],
    "row_dot": ["multicast", "unicast", "rank_major", "torch_mm"],
}

FAKE = """#!{python}
import json, os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Version 2099.1.0.0 (build 1) (public-release)")
    sys.exit(0)
mode = os.environ["FAKE_NCU_MODE"]
log = args[args.index("--log-file") + 1]
labels = args[-1]
assert args[-2] == "--child", args
metrics = args[args.index("--metrics") + 1].split(",")
if mode == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA "
          "GPU Performance Counters on the target device 0.", file=sys.stderr)
    sys.exit(1)
l2 = "lts__t_sectors_op_read.sum" in metrics
if mode == "no-l2" and l2:
    print("==ERROR== Failed to find metric lts__t_sectors_op_read.sum", file=sys.stderr)
    sys.exit(1)
launched = json.loads(os.environ["FAKE_NCU_LABELS"])
json.dump(launched, open(labels, "w"))
rows = [
    '"ID","API Stream","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum",'
    '"gpu__time_duration.sum"' + (',"lts__t_sectors_op_read.sum"' if l2 else ""),
    '"","","","Mbyte","Mbyte","ms"' + (',"Msector"' if l2 else ""),
]
kernel_id = 0
def kernel(name, read, write, ms):
    global kernel_id
    sectors = f',"{{float(read.replace(",", "")) * 4 / 32:,.4f}}"' if l2 else ""
    rows.append(f'"{{kernel_id}}","7","{{name}}","{{read}}","{{write}}","{{ms}}"' + sectors)
    kernel_id += 1
for workload, c, kind in launched:
    gib = 1073.741824  # MB in a GiB
    if workload == "row_dot":  # reads x (C times for rank_major), writes little
        read = {{"multicast": 1.0, "unicast": 1.0, "rank_major": c, "torch_mm": 1.0}}[kind]
        kernel(f"row_dot_{{kind}}", f"{{read * gib:,.2f}}", "16.00", "0.3")
    elif kind == "torch_expand":  # two launches: torch splits a copy past 2**31 bytes
        for _ in range(2):
            kernel("void at::native::elementwise_kernel<128, 4>", f"{{c * gib / 2:,.2f}}",
                   f"{{c * gib / 2:,.2f}}", "0.5")
    elif kind != "torch_copy":  # the torch copy is a memcpy: no kernel
        read = {{"multicast": 1.0, "unicast": 1.02, "rank_major": c}}[kind]
        kernel(f"broadcast_{{kind}}", f"{{read * gib:,.2f}}", f"{{c * gib:,.2f}}", "0.9")
    kernel("ncu_marker", "0.03", "0.02", "0.004")
if mode == "mismatch":
    rows.pop()
with open(log, "w") as f:
    f.write("==PROF== Connected to process 1\\n")
    f.write("\\n".join(rows) + "\\n")
"""


def fake_ncu(tmp_path, monkeypatch, bench, mode: str, launched) -> Path:
    path = tmp_path / "ncu"
    path.write_text(FAKE.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(bench, "find_ncu", lambda: str(path))
    monkeypatch.setenv("FAKE_NCU_MODE", mode)
    monkeypatch.setenv("FAKE_NCU_LABELS", json.dumps(launched))
    return path


def rows(bench):
    made = []
    for workload, kinds in KINDS.items():
        for c in bench.CLUSTERS:
            for kind in kinds:
                row = bench.Row(c, kind, kind, lambda: None, None, workload=workload)
                times = {"multicast": 1.0, "unicast": 1.1, "rank_major": 1.4}
                row.seconds = times.get(kind, 1.3) * (1 + c) / 3 * 1e-3
                row.correct = "yes"
                made.append(row)
    return made


def labels(table):
    return [list(r.label) for r in table]


def test_kernels_are_matched_to_rows_through_the_markers(bench, tmp_path, monkeypatch, capsys):
    table = rows(bench)
    fake_ncu(tmp_path, monkeypatch, bench, "ok", labels(table))
    line = bench.run_ncu(table, timeout=60)
    assert line.startswith("Version 2099.1.0.0"), line
    assert "lts__t_sectors_op_read.sum" in line
    by = {r.label: r for r in table}
    gib = 2**30
    copies = {(c, kind): r for (w, c, kind), r in by.items() if w == "copy"}
    assert copies[(4, "multicast")].ncu["dram__bytes_read.sum"] == pytest.approx(gib, rel=1e-5)
    assert copies[(4, "rank_major")].ncu["dram__bytes_read.sum"] == pytest.approx(4 * gib, rel=1e-5)
    assert copies[(2, "torch_expand")].ncu_kernels == 2
    assert copies[(2, "torch_expand")].ncu["dram__bytes_write.sum"] == pytest.approx(
        2 * gib, rel=1e-5
    )
    assert copies[(2, "torch_expand")].ncu["gpu__time_duration.sum"] == pytest.approx(1e-3)
    # L2 sectors (32 bytes; the stand-in reports 4x the DRAM reads), Msector units.
    assert copies[(4, "multicast")].ncu["lts__t_sectors_op_read.sum"] == pytest.approx(
        4 * gib, rel=1e-5
    )
    assert copies[(2, "torch_copy")].profiled
    assert copies[(2, "torch_copy")].ncu is None
    # The row_dot rows got their own kernels, not the copy rows' of the same C and kind.
    dots = by[("row_dot", 4, "rank_major")]
    assert dots.ncu["dram__bytes_read.sum"] == pytest.approx(4 * gib, rel=1e-5)
    assert dots.ncu["dram__bytes_write.sum"] == pytest.approx(16e6)
    bench.print_table(table, line)
    out = capsys.readouterr().out
    copy_table, dot_table = out.split("`row_dot`:")
    assert "ratio to torch expand | ratio to torch copy |" in copy_table
    assert "ratio to torch x @ v.T |" in dot_table
    # C = 4: multicast reads 1/4 of the rank-major order's bytes, 1/1.02 of its twin's.
    assert "| 4 | rank_major | " in copy_table
    assert "| 1.02 | 0.980 |" in copy_table  # the twin: read / x, multicast read / this
    assert "| 4.00 | 0.250 |" in copy_table
    assert "ncu: 2 kernels summed" in out
    assert "ncu: no kernel launched (a memcpy)" in out
    target = "(target: <= 0.6x the DRAM read and faster: {})"
    twin = "twin: speed 1.100x, DRAM read 0.980x, L2 read 0.980x "
    assert "`copy`, C = 4, multicast vs the unicast twin: speed 1.100x" in out
    assert twin + target.format("not met") in out
    rank_major = "rank-major: speed 1.400x, DRAM read 0.250x, L2 read 0.250x "
    assert rank_major + target.format("met") in out
    assert "`row_dot`, C = 2, multicast vs the unicast twin: speed 1.100x, DRAM read 1.000x" in out


def test_no_permission_is_a_line_not_a_traceback(bench, tmp_path, monkeypatch):
    table = rows(bench)
    fake_ncu(tmp_path, monkeypatch, bench, "perm", [])
    line = bench.run_ncu(table, timeout=60)
    assert "no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM)" in line
    assert all(r.ncu is None for r in table)


def test_a_count_mismatch_leaves_the_columns_empty(bench, tmp_path, monkeypatch):
    table = rows(bench)
    fake_ncu(tmp_path, monkeypatch, bench, "mismatch", labels(table))
    line = bench.run_ncu(table, timeout=60)
    assert "ncu profiled 17 rows for the 18 launched" in line
    assert all(r.ncu is None for r in table)


def test_missing_ncu(bench, monkeypatch, capsys):
    monkeypatch.setattr(bench, "find_ncu", lambda: None)
    table = rows(bench)
    line = bench.run_ncu(table, timeout=60)
    assert line.startswith("ncu not found")
    bench.print_table(table, line)
    assert f"DRAM columns: {line}." in capsys.readouterr().out


def test_parse_rejects_output_without_a_table(bench):
    with pytest.raises(ValueError, match="no CSV table"):
        bench.parse_ncu_csv("==PROF== Disconnected from process 1\n")


def test_an_ncu_without_the_l2_metric_gives_the_dram_columns(bench, tmp_path, monkeypatch):
    table = rows(bench)
    fake_ncu(tmp_path, monkeypatch, bench, "no-l2", labels(table))
    line = bench.run_ncu(table, timeout=60)
    assert "lts__t_sectors_op_read.sum" not in line.split("`")[1], line
    row = next(r for r in table if r.label == ("copy", 2, "rank_major"))
    assert row.ncu["dram__bytes_read.sum"] == pytest.approx(2**31, rel=1e-5)
    assert "lts__t_sectors_op_read.sum" not in row.ncu


@pytest.mark.parametrize(
    ("unit", "scale"),
    [
        ("byte", 1),
        ("Kbyte", 1e3),
        ("Mbyte", 1e6),
        ("Gbyte", 1e9),
        ("Mibyte", 2**20),
        ("Msector", 32e6),
        ("sector", 32),
        ("Ksector", 32e3),
        ("nsecond", 1e-9),
        ("usecond", 1e-6),
        ("msecond", 1e-3),
        ("ms", 1e-3),
    ],
)
def test_ncu_units(bench, unit, scale):
    assert bench.unit_scale(unit) == pytest.approx(scale)


def test_an_unknown_unit_is_an_error(bench):
    with pytest.raises(ValueError, match="unknown ncu unit 'furlong'"):
        bench.unit_scale("furlong")
