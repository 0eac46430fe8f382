"""The offline election with and without unclean election, in the partition state machine.

Translations of Kafka 2.6's `testOfflinePartitionToOnlinePartitionTransition` and
`testOfflinePartitionToUncleanOnlinePartitionTransition`
(kafka@2.6.x:core/src/test/scala/unit/kafka/controller/PartitionStateMachineTest.scala, lines
248-351), named after them in snake_case, plus ours for the topic config read at run time
(`collectUncleanLeaderElectionState`: `OfflinePartitionLeaderElectionStrategy(false)` reads the
topic's `unclean.leader.election.enable` from `/config/topics/<t>` for a partition without a live
ISR member). Kafka mocks `KafkaZkClient`; here the state machine runs on the embedded ZooKeeper,
whose state znode the test writes first (the mock's `getTopicPartitionStatesRaw` answer).
"""

from __future__ import annotations

from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.partition_state_machine import PartitionLeaderElectionStrategy
from kcm.impl.requests import LeaderAndIsrRequest
from kcm.impl.zk.memory import MemoryZooKeeperServer
from kcm.impl.zk_data import UNCLEAN_LEADER_ELECTION_ENABLE, LeaderIsrAndControllerEpoch
from kcm.model.election import LeaderAndIsr
from kcm.model.states import PartitionState as P

from tests.impl.test_state_machine_zk_errors import (
    BROKER,
    CONTROLLER_EPOCH,
    PARTITION,
    context,
    partition_state_machine,
    zk_client,
)

#: The replica that led, now dead (Kafka's `leaderBrokerId = brokerId + 1`).
DEAD = BROKER + 1


def _offline(server: MemoryZooKeeperServer, leader_and_isr: LeaderAndIsr, replicas: tuple[int, ...]):
    """An Offline partition with `leader_and_isr` cached and in its state znode; only BROKER live."""
    zk = zk_client(server)
    ctx = context(replicas=replicas, live=(BROKER,))
    ctx.put_partition_state(PARTITION, P.OfflinePartition)
    state = LeaderIsrAndControllerEpoch(leader_and_isr, CONTROLLER_EPOCH)
    ctx.put_partition_leadership_info(PARTITION, state)
    ControllerZkClient(server.connect()).create_topic_partition_states({PARTITION: state}, 1)
    return zk, ctx


def _led(channel) -> list[tuple[int, int, tuple[int, ...]]]:
    """(recipient, leader, isr) of every LeaderAndIsr sent."""
    return [(b, s.leader, tuple(s.isr)) for b, r in channel.sent if isinstance(r, LeaderAndIsrRequest)
            for s in r.partition_states]


def test_offline_partition_to_online_partition_transition() -> None:
    """Leader -1, ISR [X], X live: the offline election elects X from the ISR (the topic config is
    read for no partition: every one has a live ISR member)."""
    server = MemoryZooKeeperServer()
    zk, ctx = _offline(server, LeaderAndIsr(-1, 0, (BROKER,), 0), (BROKER,))
    machine, batch, channel = partition_state_machine(ctx, zk)
    machine.handle_state_changes([PARTITION], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    assert ctx.partition_state(PARTITION) is P.OnlinePartition
    assert _led(channel) == [(BROKER, BROKER, (BROKER,))]
    assert batch.sends == 1


def test_offline_partition_to_unclean_online_partition_transition() -> None:
    """Leader X, ISR [X], replicas [X, Y], live [Y]: with `allowUnclean = true` Y is elected, its
    ISR [Y], and the LeaderAndIsr goes to Y."""
    server = MemoryZooKeeperServer()
    zk, ctx = _offline(server, LeaderAndIsr(DEAD, 0, (DEAD,), 0), (DEAD, BROKER))
    machine, batch, channel = partition_state_machine(ctx, zk)
    machine.handle_state_changes([PARTITION], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE_ALLOW_UNCLEAN)
    assert ctx.partition_state(PARTITION) is P.OnlinePartition
    assert _led(channel) == [(BROKER, BROKER, (BROKER,))]
    assert ctx.partition_leadership_info[PARTITION].leader_and_isr.leader == BROKER


def test_the_offline_election_reads_the_topic_config_switched_on_at_run_time() -> None:
    """Ours: the same partition with `OfflinePartitionLeaderElectionStrategy(false)` stays Offline
    until `/config/topics/t` switches unclean election on; then the same call elects Y."""
    server = MemoryZooKeeperServer()
    zk, ctx = _offline(server, LeaderAndIsr(DEAD, 0, (DEAD,), 0), (DEAD, BROKER))
    machine, _, channel = partition_state_machine(ctx, zk)
    assert machine.handle_state_changes([PARTITION], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE) == {}
    assert ctx.partition_state(PARTITION) is P.OfflinePartition and _led(channel) == []
    zk.change_topic_config("t", {UNCLEAN_LEADER_ELECTION_ENABLE: "true"})
    assert zk.unclean_leader_election_enabled("t", False)
    machine.handle_state_changes([PARTITION], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    assert ctx.partition_state(PARTITION) is P.OnlinePartition
    assert _led(channel) == [(BROKER, BROKER, (BROKER,))]
