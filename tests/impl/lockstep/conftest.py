"""Lock-step comparison of the stepped implementation with the model, and the model bugs it found.

`lockstep(cfg)` returns a `LockStep`: the model's initial state and a `StepCluster` built the same
way, compared after every action (`abstract(impl) == kcm.model.spec.step(cfg, state, action)`); a
difference fails the test with the action sequence and the differing fields.

The comparison runs against the model *with the fixes below applied* (`fixed_model`, a fixture that
monkeypatches `kcm.model` for the test only). Each fix repairs a bug of the model found by this
comparison; `test_model_disagreements.py` shows, for each, the shortest action sequence on which the
unfixed model differs from Kafka's behaviour (and from the implementation). When the model is
corrected, that test fails and the fix here can be deleted. The implementation itself follows the
model's deliberate abstractions through `ModelAlignment.model()` (see `kcm.impl.model_alignment`).
"""

from __future__ import annotations

import random

import pytest

import kcm.model.broker as model_broker
import kcm.model.controller as model_controller
import kcm.model.reassignment as model_reassignment
import kcm.model.topic_deletion as model_topic_deletion
import kcm.model.world as model_world
from kcm.impl.abstraction import abstract, describe_difference
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model import actions as a
from kcm.model.cluster import NO_ZNODE, NONE, Event, EventKind, PartitionZnode, Watch, put
from kcm.model.spec import enabled_actions, init_states, step
from kcm.model.states import ReplicaState as R


# ---- fixes of model bugs ------------------------------------------------------------------------


def leader_writes_isr(w, b, p, new_isr):
    """Fix 1 (model/broker.py `leader_writes_isr`): `broker` is read before the state znode write,
    which may queue PartitionReassignmentIsrChange at `b` itself (the leader is also the controller);
    writing the stale record back loses that event."""
    broker = w.brokers[b]
    replica = broker.replicas[p]
    znode = w.zk.partitions[p]
    if znode.version != replica.zk_version:
        return False
    written = PartitionZnode(b, replica.leader_epoch, new_isr, znode.controller_epoch, znode.version + 1)
    w.set_partition_state(p, written)
    broker = w.brokers[b]   # the fix: re-read
    w.brokers[b] = broker._replace(replicas=put(broker.replicas, p, replica._replace(isr=new_isr,
                                                                                     zk_version=written.version)))
    if not w.zk.isr_changes >> p & 1:
        w.zk = w.zk._replace(isr_changes=w.zk.isr_changes | 1 << p)
        w.fire(Watch.ISR_CHANGE, Event(EventKind.IsrChangeNotification))
    return True


def delete_ephemerals(self, b):
    """Fix 2 (model/world.py `World.delete_ephemerals`): the `/controller` deletion writes back a `zk`
    read before the `/brokers/ids/<b>` notification, restoring the BROKER_IDS watches it consumed."""
    zk = self.zk
    if zk.broker_epochs[b]:
        self.zk = zk._replace(broker_epochs=put(zk.broker_epochs, b, 0))
        self.fire(Watch.BROKER_IDS, Event(EventKind.BrokerChange))
    if self.zk.controller == b:   # the fix: re-read
        self.zk = self.zk._replace(controller=NONE)
        self.fire_controller_change(deleted=True)


_process_register_broker_and_reelect = model_controller.Controller.process_register_broker_and_reelect


def process_register_broker_and_reelect(self, event):
    """Fix 3 (model/controller.py): RegisterBrokerAndReelect registers `/brokers/ids/<id>` without
    `zk_of`, so a session that expired again before the event ran still creates the znode."""
    self.w.zk_of(self.me)   # the fix: an expired session answers SESSIONEXPIRED
    _process_register_broker_and_reelect(self, event)


def complete_delete_topic(self, t):
    """Fix 4 (model/topic_deletion.py `complete_delete_topic`): it fires the state-znode watch of
    every partition of the topic, also of those that have no state znode (ZooKeeper sends nothing
    for a znode that does not exist)."""
    successful = self._replicas_in_state(t, R.ReplicaDeletionSuccessful)
    self.handle_replica_state_changes(successful, R.NonExistentReplica)
    w = self.w
    w.check_epoch(self.me, self.epoch)
    self.mark_zk_write()
    zk = w.zk
    existed = [p for p in w.partitions_of_topic(t) if zk.partitions[p] is not NO_ZNODE]
    assignment, adding, removing, partitions = list(zk.assignment), list(zk.adding), list(zk.removing), list(zk.partitions)
    for p in w.partitions_of_topic(t):
        assignment[p] = adding[p] = removing[p] = ()
        partitions[p] = NO_ZNODE
    w.zk = zk._replace(assignment=tuple(assignment), adding=tuple(adding), removing=tuple(removing),
                       partitions=tuple(partitions), delete_topics=zk.delete_topics & ~(1 << t))
    for p in existed:   # the fix
        w.fire_partition_state(p)
    w.fire(Watch.DELETE_TOPICS, Event(EventKind.TopicDeletion))
    self.topics_to_delete &= ~(1 << t)
    self.topics_ineligible &= ~(1 << t)
    self.topics_deletion_started &= ~(1 << t)
    for p in w.partitions_of_topic(t):
        self.assignment[p] = self.adding[p] = self.removing[p] = ()
        self.leadership[p] = NO_ZNODE
        self.reassigning &= ~(1 << p)


def maybe_remove_from_zk_reassignment(self, should_remove):
    """Fix 5 (model/reassignment.py): rewriting a non-empty /admin/reassign_partitions is a setData,
    which spends the exists-watch on it (PartitionReassignmentHandler ignores the change, but the
    one-shot watch is gone); the model leaves it armed."""
    w = self.w
    reassign = self.zk.reassign
    if not any(reassign):
        return
    updated = tuple(() if t and should_remove(p, t) else t for p, t in enumerate(reassign))
    w.check_epoch(self.me, self.epoch)
    self.mark_zk_write()
    w.zk = w.zk._replace(reassign=updated)
    w.fire(Watch.REASSIGN, None)   # the fix: deleted or rewritten, the watch is spent
    if not any(updated):
        w.enqueue(self.me, Event(EventKind.ZkPartitionReassignment))


MODEL_FIXES = (
    (model_broker, "leader_writes_isr", leader_writes_isr),
    (model_world.World, "delete_ephemerals", delete_ephemerals),
    (model_controller.Controller, "process_register_broker_and_reelect", process_register_broker_and_reelect),
    (model_topic_deletion.TopicDeletionMixin, "complete_delete_topic", complete_delete_topic),
    (model_reassignment.ReassignmentMixin, "maybe_remove_from_zk_reassignment", maybe_remove_from_zk_reassignment),
)


def apply_model_fixes(monkeypatch, *, but: str | None = None) -> None:
    """Apply every fix (but the one named `but`) for the rest of the test."""
    for owner, name, fix in MODEL_FIXES:
        if name != but:
            monkeypatch.setattr(owner, name, fix)
    if but != "process_register_broker_and_reelect":
        # the handler table holds the function itself
        handlers = dict(model_controller._HANDLERS)
        handlers[EventKind.RegisterBrokerAndReelect] = process_register_broker_and_reelect
        monkeypatch.setattr(model_controller, "_HANDLERS", handlers)


@pytest.fixture
def fixed_model(monkeypatch):
    """The model with the fixes above, for the duration of one test."""
    apply_model_fixes(monkeypatch)


@pytest.fixture
def model_with_fixes_but(monkeypatch):
    """`model_with_fixes_but(name)`: the model with every fix but `name` (None: all of them)."""

    def apply(name: str | None) -> None:
        monkeypatch.undo()
        apply_model_fixes(monkeypatch, but=name)

    return apply


# ---- the lock-step driver ------------------------------------------------------------------------


class LockStep:
    """The model state and the stepped implementation, compared after every action."""

    HEALING = (a.ControllerProcessEvent, a.NetworkDeliver, a.BrokerNoticeExpiry, a.LeaderExpandIsr)

    def __init__(self, cfg, alignment: ModelAlignment | None = None) -> None:
        self.cfg = cfg
        self.state = init_states(cfg)[0]
        self.impl = StepCluster.initial(cfg, alignment=alignment)
        self.trace: list = []
        self.check()

    def check(self, expected=None) -> None:
        expected = self.state if expected is None else expected
        actual = abstract(self.impl)
        if actual != expected:
            lines = "\n".join(f"  {x}" for x in self.trace)
            diff = "\n".join(f"  {d}" for d in describe_difference(expected, actual))
            pytest.fail(f"the implementation differs from the model after:\n{lines}\n{diff}", pytrace=False)

    def apply(self, action) -> None:
        assert action in enabled_actions(self.cfg, self.state), f"{action} is not enabled in the model"
        nxt = step(self.cfg, self.state, action)
        assert nxt is not None, f"{action} overflows an event queue"
        self.impl.apply(action)
        self.trace.append(action)
        self.check(nxt)
        self.state = nxt

    def drain(self, limit: int = 1000) -> int:
        """Apply the first enabled healing action (in the model's order) until there is none."""
        for n in range(limit):
            options = [x for x in enabled_actions(self.cfg, self.state)
                       if isinstance(x, self.HEALING) and step(self.cfg, self.state, x) is not None]
            if not options:
                return n
            self.apply(options[0])
        raise AssertionError(f"no quiescence within {limit} healing actions")

    def walk(self, rng: random.Random, steps: int) -> int:
        """Up to `steps` random enabled actions; returns how many were taken."""
        for n in range(steps):
            options = [x for x in enabled_actions(self.cfg, self.state) if step(self.cfg, self.state, x) is not None]
            if not options:
                return n
            self.apply(rng.choice(options))
        return steps


@pytest.fixture
def lockstep(fixed_model):
    """`lockstep(cfg, alignment=None)` -> a `LockStep` (against the fixed model)."""
    made = []

    def make(cfg, alignment=None) -> LockStep:
        run = LockStep(cfg, alignment)
        made.append(run)
        return run

    yield make
    for run in made:
        run.impl.close()
