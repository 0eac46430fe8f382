"""Leader elections on demand and unclean election switched on at run time, on Debian's ZooKeeper
with the threaded implementation: an unclean ElectLeaders request for an offline partition elects
its live replica outside the ISR and answers with it; a preferred one for a partition whose
preferred replica is back answers with it; writing `unclean.leader.election.enable=true` to
`/config/topics/<t>` reaches every broker's config-change listener, and the active controller's
`TopicUncleanLeaderElectionEnable` elects the topic's offline partition.

No assertion depends on timing: each test waits, with a generous bound, for a condition.
"""

from __future__ import annotations

import queue

from kcm.impl.requests import Errors
from kcm.impl.threaded_cluster import ThreadedCluster
from kcm.impl.zk_data import TopicPartition

from tests.impl import threaded

WAIT_S = 60
TP = TopicPartition("orders", 0)


def _leader(c: ThreadedCluster) -> tuple[int, tuple[int, ...]] | None:
    state = c.partition_states().get(TP, (None, None))[1]
    return None if state is None else (state.leader_and_isr.leader, tuple(state.leader_and_isr.isr))


def _offline_with_broker_1_out_of_the_isr(c: ThreadedCluster) -> None:
    """orders-0 on (0, 1) led by 0; broker 1 stops, 0 shrinks the ISR to itself; broker 1 comes
    back (not in the ISR, it never catches up here: the leader is gone next); broker 0 stops."""
    c.create_topic("orders", {0: (0, 1)})
    assert threaded.wait_for(lambda: _leader(c) == (0, (0, 1)), WAIT_S)
    c.crash_broker(1, expire_after_s=0.0)
    assert threaded.wait_for(lambda: _leader(c) == (0, (0,)), WAIT_S)
    c.crash_broker(0, expire_after_s=0.0)
    c.start_broker(1)
    assert threaded.wait_for(lambda: _leader(c) == (-1, (0,)) and c.controller_id() in (1, 2), WAIT_S)


def test_an_unclean_request_elects_the_live_replica_and_answers(zookeeper_hosts) -> None:
    with threaded.running_cluster(3, zookeeper_hosts) as c:
        _offline_with_broker_1_out_of_the_isr(c)
        answers: queue.Queue = queue.Queue()
        assert threaded.wait_for(lambda: c.elect_leaders([TP], True, answers.put), WAIT_S)
        assert answers.get(timeout=WAIT_S) == {TP: 1}
        assert threaded.wait_for(lambda: _leader(c) == (1, (1,)), WAIT_S)
        assert c.elect_leaders([TP], True, answers.put)
        assert answers.get(timeout=WAIT_S) == {TP: Errors.ELECTION_NOT_NEEDED}


def test_switching_unclean_election_on_elects_the_offline_partition(zookeeper_hosts) -> None:
    with threaded.running_cluster(3, zookeeper_hosts) as c:
        _offline_with_broker_1_out_of_the_isr(c)
        c.enable_unclean_election("orders")
        assert threaded.wait_for(lambda: _leader(c) == (1, (1,)), WAIT_S)
