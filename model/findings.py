"""What Kafka 2.6 itself is known to violate: properties the model states because a controller
expert expects them, which the 2.6 code breaks by design or by an unfixed bug (docs/model.md,
"Findings"). The list is data: the checkers read it (`KafkaModel.known_violations`), record the
shortest trace of each listed violation, keep exploring, and do not fail the verdict for it;
any other violation still fails.

A known violation applies only under the configs where 2.6 breaks the property (`applies`): with
`isr_admission = "kip-841"` NoShuttingDownJoinsIsr holds and a violation of it fails the check.
Each entry names its Finding and the committed trace that shows it (replay with `kcm trace replay`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kcm.model.config import ModelConfig


class KnownViolation(NamedTuple):
    #: The property Kafka 2.6 breaks.
    property: str
    #: The Finding in docs/model.md that explains it.
    finding: str
    #: The committed trace (ITF) that shows it, relative to the repository root.
    trace: str
    #: The configs under which 2.6 breaks it.
    applies: Callable[[ModelConfig], bool]


KNOWN_2_6_VIOLATIONS: tuple[KnownViolation, ...] = (
    KnownViolation("NoShuttingDownJoinsIsr", "Findings 8: a shutting-down broker rejoins the ISR",
                   "docs/findings/no-shutting-down-joins-isr.itf.json",
                   lambda cfg: cfg.isr_admission == "2.6"),
    KnownViolation("ActiveControllerOnceSettled",
                   "Findings 10: /controller deleted while the controller's own watch is spent leaves no controller",
                   "docs/findings/no-controller-after-operator-move.itf.json",
                   lambda cfg: bool(cfg.max_controller_moves) or any("controller_move" in run for run in cfg.overlapping)),
    KnownViolation("EventuallyOneActiveController",
                   "Findings 10: /controller deleted while the controller's own watch is spent leaves no controller",
                   "docs/findings/no-controller-after-operator-move.itf.json",
                   lambda cfg: cfg.max_controller_moves >= 2),
    KnownViolation("AdminZnodesConsumed",
                   "Findings 9: a preferred election for a partition without leadership stays in ZooKeeper",
                   "docs/findings/preferred-election-znode-stays.itf.json",
                   lambda cfg: True),
    KnownViolation("PreferredElectionZnodeConsumed",
                   "Findings 9: a preferred election for a partition without leadership stays in ZooKeeper",
                   "docs/findings/preferred-election-znode-stays.itf.json",
                   lambda cfg: True),
    # A lost reply to the first partition-state create (`max_lost_acks` from the cold start) leaves
    # the partition New and uncached while ZooKeeper has its znode; every property that compares
    # the controller's view with ZooKeeper around that partition then fails, as 2.6 does.
    *(KnownViolation(name, "Findings 7: a lost reply to a partition-state create leaves the partition New and leaderless",
                     "docs/findings/lost-create-reply.itf.json",
                     lambda cfg: cfg.max_lost_acks > 0)
      for name in ("CacheMatchesZk", "OfflineReplicaLeavesIsr", "NoDeadLeaderAdvertised",
                   "DeadReplicaOnlyAsSoleIsrMember",
                   # no LeaderAndIsr is ever sent for the partition, so no broker follows its
                   # znode's leader (issue 13's BrokersFollowTheLeader)
                   "BrokersFollowTheLeader")),
)


def known_violations(cfg: ModelConfig) -> dict[str, str]:
    """The properties Kafka 2.6 is known to break under `cfg`: name -> its Finding."""
    return {k.property: k.finding for k in KNOWN_2_6_VIOLATIONS if k.applies(cfg)}
