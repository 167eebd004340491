"""The benchmarks' `--plot`: the bandwidth bar chart from a fake table, on the CPU (no GPU,
no matplotlib): one bar per kernel that ran, the torch copy as a dashed line per panel, and a
path that cannot be written refused before the run."""

from __future__ import annotations

import importlib
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield {
            name: importlib.import_module(name)
            for name in ("bench_common", "bench_compute", "bench_copy")
        }
    finally:
        sys.path.remove(str(BENCHMARKS))


def _svg(path: Path) -> tuple[list[ET.Element], list[ET.Element], list[str]]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    lines = [r for r in root.iter(f"{SVG}line") if r.get("class") == "torch-copy"]
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    return bars, lines, texts


def test_copy_plot_from_a_fake_table(bench, tmp_path):
    copy, common = bench["bench_copy"], bench["bench_common"]
    table, sweep = copy.Table(), copy.Table()
    table.add("torch copy", 1e-3, 4 * 10**9, "yes")  # 4000 GB/s
    table.add("copy-dialect TMA copy", 1e-3, 3 * 10**9, "True")
    table.add("Triton TMA copy", 1e-3, 2 * 10**9, "True")
    table.add("copy-dialect broken", None, 10**9, "error: E")
    sweep.add("ws copy (a)", 1e-3, 35 * 10**8, "True")
    path = tmp_path / "copy.svg"
    common.write_plot(path, "bench_copy", copy.plot_groups(table, sweep))
    bars, lines, texts = _svg(path)
    assert [b[0].text for b in bars] == [
        "copy-dialect TMA copy: 3000 GB/s",
        "Triton TMA copy: 2000 GB/s",
        "ws copy (a): 3500 GB/s",
    ]
    widths = [float(b.get("width")) for b in bars]
    assert widths[0] / widths[1] == pytest.approx(1.5, rel=1e-4)
    assert len(lines) == 2  # the torch copy in both panels, at 4000 GB/s
    x = float(lines[0].get("x1"))
    left = float(bars[0].get("x"))
    assert (x - left) / widths[0] == pytest.approx(4 / 3, rel=1e-4)
    assert "failed / not run" in texts
    assert "torch copy 4000" in texts
    assert {"copy kernels", "ws_copy sweep"} <= set(texts)


def test_compute_plot_has_a_panel_per_case(bench, tmp_path):
    compute, common = bench["bench_compute"], bench["bench_common"]
    add = compute.Case("add", "f32", "f32", (1000, 1000))
    cast = compute.Case("cast", "f32", "bf16", (1000, 1000))
    results = compute.Results()
    for case, kernel, config, gbps, sweep in [
        (add, "torch copy", "y.copy_(x)", 4000, False),
        (add, "torch", "torch.add", 3800, False),
        (add, "copy-dialect ws", "64x64, 4 stages", 4100, False),
        (add, "copy-dialect ws", "64x64, 2 stages", 3000, True),  # sweep rows: not plotted
        (cast, "copy-dialect ws", "32x256", 3600, False),
    ]:
        nbytes = 2 * 4 * 10**6 if kernel == "torch copy" else case.nbytes
        results.rows.append(
            compute.Row(case, kernel, config, nbytes / (gbps * 1e9), "yes", True, sweep=sweep)
        )
    groups = compute.plot_groups(results)
    assert [(g.title, len(g.bars), g.copy_gbps) for g in groups] == [
        ("add f32 1000x1000", 2, pytest.approx(4000)),
        ("cast f32->bf16 1000x1000", 1, pytest.approx(4000)),  # the f32 copy of that shape
    ]
    path = tmp_path / "compute.svg"
    common.write_plot(path, "bench_compute", groups)
    bars, lines, _ = _svg(path)
    assert len(bars) == 3
    assert len(lines) == 2
    assert bars[1][0].text == "copy-dialect ws (64x64, 4 stages): 4100 GB/s"


def test_plot_path_checked_before_the_run(bench, capsys):
    compute, common = bench["bench_compute"], bench["bench_common"]
    assert common.plot_path_problem("x.svg") is None
    assert "ending in .svg or .png" in common.plot_path_problem("x.pdf")
    with pytest.raises(SystemExit) as exc:
        compute.parse_args(["--plot", "bandwidth.pdf"])
    assert exc.value.code == 2
    assert "--plot: expected a picture path ending in .svg or .png" in capsys.readouterr().err
    assert compute.parse_args(["--plot", "bw.svg"]).plot == "bw.svg"
    if importlib.util.find_spec("matplotlib") is None:
        assert "needs matplotlib" in common.plot_path_problem("x.png")
