"""Kernels that read and write swizzled SMEM from threads, for test_swizzle.py (compiles them)
and test_swizzle_gpu.py (runs them).

For each configuration (swizzle, element type, inner tile width in bytes, ring or not):
- `load_<name>`: a TMA load of a GMEM tile into swizzled SMEM, a barrier wait, then the
  block's 128 threads `memref.load` every element of the tile and `memref.store` the
  in-bounds ones into an unswizzled GMEM output: y == x;
- `store_<name>`: the threads `memref.load` the tile's in-bounds elements of x and
  `memref.store` them into swizzled SMEM, `copy.fence_async_shared` (a proxy fence and a
  block barrier), then a TMA store of the tile to y: y == x.
With `ring`, the SMEM buffer has two slots and the kernel uses slot 1 (a rank-3 buffer whose
slot starts one slot stride in). The GMEM arrays are not multiples of the tile where the
rules allow (rows always; columns unless the tile is 16 bytes wide, since a GMEM row must be
a multiple of 16 bytes)."""

from __future__ import annotations

from dataclasses import dataclass

THREADS = 128
ROWS = 40
"""Tile rows of a plain buffer (not a multiple of the 8-row swizzle period)."""
RING_ROWS = 64
"""Tile rows of a ring slot (a slot must start at a multiple of the swizzle period)."""

ESIZE = {"f32": 4, "f16": 2, "i8": 1}


@dataclass(frozen=True)
class Config:
    swizzle: int
    dtype: str
    width_bytes: int
    ring: bool = False

    @property
    def name(self) -> str:
        return f"s{self.swizzle}_{self.dtype}_w{self.width_bytes}" + ("_ring" if self.ring else "")

    @property
    def tile(self) -> tuple[int, int]:
        rows = RING_ROWS if self.ring else ROWS
        return rows, self.width_bytes // ESIZE[self.dtype]

    @property
    def shape(self) -> tuple[int, int]:
        """The GMEM array: 2 tiles and a part of a tile in each dim where allowed."""
        rows, cols = self.tile
        tail = 16 // ESIZE[self.dtype]  # the smallest legal part of a row: 16 bytes
        return 2 * rows + rows // 2 + 3, 3 * cols if self.width_bytes == 16 else 2 * cols + tail

    @property
    def grid(self) -> tuple[int, int]:
        rows, cols = self.tile
        return -(-self.shape[1] // cols), -(-self.shape[0] // rows)

    def smem_type(self) -> str:
        rows, cols = self.tile
        space = "#copy.smem" if self.swizzle == 16 else f"#copy.smem<swizzle = {self.swizzle}>"
        slots = "2x" if self.ring else ""
        return f"memref<{slots}{rows}x{cols}x{self.dtype}, {space}>"

    def gmem_type(self) -> str:
        return f"memref<{self.shape[0]}x{self.shape[1]}x{self.dtype}>"


def widths(swizzle: int) -> list[int]:
    """Inner tile widths in bytes: 16, a quarter span (the 64x8xf32 under 128B swizzle of
    issue E), half a span and the span, each once, and 48 (three of a span's 16-byte units)
    where it fits; 16, 64 and 128 unswizzled."""
    if swizzle == 16:
        return [16, 64, 128]
    found = {16, max(16, swizzle // 4), swizzle // 2, swizzle}
    return sorted(found | {48} if swizzle > 48 else found)


def configs() -> list[Config]:
    """Every swizzle x {f32, f16, i8} x `widths`, and a two-slot ring per swizzle."""
    found: list[Config] = []
    for swizzle in (16, 32, 64, 128):
        for dtype in ESIZE:
            found += [Config(swizzle, dtype, w) for w in widths(swizzle)]
        found.append(Config(swizzle, "f16", 128 if swizzle == 16 else swizzle, ring=True))
    return found


def _prologue(cfg: Config) -> str:
    rows, cols = cfg.tile
    return f"""
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = arith.constant {rows} : index
    %cols = arith.constant {cols} : index
    %n = arith.constant {rows * cols} : index
    %step = arith.constant {THREADS} : index
    %h = arith.constant {cfg.shape[0]} : index
    %w = arith.constant {cfg.shape[1]} : index
    %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %by = "gpu.block_id"() <{{dimension = #gpu<dim y>}}> : () -> index
    %tid = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
    %col = arith.muli %bx, %cols : index
    %row = arith.muli %by, %rows : index
    %tile = copy.alloc_smem : {cfg.smem_type()}"""


def _element_loop(cfg: Config, body: str) -> str:
    """The block's threads walk the tile's elements (%r, %c), in bounds of GMEM at (%gr, %gc)."""
    return f"""
    scf.for %i = %tid to %n step %step {{
      %r = arith.divui %i, %cols : index
      %c = arith.remui %i, %cols : index
      %gr = arith.addi %row, %r : index
      %gc = arith.addi %col, %c : index
      %in_r = arith.cmpi ult, %gr, %h : index
      %in_c = arith.cmpi ult, %gc, %w : index
      %in = arith.andi %in_r, %in_c : i1
      {body}
    }}"""


def _signature(name: str, cfg: Config) -> str:
    g = cfg.gmem_type()
    return (
        f"func.func @{name}(%x: {g}, %y: {g}) attributes {{gpu.kernel, "
        f"gpu.known_block_size = array<i32: {THREADS}, 1, 1>}} {{"
    )


def load_kernel(cfg: Config) -> str:
    g, s = cfg.gmem_type(), cfg.smem_type()
    slot, at = ("[%c1]", "%c1, ") if cfg.ring else ("", "")
    read = f"""%v = memref.load %tile[{at}%r, %c] : {s}
      scf.if %in {{
        memref.store %v, %y[%gr, %gc] : {g}
      }}"""
    return f"""
  {_signature("load_" + cfg.name, cfg)}{_prologue(cfg)}
    %phase = arith.constant false
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    copy.async_copy %x[%row, %col] to %tile{slot} barrier %bar[%c0] oob zeros
      : {g} to {s}, !copy.barrier<1>
    copy.barrier_wait %bar[%c0], %phase : !copy.barrier<1>{_element_loop(cfg, read)}
    func.return
  }}"""


def store_kernel(cfg: Config) -> str:
    g, s = cfg.gmem_type(), cfg.smem_type()
    slot, at = ("[%c1]", "%c1, ") if cfg.ring else ("", "")
    write = f"""scf.if %in {{
        %v = memref.load %x[%gr, %gc] : {g}
        memref.store %v, %tile[{at}%r, %c] : {s}
      }}"""
    return f"""
  {_signature("store_" + cfg.name, cfg)}{_prologue(cfg)}{_element_loop(cfg, write)}
    copy.fence_async_shared
    copy.async_copy %tile{slot} to %y[%row, %col] : {s} to {g}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}"""


def module(cfgs: list[Config], target: str = "sm_90a") -> str:
    """One module with the load and the store kernel of each configuration."""
    kernels = "".join(load_kernel(c) + store_kernel(c) for c in cfgs)
    return f'builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{{kernels}\n}}\n'
