"""`ptxas` as a cross-check of the PTX the pipeline makes (the project does not need it): where
it is on PATH, it must assemble the PTX for the target."""

from __future__ import annotations

import subprocess
from pathlib import Path

from passes import backend


def check_ptxas(ptx: str, target: str, tmp_path: Path, context: str = "") -> None:
    """Assert that `ptxas -arch=target` assembles `ptx` (written under `tmp_path`), with its
    report and `context` (the kernel's text, say) as the failure's message; nothing where
    ptxas is not on PATH."""
    if not backend.ptxas_available():
        return
    source = tmp_path / "k.ptx"
    source.write_text(ptx)
    out = subprocess.run(
        ["ptxas", f"-arch={target}", str(source), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, f"{out.stderr}\n{context}" if context else out.stderr
