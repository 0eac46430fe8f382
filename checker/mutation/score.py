"""The mutation score, the tallies by file and operator, and a hint for each survivor."""

from __future__ import annotations

from collections.abc import Iterable

from kcm.checker.mutation.generate import Mutant
from kcm.checker.mutation.outcome import CRASHED, EQUIVALENT, KILLED, STATUSES, Outcome


def score(outcomes: Iterable[Outcome]) -> float | None:
    """killed / (total - equivalent); crashed mutants count as killed. None if nothing to score."""
    outcomes = list(outcomes)
    killed = sum(o.status in (KILLED, CRASHED) for o in outcomes)
    judged = len(outcomes) - sum(o.status == EQUIVALENT for o in outcomes)
    return killed / judged if judged else None


def tally(outcomes: Iterable[Outcome], key: str) -> dict[str, dict[str, int]]:
    """{file or operator: {status: count, "total": n}}, sorted by key."""
    out: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = out.setdefault(getattr(o, key), {s: 0 for s in STATUSES} | {"total": 0})
        row[o.status] += 1
        row["total"] += 1
    return dict(sorted(out.items()))


#: Which family of properties could catch a survivor, by what the mutated code touches (first match).
_HINTS = (
    (("check_epoch", "ControllerMoved"),
     "fencing: controller writes and requests at the current epoch (ZkWritesFenced)"),
    (("add_leader_and_isr", "add_stop_replica", "add_update_metadata", "send_requests_to_brokers",
      "send_update_metadata", "w.send", "recipients", "drop_channel"),
     "requests: what each broker is told (every live replica learns the new leader; metadata converges at quiescence)"),
    (("fire", "arm", "disarm", "enqueue", "Watch."),
     "liveness: a watch or event lost or duplicated shows at quiescence "
     "(eventually one controller, partitions online, work done)"),
    (("handle_replica_state_changes", "handle_partition_state_changes", "rs[p]", "ps[p]"),
     "state machines: replica and partition states agree with what the brokers were told (no illegal transition)"),
    (("live", "online", "shutting_down", "is_replica_online"),
     "election safety: leaders and recipients among the right brokers (LeaderIsLive, ElectionRuleConformance)"),
    (("leadership", "isr", "partitions"),
     "context consistency: the controller's cache agrees with ZooKeeper at quiescence"),
    (("reassign", "adding", "removing", "assignment"),
     "reassignment: completes with RS = TRS in ZooKeeper and in the context, at quiescence"),
    (("topics_to_delete", "deletion", "topics_ineligible"),
     "topic deletion: completes and leaves no znode, replica or state behind, at quiescence"),
)


def hint(mutant: Mutant) -> str:
    """One line: the property family that could catch `mutant`."""
    changed = "".join(line[1:] for line in mutant.diff.splitlines()
                      if line[:1] in "+-" and not line.startswith(("+++", "---")))
    for words, text in _HINTS:
        if any(w in changed for w in words):
            return text
    return "quiescence: what the cluster converges to once every fault and admin operation is done"
