"""The action kinds are declared once (model/actions.py `KINDS`) and every list of kinds is derived
from the declaration: a kind left out of any of them, a budget no kind spends, an `overlapping` name
that names no kind, or a controller event the broker renaming does not classify, fails here (and,
for most, already at import)."""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pytest
from kcm.impl.step_cluster import StepCluster
from kcm.model import actions, spec
from kcm.model import config as config_module
from kcm.model.actions import (
    ALL_ACTIONS,
    BY_BUDGET,
    KIND_OF,
    KINDS,
    OVERLAP_KINDS,
    AdminReassignPartitions,
    Role,
    ZkSessionExpire,
)
from kcm.model.checking import footprints, symmetry
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Budget, EventKind
from kcm.model.config import ModelConfig


def _declared_classes() -> set[type]:
    return {c for _, c in inspect.getmembers(actions, inspect.isclass)
            if c.__module__ == actions.__name__ and dataclasses.is_dataclass(c) and c is not actions.ActionKind}


def test_every_action_class_has_one_record() -> None:
    assert set(ALL_ACTIONS) == _declared_classes() == set(typing.get_args(actions.Action))
    assert len(ALL_ACTIONS) == len(set(ALL_ACTIONS)) == len(KINDS) == len(KIND_OF)


def test_coverage_lists_every_kind() -> None:
    names = KafkaModel(ModelConfig(brokers=2)).action_names()
    assert AdminReassignPartitions.__name__ in names
    assert set(names) == {c.__name__ for c in _declared_classes()}


def test_every_budget_has_a_kind_and_a_config_field() -> None:
    assert set(BY_BUDGET) == set(Budget)
    fields = {f.name for f in dataclasses.fields(ModelConfig)}
    for budget, kind in BY_BUDGET.items():
        assert kind.budget is budget and kind.budget_field in fields
    assert set(Budget) == actions.FAULT_BUDGETS | actions.ADMIN_BUDGETS
    assert not actions.FAULT_BUDGETS & actions.ADMIN_BUDGETS


def test_the_config_describes_what_the_cross_kind_bounds_count() -> None:
    """`max_faults` and `max_admin_ops` count the faults and the admin operations: the comment
    above them names every one, faults first."""
    lines = inspect.getsource(config_module).splitlines()
    end = next(i for i, line in enumerate(lines) if line.strip().startswith("max_faults: int"))
    start = end
    while lines[start - 1].strip().startswith("#:"):
        start -= 1
    text = " ".join(line.strip().removeprefix("#:").strip() for line in lines[start:end]).lower()
    faults, admin = text.split("admin operations", 1)
    for k in KINDS:
        if k.overlap is not None:
            assert k.overlap.replace("_", " ") in (faults if k.role is Role.FAULT else admin), k.overlap


def test_every_overlap_kind_names_a_kind() -> None:
    for name, field in OVERLAP_KINDS.items():
        kinds = [k for k in KINDS if k.overlap == name]
        assert kinds and all(k.budget_field == field for k in kinds), name
    assert {k.overlap for k in KINDS if k.budget is not None} == set(OVERLAP_KINDS)


def test_roles_and_healing() -> None:
    for k in KINDS:
        assert (k.role is Role.HEALING) == (k.budget is None), k.name
        assert (k.cls in spec._HEALING) == (k.role is Role.HEALING), k.name
    # Bounded kinds that spend their budget in some states only, and heal in the others.
    assert set(spec._SPENDS_WHEN) == {ZkSessionExpire, actions.BrokerRequestControlledShutdown}
    assert KIND_OF[ZkSessionExpire].role is Role.FAULT


def test_every_kind_has_a_guard_an_effect_and_a_group() -> None:
    broker_guarded = [k for k, _ in spec._BROKER_GUARDS]
    admin_guarded = [k for k, _ in spec._ADMIN_GUARDS]
    guarded = (broker_guarded + admin_guarded + list(spec._LEADER_KINDS) + list(spec._LOG_DIR_KINDS)
               + [actions.NetworkDeliver])
    assert sorted(c.__name__ for c in guarded) == sorted(c.__name__ for c in ALL_ACTIONS)
    assert set(spec._EFFECTS) == set(ALL_ACTIONS)
    assert set(footprints._FAMILY) == set(ALL_ACTIONS)
    assert set(footprints._BROKER_NES) == {k.cls for k in KINDS if k.group == "broker"}


def test_every_kind_has_its_counterpart_in_the_implementation() -> None:
    missing = {k.counterpart for k in KINDS if not callable(getattr(StepCluster, k.counterpart, None))}
    assert not missing


def test_a_kind_left_out_fails_the_checks(monkeypatch) -> None:
    monkeypatch.setattr(actions, "ALL_ACTIONS", ALL_ACTIONS[:-1])
    with pytest.raises(AssertionError, match="differ"):
        actions._check()
    monkeypatch.undo()
    effects = dict(spec._EFFECTS)
    del effects[AdminReassignPartitions]
    monkeypatch.setattr(spec, "_EFFECTS", effects)
    with pytest.raises(AssertionError, match="AdminReassignPartitions"):
        spec._check_kinds()
    monkeypatch.undo()
    monkeypatch.setattr(spec, "_ADMIN_GUARDS", spec._ADMIN_GUARDS[:-1])
    with pytest.raises(AssertionError, match="AdminEnableUncleanElection"):
        spec._check_kinds()


def test_the_renaming_classifies_every_controller_event() -> None:
    assert set(symmetry._A_IS_BROKER) == set(EventKind)
    assert {EventKind.ControlledShutdown, EventKind.TopicDeletionStopReplicaResponseReceived,
            EventKind.LeaderAndIsrResponseReceived} == symmetry._ID_EVENTS
