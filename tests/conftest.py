"""Shared fixtures: an xDSL context with every dialect copy-opt knows."""

from __future__ import annotations

import pytest
from xdsl.context import Context

from copy_dialect.universe import make_context


@pytest.fixture
def ctx() -> Context:
    return make_context()
