"""The backend (passes/backend.py): the target table, the worker's isolation, nvJitLink."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from facts.target import TARGETS
from passes import backend
from passes.backend import (
    TARGET_CODEGEN,
    BackendError,
    compile_cubin,
    compile_ptx,
)
from passes.backend_worker import ALWAYS_COMPILE, REUSED, _Served

SMALL_KERNEL = """
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @scale(ptr addrspace(1) %p, i32 %n) #0 {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %slot = getelementptr i32, ptr addrspace(1) %p, i32 %tid
  %x = load i32, ptr addrspace(1) %slot, align 4
  %y = mul i32 %x, %n
  store i32 %y, ptr addrspace(1) %slot, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { "nvvm.reqntid"="128,1,1" }
"""

# TMA needs sm_90: for sm_80, instruction selection fails and LLVM aborts the process.
TMA_LOAD = """
target triple = "nvptx64-nvidia-cuda"

@smem = internal addrspace(3) global [4096 x i8] undef, align 1024
@bar = internal addrspace(3) global i64 undef, align 8

define ptx_kernel void @load(ptr byval([128 x i8]) align 64 "nvvm.grid_constant" %tmap) {
  %dst = addrspacecast ptr addrspace(3) @smem to ptr addrspace(7)
  call void @llvm.nvvm.cp.async.bulk.tensor.g2s.tile.2d(ptr addrspace(7) %dst,
      ptr addrspace(3) @bar, ptr %tmap, i32 0, i32 0, i16 0, i64 0, i1 false, i1 false, i32 0)
  ret void
}

declare void @llvm.nvvm.cp.async.bulk.tensor.g2s.tile.2d(ptr addrspace(7), ptr addrspace(3),
    ptr, i32, i32, i16, i64, i1, i1, i32)
"""


def is_cubin(data: bytes) -> bool:
    # ELF, 64-bit, machine EM_CUDA (190).
    return data[:5] == b"\x7fELF\x02" and int.from_bytes(data[18:20], "little") == 190


def test_target_table_covers_the_target_model():
    assert set(TARGET_CODEGEN) == set(TARGETS)


@pytest.mark.parametrize("target", list(TARGET_CODEGEN))
def test_every_target_compiles_to_ptx_and_cubin(target: str):
    cpu, features = TARGET_CODEGEN[target]
    ptx = compile_ptx(SMALL_KERNEL, target)
    version = features.removeprefix("+ptx")
    assert f".version {version[0]}.{version[1:]}\n.target {cpu}\n" in ptx
    assert ".entry scale(" in ptx
    assert ".reqntid 128, 1, 1" in ptx
    assert is_cubin(compile_cubin(ptx, target))


def test_cannot_select_is_a_backend_error_and_the_process_survives():
    backend.start_worker()
    with pytest.raises(BackendError) as info:
        compile_ptx(TMA_LOAD, "sm_80")
    message = str(info.value)
    assert "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.cp.async.bulk.tensor.g2s.tile.2d" in (
        message
    )
    assert "SIGABRT" in message
    # The next call gets a new worker.
    assert ".target sm_80" in compile_ptx(SMALL_KERNEL, "sm_80")
    assert backend.worker_pid() is not None
    # And the same IR is fine where TMA exists.
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in compile_ptx(TMA_LOAD, "sm_90a")


def test_parse_and_verifier_errors_keep_the_worker():
    compile_ptx(SMALL_KERNEL, "sm_90a")
    pid = backend.worker_pid()
    with pytest.raises(BackendError, match="expected type"):
        compile_ptx("define void @f( {", "sm_90a")
    with pytest.raises(BackendError, match="Instruction does not dominate all uses"):
        compile_ptx(
            "define void @f() {\n  %a = add i32 %b, 1\n  %b = add i32 %a, 1\n  ret void\n}",
            "sm_90a",
        )
    assert backend.worker_pid() == pid


def test_misspelled_intrinsic_is_rejected():
    # LLVM makes an unknown llvm.* function an external function instead of failing.
    ir = """
    define ptx_kernel void @k() {
      call void @llvm.nvvm.barrier.sync.misspelled(i32 0)
      ret void
    }
    declare void @llvm.nvvm.barrier.sync.misspelled(i32)
    """
    with pytest.raises(BackendError, match=r"unknown intrinsic llvm\.nvvm\.barrier\.sync\.misspel"):
        compile_ptx(ir, "sm_90a")


def test_nvjitlink_rejects_sm_100a_ptx_for_sm_90a():
    ptx = compile_ptx(SMALL_KERNEL, "sm_100a")
    with pytest.raises(BackendError, match="SM version specified by .target is higher") as info:
        compile_cubin(ptx, "sm_90a")
    assert "nvJitLink rejected the PTX for sm_90a" in str(info.value)
    assert info.value.log


def test_nvjitlink_rejects_broken_ptx():
    with pytest.raises(BackendError, match="nvJitLink rejected the PTX"):
        compile_cubin(".version 8.0\n.target sm_90a\n.address_size 64\nthis is not ptx\n", "sm_90a")


def test_unknown_target():
    with pytest.raises(BackendError, match="unknown target 'sm_75': expected one of sm_80"):
        compile_ptx(SMALL_KERNEL, "sm_75")
    with pytest.raises(BackendError, match="unknown target 'sm_75'"):
        compile_cubin("", "sm_75")


def test_a_worker_killed_from_outside_is_replaced():
    compile_ptx(SMALL_KERNEL, "sm_90a")
    pid = backend.worker_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while backend.worker_pid() == pid and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ".target sm_90a" in compile_ptx(SMALL_KERNEL, "sm_90a")
    assert backend.worker_pid() not in (None, pid)


def test_stop_and_restart():
    backend.stop_worker()
    assert backend.worker_pid() is None
    assert ".target sm_90" in compile_ptx(SMALL_KERNEL, "sm_90", opt_level=0)


def test_concurrent_callers_share_the_worker():
    results: list[str] = []

    def compile_some():
        for _ in range(3):
            results.append(compile_ptx(SMALL_KERNEL, "sm_89"))

    threads = [threading.Thread(target=compile_some) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 12
    assert all(".target sm_89" in ptx for ptx in results)


def test_llvm_message_drops_the_stack_dump():
    log = (
        "warning: something earlier\n"
        "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.foo\n"
        "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/\n"
        "Stack dump:\n"
        "0.\tProgram arguments: python\n"
    )
    message = backend._llvm_message(log)  # pyright: ignore[reportPrivateUsage]
    assert message == "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.foo"


@pytest.mark.skipif(not backend.ptxas_available(), reason="no ptxas on PATH (nothing needs it)")
def test_ptxas_accepts_the_ptx(tmp_path):
    import subprocess

    source = tmp_path / "k.ptx"
    source.write_text(compile_ptx(SMALL_KERNEL, "sm_90a"))
    subprocess.run(
        ["ptxas", "-arch=sm_90a", str(source), "-o", str(tmp_path / "k.cubin")], check=True
    )


BAD_ASM_KERNEL = """
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k() {
  call void asm sideeffect "this is not ptx;", ""()
  ret void
}
"""


def test_ptx_and_cubin_in_the_worker_equal_the_two_calls():
    for target in ("sm_80", "sm_90a", "sm_100a"):
        ptx, cubin = backend.compile_ptx_and_cubin(SMALL_KERNEL, target)
        assert ptx == compile_ptx(SMALL_KERNEL, target)
        assert cubin == compile_cubin(ptx, target)
        assert is_cubin(cubin)


def test_an_identical_request_gets_the_earlier_reply():
    """The worker answers a request it served before from memory (REUSED): the same PTX,
    cubin or rejection; another target or another IR is compiled."""
    ir = SMALL_KERNEL + f"; {time.time_ns()}\n"  # no earlier test sent this IR
    first: dict[str, float] = {}
    again: dict[str, float] = {}
    other: dict[str, float] = {}
    made = backend.compile_ptx_and_cubin(ir, "sm_90a", timings=first)
    assert backend.compile_ptx_and_cubin(ir, "sm_90a", timings=again) == made
    assert REUSED not in first
    assert list(again) == [REUSED]
    backend.compile_ptx_and_cubin(ir, "sm_100a", timings=other)
    assert REUSED not in other
    assert compile_ptx(ir, "sm_90a") == made[0]
    for _ in range(2):
        with pytest.raises(BackendError, match="nvJitLink rejected the PTX for sm_90a"):
            backend.compile_ptx_and_cubin(BAD_ASM_KERNEL, "sm_90a")


def test_always_compile_compiles_a_repeated_request(monkeypatch):
    monkeypatch.setenv(ALWAYS_COMPILE, "1")
    backend.stop_worker()  # the next request starts a worker that sees the variable
    try:
        again: dict[str, float] = {}
        backend.compile_ptx_and_cubin(SMALL_KERNEL, "sm_90a")
        backend.compile_ptx_and_cubin(SMALL_KERNEL, "sm_90a", timings=again)
        assert REUSED not in again
        assert "nvJitLink" in again
    finally:
        backend.stop_worker()


def test_the_remembered_replies_are_bounded_least_recently_used_first(monkeypatch):
    monkeypatch.setattr(_Served, "MAX_REPLIES", 2)
    monkeypatch.setattr(_Served, "MAX_BYTES", 10)
    served = _Served()
    for name in "abc":
        served.put(name, {"ptx": name})
    assert [served.get(name) for name in "abc"] == [None, {"ptx": "b"}, {"ptx": "c"}]
    served.get("b")  # now c is the least recently used
    served.put("d", {"ptx": "d" * 3})
    assert served.get("c") is None
    assert served.get("b") is not None
    served.put("e", {"ptx": "e" * 11})  # larger than the whole memory: not kept
    assert served.get("e") is None
    assert served.size == 4


def test_nvjitlink_rejection_in_the_worker_is_the_in_process_one():
    ptx = compile_ptx(BAD_ASM_KERNEL, "sm_90a")
    with pytest.raises(BackendError) as in_process:
        compile_cubin(ptx, "sm_90a")
    with pytest.raises(BackendError) as in_worker:
        backend.compile_ptx_and_cubin(BAD_ASM_KERNEL, "sm_90a")
    assert "nvJitLink rejected the PTX for sm_90a" in str(in_worker.value)
    assert str(in_worker.value) == str(in_process.value)
    assert in_worker.value.log == in_process.value.log


def test_llvm_errors_through_a_submitted_compile():
    with pytest.raises(BackendError, match="expected type"):
        backend.submit_ptx_and_cubin("define void @f( {", TARGETS["sm_90a"]).result()
    with pytest.raises(BackendError, match=r"unknown intrinsic llvm\.nvvm\.nope"):
        backend.compile_ptx_and_cubin(
            "define ptx_kernel void @k() {\n  call void @llvm.nvvm.nope()\n  ret void\n}\n"
            "declare void @llvm.nvvm.nope()\n",
            "sm_90a",
        )
    with pytest.raises(BackendError, match="Cannot select"):
        backend.compile_ptx_and_cubin(TMA_LOAD, "sm_80")
    assert ".target sm_90a" in compile_ptx(SMALL_KERNEL, "sm_90a")


def test_a_discarded_compile_frees_the_worker():
    """A caller that fails while the worker compiles (compile_lowered's verifier error)
    drops the reply; the next request gets its own answer, from another thread too."""
    pending = backend.submit_ptx_and_cubin(SMALL_KERNEL, TARGETS["sm_90a"])
    pending.discard()
    pending.discard()  # a second discard does nothing
    results: list[str] = []
    thread = threading.Thread(target=lambda: results.append(compile_ptx(SMALL_KERNEL, "sm_89")))
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the worker's lock was not released"
    assert ".target sm_89" in results[0]


SERIALIZING_PTX = """.version 8.6
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 out, .param .u64 n)
{
	.reg .pred p<2>;
	.reg .b32 %f<4>;
	.reg .b64 %rd<8>;
	mov.u32 %f0, 0; mov.u32 %f1, 0; mov.u32 %f2, 0; mov.u32 %f3, 0;
	ld.param.u64 %rd0, [n];
	mov.u32 %f0, %nctaid.x;
	cvt.u64.u32 %rd1, %f0;
	div.u64 %rd2, %rd0, %rd1;
	mov.u64 %rd3, 0;
	mov.u64 %rd4, 4611686293305360384;
LOOP:
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3},
		%rd4, %rd4, 1, 1, 1, 0, 0;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3},
		%rd4, %rd4, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	add.u64 %rd3, %rd3, 1;
	setp.lt.u64 p0, %rd3, %rd2;
	@p0 bra LOOP;
	ld.param.u64 %rd5, [out];
	st.global.v4.b32 [%rd5], {%f0, %f1, %f2, %f3};
	ret;
}
"""
"""wgmma in a loop whose trip count is a 64-bit division by %nctaid.x: the division is a
subroutine call in SASS, and ptxas serializes every wgmma of a function with a call."""


@pytest.mark.parametrize("division", ["div.u64", "div.u32"])
def test_serialized_wgmma_is_a_performance_note(division: str):
    """nvJitLink's info log keeps ptxas's C7509 for the 64-bit division (line 14 of the PTX),
    which `performance_warning` explains; the same loop counted by a 32-bit division has no
    note."""
    from cuda.bindings import nvjitlink

    from passes.backend_nvjitlink import link, nvjitlink_options, performance_notes
    from passes.backend_targets import AssemblerWarning, performance_warning

    ptx = SERIALIZING_PTX
    if division == "div.u32":
        ptx = ptx.replace(
            "cvt.u64.u32 %rd1, %f0;\n\tdiv.u64 %rd2, %rd0, %rd1;",
            "cvt.u32.u64 %f1, %rd0;\n\tdiv.u32 %f1, %f1, %f0;\n\tcvt.u64.u32 %rd2, %f1;",
        )
        assert "div.u64" not in ptx
    options = nvjitlink_options("sm_90a")
    handle = nvjitlink.create(len(options), options)
    try:
        assert link(nvjitlink, handle, ptx)[:4] == b"\x7fELF"
        notes = performance_notes(nvjitlink, handle)
    finally:
        nvjitlink.destroy(handle)
    if division == "div.u32":
        assert notes == []
        return
    assert len(notes) == 1
    assert notes[0].startswith("(C7509) Potential Performance Loss: wgmma.mma_async")
    warning = performance_warning("sm_90a", notes[0])
    assert isinstance(warning, AssemblerWarning)
    assert "64-bit division" in str(warning)
    assert "i32" in str(warning)
