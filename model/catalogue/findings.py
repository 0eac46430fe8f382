"""The Findings: what Kafka 2.6 itself is known to violate, each declared once.

The model states properties a controller expert expects; some of them the 2.6 code breaks by
design or by an unfixed bug (docs/model.md, "Findings"). A property's declaration names the
`Finding` that breaks it and the configs under which 2.6 does (`Declaration.finding`,
`broken_when`); the checkers read the derived list (`kcm.model.catalogue.known_violations`),
record the shortest trace of each listed violation, keep exploring, and do not fail the verdict
for it: any other violation still fails. Each Finding has a committed trace that shows it (read it
with `kcm trace show`; `kcm list known` lists the Findings, the properties each breaks and when).
"""

from __future__ import annotations

from dataclasses import dataclass

from kcm.model.config import ModelConfig


@dataclass(frozen=True)
class Finding:
    """A numbered Finding of docs/model.md with the committed trace (ITF) that shows it."""

    number: int
    title: str
    #: The trace, relative to the repository root.
    trace: str

    def __str__(self) -> str:
        return f"Findings {self.number}: {self.title}"


LOST_CREATE_REPLY = Finding(
    7, "a lost reply to a partition-state create leaves the partition New and leaderless",
    "docs/findings/lost-create-reply.itf.json")
SHUTTING_DOWN_REJOINS_ISR = Finding(
    8, "a shutting-down broker rejoins the ISR", "docs/findings/no-shutting-down-joins-isr.itf.json")
PREFERRED_ELECTION_ZNODE_STAYS = Finding(
    9, "a preferred election for a partition without leadership stays in ZooKeeper",
    "docs/findings/preferred-election-znode-stays.itf.json")
NO_CONTROLLER_AFTER_OPERATOR_MOVE = Finding(
    10, "/controller deleted while the controller's own watch is spent leaves no controller",
    "docs/findings/no-controller-after-operator-move.itf.json")

#: Every Finding a property names.
FINDINGS: tuple[Finding, ...] = (LOST_CREATE_REPLY, SHUTTING_DOWN_REJOINS_ISR, PREFERRED_ELECTION_ZNODE_STAYS,
                                 NO_CONTROLLER_AFTER_OPERATOR_MOVE)


# The configs under which 2.6 breaks a property (`Declaration.broken_when`).

def lost_create_replies(cfg: ModelConfig) -> bool:
    """A reply to the first partition-state create may be lost (`max_lost_acks` from the cold
    start): the partition stays New and uncached while ZooKeeper has its znode, and every property
    that compares the controller's view with ZooKeeper around that partition fails, as 2.6 does."""
    return cfg.max_lost_acks > 0


def isr_admission_of_2_6(cfg: ModelConfig) -> bool:
    """The leader admits a shutting-down follower to the ISR (KIP-841, in 3.4, stopped it)."""
    return cfg.isr_admission == "2.6"


def any_config(cfg: ModelConfig) -> bool:
    """Every config: 2.6 always has the behaviour, when a run reaches it."""
    return True


def controller_moves(cfg: ModelConfig) -> bool:
    """An operator may delete `/controller`, alone or in an overlapping run."""
    return bool(cfg.max_controller_moves) or any("controller_move" in run for run in cfg.overlapping)


def two_controller_moves(cfg: ModelConfig) -> bool:
    """An operator may delete `/controller` twice: with every broker up, the second deletion can
    come while both brokers' watches are spent, and the quiescent cluster has no controller."""
    return cfg.max_controller_moves >= 2
