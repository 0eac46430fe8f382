"""`ThreadedCluster`: the implementation running as Kafka does, with real threads, for `kcm simulate`.

Every broker is a `KafkaServer` in threaded mode: a controller event thread, one request send thread
per destination broker, a replica-maintenance thread (followers fetch, leaders expand and shrink the
ISR and propagate ISR changes), timers for the auto rebalance, and a thread that re-initialises the
ZooKeeper session after an expiry. ZooKeeper is either the embedded server (watch notifications
delivered on the writing thread) or a real server through kazoo, in a chroot of its own.

The operations are what an operator or a failure does: start, crash (the process dies; its session
expires after `session_timeout_s`, as ZooKeeper would decide), bounce (crash, the old session
expires, start again at once), expire a session, a controlled shutdown, and the admin znodes
(create and delete topics, reassign a partition, ask for a preferred election, move the
controller). `settle()` waits until nothing is moving; `snapshot()` pauses every controller between
two events and every replica manager, and returns the model state (`kcm.impl.abstraction.abstract`)
so that the model's state invariants can be checked on a running cluster.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack

from kcm.impl.abstraction import abstract
from kcm.impl.admin_zk_client import AdminZkClient
from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.kafka_server import KafkaServer
from kcm.impl.kafka_zk_client import KafkaZkClient
from kcm.impl.layout import Layout
from kcm.impl.network import Network
from kcm.impl.requests import ElectionType
from kcm.impl.timeline import Timeline
from kcm.impl.zk.memory import Delivery, MemoryZooKeeperServer
from kcm.impl.zk.protocol import NoNodeError, ZooKeeper
from kcm.impl.zk_data import (
    UNCLEAN_LEADER_ELECTION_ENABLE,
    ControllerZNode,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)
from kcm.model.cluster import Budget, Cluster


class ZooKeeperView:
    """What the abstraction reads from a real ZooKeeper: the tree under the cluster's chroot, the
    live sessions (as the clients see them) and no armed watches (a client cannot list them)."""

    def __init__(self, cluster: ThreadedCluster) -> None:
        self._cluster = cluster

    def snapshot(self) -> dict:
        zk = self._cluster.admin.zookeeper
        out = {}

        def walk(path: str) -> None:
            try:
                data, stat = zk.get_data(path)
                children = zk.get_children(path)
            except NoNodeError:
                return
            out[path] = (data, stat)
            for child in children:
                walk(f"{path.rstrip('/')}/{child}")

        walk("/")
        return out

    def live_sessions(self) -> frozenset[int]:
        return frozenset(s.session_id for s in self._cluster.servers.values()
                         if s.alive and s.zk_session_believed_alive)

    def armed_watches(self) -> frozenset:
        return frozenset()


class ImplementationBug(AssertionError):
    """A Python error on one of the implementation's threads: a bug of kcm.impl, never input."""


class ThreadedCluster:
    def __init__(self, brokers: int, *, zookeeper: str = "memory", config: KafkaConfig | None = None,
                 timeline: Timeline | None = None, connect_timeout_s: float = 5.0,
                 session_timeout_s: float = 1.0) -> None:
        self.brokers = brokers
        self.config = config or KafkaConfig()
        self.timeline = timeline or Timeline()
        self.session_timeout_s = session_timeout_s
        self.network = Network()
        self.servers: dict[int, KafkaServer] = {}
        self.registrations: list[tuple[int, int]] = []  # (broker, czxid), in order
        self.spent = [0] * len(Budget)
        self._lock = threading.RLock()
        #: Sessions of crashed brokers that ZooKeeper has not expired yet, by broker id.
        self._pending_expiry: dict[int, threading.Timer] = {}
        #: The chroot of the run on a real ZooKeeper (None on the embedded one); the caller removes it.
        self.chroot: str | None = None
        #: What the abstraction reads ZooKeeper through: the embedded server itself, or a view of the real one.
        self.zookeeper: MemoryZooKeeperServer | ZooKeeperView
        if zookeeper == "memory":
            server = MemoryZooKeeperServer(Delivery.IMMEDIATE)
            self.zookeeper = server
            self._connect: Callable[[], ZooKeeper] = server.connect
        else:
            from kcm.impl.zk.kazoo_backend import KazooZooKeeper  # kazoo is loaded only for a real server

            root = KazooZooKeeper.connect(zookeeper, timeout=connect_timeout_s)   # ZooKeeperUnavailable if down
            chroot = f"/kcm-simulate-{uuid.uuid4().hex[:8]}"
            try:
                root.create(chroot)
            finally:
                root.close()
            self.chroot = chroot
            hosts = zookeeper + chroot
            self._connect = lambda: KazooZooKeeper.connect(hosts, timeout=connect_timeout_s,
                                                           session_timeout=max(2.0, session_timeout_s * 4))
            self.zookeeper = ZooKeeperView(self)
        self.admin = KafkaZkClient(self._connect())
        self.admin.create_top_level_paths()

    # ---- the layout the abstraction uses -------------------------------------------------------

    @property
    def layout(self) -> Layout:
        topics = tuple(sorted(self.admin.get_all_topics_in_cluster()))
        assignment = self.admin.get_full_replica_assignment_for_topics(topics)
        per_topic = max([tp.partition + 1 for tp in assignment] or [1])
        rf = max([len(ra.replicas) for ra in assignment.values()] or [1])
        return Layout(self.brokers, topics, per_topic, rf)

    # ---- brokers -------------------------------------------------------------------------------

    def _on_registered(self, b: int, czxid: int) -> None:
        with self._lock:
            self.registrations.append((b, czxid))

    def is_up(self, b: int) -> bool:
        server = self.servers.get(b)
        return server is not None and server.alive

    def live_brokers(self) -> list[int]:
        """The brokers whose process runs (they fetch, lead and answer requests), in id order."""
        return sorted(b for b, server in list(self.servers.items()) if server.alive)

    def start_broker(self, b: int) -> None:
        """Start broker `b` (after a crash, once ZooKeeper has expired the old session: until then
        /brokers/ids/<b> belongs to it and registration would fail)."""
        pending = self._pending_expiry.get(b)
        if pending is not None:
            pending.join()
        server = KafkaServer(b, self.config, self._connect, self.network, self.timeline, threaded=True,
                             on_registered=self._on_registered, port=9092 + b)
        with self._lock:
            self.servers[b] = server
        server.startup()
        self.timeline.append("broker", b, detail="started")

    def crash_broker(self, b: int, expire_after_s: float | None = None) -> None:
        """The process dies; ZooKeeper expires its session `expire_after_s` later (the session timeout)."""
        server = self.servers[b]
        server.crash()
        delay = self.session_timeout_s if expire_after_s is None else expire_after_s

        def expire() -> None:
            self._expire(server)
            self._pending_expiry.pop(b, None)

        timer = threading.Timer(delay, expire)
        timer.daemon = True
        self._pending_expiry[b] = timer
        timer.start()

    def bounce_broker(self, b: int) -> None:
        """A fast restart: the process dies, its session ends, and it starts again at once."""
        server = self.servers[b]
        server.crash()
        self._expire(server)
        self.start_broker(b)

    def expire_session(self, b: int) -> None:
        self._expire(self.servers[b])

    def _expire(self, server: KafkaServer) -> None:
        session = server.zk_client.zookeeper
        if isinstance(self.zookeeper, MemoryZooKeeperServer):
            self.zookeeper.expire_session(session.session_id)
        else:
            from kcm.impl.zk.kazoo_backend import KazooZooKeeper, expire_session

            assert isinstance(session, KazooZooKeeper), "on a real ZooKeeper the sessions are kazoo's"
            with contextlib.suppress(Exception):  # the session was already gone
                expire_session(session)
        self.timeline.append("broker", server.broker_id, detail="ZooKeeper session expired")

    def controlled_shutdown(self, b: int) -> bool:
        """Kafka's controlled shutdown of broker `b`, then its stop; True if every leader moved away."""
        return self.servers[b].controlled_shutdown()

    def controller_id(self) -> int:
        data, _ = self.admin.get_data_and_stat(ControllerZNode.path)
        controller = None if data is None else ControllerZNode.decode(data)
        return -1 if controller is None else controller

    # ---- admin -----------------------------------------------------------------------------------

    def create_topic(self, topic: str, assignment: dict[int, tuple[int, ...]]) -> None:
        self.admin.create_topic_assignment(topic, {TopicPartition(topic, p): r for p, r in assignment.items()})

    def add_partitions(self, topic: str, replicas: tuple[tuple[int, ...], ...]) -> None:
        """The admin side of CreatePartitions: one new partition per replica list (`AdminZkClient`)."""
        AdminZkClient(self.admin).add_partitions(topic, replicas)

    def delete_topic(self, topic: str) -> None:
        self.admin.create_delete_topic_path(topic)

    def reassign(self, tp: TopicPartition, replicas: tuple[int, ...]) -> None:
        self.admin.create_partition_reassignment({tp: list(replicas)})

    def preferred_election(self, tp: TopicPartition) -> None:
        self.admin.create_preferred_replica_election([tp])

    def elect_leaders(self, partitions: list[TopicPartition], unclean: bool,
                      callback: Callable[[dict], None]) -> bool:
        """The AdminClient's ElectLeaders request to the broker `/controller` names (False when no
        running broker is named); `callback` gets the answer per partition."""
        controller = self.admin.get_controller_id()
        server = self.servers.get(controller) if controller is not None else None
        if server is None or not server.alive:
            return False
        server.controller.elect_leaders(partitions, ElectionType.UNCLEAN if unclean else ElectionType.PREFERRED,
                                        callback)
        return True

    def enable_unclean_election(self, topic: str) -> None:
        """`kafka-configs.sh --alter --entity-type topics --add-config unclean.leader.election.enable=true`."""
        self.admin.change_topic_config(topic, {**self.admin.get_topic_config(topic),
                                               UNCLEAN_LEADER_ELECTION_ENABLE: "true"})

    def fail_log_dir(self, b: int, tp: TopicPartition) -> None:
        """The log directory of broker `b`'s replica of `tp` fails (`handleLogDirFailure`)."""
        self.servers[b].replica_manager.handle_log_dir_failure(tp)

    def move_controller(self) -> None:
        with contextlib.suppress(NoNodeError):
            self.admin.zookeeper.delete(ControllerZNode.path)

    def partition_states(self) -> dict[TopicPartition, tuple[tuple[int, ...], LeaderIsrAndControllerEpoch | None]]:
        """Every partition: (replicas, its state znode or None), read from ZooKeeper."""
        out = {}
        topics = self.admin.get_all_topics_in_cluster()
        for tp, ra in sorted(self.admin.get_full_replica_assignment_for_topics(topics).items()):
            out[tp] = (ra.replicas, self.admin.get_topic_partition_state(tp))
        return out

    # ---- waiting and looking -----------------------------------------------------------------------

    def raise_bugs(self) -> None:
        """Fail with the first Python error an implementation thread hit: Kafka's own errors are
        contained where Kafka contains them, but a TypeError or a KeyError is a bug here, and a run
        that logged and dropped it would pass (`kcm.impl.kafka_exception`)."""
        for broker, server in sorted(self.servers.items()):
            sessions = [getattr(server, "zk_client", None)]
            sessions = [getattr(getattr(s, "_zk", s), "failure", None) for s in sessions if s is not None]
            for failure in (server.failure, server.controller.event_manager.failure, *sessions):
                if failure is not None:
                    raise ImplementationBug(f"broker {broker}: {failure!r} on an implementation thread") from failure

    def quiet(self) -> bool:
        """No controller event queued or running, no request queued or in flight, no ISR change waiting,
        no leader about to expand or shrink an ISR (`ReplicaManager.isr_change_due`)."""
        self.raise_bugs()
        if self._pending_expiry:
            return False
        alive = self.live_brokers()
        for server in (self.servers[b] for b in alive):
            if not server.controller.event_manager.is_idle() or not server.controller.channel_manager.is_idle():
                return False
        return not any(self.servers[b].replica_manager.isr_change_due(alive) for b in alive)

    def settle(self, timeout_s: float = 10.0, quiet_for_s: float = 0.3) -> bool:
        """Wait until the cluster has been quiet for `quiet_for_s` (ISR expansions take a few fetches)."""
        deadline = time.monotonic() + timeout_s
        quiet_since = None
        while time.monotonic() < deadline:
            if self.quiet():
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= quiet_for_s:
                    return True
            else:
                quiet_since = None
            time.sleep(0.02)
        return False

    def snapshot(self) -> Cluster:
        """The model state of the cluster, taken with every controller paused between two events and
        every replica manager between two requests."""
        with ExitStack() as stack:
            servers = [self.servers[b] for b in self.live_brokers()]
            for server in servers:
                stack.enter_context(server.controller.event_manager.processing_lock)
            for server in servers:
                stack.enter_context(server.replica_manager.lock)
            return abstract(self)

    def close(self) -> None:
        for timer in list(self._pending_expiry.values()):
            timer.cancel()
        for server in list(self.servers.values()):
            if server.alive:
                server.crash()
            with contextlib.suppress(Exception):
                server.zk_client.close()   # the dead process's session too: nothing may outlive the run
        with contextlib.suppress(Exception):
            self.admin.close()

