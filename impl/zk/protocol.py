"""The `ZooKeeper` protocol: the one interface the controller code talks to ZooKeeper through.

One object is one client *session* (a ZooKeeper handle in Java terms). The operations and their
semantics are ZooKeeper's own (from
`apache/zookeeper:zookeeper-docs/src/main/resources/markdown/zookeeperProgrammers.md`); names are
close to kazoo's so that the real backend is a thin mapping:

* `create(path, data, ephemeral=, sequential=) -> (path, czxid)`. An ephemeral znode lives as long
  as the session that created it. A sequential create appends a 10-digit zero-padded counter kept
  per parent. The czxid (the zxid of the creating transaction) is globally ordered; Kafka uses it as
  the broker epoch.
* `get_data`, `exists`, `get_children` take an optional one-shot `watch` callback. `get_data` and
  `exists` arm a *data* watch (`exists` also on a znode that does not exist yet); `get_children`
  arms a *child* watch. A create fires the data watch of the znode (CREATED) and the child watch of
  its parent (CHILD); a delete fires the znode's data and child watches (DELETED) and the parent's
  child watch (CHILD); a set fires the data watch (CHANGED). A watch fires at most once; changes
  between the trigger and the next read that re-arms it are coalesced. Events carry no data.
* `set_data(path, data, version)` and `delete(path, version)` are conditional on the znode's
  version (`ANY_VERSION` = -1 matches any) and raise `BadVersionError` on a mismatch.
* `multi(ops)` applies `CheckOp`/`CreateOp`/`SetDataOp`/`DeleteOp` all-or-nothing. On failure it
  raises the error of the first failing op, with `error.op_index` set to that op's position.
* Session state changes (a session the server expired, a connection lost and re-established) reach
  the callbacks given to `add_session_listener`. An expired session's later calls raise
  `SessionExpiredError`; the client never silently opens a new session (the owner does that, as
  Kafka's `ZooKeeperClient.reinitialize` does).

Two implementations: `kcm.impl.zk.memory` (embedded, with fault injection and a steppable watch
delivery) and `kcm.impl.zk.kazoo_backend` (a real server through kazoo).

Deliberately left out: ACLs (Kafka's controller uses the open ACL unless secure), ctime/mtime,
pzxid and data length in `Stat`, async variants, and ZooKeeper 3.5+ features Kafka 2.6 does not use
(containers, TTL nodes, persistent watches).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

from kcm.impl.kafka_exception import KafkaException

ANY_VERSION = -1
"""The expected version that matches any version (ZooKeeper's -1, Kafka's `ZkVersion.MatchAnyVersion`)."""

SEQUENCE_DIGITS = 10
"""Sequential znode names end in a counter zero-padded to this many digits (`%010d`)."""


# --------------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, slots=True)
class Stat:
    """A znode's metadata: the fields the controller reads.

    `version` counts data changes, `cversion` counts child creations and deletions, `czxid`/`mzxid`
    are the zxids of the create and of the last data change, `ephemeral_owner` is the owning
    session id (0 for a persistent znode).
    """

    version: int
    cversion: int
    czxid: int
    mzxid: int
    ephemeral_owner: int = 0


class EventType(Enum):
    """The kind of change a watch reports (ZooKeeper's `Watcher.Event.EventType`)."""

    CREATED = "CREATED"    # NodeCreated: data watch (armed by exists on a missing znode)
    DELETED = "DELETED"    # NodeDeleted: data and child watches of the deleted znode
    CHANGED = "CHANGED"    # NodeDataChanged: data watch
    CHILD = "CHILD"        # NodeChildrenChanged: child watch of the parent


@dataclass(frozen=True, slots=True)
class WatchedEvent:
    """What a one-shot watch callback receives: the change kind and the watched path, no data."""

    type: EventType
    path: str


class SessionState(Enum):
    """What a session listener receives.

    CONNECTED: (re)connected to the same session. SUSPENDED: the connection is lost; the session may
    survive if the client reconnects within the timeout ("disconnected is not expired"). EXPIRED:
    the server ended the session; its ephemeral znodes are gone and the client must open a new one.
    """

    CONNECTED = "CONNECTED"
    SUSPENDED = "SUSPENDED"
    EXPIRED = "EXPIRED"


WatchCallback = Callable[[WatchedEvent], None]
SessionListener = Callable[[SessionState], None]


# --------------------------------------------------------------------------------------------------
# Multi operations (`ZooKeeper.multi`, org.apache.zookeeper.Op)


@dataclass(frozen=True, slots=True)
class CheckOp:
    """Fails the transaction unless `path` exists with `version` (-1: exists at all)."""

    path: str
    version: int


@dataclass(frozen=True, slots=True)
class CreateOp:
    """Creates `path`; in a multi's results it stands for the created path (sequential names differ)."""

    path: str
    data: bytes = b""
    ephemeral: bool = False
    sequential: bool = False


@dataclass(frozen=True, slots=True)
class SetDataOp:
    """Sets `path`'s data if its version is `version`; its result is the new `Stat`."""

    path: str
    data: bytes
    version: int = ANY_VERSION


@dataclass(frozen=True, slots=True)
class DeleteOp:
    """Deletes `path` (which must have no children) if its version is `version`."""

    path: str
    version: int = ANY_VERSION


Op = CheckOp | CreateOp | SetDataOp | DeleteOp
OpResult = str | Stat | None
"""Per op of a successful multi: CreateOp -> created path, SetDataOp -> Stat, Check/Delete -> None."""


# --------------------------------------------------------------------------------------------------
# Errors (kazoo's names, which are ZooKeeper's KeeperException codes)


class ZooKeeperError(KafkaException):
    """Any error from the ZooKeeper layer. `op_index` is set when the error failed a `multi`."""

    def __init__(self, message: str = "", *, path: str | None = None, op_index: int | None = None):
        super().__init__(message or self.__class__.__name__ + (f": {path}" if path else ""))
        self.path = path
        self.op_index = op_index


class NoNodeError(ZooKeeperError):
    """NONODE: the znode (or, for a create, its parent) does not exist."""


class NodeExistsError(ZooKeeperError):
    """NODEEXISTS: a create hit an existing znode."""


class BadVersionError(ZooKeeperError):
    """BADVERSION: a conditional write or check expected another version."""


class NotEmptyError(ZooKeeperError):
    """NOTEMPTY: a delete of a znode that has children."""


class NoChildrenForEphemeralsError(ZooKeeperError):
    """NOCHILDRENFOREPHEMERALS: ephemeral znodes cannot have children."""


class BadArgumentsError(ZooKeeperError):
    """BADARGUMENTS: a malformed path (ZooKeeper validates paths client-side and server-side)."""


class SessionExpiredError(ZooKeeperError):
    """SESSIONEXPIRED: this client's session is over; nothing it sends is applied any more."""


class ConnectionLossError(ZooKeeperError):
    """CONNECTIONLOSS: the reply did not arrive; the request may or may not have been applied."""


class ConnectionClosedError(ZooKeeperError):
    """The client was closed by its owner."""


class ZooKeeperUnavailable(ZooKeeperError):
    """No session could be opened within the connection timeout (the message names host:port)."""


# --------------------------------------------------------------------------------------------------
# The protocol


@runtime_checkable
class ZooKeeper(Protocol):
    """One ZooKeeper client session. Every method may raise `SessionExpiredError` or
    `ConnectionLossError` in addition to the errors listed."""

    @property
    def session_id(self) -> int:
        """The server-assigned session id (the `ephemeral_owner` of this session's znodes)."""
        ...

    def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
               sequential: bool = False) -> tuple[str, int]:
        """Create a znode; return (created path, czxid). NoNodeError (no parent), NodeExistsError,
        NoChildrenForEphemeralsError."""
        ...

    def get_data(self, path: str, watch: WatchCallback | None = None) -> tuple[bytes, Stat]:
        """Read data and Stat, optionally arming a data watch. NoNodeError (no watch is armed then)."""
        ...

    def exists(self, path: str, watch: WatchCallback | None = None) -> Stat | None:
        """Stat or None; the optional data watch is armed either way (CREATED fires for a missing znode)."""
        ...

    def get_children(self, path: str, watch: WatchCallback | None = None) -> list[str]:
        """Child names, sorted; optionally arms a child watch. NoNodeError (no watch is armed then)."""
        ...

    def set_data(self, path: str, data: bytes, version: int = ANY_VERSION) -> Stat:
        """Conditional set; returns the new Stat. NoNodeError, BadVersionError."""
        ...

    def delete(self, path: str, version: int = ANY_VERSION) -> None:
        """Conditional delete. NoNodeError, BadVersionError, NotEmptyError."""
        ...

    def multi(self, ops: Sequence[Op]) -> list[OpResult]:
        """Apply all ops or none; on failure raise the first failing op's error (with `op_index`)."""
        ...

    def add_session_listener(self, listener: SessionListener) -> None:
        """Be told of session state changes (see `SessionState`)."""
        ...

    def close(self) -> None:
        """End the session (its ephemeral znodes are deleted); later calls raise ConnectionClosedError."""
        ...


def parent_of(path: str) -> str:
    """The parent path of a znode path ('/a/b' -> '/a', '/a' -> '/')."""
    parent = path.rsplit("/", 1)[0]
    return parent or "/"


def validate_path(path: str, *, sequential: bool = False) -> None:
    """ZooKeeper's `PathUtils.validatePath`, reduced to the rules a well-behaved caller can break:
    absolute, no empty or relative segment, no trailing slash (a sequential create may end in '/')."""
    check = path + "0" if sequential else path
    if not check.startswith("/"):
        raise BadArgumentsError(f"path must be absolute: {path!r}", path=path)
    if check == "/":
        return
    if check.endswith("/") or any(seg in ("", ".", "..") for seg in check[1:].split("/")):
        raise BadArgumentsError(f"invalid path: {path!r}", path=path)
