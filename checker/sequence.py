"""A counterexample as a sequence diagram of the messages and writes themselves.

The model's trace says, per step, which action ran and the state before and after it. The arrows a
reader of Kafka expects are derived from those two states, not from the action's name:

- ZooKeeper writes, broker -> ZooKeeper: the `/controller` registration (a multi-op that also
  bumps `/controller_epoch`, kafka@2.6.0:core/src/main/scala/kafka/zk/KafkaZkClient.scala,
  registerControllerAndIncrementControllerEpoch), the partition-state znodes with their leader,
  leader epoch, ISR, controller epoch and new zkVersion (updateLeaderAndIsr), a broker's
  registration under `/brokers/ids` with its broker epoch (the czxid), and the admin znodes;
- ZooKeeper -> broker: watch notifications (a one-shot watch of `Zk.watches[b]` consumed while the
  broker stays connected);
- broker -> broker: controller requests put on the channel (`net["c->d"]` grew), drawn solid, and
  their delivery (the head of the queue consumed), drawn dashed. Labels are the model's
  `Kind(cC,eE,beB)`: the sending controller C, its controller epoch E and the broker epoch B the
  request is addressed to; a LeaderAndIsr also shows the leader epochs it carries (the ZooKeeper
  partition states after the step);
- marks on a lifeline: a crash, a restart, a session expiry, a disconnection, becoming or ceasing
  to be the active controller.

A step whose states differ in nothing drawn gets a note with its action on the actor's lifeline.
Works on any decoded ITF trace of the Kafka model (`kcm.checker.engine.itf.ItfTrace`); a trace of another
model gives lifelines from its action fields and notes only.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

from kcm.model.actions import KINDS
from kcm.model.cluster import PARTITION_STATE_SHIFT, TOPIC_SHIFT, Budget, Watch

ZOOKEEPER = "ZooKeeper"
ADMIN = "admin"

#: `Zk.watches[b]` bits and the znode each watches.
WATCH_NAMES = {Watch.CONTROLLER: "/controller", Watch.BROKER_IDS: "/brokers/ids",
               Watch.DELETE_TOPICS: "/admin/delete_topics", Watch.ISR_CHANGE: "/isr_change_notification",
               Watch.PREFERRED: "/admin/preferred_replica_election", Watch.REASSIGN: "/admin/reassign_partitions",
               Watch.TOPICS: "/brokers/topics", Watch.LOG_DIR_EVENT: "/log_dir_event_notification"}
if set(WATCH_NAMES) != set(Watch):
    raise AssertionError(f"name the znode of {sorted(w.name for w in set(Watch) - set(WATCH_NAMES))} in WATCH_NAMES")

#: What each kind of event looks like; the legend lists them in this order.
LEGEND = (
    ("zkwrite", "broker → ZooKeeper: a write (/controller multi-op, partition state with its new zkVersion, "
                "a registration, an admin znode)"),
    ("watch", "ZooKeeper → broker: a watch notification (one-shot: consumed when it fires)"),
    ("send", "controller → broker: a request queued on the channel, Kind(cC,eE,beB) = sent by controller C "
             "at controller epoch E to broker epoch B; LeaderAndIsr also lists its leader epochs"),
    ("deliver", "the request delivered (dashed): the broker handles it or fences it"),
    ("crash", "✗ a crash, expiry or disconnection"),
    ("restart", "▲ a restart, a new session, a controller elected"),
    ("note", "an action that changes no message, write or lifeline state (its effect is in the table below)"),
)


#: The position of each watch's bit in `Zk.watches[b]`: a trace prints a broker's watches as the
#: set of these positions (`kcm.model.checking.kafka_model.state_fields`), so `{1, 2}` is
#: /brokers/ids and /admin/delete_topics.
WATCH_POSITIONS = {int(w).bit_length() - 1: name for w, name in WATCH_NAMES.items()}


def watch_name(position: int) -> str:
    """The znode the watch at bit `position` of `Zk.watches[b]` is set on (`WATCH_POSITIONS`, and
    from `PARTITION_STATE_SHIFT` on, one data watch per partition state znode, and from
    `TOPIC_SHIFT` on, one data watch per `/brokers/topics/<t>`)."""
    if position >= TOPIC_SHIFT:
        return f"/brokers/topics/{position - TOPIC_SHIFT}"
    if position >= PARTITION_STATE_SHIFT:
        return f"partition {position - PARTITION_STATE_SHIFT} state"
    return WATCH_POSITIONS.get(position, f"watch bit {position}")


def budget_names() -> tuple[str, ...]:
    """What each counter of `spent` counts, in order: the action kinds that spend that budget
    (`kcm.model.actions.KINDS`; kinds sharing a budget joined by `/`)."""
    names = []
    for position, budget in enumerate(Budget):
        if int(budget) != position:
            raise AssertionError(f"Budget.{budget.name} is {int(budget)}, not its position {position} in spent")
        names.append("/".join(k.name for k in KINDS if k.budget is budget))
    return tuple(names)


def _legend_entry(key: str, text: str) -> str:
    """One entry of `TEXT_LEGEND`: the key in a column of 18, the text wrapped under itself (never
    inside an item of a list, whose words `_item` binds)."""
    return textwrap.fill(text, width=112, initial_indent=f"  {key:<18}", subsequent_indent=" " * 20,
                         break_on_hyphens=False).replace(_BIND, " ")


_BIND = "\xa0"


def _item(*words: object) -> str:
    """Words a wrapped legend line keeps together."""
    return _BIND.join(map(str, words))


def _watch_legend() -> str:
    positions = ", ".join(_item(p, name) for p, name in sorted(WATCH_POSITIONS.items()))
    partition = _item(f"{PARTITION_STATE_SHIFT}+p", "the", "state", "znode", "of", "partition", "p")
    topic = _item(f"{TOPIC_SHIFT}+t", "/brokers/topics/t")
    return f"one-shot watches broker b has armed, as the positions of their bits: {positions}, {partition}, {topic}"


def _spent_legend() -> str:
    counters = ", ".join(_item(f"[{i}]", name) for i, name in enumerate(budget_names()))
    return f"the config's fault and admin budgets used so far, one counter per kind, in order: {counters}"


#: The legend for the text rendering (`kcm trace show`): watches, budgets and stamps.
TEXT_LEGEND = "\n".join([
    "Legend",
    _legend_entry("zk.watches[b]", _watch_legend()),
    _legend_entry("zk.partitions[p]", "the partition state znode: leader, leader_epoch, isr, controller_epoch (the "
                                      "writer's stamp) and version (its zkVersion)"),
    _legend_entry('net["c->d"]', "requests from controller c to broker d in flight, oldest first: "
                                 "Kind(cC,eE,beB) = controller C, controller epoch E, addressed to broker epoch B"),
    _legend_entry("brokerN[ctx]", "broker N's controller context (meaningful while brokerN[active])"),
    _legend_entry("brokerN[queue]", "broker N's controller event queue, oldest first; a step "
                                    + _item('"ControllerProcessEvent(broker=N):', 'E"') + " processes its head E"),
    _legend_entry("spent[i]", _spent_legend()),
    _legend_entry("ghost, scenario", "the model's bookkeeping (which overlapping run, what has happened)"),
]) + "\n"


@dataclass(frozen=True)
class Event:
    """One thing drawn in a step: an arrow (`target` set) or a mark or note on `source`."""

    kind: str          # a key of LEGEND
    source: str
    target: str | None
    label: str


def _get(value: Any, key: str, default: Any = None) -> Any:
    try:
        return value[key]
    except (KeyError, TypeError, IndexError):
        return default


def broker_ids(state: dict[str, Any]) -> list[int]:
    return sorted(int(m.group(1)) for name in state if (m := re.fullmatch(r"broker(\d+)", name)))


def lifelines(trace) -> list[str]:
    """ZooKeeper, then one lifeline per broker (and `admin` when an admin operation appears)."""
    first = trace.states[0]
    lines = [f"broker {b}" for b in broker_ids(first)]
    if not lines:
        return _generic_lifelines(trace)
    admin = any((k or "").startswith("Admin") for k in trace.action_kinds)
    return [ZOOKEEPER, *lines] + ([ADMIN] if admin else [])


def _generic_lifelines(trace) -> list[str]:
    from kcm.checker.engine.traces import ENVIRONMENT, actors_of

    out: list[str] = []
    for i in range(1, len(trace.states)):
        source, targets = actors_of(trace.action_kinds[i], trace.action_fields[i])
        for lf in (source, *targets):
            if lf not in out:
                out.append(lf)
    return out or [ENVIRONMENT]


def _actor(trace, i: int) -> str:
    kind = trace.action_kinds[i] or ""
    fields = trace.action_fields[i] or {}
    if kind.startswith("Admin"):
        return ADMIN
    for key in ("broker", "controller", "src", "from_"):
        value = _get(fields, key)
        if isinstance(value, int) and not isinstance(value, bool):
            return f"broker {value}"
    from kcm.checker.engine.traces import actors_of

    return actors_of(kind, fields)[0]


def _watch_positions(value: Any) -> frozenset[int]:
    """The bit positions a broker's watches hold: a trace's set of positions as it is, a raw
    bitmask (a state not rendered by `state_fields`) split into its positions."""
    if isinstance(value, int) and not isinstance(value, bool):
        return frozenset(p for p in range(value.bit_length()) if value >> p & 1)
    if isinstance(value, (frozenset, set, tuple, list)):
        return frozenset(int(v) for v in value)
    return frozenset()


def _partition_label(state: Any) -> str:
    return (f"leader {_get(state, 'leader')}, leader epoch {_get(state, 'leader_epoch')}, "
            f"isr {list(_get(state, 'isr', ()) or ())}, c.epoch {_get(state, 'controller_epoch')}")


def _queue_change(old: tuple, new: tuple) -> tuple[tuple, tuple]:
    """(delivered, sent) between two snapshots of a FIFO queue."""
    for k in range(len(old) + 1):
        rest = old[k:]
        if tuple(new[:len(rest)]) == tuple(rest):
            return tuple(old[:k]), tuple(new[len(rest):])
    return tuple(old), tuple(new)


def _zk(state: dict[str, Any]) -> dict[str, Any] | None:
    """The ZooKeeper part of a state: one variable `zk`, or (as the model's ITF writes it) one
    variable per field, `zk.controller`, `zk.partitions`, ..."""
    if "zk" in state:
        return state["zk"]
    fields = {name[3:]: value for name, value in state.items() if name.startswith("zk.")}
    return fields or None


def step_events(trace, i: int) -> list[Event]:
    """What step `i` (1-based) draws, derived from the states before and after it."""
    before, after = trace.states[i - 1], trace.states[i]
    actor = _actor(trace, i)
    zb, za = _zk(before), _zk(after)
    if za is None:
        return [Event("note", actor, None, trace.described(i) or f"step {i}")]
    brokers = broker_ids(after)
    events = _lifeline_marks(before, after, zb, za, brokers)
    events += _zk_writes(before, after, zb, za, brokers, actor)
    events += _watch_notifications(before, after, zb, za, brokers)
    events += _requests(before, after, za, brokers)
    events += _controller_marks(before, after, brokers)
    if not events:
        events.append(Event("note", actor, None, trace.described(i) or f"step {i}"))
    return events


def _lifeline_marks(before: dict, after: dict, zb: Any, za: Any, brokers: list[int]) -> list[Event]:
    """What happened to the processes and their sessions."""
    events: list[Event] = []
    for b in brokers:
        ob, nb = before[f"broker{b}"], after[f"broker{b}"]
        me = f"broker {b}"
        if _get(ob, "up") and not _get(nb, "up"):
            events.append(Event("crash", me, None, "✗ crash"))
        elif not _get(ob, "up") and _get(nb, "up"):
            events.append(Event("restart", me, None, f"▲ restart (broker epoch {_get(nb, 'epoch')})"))
        elif _get(ob, "connected") and not _get(nb, "connected"):
            events.append(Event("crash", me, None, "✗ disconnected from ZooKeeper"))
    sessions_before, sessions_after = _sessions(zb), _sessions(za)
    for b in sorted(sessions_before - sessions_after):
        events.append(Event("crash", f"broker {b}", None, "✗ ZooKeeper session expired: its ephemerals go"))
    epochs_a = _get(za, "broker_epochs", ())
    for b in sorted(sessions_after - sessions_before):
        epoch = epochs_a[b] if b < len(epochs_a) else "?"
        events.append(Event("zkwrite", f"broker {b}", ZOOKEEPER,
                            f"create /brokers/ids/{b} (ephemeral; broker epoch {epoch})"))
    return events


def _sessions(zk: Any) -> set:
    return set(_get(zk, "session", ()) or ())


def _zk_writes(before: dict, after: dict, zb: Any, za: Any, brokers: list[int], actor: str) -> list[Event]:
    """The writes to ZooKeeper: `/controller`, the partition states, the admin znodes."""
    events: list[Event] = []
    writer = actor if actor != ZOOKEEPER else next((f"broker {b}" for b in brokers
                                                    if _get(after[f"broker{b}"], "active")), actor)
    c_old, c_new = _get(zb, "controller"), _get(za, "controller")
    e_new = _get(za, "controller_epoch")
    if c_old != c_new:
        if c_new is not None and c_new >= 0:
            events.append(Event("zkwrite", f"broker {c_new}", ZOOKEEPER,
                                f"multi: create /controller {{brokerid: {c_new}}} + set /controller_epoch = {e_new}"))
        elif c_old is not None and c_old >= 0 and c_old in _sessions(za):
            events.append(Event("zkwrite", f"broker {c_old}", ZOOKEEPER, "delete /controller"))
    parts_b, parts_a = _get(zb, "partitions", ()) or (), _get(za, "partitions", ()) or ()
    for p in range(max(len(parts_b), len(parts_a))):
        old = parts_b[p] if p < len(parts_b) else None
        new = parts_a[p] if p < len(parts_a) else None
        if old == new:
            continue
        if new is None:
            events.append(Event("zkwrite", writer, ZOOKEEPER, f"delete partition {p} state"))
        else:
            verb = "create" if old is None else "set"
            version = _get(new, "version")
            expected = "" if old is None else f" (expects v{_get(old, 'version')})"
            events.append(Event("zkwrite", writer, ZOOKEEPER,
                                f"{verb} partition {p} state → v{version}{expected}: {_partition_label(new)}"))
    for field, what in (("delete_topics", "/admin/delete_topics"), ("reassign", "/admin/reassign_partitions"),
                        ("preferred", "/admin/preferred_replica_election"),
                        ("isr_changes", "/isr_change_notification"),
                        ("log_dir_events", "/log_dir_event_notification")):
        old, new = _get(zb, field), _get(za, field)
        if old != new:
            source = ADMIN if actor == ADMIN else writer
            verb = "write" if _size(new) >= _size(old) else "delete"
            events.append(Event("zkwrite", source, ZOOKEEPER, f"{verb} {what}"))
    return events


def _watch_notifications(before: dict, after: dict, zb: Any, za: Any, brokers: list[int]) -> list[Event]:
    """A one-shot watch consumed while its broker stays connected."""
    events: list[Event] = []
    watches_b, watches_a = _get(zb, "watches", ()) or (), _get(za, "watches", ()) or ()
    for b in brokers:
        if b >= len(watches_b) or b >= len(watches_a):
            continue
        fired = _watch_positions(watches_b[b]) - _watch_positions(watches_a[b])
        nb = after[f"broker{b}"]
        if fired and _get(nb, "up") and _get(nb, "connected") and _get(before[f"broker{b}"], "active") == _get(
                nb, "active"):
            events.append(Event("watch", ZOOKEEPER, f"broker {b}",
                                "watch fired: " + ", ".join(watch_name(p) for p in sorted(fired))))
    return events


def _requests(before: dict, after: dict, za: Any, brokers: list[int]) -> list[Event]:
    """Controller requests queued (sent) and consumed (delivered)."""
    events: list[Event] = []
    parts_a = _get(za, "partitions", ()) or ()
    net_b, net_a = _get(before, "net", {}) or {}, _get(after, "net", {}) or {}
    crashed = {b for b in brokers if _get(before[f"broker{b}"], "up") and not _get(after[f"broker{b}"], "up")}
    lost: dict[str, int] = {}
    for key in sorted(set(net_b) | set(net_a)):
        src, _, dst = str(key).partition("->")
        delivered, sent = _queue_change(tuple(_get(net_b, key, ()) or ()), tuple(_get(net_a, key, ()) or ()))
        if delivered and (_int(src) in crashed or _int(dst) in crashed):
            # The channel dies with either end: nothing was handled.
            lost[src] = lost.get(src, 0) + len(delivered)
            delivered = ()
        for message in delivered:
            events.append(Event("deliver", f"broker {src}", f"broker {dst}", f"handles {message}"))
        for message in sent:
            label = str(message)
            if label.startswith("LeaderAndIsr") and parts_a:
                epochs = ", ".join(f"p{p}: leader epoch {_get(s, 'leader_epoch')}"
                                   for p, s in enumerate(parts_a) if s is not None)
                label = f"{label} [{epochs}]"
            events.append(Event("send", f"broker {src}", f"broker {dst}", label))
    for src, count in lost.items():
        events.append(Event("crash", f"broker {src}", None, f"✗ {count} queued request(s) lost"))
    return events


def _controller_marks(before: dict, after: dict, brokers: list[int]) -> list[Event]:
    """Becoming or ceasing to be the controller."""
    events: list[Event] = []
    for b in brokers:
        ob, nb = before[f"broker{b}"], after[f"broker{b}"]
        if not _get(ob, "active") and _get(nb, "active"):
            events.append(Event("restart", f"broker {b}", None,
                                f"▲ active controller, epoch {_get(_get(nb, 'ctx'), 'epoch')}"))
        elif _get(ob, "active") and not _get(nb, "active") and _get(nb, "up"):
            events.append(Event("crash", f"broker {b}", None, "resigns as controller"))
    return events


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _size(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return bin(value).count("1") if value >= 0 else 0
    try:
        return len(value)
    except TypeError:
        return 0 if value in (None, False) else 1
