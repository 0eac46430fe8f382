"""Log-directory failure on Debian's ZooKeeper with the threaded implementation: the leader's
directory fails, the broker stays up and writes `/log_dir_event_notification/log_dir_event_<seq>`;
the controller asks it, gets KAFKA_STORAGE_ERROR, records the replica in `replicasOnOfflineDirs`
and elects the other ISR member; the notification is deleted; a restart brings the directory back
and the replica rejoins the ISR.

No assertion depends on timing: each test waits, with a generous bound, for a condition.
"""

from __future__ import annotations

from kcm.impl.threaded_cluster import ThreadedCluster
from kcm.impl.zk_data import LogDirEventNotificationZNode, TopicPartition

from tests.impl import threaded

WAIT_S = 60
TP = TopicPartition("orders", 0)


def _leader(c: ThreadedCluster) -> tuple[int, tuple[int, ...]] | None:
    state = c.partition_states().get(TP, (None, None))[1]
    return None if state is None else (state.leader_and_isr.leader, tuple(state.leader_and_isr.isr))


def test_the_leaders_failed_directory_moves_leadership_until_a_restart(zookeeper_hosts) -> None:
    with threaded.running_cluster(3, zookeeper_hosts) as c:
        c.create_topic("orders", {0: (0, 1)})
        assert threaded.wait_for(lambda: _leader(c) == (0, (0, 1)), WAIT_S)
        c.fail_log_dir(0, TP)
        assert threaded.wait_for(lambda: _leader(c) == (1, (1,)), WAIT_S)
        assert c.is_up(0)
        controller = c.servers[c.controller_id()].controller
        assert threaded.wait_for(lambda: controller.context.replicas_on_offline_dirs.get(0) == {TP}, WAIT_S)
        assert threaded.wait_for(
            lambda: not c.admin.zookeeper.get_children(LogDirEventNotificationZNode.path), WAIT_S)
        c.bounce_broker(0)
        assert threaded.wait_for(lambda: _leader(c) is not None and set(_leader(c)[1]) == {0, 1}, WAIT_S)
