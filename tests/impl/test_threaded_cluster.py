"""The threaded implementation against a real ZooKeeper (Debian's, started by the session fixture):
election, failover after a session expiry, leader re-election from the ISR, the epoch fence on a
deposed controller's writes, and bounce detection by broker epoch.

No assertion depends on timing: a test waits (with a generous bound) for a condition, and where an
interleaving matters it holds a controller between two events (`processing_lock`) to force it.
"""

from __future__ import annotations

import pytest
from kcm.impl.kafka_zk_client import ControllerMovedException
from kcm.impl.threaded_cluster import ThreadedCluster
from kcm.impl.zk_data import TopicPartition
from kcm.model.election import LeaderAndIsr

from tests.impl import threaded
from tests.impl.threaded import FAST, ORDERS

WAIT_S = 20


def wait_for(condition, timeout_s: float = WAIT_S) -> bool:
    return threaded.wait_for(condition, timeout_s)


@pytest.fixture(params=["zookeeper", "memory"])
def cluster(request):
    zk = request.getfixturevalue("zookeeper_hosts") if request.param == "zookeeper" else "memory"
    c = ThreadedCluster(3, zookeeper=zk, config=FAST, session_timeout_s=0.3, connect_timeout_s=WAIT_S)
    for b in range(3):
        c.start_broker(b)
    c.create_topic("orders", ORDERS)
    assert c.settle(WAIT_S)
    yield c
    c.close()


def epoch_of(c: ThreadedCluster) -> int:
    return c.admin.get_controller_epoch()[0]


def test_three_brokers_start_and_exactly_one_becomes_controller_with_epoch_1(cluster):
    controller = cluster.controller_id()
    assert controller in (0, 1, 2) and epoch_of(cluster) == 1
    active = [b for b, s in cluster.servers.items() if s.controller.is_active]
    assert active == [controller]
    assert all(s.controller.active_controller_id == controller for s in cluster.servers.values())
    assert cluster.servers[controller].controller.epoch == 1
    states = cluster.partition_states()
    assert {tp.partition: state.leader_and_isr.leader for tp, (_, state) in states.items()} == {0: 0, 1: 1, 2: 2}


def test_after_the_controllers_session_expires_another_broker_takes_over_with_a_higher_epoch(cluster):
    old = cluster.controller_id()
    old_controller = cluster.servers[old].controller
    # Hold the old controller between two events: it cannot notice the expiry, so another broker
    # is the one that re-elects.
    with old_controller.event_manager.processing_lock:
        cluster.expire_session(old)
        assert wait_for(lambda: cluster.controller_id() not in (-1, old))
    new = cluster.controller_id()
    assert cluster.settle(WAIT_S)
    assert epoch_of(cluster) == 2 and cluster.servers[new].controller.epoch == 2
    assert cluster.servers[new].controller.is_active and not old_controller.is_active
    assert old_controller.context.epoch == 0   # resigned: the context was reset
    records = cluster.timeline.of_kind("election")
    assert [(r.broker, r.epoch) for r in records] == [(old, 1), (new, 2)]


def test_partition_leaders_are_re_elected_from_the_isr(cluster):
    before = cluster.partition_states()
    victim = next(b for b in (0, 1, 2) if b != cluster.controller_id())
    cluster.crash_broker(victim)
    assert wait_for(lambda: all(state.leader_and_isr.leader != victim
                                for _, state in cluster.partition_states().values()))
    assert cluster.settle(WAIT_S)
    for tp, (_, state) in cluster.partition_states().items():
        old = before[tp][1].leader_and_isr
        new = state.leader_and_isr
        assert new.leader in old.isr and new.leader != victim
        if old.leader == victim:
            assert new.leader_epoch > old.leader_epoch
        assert victim not in new.isr


def test_a_write_by_the_deposed_controller_is_rejected_by_the_epoch_fence(cluster):
    old = cluster.controller_id()
    old_controller = cluster.servers[old].controller
    stale_version = old_controller.context.epoch_zk_version
    cluster.move_controller()   # an operator deletes /controller; someone is elected with epoch 2
    assert wait_for(lambda: epoch_of(cluster) == 2)
    assert cluster.settle(WAIT_S)
    tp = TopicPartition("orders", 0)
    before = cluster.admin.get_topic_partition_state(tp)
    lai = before.leader_and_isr
    zombie_write = {tp: LeaderAndIsr(lai.leader, lai.leader_epoch + 1, lai.isr, lai.zk_version)}
    with pytest.raises(ControllerMovedException):
        cluster.servers[old].zk_client.update_leader_and_isr(zombie_write, 1, stale_version)
    assert cluster.admin.get_topic_partition_state(tp) == before


def test_a_fast_broker_bounce_is_detected_by_its_broker_epoch(cluster):
    controller = cluster.servers[cluster.controller_id()].controller
    victim = next(b for b in (0, 1, 2) if b != controller.broker_id)
    old_epoch = controller.context.live_broker_epoch(victim)
    # Hold the controller while the broker dies and comes back: when it runs BrokerChange, the
    # broker is registered under the same id with a newer czxid.
    with controller.event_manager.processing_lock:
        cluster.bounce_broker(victim)
    assert cluster.settle(WAIT_S)
    changes = [r.detail for r in cluster.timeline.of_kind("broker change")]
    assert f"new [], dead [], bounced [{victim}]" in changes
    assert controller.context.live_broker_epoch(victim) > old_epoch
    # Its replicas were brought online again: the new incarnation received LeaderAndIsr.
    partitions = cluster.servers[victim].replica_manager.all_partitions
    assert set(partitions) == {TopicPartition("orders", p) for p in ORDERS}


# ---- Kafka's errors are contained; Python's fail the run ----------------------------------------


@pytest.mark.parametrize("error", [KeyError("a bug"), TypeError("a bug"), AttributeError("a bug"),
                                   AssertionError("a bug")])
def test_a_python_error_in_a_controller_handler_fails_the_run(monkeypatch, error):
    """A Python error inside an event handler is a bug of the implementation: the cluster raises it
    from `settle` instead of logging it and going on as if the event had been processed."""
    from kcm.impl import controller_events as ev
    from kcm.impl.kafka_controller import KafkaController
    from kcm.impl.threaded_cluster import ImplementationBug

    def broken(self, event):
        raise error

    monkeypatch.setitem(KafkaController._handlers, ev.BrokerChange, broken)
    c = ThreadedCluster(2, zookeeper="memory", config=FAST, session_timeout_s=0.3)
    try:
        c.start_broker(0)
        c.start_broker(1)   # the controller's BrokerChange handler runs and fails
        with pytest.raises(ImplementationBug, match=f"broker 0: {type(error).__name__}"):
            c.settle(WAIT_S)
    finally:
        c.close()


def test_a_kafka_error_in_a_controller_handler_is_contained_as_kafka_does(monkeypatch):
    """Kafka's own errors (here a ZooKeeper error) abandon the event and the controller goes on
    (kafka@2.6.0:core/src/main/scala/kafka/controller/ControllerEventManager.scala, doWork)."""
    from kcm.impl import controller_events as ev
    from kcm.impl.kafka_controller import KafkaController
    from kcm.impl.zk.protocol import ConnectionLossError

    calls = []

    def flaky(self, event):
        calls.append(event)
        raise ConnectionLossError("the session is reconnecting")

    monkeypatch.setitem(KafkaController._handlers, ev.BrokerChange, flaky)
    c = ThreadedCluster(2, zookeeper="memory", config=FAST, session_timeout_s=0.3)
    try:
        c.start_broker(0)
        c.start_broker(1)
        assert c.settle(WAIT_S) and calls
        assert c.servers[0].controller.event_manager.failure is None
    finally:
        c.close()


def test_a_late_fetch_of_a_dead_follower_keeps_the_cluster_unsettled_until_the_leader_shrinks_it_out(cluster):
    """A fetch the leader takes after its follower stopped (and after the controller's
    onBrokerFailure took the follower out of the ISR) puts the dead replica back into the ISR; only
    the leader's shrink, a lag time later, takes it out. `settle()` must wait for that shrink, or the
    snapshot shows a dead replica in a multi-member ISR (which once made `kcm simulate` runs fail now and then)."""
    from kcm.model.catalogue.leadership import dead_replica_only_as_sole_isr_member
    tp = TopicPartition("orders", 0)
    leader = cluster.partition_states()[tp][1].leader_and_isr.leader
    victim = next(b for b in (0, 1, 2) if b not in (leader, cluster.controller_id()))
    cluster.crash_broker(victim)
    assert wait_for(lambda: victim not in cluster.partition_states()[tp][1].leader_and_isr.isr)
    assert cluster.settle(WAIT_S)
    manager = cluster.servers[leader].replica_manager
    assert not manager.isr_change_due(cluster.live_brokers())
    assert manager.handle_fetch(tp, victim, manager.partition(tp).leader_epoch)   # the late fetch
    assert manager.isr_change_due(cluster.live_brokers()) and not cluster.quiet()
    assert cluster.settle(WAIT_S)
    assert victim not in cluster.partition_states()[tp][1].leader_and_isr.isr
    assert dead_replica_only_as_sole_isr_member(cluster.snapshot())
    # The leader did put the dead replica back, then took it out (read from the timeline, not
    # polled: the expanded ISR lasts only the lag time).
    details = [r.detail for r in cluster.timeline.of_kind("isr") if r.broker == leader]
    expanded = next(i for i, d in enumerate(details) if f"expand: {victim} caught up" in d)
    assert any(f"shrink: {victim} lagging" in d for d in details[expanded + 1:])
