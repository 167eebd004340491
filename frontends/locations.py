"""The Python line that made each op: locations for IR built with xDSL's builders.

An op built in Python has no location (`loc(unknown)`), so an error in it could only be
reported somewhere in the verifier. A `LocatingBuilder` (or the `ImplicitBuilder` here)
gives each op it inserts `loc("FILE":LINE:COL)` of the caller's line, the position copy-opt
gives a parsed op: an error is then reported at the user's own file and line, by copy-opt
(`--mlir-print-debuginfo` prints the locations, and copy-opt reads them back) and by the
Python entry points (`copy_tools.runtime`), with the line shown under it.

    from frontends.locations import LocatingBuilder, at
    b = LocatingBuilder(InsertPoint.at_end(block))
    b.insert(copy.AllocSmemOp(...))        # loc("model.py":12:5): this line
    with at("kernel.triton", 40, 9):       # a frontend's own location for what follows
        b.insert(copy.BarrierInitOp(...))

The caller is the first frame outside xDSL, this module and the helper modules that
`helper_module` names (the kernels' shared op helpers: an op they make is reported at the
line that called them). An op that already has a location keeps it, and one whose location
is unknown inside a located op is reported at the enclosing op's (as copy-opt does).
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType

from xdsl.builder import Builder
from xdsl.builder import ImplicitBuilder as _ImplicitBuilder
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.ir import Block, Operation, Region
from xdsl.rewriter import InsertPoint

_HELPERS: set[str] = {__name__}
"""Modules whose frames are not the caller: this one and the registered helpers."""

_SKIPPED_PACKAGES = ("xdsl", "contextlib", "copy_dialect", "passes")
"""Packages whose frames are never the caller: xDSL (the builder, `Operation.__init__` under
an implicit builder), `contextlib`, the dialect (an op's own constructor) and the passes
(the constructors of the NVVM ops kernels write their math in, `passes.nvvm`)."""


def helper_module(name: str) -> None:
    """Frames of module `name` (a module's `__name__`) are skipped: an op made by one of its
    functions is reported at the line that called it."""
    _HELPERS.add(name)


def caller_frame(frame: FrameType | None) -> FrameType | None:
    """The first frame from `frame` outwards that is not xDSL's, this module's or a helper's."""
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module not in _HELPERS and module.partition(".")[0] not in _SKIPPED_PACKAGES:
            return frame
        frame = frame.f_back
    return None


def frame_position(frame: FrameType) -> tuple[str, int, int]:
    """(file, line, column) of the expression a frame is running; columns are 1-based."""
    line, col = frame.f_lineno, 1
    index = frame.f_lasti // 2
    for start_line, _, start_col, _ in itertools.islice(
        frame.f_code.co_positions(), index, index + 1
    ):
        if start_line is not None:
            line = start_line
        if start_col is not None:
            col = start_col + 1
    return frame.f_code.co_filename, line, col


def python_location(frame: FrameType | None = None) -> FileLineColLoc | None:
    """The location of the caller's line (`caller_frame`), None if there is none."""
    found = caller_frame(frame if frame is not None else sys._getframe(1))
    if found is None:
        return None
    return file_location(*frame_position(found))


def file_location(file: str, line: int, col: int = 1) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(col))


@dataclass
class _Override(threading.local):
    location: FileLineColLoc | None = None


_override = _Override()


@contextlib.contextmanager
def at(file: str | FileLineColLoc, line: int = 1, col: int = 1) -> Iterator[FileLineColLoc]:
    """Ops inserted by locating builders inside the block get this location (a frontend's
    own: the line of its source language that the ops come from) instead of Python's."""
    location = file if isinstance(file, FileLineColLoc) else file_location(file, line, col)
    if not isinstance(location.filename, StringAttr) or line < 1 or col < 1:
        raise ValueError(f"expected a file name and a line and column >= 1, got {file!r}")
    previous = _override.location
    _override.location = location
    try:
        yield location
    finally:
        _override.location = previous


def stamp(op: Operation) -> None:
    """Give `op` the current location (`at`'s, else its caller's) unless it has one."""
    if not isinstance(op.location, UnknownLoc):
        return
    location = _override.location or python_location(sys._getframe(1))
    if location is not None:
        op.location = location


@dataclass
class LocatingBuilder(Builder):
    """xDSL's `Builder` that gives each op it inserts the caller's location (`stamp`)."""

    def __post_init__(self) -> None:
        self.operation_insertion_handler.append(stamp)


def locating(builder: Builder) -> Builder:
    """`builder` (any xDSL Builder), made to stamp the ops it inserts from now on."""
    if stamp not in builder.operation_insertion_handler:
        builder.operation_insertion_handler.append(stamp)
    return builder


def at_end(block: Block) -> LocatingBuilder:
    """A locating builder that appends to `block`."""
    return LocatingBuilder(InsertPoint.at_end(block))


@contextlib.contextmanager
def ImplicitBuilder(arg: Builder | Block | Region):  # noqa: N802 (xDSL's name)
    """xDSL's `ImplicitBuilder`, whose ops get the caller's location."""
    match arg:
        case Region():
            builder: Builder = at_end(arg.block)
        case Block():
            builder = at_end(arg)
        case Builder():
            builder = locating(arg)
    with _ImplicitBuilder(builder) as args:
        yield args
