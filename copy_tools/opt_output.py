"""copy-opt's input and output: reading the input, checking and writing `-o` (atomically,
never over the input), and the GPU outputs `-t llvm|ptx|cubin` (LLVM IR, PTX, cubin + ABI)."""

from __future__ import annotations

import os
import sys
import tempfile

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from copy_tools.opt_errors import STDIN_NAME, ToolError, UsageError

GPU_OUTPUTS = ("llvm", "ptx", "cubin")
"""-t values that lower to LLVM and compile with our backend."""


Binary = tuple[bytes, str]
"""A cubin and its ABI (JSON), written to FILE and FILE.json."""


def gpu_output_target() -> None:
    """Placeholder factory: CopyOptMain.output_resulting_program handles GPU outputs."""
    raise AssertionError("GPU outputs are printed by CopyOptMain.output_resulting_program")


def gpu_output(
    prog: ModuleOp, fmt: str, gpu_target: str | None, gpu_arch: str | None = None
) -> tuple[str, Binary | None]:
    """What `-t llvm|ptx|cubin` prints for a lowered module, and for cubin the binary to
    write instead: (cubin, the kernels' ABI as JSON); `gpu_arch`: the cubin's GPU, where
    it is not the target's own."""
    from copy_dialect.ops import module_target
    from facts.target import check_arch, target_named
    from passes import backend, translate_llvm
    from passes.abi import kernel_abis
    from passes.backend_targets import performance_warning

    name = module_target(prog, gpu_target)
    if name is None:
        raise DiagnosticException(
            f"-t {fmt} needs a GPU target: give the module copy.target = "
            '#copy.target<"sm_90a"> or pass --target sm_90a'
        )
    # Resolved once here and passed on (the arguments were checked to name targets).
    target = target_named(name)
    arch = None if gpu_arch is None else target_named(gpu_arch, "GPU arch")
    if arch is not None:
        try:
            check_arch(target, arch)
        except ValueError as exc:
            raise DiagnosticException(f"--arch {gpu_arch}: {exc}") from None
    llvm_ir = translate_llvm.translate_module(prog)
    if fmt == "llvm":
        return llvm_ir, None
    if fmt == "ptx":
        return backend.compile_ptx(llvm_ir, target), None
    # The arch was checked above: the backend does not check it again.
    pending = backend.submit_ptx_and_cubin(llvm_ir, target, arch=arch)
    _, cubin = pending.result()
    for note in pending.notes:
        print(f"warning: {performance_warning(name, note)}", file=sys.stderr)
    return "", (cubin, kernel_abis(prog, name, gpu_arch).to_json())


def read_input(path: str | None) -> tuple[str, bytes]:
    """The input's name and bytes ('-' or None: stdin); a UsageError if it cannot be read."""
    if path in (None, "-"):
        return STDIN_NAME, sys.stdin.buffer.read()
    assert path is not None
    if os.path.isdir(path):
        raise UsageError(f"input '{path}' is a directory; expected an MLIR file (or '-' for stdin)")
    try:
        with open(path, "rb") as f:
            return path, f.read()
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise UsageError(
            f"cannot read input file '{path}': {reason} (check the path and its "
            "permissions, or use '-' to read stdin)"
        ) from None


def checked_output_path(out: str | None, inp: str | None) -> str | None:
    """The -o path (None for stdout), refused early if it cannot or must not be written."""
    if out in (None, "-"):
        return None
    assert out is not None
    if inp not in (None, "-") and os.path.exists(out):
        assert inp is not None
        if os.path.samefile(inp, out):
            raise UsageError(
                f"output file '{out}' is the input file; refusing to overwrite the "
                "input (choose another -o path)"
            )
    if os.path.isdir(out):
        raise UsageError(f"cannot write output file '{out}': it is a directory")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise UsageError(f"cannot write output file '{out}': directory '{parent}' does not exist")
    if not os.access(parent, os.W_OK) or (os.path.exists(out) and not os.access(out, os.W_OK)):
        raise UsageError(f"cannot write output file '{out}': permission denied")
    return out


def write_stdout(text: str) -> None:
    stream = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
    if stream is None:
        sys.stdout.write(text)
    else:
        stream.write(text.encode("utf-8"))
    sys.stdout.flush()


def write_file_atomically(path: str, text: str | bytes) -> None:
    """Write `path` through a temporary file and a rename, so it is never half-written.

    Special files (/dev/null, pipes) are written directly.
    """
    target = os.path.realpath(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "wb") as f:
            f.write(data)
        return
    directory = os.path.dirname(target)
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        mode = os.stat(target).st_mode & 0o7777 if os.path.exists(target) else _default_mode()
        os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as exc:
        if os.path.exists(temp):
            os.unlink(temp)
        raise ToolError(f"cannot write output file '{path}': {exc.strerror or exc}") from None


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
