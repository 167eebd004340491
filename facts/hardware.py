"""The measured hardware facts (`hardware.toml`), as the constants the checks read.

Pure data, no xDSL: the verifier, the lowering and the runtime read the same values.
docs/hardware.md says how each was measured; `scripts/measure_hardware.py` measures them
again on a GPU and compares with `hardware.toml`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

_DATA: dict[str, Any] = tomllib.loads(
    (resources.files("facts") / "hardware.toml").read_text(encoding="utf-8")
)


_MAP = _DATA["tensor_map"]
_SMEM = _DATA["smem"]
_COPIES = _DATA["copies"]
_OVERRUN = _DATA["store_overrun"]

MACHINE: dict[str, str] = dict(_DATA["machine"])
"""The GPU, compute capability and driver the facts were measured on."""

# cuTensorMapEncodeTiled (TR1..TR8)
MIN_RANK: int = _MAP["min_rank"]
MAX_RANK: int = _MAP["max_rank"]
INTERLEAVE_MIN_RANK: int = _MAP["interleave_min_rank"]
MAX_GLOBAL_DIM: int = _MAP["max_global_dim"]
GLOBAL_STRIDE_MULTIPLE: int = _MAP["global_stride_multiple"]
MAX_GLOBAL_STRIDE: int = _MAP["max_global_stride"]
"""Global strides (bytes) stay below this."""
GLOBAL_ADDRESS_ALIGNMENT: int = _MAP["global_address_alignment"]
MAX_BOX_DIM: int = _MAP["max_box_dim"]
BOX_ROW_MULTIPLE: int = _MAP["box_row_multiple"]
"""The innermost box dim times the element size is a multiple of this many bytes."""
MAX_ELEMENT_STRIDE: int = _MAP["max_element_stride"]
SWIZZLE_SPANS: tuple[int, ...] = tuple(_MAP["swizzle_spans"])
ROW_AT_MOST_SPAN: bool = _MAP["row_at_most_span"]

# SMEM and the copies (TR10..TR17)
SMEM_ALIGNMENT: int = _SMEM["address_alignment"]
"""Every TMA SMEM address is a multiple of this many bytes (TR10)."""
SWIZZLE_PERIOD_ROWS: int = _SMEM["swizzle_period_rows"]
"""A swizzle pattern repeats every this many spans (TR11)."""
COORDINATE_BYTES_MULTIPLE: int = _COPIES["coordinate_bytes_multiple"]
MIN_STORE_COORDINATE: int = _COPIES["min_store_coordinate"]
NAN_FILL_FLOATS_ONLY: bool = _COPIES["nan_fill_floats_only"]
MAX_TX_COUNT: int = _COPIES["max_tx_count"]
"""An mbarrier's pending transaction count stays below this (TR17)."""

# TR19
STORE_CHUNK_BYTES: int = _OVERRUN["chunk_bytes"]
"""A TMA store or reduction writes whole chunks of this many bytes of the innermost dim."""


@dataclass(frozen=True)
class Overrun:
    """One measured TMA store past a 1-D tensor of `n` elements: `overwritten` elements after
    it were written."""

    element: str
    n: int
    overwritten: int


STORE_OVERRUNS: tuple[Overrun, ...] = tuple(
    Overrun(row["element"], n, over)
    for row in _OVERRUN["measured"]
    for n, over in zip(row["n"], row["overwritten"], strict=True)
)
STORE_OVERRUN_BOX_BYTES: int = _OVERRUN["box_bytes"]

# J10, J19: tensor memory (the PTX ISA's figures, not measured)
TMEM_LANES: int = _DATA["tmem"]["lanes"]
TMEM_MIN_COLUMNS: int = _DATA["tmem"]["min_columns"]
"""`tcgen05.alloc` allocates a power of 2 of at least this many 32-bit columns."""
TMEM_COLUMNS: dict[str, int] = dict(_DATA["tmem"]["columns"])
"""The 32-bit TMEM columns of a CTA, by target name; a target not listed has no TMEM."""
TMEM_MAX_COLUMNS: int = max(TMEM_COLUMNS.values())
"""The most columns of any target: the capacity of IR that names no target."""

# E1, E5
REDUCTION_OPS: tuple[str, ...] = tuple(_DATA["reductions"]["ops"])
"""The ops of cp.reduce.async.bulk.tensor (min and max without signedness: the map has it)."""
MEASURED_REDUCTIONS: dict[str, frozenset[str]] = {
    name: frozenset(ops) for name, ops in _DATA["reductions"].items() if name != "ops"
}
"""Every tensor-map type measured, with the reduction ops that ran on it (maybe none)."""
REDUCTIONS_BY_MAP: dict[str, frozenset[str]] = {
    name: ops for name, ops in MEASURED_REDUCTIONS.items() if ops and not name.endswith("_FTZ")
}
"""The map types the compiler encodes reductions with, and the ops each takes (the FTZ maps
ran too but the dialect has no flush-to-zero types)."""


def store_overrun_elements(n: int, element_bytes: int) -> int:
    """Elements a TMA store writes after a 1-D tensor of `n` elements (the model the
    measurement fits): up to the next whole chunk."""
    end = n * element_bytes
    return (-end % STORE_CHUNK_BYTES) // element_bytes


def swizzle_period(span: int) -> int:
    """Bytes after which a swizzle of `span` bytes repeats (TR11)."""
    return SWIZZLE_PERIOD_ROWS * span
