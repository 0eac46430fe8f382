"""`StepCluster`: the implementation run one step at a time, and its counterpart of every model action.

A `StepCluster` is a whole cluster in one process with no threads of its own: an embedded ZooKeeper
with *immediate* watch delivery (the model enqueues a watch's event in the same step as the write
that fires it), the in-process `Network`, and one `KafkaServer` per running broker, all in stepped
mode. Nothing happens unless something calls one of its operations; which one runs when is the
`Scheduler`'s choice (`self.scheduler`), or the model's.

`apply(action)` performs the implementation's counterpart of one `kcm.model.actions` action:

| model action                      | implementation                                                    |
|-----------------------------------|-------------------------------------------------------------------|
| BrokerStart(b)                    | a new `KafkaServer(b).startup()`: session, /brokers/ids/b, Startup|
| BrokerCrash(b)                    | `KafkaServer.crash()` (the session lives on)                      |
| ZkSessionExpire(b)                | the ZooKeeper server expires b's session (b is not told)          |
| BrokerNoticeExpiry(b)             | b's ZooKeeper client notices: `clearAndPut(Expire)`               |
| ControllerProcessEvent(b)         | b's event manager processes its head event (after Expire, the new session) |
| NetworkDeliver(src, dst)          | src's channel manager sends the head of its queue for dst         |
| LeaderShrinkIsr / LeaderExpandIsr | the leader's conditional ISR write, then its ISR-change notification |
| BrokerRequestControlledShutdown(b)| one ControlledShutdownRequest to the broker named in /controller |
| BrokerShutdown(b)                 | `KafkaServer.shutdown()` (the session closes)                     |
| AdminPreferredElection, AdminReassign, AdminReassignPartitions, AdminDeleteTopic, AdminCreateTopic, AdminMoveController | an admin session writes the znode |
| AdminAddPartitions(t, replicas)   | the admin side of CreatePartitions (`AdminZkClient.add_partitions`) rewrites /brokers/topics/t |
| AdminElectLeaders(p, unclean)     | an ElectLeaders request to the broker named in /controller: `controller.elect_leaders` |
| AdminEnableUncleanElection(t)     | the admin writes /config/topics/t and a change notification; each running broker's config handler hears it |
| SchedulerAutoRebalance(b)         | b's controller timer puts AutoPreferredReplicaLeaderElection      |
| ZkLoseReply(b)                    | as ControllerProcessEvent(b), with the embedded ZooKeeper losing the reply to the event's first partition-state write |
| ZkConnectionLoss(b)               | the same, the write in flight when b's connection drops and comes back (`drop_connection`) |

It also keeps the two things the model tracks that no broker does: the fault and admin budgets
spent (`spent`, as `kcm.model.spec` counts them) and the order of broker registrations, so that the
abstraction (`kcm.impl.abstraction.abstract`) can number broker epochs 1, 2, 3... as the model does.

`StepCluster.initial(cfg)` is the model's `init_states(cfg)`: the topics exist with Kafka's default
spread and every broker has just started.
"""  # noqa: E501 - the table is wider than a line

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from kcm.impl import controller_events as ev
from kcm.impl.admin_zk_client import AdminZkClient
from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.kafka_server import ControlledShutdownState, KafkaServer
from kcm.impl.kafka_zk_client import KafkaZkClient
from kcm.impl.layout import Layout
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.network import Network
from kcm.impl.requests import ElectionType, Errors
from kcm.impl.scheduler import Scheduler
from kcm.impl.timeline import Timeline
from kcm.impl.zk.memory import Delivery, MemoryZooKeeperServer
from kcm.impl.zk_data import UNCLEAN_LEADER_ELECTION_ENABLE, ControllerZNode, TopicPartition
from kcm.model import actions as a
from kcm.model.cluster import Budget
from kcm.model.config import ModelConfig
from kcm.model.variants import flags_for


def _is_partition_state_path(path: str) -> bool:
    """/brokers/topics/<t>/partitions/<p>/state"""
    return path.startswith("/brokers/topics/") and path.endswith("/state")


class StepCluster:
    def __init__(self, cfg: ModelConfig, *, alignment: ModelAlignment | None = None,
                 delivery: Delivery = Delivery.IMMEDIATE) -> None:
        self.cfg = cfg
        self.layout = Layout.from_config(cfg)
        alignment = ModelAlignment.model() if alignment is None else alignment
        if alignment.no_partition_modifications_handlers:
            # the model keeps these watches where partitions can be added (ModelAlignment)
            alignment = alignment.only("no_partition_modifications_handlers", not cfg.adds_partitions)
        self.config = KafkaConfig(
            unclean_leader_election_enable=cfg.unclean_election,
            controlled_shutdown_max_retries=cfg.controlled_shutdown_max_retries,
            auto_leader_rebalance_enable=False,   # the Scheduler fires the timer (SchedulerAutoRebalance)
            flags=flags_for(cfg.variant),
            alignment=alignment)
        self.zookeeper = MemoryZooKeeperServer(delivery)
        self.network = Network()
        self.timeline = Timeline()
        #: The latest process of each broker id that ever started (alive or not).
        self.servers: dict[int, KafkaServer] = {}
        #: (broker, czxid) of broker registrations, in order: the model numbers each broker's 1, 2, 3...
        self.registrations: list[tuple[int, int]] = []
        self.spent = [0] * len(Budget)
        #: The answers ElectLeaders requests got, in order (partition -> new leader or error).
        self.elect_answers: list[dict[TopicPartition, int | Errors]] = []
        self.admin = KafkaZkClient(self.zookeeper.connect())
        self.admin_zk = AdminZkClient(self.admin)
        self.admin.create_top_level_paths()
        for t in range(cfg.existing_topics):   # the others can be created later (AdminCreateTopic)
            self.admin.create_topic_assignment(self.layout.topics[t], self.layout.topic_assignment(t))
        self.scheduler = Scheduler(self)

    @classmethod
    def initial(cls, cfg: ModelConfig, **kwargs) -> StepCluster:
        """The model's initial state: every broker started, in id order, with Startup queued."""
        cluster = cls(cfg, **kwargs)
        for b in range(cfg.brokers):
            cluster.start_broker(b)
        return cluster

    # ---- brokers -----------------------------------------------------------------------------

    def server(self, b: int) -> KafkaServer:
        """Broker `b`'s running process (KeyError if it is not running)."""
        server = self.servers.get(b)
        if server is None or not server.alive:
            raise KeyError(f"broker {b} is not running")
        return server

    def is_up(self, b: int) -> bool:
        server = self.servers.get(b)
        return server is not None and server.alive

    def _on_registered(self, b: int, czxid: int) -> None:
        self.registrations.append((b, czxid))

    def start_broker(self, b: int) -> None:
        if self.is_up(b):
            raise ValueError(f"broker {b} is already running")
        server = KafkaServer(b, self.config, self.zookeeper.connect, self.network, self.timeline, threaded=False,
                             on_registered=self._on_registered)
        self.servers[b] = server
        server.startup()
        self.timeline.append("broker", b, detail="started")

    def crash_broker(self, b: int) -> None:
        self.server(b).crash()

    def expire_session(self, b: int) -> None:
        """ZooKeeper ends `b`'s session (ephemerals deleted, watchers told); `b` is not told."""
        self.zookeeper.expire_session(self.servers[b].session_id, notify=False)
        self.timeline.append("broker", b, detail="ZooKeeper session expired")

    def session_live(self, b: int) -> bool:
        server = self.servers.get(b)
        return server is not None and server.session_id in self.zookeeper.live_sessions()

    def notice_expiry(self, b: int) -> None:
        self.server(b).notice_session_expiry()

    def lose_next_ack(self, b: int) -> None:
        """Fault: `b`'s next ZooKeeper write is applied (or fails) but answers CONNECTIONLOSS."""
        self.zookeeper.lose_next_ack(self.servers[b].session_id)

    def run_event_losing_reply(self, b: int, *, drop_connection: bool = False) -> ev.ControllerEvent:
        """`ZkLoseReply(b)`: b processes its head event and the reply to the event's first
        partition-state write is lost (the write is applied; the client retries).
        `ZkConnectionLoss(b)`: the same write is in flight when b's connection drops and comes back
        within the session timeout (the session and its watches survive)."""
        session = self.servers[b].session_id
        if drop_connection:
            self.zookeeper.drop_connection(session, paths=_is_partition_state_path)
        else:
            self.zookeeper.lose_next_ack(session, paths=_is_partition_state_path)
        try:
            event = self.run_event(b)
        finally:
            unspent = self.zookeeper.pending_lost_acks(session)
            self.zookeeper.cancel_lost_acks(session)
        if unspent:
            raise AssertionError(f"ZkLoseReply({b}): the event {event} made no partition-state write")
        what = "connection dropped and came back" if drop_connection else "reply lost"
        self.timeline.append("broker", b, detail=f"ZooKeeper {what} during a partition-state write ({event})")
        return event

    def run_event_dropping_connection(self, b: int) -> ev.ControllerEvent:
        """`ZkConnectionLoss(b)`: `run_event_losing_reply` with the connection dropped."""
        return self.run_event_losing_reply(b, drop_connection=True)

    def run_event(self, b: int) -> ev.ControllerEvent:
        server = self.server(b)
        event = server.controller.event_manager.process_one()
        if isinstance(event, ev.Expire):
            # beforeInitializingSession was waiting for Expire to start: the new session opens now.
            server.complete_session_reinitialization()
        return event

    def deliver(self, src: int, dst: int):
        """The head of controller `src`'s queue for `dst` reaches `dst` (which must be up)."""
        if not self.network.is_up(dst):
            raise ValueError(f"broker {dst} is not up")
        return self.server(src).controller.channel_manager.deliver_one(dst)

    def _isr_write_epoch(self, b: int, tp: TopicPartition) -> int | None:
        if self.config.alignment.leader_isr_write_keeps_znode_controller_epoch:
            return self.server(b).replica_manager.znode_controller_epoch(tp)
        return None

    def shrink_isr(self, b: int, tp: TopicPartition, follower: int) -> bool:
        manager = self.server(b).replica_manager
        done = manager.shrink_isr(tp, follower, self._isr_write_epoch(b, tp))
        manager.maybe_propagate_isr_changes(force=True)
        return done

    def expand_isr(self, b: int, tp: TopicPartition, follower: int) -> bool:
        manager = self.server(b).replica_manager
        done = manager.expand_isr(tp, follower, self._isr_write_epoch(b, tp))
        manager.maybe_propagate_isr_changes(force=True)
        return done

    def fail_log_dir(self, b: int, tp: TopicPartition) -> None:
        """The log directory of broker `b`'s replica of `tp` fails (`handleLogDirFailure`)."""
        self.server(b).replica_manager.handle_log_dir_failure(tp)

    def request_controlled_shutdown(self, b: int) -> None:
        self.server(b).request_controlled_shutdown()

    def finish_shutdown(self, b: int) -> None:
        self.server(b).shutdown()

    def auto_rebalance(self, b: int) -> None:
        self.server(b).controller.event_manager.put(ev.AutoPreferredReplicaLeaderElection())

    # ---- admin -------------------------------------------------------------------------------

    def admin_preferred_election(self, tp: TopicPartition) -> None:
        self.admin.create_preferred_replica_election([tp])

    def admin_reassign(self, tp: TopicPartition, target: tuple[int, ...]) -> None:
        self.admin.create_partition_reassignment({tp: list(target)})

    def admin_reassign_partitions(self, targets: tuple[tuple[int, tuple[int, ...]], ...]) -> None:
        """One `/admin/reassign_partitions` naming several partitions (the model's
        `AdminReassignPartitions`, flat partition numbers)."""
        self.admin.create_partition_reassignment({self.layout.tp(p): list(r) for p, r in targets})

    def admin_delete_topic(self, t: int) -> None:
        self.admin.create_delete_topic_path(self.layout.topics[t])

    def admin_create_topic(self, t: int, replicas: tuple = ()) -> None:
        """Create topic `t` with its partitions on `replicas` (one list per partition), or on the
        layout's default spread when `()` (the model's `AdminCreateTopic`)."""
        assignment = self.layout.topic_assignment(t)
        if replicas:   # the model's `()` for the partitions a creation leaves to be added
            first = t * self.layout.partitions_per_topic
            assignment = {self.layout.tp(first + i): tuple(r) for i, r in enumerate(replicas) if r}
        self.admin.create_topic_assignment(self.layout.topics[t], assignment)

    def admin_add_partitions(self, t: int, replicas: tuple[tuple[int, ...], ...]) -> None:
        """Add partitions to topic `t` on `replicas`, one list per new partition (the model's
        `AdminAddPartitions`)."""
        self.admin_zk.add_partitions(self.layout.topics[t], replicas)

    def admin_move_controller(self) -> None:
        self.admin.zookeeper.delete(ControllerZNode.path)

    def admin_elect_leaders(self, tp: TopicPartition, unclean: bool) -> None:
        """The AdminClient's ElectLeaders request reaches the broker named in `/controller`, whose
        `KafkaApis` hands it to `controller.electLeaders`; a broker that is down never gets it.
        The answer is kept in `elect_answers`, one entry per request."""
        controller = ControllerZNode.decode(self.admin.zookeeper.get_data(ControllerZNode.path)[0]) \
            if self.admin.path_exists(ControllerZNode.path) else None
        if controller is None or not self.is_up(controller):
            return
        election_type = ElectionType.UNCLEAN if unclean else ElectionType.PREFERRED
        self.server(controller).controller.elect_leaders([tp], election_type, self.elect_answers.append)

    def admin_enable_unclean_election(self, t: int) -> None:
        """`kafka-configs.sh --alter --entity-type topics --add-config unclean.leader.election.enable=true`:
        `/config/topics/<t>` and a change notification written; the notification reaches every
        running broker with a live session in the same step (immediate delivery, as watches here)."""
        topic = self.layout.topics[t]
        config = {**self.admin.get_topic_config(topic), UNCLEAN_LEADER_ELECTION_ENABLE: "true"}
        self.admin.change_topic_config(topic, config)
        for b in sorted(self.servers):
            if self.is_up(b) and self.session_live(b):
                self.servers[b].process_config_change(f"topics/{topic}")

    # ---- the model's actions -----------------------------------------------------------------

    def _spend(self, budget: Budget) -> None:
        self.spent[budget] += 1

    def apply(self, action: a.Action) -> None:
        """Perform the implementation's counterpart of the model action `action`: the method its
        kind names (`kcm.model.actions.KINDS`, `counterpart`), given the action's fields, a
        partition as the implementation's topic-partition. A bounded kind spends its budget as the
        model's step does (`_spends`)."""
        kind = a.KIND_OF.get(type(action))
        if kind is None:
            raise TypeError(f"not a model action: {action!r}")
        if kind.budget is not None and self._spends(action):
            self._spend(kind.budget)
        args = [self.layout.tp(getattr(action, f.name)) if f.name == "partition" else getattr(action, f.name)
                for f in dataclasses.fields(action)]
        getattr(self, kind.counterpart)(*args)

    def _spends(self, action: a.Action) -> bool:
        """Whether `action` spends its budget now: a dead broker's session expiring heals, and a
        refused controlled shutdown retries for free (`SPENDS_WHEN`, the model's `spec._SPENDS_WHEN`
        read on the implementation)."""
        when = SPENDS_WHEN.get(type(action))
        return when is None or when(self, action)

    def close(self) -> None:
        for server in self.servers.values():
            if server.alive:
                server.crash()


#: Per kind whose budget is spent only sometimes: when the implementation spends it. The model's
#: `spec._SPENDS_WHEN`, read on the servers instead of the model's state; the kinds are the same
#: (tests/impl/test_step_cluster_spends.py).
SPENDS_WHEN: dict[type, Callable[[StepCluster, Any], bool]] = {
    a.ZkSessionExpire: lambda c, act: c.is_up(act.broker),
    a.BrokerRequestControlledShutdown:
        lambda c, act: c.server(act.broker).shutdown_state is ControlledShutdownState.NONE,
}
