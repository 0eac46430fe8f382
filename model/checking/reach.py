"""What a config can reach at all, said before the run: table edges and goals it cannot reach.

A config bounds each fault and admin operation (model/actions.py `KINDS`, one budget each) and
fixes the cluster's shape; many of the 22 edges of the two state tables (model/tables.py) need
a particular operation, and no run without it takes them. This module says which edges and
which goals (model/catalogue/goals.py) a config cannot reach, each with its reason in words,
from the config alone, before any state is explored.

Soundly: an edge or goal said to be unreachable is never taken or met (tests/model/test_reach.py
explores the small presets and checks it). The converse does not hold: what is not listed may
still be out of reach, for reasons finer than budgets and shape (an interleaving that never
happens). Each rule names what an edge needs, as alternatives, each a few abilities that must
come together in one run:

- *a broker going down*: a crash, a session expiry of a live broker or a controlled shutdown
  (the only ways a broker leaves the cluster; every broker registers at the cold start,
  model/spec.py `init_states`). Replicas go OfflineReplica and partitions OfflinePartition only
  when their broker fails (`onBrokerFailure`), is shut down (`doControlledShutdown`'s followers),
  or their topic is deleted (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
  `onReplicasBecomeOffline`; kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
  `onPartitionDeletion`); a failover finds
  dead brokers' replicas ReplicaDeletionIneligible only if a broker is down.
- *a topic deletion*: the only way into ReplicaDeletionIneligible (besides a failover finding a
  dead broker's replica) and to NonExistentPartition (TopicDeletionManager.scala), and a way into
  OfflineReplica.
- *a reassignment that adds a replica*: a target with a broker outside the current replicas. A
  target keeps the replication factor, so with RF equal to the broker count every target is a
  reordering of the same replicas: it adds none and removes none, and the leader stays in it
  (KafkaController.scala `onPartitionReassignment`, `moveReassignedPartitionLeaderIfRequired`:
  an election only when the leader is outside the target or dead). Adding a replica is the only
  way a reassignment takes NonExistentReplica -> NewReplica and, removing one, the deletion edges.
- *a topic creation*: the other way to NewReplica, and the only one to NewPartition; it needs a
  topic absent at the start (`initial_topics`) or a deletion before it. A partition addition
  counts as one where a topic is created with fewer than its `partitions` (`created_partitions`):
  `onNewPartitionCreation` takes the same edges.
- *a leader election other than the offline one* (OnlinePartition -> OnlinePartition): a
  controlled shutdown, a preferred election, an auto rebalance, or a reassignment whose target
  leaves the leader out (one that adds a replica) or meets a dead leader (with a broker going
  down in the same run) (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
  `doElectLeaderForPartitions` and its strategies).

Abilities of one run. The cold-start run has every kind whose budget is above 0, at most
`max_perturbations` of them together (and `max_faults` faults, `max_admin_ops` admin operations);
each `overlapping` run has exactly its listed kinds, together. An ability needing two kinds (a
deletion, then a creation) needs a run where both may happen. Order within a run is ignored,
which only widens what counts as reachable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kcm.model.actions import BUDGET_FIELDS, BY_BUDGET, FAULT_BUDGETS, Budget
from kcm.model.catalogue import goals
from kcm.model.config import ModelConfig
from kcm.model.spec import reassignment_targets, topic_placements
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE

#: The overlapping kind (model/actions.py `ActionKind.overlap`) of each budget, and back.
_KIND_OF_BUDGET: dict[Budget, str] = {b: str(k.overlap) for b, k in BY_BUDGET.items()}
_FAULT_KINDS = frozenset(_KIND_OF_BUDGET[b] for b in FAULT_BUDGETS)

#: The kinds that take a broker out of the cluster.
_DOWN = ("broker_crash", "session_expiry", "controlled_shutdown")


@dataclass(frozen=True)
class Unreachable:
    """One edge (`replica OfflineReplica -> OnlineReplica`) or goal the config cannot reach, and why."""

    what: str
    reason: str


@dataclass(frozen=True)
class _Run:
    """What one run may do: its kinds, and how many of them at most together."""

    kinds: frozenset[str]
    together: int
    faults: int
    admin: int

    def may(self, *kinds: str) -> bool:
        """Whether the kinds may all happen in this run."""
        wanted = set(kinds)
        return (wanted <= self.kinds and len(wanted) <= self.together
                and len(wanted & _FAULT_KINDS) <= self.faults and len(wanted - _FAULT_KINDS) <= self.admin)


def _runs(cfg: ModelConfig) -> tuple[_Run, ...]:
    """The cold-start run and each overlapping run (module docstring, "Abilities of one run")."""
    unbounded = 1 << 30

    def bound(n: int) -> int:
        return unbounded if n < 0 else n

    budgets = frozenset(_KIND_OF_BUDGET[b] for b in Budget if getattr(cfg, BUDGET_FIELDS[b]) > 0)
    cold = _Run(budgets, bound(cfg.max_perturbations), bound(cfg.max_faults), bound(cfg.max_admin_ops))
    return (cold, *(_Run(frozenset(run), len(run), len(run), len(run)) for run in cfg.overlapping))


@dataclass(frozen=True)
class _Ability:
    """Something a run may do (module docstring), the test of it, and the words for its absence."""

    name: str
    holds: Callable[[ModelConfig, _Run], bool]
    missing: Callable[[ModelConfig], str]


def _some_run(cfg: ModelConfig, test: Callable[[_Run], bool]) -> bool:
    return any(test(run) for run in _runs(cfg))


def _adds_replica(cfg: ModelConfig) -> bool:
    """Whether some reassignment target has a broker outside the current replicas."""
    return cfg.replication_factor < cfg.brokers


def _has_target(cfg: ModelConfig) -> bool:
    """Whether an admin may ask for any reassignment of the default spread's first partition
    (every partition's replicas are RF distinct brokers, so one stands for all)."""
    return bool(reassignment_targets(cfg, tuple(range(cfg.replication_factor))))


def _shape(cfg: ModelConfig) -> str:
    return f"RF {cfg.replication_factor} of {cfg.brokers} broker{'s' if cfg.brokers > 1 else ''}"


def _no(what: str) -> Callable[[ModelConfig], str]:
    return lambda cfg: f"no {what} in the budget"


def _why_not_adding(cfg: ModelConfig) -> str:
    if not _some_run(cfg, lambda r: r.may("reassignment")):
        return "no reassignment in the budget"
    if not _has_target(cfg):
        return f"no reassignment target exists ({_shape(cfg)}, reassign_targets \"{cfg.reassign_targets}\")"
    return f"a reassignment on {_shape(cfg)} can only reorder replicas"


def _why_not_creating(cfg: ModelConfig) -> str:
    if not _some_run(cfg, lambda r: r.may("topic_creation")):
        return "no topic creation in the budget"
    return "every topic exists from the start and none is deleted before a creation"


def _why_not_electing(cfg: ModelConfig) -> str:
    return ("no controlled shutdown, preferred election or auto rebalance in the budget, and "
            + ("no reassignment in the budget" if not _some_run(cfg, lambda r: r.may("reassignment")) else
               f"a reassignment on {_shape(cfg)} keeps its leader (it only reorders replicas) and no broker "
               "goes down in its run"))


_GOING_DOWN = _Ability(
    "a broker going down",
    lambda cfg, r: any(r.may(k) for k in _DOWN),
    lambda cfg: "no broker goes down (no crash, session expiry or controlled shutdown in the budget)")
#: A partition addition with a partition left to add (`created_partitions` below `partitions`).
_ADDS = _Ability("a partition addition",
                 lambda cfg, r: r.may("partition_addition") and cfg.created_count < cfg.partitions,
                 _no("partition addition"))
_DELETING = _Ability("a topic deletion", lambda cfg, r: r.may("topic_deletion"), _no("topic deletion"))
_ADDING = _Ability(
    "a reassignment that adds a replica",
    lambda cfg, r: r.may("reassignment") and _adds_replica(cfg) and _has_target(cfg),
    _why_not_adding)
_CREATING = _Ability(
    "a topic creation",
    lambda cfg, r: (r.may("topic_creation") and (cfg.existing_topics < cfg.topics
                                                  or r.may("topic_deletion", "topic_creation"))
                    or _ADDS.holds(cfg, r)),
    _why_not_creating)
_ELECTING = _Ability(
    "a leader election other than the offline one",
    lambda cfg, r: (any(r.may(k) for k in ("controlled_shutdown", "preferred_election", "auto_rebalance",
                                            "elect_leaders"))
                    or (_has_target(cfg) and (
                        (r.may("reassignment") and _adds_replica(cfg))
                        or any(r.may("reassignment", k) for k in _DOWN)))),
    _why_not_electing)


#: What each table edge needs, as alternative abilities; edges not listed are taken by every
#: cold start (the first controller's failover: OnlineReplica -> OnlineReplica, NewPartition ->
#: OnlinePartition).
_EDGE_NEEDS: dict[tuple[str, str, str], tuple[_Ability, ...]] = {
    ("replica", "NonExistentReplica", "NewReplica"): (_CREATING, _ADDING),
    ("replica", "NewReplica", "OnlineReplica"): (_CREATING, _ADDING),
    ("replica", "NewReplica", "OfflineReplica"): (_CREATING, _ADDING),
    ("replica", "OfflineReplica", "OnlineReplica"): (_GOING_DOWN, _DELETING),
    ("replica", "ReplicaDeletionIneligible", "OnlineReplica"): (_GOING_DOWN, _DELETING),
    ("replica", "OnlineReplica", "OfflineReplica"): (_GOING_DOWN, _DELETING, _ADDING),
    ("replica", "OfflineReplica", "OfflineReplica"): (_GOING_DOWN, _DELETING),
    ("replica", "ReplicaDeletionIneligible", "OfflineReplica"): (_GOING_DOWN, _DELETING),
    ("replica", "OfflineReplica", "ReplicaDeletionStarted"): (_DELETING, _ADDING),
    ("replica", "ReplicaDeletionStarted", "ReplicaDeletionSuccessful"): (_DELETING, _ADDING),
    ("replica", "ReplicaDeletionStarted", "ReplicaDeletionIneligible"): (_DELETING,),
    ("replica", "OfflineReplica", "ReplicaDeletionIneligible"): (_DELETING,),
    ("replica", "ReplicaDeletionSuccessful", "NonExistentReplica"): (_DELETING, _ADDING),
    ("partition", "NonExistentPartition", "NewPartition"): (_CREATING,),
    ("partition", "OnlinePartition", "OnlinePartition"): (_ELECTING,),
    ("partition", "OfflinePartition", "OnlinePartition"): (_GOING_DOWN, _DELETING),
    ("partition", "NewPartition", "OfflinePartition"): (_GOING_DOWN, _DELETING),
    ("partition", "OnlinePartition", "OfflinePartition"): (_GOING_DOWN, _DELETING),
    ("partition", "OfflinePartition", "OfflinePartition"): (_GOING_DOWN, _DELETING),
    ("partition", "OfflinePartition", "NonExistentPartition"): (_DELETING,),
}


def edges() -> tuple[tuple[str, str, str], ...]:
    """Every table edge as coverage names it (`KafkaModel.coverage_universe`): (table, from, to)."""
    return tuple((t.name, f.name, to.name) for t in (REPLICA_TABLE, PARTITION_TABLE) for f, to in t.edges())


def edge_text(edge: tuple[str, str, str]) -> str:
    return f"{edge[0]} {edge[1]} -> {edge[2]}"


def _unmet(cfg: ModelConfig, needs: tuple[_Ability, ...]) -> str | None:
    """None if some run has one of `needs`, else the reasons none has, in words."""
    runs = _runs(cfg)
    if any(a.holds(cfg, r) for a in needs for r in runs):
        return None
    reasons = list(dict.fromkeys(a.missing(cfg) for a in needs))
    return "; ".join(reasons)


def unreachable_edges(cfg: ModelConfig) -> tuple[Unreachable, ...]:
    """The table edges no run of `cfg` takes, in the tables' order, each with its reason."""
    out = []
    for edge in edges():
        reason = _unmet(cfg, _EDGE_NEEDS[edge]) if edge in _EDGE_NEEDS else None
        if reason is not None:
            out.append(Unreachable(edge_text(edge), reason))
    return tuple(out)


_UNCLEAN = _Ability(
    "a broker going down with a replica outside the ISR",
    lambda cfg, r: cfg.replication_factor >= 2 and _GOING_DOWN.holds(cfg, r),
    lambda cfg: ("with RF 1 the only replica is always in the ISR" if cfg.replication_factor < 2
                 else _GOING_DOWN.missing(cfg)))
_SHUTDOWN_MOVES = _Ability(
    "a controlled shutdown of a leader with followers",
    lambda cfg, r: cfg.replication_factor >= 2 and r.may("controlled_shutdown"),
    lambda cfg: ("with RF 1 a controlled shutdown moves no leader" if cfg.replication_factor < 2
                 else "no controlled shutdown in the budget"))
_TARGETED = _Ability(
    "a reassignment with a target",
    lambda cfg, r: r.may("reassignment") and _has_target(cfg),
    lambda cfg: ("no reassignment in the budget" if not _some_run(cfg, lambda r: r.may("reassignment"))
                 else f"no reassignment target exists ({_shape(cfg)}, reassign_targets \"{cfg.reassign_targets}\")"))


def _any_perturbation(cfg: ModelConfig, r: _Run) -> bool:
    """Some fault or admin operation may happen in run `r`: in the budget, and for a reassignment
    or a topic creation, with something to act on."""
    return any(r.may(k) for k in r.kinds - {"reassignment", "topic_creation", "partition_addition"}) or (
        _TARGETED.holds(cfg, r) or _CREATING.holds(cfg, r))


_PERTURBING = _Ability("a fault or an admin operation", _any_perturbation,
                       lambda cfg: "no fault or admin operation can happen")

#: What each goal needs besides being listed (`Declaration.listed`), as alternative abilities.
_GOAL_NEEDS: dict[str, tuple[_Ability, ...]] = {
    "ControllerFailsOver": (_PERTURBING,),
    "PartitionOfflineAndBack": (_GOING_DOWN,),
    "UncleanElection": (_UNCLEAN,),
    "TopicDeleted": (_DELETING,),
    "ReassignmentCompletes": (_TARGETED,),
    "ControlledShutdownMovesLeadership": (_SHUTDOWN_MOVES,),
}

#: Why the catalogue does not list a goal for a config (`Declaration.listed` is false).
_UNLISTED = {
    "PartitionOfflineAndBack": "a partition loses its leader only when its last ISR member goes: "
                               "a crash or session expiry, and with RF above 1 a second perturbation",
    "UncleanElection": "unclean leader election is off",
    "TopicDeleted": "no topic deletion in the budget",
    "ReassignmentCompletes": "no reassignment in the budget",
    "ControlledShutdownMovesLeadership": "no controlled shutdown in the budget",
    "PreferredLeaderElected": "the preferred replica leads until something moves leadership away: "
                              "a preferred election or auto rebalance and a second perturbation",
    "UncleanElectionOnDemand": "no ElectLeaders request in the budget",
    "UncleanElectionSwitchedOn": "unclean election is not switched on at run time in the budget",
    "ReplicaOfflineOnLiveBroker": "no log-directory failure in the budget",
}


_NOT_CHECKED = "not checked: "


def unreachable_goals(cfg: ModelConfig) -> tuple[Unreachable, ...]:
    """The catalogue's goals `cfg` cannot meet, in the catalogue's order: those it does not list
    (their feature is off) and those whose needs no run has."""
    out = []
    for d in goals.DECLARATIONS:
        if not d.listed(cfg):
            out.append(Unreachable(d.name, _NOT_CHECKED + _UNLISTED.get(d.name, "switched off by the config")))
            continue
        reason = _unmet(cfg, _GOAL_NEEDS[d.name]) if d.name in _GOAL_NEEDS else None
        if reason is not None:
            out.append(Unreachable(d.name, reason))
    return tuple(out)


def initial_states(cfg: ModelConfig) -> int:
    """How many initial states the explorer starts from before symmetry: one cold start per
    combination of the existing topics' placements (model/spec.py `init_states`), and one
    settled start per overlapping run."""
    cold = 1
    for t in range(cfg.existing_topics):
        cold *= len(topic_placements(cfg, t))
    return cold + len(cfg.overlapping)


def perturbations_per_run(cfg: ModelConfig) -> tuple[int, ...]:
    """The most faults and admin operations each run may have together: the cold start's, then
    each overlapping run's."""
    cold = _runs(cfg)[0]
    total = sum(getattr(cfg, BUDGET_FIELDS[b]) for b in Budget)
    faults = sum(getattr(cfg, BUDGET_FIELDS[b]) for b in FAULT_BUDGETS)
    cold_most = min(total, cold.together, min(faults, cold.faults) + min(total - faults, cold.admin))
    return (cold_most, *(len(run) for run in cfg.overlapping))


def reach_lines(cfg: ModelConfig) -> list[str]:
    """A few lines for a run's header: the size class, then the edges and goals out of reach,
    grouped by reason."""
    n, per_run = initial_states(cfg), perturbations_per_run(cfg)
    lines = [f"size: {n} initial state{'s' * (n != 1)} before symmetry, {len(per_run)} "
             f"run{'s' * (len(per_run) != 1)}, at most {'/'.join(map(str, per_run))} fault(s) or admin "
             "operation(s) per run"]
    no_edges, total = unreachable_edges(cfg), len(edges())
    if not no_edges:
        lines.append(f"may reach all {total} table edges")
    else:
        lines.append(f"reaches at most {total - len(no_edges)} of {total} table edges; out of reach:")
        by_reason: dict[str, list[str]] = {}
        for u in no_edges:
            by_reason.setdefault(u.reason, []).append(u.what)
        lines += [f"  {', '.join(whats)}: {reason}" for reason, whats in by_reason.items()]
    no_goals = unreachable_goals(cfg)
    unmet = [u for u in no_goals if not u.reason.startswith(_NOT_CHECKED)]
    unlisted = [u.what for u in no_goals if u.reason.startswith(_NOT_CHECKED)]
    lines += [f"goal {u.what} out of reach: {u.reason}" for u in unmet]
    if unlisted:
        lines.append(f"goals not checked (their feature is off): {', '.join(unlisted)}")
    return lines


def _check() -> None:
    """Every rule names a real edge or goal."""
    unknown = (set(_EDGE_NEEDS) - set(edges())) | (
        (set(_GOAL_NEEDS) | set(_UNLISTED)) - {d.name for d in goals.DECLARATIONS})
    if unknown:
        raise AssertionError(f"reach rules name unknown edges or goals: {sorted(map(str, unknown))}")


_check()
__all__ = ["Unreachable", "edge_text", "edges", "initial_states", "perturbations_per_run", "reach_lines",
           "unreachable_edges", "unreachable_goals"]
