"""The requests a controller sends and the brokers apply: fenced, ordered, and sent where due.

Kafka 2.6's controller batches LeaderAndIsr, UpdateMetadata and StopReplica requests per broker
(`ControllerBrokerRequestBatch`, sent in that order: UpdateMetadata first among the requests of
one batch), each stamped with its controller id and epoch and the receiving broker's epoch. A
broker rejects a request of an older controller epoch (`ReplicaManager.becomeLeaderOrFollower`,
`maybeUpdateMetadataCache`, `stopReplicas`: STALE_CONTROLLER_EPOCH) or addressed to an older
incarnation of itself (KIP-380, `KafkaApis.isBrokerEpochStale`), and a partition's leader epoch
only goes forward on it (kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala,
kafka@2.6.x:core/src/main/scala/kafka/server/KafkaApis.scala,
kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerChannelManager.scala).

So: one controller epoch means one sender; a broker's accepted controller epoch and applied
leader epochs never go back; a request for an older incarnation changes nothing; a broker applies
a LeaderAndIsr of an epoch only after that epoch's UpdateMetadata; and an election sends the
deposed leader, if live, the request that tells it.
"""

from __future__ import annotations

from collections.abc import Callable

from kcm.model.actions import NetworkDeliver
from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import (
    CONTROLLER_EVENTS,
    DELIVERIES,
    Declaration,
    Kind,
    Part,
    as_is,
    from_judge,
)
from kcm.model.catalogue.settledness import Judge
from kcm.model.catalogue.views import sent_in_step
from kcm.model.cluster import NO_REPLICA, Cluster, RequestKind


def unique_epoch_sender(s: Cluster) -> bool:
    """No two brokers send requests stamped with the same controller epoch: among the requests in
    flight and the UpdateMetadata each broker last applied, one epoch means one sender."""
    sender: dict[int, int] = {}
    for b in s.brokers:
        if b.metadata_controller >= 0:
            sender[b.metadata_epoch] = b.metadata_controller
    for queue in s.net:
        for r in queue:
            if sender.setdefault(r.controller_epoch, r.controller_id) != r.controller_id:
                return False
    return True


def stale_controller_rejected(s: Cluster, a, t: Cluster) -> bool:
    """A broker's highest accepted controller epoch never goes back."""
    if type(a) is not NetworkDeliver:
        return True
    return t.brokers[a.dst].controller_epoch >= s.brokers[a.dst].controller_epoch


def broker_leader_epoch_monotonic(s: Cluster, a, t: Cluster) -> bool:
    if type(a) is not NetworkDeliver:
        return True
    before, after = s.brokers[a.dst].replicas, t.brokers[a.dst].replicas
    if before is after:
        return True
    return all(y is x or y == NO_REPLICA or y.leader_epoch >= x.leader_epoch for x, y in zip(before, after))


def no_stale_broker_epoch_applied(s: Cluster, a, t: Cluster) -> bool:
    if type(a) is not NetworkDeliver:
        return True
    request = s.net[a.src * len(s.brokers) + a.dst][0]
    before, after = s.brokers[a.dst], t.brokers[a.dst]
    return request.broker_epoch >= before.epoch or (before.replicas == after.replicas
                                                    and before.metadata_epoch == after.metadata_epoch)


def metadata_before_leader_and_isr(s: Cluster, a, t: Cluster) -> bool:
    """A broker applies a LeaderAndIsr of controller epoch e only after an UpdateMetadata of epoch e."""
    if type(a) is not NetworkDeliver:
        return True
    request = s.net[a.src * len(s.brokers) + a.dst][0]
    if request.kind is not RequestKind.LeaderAndIsr or s.brokers[a.dst].replicas == t.brokers[a.dst].replicas:
        return True
    return s.brokers[a.dst].metadata_epoch >= request.controller_epoch


def deposed_leader_notified(judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant builder: the deposed leader, if live, is sent a LeaderAndIsr or a
    StopReplica for the partition in the same event (a reassignment stops the removed old leader
    instead of demoting it)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        n = len(s.brokers)
        for e in judge.elections(s, a):
            old = e.old_leader
            if old >= 0 and old != e.chosen and e.live >> old & 1 and old not in e.recipients:
                sent = sent_in_step(s, t, a.broker * n + old)
                if not any(part.partition == e.partition for r in sent for part in r.partitions):
                    return False
        return True
    return holds


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("UniqueEpochSender", "requests of one controller epoch all come from one broker",
                Kind.STATE, as_is(unique_epoch_sender),
                reads=frozenset({Part.ACCEPTED_EPOCHS, Part.CHANNELS})),
    Declaration("StaleControllerRejected", "a broker's accepted controller epoch never goes back",
                Kind.TRANSITION, as_is(stale_controller_rejected),
                reads=frozenset({Part.ACCEPTED_EPOCHS}), judges=DELIVERIES),
    Declaration("BrokerLeaderEpochMonotonic", "a broker's applied leader epochs never go back",
                Kind.TRANSITION, as_is(broker_leader_epoch_monotonic),
                reads=frozenset({Part.REPLICA_MANAGERS}), judges=DELIVERIES),
    Declaration("NoStaleBrokerEpochApplied", "a request for an older incarnation of the broker is not applied",
                Kind.TRANSITION, as_is(no_stale_broker_epoch_applied),
                reads=frozenset({Part.REPLICA_MANAGERS, Part.ACCEPTED_EPOCHS, Part.BROKER_LIVES, Part.CHANNELS}),
                judges=DELIVERIES),
    Declaration("MetadataBeforeLeaderAndIsr", "UpdateMetadata of an epoch arrives before its LeaderAndIsr",
                Kind.TRANSITION, as_is(metadata_before_leader_and_isr),
                reads=frozenset({Part.REPLICA_MANAGERS, Part.ACCEPTED_EPOCHS, Part.CHANNELS}), judges=DELIVERIES),
    Declaration("DeposedLeaderNotified",
                "a live deposed leader receives, in the electing event, the request that deposes it",
                Kind.TRANSITION, from_judge(deposed_leader_notified), judges=CONTROLLER_EVENTS,
                findings=((findings.REASSIGNMENT_WITHOUT_STATE_ZNODE, findings.reassignment_without_state_znode),)),
)
