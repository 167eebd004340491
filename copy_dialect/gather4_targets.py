"""The targets of the TMA gather4 family (`copy_dialect.gather4`, `gather4_prefetch`,
`gather4_cluster`): one feature gate per form, from the PTX ISA's Target ISA Notes, CCCL's
listings and CUDA 13.0's ptxas (docs/targets.md)."""

from __future__ import annotations

from facts.target import CTA_PAIR, Feature

GATHER4 = Feature("TMA gather4", lambda t: t.sm >= 100 and t.has_cta_bulk_destination)
"""`.tile::gather4` into the CTA's own SMEM (`.shared::cta`, the form the lowering emits):
"sm_100 or higher" (cp.async.bulk.tensor's Target ISA Notes); sm_120 too."""
SCATTER4 = Feature("TMA scatter4", lambda t: t.sm in (100, 103, 110) and t.suffix in ("a", "f"))
"""`.tile::scatter4`: sm_100a, sm_110a and the sm_100f/sm_110f families (of the table's
targets: sm_100a, sm_100f, sm_103a, sm_110a, sm_110f; not sm_120)."""
GATHER4_PREFETCH = Feature("TMA gather4 prefetch", SCATTER4.has)
"""`cp.async.bulk.prefetch.tensor...tile::gather4`: the targets of scatter4."""
GATHER4_MULTICAST = Feature("TMA gather4 multicast", SCATTER4.has)
"""`.tile::gather4` into `.shared::cluster` with `.multicast::cluster`: the targets of
scatter4 (CCCL's cp.async.bulk.tensor list sm_100a and sm_110a; CUDA 13.0's ptxas also
assembles it for sm_100f, sm_103a/f and sm_110f, and rejects it for sm_100 and sm_120a/f:
"'.tile::gather4 with destination state space as .shared::cluster' not supported")."""
GATHER4_PAIR = Feature("TMA gather4 for a CTA pair", CTA_PAIR.has)
"""`.tile::gather4 ... .cta_group::2` (a leader-tracked gather4): the CTA-pair targets
(sm_100a/f, sm_103a, sm_110a/f; CCCL lists sm_100a and sm_110a, CUDA 13.0's ptxas also
assembles it for sm_100f and sm_103a)."""
