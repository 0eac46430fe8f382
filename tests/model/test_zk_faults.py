"""ZooKeeper faults in the model: a zombie controller's per-partition failures (review D10)."""

from __future__ import annotations

from kcm.model.actions import BrokerRequestControlledShutdown, ControllerProcessEvent, ZkSessionExpire
from kcm.model.cluster import RequestKind
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle, step


def settled(**fields):
    cfg = ModelConfig.from_mapping(dict(brokers=3, topics=1, partitions=1, replication_factor=2, **fields))
    return cfg, settle(cfg, init_states(cfg)[0])


def test_a_zombie_controller_still_sends_the_stop_replica_of_a_controlled_shutdown():
    """Broker 1 follows partition 0 (replicas 0, 1; leader 0, the controller). Its controlled
    shutdown reaches controller 0 after 0's session expired, unnoticed. Kafka 2.6's
    `doControlledShutdown` reads no ZooKeeper before the state machines, which fail the partition
    per partition: the ISR is not shrunk, yet the StopReplica is sent (review D10)."""
    cfg, s = settled(max_session_expiries=1, max_controlled_shutdowns=1)
    assert s.zk.controller == 0 and s.brokers[0].replicas[0].leader == 0
    for action in (BrokerRequestControlledShutdown(1), ZkSessionExpire(0), ControllerProcessEvent(0)):
        s = step(cfg, s, action)
    sent = s.net[0 * cfg.brokers + 1]
    # Two batches, as in Kafka: doControlledShutdown's own StopReplica, then the replica state
    # machine's (OfflineReplica adds it before its ISR read fails).
    assert [r.kind for r in sent] == [RequestKind.StopReplica, RequestKind.StopReplica]
    assert all(r.controller_id == 0 and not r.partitions[0].delete for r in sent)
    assert s.zk.partitions[0].isr == (0, 1)   # no ISR shrink written: the read failed
    assert s.brokers[0].ctx.replica_states[0][1].name == "OnlineReplica"   # the failed partition keeps its state
    # Broker 1 leads nothing, so the answer lets it stop.
    assert s.brokers[1].shutdown.name == "DONE"
