"""`KafkaServer`: one broker process: its ZooKeeper session, controller module, replica manager and APIs.

kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala, reduced to what the controller story
needs. `startup()` opens a ZooKeeper session, creates the top-level paths, registers the ephemeral
/brokers/ids/<id> (its czxid is the broker epoch), starts the replica manager, the `KafkaController`
(which queues Startup) and starts listening on the `Network`.

Three ways for a process to end:

* `crash()`: the process dies. Its memory is gone (event queue, channel queues, replicas), it stops
  answering, and nothing is written; its ZooKeeper session lives on until the server expires it.
* `shutdown()`: a clean stop: as a crash, then the session is closed, so ZooKeeper deletes its
  ephemeral znodes at once.
* `controlled_shutdown()` (threaded mode): Kafka's `controlledShutdown` loop, then `shutdown()`. Each
  attempt (`request_controlled_shutdown`) finds the controller in /controller and sends it a
  ControlledShutdownRequest; the answer (`Shutdown` state DONE when no partition is left to move,
  RETRY otherwise) arrives from the controller's event thread. After
  `controlled.shutdown.max.retries` further attempts the broker stops anyway.

ZooKeeper session expiry: the ZooKeeper client learns of it, then runs the controller's
`beforeInitializingSession` (`clearAndPut(Expire)`, waiting until Expire is being processed), opens a
new session and runs `afterInitializingSession` (put RegisterBrokerAndReelect). Threaded mode does
this on a thread of its own when the session listener hears EXPIRED. Stepped mode splits it at the
model's points: `notice_session_expiry()` (the model's BrokerNoticeExpiry) and
`complete_session_reinitialization()` (right after the Expire event is processed).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from enum import Enum

from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.kafka_apis import ControlledShutdownCall, FetchRequest, KafkaApis
from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.kafka_controller import KafkaController
from kcm.impl.kafka_exception import KafkaException
from kcm.impl.logs import get_logger
from kcm.impl.metadata_cache import MetadataCache
from kcm.impl.network import BrokerUnavailable, Network
from kcm.impl.replica_manager import ReplicaManager
from kcm.impl.requests import ControlledShutdownRequest, ControlledShutdownResponse, Errors
from kcm.impl.timeline import Timeline
from kcm.impl.zk.handlers import ZNodeChildChangeHandler
from kcm.impl.zk.protocol import SessionState, ZooKeeper
from kcm.impl.zk_data import Broker, ConfigEntityChangeNotificationZNode

log = get_logger(__name__)


class ControlledShutdownState(Enum):
    """Where this broker's controlled shutdown stands (the model's `Shutdown`)."""

    NONE = "none"          # not shutting down
    AWAITING = "awaiting"  # request sent, no answer yet
    RETRY = "retry"        # refused, or partitions remain: try again, or give up
    DONE = "done"          # the controller moved every led partition away: stop the process


class KafkaServer:
    def __init__(self, broker_id: int, config: KafkaConfig, connect: Callable[[], ZooKeeper], network: Network,
                 timeline: Timeline, *, threaded: bool, on_registered: Callable[[int, int], None] = lambda b, e: None,
                 host: str = "localhost", port: int = 9092) -> None:
        self.broker_id = broker_id
        self.config = config
        self._connect = connect
        self.network = network
        self.timeline = timeline
        self._threaded = threaded
        self._on_registered = on_registered
        self._broker_info = Broker(broker_id, host, port)
        self.alive = False
        #: A Python error (a bug here, not a Kafka error) that ended one of this broker's threads.
        self.failure: BaseException | None = None
        #: The broker believes its ZooKeeper session is alive (it has not noticed an expiry).
        self.zk_session_believed_alive = False
        self.shutdown_state = ControlledShutdownState.NONE
        self.shutdown_tries = 0
        self._shutdown_answered = threading.Event()
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        # Built by the first `startup`; nothing reads them before the broker has started once.
        self.zk_client: ControllerZkClient
        self.controller: KafkaController
        self.replica_manager: ReplicaManager
        self.apis = KafkaApis(self)

    @property
    def broker_epoch(self) -> int:
        return self.controller.broker_epoch

    @property
    def session_id(self) -> int:
        return self.zk_client.session_id

    def _registered(self, czxid: int) -> None:
        self._on_registered(self.broker_id, czxid)
        self.timeline.append("broker", self.broker_id, detail=f"registered /brokers/ids/{self.broker_id} "
                                                              f"(broker epoch {czxid})")

    # ---- lifecycle ---------------------------------------------------------------------------

    def startup(self) -> None:
        session = self._connect()
        self.zk_client = ControllerZkClient(session, unfenced=self.config.flags.no_zk_epoch_fence)
        self._listen(session)
        self.zk_session_believed_alive = True
        self.zk_client.create_top_level_paths()
        broker_epoch = self.zk_client.register_broker(self._broker_info)
        self._registered(broker_epoch)
        self.replica_manager = ReplicaManager(self.broker_id, self.config, self.zk_client, self.timeline,
                                              MetadataCache())
        self.controller = KafkaController(self.broker_id, self.config, self.zk_client, self.network, self.timeline,
                                          broker_info=self._broker_info, broker_epoch=broker_epoch,
                                          threaded=self._threaded, on_registered=self._registered)
        self.alive = True
        self.network.register(self.broker_id, self.apis.handle)
        self.controller.startup()
        if self._threaded:
            self._start_thread("replica-maintenance", self._replica_maintenance)
            # DynamicConfigManager's change-notification listener: the stepped cluster delivers
            # each notification itself, in the admin's step, as the model does
            self._config_changes_seen: set[str] = set()
            self.zk_client.make_sure_persistent_path_exists(ConfigEntityChangeNotificationZNode.path)
            self.zk_client.register_znode_child_change_handler(_ConfigChangeHandler(self))
            self._on_config_changes()

    def crash(self) -> None:
        """The process dies: nothing more is sent, answered or written; the session lives on."""
        with self._lock:
            if not self.alive:
                return
            self.alive = False
        self.network.unregister(self.broker_id, self.apis.handle)
        self._stop.set()
        self.controller.kill()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join()
        self.timeline.append("broker", self.broker_id, detail="process stopped")

    def shutdown(self) -> None:
        """A clean stop: the process ends and closes its session (ephemeral znodes go at once)."""
        self.crash()
        self.zk_client.close()
        self.timeline.append("broker", self.broker_id, detail="session closed")

    def _start_thread(self, name: str, target: Callable[[], None]) -> None:
        def run() -> None:
            try:
                target()
            except KafkaException:
                raise
            except Exception as error:  # a bug of this implementation: recorded, so that the run fails
                log.exception("broker %d: implementation bug on thread %s", self.broker_id, name)
                self.failure = error

        thread = threading.Thread(target=run, name=f"broker-{self.broker_id}-{name}", daemon=True)
        self._threads.append(thread)
        thread.start()

    # ---- ZooKeeper session -------------------------------------------------------------------

    def _listen(self, session: ZooKeeper) -> None:
        if self._threaded:
            session.add_session_listener(self._on_session_state)

    def _on_session_state(self, state: SessionState) -> None:
        if state is SessionState.EXPIRED and self.alive:
            # ZooKeeperClient re-initialises on its own thread, never on the notifying one.
            self._start_thread("zk-session-reinit", self._reinitialize_session_threaded)

    def _reinitialize_session_threaded(self) -> None:
        self.zk_session_believed_alive = False
        self.timeline.append("broker", self.broker_id, detail="noticed its ZooKeeper session expired")
        session = self._connect()
        self._listen(session)
        # reinitialize runs the controller's handler: clearAndPut(Expire), wait for it, then swap
        # the session in and put RegisterBrokerAndReelect.
        self.zk_client.reinitialize(session)
        self.zk_session_believed_alive = self.alive
        if not self.alive:   # the process died meanwhile: the new session dies with it
            session.close()

    def notice_session_expiry(self) -> None:
        """Stepped mode: the ZooKeeper client learns its session expired: `clearAndPut(Expire)`."""
        self.zk_session_believed_alive = False
        self.timeline.append("broker", self.broker_id, detail="noticed its ZooKeeper session expired")
        self.controller.before_initializing_session()

    def complete_session_reinitialization(self) -> None:
        """Stepped mode: Expire is being processed, so the client opens its new session."""
        session = self._connect()
        self.zk_client.reinitialize(session)
        self.zk_session_believed_alive = True
        self.controller.after_initializing_session()

    # ---- dynamic configs ---------------------------------------------------------------------

    def _on_config_changes(self) -> None:
        """`ZkNodeChangeNotificationListener.processNotifications`: the notifications not seen yet,
        in order (the read re-arms the child watch)."""
        if not self.alive:
            return
        children = sorted(self.zk_client.get_config_change_notifications())
        for child in children:
            if child in self._config_changes_seen:
                continue
            self._config_changes_seen.add(child)
            entity_path = self.zk_client.get_config_change_entity(child)
            if entity_path is not None:
                self.process_config_change(entity_path)

    def process_config_change(self, entity_path: str) -> None:
        """The config-change listener's notification for `entity_path` (`topics/<t>`):
        `TopicConfigHandler.processConfigChanges` reads the topic's config and, when it switches
        unclean leader election on, tells the controller module
        (kafka@2.6.x:core/src/main/scala/kafka/server/ConfigHandler.scala lines 84-90). Other
        entities' changes are outside the model."""
        entity_type, _, topic = entity_path.partition("/")
        if entity_type != "topics" or not self.alive:
            return
        if self.zk_client.unclean_leader_election_enabled(topic, False):
            self.controller.enable_topic_unclean_leader_election(topic)

    # ---- controlled shutdown -----------------------------------------------------------------

    def request_controlled_shutdown(self) -> None:
        """One attempt: find the controller and send it ControlledShutdownRequest(id, broker epoch)."""
        with self._lock:
            self.shutdown_state = ControlledShutdownState.AWAITING
            self.shutdown_tries += 1
            self._shutdown_answered.clear()
            epoch = self.broker_epoch
        if self.config.alignment.watches_armed_only_where_model_arms:
            controller_id = self.zk_client.get_controller_id_unwatched()
        else:
            controller_id = self.zk_client.get_controller_id()
        self.timeline.append("shutdown", self.broker_id, peer=-1 if controller_id is None else controller_id,
                             detail=f"attempt {self.shutdown_tries}: ControlledShutdownRequest to controller "
                                    f"{controller_id}")
        call = ControlledShutdownCall(ControlledShutdownRequest(self.broker_id, epoch),
                                      lambda response: self._on_controlled_shutdown_response(epoch, response))
        try:
            if controller_id is None:
                raise BrokerUnavailable("no controller")
            self.network.send(controller_id, call)
        except BrokerUnavailable:
            with self._lock:
                self.shutdown_state = ControlledShutdownState.RETRY
                self._shutdown_answered.set()

    def _on_controlled_shutdown_response(self, epoch: int, response: ControlledShutdownResponse) -> None:
        with self._lock:
            # A session expiry re-registers this process with a higher broker epoch, but the process
            # still waits on its connection and reads the answer to the request it sent with the old
            # one (kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala lines 581-630);
            # only a process that stopped loses it. As the model's `answer_controlled_shutdown`.
            if (not self.alive or epoch > self.broker_epoch
                    or self.shutdown_state is not ControlledShutdownState.AWAITING):
                return   # this process is gone, or no longer waiting: nobody reads the answer
            done = response.error is Errors.NONE and not response.partitions_remaining
            self.shutdown_state = ControlledShutdownState.DONE if done else ControlledShutdownState.RETRY
            self._shutdown_answered.set()
        self.timeline.append("shutdown", self.broker_id,
                             detail=f"answer {response.error.name}, {len(response.partitions_remaining)} partitions "
                                    f"remaining: {self.shutdown_state.name}")

    def can_retry_controlled_shutdown(self) -> bool:
        """Another attempt is allowed: `controlled.shutdown.max.retries` retries after the first try."""
        return self.shutdown_tries <= self.config.controlled_shutdown_max_retries

    def controlled_shutdown(self, answer_timeout_s: float = 30.0) -> bool:
        """Threaded mode: attempt until DONE or out of retries, then stop; True if it was DONE."""
        while True:
            self.request_controlled_shutdown()
            self._shutdown_answered.wait(answer_timeout_s)
            if self.shutdown_state is ControlledShutdownState.DONE:
                break
            if not self.can_retry_controlled_shutdown():
                break
            self._stop.wait(self.config.controlled_shutdown_retry_backoff_ms / 1000)
        done = self.shutdown_state is ControlledShutdownState.DONE
        self.shutdown()
        return done

    # ---- threaded mode: fetching and ISR maintenance -------------------------------------------

    def _replica_maintenance(self) -> None:
        interval = self.config.replica_fetch_interval_ms / 1000
        while not self._stop.wait(interval):
            manager = self.replica_manager
            with manager.lock:
                following = [(tp, p.leader, p.leader_epoch) for tp, p in manager.all_partitions.items()
                             if not p.stopped and p.leader >= 0 and p.leader != self.broker_id]
            for tp, leader, epoch in following:
                with contextlib.suppress(BrokerUnavailable):
                    self.network.send(leader, FetchRequest(tp, self.broker_id, epoch))
            try:
                manager.maybe_shrink_and_expand_isr()
                manager.maybe_propagate_isr_changes()
            except KafkaException as error:   # a session that just expired: the next round retries
                log.debug("broker %d: ISR maintenance failed: %r", self.broker_id, error)


class _ConfigChangeHandler(ZNodeChildChangeHandler):
    """The child watch on `/config/changes` (kafka@2.6.x:core/src/main/scala/kafka/common/
    ZkNodeChangeNotificationListener.scala `ChangeNotificationHandler`)."""

    path = ConfigEntityChangeNotificationZNode.path

    def __init__(self, server: KafkaServer) -> None:
        self._server = server

    def handle_child_change(self) -> None:
        self._server._on_config_changes()
