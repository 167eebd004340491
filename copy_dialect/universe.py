"""Registers the copy dialect and its passes with xDSL (`xdsl.universe` entry point).

This is the project's one registration route: `copy-opt` and plain `xdsl-opt` both
read it through `Universe.get_multiverse()`.
"""

from xdsl.universe import Universe


def _copy():
    from copy_dialect.ops import Copy

    return Copy


COPY_UNIVERSE = Universe(
    all_dialects={"copy": _copy},
    all_passes={},
)
