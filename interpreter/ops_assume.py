"""`copy.assume`: each thread that runs it checks the fact it states (AS3). A broken fact
ends the run of the cluster, as the debug guard's trap ends the launch: past it the kernel
is one the protocol analysis did not prove."""

from __future__ import annotations

import numpy as np

from copy_dialect import ops as copy
from copy_dialect.assume import as_read
from interpreter.machine import Agent
from interpreter.ops_std import handles
from interpreter.values import RuleBroken


@handles(copy.AssumeOp)
def assume(agent: Agent, op: copy.AssumeOp, mask: np.ndarray) -> None:
    values = np.asarray(agent.get(op.value))
    threads = np.nonzero(mask)[0] if values.ndim else [0]
    for t in threads:
        n = as_read(int(values[t] if values.ndim else values), op.value.type)
        if not op.holds(n):
            # rule: AS3
            raise RuleBroken(
                op,
                "AS3",
                f"states {op.subject()} {op.fact()}, but {op.subject()} is {n} in thread {t}",
            )
