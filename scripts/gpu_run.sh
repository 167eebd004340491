#!/usr/bin/env bash
# What runs on the GPU machine (see benchmarks/RESULTS.md): the GPU tests, the same tests with
# every kernel call also interpreted and compared bit for bit (COPY_INTERPRET=compare),
# compute-sanitizer on the TMA and multicast kernels, then the benchmarks (copy, compute, the
# GEMM against torch.matmul, the PDL chain). Assumes the project and xDSL are importable (the
# device tool's wheels). WORKERS=N runs the tests in N processes (pytest-xdist); SKIP_TESTS=1,
# SKIP_SANITIZER=1 and SKIP_BENCH=1 leave a part out; GEMM_SHAPES picks bench_gemm's shapes.
set -uo pipefail
cd "$(dirname "$0")/.."
echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import sys, xdsl, llvmlite, cuda.bindings; print(sys.version.split()[0], 'xdsl', xdsl.__version__ if hasattr(xdsl, '__version__') else '?', 'llvmlite', llvmlite.__version__, 'cuda-bindings', cuda.bindings.__version__)"
echo "== pytest -m gpu"
# Every GPU test file (plain `pytest`, not `python -m pytest`: the installed wheel, not the
# source folders, must be imported). Extra arguments select tests: scripts/gpu_run.sh -k swizzle
workers=()
[ "${WORKERS:-1}" -gt 1 ] && workers=(-n "$WORKERS")
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  pytest -m gpu -q -rfE -p no:cacheprovider "${workers[@]}" "${@:-tests}" 2>&1 \
    | tee "${OUT:-/tmp}/pytest_gpu.log" | tail -25
  echo "== COPY_INTERPRET=compare pytest -m gpu (each call on the GPU and the interpreter)"
  COPY_INTERPRET=compare pytest -m gpu -q -rfE -p no:cacheprovider "${workers[@]}" "${@:-tests}" \
    2>&1 | tee "${OUT:-/tmp}/pytest_compare.log" | tail -25
fi
[ "${SKIP_SANITIZER:-0}" = 1 ] && tools=() || tools=("memcheck" "memcheck --report-api-errors no" "racecheck")
# memcheck twice: with the default API-error reporting (cuda.bindings' import probes
# cuGetProcAddress for entry points the driver lacks: host API errors, not the project's), and
# with --report-api-errors no, which leaves the kernels' memory errors only.
for tool in "${tools[@]}"; do
  for kernel in tma multicast pipelined1 pipelined3 gemm gemm_pingpong gemm_cluster2 \
      examples/tma_tile_copy.mlir examples/multicast_copy.mlir; do
    echo "== compute-sanitizer --tool $tool: $kernel"
    # shellcheck disable=SC2086
    compute-sanitizer --tool $tool python3 scripts/gpu_check.py "$kernel" > /tmp/san.log 2>&1
    grep -E "^(tma|multicast|pipelined[0-9]+|gemm[a-z0-9_]*|examples/.*):|ERROR SUMMARY|RACECHECK SUMMARY" /tmp/san.log
    grep -E "Program hit|Invalid|Race|Barrier|Misaligned|Out-of-range" /tmp/san.log | sort | uniq -c | head -8
  done
done
# what a TFLOAT32 map does to the bits it loads, stores and reduces (docs/hardware.md)
echo "== scripts/probe_tf32.py"
python3 scripts/probe_tf32.py --save "${OUT:-/tmp}/tf32.npz" 2>&1 | tee "${OUT:-/tmp}/tf32.md" | head -80
if [ -f benchmarks/bench_copy.py ] && [ "${SKIP_BENCH:-0}" != 1 ]; then
  # The tables on stdout (progress lines on stderr go to a log); rows as JSON beside it.
  echo "== benchmarks/bench_copy.py"
  python3 benchmarks/bench_copy.py --json "${OUT:-/tmp}/bench_copy.json" 2> "${OUT:-/tmp}/bench_copy.log" \
    || tail -20 "${OUT:-/tmp}/bench_copy.log"
  echo "== benchmarks/bench_compute.py"
  python3 benchmarks/bench_compute.py --json "${OUT:-/tmp}/bench_compute.json" 2> "${OUT:-/tmp}/bench_compute.log" \
    || tail -20 "${OUT:-/tmp}/bench_compute.log"
  # issue R: kernels.gemm against torch.matmul (square and odd shapes; the kernels are built,
  # and proven, in parallel first) and the PDL chain with and without programmatic launch
  echo "== benchmarks/bench_gemm.py"
  python3 benchmarks/bench_gemm.py --shapes "${GEMM_SHAPES:-8192x8192x8192,4096x4096x4096,8191x8200x4104}" \
    --json "${OUT:-/tmp}/bench_gemm.json" 2> "${OUT:-/tmp}/bench_gemm.log" \
    || tail -20 "${OUT:-/tmp}/bench_gemm.log"
  # the cluster forms, each persistent grid sized by max_active_clusters (built without the
  # proof: a cluster-2 kernel's proof at 8192 takes minutes; the tests prove it at small K)
  python3 benchmarks/bench_gemm.py --shapes 8192x8192x8192 --configs cluster2,cluster2_256 \
    --no-verify --json "${OUT:-/tmp}/bench_gemm_cluster.json" 2>> "${OUT:-/tmp}/bench_gemm.log" \
    || tail -20 "${OUT:-/tmp}/bench_gemm.log"
  if command -v ncu >/dev/null 2>&1; then
    # the best configuration's tensor-pipe use (one launch, the third)
    echo "== ncu: kernels.gemm 8192^3 128x256x64 cooperative"
    ncu --launch-skip 2 --launch-count 1 -k regex:gemm --section SpeedOfLight \
      --section ComputeWorkloadAnalysis --section WarpStateStats \
      python3 scripts/gemm_once.py 8192 8192 8192 > "${OUT:-/tmp}/ncu_gemm.txt" 2>&1
    grep -E "Duration|Compute \(SM\)|Memory Throughput|Issue Slots|Executed Ipc" \
      "${OUT:-/tmp}/ncu_gemm.txt" | head -10
  fi
  echo "== benchmarks/bench_pdl.py"
  python3 benchmarks/bench_pdl.py --json "${OUT:-/tmp}/bench_pdl.json" 2> "${OUT:-/tmp}/bench_pdl.log" \
    || tail -20 "${OUT:-/tmp}/bench_pdl.log"
  # the same chains replayed from a CUDA graph: the GPU's time without the host's launches
  python3 benchmarks/bench_pdl.py --graph --json "${OUT:-/tmp}/bench_pdl_graph.json" \
    2>> "${OUT:-/tmp}/bench_pdl.log" || tail -20 "${OUT:-/tmp}/bench_pdl.log"
fi
