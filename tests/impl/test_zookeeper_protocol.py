"""ZooKeeper semantics the controller relies on, on the embedded server and on a
real ZooKeeper: the same test, the same expected values. Where the embedded server could diverge
from the real one (sequential numbering, multi seeing its own earlier ops, one DELETED per client),
the real server is the oracle."""

from __future__ import annotations

import pytest
from kcm.impl.zk.protocol import (
    ANY_VERSION,
    BadVersionError,
    CheckOp,
    ConnectionClosedError,
    CreateOp,
    DeleteOp,
    EventType,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    SessionExpiredError,
    SessionState,
    SetDataOp,
    WatchedEvent,
    ZooKeeper,
)

CREATED, DELETED, CHANGED, CHILD = EventType.CREATED, EventType.DELETED, EventType.CHANGED, EventType.CHILD


def test_both_backends_implement_the_protocol(backend):
    assert isinstance(backend.connect(), ZooKeeper)


def test_create_returns_the_path_and_czxids_grow_across_sessions(backend):
    zk, other = backend.connect(), backend.connect()
    path, czxid_a = zk.create("/a", b"1")
    _, czxid_b = other.create("/b")
    _, czxid_c = zk.create("/c")
    assert path == "/a"
    assert czxid_a < czxid_b < czxid_c
    data, stat = other.get_data("/a")
    assert (data, stat.version, stat.czxid, stat.mzxid, stat.ephemeral_owner) == (b"1", 0, czxid_a, czxid_a, 0)
    changed = other.set_data("/a", b"2")
    assert (changed.version, changed.czxid) == (1, czxid_a)
    assert changed.mzxid > czxid_c


def test_ephemeral_znodes_go_with_their_expired_session(backend, make_recorder):
    owner, observer = backend.connect(), backend.connect()
    owner.create("/brokers")
    owner.create("/brokers/1", b"broker", ephemeral=True)
    assert observer.exists("/brokers/1").ephemeral_owner == owner.session_id
    data_watch, child_watch, listener = make_recorder(), make_recorder(), make_recorder()
    observer.get_data("/brokers/1", data_watch)
    observer.get_children("/brokers", child_watch)
    owner.add_session_listener(listener)

    backend.expire(owner)
    backend.settle(observer)

    assert observer.exists("/brokers/1") is None
    assert observer.exists("/brokers") is not None          # persistent znodes stay
    assert data_watch.events == [WatchedEvent(DELETED, "/brokers/1")]
    assert child_watch.events == [WatchedEvent(CHILD, "/brokers")]
    assert listener.events[-1] is SessionState.EXPIRED
    with pytest.raises(SessionExpiredError):
        owner.exists("/brokers")
    with pytest.raises(SessionExpiredError):
        owner.create("/brokers/1", ephemeral=True)
    assert observer.exists("/brokers/1") is None


def test_closing_a_session_deletes_its_ephemerals(backend):
    owner, observer = backend.connect(), backend.connect()
    owner.create("/e", ephemeral=True)
    owner.close()
    assert observer.exists("/e") is None
    with pytest.raises(ConnectionClosedError):
        owner.exists("/e")


def test_a_data_watch_fires_once_and_coalesces_later_changes(backend, make_recorder):
    writer, reader = backend.connect(), backend.connect()
    writer.create("/n", b"0")
    watch = make_recorder()
    reader.get_data("/n", watch)

    writer.set_data("/n", b"1")
    writer.set_data("/n", b"2")
    backend.settle(reader)
    assert watch.events == [WatchedEvent(CHANGED, "/n")]

    assert reader.get_data("/n", watch)[0] == b"2"       # the re-read re-arms
    writer.set_data("/n", b"3")
    writer.set_data("/n", b"4")
    backend.settle(reader)
    assert watch.events == [WatchedEvent(CHANGED, "/n")] * 2


def test_exists_watches_a_missing_znode_until_it_is_created(backend, make_recorder):
    writer, reader = backend.connect(), backend.connect()
    watch = make_recorder()
    assert reader.exists("/later", watch) is None
    writer.create("/later")
    writer.delete("/later")
    backend.settle(reader)
    assert watch.events == [WatchedEvent(CREATED, "/later")]


def test_get_data_of_a_missing_znode_arms_no_watch(backend, make_recorder):
    writer, reader = backend.connect(), backend.connect()
    watch = make_recorder()
    with pytest.raises(NoNodeError):
        reader.get_data("/missing", watch)
    writer.create("/missing")
    backend.settle(reader)
    assert watch.events == []


def test_a_child_watch_coalesces_and_ignores_data_changes(backend, make_recorder):
    writer, reader = backend.connect(), backend.connect()
    writer.create("/p")
    watch = make_recorder()
    assert reader.get_children("/p", watch) == []
    writer.create("/p/c")
    writer.delete("/p/c")                                 # back to the same child list
    backend.settle(reader)
    assert watch.events == [WatchedEvent(CHILD, "/p")]

    reader.get_children("/p", watch)
    writer.set_data("/p", b"data")                        # not a child change
    backend.settle(reader)
    assert watch.events == [WatchedEvent(CHILD, "/p")]


def test_a_delete_fires_the_data_and_child_watches_once_and_the_parents_child_watch(backend, make_recorder):
    writer, reader = backend.connect(), backend.connect()
    writer.create("/p")
    writer.create("/p/c")
    watch, parent_watch = make_recorder(), make_recorder()
    reader.get_data("/p/c", watch)
    reader.get_children("/p/c", watch)                    # the same callback, both tables
    reader.get_children("/p", parent_watch)
    writer.delete("/p/c")
    backend.settle(reader)
    assert watch.events == [WatchedEvent(DELETED, "/p/c")]
    assert parent_watch.events == [WatchedEvent(CHILD, "/p")]


def test_a_stale_conditional_write_gets_bad_version(backend):
    a, b = backend.connect(), backend.connect()
    a.create("/s", b"0")
    _, seen = b.get_data("/s")
    assert a.set_data("/s", b"1", version=seen.version).version == 1
    with pytest.raises(BadVersionError):
        b.set_data("/s", b"stale", version=seen.version)
    with pytest.raises(BadVersionError):
        b.delete("/s", version=seen.version)
    data, stat = a.get_data("/s")
    assert (data, stat.version) == (b"1", 1)
    assert b.set_data("/s", b"any", ANY_VERSION).version == 2
    b.delete("/s", version=2)
    assert a.exists("/s") is None


def test_multi_is_all_or_nothing_and_sees_its_own_earlier_ops(backend):
    zk = backend.connect()
    zk.create("/m", b"0")
    with pytest.raises(BadVersionError) as failed:
        # The set makes /m version 1, so the check on version 0 fails: nothing is applied.
        zk.multi([CreateOp("/m/a"), SetDataOp("/m", b"1"), CheckOp("/m", 0)])
    assert failed.value.op_index == 2
    assert zk.exists("/m/a") is None
    assert zk.get_data("/m")[0] == b"0"
    with pytest.raises(NoNodeError) as missing:
        zk.multi([CheckOp("/m", 0), DeleteOp("/m/nope")])
    assert missing.value.op_index == 1

    results = zk.multi([CheckOp("/m", 0), CreateOp("/m/a", b"x"), SetDataOp("/m", b"1", 0), DeleteOp("/m/a")])
    assert results[0] is None and results[1] == "/m/a" and results[3] is None
    assert (results[2].version, zk.exists("/m/a")) == (1, None)


def test_the_ops_of_one_multi_share_a_zxid(backend):
    zk = backend.connect()
    zk.create("/z")
    zk.multi([CreateOp("/z/a"), CreateOp("/z/b", ephemeral=True)])
    a, b = zk.exists("/z/a"), zk.exists("/z/b")
    assert a.czxid == b.czxid
    assert (a.ephemeral_owner, b.ephemeral_owner) == (0, zk.session_id)


def test_sequential_names_count_the_parents_creations(backend):
    zk = backend.connect()
    zk.create("/q")
    assert [zk.create("/q/n-", sequential=True)[0] for _ in range(2)] == ["/q/n-0000000000", "/q/n-0000000001"]
    zk.delete("/q/n-0000000000")                          # deletions do not advance the counter
    zk.create("/q/plain")                                 # non-sequential creations do
    assert zk.create("/q/n-", sequential=True)[0] == "/q/n-0000000003"
    assert zk.multi([CreateOp("/q/n-", sequential=True)] * 2) == ["/q/n-0000000004", "/q/n-0000000005"]
    assert zk.get_children("/q") == ["n-0000000001", "n-0000000003", "n-0000000004", "n-0000000005", "plain"]
    assert zk.exists("/q").cversion == 7                  # 6 creations + 1 deletion


def test_structural_errors(backend):
    zk = backend.connect()
    with pytest.raises(NoNodeError):
        zk.create("/a/b")
    zk.create("/a")
    with pytest.raises(NodeExistsError):
        zk.create("/a")
    zk.create("/a/b")
    with pytest.raises(NotEmptyError):
        zk.delete("/a")
    zk.create("/eph", ephemeral=True)
    with pytest.raises(NoChildrenForEphemeralsError):
        zk.create("/eph/child")
    with pytest.raises(NoNodeError):
        zk.set_data("/nope", b"")
    with pytest.raises(NoNodeError):
        zk.get_children("/nope")


def test_a_failed_get_data_keeps_the_watch_an_exists_armed(backend, make_recorder):
    writer, reader = backend.connect(), backend.connect()
    watch = make_recorder()
    assert reader.exists("/soon", watch) is None
    with pytest.raises(NoNodeError):
        reader.get_data("/soon", watch)
    writer.create("/soon")
    backend.settle(reader)
    assert watch.events == [WatchedEvent(CREATED, "/soon")]
