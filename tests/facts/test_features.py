"""The feature table of facts/target.py: each feature's targets come from its `Target.has_*`
property, and `feature_message` is the one message for a target that lacks one (the
verifiers and the builders raise it)."""

from __future__ import annotations

import pytest

from facts.target import (
    FEATURES,
    MULTICAST,
    TARGETS,
    TCGEN05,
    TMA,
    feature_message,
)


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.name)
def test_a_features_targets_are_those_its_predicate_admits(feature):
    assert feature.targets == tuple(name for name, t in TARGETS.items() if feature.has(t))
    assert feature.targets, f"no target has {feature.name}"
    assert feature.listed == ", ".join(feature.targets)


def test_feature_names_are_unique():
    names = [f.name for f in FEATURES]
    assert len(names) == len(set(names))


def test_the_message_names_the_op_the_feature_its_targets_and_the_target():
    assert feature_message("copy.prefetch", TMA, TARGETS["sm_80"]) == (
        "'copy.prefetch' needs a target with TMA (sm_90, sm_90a, sm_100a, sm_100f, sm_103a, "
        "sm_110a, sm_110f, sm_120, sm_120a), but the target is sm_80"
    )
    assert feature_message("copy.async_copy", MULTICAST, TARGETS["sm_90"], "with collective") == (
        "'copy.async_copy' with collective needs a target with .multicast::cluster (sm_90a, "
        "sm_100a, sm_100f, sm_103a, sm_110a, sm_110f), but the target is sm_90"
    )


@pytest.mark.parametrize(
    ("target", "reason"), [("sm_120", True), ("sm_120a", True), ("sm_90a", False)]
)
def test_consumer_blackwell_is_told_why_it_has_no_tmem(target, reason):
    message = feature_message("copy.tmem_alloc", TCGEN05, TARGETS[target])
    assert message.endswith(
        f"but the target is {target}" + " (consumer Blackwell has no TMEM)" * reason
    )
