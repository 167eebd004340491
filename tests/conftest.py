"""Shared fixtures: an xDSL context with every dialect copy-opt knows."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.universe import Universe


def make_context() -> Context:
    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


@pytest.fixture
def ctx() -> Context:
    return make_context()
