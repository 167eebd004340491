"""The GMEM accesses of a kernel run, logged for a chain of kernels
(`interpreter.grid_dependency`): which elements of which caller's array each op touched, and
whether its threads had passed a `copy.grid_dependency_wait`. A run without a log (every
single-kernel run) pays one attribute test per GMEM access."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from interpreter.memory import GmemRef
from interpreter.values import lanes

if TYPE_CHECKING:
    from interpreter.machine import Agent


@dataclass(frozen=True)
class GmemAccess:
    """One op's access of GMEM elements, by one CTA's threads."""

    op: Operation
    flat: np.ndarray
    """The caller's array the elements lie in (flat)."""
    addresses: np.ndarray
    """The elements' indices in `flat`, unique."""
    write: bool
    early: bool
    """Made by threads that had not passed a `copy.grid_dependency_wait`."""
    cta: tuple[int, int, int]


@dataclass
class GmemLog:
    """The GMEM accesses of one kernel run."""

    accesses: list[GmemAccess] = field(default_factory=list)


def note_gmem(
    agent: Agent, op: Operation, ref: GmemRef, index: tuple, mask: np.ndarray, write: bool
) -> None:
    """Logs the threads' access of element `index` of `ref` (each index a value for all
    threads, one per thread, or a row per thread: a vector's elements) where the run keeps a
    log (`run(..., gmem_log=)`): the threads that had waited apart
    from those that had not."""
    log = agent.cta.machine.gmem_log
    if log is None:
        return
    threads = agent.cta.threads
    strides = [st // ref.array.itemsize for st in ref.array.strides]
    per_thread = [
        np.asarray(v).reshape(threads, -1) if np.ndim(v) else np.full((threads, 1), v)
        for v in (lanes(v, threads) if np.ndim(v) == 1 else v for v in index)
    ]
    flat = np.asarray(
        ref.offset + sum(v * st for v, st in zip(per_thread, strides, strict=True)),
        dtype=np.int64,
    )
    addresses = flat if flat.ndim == 2 else np.full((threads, 1), flat)
    waited = getattr(agent.cta, "waited", None)
    waited = np.zeros(threads, dtype=bool) if waited is None else waited
    for early in (True, False):
        chosen = mask & (~waited if early else waited)
        if chosen.any():
            log.accesses.append(
                GmemAccess(
                    op, ref.flat, np.unique(addresses[chosen]), write, early, agent.cta.block_id
                )
            )


def note_box(
    agent: Agent,
    op: Operation,
    ref: GmemRef,
    coords: tuple[np.ndarray, ...],
    inside: np.ndarray,
    mask: np.ndarray,
    write: bool,
) -> None:
    """Logs a copy's box (its elements inside the array), issued by the threads of `mask`:
    early unless every one of them had waited."""
    log = agent.cta.machine.gmem_log
    if log is None:
        return
    strides = [s // ref.array.itemsize for s in ref.array.strides]
    addresses = ref.offset + sum(c[inside] * s for c, s in zip(coords, strides, strict=True))
    waited = getattr(agent.cta, "waited", None)
    early = waited is None or not bool(waited[mask].all())
    log.accesses.append(
        GmemAccess(
            op, ref.flat, np.unique(np.asarray(addresses, dtype=np.int64)), write, early,
            agent.cta.block_id,
        )
    )  # fmt: skip
