"""Where the liveness properties are judged (settled, quiescent), and the per-model `Judge`.

Faults and admin operations are bounded, so every run ends where the cluster stops healing. The
liveness properties are stated in that bounded form, judged in two kinds of states:

- `settled`: every healing action is done except restarting the dead brokers (`BrokerStart`),
  which may stay dead (a dead machine). Precisely: some broker is up; every broker that is up is
  connected, holds a live ZooKeeper session (no expiry it has not noticed), has no event queued
  (so no watch notification and no event of any controller is pending: the model delivers a
  watch by queueing its event at once) and no controlled shutdown under way; every dead broker's
  session has expired (its `/brokers/ids` znode is gone, so the failure is visible in ZooKeeper
  and its BrokerChange has been handled); no request is in flight to a broker that is up (a
  request queued for a dead broker cannot be delivered and waits for the controller's
  BrokerChange to drop it); and no leader can expand its ISR.
- `quiescent`: no healing action is enabled: `settled` with every broker up (so every session
  alive, nothing queued or in flight, no leader able to expand its ISR).

A `Judge` belongs to one model (`kcm.model.catalogue.properties_for` makes one): a dozen
properties ask in a row whether the same state is settled or quiescent, and a dozen transition
invariants ask for the elections of the same step, so it remembers the last answer of each
(states are immutable, so a state's identity is the key; the reference held keeps the id from
being reused; each pair is replaced whole, so threads are safe). The plain functions `settled` and
`quiescent` compute afresh, for callers outside the checkers. What else several property modules
read of a state or a step is in `views`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import NONE, Cluster, Election, Shutdown


def settled(s: Cluster) -> bool:
    """The cluster has settled around its faults (see the module docstring)."""
    up = False
    zk = s.zk
    for b, broker in enumerate(s.brokers):
        if not broker.up:
            if zk.session >> b & 1:
                return False
            continue
        up = True
        if broker.queue or not broker.connected or broker.shutdown is not Shutdown.NONE or not zk.session >> b & 1:
            return False
    if not up:
        return False
    n = len(s.brokers)
    for i, queue in enumerate(s.net):
        if queue and s.brokers[i % n].up:
            return False
    return not _isr_expansion_pending(s)


def quiescent(s: Cluster) -> bool:
    """No healing action is enabled: `settled` with every broker up."""
    return all(b.up for b in s.brokers) and settled(s)


def _isr_expansion_pending(s: Cluster) -> bool:
    """Some leader can add a caught-up follower to its ISR (`LeaderExpandIsr` is enabled)."""
    zk = s.zk
    for b, broker in enumerate(s.brokers):
        for p, r in enumerate(broker.replicas):
            if r.leader == b and not r.stopped and zk.partitions[p].version == r.zk_version:
                for f in r.replicas:
                    if f not in r.isr:
                        fr = s.brokers[f].replicas[p]
                        if fr.leader == b and fr.leader_epoch == r.leader_epoch and not fr.stopped:
                            return True
    return False


class Settledness:
    """`settled` and `quiescent`, computed afresh: what a predicate called on its own uses."""

    def settled(self, s: Cluster) -> bool:
        return settled(s)

    def quiescent(self, s: Cluster) -> bool:
        return quiescent(s)


#: The predicates' default: nothing remembered.
AFRESH = Settledness()


class Judge(Settledness):
    """One model's settledness and step elections, each remembered for the last state or step
    asked about (see the module docstring). `observe(state, action)` gives a step's
    observations; the model's returns the very same list for the step last expanded."""

    def __init__(self, observe: Callable[[Cluster, Any], list]) -> None:
        self.observe = observe
        self._settled: tuple = (None, False)
        self._quiescent: tuple = (None, False)
        self._elections: tuple = (None, [])

    def settled(self, s: Cluster) -> bool:
        last = self._settled
        if last[0] is s:
            return last[1]
        answer = settled(s)
        self._settled = (s, answer)
        return answer

    def quiescent(self, s: Cluster) -> bool:
        last = self._quiescent
        if last[0] is s:
            return last[1]
        answer = all(b.up for b in s.brokers) and self.settled(s)
        self._quiescent = (s, answer)
        return answer

    def elections(self, s: Cluster, a) -> list[Election]:
        """The elections of step `a` from `s` (none unless it processes an event), remembered for
        the observation list they were found in (shared: callers only read it)."""
        if type(a) is not ControllerProcessEvent:
            return []
        obs = self.observe(s, a)
        last = self._elections
        if last[0] is obs:
            return last[1]
        out = [o for o in obs if type(o) is Election]
        self._elections = (obs, out)
        return out


def settled_under_a_controller(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Settled, and `/controller` names a live broker whose controller module is active: the
    settled properties that judge what a controller did. Whether one always remains is
    ActiveControllerOnceSettled's business (Kafka 2.6 can be left without one: Findings 10)."""
    c = s.zk.controller
    return judge.settled(s) and c != NONE and s.brokers[c].up and s.brokers[c].active
