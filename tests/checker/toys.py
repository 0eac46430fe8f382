"""Toy models the checker is tested on, each small enough to count by hand or by brute force.

- `TwoPhaseCommit`: Lamport's TwoPhase.tla (tlaplus/Examples `transaction_commit/TwoPhase.tla`),
  action for action, with an optional symmetry reduction over resource managers. TLC and
  stateright (`examples/2pc.rs`) both find 288 distinct states for 3 RMs and 8,832 for 5.
- `GridCounter`: two counters 0..n with IncX, IncY and (optionally) Reset from the corner; bugs
  at chosen points give violations at a known shortest depth (x + y).
- `Climbers`: three climbers on a ladder, never two on one rung, exchangeable: every reachable
  state has a trivial stabiliser, so symmetry divides the count by exactly 3! = 6.
- `Philosophers`: dining philosophers who take the left fork first: a deadlock after n steps.
- `EpochModel`: controllers bump an epoch; a stale write sets it back (an AlwaysStep violation on
  an edge that leads to an already-visited state).
- `Lanes`: grid counters side by side that never meet, one run each (`Model.run_of`).
- `Lamp`: a vacuous model: its goal is never met, and one declared action is never enabled.
- `DGraph`: an explicit graph (stateright's `DGraph` test util), for corner cases.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import Enum

from kcm.checker.engine.contract import Always, AlwaysStep, Model, Sometimes

FACTORY = "tests.checker.toys"

# ---- two-phase commit ----------------------------------------------------------------------------


class RmState(Enum):
    working = "working"
    prepared = "prepared"
    committed = "committed"
    aborted = "aborted"


class TmState(Enum):
    init = "init"
    committed = "committed"
    aborted = "aborted"


# Messages are a sum type: ITF variants keep the kind (`{"tag": "Prepared", "value": {...}}`).
@dataclass(frozen=True, slots=True)
class Prepared:
    __itf_variant__ = True
    rm: int


@dataclass(frozen=True, slots=True)
class Commit:
    __itf_variant__ = True


@dataclass(frozen=True, slots=True)
class Abort:
    __itf_variant__ = True


@dataclass(frozen=True, slots=True)
class TwoPhaseState:
    rm_state: tuple[RmState, ...]
    tm_state: TmState
    tm_prepared: frozenset[int]
    msgs: frozenset


@dataclass(frozen=True, slots=True)
class TmRcvPrepared:
    rm: int


@dataclass(frozen=True, slots=True)
class TmCommit:
    pass


@dataclass(frozen=True, slots=True)
class TmAbort:
    pass


@dataclass(frozen=True, slots=True)
class RmPrepare:
    rm: int


@dataclass(frozen=True, slots=True)
class RmChooseToAbort:
    rm: int


@dataclass(frozen=True, slots=True)
class RmRcvCommitMsg:
    rm: int


@dataclass(frozen=True, slots=True)
class RmRcvAbortMsg:
    rm: int


RM_EDGES = (
    (RmState.working, RmState.prepared),
    (RmState.working, RmState.aborted),
    (RmState.prepared, RmState.committed),
    (RmState.prepared, RmState.aborted),
    # Never taken: the TM commits only when every RM is prepared, and never both commits and aborts.
    (RmState.working, RmState.committed),
    (RmState.committed, RmState.aborted),
)


class TwoPhaseCommit(Model):
    """TwoPhase.tla with `rms` resource managers; `symmetric=True` reduces over RM ids."""

    name = "two-phase commit"

    def __init__(self, rms: int = 3, symmetric: bool = False) -> None:
        self.rms = rms
        self.has_symmetry = symmetric

    def init_states(self):
        return (TwoPhaseState((RmState.working,) * self.rms, TmState.init, frozenset(), frozenset()),)

    def enabled_actions(self, s):
        actions = []
        if s.tm_state is TmState.init:
            actions += [TmRcvPrepared(rm) for rm in range(self.rms) if Prepared(rm) in s.msgs]
            if len(s.tm_prepared) == self.rms:
                actions.append(TmCommit())
            actions.append(TmAbort())
        for rm in range(self.rms):
            if s.rm_state[rm] is RmState.working:
                actions += [RmPrepare(rm), RmChooseToAbort(rm)]
            if Commit() in s.msgs:
                actions.append(RmRcvCommitMsg(rm))
            if Abort() in s.msgs:
                actions.append(RmRcvAbortMsg(rm))
        return actions

    def step(self, s, a):
        def rm_to(rm, value):
            return s.rm_state[:rm] + (value,) + s.rm_state[rm + 1:]

        match a:
            case TmRcvPrepared(rm):
                return TwoPhaseState(s.rm_state, s.tm_state, s.tm_prepared | {rm}, s.msgs)
            case TmCommit():
                return TwoPhaseState(s.rm_state, TmState.committed, s.tm_prepared, s.msgs | {Commit()})
            case TmAbort():
                return TwoPhaseState(s.rm_state, TmState.aborted, s.tm_prepared, s.msgs | {Abort()})
            case RmPrepare(rm):
                return TwoPhaseState(rm_to(rm, RmState.prepared), s.tm_state, s.tm_prepared,
                                     s.msgs | {Prepared(rm)})
            case RmChooseToAbort(rm) | RmRcvAbortMsg(rm):
                return TwoPhaseState(rm_to(rm, RmState.aborted), s.tm_state, s.tm_prepared, s.msgs)
            case RmRcvCommitMsg(rm):
                return TwoPhaseState(rm_to(rm, RmState.committed), s.tm_state, s.tm_prepared, s.msgs)
        raise ValueError(a)

    def properties(self):
        return (
            Always("consistent", lambda s: not (RmState.committed in s.rm_state
                                                and RmState.aborted in s.rm_state)),
            Sometimes("commit agreement", lambda s, a, t: all(r is RmState.committed for r in t.rm_state)),
            Sometimes("abort agreement", lambda s, a, t: all(r is RmState.aborted for r in t.rm_state)),
        )

    def representative(self, s):
        # An RM's whole local state is (its state, whether the TM has its vote, whether its vote
        # is in flight); sorting RMs by it and renaming them in that order is canonical, since RMs
        # with equal keys are interchangeable.
        def key(rm):
            return (s.rm_state[rm].value, rm in s.tm_prepared, Prepared(rm) in s.msgs)

        order = sorted(range(self.rms), key=key)
        new_id = {old: new for new, old in enumerate(order)}
        msgs = frozenset(Prepared(new_id[m.rm]) if isinstance(m, Prepared) else m for m in s.msgs)
        return TwoPhaseState(tuple(s.rm_state[old] for old in order), s.tm_state,
                             frozenset(new_id[r] for r in s.tm_prepared), msgs)

    def edges_taken(self, s, a, t):
        return [(x, y) for x, y in zip(s.rm_state, t.rm_state) if x is not y]

    def coverage_universe(self):
        return RM_EDGES

    def action_names(self):
        return ("TmRcvPrepared", "TmCommit", "TmAbort", "RmPrepare", "RmChooseToAbort",
                "RmRcvCommitMsg", "RmRcvAbortMsg")

    def fields(self, s):
        return {"rmState": s.rm_state, "tmState": s.tm_state, "tmPrepared": s.tm_prepared, "msgs": s.msgs}


def two_phase(rms: int = 3, symmetric: bool = False) -> TwoPhaseCommit:
    """The replay factory (`tests.checker.toys:two_phase`)."""
    return TwoPhaseCommit(rms, symmetric)


# ---- a grid counter -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class IncX:
    pass


@dataclass(frozen=True, slots=True)
class IncY:
    pass


@dataclass(frozen=True, slots=True)
class Reset:
    pass


class GridCounter(Model):
    """Counters x, y in 0..n. Each point in `bugs` is forbidden by an `Always` named `not_<x>_<y>`.
    With `reset`, the corner (n, n) goes back to (0, 0); without, the corner is a deadlock unless
    `terminal` makes it a legal end."""

    name = "grid counter"

    def __init__(self, n: int = 3, bugs: tuple[tuple[int, int], ...] = (), reset: bool = True,
                 terminal: bool = False) -> None:
        self.n, self.bugs, self.reset, self.terminal = n, tuple(map(tuple, bugs)), reset, terminal

    def init_states(self):
        return (Point(0, 0),)

    def enabled_actions(self, s):
        actions = []
        if s.x < self.n:
            actions.append(IncX())
        if s.y < self.n:
            actions.append(IncY())
        if self.reset and s.x == s.y == self.n:
            actions.append(Reset())
        return actions

    def step(self, s, a):
        if isinstance(a, IncX):
            return Point(s.x + 1, s.y)
        if isinstance(a, IncY):
            return Point(s.x, s.y + 1)
        return Point(0, 0)

    def properties(self):
        return tuple(Always(f"not_{bx}_{by}", lambda s, bx=bx, by=by: (s.x, s.y) != (bx, by))
                     for bx, by in self.bugs)

    def is_terminal(self, s):
        return self.terminal and s.x == s.y == self.n


def grid(n: int = 3, bugs=(), reset: bool = True, terminal: bool = False) -> GridCounter:
    return GridCounter(n, tuple(tuple(b) for b in bugs), reset, terminal)


class LocalGridCounter(GridCounter):
    """The grid with a locality (`Model.locality`): its column, so the Spark explorer owns the
    states of a column together."""

    def locality(self, s):
        return s.x.to_bytes(8, "big")


def local_grid(n: int = 3) -> LocalGridCounter:
    return LocalGridCounter(n)


@dataclass(frozen=True, slots=True)
class LanePoint:
    lane: int
    x: int
    y: int


class Lanes(Model):
    """Grid counters side by side that never meet: lane `l` counts x, y in 0..sizes[l] from its
    initial state (l, 0, 0), with Reset from its corner unless the lane is `stuck` (its corner is
    then a deadlock), and `run_of` is the lane (`kcm.checker.engine.runs`). `bugs`: (lane, x, y) points an
    `Always` named `not_<lane>_<x>_<y>` forbids; `goals`: points a `Sometimes` named
    `reach_<lane>_<x>_<y>` asks for. Lane l's grid has (sizes[l] + 1)^2 states."""

    name = "lanes"

    def __init__(self, sizes=(2, 3, 4), bugs=(), goals=(), stuck=()) -> None:
        self.sizes, self.bugs, self.goals, self.stuck = tuple(sizes), tuple(bugs), tuple(goals), tuple(stuck)

    def init_states(self):
        return tuple(LanePoint(lane, 0, 0) for lane in range(len(self.sizes)))

    def run_of(self, s):
        return s.lane

    def enabled_actions(self, s):
        n = self.sizes[s.lane]
        actions = []
        if s.x < n:
            actions.append(IncX())
        if s.y < n:
            actions.append(IncY())
        if s.x == s.y == n and s.lane not in self.stuck:
            actions.append(Reset())
        return actions

    def step(self, s, a):
        if isinstance(a, IncX):
            return LanePoint(s.lane, s.x + 1, s.y)
        if isinstance(a, IncY):
            return LanePoint(s.lane, s.x, s.y + 1)
        return LanePoint(s.lane, 0, 0)

    def properties(self):
        return (tuple(Always(f"not_{lane}_{x}_{y}", lambda s, p=(lane, x, y): (s.lane, s.x, s.y) != p)
                      for lane, x, y in self.bugs)
                + tuple(Sometimes(f"reach_{lane}_{x}_{y}", lambda s, a, t, p=(lane, x, y): (t.lane, t.x, t.y) == p)
                        for lane, x, y in self.goals))


# ---- climbers (exact symmetry) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Up:
    climber: int


@dataclass(frozen=True, slots=True)
class Down:
    climber: int


class Climbers(Model):
    """Three climbers on rungs 0..height-1, never two on one rung, each moving one rung at a time
    to a free rung. They start on rungs 0, 1, 2 in every order (6 initial states), so the
    reachable states are all injective placements: height*(height-1)*(height-2) of them. Rungs are
    distinct, so only the identity permutation fixes a state: every orbit has exactly 6 members,
    and the canonical member (climbers renamed in rung order) is the sorted tuple."""

    name = "climbers"

    def __init__(self, height: int = 6, symmetric: bool = True) -> None:
        self.height = height
        self.has_symmetry = symmetric

    def init_states(self):
        return tuple(itertools.permutations(range(3)))

    def enabled_actions(self, s):
        actions = []
        for c, rung in enumerate(s):
            if rung + 1 < self.height and rung + 1 not in s:
                actions.append(Up(c))
            if rung > 0 and rung - 1 not in s:
                actions.append(Down(c))
        return actions

    def step(self, s, a):
        delta = 1 if isinstance(a, Up) else -1
        return s[:a.climber] + (s[a.climber] + delta,) + s[a.climber + 1:]

    def representative(self, s):
        return tuple(sorted(s))

    def properties(self):
        top = self.height - 1
        return (Always("nobody_on_top", lambda s: top not in s),)

    def fields(self, s):
        return {"rungs": s}


def climbers(height: int = 6, symmetric: bool = True) -> Climbers:
    return Climbers(height, symmetric)


# ---- dining philosophers (deadlock) ---------------------------------------------------------------

THINKING, HAS_LEFT, EATING = 0, 1, 2


@dataclass(frozen=True, slots=True)
class TakeLeft:
    philosopher: int


@dataclass(frozen=True, slots=True)
class TakeRight:
    philosopher: int


@dataclass(frozen=True, slots=True)
class Release:
    philosopher: int


class Philosophers(Model):
    """n philosophers; philosopher p's left fork is fork p, the right one fork p+1 mod n. Each
    takes the left fork, then the right one, eats, and puts both down. All holding their left
    fork is a deadlock, n steps from the start."""

    name = "dining philosophers"

    def __init__(self, n: int = 3) -> None:
        self.n = n

    def init_states(self):
        return ((THINKING,) * self.n,)

    def _fork_free(self, s, fork):
        # Fork f is held by philosopher f (as a left fork) or by f-1 (as a right fork, eating).
        return s[fork] == THINKING and s[(fork - 1) % self.n] != EATING

    def enabled_actions(self, s):
        actions = []
        for p, phase in enumerate(s):
            if phase == THINKING and self._fork_free(s, p):
                actions.append(TakeLeft(p))
            elif phase == HAS_LEFT and self._fork_free(s, (p + 1) % self.n):
                actions.append(TakeRight(p))
            elif phase == EATING:
                actions.append(Release(p))
        return actions

    def step(self, s, a):
        phase = {TakeLeft: HAS_LEFT, TakeRight: EATING, Release: THINKING}[type(a)]
        p = a.philosopher
        return s[:p] + (phase,) + s[p + 1:]


# ---- epochs (a transition invariant) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EpochState:
    epoch: int
    leader: int | None


@dataclass(frozen=True, slots=True)
class ControllerBump:
    controller: int


@dataclass(frozen=True, slots=True)
class BrokerStaleWrite:
    broker: int


class EpochModel(Model):
    """Two brokers; a controller bumps the epoch up to 3 and becomes leader. The bug: at epoch 2 a
    broker that is not the leader writes its stale epoch 1 back (and a state at epoch 1 has
    already been visited). `epoch_monotonic` is violated 3 steps from the start. `fixed=True`
    fences the stale write: it keeps the epoch and only changes the leader."""

    name = "epochs"

    def __init__(self, fixed: bool = False) -> None:
        self.fixed = fixed

    def init_states(self):
        return (EpochState(0, None),)

    def enabled_actions(self, s):
        actions = [ControllerBump(c) for c in (0, 1)] if s.epoch < 3 else []
        if s.epoch == 2:
            actions += [BrokerStaleWrite(b) for b in (0, 1) if b != s.leader]
        return actions

    def step(self, s, a):
        if isinstance(a, ControllerBump):
            return EpochState(s.epoch + 1, a.controller)
        return EpochState(s.epoch if self.fixed else 1, a.broker)

    def properties(self):
        return (AlwaysStep("epoch_monotonic", lambda s, a, t: t.epoch >= s.epoch),)

    def is_terminal(self, s):
        return s.epoch == 3

    def fields(self, s):
        return {"epoch": s.epoch, "leader": s.leader}


def epochs(fixed: bool = False) -> EpochModel:
    return EpochModel(fixed)


# ---- a vacuous model ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Toggle:
    pass


class Lamp(Model):
    """A lamp toggles on and off; the goal "purple" can never be met, and "Paint" is declared
    but never enabled."""

    name = "lamp"

    def init_states(self):
        return (False,)

    def enabled_actions(self, s):
        return (Toggle(),)

    def step(self, s, a):
        return not s

    def properties(self):
        return (
            Always("boolean", lambda s: s in (True, False)),
            Sometimes("on", lambda s, a, t: t is True),
            Sometimes("purple", lambda s, a, t: t == "purple"),
        )

    def action_names(self):
        return ("Toggle", "Paint")


# ---- an explicit graph ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Go:
    to: int


class DGraph(Model):
    """States are ints; `edges[s]` lists the successors of s in order; `bad` states violate the
    `Always` "good"."""

    name = "dgraph"

    def __init__(self, inits, edges, bad=(), terminal=()) -> None:
        self.inits, self.edges, self.bad, self.terminal = tuple(inits), dict(edges), set(bad), set(terminal)

    def init_states(self):
        return self.inits

    def enabled_actions(self, s):
        return [Go(t) for t in self.edges.get(s, ())]

    def step(self, s, a):
        return a.to

    def properties(self):
        return (Always("good", lambda s: s not in self.bad),)

    def is_terminal(self, s):
        return s in self.terminal


# ---- independent computations -----------------------------------------------------------------------


def naive_reachable(model: Model) -> set:
    """Every reachable state by a plain fixpoint over `enabled_actions` and `step`: no
    fingerprints, no parent pointers, no symmetry, none of the explorer's code."""
    seen = set(model.init_states())
    todo = list(seen)
    while todo:
        state = todo.pop()
        for action in model.enabled_actions(state):
            nxt = model.step(state, action)
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def permute_two_phase(s: TwoPhaseState, perm: tuple[int, ...]) -> TwoPhaseState:
    """Rename RM r to perm[r] everywhere (values, not positions: rm_state is indexed by RM)."""
    rm_state = list(s.rm_state)
    for old, new in enumerate(perm):
        rm_state[new] = s.rm_state[old]
    msgs = frozenset(Prepared(perm[m.rm]) if isinstance(m, Prepared) else m for m in s.msgs)
    return TwoPhaseState(tuple(rm_state), s.tm_state, frozenset(perm[r] for r in s.tm_prepared), msgs)


def orbit_count(states, permute, n: int) -> int:
    """The number of orbits of `states` under all n! renamings, by brute force."""
    orbits = {frozenset(permute(s, p) for p in itertools.permutations(range(n))) for s in states}
    return len(orbits)


# ---- a controller that fails over forever (liveness) ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Elect:
    pass


@dataclass(frozen=True, slots=True)
class Resume:
    pass


@dataclass(frozen=True, slots=True)
class Complete:
    pass


@dataclass(frozen=True, slots=True)
class Calm:
    pass


@dataclass(frozen=True, slots=True)
class AdminPoke:
    pass


class Failover(Model):
    """A livelock by hand (`kcm.checker.engine.liveness`): a controller is elected, resumes a pending
    operation that throws, resigns, and the next one does the same, forever.

        start --Elect--> elected --Resume--> resigned --Elect--> elected ...     (healing)
        settled --AdminPoke--> poked --AdminPoke--> poked2 --AdminPoke--> poked  (an operator)
        poked, poked2 --Calm--> settled                                          (healing)

    The initial states are `start` and `settled`; only `settled` is quiescent. The cycle
    elected <-> resigned is a fair livelock: the lasso is start, elected (prefix of 1 step), then
    resigned, elected (a cycle of 2). `escape` adds the healing action Complete to `settled`:
    "always" from both states of the cycle (weak fairness then forces it: no livelock), "elected"
    from `elected` only (not continuously enabled along the cycle: still a fair livelock, though
    a quiescent state stays reachable). The poke cycle is an operator's: outside the healing
    subgraph, never reported.
    """

    name = "failover"

    def __init__(self, escape: str = "") -> None:
        self.escape = escape

    def init_states(self):
        return ("start", "settled")

    def enabled_actions(self, s):
        out = []
        if s in ("start", "resigned"):
            out.append(Elect())
        if s == "elected":
            out.append(Resume())
        if (self.escape == "always" and s in ("elected", "resigned")) or (self.escape == "elected" and s == "elected"):
            out.append(Complete())
        if s in ("settled", "poked", "poked2"):
            out.append(AdminPoke())
        if s in ("poked", "poked2"):
            out.append(Calm())
        return out

    def step(self, s, a):
        match a:
            case Elect():
                return "elected"
            case Resume():
                return "resigned"
            case Complete() | Calm():
                return "settled"
            case AdminPoke():
                return "poked2" if s == "poked" else "poked"
        raise ValueError(a)

    def is_healing(self, s, a):
        return not isinstance(a, AdminPoke)

    def is_terminal(self, s):
        return s == "settled"

    def fields(self, s):
        return {"phase": s}


def failover(escape: str = "") -> Failover:
    """The replay factory (`tests.checker.toys:failover`)."""
    return Failover(escape)
