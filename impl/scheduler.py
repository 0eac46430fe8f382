"""`Scheduler`: every nondeterministic choice of a stepped cluster, listed and made one at a time.

In a real cluster, threads and networks decide which broker's event thread runs next, which
request arrives first, when a watch notification is delivered and when something breaks. In a
`StepCluster` nothing runs by itself; the `Scheduler` lists the choices that are possible now
(`choices()`, in a fixed order) and makes the one it is given (`run(choice)`). A test picks choices
by hand, Hypothesis draws them, a seeded `random.Random` walks (`run_random`), and the model drives
the cluster through `StepCluster.apply`, which uses the same operations.

Choices:

* healing: `RunEvent` (a broker's controller event thread processes one event), `Deliver` (a
  controller's send thread delivers one request), `DeliverWatch` (with queued watch delivery, one
  ZooKeeper notification reaches its client), `StartBroker`, `NoticeExpiry`, `ExpireSession` of a
  dead broker's session, `ExpandIsr`, `FinishShutdown`;
* faults, each bounded by `FaultBudget`: `CrashBroker`, `ExpireSession` of a live broker, `LoseAck`
  (the next ZooKeeper write of a broker is applied but answered CONNECTIONLOSS), `ShrinkIsr`,
  `RequestControlledShutdown`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kcm.impl.kafka_server import ControlledShutdownState
from kcm.impl.zk.memory import PendingEvent
from kcm.impl.zk_data import TopicPartition, TopicPartitionStateZNode


@dataclass(frozen=True, slots=True)
class RunEvent:
    broker: int


@dataclass(frozen=True, slots=True)
class Deliver:
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class DeliverWatch:
    pending: PendingEvent


@dataclass(frozen=True, slots=True)
class StartBroker:
    broker: int


@dataclass(frozen=True, slots=True)
class CrashBroker:
    broker: int


@dataclass(frozen=True, slots=True)
class ExpireSession:
    broker: int


@dataclass(frozen=True, slots=True)
class NoticeExpiry:
    broker: int


@dataclass(frozen=True, slots=True)
class LoseAck:
    broker: int


@dataclass(frozen=True, slots=True)
class ShrinkIsr:
    broker: int
    partition: TopicPartition
    follower: int


@dataclass(frozen=True, slots=True)
class ExpandIsr:
    broker: int
    partition: TopicPartition
    follower: int


@dataclass(frozen=True, slots=True)
class RequestControlledShutdown:
    broker: int


@dataclass(frozen=True, slots=True)
class FinishShutdown:
    broker: int


Choice = (RunEvent | Deliver | DeliverWatch | StartBroker | CrashBroker | ExpireSession | NoticeExpiry | LoseAck
          | ShrinkIsr | ExpandIsr | RequestControlledShutdown | FinishShutdown)


@dataclass(slots=True)
class FaultBudget:
    """How many more faults of each kind the scheduler may choose."""

    crashes: int = 0
    session_expiries: int = 0
    lost_acks: int = 0
    isr_shrinks: int = 0
    controlled_shutdowns: int = 0


class Scheduler:
    def __init__(self, cluster) -> None:
        self.cluster = cluster

    def choices(self, budget: FaultBudget | None = None) -> list[Choice]:
        """Every choice possible now, in a fixed order (faults only within `budget`)."""
        c = self.cluster
        budget = budget or FaultBudget()
        out: list[Choice] = []
        for b in range(c.cfg.brokers):
            if not c.is_up(b):
                if b in c.servers and c.session_live(b):
                    out.append(ExpireSession(b))   # a dead broker's session always expires eventually
                else:
                    out.append(StartBroker(b))
                continue
            server = c.servers[b]
            live = c.session_live(b)
            if budget.crashes > 0:
                out.append(CrashBroker(b))
            if live and budget.session_expiries > 0:
                out.append(ExpireSession(b))
            if live and budget.lost_acks > 0:
                out.append(LoseAck(b))
            if server.zk_session_believed_alive and not live:
                out.append(NoticeExpiry(b))
            if not server.controller.event_manager.is_empty():
                out.append(RunEvent(b))
            if server.zk_session_believed_alive and live:
                out.extend(self._shutdown_choices(b, budget))
        out.extend(self._deliveries())
        out.extend(DeliverWatch(p) for p in c.zookeeper.pending_watch_events())
        out.extend(self._isr_choices(budget))
        return out

    def _shutdown_choices(self, b: int, budget: FaultBudget) -> list[Choice]:
        """Broker `b` (up, its session live) asks for a controlled shutdown, or finishes one."""
        server = self.cluster.servers[b]
        state = server.shutdown_state
        out: list[Choice] = []
        if ((state is ControlledShutdownState.NONE and budget.controlled_shutdowns > 0)
                or (state is ControlledShutdownState.RETRY and server.can_retry_controlled_shutdown())):
            out.append(RequestControlledShutdown(b))
        if state is ControlledShutdownState.DONE or (state is ControlledShutdownState.RETRY
                                                     and not server.can_retry_controlled_shutdown()):
            out.append(FinishShutdown(b))
        return out

    def _deliveries(self) -> list[Choice]:
        """A queued request from a running controller to a reachable broker."""
        c = self.cluster
        out: list[Choice] = []
        for src in range(c.cfg.brokers):
            if not c.is_up(src):
                continue
            channels = c.servers[src].controller.channel_manager
            for dst in sorted(channels.brokers()):
                if channels.queued_requests(dst) and c.network.is_up(dst):
                    out.append(Deliver(src, dst))
        return out

    def _isr_choices(self, budget: FaultBudget) -> list[Choice]:
        c = self.cluster
        out: list[Choice] = []
        snapshot = c.zookeeper.snapshot()
        for b in range(c.cfg.brokers):
            if not c.is_up(b) or not c.session_live(b) or not c.servers[b].zk_session_believed_alive:
                continue
            manager = c.servers[b].replica_manager
            for tp, partition in sorted(manager.all_partitions.items()):
                if not partition.is_leader:
                    continue
                znode = snapshot.get(TopicPartitionStateZNode.path(tp))
                if znode is None or znode[1].version != partition.zk_version:
                    continue
                if budget.isr_shrinks > 0:
                    out.extend(ShrinkIsr(b, tp, f) for f in partition.isr if f != b)
                for f in partition.replicas:
                    if f not in partition.isr and self._caught_up(b, tp, f):
                        out.append(ExpandIsr(b, tp, f))
        return out

    def _caught_up(self, leader: int, tp: TopicPartition, follower: int) -> bool:
        """Follower `follower` fetches from `leader` at the leader's epoch."""
        c = self.cluster
        if not c.is_up(follower):
            return False
        mine = c.servers[leader].replica_manager.partition(tp)
        theirs = c.servers[follower].replica_manager.partition(tp)
        return (theirs is not None and theirs.leader == leader and theirs.leader_epoch == mine.leader_epoch
                and not theirs.stopped)

    def run(self, choice: Choice, budget: FaultBudget | None = None) -> None:
        """Make `choice` (charging `budget` for a fault)."""
        c = self.cluster
        if budget is not None:
            self._charge(choice, budget)
        if type(choice) is RunEvent:
            c.run_event(choice.broker)
        elif type(choice) is Deliver:
            c.deliver(choice.src, choice.dst)
        elif type(choice) is DeliverWatch:
            c.zookeeper.deliver_watch_event(choice.pending)
        elif type(choice) is StartBroker:
            c.start_broker(choice.broker)
        elif type(choice) is CrashBroker:
            c.crash_broker(choice.broker)
        elif type(choice) is ExpireSession:
            c.expire_session(choice.broker)
        elif type(choice) is NoticeExpiry:
            c.notice_expiry(choice.broker)
        elif type(choice) is LoseAck:
            c.lose_next_ack(choice.broker)
        elif type(choice) is ShrinkIsr:
            c.shrink_isr(choice.broker, choice.partition, choice.follower)
        elif type(choice) is ExpandIsr:
            c.expand_isr(choice.broker, choice.partition, choice.follower)
        elif type(choice) is RequestControlledShutdown:
            c.request_controlled_shutdown(choice.broker)
        elif type(choice) is FinishShutdown:
            c.finish_shutdown(choice.broker)
        else:
            raise TypeError(f"not a scheduler choice: {choice!r}")

    def _charge(self, choice: Choice, budget: FaultBudget) -> None:
        c = choice
        if isinstance(c, CrashBroker):
            budget.crashes -= 1
        elif isinstance(c, ExpireSession) and self.cluster.is_up(c.broker):
            budget.session_expiries -= 1
        elif isinstance(c, LoseAck):
            budget.lost_acks -= 1
        elif isinstance(c, ShrinkIsr):
            budget.isr_shrinks -= 1
        elif isinstance(c, RequestControlledShutdown) and budget.controlled_shutdowns > 0:
            budget.controlled_shutdowns -= 1

    def run_random(self, rng: random.Random, steps: int, budget: FaultBudget | None = None) -> list[Choice]:
        """Up to `steps` choices drawn with `rng`; stops early when nothing is possible."""
        taken = []
        budget = budget or FaultBudget()
        for _ in range(steps):
            options = self.choices(budget)
            if not options:
                break
            choice = rng.choice(options)
            self.run(choice, budget)
            taken.append(choice)
        return taken

    def run_until_quiet(self, rng: random.Random | None = None, limit: int = 10_000) -> int:
        """Make healing choices (events, deliveries, notifications, ISR expansion) until none is left."""
        healing = (RunEvent, Deliver, DeliverWatch, NoticeExpiry, ExpandIsr)
        for n in range(limit):
            options = [ch for ch in self.choices() if isinstance(ch, healing)]
            if not options:
                return n
            self.run(rng.choice(options) if rng else options[0])
        raise RuntimeError(f"the cluster did not settle within {limit} steps")
