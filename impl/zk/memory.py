"""An embedded, in-memory ZooKeeper: one server object, any number of client sessions.

`MemoryZooKeeperServer` holds the znode tree, the zxid counter, the sessions and the armed watches;
`server.connect()` opens a session and returns a `MemoryZooKeeper`, which implements the
`kcm.impl.zk.protocol.ZooKeeper` protocol. The semantics are ZooKeeper's (the protocol cites them); what the
controller's correctness depends on is reproduced exactly, the rest is left out:

* **Transactions and zxids.** Every successful write (create, set, delete, multi) is one
  transaction with the next zxid; so are opening and ending a session, as on a real server. A
  multi's ops share one zxid. Real ZooKeeper also spends a zxid on a *failed* write; here failed
  writes change nothing, because only the order of zxids matters (czxid as broker epoch).
* **Versions.** `version` counts data changes, `cversion` child creations and deletions. A
  sequential create's suffix is the parent's count of child *creations* (deletions do not advance
  it): that is what ZooKeeper 3.8 does, observed on the real server by `tests/impl`.
* **Sessions.** `expire_session` is the cluster deciding that a session is over: its ephemeral
  znodes are deleted in one transaction, other clients' watches fire, its own armed watches and
  undelivered events are dropped, and its later calls raise `SessionExpiredError`. The expired
  client is *not* told at once: it learns from the expiry notice (a session-listener event, queued
  like watch events, or withheld with `notify=False`) or when it next talks to the server. That gap
  is the zombie-controller window: a controller whose session expired still acts until it learns so.
* **Watches.** One-shot, server-side: a trigger removes the watch and snapshots its callbacks into
  one notification per client (a client with a data and a child watch on a deleted znode gets one
  DELETED notification, as ZooKeeper suppresses the duplicate); later changes before a re-arming
  read are coalesced. A read that re-arms a watch while an older notification is still undelivered
  arms a new, independent watch.
* **Delivery is pluggable.** Notifications go to a per-client FIFO queue (ZooKeeper delivers a
  client's events in order). `Delivery.IMMEDIATE` drains the queues right after each operation, in
  zxid order, on the calling thread (threaded mode; callbacks should only enqueue work, as Kafka's
  do; an exception in a callback is logged, as the ZooKeeper client's event thread does).
  `Delivery.QUEUED` leaves them for an external scheduler: `pending_watch_events()` lists the head
  of each client's queue, `deliver_watch_event(e)` delivers one (its callback exceptions propagate).
* **Faults.** `expire_session(session_id)`, and `lose_next_ack(session_id, paths=)`: the
  session's next write (on a path `paths` accepts) is applied (or fails) as usual but the client
  gets `ConnectionLossError`, so it cannot tell which; `drop_connection(session_id)`: the connection
  is lost and re-established within the session timeout (see there).

All state is guarded by one lock; callbacks run outside it. Left out: ACLs, quotas, the
`/zookeeper` system subtree, several requests in flight at once (a client's requests are answered
one at a time, so a connection loss fails only the one in flight).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from kcm.impl.kafka_exception import KafkaException
from kcm.impl.zk.protocol import (
    ANY_VERSION,
    SEQUENCE_DIGITS,
    BadArgumentsError,
    BadVersionError,
    CheckOp,
    ConnectionClosedError,
    ConnectionLossError,
    CreateOp,
    DeleteOp,
    EventType,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    Op,
    OpResult,
    SessionExpiredError,
    SessionListener,
    SessionState,
    SetDataOp,
    Stat,
    WatchCallback,
    WatchedEvent,
    ZooKeeperError,
    parent_of,
    validate_path,
)

log = logging.getLogger(__name__)


class Delivery(Enum):
    """Who delivers watch events and session notices: the writing thread, or an external scheduler."""

    IMMEDIATE = "immediate"
    QUEUED = "queued"


class WatchKind(Enum):
    """Which of the server's two watch tables a watch is in."""

    DATA = "data"      # armed by get_data / exists
    CHILD = "child"    # armed by get_children


@dataclass(frozen=True, slots=True)
class PendingEvent:
    """One notification on its way to a client: a watch event or a session-state notice.

    `seq` orders all notifications globally (zxid order); a client's events are delivered in `seq`
    order, so only the head of each client's queue is deliverable.
    """

    seq: int
    session_id: int
    event: WatchedEvent | SessionState


@dataclass(frozen=True, slots=True)
class _Znode:
    data: bytes
    stat: Stat
    children: frozenset[str] = frozenset()
    creations: int = 0   # children ever created: the next sequential suffix


@dataclass(slots=True)
class _Session:
    id: int
    state: str = "live"                # live | expired | closed
    noticed: bool = False              # the expiry notice has been queued
    lost_acks: int = 0                 # armed "lose the next acknowledgement" faults
    #: Which writes an armed lost acknowledgement may hit (None: any); see `lose_next_ack`.
    lost_ack_paths: Callable[[str], bool] | None = None
    #: The armed lost acknowledgement is a connection drop (`drop_connection`): the listeners hear
    #: SUSPENDED, then CONNECTED to the same session.
    drop_connection: bool = False
    listeners: list[SessionListener] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Notification:
    pending: PendingEvent
    callbacks: tuple[Callable, ...]


_ROOT = _Znode(b"", Stat(version=0, cversion=0, czxid=0, mzxid=0))


class _Txn:
    """Applies one transaction's ops to a private copy of the tree; the server swaps it in on success.

    Records the watch triggers in op order, as `(path, EventType)`.
    """

    def __init__(self, nodes: dict[str, _Znode], zxid: int, session_id: int):
        self.nodes = dict(nodes)
        self.zxid = zxid
        self.session_id = session_id
        self.triggers: list[tuple[str, EventType]] = []

    def apply_all(self, ops: Sequence[Op], in_multi: bool) -> list[OpResult]:
        results = []
        for index, op in enumerate(ops):
            try:
                results.append(self.apply(op))
            except ZooKeeperError as error:
                if in_multi:
                    error.op_index = index
                raise
        return results

    def apply(self, op: Op) -> OpResult:
        if isinstance(op, CheckOp):
            self._existing(op.path, op.version)
            return None
        if isinstance(op, CreateOp):
            return self.create(op.path, op.data, op.ephemeral, op.sequential)
        if isinstance(op, SetDataOp):
            node = self._existing(op.path, op.version)
            stat = replace(node.stat, version=node.stat.version + 1, mzxid=self.zxid)
            self.nodes[op.path] = replace(node, data=bytes(op.data), stat=stat)
            self.triggers.append((op.path, EventType.CHANGED))
            return stat
        if isinstance(op, DeleteOp):
            self.delete(op.path, op.version)
            return None
        raise TypeError(f"not a ZooKeeper op: {op!r}")

    def create(self, path: str, data: bytes, ephemeral: bool, sequential: bool) -> str:
        validate_path(path, sequential=sequential)
        parent_path = parent_of(path)
        parent = self.nodes.get(parent_path)
        if parent is None:
            raise NoNodeError(path=path)
        if parent.stat.ephemeral_owner:
            raise NoChildrenForEphemeralsError(path=path)
        if sequential:
            path = f"{path}{parent.creations:0{SEQUENCE_DIGITS}d}"
        if path in self.nodes:
            raise NodeExistsError(path=path)
        owner = self.session_id if ephemeral else 0
        self.nodes[path] = _Znode(bytes(data), Stat(0, 0, self.zxid, self.zxid, owner))
        self.nodes[parent_path] = replace(
            parent, children=parent.children | {path.rsplit("/", 1)[1]}, creations=parent.creations + 1,
            stat=replace(parent.stat, cversion=parent.stat.cversion + 1))
        self.triggers += [(path, EventType.CREATED), (parent_path, EventType.CHILD)]
        return path

    def delete(self, path: str, version: int) -> None:
        if path == "/":
            raise BadArgumentsError("cannot delete the root", path=path)
        node = self._existing(path, version)
        if node.children:
            raise NotEmptyError(path=path)
        del self.nodes[path]
        parent_path = parent_of(path)
        parent = self.nodes[parent_path]
        self.nodes[parent_path] = replace(
            parent, children=parent.children - {path.rsplit("/", 1)[1]},
            stat=replace(parent.stat, cversion=parent.stat.cversion + 1))
        self.triggers += [(path, EventType.DELETED), (parent_path, EventType.CHILD)]

    def _existing(self, path: str, version: int) -> _Znode:
        node = self.nodes.get(path)
        if node is None:
            raise NoNodeError(path=path)
        if version != ANY_VERSION and version != node.stat.version:
            raise BadVersionError(f"BadVersionError: {path} is at version {node.stat.version}, "
                                  f"expected {version}", path=path)
        return node


class MemoryZooKeeperServer:
    """The embedded server: the tree, the zxid counter, sessions, watches, delivery and faults."""

    def __init__(self, delivery: Delivery = Delivery.IMMEDIATE):
        self.delivery = delivery
        self._lock = threading.RLock()
        self._nodes: dict[str, _Znode] = {"/": _ROOT}
        self._zxid = 0
        self._sessions: dict[int, _Session] = {}
        self._next_session = 1
        # path -> session id -> callbacks (a dict used as an ordered set: one watch per callback)
        self._watches: dict[WatchKind, dict[str, dict[int, dict[Callable, None]]]] = {
            WatchKind.DATA: {}, WatchKind.CHILD: {}}
        self._queues: dict[int, deque[_Notification]] = {}
        self._next_seq = 0
        self._draining = False

    # ---- clients ----------------------------------------------------------------------------

    def connect(self) -> MemoryZooKeeper:
        """Open a new session (a createSession transaction) and return its client."""
        with self._lock:
            self._zxid += 1
            session = _Session(self._next_session)
            self._next_session += 1
            self._sessions[session.id] = session
            self._queues[session.id] = deque()
        return MemoryZooKeeper(self, session.id)

    # ---- faults ------------------------------------------------------------------------------

    def expire_session(self, session_id: int, *, notify: bool = True) -> None:
        """The server ends the session: ephemerals deleted, watchers told; see the module docstring.

        With `notify`, the expiry notice is queued for the session's listeners (delivered like a
        watch event); without it the client learns only when it next calls the server.
        """
        with self._lock:
            session = self._session(session_id)
            if session.state != "live":
                return
            self._end_session(session, "expired")
            if notify:
                self._notice_expiry(session)
        self._after_operation()

    def lose_next_ack(self, session_id: int, count: int = 1, *, paths: Callable[[str], bool] | None = None) -> None:
        """The session's next `count` writes are applied (or fail) but answer ConnectionLossError.

        With `paths`, only a write one of whose ops is on a path `paths` accepts loses its reply
        (the model's `ZkLoseReply` hits the first partition-state write of an event)."""
        with self._lock:
            session = self._session(session_id)
            session.lost_acks += count
            session.lost_ack_paths = paths

    def drop_connection(self, session_id: int, *, paths: Callable[[str], bool] | None = None) -> None:
        """The session's connection drops while its next write (on a path `paths` accepts) is in
        flight and is re-established within the session timeout: the write is applied but answers
        ConnectionLossError, the session, its ephemerals and its armed watches survive, and its
        listeners hear SUSPENDED then CONNECTED (queued like watch events). Requests are answered one
        at a time here, so the one in flight is the only one that fails; Kafka's
        `retryRequestsUntilConnected` resends it (a request that had not reached the server would
        simply be applied by the resend: no fault to inject)."""
        with self._lock:
            session = self._session(session_id)
            session.lost_acks += 1
            session.lost_ack_paths = paths
            session.drop_connection = True

    def pending_lost_acks(self, session_id: int) -> int:
        """How many armed lost acknowledgements the session has not spent yet."""
        with self._lock:
            return self._session(session_id).lost_acks

    def cancel_lost_acks(self, session_id: int) -> None:
        with self._lock:
            session = self._session(session_id)
            session.lost_acks, session.lost_ack_paths, session.drop_connection = 0, None, False

    # ---- delivery ----------------------------------------------------------------------------

    def pending_watch_events(self) -> tuple[PendingEvent, ...]:
        """The deliverable notifications: the head of each client's queue, by session id."""
        with self._lock:
            return tuple(q[0].pending for _, q in sorted(self._queues.items()) if q)

    def queued_watch_events(self, session_id: int) -> tuple[PendingEvent, ...]:
        """All undelivered notifications of one client, in delivery order."""
        with self._lock:
            return tuple(n.pending for n in self._queues.get(session_id, ()))

    def deliver_watch_event(self, pending: PendingEvent) -> None:
        """Deliver one notification, which must be the head of its client's queue."""
        with self._lock:
            queue = self._queues.get(pending.session_id)
            if not queue or queue[0].pending != pending:
                raise ValueError(f"{pending} is not deliverable now (not the head of its client's queue)")
            notification = queue.popleft()
        self._invoke(notification)

    def deliver_all_watch_events(self) -> int:
        """Deliver every queued notification in global order (also what IMMEDIATE does); return how many."""
        delivered = 0
        while (notification := self._pop_oldest()) is not None:
            self._invoke(notification)
            delivered += 1
        return delivered

    # ---- inspection (for tests and the abstraction function) ----------------------------------

    @property
    def zxid(self) -> int:
        """The zxid of the last transaction."""
        with self._lock:
            return self._zxid

    def snapshot(self) -> dict[str, tuple[bytes, Stat]]:
        """The whole tree, path -> (data, Stat), root included."""
        with self._lock:
            return {path: (node.data, node.stat) for path, node in self._nodes.items()}

    def armed_watches(self) -> frozenset[tuple[int, str, WatchKind]]:
        """Every armed watch as (session id, path, kind)."""
        with self._lock:
            return frozenset((sid, path, kind) for kind, table in self._watches.items()
                             for path, by_session in table.items() for sid in by_session)

    def live_sessions(self) -> frozenset[int]:
        with self._lock:
            return frozenset(s.id for s in self._sessions.values() if s.state == "live")

    # ---- what the clients call ---------------------------------------------------------------

    def _read(self, session_id: int, path: str, kind: WatchKind, watch: WatchCallback | None,
              arm_if_missing: bool) -> _Znode | None:
        try:
            with self._lock:
                self._check_live(session_id)
                validate_path(path)
                node = self._nodes.get(path)
                if watch is not None and (node is not None or arm_if_missing):
                    self._watches[kind].setdefault(path, {}).setdefault(session_id, {})[watch] = None
                return node
        finally:
            self._after_operation()

    def _write(self, session_id: int, ops: Sequence[Op], *, in_multi: bool) -> tuple[list[OpResult], int]:
        """Apply `ops` as one transaction; return (per-op results, the transaction's zxid)."""
        try:
            with self._lock:
                session = self._check_live(session_id)
                txn = _Txn(self._nodes, self._zxid + 1, session_id)
                outcome: list[OpResult] | ZooKeeperError
                try:
                    outcome = txn.apply_all(ops, in_multi)
                except ZooKeeperError as error:
                    outcome = error
                else:
                    self._nodes, self._zxid = txn.nodes, txn.zxid
                    self._fire(txn.triggers)
                if session.lost_acks and (session.lost_ack_paths is None
                                          or any(session.lost_ack_paths(op.path) for op in ops)):
                    session.lost_acks -= 1
                    outcome = ConnectionLossError("the reply to this write was lost (injected fault)")
                    if session.drop_connection:
                        session.drop_connection = False
                        listeners = tuple(session.listeners)
                        self._enqueue(session.id, SessionState.SUSPENDED, listeners)
                        self._enqueue(session.id, SessionState.CONNECTED, listeners)
        finally:
            self._after_operation()
        if isinstance(outcome, ZooKeeperError):
            raise outcome
        return outcome, txn.zxid

    def _add_listener(self, session_id: int, listener: SessionListener) -> None:
        with self._lock:
            self._session(session_id).listeners.append(listener)

    def _close(self, session_id: int) -> None:
        with self._lock:
            session = self._session(session_id)
            if session.state == "live":
                self._end_session(session, "closed")
            session.state = "closed"
            self._queues[session_id].clear()   # an undelivered expiry notice, if it had expired
        self._after_operation()

    # ---- internals ---------------------------------------------------------------------------

    def _session(self, session_id: int) -> _Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise ValueError(f"no session {session_id} on this server") from None

    def _check_live(self, session_id: int) -> _Session:
        session = self._session(session_id)
        if session.state == "closed":
            raise ConnectionClosedError("this client was closed")
        if session.state == "expired":
            # The client talks to the server and learns of the expiry: its listeners hear it too.
            self._notice_expiry(session)
            raise SessionExpiredError(f"session {session_id} has expired")
        return session

    def _end_session(self, session: _Session, state: str) -> None:
        """closeSession: one transaction deleting the session's ephemerals; drop its watches and events."""
        session.state = state
        for table in self._watches.values():
            for by_session in table.values():
                by_session.pop(session.id, None)
        self._queues[session.id].clear()
        txn = _Txn(self._nodes, self._zxid + 1, session.id)
        for path in sorted(p for p, n in self._nodes.items() if n.stat.ephemeral_owner == session.id):
            txn.delete(path, ANY_VERSION)
        self._nodes = txn.nodes
        self._zxid = txn.zxid
        self._fire(txn.triggers)

    def _notice_expiry(self, session: _Session) -> None:
        if not session.noticed:
            session.noticed = True
            self._enqueue(session.id, SessionState.EXPIRED, tuple(session.listeners))

    def _fire(self, triggers: Iterable[tuple[str, EventType]]) -> None:
        """Turn a transaction's triggers into one notification per (trigger, watching client)."""
        data, child = self._watches[WatchKind.DATA], self._watches[WatchKind.CHILD]
        for path, event_type in triggers:
            if event_type is EventType.CHILD:
                tables = [child]
            elif event_type is EventType.DELETED:
                tables = [data, child]
            else:
                tables = [data]
            callbacks: dict[int, dict[Callable, None]] = {}
            for table in tables:
                for sid, cbs in table.pop(path, {}).items():
                    callbacks.setdefault(sid, {}).update(cbs)
            for sid, cbs in sorted(callbacks.items()):
                self._enqueue(sid, WatchedEvent(event_type, path), tuple(cbs))

    def _enqueue(self, session_id: int, event: WatchedEvent | SessionState, callbacks: tuple) -> None:
        self._queues[session_id].append(
            _Notification(PendingEvent(self._next_seq, session_id, event), callbacks))
        self._next_seq += 1

    def _pop_oldest(self) -> _Notification | None:
        with self._lock:
            heads = [q for q in self._queues.values() if q]
            if not heads:
                return None
            return min(heads, key=lambda q: q[0].pending.seq).popleft()

    def _after_operation(self) -> None:
        """IMMEDIATE: drain every queue on this thread, unless another thread (or an outer frame of
        this one, when a callback calls the server) is already draining: it will deliver ours too,
        in order."""
        if self.delivery is not Delivery.IMMEDIATE:
            return
        with self._lock:
            if self._draining:
                return
            self._draining = True
        try:
            while (notification := self._pop_oldest()) is not None:
                try:
                    self._invoke(notification)
                except KafkaException:   # a Python error in a callback is a bug: it reaches the writer
                    log.exception("watch callback failed for %s", notification.pending)
        finally:
            with self._lock:
                self._draining = False

    @staticmethod
    def _invoke(notification: _Notification) -> None:
        for callback in notification.callbacks:
            callback(notification.pending.event)


class MemoryZooKeeper:
    """One session on a `MemoryZooKeeperServer`; implements the `ZooKeeper` protocol."""

    def __init__(self, server: MemoryZooKeeperServer, session_id: int):
        self.server = server
        self._session_id = session_id

    def __repr__(self) -> str:
        return f"MemoryZooKeeper(session_id={self._session_id})"

    @property
    def session_id(self) -> int:
        return self._session_id

    def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
               sequential: bool = False) -> tuple[str, int]:
        results, zxid = self.server._write(self._session_id, [CreateOp(path, data, ephemeral, sequential)],
                                           in_multi=False)
        created = results[0]
        assert isinstance(created, str)
        return created, zxid

    def get_data(self, path: str, watch: WatchCallback | None = None) -> tuple[bytes, Stat]:
        node = self.server._read(self._session_id, path, WatchKind.DATA, watch, arm_if_missing=False)
        if node is None:
            raise NoNodeError(path=path)
        return node.data, node.stat

    def exists(self, path: str, watch: WatchCallback | None = None) -> Stat | None:
        node = self.server._read(self._session_id, path, WatchKind.DATA, watch, arm_if_missing=True)
        return None if node is None else node.stat

    def get_children(self, path: str, watch: WatchCallback | None = None) -> list[str]:
        node = self.server._read(self._session_id, path, WatchKind.CHILD, watch, arm_if_missing=False)
        if node is None:
            raise NoNodeError(path=path)
        return sorted(node.children)

    def set_data(self, path: str, data: bytes, version: int = ANY_VERSION) -> Stat:
        stat = self.server._write(self._session_id, [SetDataOp(path, data, version)], in_multi=False)[0][0]
        assert isinstance(stat, Stat)
        return stat

    def delete(self, path: str, version: int = ANY_VERSION) -> None:
        self.server._write(self._session_id, [DeleteOp(path, version)], in_multi=False)

    def multi(self, ops: Sequence[Op]) -> list[OpResult]:
        return self.server._write(self._session_id, list(ops), in_multi=True)[0]

    def add_session_listener(self, listener: SessionListener) -> None:
        self.server._add_listener(self._session_id, listener)

    def close(self) -> None:
        self.server._close(self._session_id)
