"""SHA-256 fingerprints of every output the compiler produces, to prove a restructure
byte-identical: fingerprint the tree before and after it, then `--compare` the two.

    python scripts/fingerprint.py [--out FP.json] [--dump DIR] [--jobs 2] [--only KIND]
    python scripts/fingerprint.py --compare BEFORE.json AFTER.json

Each record's key names its output (`--dump DIR` writes the outputs, a file a key, to diff):

- `example/<file>/<target>/{llvm,ptx,abi}`: each `examples/*.mlir` compiled for each target of
  the target table as `copy-opt --target T` does (`compile_module(module, ctx, T)`): LLVM IR,
  PTX (the backend's PTX step alone: no cubin) and the kernel ABI record as JSON; where that
  fails, `error` (exception type, message, note, rule ids) and `copy-opt` (`copy-opt FILE
  --target T -t ptx`: the located diagnostics).
- `builder/<builder>/<arguments>/{mlir,llvm,ptx,abi}`: the builder API (`frontends.kernels`,
  else `copy_dialect.kernels`) over `SWEEPS`, the parameters each builder's docstring
  documents, legal and illegal: the printed module and its compile for its own target (with
  `legalize=T`, after copy-legalize to T: `legalized`); `error` where the builder or the
  compile raises, `warnings` for the warnings raised.
- `lit/<file under lit_tests>/<command>`: each distinct copy-opt invocation of the RUN lines
  (lit.cfg's substitutions and %s %S %t made, copy-opt | copy-opt pipes and > %t.x, < FILE
  redirections followed; filecheck and the other tools left out), and each one that has
  --verify-diagnostics once more without it (the diagnostics' text and locations themselves):
  exit status, stdout and stderr.

Normalised: the checkout's path (to paths relative to it: any clone gives the same hashes;
copy-opt gets relative paths to begin with, as debug guards put them, and their length, in
the IR), lit's temporary folder (to %t) and the times of --mlir-timing/--time-passes. The project
comes from the checkout this file is in (its root goes first on sys.path and PYTHONPATH, ahead
of the venv's editable install, which the backend's worker process would import otherwise);
copy-opt runs as `python -m copy_tools.copy_opt` in it. `--compare` lists each key that
differs or is on one side only, and exits with status 1 if there is one.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import itertools
import json
import multiprocessing
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # cache the bytecode, outside the checkout:
os.environ.setdefault("PYTHONPYCACHEPREFIX", f"{tempfile.gettempdir()}/fingerprint-pycache")
sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]
ENV = {**os.environ, "COLUMNS": "100", "LINES": "50"}  # the width of copy-opt --help
ENV.pop("COPY_OPT_TRACEBACK", None)
Records = dict[tuple[str, ...], str]
DROPPED = ("2>&1", ">/dev/null")  # redirections that change nothing here (both streams kept)

SWEEPS = """
# BUILDER[,BUILDER] ARGS: a call for each combination of the lists among ARGS; a `legal` one
# also legalized to sm_80 and to sm_86. T: the targets, T4: four of them, F: six dtypes,
# TF: [True, False], H: L2 hints (named, fractional), P: the fractional L2 policies.
tma_copy [(256, 256), (999, 996), (130, 200), (1, 16)], F, [(64, 64), (32, 64), (1, 16)]
tma_copy (256, 256), ["f32", "bf16"], [(64, 32), (64, 64), (8, 8)], swizzle=[32, 64, 128, 48]
legal tma_copy (256, 256), "f32", reduce=[None, "add", "min", "max"]
tma_copy (256, 256), "i32", reduce="add min max umin inc dec and or xor".split()
tma_copy (256, 256), ["bf16", "f16", "f64", "i64", "ui32", "i8"], reduce=["add", "min", "inc"]
legal tma_copy (256, 256), ["bf16", "f16", "ui32"], reduce=["add", "inc"]
legal tma_copy [(999, 996), (200, 136)], ["f32", "i32"], reduce=["add", "dec"]
legal tma_copy (0, 0), ["f32", "bf16"], [(64, 64), (32, 64)], dynamic=True, reduce=[None, "add"]
tma_copy (300, 200), "f32", (64, 64), cache_hints=H
tma_copy (300, 200), "f32", (64, 64), cache_hints=H[-6:], reduce="add", prefetch_destination=TF
tma_copy (300, 200), "f32", l2_promotion=[0, 64, 256, 32], prefetch_destination=TF
tma_copy (256, 256), "f32", reduce=[None, "add"], target=[*T, "sm_99"]
cp_async_copy [(1000, 1000), (130, 264), (3, 5)], ["f32", "f16", "bf16", "i8", "f64"]
cp_async_copy (1024, 1024), "f32", [(16, 64), (64, 256), (32, 32), (7, 128)]
cp_async_copy [(1024, 1024), (0, 0)], ["f32", "i8"], dynamic=TF, target=[*T, "sm_99"]
bulk_copy [1000, 4096, 1001], ["f32", "bf16"], [256, 250, 4096], prefetch=TF
bulk_copy [1024, 1000], ["i8", "f64"], 256
legal bulk_copy 1000, "f32", 256, prefetch=TF, target=T4
multicast_copy [(256, 256), (1000, 1000)], ["f32", "i8"], [(64, 64), (2, 64)]
multicast_copy [(1024, 1024), (256, 512)], ["bf16", "f16"], [(128, 64), (32, 128)]
multicast_copy (64, 1000), "f32", [(4, 1000), (2, 1000), (4, 500)], implementation="bulk"
legal multicast_copy (256, 256), "f32", target=[*T4, "sm_90a", "sm_100f", "sm_103a", "sm_120a"]
# broadcast_*: multicast, unicast and rank-major variants; the tests' bad parameters
broadcast_copy,broadcast_row_dot (1000, 1000), ["f32", "bf16"], (64, 256), cluster=[2, 4],
    multicast=TF, order=["cluster", "rank_major", "random"]
broadcast_copy,broadcast_row_dot (256, 256), "f32", cluster=[1, 8, 16], target=[*T4, "sm_99"]
broadcast_copy,broadcast_row_dot (256, 256), "f32", [(30, 64), (4, 8), (64, 6), (256, 256),
    (64, 512), (64, 48), (1, 256)], cluster=4, multicast=TF
broadcast_copy,broadcast_row_dot [(130, 32), (100, 100), (1024,)], ["bf16", "f16", "i32"],
    (32, 64), cluster=4
legal broadcast_copy,broadcast_row_dot [(256, 512), (130, 264)], "f32", cluster=[2, 4, 8]
# tma_copy_pipelined: stage counts (to the limit and past it), tiles, reduce, bulk, targets
legal tma_copy_pipelined (1024, 1024), "f32", (64, 64), stages=[1, 2, 3, 4, 5, 6]
tma_copy_pipelined (1600, 864), "i16", [(100, 48), (64, 48)], stages=[1, 3, 99]
tma_copy_pipelined (256, 512), "f16", (32, 64), stages=[2, 5]
legal tma_copy_pipelined (512, 256), "f32", (64, 64), reduce=["add", "min"]
tma_copy_pipelined (64, 1000), "f32", [(2, 1000), (2, 500)], implementation="bulk"
tma_copy_pipelined [(1024, 1024), (1000, 1000)], "f32", [(128, 128), (8, 16), (256, 256)],
    stages=[-2, 0, 1, 3, 4, 32, 33]
tma_copy_pipelined (512, 512), "f32", (64, 64), stages=[1, 2], target=[*T, "sm_91"]
# ws_*: stages, in flight, tiles, dtypes, warps, buffers, maxnreg, hints, bad sets, targets
ws_copy (1000, 1000), "f32", stages=[1, 2, 3, 4, 5, 6], in_flight=[0, 1]
ws_copy (1024, 1024), "f32", [(64, 128), (32, 128)], stages=[None, 3], in_flight=[0, 2]
legal ws_copy (200, 300), "f32", (32, 128), stages=[None, 3], in_flight=[0, 2]
ws_copy (4096, 4096), "f32", [(8, 256), (32, 256), (64, 256)], stages=2
ws_copy (513, 776), ["bf16", "f16", "i8", "f64"]
ws_copy (130, 264), "f32", stages=2, cache_hints=H[-8:]
ws_copy (100, 100), "f32", [(300, 8), (64, 128)], stages=[0, 2, 5], target=T4
ws_elementwise ["add", "axpb", "mul"], (513, 776), ["f32", "bf16", "f16", "i32"], consumer_warps=4
ws_elementwise "cast", (513, 776), ["f32", "bf16", "f16"], out_dtype=["f32", "bf16", "f16", None]
ws_elementwise "add", (256, 256), "f32", consumer_warps=[0, 1, 2, 6, 8, 16, 17]
ws_elementwise ["add", "axpb"], (300, 200), "f32", (32, 128), stages=[1, 2], out_buffers=[1, 2, 3]
legal ws_elementwise ["add", "axpb", "cast"], (256, 256), "f32", (32, 128), stages=2,
    out_dtype="bf16"
ws_elementwise "add", (513, 776), "bf16", consumer_warps=[4, 6, 8], maxnreg=(40, 232)
ws_elementwise "axpb", (300, 200), "f32", (32, 128), stages=2, cache_hints=H[-4:]
ws_elementwise "add", (256, 256), "f32", (32, 128), stages=2, target=T4
# ws_row_sum: the GPU test's cases, its bad parameters, stage defaults, hints, targets
ws_row_sum [(1000, 1000), (512, 256), (2048, 512)], ["f32", "bf16"], (64, 128), stages=[2, 4]
ws_row_sum [(2010, 1024), (16384, 2048)], "f32", (125, 128), stages=3
ws_row_sum [(130, 264), (300, 96), (3, 4)], ["f16", "f32"], [(10, 64), (125, 32), (2, 32)],
    stages=1, consumer_warps=[3, 4, 5]
ws_row_sum (1024, 1024), ["f32", "bf16"], [(64, 128), (125, 128), (256, 256)], consumer_warps=8
ws_row_sum (256, 256), ["i32", "f32"], [(64, 48), (64, 512), (125, 32)]
ws_row_sum [(64, 130), (0, 64)], ["f32", "bf16"], (64, 128)
ws_row_sum (256, 256), "f32", (64, 128), consumer_warps=[0, 17], stages=[0, 2]
ws_row_sum (256, 256), "f32", [(256, 128), (128, 128), (256, 256)], stages=[1, 3, 4],
    consumer_warps=[2, 16]
ws_row_sum (256, 256), "f32", target=T4, cache_hint=[None, "evict_first", P[2]]
legal ws_row_sum [(256, 256), (130, 256)], ["f32", "bf16"], (64, 128), stages=2
# dsmem_exchange: modes x dtypes x clusters x tiles (edge tiles, folds that do not fit)
dsmem_exchange [(100, 128), (100, 256)], ["f32", "i32", "bf16"], (64, 64),
    cluster=[2, 4], mode=["store", "reduce", "bulk"]
dsmem_exchange (64, 192), ["f32", "f64"], (64, 64), cluster=2, mode=["store", "sideways"]
legal dsmem_exchange (100, 248), ["f32", "i32"], (8, 64), cluster=2, mode=["store", "reduce"]
legal dsmem_exchange (100, 504), ["f32", "bf16"], (32, 64), cluster=[2, 4], mode="bulk"
dsmem_exchange [(64, 512), (256, 512)], "f32", [(8, 64), (64, 64)], cluster=[4, 8]
legal dsmem_exchange (64, 512), "f64", (8, 64), cluster=8
dsmem_exchange (100, 1016), "i32", (64, 128), cluster=[2, 4, 8], mode="reduce"
dsmem_exchange (256, 256), "f32", target=T4
# im2col_gather: convolutions ("conv", shape, filter, stride, padding, dilation), options
im2col_gather ("conv", (2, 9, 7, 16), 3, 1, 1, 1), ["f16", "f32"], pixels=[16, 64, 128, 512],
    channels=[None, 8, 12]
im2col_gather [("conv", (2, 9, 7, 8), 3, 1, 0, 1), ("conv", (2, 9, 7, 8), 3, 2, 2, 1),
    ("conv", (1, 13, 11, 16), 3, 1, 2, 2), ("conv", (2, 13, 11, 16), 3, 2, 0, 2),
    ("conv", (1, 11, 13, 16), 3, 2, 2, 2), ("conv", (2, 11, 9, 16), 3, 2, 1, 1),
    ("conv", (2, 9, 7, 64), 3, 1, 1, 2), ("conv", (2, 9, 7, 12), 3, 1, 1, 1)], ["f32", "f16"]
im2col_gather ("conv", (2, 7, 9, 64), 3, 1, 1, 1), "f16", swizzle=[16, 32, 64, 128]
im2col_gather ("conv", (1, 9, 7, 64), 3, 2, 1, 1), "f32", channels=32, swizzle=128
im2col_gather ("conv", (3, 5, 7, 16), 1, 1, 0, 1), "f16", channels=8
legal im2col_gather [("conv", (2, 9, 11, 8), (2, 3), (2, 1), (1, 0), (1, 2)),
    ("conv", (2, 9, 7, 16), 3, 1, 1, 1)], "f32"
im2col_gather ("conv", (2, 9, 7, 16), 3, 2, 1, 2), "f16", cache_hint=["evict_last", P[2], "x"]
im2col_gather ("conv", (2, 9, 7, 16), 3, 2, 1, 2), "f16", target=T4
# grouped_copy (tensor maps rewritten in the kernel), grouped_view_copy (cp.async views)
legal grouped_copy [3, 4], [4096, 11139], [(64, 129), (37, 70)], persistent=TF
grouped_copy 4, 65536, (100, 300), ["bf16", "f16"], [(16, 64), (64, 64), (8, 6)], persistent=TF
grouped_copy 3, 11139, (64, 129), target=[*T4, "sm_120a"]
grouped_view_copy 3, 4096, ["f32", "f16", "bf16", "i8", "f64"], [(8, 64), (16, 8)], barrier=TF
grouped_view_copy 3, 4096, "f32", (8, 64), target=[*T, "sm_99"]
"""


def load(*names: str):
    """The first module of `names` that this checkout has (never one that another
    checkout's editable install supplies for a package this one lacks)."""
    for name in names:
        spec = importlib.util.find_spec(name.split(".")[0])
        where = spec and (spec.origin or next(iter(spec.submodule_search_locations or []), ""))
        if where and Path(where).resolve().is_relative_to(REPO):
            return importlib.import_module(name)
    raise ImportError(f"none of {', '.join(names)} in {REPO}")


def normalise(text: str) -> str:
    return re.sub(re.escape(str(REPO)) + r"(/|(?![\w.-]))", lambda m: "" if m[1] else ".", text)


def error_text(exc: BaseException) -> str:
    extra = "".join(f"\n{a}: {getattr(exc, a)}" for a in ("note", "rules") if getattr(exc, a, 0))
    return normalise(f"{type(exc).__name__}: {exc}{extra}")


def copy_opt(args: list[str], stdin: bytes = b"") -> tuple[subprocess.CompletedProcess, str]:
    """Runs this checkout's copy-opt: the run, and its exit status, stdout and stderr."""
    command = [sys.executable, "-m", "copy_tools.copy_opt", *args]
    run = subprocess.run(command, input=stdin, capture_output=True, cwd=REPO, env=ENV)
    out, err = run.stdout.decode(errors="replace"), run.stderr.decode(errors="replace")
    return run, normalise(f"exit {run.returncode}\n--- stdout\n{out}--- stderr\n{err}")


def ptx_only(llvm_ir: str, target: str, **_: object) -> SimpleNamespace:
    """The backend's pending PTX + cubin request, made PTX-only: the PTX when asked for."""
    ptx, ptx_only.calls = load("passes.backend").compile_ptx, ptx_only.calls + 1
    return SimpleNamespace(result=lambda: (ptx(llvm_ir, target), b""), discard=lambda: None)


ptx_only.calls = 0


def compiled(module, target: str | None = None) -> dict[str, str]:
    """compile_module's LLVM IR, PTX and ABI, or its error (it makes no cubin here)."""
    load("passes.backend").submit_ptx_and_cubin = ptx_only
    ctx = load("copy_tools.universe").make_context()
    try:
        out = load("passes.pipeline").compile_module(module, ctx, target)
    except Exception as exc:
        return {"error": error_text(exc)}
    if not ptx_only.calls:
        raise RuntimeError("compile_module asks no backend.submit_ptx_and_cubin: fix ptx_only")
    return {"llvm": out.llvm_ir, "ptx": out.ptx, "abi": normalise(out.abi.to_json())}


def recording(work) -> dict[str, str]:
    """work()'s records, and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = work()
    if caught:
        lines = (f"{w.category.__name__}: {w.message}" for w in caught)
        records["warnings"] = normalise("\n".join(lines))
    return records


def targets() -> list[str]:
    return list(load("facts.target", "copy_dialect.target").TARGETS)


def example_job(name: str) -> Records:
    from xdsl.parser import Parser

    text, records = (REPO / "examples" / name).read_text(), {}
    for target in targets():

        def work(target=target) -> dict[str, str]:
            ctx = load("copy_tools.universe").make_context()
            try:
                module = Parser(ctx, text, f"examples/{name}").parse_module()
            except Exception as exc:
                return {"error": error_text(exc)}
            return compiled(module, target)

        outputs = recording(work)
        if "error" in outputs:  # and copy-opt's located diagnostics
            args = [f"examples/{name}", "--target", target, "-t", "ptx"]
            outputs["copy-opt"] = copy_opt(args)[1]
        records.update({("example", name, target, kind): v for kind, v in outputs.items()})
    return records


# --- the builder API --------------------------------------------------------------------------


def decode(value):
    """A spec's value as the builder takes it: ("conv", ...) a Conv2d, ("policy", ...) a
    CachePolicy, tuples element by element."""
    if isinstance(value, tuple) and value[:1] == ("conv",):
        shape, filt, stride, pad, dil = value[1:]
        kernels = load("frontends.kernels", "copy_dialect.kernels")
        return kernels.conv2d(shape, filt, stride=stride, padding=pad, dilation=dil)
    if isinstance(value, tuple) and value[:1] == ("policy",):
        ops, (primary, fraction, secondary) = load("copy_dialect.ops"), value[1:]
        second = secondary and ops.L2Policy(secondary)
        return ops.CachePolicy(ops.L2Policy(primary), fraction, second)
    return tuple(map(decode, value)) if isinstance(value, tuple) else value


def fmt(value) -> str:
    if isinstance(value, tuple) and value[:1] in (("conv",), ("policy",)):
        return f"{value[0]}(" + ",".join(map(fmt, value[1:])) + ")"
    if isinstance(value, tuple | list):
        if value and all(type(v) is int for v in value):
            return "x".join(map(str, value))
        return "(" + ",".join(map(fmt, value)) + ")"
    return str(value)


def spec_key(spec) -> tuple[str, str, str]:
    name, args, kwargs = spec
    named = (f"{k}={fmt(v)}" for k, v in kwargs.items())
    return "builder", name, ",".join([*map(fmt, args), *named])


def builder_job(spec) -> Records:
    name, args, kwargs = spec
    kwargs = {k: decode(v) for k, v in kwargs.items()}
    legalize = kwargs.pop("legalize", None)

    def work() -> dict[str, str]:
        try:
            builder = getattr(load("frontends.kernels", "copy_dialect.kernels"), name)
            module = builder(*map(decode, args), **kwargs)
        except Exception as exc:
            return {"error": error_text(exc)}
        records = {"mlir": str(module)}
        if legalize:
            ctx = load("copy_tools.universe").make_context()
            try:
                load("passes.legalize").CopyLegalizePass(target=legalize).apply(ctx, module)
            except Exception as exc:
                return {**records, "error": error_text(exc)}
            records["legalized"] = str(module)
        return {**records, **compiled(module, legalize)}

    return {(*spec_key(spec), kind): text for kind, text in recording(work).items()}


def sweep(name: str, *args, **kwargs) -> list:
    """A spec (builder, args, kwargs) for each combination of the lists among the arguments."""
    axes = [v if isinstance(v, list) else [v] for v in [*args, *kwargs.values()]]
    n = len(args)
    return [(name, c[:n], dict(zip(kwargs, c[n:], strict=True))) for c in itertools.product(*axes)]


def builder_specs() -> list:
    fractions = [("evict_last", 0.5, None), ("evict_last", 0.75, "evict_first"),
                 ("evict_first", 0.25, "evict_unchanged"), ("evict_normal", 1.0, None),
                 ("evict_unchanged", 0.5, "evict_first")]  # fmt: skip
    policies = [("policy", *f) for f in fractions]
    named = ["evict_normal", "evict_first", "evict_last", "evict_unchanged"]
    hints = [*itertools.product([*named, None], named)]
    hints += zip(policies, [*policies[1:], None], strict=True)
    names = {"sweep": sweep, "T": targets(), "TF": [True, False], "H": hints, "P": policies}
    names |= {"T4": ["sm_80", "sm_90", "sm_100a", "sm_120"], "F": "f32 bf16 f16 i8 f64 i32".split()}
    specs = []
    for line in re.sub(r"\n {4}", " ", SWEEPS).splitlines():
        if line and not line.startswith("#"):
            legal, line = line.startswith("legal "), line.removeprefix("legal ")
            builders, args = line.split(" ", 1)
            for builder in builders.split(","):
                found = eval(f"sweep({builder!r}, {args})", names)
                specs += found
                for target in ("sm_80", "sm_86") if legal else ():
                    specs += [(n, a, {**k, "legalize": target}) for n, a, k in found]
    return list({spec_key(spec): spec for spec in specs}.values())  # each once


# --- lit: the copy-opt invocations of the RUN lines -------------------------------------------


def run_lines(path: Path) -> list[str]:
    """The RUN lines of a lit test, continuations joined, lit.cfg's substitutions made."""
    cfg = (REPO / "lit_tests" / "lit.cfg").read_text()
    subs = re.findall(r'\(\s*"([A-Z_]+)",\s*((?:"[^"]*"\s*)+),?\s*\)', cfg)
    lines = re.findall(r"RUN:(.*)$", path.read_text(), re.M)
    lines = re.sub(r"\\\n", " ", "\n".join(line.strip() for line in lines)).splitlines()
    for name, body in subs:
        value = "".join(re.findall(r'"([^"]*)"', body))
        lines = [line.replace(name, value) for line in lines]
    return lines


def lit_job(rel: str) -> Records:
    records: Records = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Paths relative to the checkout (copy-opt runs in it): debug guards embed them.
        subs = {"%s": f"lit_tests/{rel}", "%S": str(Path("lit_tests", rel).parent)}
        subs |= {"%t": f"{tmp}/t", "%%": "%"}
        pattern = re.compile("|".join(map(re.escape, subs)))

        def expand(word: str) -> str:
            return pattern.sub(lambda m: subs[m[0]], word)

        def record(shown: list[str], args: list[str], stdin: bytes) -> bytes:
            run, text = copy_opt(args, stdin)
            text = text.replace(f"{tmp}/t", "%t").replace(tmp, "%T")
            if {"--mlir-timing", "--time-passes"} & set(args):
                text = re.sub(r"\( *T%\)", "(P%)", re.sub(r" *\d+\.\d+(e-?\d+)?", " T", text))
            records.setdefault(("lit", *Path(rel).parts, " | ".join(shown)), text)
            return run.stdout

        for line in run_lines(REPO / "lit_tests" / rel):
            stdin, shown, words = b"", [], shlex.split(line)
            for stage in (list(g) for bar, g in itertools.groupby(words, "|".__eq__) if not bar):
                while stage and (stage[0] in ("not", "env") or re.match(r"\w+=", stage[0])):
                    stage.pop(0)
                if not stage or stage[0] != "copy-opt" or "cubin" in stage:
                    break
                args, out_file, rest = [], None, iter(stage[1:])
                for word in rest:
                    word += next(rest) if word in (">", "<") else ""
                    if word in DROPPED:
                        continue
                    if word[0] == ">":
                        out_file = expand(word[1:])
                    elif word[0] == "<":
                        stdin = Path(expand(word[1:])).read_bytes()
                    else:
                        args.append(expand(word))
                kept = [w if w in ("<", ">") else shlex.quote(w) for w in stage if w not in DROPPED]
                if (flag := "--verify-diagnostics") in args:  # and the diagnostics themselves
                    plain = [w for w in kept if w != flag]
                    record([*shown, " ".join(plain)], [a for a in args if a != flag], stdin)
                shown.append(" ".join(kept))
                stdin = record(shown, args, stdin)
                if out_file:
                    Path(out_file).write_bytes(stdin)
    return records


# --- the driver -------------------------------------------------------------------------------


def run_job(job) -> Records:
    kind, arg = job
    return {"example": example_job, "builder": builder_job, "lit": lit_job}[kind](arg)


def all_jobs(only: str) -> list:
    """The jobs, the longest first: lit tests, examples, builder calls."""
    lit = sorted(p for p in (REPO / "lit_tests").rglob("*.mlir") if "Inputs" not in p.parts)
    jobs = [("lit", str(p.relative_to(REPO / "lit_tests"))) for p in lit]
    jobs += [("example", p.name) for p in sorted((REPO / "examples").glob("*.mlir"))]
    jobs += [("builder", spec) for spec in builder_specs()]
    return [job for job in jobs if job[0].startswith(only)]


def dump_path(root: Path, parts: tuple[str, ...]) -> Path:
    safe = [re.sub(r"[^\w.,=+%@{}()\[\]-]", "_", p)[:200] for p in parts]
    return root.joinpath(*(f"_{p}" if p in (".", "..") else p for p in safe))


def compare(a: str, b: str) -> int:
    left, right = (json.loads(Path(p).read_text())["outputs"] for p in (a, b))
    keys = sorted(left.keys() | right.keys())
    bad = [k for k in keys if left.get(k) != right.get(k)]
    for key in bad:
        where = "differs" if key in left and key in right else f"only in {a if key in left else b}"
        print(f"{where}: {key}")
    print(f"{len(bad)} of {len(keys)} outputs differ or are missing" if bad else "", end="")
    print(f"identical: {len(keys)} outputs" if not bad else "")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the fingerprints as JSON to this file")
    parser.add_argument("--dump", help="write each output's text to a file under this folder")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument("--only", default="", help="only the jobs of a kind: lit, example, ...")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two --out files")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    start, records, jobs = time.perf_counter(), {}, all_jobs(args.only)
    if args.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            for result in pool.imap_unordered(run_job, jobs):
                records.update(result)
    else:
        for job in jobs:
            records.update(run_job(job))
    digests = {k: hashlib.sha256(text.encode()).hexdigest() for k, text in records.items()}
    outputs = {"/".join(k): digests[k] for k in sorted(records)}
    print("\n".join(f"{digest}  {key}" for key, digest in outputs.items()))
    for parts, text in records.items() if args.dump else ():
        file = dump_path(Path(args.dump), parts)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
    kinds = Counter(k[0] + "/" + k[-1] if k[0] != "lit" else k[0] for k in records)
    counts = dict(sorted(kinds.items()))
    if args.out:
        git = ["git", "-C", str(REPO), "rev-parse", "HEAD"]
        head = subprocess.run(git, capture_output=True, text=True).stdout.strip()
        summary = {"commit": head, "counts": counts, "outputs": outputs}
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    seconds = time.perf_counter() - start
    print(f"{len(outputs)} outputs {counts} in {seconds:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
