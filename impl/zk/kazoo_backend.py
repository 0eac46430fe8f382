"""The `ZooKeeper` protocol over a real ZooKeeper server, through kazoo's `KazooClient`.

`KazooZooKeeper.connect("host:port[,host:port][/chroot]", timeout=...)` opens one session or raises
`ZooKeeperUnavailable` within `timeout`, with a one-line message naming the servers. After that the
mapping is thin: kazoo's exceptions become ours, `ZnodeStat` becomes `Stat`, kazoo's transactions
implement `multi`, `create(include_data=True)` (ZooKeeper's create2) gives the czxid. Three
differences between kazoo and the protocol are bridged here:

* **One client, one session.** After an expiry kazoo quietly opens a *new* session on the same
  client object. The protocol says the expired client stays expired (the owner opens a new client,
  as Kafka's `ZooKeeperClient.reinitialize` does), so the adapter remembers its session id, answers
  `SessionExpiredError` once kazoo reports LOST or the session id changes, and stops kazoo (which
  closes any session it opened behind our back).
* **Watches.** The adapter keeps its own tables of armed callbacks, path -> callbacks, one for data
  and one for child watches, and gives kazoo a single dispatcher. That keeps ZooKeeper's
  one-notification-per-client semantics: on a delete kazoo calls its data *and* child watchers,
  here each callback is called once. kazoo also drops every watch when a connection is lost
  (the Java client re-registers them on reconnect); the adapter then wakes each dropped callback
  with the event its watch stood for (CHANGED for a data watch, CHILD for a child watch). Spurious
  wake-ups are safe because events carry no data and handlers re-read, as Kafka's do.
* **Session listeners** are called on kazoo's callback thread, in order with watch events, never on
  the connection thread (a blocking listener there would stall the connection).

`expire_session(client)` is the fault injector for a real server: it attaches a second connection
to the same session (same id and password) and closes it; the server then ends the session, deletes
its ephemerals and fires watches, exactly as on a timeout, and the original client learns of it when
its connection is dropped. The function waits until the original client has noticed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from kazoo import exceptions as kz
from kazoo.client import KazooClient, KazooState
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import Callback, ZnodeStat
from kazoo.protocol.states import EventType as KzEventType
from kcm.impl.kafka_exception import KafkaException
from kcm.impl.zk.protocol import (
    ANY_VERSION,
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
    ZooKeeperUnavailable,
)

log = logging.getLogger(__name__)

# kazoo logs every reconnect attempt; keep that out of a user's terminal unless they configure logging.
_kazoo_log = logging.getLogger(__name__ + ".kazoo")
_kazoo_log.addHandler(logging.NullHandler())

_ERRORS: dict[type[Exception], type[ZooKeeperError]] = {
    kz.NoNodeError: NoNodeError,
    kz.NodeExistsError: NodeExistsError,
    kz.BadVersionError: BadVersionError,
    kz.NotEmptyError: NotEmptyError,
    kz.NoChildrenForEphemeralsError: NoChildrenForEphemeralsError,
    kz.BadArgumentsError: BadArgumentsError,
    kz.SessionExpiredError: SessionExpiredError,
    kz.ConnectionLoss: ConnectionLossError,
    kz.ConnectionClosedError: ConnectionClosedError,
}

# Marks kazoo's callback thread once it has run one of our callbacks there: stopping kazoo joins
# that thread, so from it the stop must be handed to another thread.
_on_kazoo_callback_thread = threading.local()

_EVENTS = {KzEventType.CREATED: EventType.CREATED, KzEventType.DELETED: EventType.DELETED,
           KzEventType.CHANGED: EventType.CHANGED, KzEventType.CHILD: EventType.CHILD}


def _servers(hosts: str) -> str:
    """'h1:p1,h2:p2/chroot' -> 'h1:p1,h2:p2', for messages."""
    return hosts.split("/", 1)[0]


def _stat(stat: ZnodeStat) -> Stat:
    return Stat(version=stat.version, cversion=stat.cversion, czxid=stat.czxid, mzxid=stat.mzxid,
                ephemeral_owner=stat.ephemeralOwner)


def _translate(error: Exception, op_index: int | None = None) -> ZooKeeperError:
    for kazoo_type, ours in _ERRORS.items():
        if isinstance(error, kazoo_type):
            return ours(str(error) or ours.__name__, op_index=op_index)
    return ZooKeeperError(f"{type(error).__name__}: {error}", op_index=op_index)


class KazooZooKeeper:
    """One session on a real ZooKeeper; implements the `ZooKeeper` protocol."""

    def __init__(self, client: KazooClient, hosts: str):
        """Wrap a started client; use `connect`."""
        self._client = client
        self.hosts = hosts
        self._session_id: int = client.client_id[0]
        self._lock = threading.Lock()
        self._expired = False
        self._closed = False
        #: A Python error raised by a watch callback (a bug of the caller); the cluster fails on it.
        self.failure: BaseException | None = None
        self._stop_lock = threading.Lock()
        self._kazoo_down = False
        self._listeners: list[SessionListener] = []
        self._watches: dict[str, dict[str, dict[Callable, None]]] = {"data": {}, "child": {}}
        self._last_event: object = None
        #: How long `wait_until_connected` waits by default (set by `connect`).
        self.connection_timeout = 5.0
        client.add_listener(self._on_state)

    @classmethod
    def connect(cls, hosts: str, *, timeout: float = 5.0, session_timeout: float = 10.0) -> KazooZooKeeper:
        """Open a session on `hosts` ('host:port,...[/chroot]'), or raise ZooKeeperUnavailable.

        After a connection loss kazoo keeps trying to reconnect (to the same session) for as long
        as it takes, as ZooKeeper's Java client does; `wait_until_connected` bounds how long a
        caller waits for it (`timeout`, the connection timeout)."""
        client = KazooClient(hosts=hosts, timeout=session_timeout, logger=_kazoo_log,
                             connection_retry=dict(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5))
        try:
            client.start(timeout=timeout)
        except KazooTimeoutError:
            # kazoo.start has already stopped and closed the client.
            raise ZooKeeperUnavailable(
                f"ZooKeeper at {_servers(hosts)} is unreachable: no session within {timeout:g} s") from None
        zk = cls(client, hosts)
        zk.connection_timeout = timeout
        return zk

    def wait_until_connected(self, timeout: float | None = None) -> None:
        """`ZooKeeperClient.waitUntilConnected`: return once the connection is back (or the session
        is known to be over: the next call raises SessionExpiredError); raise ZooKeeperUnavailable
        if it is not back within `timeout` (default: the connection timeout)."""
        limit = self.connection_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not (self._closed or self._expired or self._client.connected):
            if time.monotonic() > deadline:
                raise ZooKeeperUnavailable(
                    f"ZooKeeper at {_servers(self.hosts)} is unreachable: no connection within {limit:g} s")
            time.sleep(0.02)

    def __repr__(self) -> str:
        return f"KazooZooKeeper({self.hosts!r}, session_id={self._session_id:#x})"

    @property
    def session_id(self) -> int:
        return self._session_id

    @property
    def session_password(self) -> bytes:
        """The session's password (with the id, what a second connection needs to attach to it)."""
        return self._client._session_passwd

    # ---- the protocol ------------------------------------------------------------------------

    def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
               sequential: bool = False) -> tuple[str, int]:
        with self._call():
            created, stat = self._client.create(path, data, ephemeral=ephemeral, sequence=sequential,
                                                include_data=True)
        return created, stat.czxid

    def get_data(self, path: str, watch: WatchCallback | None = None) -> tuple[bytes, Stat]:
        with self._call(), self._arming("data", path, watch, on_missing=False):
            data, stat = self._client.get(path, watch=self._watcher(watch))
        return data or b"", _stat(stat)

    def exists(self, path: str, watch: WatchCallback | None = None) -> Stat | None:
        with self._call(), self._arming("data", path, watch, on_missing=True):
            stat = self._client.exists(path, watch=self._watcher(watch))
        return None if stat is None else _stat(stat)

    def get_children(self, path: str, watch: WatchCallback | None = None) -> list[str]:
        with self._call(), self._arming("child", path, watch, on_missing=False):
            children = self._client.get_children(path, watch=self._watcher(watch))
        return sorted(children)

    def set_data(self, path: str, data: bytes, version: int = ANY_VERSION) -> Stat:
        with self._call():
            return _stat(self._client.set(path, data, version=version))

    def delete(self, path: str, version: int = ANY_VERSION) -> None:
        with self._call():
            self._client.delete(path, version=version)

    def multi(self, ops: Sequence[Op]) -> list[OpResult]:
        with self._call():
            tx = self._client.transaction()
            for op in ops:
                if isinstance(op, CheckOp):
                    tx.check(op.path, op.version)
                elif isinstance(op, CreateOp):
                    tx.create(op.path, op.data, ephemeral=op.ephemeral, sequence=op.sequential)
                elif isinstance(op, SetDataOp):
                    tx.set_data(op.path, op.data, version=op.version)
                elif isinstance(op, DeleteOp):
                    tx.delete(op.path, version=op.version)
                else:
                    raise TypeError(f"not a ZooKeeper op: {op!r}")
            results = tx.commit()
        # A failed multi answers an error per op: RolledBack before the culprit, RuntimeInconsistency after.
        for index, result in enumerate(results):
            if isinstance(result, Exception) and not isinstance(
                    result, (kz.RolledBackError, kz.RuntimeInconsistency)):
                raise _translate(result, op_index=index)
        return [_stat(r) if isinstance(r, ZnodeStat) else (r if isinstance(r, str) else None)
                for r in results]

    def add_session_listener(self, listener: SessionListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if getattr(_on_kazoo_callback_thread, "marked", False):
            threading.Thread(target=self._shutdown_kazoo, name="kazoo-close", daemon=True).start()
        else:
            self._shutdown_kazoo()

    # ---- internals ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _call(self) -> Iterator[None]:
        """Check that we are still on our own session, and translate kazoo's errors.

        kazoo queues a request made while it reconnects and answers it only once connected, for
        as long as that takes; so a call first waits for the connection, no longer than the
        connection timeout (ZooKeeperUnavailable), as a Kafka broker's `waitUntilConnected` would
        (bounded here so that a ZooKeeper gone for good ends a run instead of hanging it)."""
        self._raise_if_gone()
        if not self._client.connected:
            self.wait_until_connected()
            self._raise_if_gone()
        try:
            yield
        except kz.SessionExpiredError:
            self._mark_expired()
            raise SessionExpiredError(f"session {self._session_id:#x} has expired") from None
        except kz.KazooException as error:
            raise _translate(error) from None
        # A reply that raced with an expiry may have come from the session kazoo opened after it.
        self._raise_if_gone()

    def _raise_if_gone(self) -> None:
        if self._closed:
            raise ConnectionClosedError("this client was closed")
        if self._expired or self._kazoo_session() != self._session_id:
            self._mark_expired()
            raise SessionExpiredError(f"session {self._session_id:#x} has expired")

    def _kazoo_session(self) -> int | None:
        # kazoo's `client_id` is None while disconnected; its private `_session_id` is the session
        # it holds or is reconnecting to (None once it has dropped an expired one).
        return self._client._session_id

    def _watcher(self, watch: WatchCallback | None) -> Callable | None:
        # One bound method for every watch: kazoo keeps a set per path, so it is registered once.
        return None if watch is None else self._dispatch

    @contextlib.contextmanager
    def _arming(self, kind: str, path: str, watch: WatchCallback | None, on_missing: bool) -> Iterator[None]:
        """Record `watch` as armed on `path` before the read (the event may beat the reply), and
        forget it if the read fails in a way that arms nothing on the server."""
        if watch is None:
            yield
            return
        with self._lock:
            armed = self._watches[kind].setdefault(path, {})
            already = watch in armed      # by an earlier read (say an exists on a missing znode)
            armed[watch] = None
        try:
            yield
        except kz.NoNodeError:
            if not on_missing and not already:
                with self._lock:
                    self._watches[kind].get(path, {}).pop(watch, None)
            raise

    def _dispatch(self, event) -> None:
        """kazoo's single watcher, on kazoo's callback thread."""
        _on_kazoo_callback_thread.marked = True
        with self._lock:
            if event is self._last_event:   # the same DELETED, once from each kazoo watcher table
                return
            self._last_event = event
            if event.type not in _EVENTS:
                # kazoo dropped every watch on a connection loss: wake each one (see module doc).
                fired = [(WatchedEvent(EventType.CHANGED if kind == "data" else EventType.CHILD, path), cbs)
                         for kind, table in self._watches.items() for path, cbs in table.items()]
                self._watches = {"data": {}, "child": {}}
            else:
                ours = WatchedEvent(_EVENTS[event.type], event.path)
                kinds = {EventType.CHILD: ("child",), EventType.DELETED: ("data", "child")}.get(
                    ours.type, ("data",))
                callbacks: dict[Callable, None] = {}
                for kind in kinds:
                    callbacks.update(self._watches[kind].pop(event.path, {}))
                fired = [(ours, callbacks)]
            if self._expired or self._closed:
                return
        for ours, callbacks in fired:
            for callback in callbacks:
                try:
                    callback(ours)
                except KafkaException:
                    log.exception("watch callback failed for %s", ours)
                except Exception as error:   # a bug of this implementation: the run fails on it
                    log.exception("implementation bug in a watch callback for %s", ours)
                    self.failure = error

    def _on_state(self, state: str) -> None:
        """kazoo's connection listener, on kazoo's connection thread: never block here."""
        if self._closed or self._expired:
            return
        if state == KazooState.LOST:
            self._mark_expired()
            return
        if state == KazooState.CONNECTED and self._kazoo_session() != self._session_id:
            return   # a new session kazoo opened after ours expired: not ours to report
        self._notify(SessionState.CONNECTED if state == KazooState.CONNECTED else SessionState.SUSPENDED)

    def _mark_expired(self) -> None:
        with self._lock:
            if self._expired:
                return
            self._expired = True
            self._watches = {"data": {}, "child": {}}
        self._notify(SessionState.EXPIRED)
        # kazoo would carry on with a fresh session; stop it off this (possibly kazoo's) thread.
        threading.Thread(target=self._shutdown_kazoo, name="kazoo-stop", daemon=True).start()

    def _shutdown_kazoo(self) -> None:
        """Stop and close kazoo once; concurrent callers wait for the first (kazoo's stop and close
        are not safe to interleave)."""
        with self._stop_lock:
            if not self._kazoo_down:
                self._client.stop()
                self._client.close()
                self._kazoo_down = True

    def _notify(self, state: SessionState) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            self._client.handler.dispatch_callback(Callback("session", self._run_listener, (listener, state)))

    @staticmethod
    def _run_listener(listener: SessionListener, state: SessionState) -> None:
        _on_kazoo_callback_thread.marked = True
        listener(state)


def expire_session(zk: KazooZooKeeper, *, timeout: float = 10.0) -> None:
    """Make the server expire `zk`'s session now (see the module docstring) and wait until `zk` knows.

    Raises ZooKeeperError if `zk` has not noticed within `timeout`.
    """
    noticed = threading.Event()
    zk.add_session_listener(lambda state: noticed.set() if state is SessionState.EXPIRED else None)
    if zk._expired:
        return
    twin = KazooClient(hosts=zk.hosts, client_id=(zk.session_id, zk.session_password), timeout=timeout,
                       logger=_kazoo_log)
    try:
        twin.start(timeout=timeout)
    except KazooTimeoutError:
        raise ZooKeeperUnavailable(f"ZooKeeper at {_servers(zk.hosts)} is unreachable") from None
    twin.stop()    # closeSession: the server ends the session and deletes its ephemerals
    twin.close()
    if not noticed.wait(timeout):
        raise ZooKeeperError(f"session {zk.session_id:#x} was closed but its client did not notice "
                             f"within {timeout:g} s")
