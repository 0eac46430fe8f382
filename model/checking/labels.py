"""What a step of the Kafka model does, in one line for a reader: `KafkaModel.describe_action`.

An action's label (`Model.format_action`, its repr) names the actor only: `ControllerProcessEvent(broker=0)`
is "broker 0's controller event thread takes the head of its queue", whichever event that is. The
label must stay so (replay matches steps by label, kcm.checker.engine.replay), so the reader's
line is a second rendering, the label followed by what the state before the step holds for it:

- `ControllerProcessEvent`, `ZkLoseReply`, `ZkConnectionLoss`: the event at the head of the
  broker's queue, named as Kafka names its `ControllerEvent` with the arguments it carries
  (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala, the event classes
  from line 2013 on): `ControllerProcessEvent(broker=0): Startup`;
- `NetworkDeliver`: the request at the head of the channel, as traces print requests in flight
  (`Kind(cC,eE,beB)`: sending controller, its controller epoch, the broker epoch addressed), with
  the partitions it carries;
- every other action: its label alone (its fields say everything it does).

Nothing here decides anything: it reads the state as `model/spec.py` will, and never steps.
"""

from __future__ import annotations

from typing import Any

from kcm.model.actions import ControllerProcessEvent, NetworkDeliver, ZkConnectionLoss, ZkLoseReply
from kcm.model.cluster import FAILED_SHIFT, NONE, Cluster, ElectionType, Event, EventKind, Request, RequestKind, bits

#: What each action that processes the head of a controller queue adds after the event's name.
_PROCESSES = {
    ControllerProcessEvent: "",
    ZkLoseReply: ", the reply to its first partition-state write lost",
    ZkConnectionLoss: ", the connection lost during its first partition-state write",
}


def describe(state: Cluster, action: Any, label: str) -> str:
    """`label` (the action's `format_action`) and what it takes from `state`, the state before the
    step: the event processed, the request delivered (see the module docstring)."""
    kind = type(action)
    if kind in _PROCESSES:
        queue = state.brokers[action.broker].queue
        if queue:
            return f"{label}: {event_text(queue[0])}{_PROCESSES[kind]}"
    elif kind is NetworkDeliver:
        channel = state.net[action.src * len(state.brokers) + action.dst]
        if channel:
            return f"{label}: {request_text(channel[0])}"
    return label


def event_text(event: Event) -> str:
    """A queued controller event with the arguments Kafka's event class carries
    (`ControlledShutdown(id, brokerEpoch, ...)`, `PartitionReassignmentIsrChange(partition)`,
    `TopicDeletionStopReplicaResponseReceived(replicaId, ...)`)."""
    name = event.kind.name
    if event.kind is EventKind.ControlledShutdown:
        return f"{name}(id={event.a}, brokerEpoch={event.b})"
    if event.kind is EventKind.PartitionReassignmentIsrChange:
        return f"{name}(partition={event.a})"
    if event.kind is EventKind.ReplicaLeaderElection and event.a != NONE:
        return f"{name}(partitions {{{event.a}}}, {ElectionType(event.b).name}, AdminClientTriggered)"
    if event.kind in (EventKind.TopicUncleanLeaderElectionEnable, EventKind.PartitionModifications):
        return f"{name}(topic={event.a})"
    if event.kind is EventKind.TopicDeletionStopReplicaResponseReceived:
        partitions = ", ".join(map(str, bits(event.b & ((1 << FAILED_SHIFT) - 1))))
        failed = bits(event.b >> FAILED_SHIFT)
        errors = f", KAFKA_STORAGE_ERROR {{{', '.join(map(str, failed))}}}" if failed else ""
        return f"{name}(replicaId={event.a}, partitions {{{partitions}}}{errors})"
    if event.kind is EventKind.LeaderAndIsrResponseReceived:
        return f"{name}(brokerId={event.a}, KAFKA_STORAGE_ERROR {{{', '.join(map(str, bits(event.b)))}}})"
    return name if event.a == NONE else f"{name}({event.a},{event.b})"


def request_text(request: Request) -> str:
    """A controller request as traces print it in flight, with what it says of each partition."""
    head = f"{request.kind.name}(c{request.controller_id},e{request.controller_epoch},be{request.broker_epoch})"
    if request.kind is RequestKind.LeaderAndIsr:
        parts = [f"p{p.partition}: leader {p.leader}, leader epoch {p.leader_epoch}, isr {list(p.isr)}"
                 for p in request.partitions]
    elif request.kind is RequestKind.StopReplica:
        parts = [f"p{p.partition}: {'delete' if p.delete else 'stop'}, leader epoch {p.leader_epoch}"
                 for p in request.partitions]
    else:
        parts = []
    return head + (f" [{'; '.join(parts)}]" if parts else "")
