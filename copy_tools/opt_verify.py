"""Verification for copy-opt: op by op and the kernel rules (`analysis.verify`: the path
`compile_module` takes too), each failing op reported at its location, then SSA dominance,
then the protocol; and where to report a diagnostic about an op. The code is
`analysis.report`'s, which the Python entry points share; re-exported here."""

from __future__ import annotations

from analysis.report import dominance_diagnostics as dominance_diagnostics
from analysis.report import exception_location as exception_location
from analysis.report import op_location as op_location
from analysis.report import op_message as op_message
from analysis.report import verify_diagnostics as verify_diagnostics
