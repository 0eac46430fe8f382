"""LeaderIsrMatchesZk (model/catalogue/leadership.py): fails on a hand-made violation, holds on
the clean model of the mutation suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.catalogue.leadership import leader_isr_matches_zk
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Cluster, Event, EventKind, put
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"


@pytest.fixture(scope="module")
def calm() -> Cluster:
    """The settled cluster of SMALL: broker 0 leads partition 0 with ISR (0, 1), as it caches."""
    s = settle(SMALL, init_states(SMALL)[0])
    z, r = s.zk.partitions[0], s.brokers[0].replicas[0]
    assert z.leader == 0 and z.isr == (0, 1) and (r.leader, r.isr, r.zk_version) == (0, z.isr, z.version)
    return s


def with_broker(s: Cluster, b: int, **fields) -> Cluster:
    return s._replace(brokers=put(s.brokers, b, s.brokers[b]._replace(**fields)))


def with_leader_replica(s: Cluster, **fields) -> Cluster:
    return with_broker(s, 0, replicas=put(s.brokers[0].replicas, 0, s.brokers[0].replicas[0]._replace(**fields)))


def test_leader_isr_matches_zk(calm) -> None:
    assert leader_isr_matches_zk(calm)
    # the leader's ISR write succeeded but the leader did not record the new zkVersion (and ISR)
    z = calm.zk.partitions[0]
    shrunk = calm._replace(zk=calm.zk._replace(partitions=put(calm.zk.partitions, 0, z._replace(isr=(0,)))))
    assert not leader_isr_matches_zk(shrunk)
    assert not leader_isr_matches_zk(with_leader_replica(calm, zk_version=z.version - 1))
    # a broker that does not hold the znode's leader epoch, a stopped one, a follower: not judged
    epoch = calm.zk.partitions[0].leader_epoch
    assert leader_isr_matches_zk(with_leader_replica(calm, zk_version=-1, leader_epoch=epoch - 1))
    assert leader_isr_matches_zk(with_leader_replica(calm, zk_version=-1, stopped=True))
    # The follower knows the leader and its epoch and runs, as the leader does: only not being the
    # znode's leader keeps another ISR and zkVersion than the znode's from being judged.
    follower = calm.brokers[1].replicas[0]
    assert (follower.leader, follower.leader_epoch, follower.stopped) == (z.leader, epoch, False)
    stale = follower._replace(isr=(1,), zk_version=z.version - 1)
    assert leader_isr_matches_zk(with_broker(calm, 1, replicas=put(calm.brokers[1].replicas, 0, stale)))


def test_judged_only_when_quiescent_and_not_deleting(calm) -> None:
    bad = with_leader_replica(calm, zk_version=calm.zk.partitions[0].version - 1)
    assert leader_isr_matches_zk(with_broker(bad, 0, queue=(Event(EventKind.BrokerChange),)))
    assert leader_isr_matches_zk(bad._replace(zk=bad.zk._replace(delete_topics=1)))


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-overlap", "m-move", "m-shutdown", "tiny"])
def test_holds_on_the_mutation_suite(name) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=["LeaderIsrMatchesZk"], goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
