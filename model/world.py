"""One step's working copy of the cluster, and the ZooKeeper semantics every step relies on.

`step` is a pure function of (state, action), but Kafka's handlers are long imperative
procedures. To write them the way Kafka does, a step thaws the immutable `Cluster` into a `World`
(lists in place of the top-level tuples), runs the handler against it, and freezes the result.
Records are still replaced, never mutated, so everything a step does not touch stays shared with
the previous state (cheap to build, cheap to hash).

ZooKeeper semantics (docs/model.md, "The state") live here, once:

- one-shot watches: a write fires the watches armed on its path, disarming them; a broker is
  notified only if its process is up and its session is the one that armed the watch; the
  notification becomes a controller event at the tail of its queue. Changes while a watch is
  disarmed are coalesced: nothing is delivered until a read re-arms it (`arm`).
- ephemeral znodes (`/controller`, `/brokers/ids/<id>`) are deleted when their session ends.
- conditional writes and the controller-epoch fence: `controller_write` checks the writer's
  cached epoch zkVersion against `/controller_epoch` (`CheckOp`, kafka@2.6.x:core/src/main/scala/
  kafka/zk/KafkaZkClient.scala `wrapRequestWithControllerEpochCheck`) and raises
  `ControllerMoved` on a mismatch, before anything is written (a multi is all or nothing).

Event queues are bounded by the config; a step that would overflow one is not taken (`Overflow`),
the way a TLC state constraint prunes: the bound is reported, never silently unsound.
"""

from __future__ import annotations

from kcm.model.cluster import (
    NO_ZNODE,
    NONE,
    Broker,
    Cluster,
    Event,
    EventKind,
    PartitionZnode,
    Request,
    RequestKind,
    Watch,
    Zk,
    partition_watch,
    put,
    topic_watch,
)
from kcm.model.config import ModelConfig
from kcm.model.variants import Flags


class Overflow(Exception):
    """An event queue would exceed its configured capacity; the step is not taken."""


class SessionExpired(Exception):
    """A ZooKeeper operation by a broker whose session has expired (it has not noticed yet)."""


class KafkaError(Exception):
    """Any other exception a controller handler throws (IllegalStateException, `None.get`, ...)."""


class NoEffect(Exception):
    """A fault that would change nothing (a lost reply armed for an event that writes no partition
    state); the step is not taken, so that it does not duplicate the fault-free step."""


class ControllerMoved(Exception):
    """A controller write failed the /controller_epoch CheckOp (Kafka's ControllerMovedException)."""


class World:
    """The cluster during one step: mutable at the top level, immutable records inside."""

    __slots__ = ("cfg", "flags", "zk", "brokers", "net", "spent", "nb", "np", "ppt", "ghost", "scenario", "obs",
                 "lose_reply")

    def __init__(self, cfg: ModelConfig, flags: Flags, state: Cluster) -> None:
        self.cfg = cfg
        self.flags = flags
        self.zk: Zk = state.zk
        self.brokers: list[Broker] = list(state.brokers)
        self.net: list[tuple[Request, ...]] = list(state.net)
        self.spent: list[int] = list(state.spent)
        self.ghost: int = state.ghost
        self.scenario: int = state.scenario
        self.nb = cfg.brokers
        self.np = cfg.topics * cfg.partitions
        self.ppt = cfg.partitions
        #: What happened during the step that the next state does not show: the table edges taken
        #: (`Edge`) and the elections made (`Election`). Transition invariants and coverage read it.
        self.obs: list = []
        #: `ZkLoseReply`: the broker whose next partition-state write this step loses its reply, or -1.
        self.lose_reply: int = NONE

    def freeze(self) -> Cluster:
        return Cluster(self.zk, tuple(self.brokers), tuple(self.net), tuple(self.spent), self.ghost, self.scenario)

    # ---- identities ------------------------------------------------------------------------

    def topic_of(self, p: int) -> int:
        return p // self.ppt

    def partitions_of_topic(self, t: int) -> range:
        return range(t * self.ppt, (t + 1) * self.ppt)

    # ---- controller event queues -----------------------------------------------------------

    def enqueue(self, b: int, event: Event) -> None:
        broker = self.brokers[b]
        if len(broker.queue) >= self.cfg.event_queue_capacity:
            raise Overflow(b)
        self.brokers[b] = broker._replace(queue=broker.queue + (event,))

    # ---- watches ---------------------------------------------------------------------------

    def zk_of(self, b: int) -> Zk:
        """ZooKeeper as broker `b` can read it: an expired session answers nothing (SESSIONEXPIRED)."""
        if not self.zk.session >> b & 1:
            raise SessionExpired(b)
        return self.zk

    def arm(self, b: int, bits: int) -> None:
        """Broker `b` reads a path with a registered handler, which (re-)arms its one-shot watch."""
        w = self.zk_of(b).watches
        if w[b] & bits != bits:
            self.zk = self.zk._replace(watches=put(w, b, w[b] | bits))

    def disarm(self, b: int, bits: int) -> None:
        """Broker `b` unregisters handlers: later notifications for them are ignored."""
        w = self.zk.watches
        if w[b] & bits:
            self.zk = self.zk._replace(watches=put(w, b, w[b] & ~bits))

    def fire(self, bit: int, event: Event | None) -> None:
        """A write fires every watch `bit` armed; each watcher that can hear it gets `event`
        (None: the handler ignores this kind of change, but the one-shot watch is spent all the same)."""
        w = self.zk.watches
        hit = [b for b in range(self.nb) if w[b] & bit]
        if not hit:
            return
        watches = list(w)
        for b in hit:
            watches[b] &= ~bit
        self.zk = self.zk._replace(watches=tuple(watches))
        if event is None:
            return
        for b in hit:
            broker = self.brokers[b]
            # The notification reaches the ZooKeeper client of the session that armed it; a dead
            # process or an expired session hears nothing.
            if broker.up and broker.connected and self.zk.session >> b & 1:
                self.enqueue(b, event)

    def fire_controller_change(self, deleted: bool) -> None:
        # kafka@2.6.x:.../KafkaController.scala ControllerChangeHandler: handleCreation and
        # handleDataChange put ControllerChange, handleDeletion puts Reelect.
        self.fire(Watch.CONTROLLER, Event(EventKind.Reelect if deleted else EventKind.ControllerChange))

    def fire_partition_state(self, p: int) -> None:
        self.fire(partition_watch(p), Event(EventKind.PartitionReassignmentIsrChange, p))

    def fire_topic(self, t: int, deleted: bool = False) -> None:
        """`/brokers/topics/<t>` written (or `deleted`): the data watch of `PartitionModificationsHandler`
        puts `PartitionModifications(t)` (`handleDataChange`; a deletion spends the watch, the
        handler has no `handleDeletion`: kafka@2.6.x:core/src/main/scala/kafka/controller/
        KafkaController.scala lines 1931-1935). Modelled only in configs that may add partitions
        (`ModelConfig.adds_partitions`): elsewhere no handler finds a new partition, and its event
        would only re-arm its own watch (docs/model.md, "Adding partitions")."""
        if self.cfg.adds_partitions:
            self.fire(topic_watch(t), None if deleted else Event(EventKind.PartitionModifications, t))

    # ---- ZooKeeper writes ------------------------------------------------------------------

    def check_epoch(self, b: int, epoch_zk_version: int) -> None:
        """The /controller_epoch CheckOp prefixed to every controller write by `b` (2.1+, KAFKA-6082).

        Variant V3 writes without it."""
        self.zk_of(b)
        if self.flags.no_zk_epoch_fence:
            return
        if epoch_zk_version != self.zk.controller_epoch:
            raise ControllerMoved(b)

    def set_partition_state(self, p: int, znode: PartitionZnode) -> None:
        """Write partition `p`'s state znode (create or conditional set already checked by the caller).

        `PartitionReassignmentIsrChangeHandler` handles data changes only: a create or a delete
        spends the one-shot watch without an event."""
        existed = self.zk.partitions[p] != NO_ZNODE
        self.zk = self.zk._replace(partitions=put(self.zk.partitions, p, znode))
        if existed and znode != NO_ZNODE:
            self.fire_partition_state(p)
        else:
            self.fire(partition_watch(p), None)

    def reply_lost(self, b: int) -> bool:
        """Broker `b` makes a partition-state write now: is this the write whose reply is lost?
        (Consumes the fault: only the first such write of the step loses its reply.)"""
        if self.lose_reply == b:
            self.lose_reply = NONE
            return True
        return False

    def delete_ephemerals(self, b: int) -> None:
        """Session `b` ended: ZooKeeper deletes `/brokers/ids/<b>` and, if `b` owns it, `/controller`."""
        if self.zk.broker_epochs[b]:
            self.zk = self.zk._replace(broker_epochs=put(self.zk.broker_epochs, b, 0))
            self.fire(Watch.BROKER_IDS, Event(EventKind.BrokerChange))
        if self.zk.controller == b:
            self.zk = self.zk._replace(controller=NONE)
            self.fire_controller_change(deleted=True)

    def register_broker(self, b: int) -> int:
        """Create ephemeral `/brokers/ids/<b>`; its czxid is the broker epoch (KIP-380), represented
        by `b`'s incarnation number (Zk docstring: only a broker's own epochs are ever compared)."""
        zk = self.zk_of(b)
        epoch = zk.incarnations[b] + 1
        self.zk = zk._replace(broker_epochs=put(zk.broker_epochs, b, epoch), incarnations=put(zk.incarnations, b, epoch))  # noqa: E501 - wrapped, it would renumber the mutants below
        self.fire(Watch.BROKER_IDS, Event(EventKind.BrokerChange))
        return epoch

    # ---- network ---------------------------------------------------------------------------

    def send(self, src: int, dst: int, request: Request) -> None:
        i = src * self.nb + dst
        queue = self.net[i]
        # The model's UpdateMetadata carries only its stamps, so one queued right behind an equal
        # one changes nothing when applied: it is coalesced (docs/model.md, "Abstractions").
        if queue and queue[-1] == request and request.kind is RequestKind.UpdateMetadata:
            return
        self.net[i] = queue + (request,)

    def drop_channel(self, src: int, dst: int) -> None:
        """`removeBroker`, or the whole channel manager shut down: queued requests are discarded."""
        i = src * self.nb + dst
        if self.net[i]:
            self.net[i] = ()
