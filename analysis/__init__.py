"""The kernel analysis: what holds of a whole kernel rather than of one op.

`verify_module` (`analysis.verify`) is the one entry every path takes: each op's verifier
and the kernel rules (`analysis.kernel`: what holds of several ops of a kernel), SSA
dominance (`analysis.dominance`), then the copy protocol of each kernel (`analysis.protocol`,
rules P1-P13 and TU10-TU12)."""
