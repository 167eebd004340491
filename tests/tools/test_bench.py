"""The benchmarks' parts that need no GPU: arguments, byte counts, ratios, tables, JSON, which
copy-dialect configurations fit, and `bench_compute.py --compile-only`."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    """bench_common, bench_compute and bench_copy, imported as the scripts import each other
    (their folder first on sys.path)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield {
            name: importlib.import_module(name)
            for name in ("bench_common", "bench_compute", "bench_copy")
        }
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_shape_argument_keeps_tma_rows_aligned(bench):
    compute = bench["bench_compute"]
    assert compute.parse_args(["--odd-shape", "10000x10008"]).odd_shape == (10000, 10008)
    with pytest.raises(SystemExit):
        compute.parse_args(["--odd-shape", "10000x10007"])
    with pytest.raises(compute.argparse.ArgumentTypeError, match="use 10008"):
        compute.shape_arg("10000x10007")
    with pytest.raises(compute.argparse.ArgumentTypeError, match="MxN"):
        compute.shape_arg("10000")


def test_ops_argument(bench):
    compute = bench["bench_compute"]
    assert compute.parse_args([]).ops == compute.OPS
    assert compute.parse_args(["--ops", "cast,add"]).ops == ("cast", "add")
    with pytest.raises(compute.argparse.ArgumentTypeError, match="add, axpb, row_sum, cast"):
        compute.ops_arg("add,mul")
    with pytest.raises(SystemExit):
        compute.parse_args(["--reps", "0"])


def test_cases_and_their_bytes(bench):
    compute = bench["bench_compute"]
    found = compute.cases(["add", "row_sum", "cast"], [(16384, 16384), (10000, 10008)])
    labels = [(c.op, c.label, c.shape) for c in found]
    assert labels[:6] == [
        ("add", "f32", (16384, 16384)),
        ("add", "bf16", (16384, 16384)),
        ("add", "f16", (16384, 16384)),
        ("row_sum", "f32", (16384, 16384)),
        ("cast", "f32->bf16", (16384, 16384)),
        ("cast", "f32->f16", (16384, 16384)),
    ]
    assert len(found) == 12
    n = 16384 * 16384
    by = {(c.op, c.label): c.nbytes for c in found if c.shape == (16384, 16384)}
    assert by[("add", "f32")] == 3 * 4 * n
    assert by[("add", "bf16")] == 3 * 2 * n
    assert by[("row_sum", "f32")] == 4 * n + 4 * 16384
    assert by[("cast", "f32->bf16")] == 6 * n
    axpb = compute.Case("axpb", "f16", "f16", (10000, 10008))
    assert axpb.nbytes == 2 * 2 * 10000 * 10008


def _results(compute):
    """Rows of one case as a run would leave them: 1 GB/s of bytes is 1 ns per byte."""
    case = compute.Case("add", "f32", "f32", (1000, 1000))
    copy_bytes, op_bytes = 2 * 4 * 10**6, case.nbytes
    results = compute.Results()
    rows = [
        ("torch copy", "y.copy_(x)", copy_bytes / 4000e9, False, False),  # 4000 GB/s
        ("torch", "torch.add(x, y, out=z)", op_bytes / 3800e9, True, False),
        ("Triton", "BLOCK 1024, 4 warps", op_bytes / 3000e9, False, True),
        ("Triton", "BLOCK 4096, 4 warps", op_bytes / 3900e9, False, True),
        ("Triton", "BLOCK 4096, 4 warps", op_bytes / 3900e9, True, False),  # best of sweep
        ("copy-dialect ws", "64x64, 4 stages", op_bytes / 4100e9, False, True),
        ("copy-dialect ws", "64x64, 4 stages", op_bytes / 4100e9, False, False),
    ]
    for kernel, config, seconds, peer, sweep in rows:
        results.rows.append(
            compute.Row(case, kernel, config, seconds, "yes", True, "", peer, sweep)
        )
    results.rows.append(compute.Row(case, "copy-dialect ws", "x", None, "error: E", False))
    results.skipped[case] = ["128x128, 2 stages: over the block's SMEM"]
    return case, results


def test_ratios_to_the_copy_and_to_the_best_peer(bench):
    compute = bench["bench_compute"]
    case, results = _results(compute)
    assert results.copy_gbps(case) == pytest.approx(4000)
    assert results.peer_gbps(case) == pytest.approx(3900)  # Triton's best, not its sweep rows
    main = compute.table_rows(results, sweep=False)
    ws = [r for r in main if r[3] == "copy-dialect ws" and r[4] != "-"]
    assert ws == [
        [
            "add",
            "f32",
            "1000x1000",
            "copy-dialect ws",
            "4100",
            "1.025",
            "1.051",
            "yes",
            "64x64, 4 stages",
        ]
    ]
    copy_row = next(r for r in main if r[3] == "torch copy")
    assert copy_row[:7] == ["copy", "f32", "1000x1000", "torch copy", "4000", "1.000", ""]
    failed = next(r for r in main if r[4] == "-")
    assert failed[5:8] == ["-", "-", "error: E"]
    assert len(compute.table_rows(results, sweep=True)) == 3


def test_render_and_json(bench, tmp_path):
    compute, common = bench["bench_compute"], bench["bench_common"]
    case, results = _results(compute)
    found = {"gpu": "GPU X", "sms": 2, "versions": {"torch": "9"}, "commit": "abc"}
    text = compute.render(results, found, reps=20, warmups=3)
    assert text.startswith("GPU: GPU X (2 SMs); torch 9; commit abc\n")
    assert "median of 20 launches" in text
    tables = [line for line in text.splitlines() if line.startswith("|")]
    assert len(tables) == 2 + 5 + 2 + 3  # two tables: header, rule, rows
    assert {line.count("|") - line.count("\\|") for line in tables} == {len(compute.HEADERS) + 1}
    assert "- add f32 1000x1000: 1 ws configurations not run: 128x128" in text
    path = tmp_path / "rows.json"
    common.write_json(path, found, compute.json_rows(results), compute.skipped_json(results))
    dumped = json.loads(path.read_text())
    assert dumped["conditions"]["gpu"] == "GPU X"
    ws = [r for r in dumped["rows"] if r["kernel"] == "copy-dialect ws" and not r["sweep"]]
    assert ws[0]["ratio_best_peer"] == pytest.approx(4100 / 3900)
    assert ws[0]["case"]["shape"] == [1000, 1000]
    assert dumped["skipped"] == {"add f32 1000x1000": ["128x128, 2 stages: over the block's SMEM"]}
    stopped = compute.Results(stopped="K hung")
    assert "**The run stopped early: K hung**" in compute.render(stopped, found, 20, 3)


def test_markdown_escapes_bars(bench):
    table = bench["bench_common"].markdown(["a", "b"], [["x|y", 1]])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | 1 |"]


def test_blocks_per_sm_share_the_sm(bench):
    common = bench["bench_common"]
    # Two blocks of 115808 bytes (6 stages of 64x64 bf16 add) overflow an H200 SM by 192.
    assert not common.fits_per_sm(115808, 2, common.H200_SMEM_PER_SM)
    assert common.fits_per_sm(115808, 1, common.H200_SMEM_PER_SM)
    assert common.fits_per_sm(99360, 2, common.H200_SMEM_PER_SM)


def test_ws_configurations_that_do_not_fit_are_skipped(bench):
    compute = bench["bench_compute"]
    case = compute.Case("add", "f32", "f32", (256, 512))
    over = compute.WsConfig((128, 128), 4, 4, 1)  # 2 inputs x 4 x 64 KiB
    program, why = compute.compiled_ws(case, over, compute.H200_SMEM_PER_SM)
    assert program is None
    assert why.endswith("over the block's SMEM")
    two = compute.WsConfig((64, 128), 2, 4, 2)  # 197664 bytes: one block per SM only
    program, why = compute.compiled_ws(case, two, compute.H200_SMEM_PER_SM)
    assert program is None
    assert "2 blocks of 197664 B SMEM per SM" in why
    fits = compute.WsConfig((64, 64), 2, 8, 2)
    program, why = compute.compiled_ws(case, fits, compute.H200_SMEM_PER_SM)
    assert why == ""
    assert [p.element for p in program.kernel().arguments] == ["f32", "f32", "f32"]


def test_ws_builders_take_the_cases_arguments(bench):
    compute = bench["bench_compute"]
    config = compute.WsConfig((64, 64), 2, 4, 1)
    for op, dtype, out, elements in [
        ("axpb", "bf16", "bf16", ["bf16", "bf16"]),
        ("cast", "f32", "f16", ["f32", "f16"]),
    ]:
        case = compute.Case(op, dtype, out, (200, 136))
        program, why = compute.compiled_ws(case, config, compute.H200_SMEM_PER_SM)
        assert why == ""
        params = program.kernel().arguments
        assert [getattr(p, "element", None) for p in params][: len(elements)] == elements
        assert len(params) == (4 if op == "axpb" else 2)  # axpb: x, y, a, b


def test_compile_only_needs_no_gpu(bench, capsys):
    compute = bench["bench_compute"]
    argv = [
        "--compile-only",
        "--ops",
        "cast,row_sum",
        "--no-sweep",
        "--shape",
        "128x256",
        "--odd-shape",
        "100x136",
    ]
    assert compute.main(argv) == 0
    out = capsys.readouterr().out
    # The per-tile default and the three persistent ones; row sums have the persistent three.
    assert "cast f32->bf16 128x256: 4 configurations compile and fit, 0 do not fit" in out
    assert "cast f32->f16 100x136: 4 configurations compile and fit" in out
    assert "32x128, 1 stages, 4 consumer warps, 1 tile/block, 1 out buffer" in out
    has_row_sum = compute.ws_builder("row_sum") is not None
    assert ("row_sum f32 128x256: no builder in this build" in out) != has_row_sum


def test_ws_copy_sweep(bench):
    copy = bench["bench_copy"]
    configs = copy.ws_copy_configs()
    assert all(in_flight < stages for _, stages, in_flight, _, _ in configs)
    # Each configuration is persistent (blocks per SM) or dealt out by tiles, never both.
    assert all((per_sm == 0) != (per_block == 0) for *_, per_sm, per_block in configs)
    persistent = [c for c in configs if c[4] == 0]
    assert {c[0] for c in persistent} == {(64, 128), (64, 256)}
    assert ((64, 128), 2, 2, 1, 0) not in configs
    assert {c[4] for c in configs} == {0, 1, 2, 3, 4, 8}


def test_ulp_distance(bench):
    torch = pytest.importorskip("torch")
    compute = bench["bench_compute"]
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        a = torch.tensor([1.0, -2.0, 0.0, 3.0], dtype=dtype)
        b = a.clone()
        assert compute.ulp_distance(a, b) == 0
        nudged = a.clone()
        nudged.view(torch.int32 if dtype == torch.float32 else torch.int16)[3] += 2
        assert compute.ulp_distance(a, nudged) == 2
        assert (
            compute.ulp_distance(
                torch.tensor([0.0], dtype=dtype), torch.tensor([-0.0], dtype=dtype)
            )
            == 0
        )
        assert compute.ulp_distance(a, torch.full_like(a, float("nan"))) > 1000


def test_the_whole_compute_run_on_the_cpu(bench, monkeypatch, capsys, tmp_path):
    """bench_compute's main with the arrays on the CPU and the launches timed by the clock:
    torch's forms, the references and the checks, the row a kernel that cannot launch gets
    (no GPU here: the ws launches fail to find a driver), the report and the JSON."""
    torch = pytest.importorskip("torch")
    compute, common = bench["bench_compute"], bench["bench_common"]

    def measure(fn, what, reps, *, timeout_s=10.0):
        fn()
        return 1e-3, reps

    monkeypatch.setattr(compute, "DEVICE", "cpu")
    monkeypatch.setattr(compute, "measure", measure)
    monkeypatch.setattr(compute, "recover", lambda what: None)
    monkeypatch.setattr(
        compute,
        "device_limits",
        lambda: common.DeviceLimits("CPU", 2, common.H200_SMEM_PER_SM, 0),
    )
    monkeypatch.setattr(compute, "conditions", lambda limits: {"gpu": "CPU", "sms": 2})
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    path = tmp_path / "rows.json"
    argv = ["--no-sweep", "--skip-triton", "--shape", "64x256", "--odd-shape", "40x136"]
    assert compute.main([*argv, "--json", str(path)]) == 1  # the ws rows failed
    out = capsys.readouterr().out
    dumped = json.loads(path.read_text())
    rows = dumped["rows"]
    torch_rows = [r for r in rows if r["kernel"] == "torch"]
    assert len(torch_rows) == 2 * (3 + 3 * 3 + 1 + 2)  # two shapes; axpb has three forms
    assert all(r["ok"] for r in torch_rows), [r for r in torch_rows if not r["ok"]]
    assert {r["correct"] for r in torch_rows if r["case"]["op"] in ("add", "cast")} == {
        "yes (bit-exact)"
    }
    peers = [r for r in torch_rows if r["peer"]]
    assert len(peers) == 2 * (3 + 3 + 1 + 2)  # one torch peer per case
    copies = [r for r in rows if r["kernel"] == "torch copy"]
    assert {(r["case"]["dtype"], tuple(r["case"]["shape"])) for r in copies} == {
        (d, s) for d in ("f32", "bf16", "f16") for s in ((64, 256), (40, 136))
    }
    ws = [r for r in rows if r["kernel"] == "copy-dialect ws" and r["case"]["op"] != "row_sum"]
    large = [r for r in ws if r["case"]["shape"] == [64, 256]]
    # Every default configuration of the 8 cases is run or skipped (SMEM); none launches.
    skipped = sum(len(v) for k, v in dumped.get("skipped", {}).items() if "64x256" in k)
    assert skipped == 1  # add f32: 2 inputs x 4 stages of 64x128 is over the SMEM
    assert len(large) + skipped == 8 * len(compute.WS_DEFAULTS)
    assert all(r["ok"] is False and r["correct"].startswith("error:") for r in large)
    odd = [r for r in ws if r["case"]["shape"] == [40, 136]]
    assert {(r["correct"], r["note"]) for r in odd} == {("not run", "no configuration ran before")}
    # add reads and writes 3 x 4 bytes an element, the copy 2 x 4: 1.5 the copy's GB/s
    assert "| add | f32 | 64x256 | torch | 0 | 1.500 | 1.000 | yes (bit-exact) |" in out


def test_copy_tables_as_json(bench, tmp_path):
    copy, common = bench["bench_copy"], bench["bench_common"]
    table, sweep = copy.Table(), copy.Table()
    table.add("torch copy", 1e-3, 4 * 10**9, "yes")  # 4000 GB/s: the ceiling
    sweep.ceiling = table.ceiling
    sweep.add("copy-dialect ws copy (a)", 1e-3, 3 * 10**9, "True")
    sweep.add("copy-dialect ws copy (b)", None, 3 * 10**9, "error: E")
    path = tmp_path / "copy.json"
    common.write_json(path, {"reps": 20}, table.json("main") + sweep.json("sweep"))
    rows = json.loads(path.read_text())["rows"]
    assert [(r["table"], r["ratio_torch_copy"]) for r in rows] == [
        ("main", 1.0),
        ("sweep", 0.75),
        ("sweep", None),
    ]


def test_elementwise_sweep_flattens_a_cut_shape(bench):
    """On the tail shape (10008 columns: every 128- or 256-wide tile column but the last is
    whole) the elementwise sweep also runs each per-tile configuration whose width divides
    the element count on the arrays seen as rows one tile wide; not on a shape its tiles
    already divide, not for row sums (whose rows are the result)."""
    compute = bench["bench_compute"]
    tail = compute.ws_configs(True, "add", (10000, 10008), 132)
    flat = [c for c in tail if c.flat]
    assert flat
    assert {c.tile[1] for c in flat} == {128}  # 10000 * 10008 = 2**7 * 781875
    for c in flat:
        assert c.shape((10000, 10008)) == (781875, 128)
        tiles = -(-781875 // c.tile[0])
        assert c.grid((10000, 10008), 132)[0] == -(-tiles // c.per_block)
        assert "flattened to rows of 128" in c.text
    assert not any(c.flat for c in compute.ws_configs(True, "add", (16384, 16384), 132))
    assert not any(c.flat for c in compute.ws_configs(True, "row_sum", (10000, 10008), 132))


def test_the_odd_shape_gets_its_own_balanced_band_height(bench):
    """A row-sum band height carried from the first shape is re-derived for the odd shape's
    rows (as tall bands would leave SMs idle there); any other height is carried as is."""
    compute = bench["bench_compute"]
    from frontends import kernels

    first, odd = (16384, 16384), (10000, 10008)
    balanced = compute.WsConfig((kernels.balanced_band_rows(first[0], 132), 128), 2, 8, 1)
    moved = compute.rebanded(balanced, first, odd, 132)
    assert moved.tile == (kernels.balanced_band_rows(odd[0], 132), 128) == (76, 128)
    assert (moved.stages, moved.consumer_warps) == (2, 8)
    # 76-row bands: 132 of them, one per SM; the carried 125 would make 80.
    assert -(-odd[0] // moved.tile[0]) == 132
    other = compute.WsConfig((64, 128), 2, 8, 1)
    assert compute.rebanded(other, first, odd, 132) == other
