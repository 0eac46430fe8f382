"""`kcm variants` lists V1-V13 with their Kafka issues; the model-only variants (V10-V13) are
refused by lock-step fuzzing and found by `kcm explore` on their presets."""

from __future__ import annotations

import pytest
from kcm.model.variants import VARIANTS

from kcm.cli import main

#: The oracle's variants: name -> (Kafka issue, first release with the fix, property it breaks).
#: Keys and releases were read from Kafka's git history (docs/model.md, "V11-V13").
ORACLE_VARIANTS = {
    "V10": ("KAFKA-3143", "2.3.0", "DeadReplicaOnlyAsSoleIsrMember"),
    "V11": ("KAFKA-1170", "0.8.1", "OfflineReplicaLeavesIsr"),
    "V12": ("KAFKA-5310", "0.11.0.0", "NoStaleContextWhenInactive"),
    "V13": ("KAFKA-9212", "2.4.0", "CacheMatchesZkAfterWrite"),
}


def test_the_oracle_variants_are_model_only_with_their_issue_and_property() -> None:
    for name, (jira, fixed_in, breaks) in ORACLE_VARIANTS.items():
        v = VARIANTS[name]
        assert (v.jira, v.fixed_in, v.breaks, v.preset, v.impl) == (jira, fixed_in, breaks, name.lower(), False)
    assert sorted(v.name for v in VARIANTS.values() if not v.impl) == sorted(ORACLE_VARIANTS)


def test_kcm_variants_lists_them_beside_v1_to_v9(capsys) -> None:
    assert main(["variants"]) == 0
    out = capsys.readouterr().out
    for name in [f"V{i}" for i in range(1, 14)]:
        assert f" {name} " in out, name
    for jira, _, breaks in ORACLE_VARIANTS.values():
        assert jira in out and breaks in out


@pytest.mark.parametrize("name", sorted(ORACLE_VARIANTS))
def test_lock_step_fuzzing_refuses_a_model_only_variant(name, capsys) -> None:
    assert main(["fuzz", "--preset", VARIANTS[name].preset]) == 2
    assert f"variant {name} is in the model only" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["V12", "V13"])  # the two whose presets explore in a second
def test_kcm_explore_finds_the_variant_on_its_preset(name, tmp_path, capsys) -> None:
    v = VARIANTS[name]
    assert main(["explore", "--variant", name, "--invariant", v.breaks, "--out", str(tmp_path)]) == 1
    assert f"'{v.breaks}' violated" in capsys.readouterr().out
    assert (tmp_path / f"{v.breaks}.itf.json").exists()
