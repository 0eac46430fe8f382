"""The whole cluster as one immutable value: ZooKeeper, every broker, and the network.

Every record is a `NamedTuple`: immutable and hashable like a frozen dataclass, but hashed and
compared in C, which the explorer does millions of times (see docs/model.md, "Representation").
Sets of brokers, partitions and topics are bitmasks (`int`), so that equal sets are equal values
with one canonical encoding; ordered lists (assignments, ISRs) are tuples in Kafka's order.

Identities: brokers are 0 .. B-1; partitions are numbered 0 .. P-1 across topics, partition `p`
belonging to topic `p // partitions_per_topic`; topics are 0 .. T-1.

ZooKeeper (`Zk`) holds what the znodes hold (kafka@2.6.x:core/src/main/scala/kafka/zk/ZkData.scala):

- `session`: the brokers with a live ZooKeeper session. A session lives on after its broker's
  process dies, until it expires.
- `controller`: the broker named in the ephemeral `/controller`, or -1.
- `controller_epoch`: `/controller_epoch`. Its zkVersion always equals it here (the znode is
  created with 0 at version 0 and every election sets epoch+1, so both move together), so the
  controller-epoch fence (`CheckOp(/controller_epoch, epochZkVersion)`) compares this number.
- `broker_epochs`: per broker the broker epoch of KIP-380, the czxid of the ephemeral
  `/brokers/ids/<id>`, 0 when absent, represented by the broker's *incarnation*: its k-th
  registration has epoch k. czxids are global zxids, but Kafka only ever compares a broker's
  epoch with epochs of the same broker: bounce detection (`curBrokerIdAndEpochs(brokerId) >
  controllerContext.liveBrokerIdAndEpochs(brokerId)`, kafka@2.6.x:core/src/main/scala/kafka/
  controller/KafkaController.scala `processBrokerChange`), the stale-epoch check of a control
  request against the receiving broker's own epoch (`brokerEpochInRequest <
  controller.brokerEpoch`, kafka@2.6.x:core/src/main/scala/kafka/server/KafkaApis.scala
  `isBrokerEpochStale`) and of a ControlledShutdown against the cached epoch of the same broker
  (`brokerEpoch < controllerContext.liveBrokerIdAndEpochs(id)`, KafkaController.scala
  `doControlledShutdown`). A broker's czxids grow with its registrations, so per-broker counters
  order them exactly as czxids do, and a broker renaming no longer meets a global order it would
  have to respect (model/checking/symmetry.py).
- `incarnations`: per broker, how many times it has registered (the next registration's epoch is
  one more).
- `assignment`, `adding`, `removing`: `/brokers/topics/<t>` per partition (JSON v2, KIP-455);
  `assignment` is `()` once the topic is deleted.
- `partitions`: the partition state znodes `{leader, leader_epoch, isr, controller_epoch}` with
  their zkVersion (`NO_ZNODE` when absent).
- `reassign`: `/admin/reassign_partitions`, the target replicas per partition (`()` for none; the
  znode exists iff some entry is non-empty). `preferred`: `/admin/preferred_replica_election`
  (partition bitmask; 0 = absent). `delete_topics`: the children of `/admin/delete_topics`.
  `isr_changes`: partitions named by pending `/isr_change_notification` znodes.
- `log_dir_events`: the brokers with a pending `/log_dir_event_notification/log_dir_event_<seq>`
  znode (`propagateLogDirEvent`, written when a log directory fails); the znode's data is the
  broker id, so several notifications of one broker ask the controller the same thing and are one
  bit here.
- `unclean_topics`: the topics whose `/config/topics/<t>` sets `unclean.leader.election.enable`
  to true at run time (a dynamic topic config); the config's static `unclean_election` is the
  value of every topic without it.
- `watches`: per broker, the one-shot watches it has armed (bitmask of `Watch` bits, plus one
  `PARTITION_STATE` bit per partition for `PartitionReassignmentIsrChangeHandler`, and one bit per
  topic for the data watch on `/brokers/topics/<t>` of `PartitionModificationsHandler`).

A broker (`Broker`) is its process (`up`), its belief about its ZooKeeper session, its broker
epoch, its controller module (`active`, the `Context` caches, the event `queue`, the controlled
shutdown it may be running) and its replica manager (`controller_epoch` seen, the epoch of the
last UpdateMetadata applied, and one `Replica` per partition).

The network (`net`) holds, for each controller `c` and broker `d`, the FIFO queue of requests in
`c`'s ControllerChannelManager for `d` (index `c * B + d`): what `c` has sent and `d` has not yet
received. A request is stamped with the sender's id and controller epoch and `d`'s broker epoch
as the sender knew it.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, NamedTuple

from kcm.model.states import PartitionState, ReplicaState

NONE = -1


class Watch(IntEnum):
    """Bits of `Zk.watches[b]`: the one-shot ZooKeeper watches broker `b` has armed."""

    CONTROLLER = 1        # exists/data watch on /controller (ControllerChangeHandler), every broker
    BROKER_IDS = 2        # child watch on /brokers/ids (BrokerChangeHandler), the controller
    DELETE_TOPICS = 4     # child watch on /admin/delete_topics (TopicDeletionHandler)
    ISR_CHANGE = 8        # child watch on /isr_change_notification (IsrChangeNotificationHandler)
    PREFERRED = 16        # exists watch on /admin/preferred_replica_election
    REASSIGN = 32         # exists watch on /admin/reassign_partitions (PartitionReassignmentHandler)
    TOPICS = 64           # child watch on /brokers/topics (TopicChangeHandler)
    LOG_DIR_EVENT = 128   # child watch on /log_dir_event_notification (LogDirEventNotificationHandler)


#: The controller's watches (everything but /controller), dropped at resignation.
CONTROLLER_WATCHES = (Watch.BROKER_IDS | Watch.DELETE_TOPICS | Watch.ISR_CHANGE | Watch.PREFERRED | Watch.REASSIGN
                      | Watch.TOPICS | Watch.LOG_DIR_EVENT)
#: Bit of the data watch on partition `p`'s state znode (PartitionReassignmentIsrChangeHandler).
PARTITION_STATE_SHIFT = 8
#: Bit of the data watch on topic `t`'s `/brokers/topics/<t>` (PartitionModificationsHandler), past
#: the partition-state bits of the largest config (3 topics of 3 partitions: model/config.py).
TOPIC_SHIFT = PARTITION_STATE_SHIFT + 9


def partition_watch(p: int) -> int:
    return 1 << (PARTITION_STATE_SHIFT + p)


def topic_watch(t: int) -> int:
    return 1 << (TOPIC_SHIFT + t)


class PartitionZnode(NamedTuple):
    """/brokers/topics/<t>/partitions/<p>/state, or a controller's cached copy of it
    (`LeaderIsrAndControllerEpoch` plus the zkVersion)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    version: int


NO_ZNODE = PartitionZnode(NONE, NONE, (), NONE, NONE)


class Zk(NamedTuple):
    session: int
    controller: int
    controller_epoch: int
    broker_epochs: tuple[int, ...]
    incarnations: tuple[int, ...]
    assignment: tuple[tuple[int, ...], ...]
    adding: tuple[tuple[int, ...], ...]
    removing: tuple[tuple[int, ...], ...]
    partitions: tuple[PartitionZnode, ...]
    reassign: tuple[tuple[int, ...], ...]
    preferred: int
    delete_topics: int
    isr_changes: int
    watches: tuple[int, ...]
    unclean_topics: int = 0
    log_dir_events: int = 0


class EventKind(IntEnum):
    """The controller events the model has (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala,
    the `ControllerEvent` case objects and classes from line 2013 on; their handlers in `process`)."""

    Startup = 0
    Reelect = 1
    ControllerChange = 2
    Expire = 3
    RegisterBrokerAndReelect = 4
    BrokerChange = 5
    IsrChangeNotification = 6
    ControlledShutdown = 7
    ReplicaLeaderElection = 8
    AutoPreferredReplicaLeaderElection = 9
    ZkPartitionReassignment = 10
    PartitionReassignmentIsrChange = 11
    TopicDeletion = 12
    TopicDeletionStopReplicaResponseReceived = 13
    TopicChange = 14
    PartitionModifications = 15
    TopicUncleanLeaderElectionEnable = 16
    LogDirEventNotification = 17
    LeaderAndIsrResponseReceived = 18


class Event(NamedTuple):
    """A queued controller event; `a` and `b` are its arguments (-1 when unused):
    ControlledShutdown(a=broker, b=broker epoch), PartitionReassignmentIsrChange(a=partition),
    PartitionModifications(a=topic),
    TopicDeletionStopReplicaResponseReceived(a=broker, b=the partitions deleted, plus those answered
    with KAFKA_STORAGE_ERROR shifted by `FAILED_SHIFT`), ReplicaLeaderElection(a=partition,
    b=`ElectionType`) for the AdminClient's request (a=-1: the ZooKeeper-triggered one),
    TopicUncleanLeaderElectionEnable(a=topic), LeaderAndIsrResponseReceived(a=broker, b=the
    partitions answered with KAFKA_STORAGE_ERROR)."""

    kind: EventKind
    a: int = NONE
    b: int = NONE


#: Where a StopReplica answer's failed partitions start in its event's `b` (past the partitions of
#: the largest config, model/config.py).
FAILED_SHIFT = 9


class ElectionType(IntEnum):
    """`org.apache.kafka.common.ElectionType`: what an ElectLeaders request asks for (KIP-460)."""

    PREFERRED = 0
    UNCLEAN = 1


class ApiError(IntEnum):
    """The per-partition answers of an ElectLeaders request (`org.apache.kafka.common.protocol.Errors`
    as `processReplicaLeaderElection` gives them, kafka@2.6.x:core/src/main/scala/kafka/controller/
    KafkaController.scala lines 1773-1793)."""

    NONE = 0                            # elected: the answer carries the new leader
    NOT_CONTROLLER = 1
    ELECTION_NOT_NEEDED = 2
    PREFERRED_LEADER_NOT_AVAILABLE = 3
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 4
    INVALID_TOPIC_EXCEPTION = 5         # the topic is queued for deletion
    UNKNOWN_TOPIC_OR_PARTITION = 6
    UNKNOWN_SERVER_ERROR = 7            # any other failure (`ApiError.fromThrowable`)


class ElectLeadersAnswer(NamedTuple):
    """Observation: the controller's callback answered an ElectLeaders request for `partition`
    with `error`, and with `leader` when elected (-1 otherwise)."""

    partition: int
    election_type: ElectionType
    error: ApiError
    leader: int


class RequestKind(IntEnum):
    LeaderAndIsr = 0
    UpdateMetadata = 1
    StopReplica = 2


class LeaderAndIsrPartition(NamedTuple):
    """One partition of a LeaderAndIsr request (`LeaderAndIsrPartitionState`)."""

    partition: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    is_new: bool


class StopReplicaPartition(NamedTuple):
    """One partition of a StopReplica request (KIP-570: with its leader epoch, -2 during deletion)."""

    partition: int
    leader_epoch: int
    delete: bool


class Request(NamedTuple):
    """A controller-to-broker request. `partitions` holds `LeaderAndIsrPartition`s or
    `StopReplicaPartition`s; UpdateMetadata carries none (see docs/model.md: the metadata cache
    is abstracted to the epoch of the last UpdateMetadata applied)."""

    kind: RequestKind
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partitions: tuple = ()


class Context(NamedTuple):
    """A controller's `ControllerContext` (kafka@2.6.x:.../controller/ControllerContext.scala).

    `replica_states[p]` has one state per broker (NonExistentReplica for the brokers that are
    not replicas). `leadership[p]` is the cached partition state (NO_ZNODE when unknown).
    `channel` is the set of brokers the ControllerChannelManager has a queue for.
    `offline_dirs[b]` is `replicasOnOfflineDirs(b)`: the partitions broker `b` answered a
    LeaderAndIsr for with KAFKA_STORAGE_ERROR (a partition bitmask).
    """

    epoch: int
    live: int
    broker_epochs: tuple[int, ...]
    shutting_down: int
    assignment: tuple[tuple[int, ...], ...]
    adding: tuple[tuple[int, ...], ...]
    removing: tuple[tuple[int, ...], ...]
    reassigning: int
    leadership: tuple[PartitionZnode, ...]
    partition_states: tuple[PartitionState, ...]
    replica_states: tuple[tuple[ReplicaState, ...], ...]
    topics_to_delete: int
    topics_ineligible: int
    topics_deletion_started: int
    channel: int
    offline_dirs: tuple[int, ...]


class Replica(NamedTuple):
    """A broker's view of one partition (the broker-side `Partition`).

    `leader_epoch` is -1 before the first LeaderAndIsr. A leader keeps its ISR and the zkVersion
    it will write conditionally on; a follower keeps the leader it fetches from. `stopped` after
    StopReplica(delete=false): the replica neither leads nor fetches.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    stopped: bool


NO_REPLICA = Replica(NONE, NONE, (), NONE, (), False)


class Shutdown(IntEnum):
    """Where a broker's controlled shutdown stands (kafka@2.6.x:core/.../server/KafkaServer.scala)."""

    NONE = 0        # not shutting down
    AWAITING = 1    # ControlledShutdownRequest sent, no answer yet
    RETRY = 2       # refused, or partitions remain: try again (or give up after the retries)
    DONE = 3        # the controller moved every led partition away: stop the process


class Broker(NamedTuple):
    up: bool
    #: The broker still believes its ZooKeeper session is alive (it has not noticed an expiry).
    connected: bool
    epoch: int
    #: The controller module: `activeControllerId == self`, its context, its event queue.
    active: bool
    ctx: Context
    queue: tuple[Event, ...]
    #: The replica manager: highest controller epoch accepted, the last UpdateMetadata's epoch and sender.
    controller_epoch: int
    metadata_epoch: int
    #: The controller id the last UpdateMetadata named (the metadata cache's controllerId).
    metadata_controller: int
    replicas: tuple[Replica, ...]
    shutdown: Shutdown
    shutdown_tries: int
    #: The partitions whose replica sat in a log directory that failed (`HostedPartition.Offline`;
    #: the model gives each replica its own directory); back only when the process restarts.
    offline_dirs: int = 0


class Cluster(NamedTuple):
    """The state of the whole system."""

    zk: Zk
    brokers: tuple[Broker, ...]
    net: tuple[tuple[Request, ...], ...]
    #: Fault and admin budgets spent so far, one counter per `Budget`.
    spent: tuple[int, ...]
    #: History the invariants need and the cluster forgets (`Ghost` bits); 0 unless a rule broke.
    ghost: int = 0
    #: Which run of the config this state belongs to: 0 for the config's own budgets from a cold
    #: start, i >= 1 for its (i-1)-th `overlapping` run from a settled cluster (model/spec.py).
    #: Like a constant chosen in a TLA+ Init, it only selects which budgets apply.
    scenario: int = 0


class Budget(IntEnum):
    """The bounded faults and admin operations (ModelConfig.max_*)."""

    BROKER_CRASHES = 0
    SESSION_EXPIRIES = 1
    LEADER_ISR_SHRINKS = 2
    CONTROLLED_SHUTDOWNS = 3
    PREFERRED_ELECTIONS = 4
    REASSIGNMENTS = 5
    TOPIC_DELETIONS = 6
    AUTO_REBALANCES = 7
    CONTROLLER_MOVES = 8
    TOPIC_CREATIONS = 9
    LOST_ACKS = 10
    CONNECTION_LOSSES = 11
    PARTITION_ADDITIONS = 12
    ELECT_LEADERS = 13
    UNCLEAN_ELECTION_ENABLES = 14
    LOG_DIR_FAILURES = 15


class Ghost(IntEnum):
    """Bits of `Cluster.ghost`: things that happened which no other variable remembers.

    Like a TLA+ history variable, a ghost bit is written only when the event it records happens,
    so in runs where nothing breaks it stays 0 and splits no states.
    """

    #: A controller module that was not active added requests to a batch or wrote ZooKeeper (V4).
    ACTED_WHILE_INACTIVE = 1


class Edge(NamedTuple):
    """Observation: a state machine was asked for `frm -> to`; taken if `valid` (self-loops
    included), else logged and skipped as Kafka does."""

    machine: str
    frm: IntEnum
    to: IntEnum
    partition: int
    broker: int
    valid: bool


class Election(NamedTuple):
    """Observation: a controller elected `chosen` for `partition` with `strategy`.

    `expected` is what Kafka 2.6's algorithm returns for the same inputs (a variant may choose
    otherwise); `live` are the live-or-shutting-down brokers the controller knew, `online` the
    live ones not shutting down; `isr` the ISR the election read."""

    partition: int
    strategy: IntEnum
    chosen: int
    expected: int
    old_leader: int
    recipients: tuple[int, ...]
    live: int
    online: int
    isr: tuple[int, ...]
    unclean_allowed: bool


def empty_context(brokers: int, partitions: int) -> Context:
    """The context after `resetContext()`: epoch 0, nothing known (kafka@2.6.x ControllerContext.resetContext)."""
    none_p = tuple(() for _ in range(partitions))
    return Context(
        epoch=0, live=0, broker_epochs=(0,) * brokers, shutting_down=0,
        assignment=none_p, adding=none_p, removing=none_p, reassigning=0,
        leadership=(NO_ZNODE,) * partitions,
        partition_states=(PartitionState.NonExistentPartition,) * partitions,
        replica_states=((ReplicaState.NonExistentReplica,) * brokers,) * partitions,
        topics_to_delete=0, topics_ineligible=0, topics_deletion_started=0, channel=0,
        offline_dirs=(0,) * brokers)


def bits(mask: int) -> tuple[int, ...]:
    """The members of a bitmask, ascending."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return tuple(out)


def mask_of(items) -> int:
    m = 0
    for i in items:
        m |= 1 << i
    return m


def put(t: tuple, i: int, v) -> tuple:
    """`t` with position `i` replaced by `v`."""
    return t[:i] + (v,) + t[i + 1:]


def _with_fast_replace(cls: Any) -> None:
    """Give a record class (a NamedTuple class: `type` has no `_fields`) a `_replace` compiled for its fields.

    `NamedTuple._replace` builds the new tuple through `map(kwds.pop, ...)` and a length check; the
    explorer calls it several times for every generated state. This one takes keyword-only arguments
    defaulting to a marker and builds the tuple in one expression; same result, same errors for an
    unknown field (a TypeError here)."""
    names = cls._fields
    params = ", ".join(f"{n}=_KEEP" for n in names)
    values = ", ".join(f"self[{i}] if {n} is _KEEP else {n}" for i, n in enumerate(names))
    namespace = {"_KEEP": object(), "_new": tuple.__new__, "_cls": cls}
    exec(f"def _replace(self, *, {params}):\n    return _new(_cls, ({values},))", namespace)
    namespace["_replace"].__doc__ = f"`{cls.__name__}` with the given fields replaced."
    cls._replace = namespace["_replace"]


for _record in (PartitionZnode, Zk, Event, LeaderAndIsrPartition, StopReplicaPartition, Request, Context,
                Replica, Broker, Cluster):
    _with_fast_replace(_record)
