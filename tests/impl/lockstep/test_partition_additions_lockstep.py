"""Partitions added to a topic, the implementation and the model in lock-step: the admin side of
CreatePartitions (`AdminZkClient.add_partitions`), the controller's `PartitionModificationsHandler`
and `processPartitionModifications`, with the two ways Kafka 2.6 takes an added partition back
(docs/model.md, "Findings" 15 and 16)."""

from __future__ import annotations

import random

import pytest
from kcm.checker.stateful import fuzz
from kcm.impl.admin_zk_client import AdminOperationException
from kcm.impl.zk_data import TopicPartition
from kcm.model import actions as a
from kcm.model.cluster import NO_ZNODE
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions

from kcm.config import load_preset

ADD = ModelConfig.from_mapping(dict(
    brokers=2, topics=1, partitions=2, created_partitions=1, replication_factor=2, max_broker_crashes=1,
    max_session_expiries=0, max_partition_additions=1, max_topic_deletions=1, max_reassignments=1))


def test_an_added_partition_is_created_by_the_controller(lockstep):
    run = lockstep(ADD)
    run.drain()
    assert run.impl.admin.get_replica_assignment_for_topics(["t00"]) == {TopicPartition("t00", 0): [0, 1]}
    run.apply(a.AdminAddPartitions(0, ((1, 0),)))
    run.drain()
    z = run.state.zk.partitions[1]
    assert (z.leader, z.isr) == (1, (1, 0))
    assert sorted(run.impl.server(0).controller.partition_modifications_handlers) == ["t00"]


def test_an_addition_to_a_topic_being_deleted_is_written_back(lockstep):
    run = lockstep(ADD)
    run.drain()
    run.apply(a.AdminDeleteTopic(0))
    run.apply(a.ControllerProcessEvent(0))            # TopicDeletion: the topic is queued
    run.apply(a.AdminAddPartitions(0, ((0, 1),)))
    run.apply(a.ControllerProcessEvent(0))            # PartitionModifications: restored
    assert run.state.zk.assignment == ((0, 1), ())
    run.drain()
    assert run.state.zk.assignment == ((), ()) and run.state.zk.partitions[1] == NO_ZNODE
    assert not run.impl.server(0).controller.partition_modifications_handlers   # muted with the deletion


def test_a_reassignment_queued_first_writes_the_added_partition_away(lockstep):
    run = lockstep(ADD)
    run.drain()
    run.apply(a.AdminReassign(0, (1, 0)))
    run.apply(a.AdminAddPartitions(0, ((0, 1),)))
    run.drain()
    assert run.state.zk.assignment == ((1, 0), ())


def test_the_admin_refuses_what_create_partitions_refuses(lockstep):
    run = lockstep(ADD)
    run.drain()
    admin = run.impl.admin_zk
    for topic, replicas, needle in (("nope", ((0, 1),), "does not exist"), ("t00", ((0, 0),), "replication factor"),
                                    ("t00", ((0,),), "replication factor"), ("t00", ((0, 7),), "Unknown broker")):
        with pytest.raises(AdminOperationException, match=needle):
            admin.add_partitions(topic, replicas)
    three = lockstep(ModelConfig.from_mapping(dict(
        brokers=3, topics=1, partitions=2, created_partitions=1, replication_factor=2, max_broker_crashes=0,
        max_session_expiries=0, max_partition_additions=1, max_reassignments=1)))
    three.drain()
    three.apply(a.AdminReassign(0, (0, 2)))
    three.apply(a.ControllerProcessEvent(0))          # the reassignment is now in /brokers/topics
    assert three.state.zk.adding[0] == (2,)
    assert not any(type(x) is a.AdminAddPartitions for x in enabled_actions(three.cfg, three.state))  # the model too
    admin = three.impl.admin_zk
    with pytest.raises(AdminOperationException, match="reassignment is in progress"):
        admin.add_partitions("t00", ((0, 1),))


@pytest.mark.parametrize("seed", range(10))
def test_random_walks_with_partition_additions_match_the_model(lockstep, seed):
    run = lockstep(ADD)
    run.walk(random.Random(3000 + seed), 300)


def test_kcm_fuzz_draws_partition_additions_on_the_addparts_preset_with_no_disagreement():
    result = fuzz(load_preset("addparts"), examples=60, steps=40, seed=1)
    assert result.failure is None
    walk = result.stats.known["PartitionCountNeverDecreases"]     # Findings 15 or 16, met on the way
    assert any(type(action) is a.AdminAddPartitions for action, _ in walk)
