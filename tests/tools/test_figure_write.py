"""copy_tools.figure writes a picture whole or not at all (a temporary file, then a rename):
a reader of the path, another run of copy-layout's lit test among them
(lit_tests/copy-opt/copy-layout.mlir reads the SVG its previous RUN line wrote, at a path
every lit run of the file shares), never sees a half-written one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from copy_tools.figure import Figure, FigureError, Rect


def figure() -> Figure:
    picture = Figure(40, 20)
    picture.add(Rect(0, 0, 10, 10, "#ff0000", kind="chunk", tip="a chunk"))
    return picture


def test_the_svg_is_written_whole(tmp_path: Path):
    path = tmp_path / "x.svg"
    figure().write(path)
    assert path.read_text() == figure().svg()
    assert os.listdir(tmp_path) == ["x.svg"]  # no temporary file left


def test_a_failed_write_leaves_the_old_picture(tmp_path: Path, monkeypatch):
    path = tmp_path / "x.svg"
    path.write_text("<svg>the old picture</svg>\n")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(FigureError, match="No space left on device"):
        figure().write(path)
    assert path.read_text() == "<svg>the old picture</svg>\n"
    assert os.listdir(tmp_path) == ["x.svg"]
