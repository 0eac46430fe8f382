"""The valid-previous-state tables of both state machines, declared once.

Kafka declares, on each *target* state, the set of states a replica or partition may come from
(`validPreviousStates`). A transition request whose current state is not in the target's set is an
invalid transition: Kafka 1.1+ filters it out and logs it (`logInvalidTransition`), leaving the
state unchanged. These tables are the single source of that rule for the whole product: the
model's actions, the implementation's state machines, the tests and the diagrams all read them.

Two replica table versions exist within the 7-state era:

- `REPLICA_TABLE` (Kafka 2.3 and later, the pinned 2.6 behaviour): ReplicaDeletionIneligible may be
  entered from OfflineReplica as well as from ReplicaDeletionStarted (KAFKA-8237).
- `REPLICA_TABLE_PRE_2_3` (0.8.1 to 2.2.x): ReplicaDeletionIneligible only from
  ReplicaDeletionStarted. A dead replica sitting in OfflineReplica cannot be failed directly, which
  is part of variant V9.

Each table also carries, per edge, the Kafka action that takes it (`edge_actions`), for the
diagrams and for coverage reports. Every table is validated when this module is imported: an
unknown state, a missing row, a state unreachable from the initial state, or an edge without an
action label raises `TableError` naming the row and the fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Generic, TypeVar

from kcm.model.states import PartitionState, ReplicaState

S = TypeVar("S", bound=IntEnum)

R = ReplicaState
P = PartitionState


class TableError(ValueError):
    """A state table is malformed; the message names the row and the fix."""


@dataclass(frozen=True)
class StateTable(Generic[S]):
    """One state machine's table: for each target state, its valid previous states."""

    name: str
    version: str
    states: type[S]
    initial: S
    valid_previous_states: Mapping[S, frozenset[S]]
    edge_actions: Mapping[tuple[S, S], str]
    source: str
    _edges: frozenset[tuple[S, S]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        edges = frozenset((frm, to) for to, frms in self.valid_previous_states.items() for frm in frms)
        object.__setattr__(self, "_edges", edges)

    def is_valid_transition(self, from_state: S, to_state: S) -> bool:
        """Kafka's `targetState.validPreviousStates.contains(currentState)`."""
        return (from_state, to_state) in self._edges

    def valid_previous(self, to_state: S) -> frozenset[S]:
        """The states from which `to_state` may be entered."""
        return self.valid_previous_states[to_state]

    def edges(self) -> tuple[tuple[S, S], ...]:
        """Every valid (from, to) pair, in a fixed order: by target code, then by source code."""
        return tuple(sorted(self._edges, key=lambda e: (e[1].value, e[0].value)))

    def __iter__(self) -> Iterator[tuple[S, S]]:
        return iter(self.edges())

    def __len__(self) -> int:
        return len(self._edges)


def _validate(table: StateTable) -> None:
    where = f"{table.name} table ({table.version})"
    _validate_rows(table, where)
    _validate_reachable(table, where)
    _validate_labels(table, where)


def _validate_rows(table: StateTable, where: str) -> None:
    """One row per state, naming states of the table's own enum."""
    # isinstance, not membership: IntEnum members of two enums compare equal when their codes do.
    for to, frms in table.valid_previous_states.items():
        if not isinstance(to, table.states):
            raise TableError(f"{where}: row {to!r} is not a {table.states.__name__}; remove the row or add the state")
        for frm in frms:
            if not isinstance(frm, table.states):
                raise TableError(
                    f"{where}: row {to.name} lists {frm!r}, which is not a {table.states.__name__}; "
                    "use one of " + ", ".join(s.name for s in table.states))
    for s in table.states:
        if s not in table.valid_previous_states:
            raise TableError(
                f"{where}: no row for {s.name}; add `{s.name}: frozenset({{...}})` with its valid previous states "
                "(an empty set if it can never be entered)")


def _validate_reachable(table: StateTable, where: str) -> None:
    """Every state is reachable from the initial one."""
    reachable = {table.initial}
    frontier = [table.initial]
    while frontier:
        here = frontier.pop()
        for to, frms in table.valid_previous_states.items():
            if here in frms and to not in reachable:
                reachable.add(to)
                frontier.append(to)
    for s in table.states:
        if s not in reachable:
            raise TableError(
                f"{where}: {s.name} is unreachable from {table.initial.name}; "
                f"add a reachable state to the {s.name} row or remove the state")


def _validate_labels(table: StateTable, where: str) -> None:
    """Every edge has an action label, and every label an edge."""
    edges = {(frm, to) for to, frms in table.valid_previous_states.items() for frm in frms}
    for frm, to in sorted(edges, key=lambda e: (e[1].value, e[0].value)):
        if (frm, to) not in table.edge_actions:
            raise TableError(f"{where}: edge {frm.name} -> {to.name} has no action label; add it to edge_actions")
    for frm, to in table.edge_actions:
        if (frm, to) not in edges:
            raise TableError(
                f"{where}: edge_actions labels {frm.name} -> {to.name}, which the {to.name} row does not allow; "
                "remove the label or add the edge to the row")


def _freeze(rows: Mapping) -> Mapping:
    return MappingProxyType({to: frozenset(frms) for to, frms in rows.items()})


# kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala, `case object ... validPreviousStates`
# (kafka@2.4.1 L437-475, kafka@2.8.2 L453-491). Rows are keyed by the target state, as in Kafka.
_REPLICA_ROWS_2_6 = {
    R.NewReplica: {R.NonExistentReplica},
    R.OnlineReplica: {R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible},
    R.OfflineReplica: {R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible},
    R.ReplicaDeletionStarted: {R.OfflineReplica},
    R.ReplicaDeletionSuccessful: {R.ReplicaDeletionStarted},
    # Offline added by KAFKA-8237 (kafka#17c80166461, first tag 2.3.0)
    R.ReplicaDeletionIneligible: {R.OfflineReplica, R.ReplicaDeletionStarted},
    R.NonExistentReplica: {R.ReplicaDeletionSuccessful},
}

# kafka@2.2.2:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala (unchanged since 0.8.1)
_REPLICA_ROWS_PRE_2_3 = {**_REPLICA_ROWS_2_6, R.ReplicaDeletionIneligible: {R.ReplicaDeletionStarted}}

# The Kafka action that takes each replica edge (kafka@2.6.x ReplicaStateMachine.doHandleStateChanges
# and its class doc comment).
_REPLICA_ACTIONS = {
    (R.NonExistentReplica, R.NewReplica): "LeaderAndIsr(isNew=true) if the partition has a leader",
    (R.NewReplica, R.OnlineReplica): "add to assignment (no request)",
    (R.OnlineReplica, R.OnlineReplica): "LeaderAndIsr resend + UpdateMetadata",
    (R.OfflineReplica, R.OnlineReplica): "broker startup: LeaderAndIsr + UpdateMetadata",
    (R.ReplicaDeletionIneligible, R.OnlineReplica): "broker startup: LeaderAndIsr + UpdateMetadata",
    (R.NewReplica, R.OfflineReplica): "StopReplica(delete=false)",
    (R.OnlineReplica, R.OfflineReplica): "StopReplica(delete=false) + ISR shrink + LeaderAndIsr to the rest",
    (R.OfflineReplica, R.OfflineReplica): "StopReplica(delete=false) + ISR shrink",
    (R.ReplicaDeletionIneligible, R.OfflineReplica): "deletion retry: StopReplica(delete=false)",
    (R.OfflineReplica, R.ReplicaDeletionStarted): "StopReplica(delete=true)",
    (R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful): "StopReplica response: no error",
    (R.ReplicaDeletionStarted, R.ReplicaDeletionIneligible): "StopReplica response: error",
    (R.OfflineReplica, R.ReplicaDeletionIneligible): "deletion of a replica on a dead broker (2.3+)",
    (R.ReplicaDeletionSuccessful, R.NonExistentReplica): "remove from assignment",
}

# kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala, `validPreviousStates`
# (kafka@2.4.1 L556-574). Trust the code, not the class doc comment, for OfflinePartition.
_PARTITION_ROWS = {
    P.NewPartition: {P.NonExistentPartition},
    P.OnlinePartition: {P.NewPartition, P.OnlinePartition, P.OfflinePartition},
    P.OfflinePartition: {P.NewPartition, P.OnlinePartition, P.OfflinePartition},
    P.NonExistentPartition: {P.OfflinePartition},
}

_PARTITION_ACTIONS = {
    (P.NonExistentPartition, P.NewPartition): "topic created: assignment loaded",
    (P.NewPartition, P.OnlinePartition): "first live replica leads; create state znode; LeaderAndIsr(isNew)",
    (P.OnlinePartition, P.OnlinePartition): "elect (preferred, reassign, controlled shutdown); LeaderAndIsr",
    (P.OfflinePartition, P.OnlinePartition): "offline election (clean, or unclean if enabled); LeaderAndIsr",
    (P.NewPartition, P.OfflinePartition): "no live replica / leader died (mark only)",
    (P.OnlinePartition, P.OfflinePartition): "leader died (mark only)",
    (P.OfflinePartition, P.OfflinePartition): "still no leader (mark only)",
    (P.OfflinePartition, P.NonExistentPartition): "topic deletion (mark only)",
}

REPLICA_TABLE: StateTable[ReplicaState] = StateTable(
    name="replica",
    version="2.3+",
    states=ReplicaState,
    initial=R.NonExistentReplica,
    valid_previous_states=_freeze(_REPLICA_ROWS_2_6),
    edge_actions=MappingProxyType(dict(_REPLICA_ACTIONS)),
    source="kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala",
)

REPLICA_TABLE_PRE_2_3: StateTable[ReplicaState] = StateTable(
    name="replica",
    version="pre-2.3",
    states=ReplicaState,
    initial=R.NonExistentReplica,
    valid_previous_states=_freeze(_REPLICA_ROWS_PRE_2_3),
    edge_actions=MappingProxyType({e: a for e, a in _REPLICA_ACTIONS.items()
                                   if e != (R.OfflineReplica, R.ReplicaDeletionIneligible)}),
    source="kafka@2.2.2:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala",
)

PARTITION_TABLE: StateTable[PartitionState] = StateTable(
    name="partition",
    version="0.8.1+",
    states=PartitionState,
    initial=P.NonExistentPartition,
    valid_previous_states=_freeze(_PARTITION_ROWS),
    edge_actions=MappingProxyType(dict(_PARTITION_ACTIONS)),
    source="kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala",
)

#: The replica table versions by name, as configs and the CLI spell them.
REPLICA_TABLE_VERSIONS: Mapping[str, StateTable[ReplicaState]] = MappingProxyType({
    REPLICA_TABLE.version: REPLICA_TABLE,
    REPLICA_TABLE_PRE_2_3.version: REPLICA_TABLE_PRE_2_3,
})

#: Every table of the pinned version (Kafka 2.6).
TABLES: tuple[StateTable, ...] = (REPLICA_TABLE, PARTITION_TABLE)


def table_for(state: IntEnum) -> StateTable:
    """The pinned (Kafka 2.6) table of the state machine `state` belongs to."""
    return REPLICA_TABLE if isinstance(state, ReplicaState) else PARTITION_TABLE


def is_valid_transition(from_state: S, to_state: S) -> bool:
    """Whether the pinned table allows `from_state -> to_state` (both of one state machine)."""
    return table_for(to_state).is_valid_transition(from_state, to_state)


def valid_previous(to_state: S) -> frozenset[S]:
    """The pinned table's valid previous states of `to_state`."""
    return table_for(to_state).valid_previous(to_state)


def edges(table: StateTable) -> tuple[tuple, ...]:
    """Every valid (from, to) pair of `table`, in a fixed order."""
    return table.edges()
