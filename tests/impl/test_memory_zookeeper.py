"""What only the embedded server has: injected faults, queued (steppable) delivery, the expiry
notice, zxid accounting and inspection. Semantics shared with a real server are in
test_zookeeper_protocol.py."""

from __future__ import annotations

import threading

import pytest
from kcm.impl.zk.memory import Delivery, MemoryZooKeeperServer, WatchKind
from kcm.impl.zk.protocol import (
    BadVersionError,
    ConnectionLossError,
    CreateOp,
    EventType,
    NodeExistsError,
    SessionExpiredError,
    SessionState,
    SetDataOp,
    WatchedEvent,
)


@pytest.fixture
def queued() -> MemoryZooKeeperServer:
    return MemoryZooKeeperServer(Delivery.QUEUED)


def test_a_lost_acknowledgement_hides_an_applied_write(memory_backend):
    server = memory_backend.server
    zk = server.connect()
    server.lose_next_ack(zk.session_id)
    with pytest.raises(ConnectionLossError):
        zk.create("/controller", b"1", ephemeral=True)
    assert zk.exists("/controller").ephemeral_owner == zk.session_id     # it was applied
    with pytest.raises(NodeExistsError):                                  # so the retry collides with it
        zk.create("/controller", b"1", ephemeral=True)


def test_a_lost_acknowledgement_also_hides_a_failed_write(memory_backend):
    server = memory_backend.server
    zk = server.connect()
    zk.create("/s", b"0")
    zxid = server.zxid
    server.lose_next_ack(zk.session_id)
    with pytest.raises(ConnectionLossError):
        zk.multi([CreateOp("/s/a"), SetDataOp("/s", b"x", version=7)])
    assert (zk.exists("/s/a"), server.zxid) == (None, zxid)
    with pytest.raises(BadVersionError):                                  # the fault was one-shot
        zk.set_data("/s", b"x", version=7)


def test_only_the_faulted_session_loses_its_acknowledgement(memory_backend):
    server = memory_backend.server
    faulted, other = server.connect(), server.connect()
    server.lose_next_ack(faulted.session_id)
    assert other.create("/a") == ("/a", server.zxid)
    with pytest.raises(ConnectionLossError):
        faulted.set_data("/a", b"1")
    assert other.get_data("/a")[0] == b"1"


def test_zxids_number_successful_transactions_and_sessions(memory_backend):
    server = memory_backend.server
    assert server.zxid == 0
    zk = server.connect()                                      # createSession
    assert server.zxid == 1
    assert zk.create("/a")[1] == 2
    with pytest.raises(NodeExistsError):
        zk.create("/a")                                        # failed: no transaction here
    assert server.zxid == 2
    other = server.connect()
    other.create("/e", ephemeral=True)
    server.expire_session(other.session_id)                    # closeSession, ephemerals included
    assert server.zxid == 5


def test_queued_delivery_waits_for_the_scheduler(queued, make_recorder):
    writer, reader = queued.connect(), queued.connect()
    writer.create("/n")
    watch = make_recorder()
    reader.get_data("/n", watch)
    writer.set_data("/n", b"1")
    assert watch.events == []
    [pending] = queued.pending_watch_events()
    assert (pending.session_id, pending.event) == (reader.session_id, WatchedEvent(EventType.CHANGED, "/n"))
    assert queued.armed_watches() == frozenset()                # triggered: no longer armed
    queued.deliver_watch_event(pending)
    assert watch.events == [WatchedEvent(EventType.CHANGED, "/n")]
    assert queued.pending_watch_events() == ()


def test_queued_delivery_is_fifo_per_client_and_free_across_clients(queued, make_recorder):
    writer, a, b = queued.connect(), queued.connect(), queued.connect()
    writer.create("/x")
    writer.create("/y")
    seen = make_recorder()
    a.exists("/x", seen)
    a.exists("/y", seen)
    b.exists("/y", seen)
    writer.set_data("/x", b"1")
    writer.set_data("/y", b"1")
    heads = queued.pending_watch_events()
    assert [(p.session_id, p.event.path) for p in heads] == [(a.session_id, "/x"), (b.session_id, "/y")]
    assert [p.event.path for p in queued.queued_watch_events(a.session_id)] == ["/x", "/y"]
    second_of_a = queued.queued_watch_events(a.session_id)[1]
    with pytest.raises(ValueError, match="not deliverable"):
        queued.deliver_watch_event(second_of_a)               # a's events arrive in order
    queued.deliver_watch_event(heads[1])                      # b before a: a scheduler's choice
    assert seen.events == [WatchedEvent(EventType.CHANGED, "/y")]
    assert queued.deliver_all_watch_events() == 2
    assert [e.path for e in seen.events] == ["/y", "/x", "/y"]


def test_a_reread_before_delivery_arms_an_independent_watch(queued, make_recorder):
    writer, reader = queued.connect(), queued.connect()
    writer.create("/n")
    watch = make_recorder()
    reader.get_data("/n", watch)
    writer.set_data("/n", b"1")
    reader.get_data("/n", watch)                               # re-armed before the first event arrives
    assert queued.armed_watches() == {(reader.session_id, "/n", WatchKind.DATA)}
    writer.set_data("/n", b"2")
    assert queued.deliver_all_watch_events() == 2
    assert watch.events == [WatchedEvent(EventType.CHANGED, "/n")] * 2


def test_the_expiry_notice_is_a_queued_event(queued, make_recorder):
    zk, observer = queued.connect(), queued.connect()
    zk.create("/e", ephemeral=True)
    listener, watch = make_recorder(), make_recorder()
    zk.add_session_listener(listener)
    observer.exists("/e", watch)
    queued.expire_session(zk.session_id)
    assert observer.exists("/e") is None                       # gone for everyone else at once
    assert listener.events == []                               # the expired client has not heard yet
    assert {p.session_id: p.event for p in queued.pending_watch_events()} == {
        zk.session_id: SessionState.EXPIRED, observer.session_id: WatchedEvent(EventType.DELETED, "/e")}
    queued.deliver_all_watch_events()
    assert listener.events == [SessionState.EXPIRED]
    assert watch.events == [WatchedEvent(EventType.DELETED, "/e")]


def test_a_silent_expiry_is_noticed_on_the_next_call(queued, make_recorder):
    zk = queued.connect()
    listener = make_recorder()
    zk.add_session_listener(listener)
    queued.expire_session(zk.session_id, notify=False)
    assert queued.pending_watch_events() == ()
    with pytest.raises(SessionExpiredError):
        zk.get_children("/")
    assert [(p.session_id, p.event) for p in queued.pending_watch_events()] == [
        (zk.session_id, SessionState.EXPIRED)]
    with pytest.raises(SessionExpiredError):
        zk.get_children("/")
    assert queued.deliver_all_watch_events() == 1             # told once
    assert listener.events == [SessionState.EXPIRED]


def test_an_expired_session_loses_its_watches_and_undelivered_events(queued, make_recorder):
    writer, zk = queued.connect(), queued.connect()
    writer.create("/n")
    watch = make_recorder()
    zk.get_data("/n", watch)
    zk.get_children("/n", watch)
    writer.set_data("/n", b"1")                                # one event queued for zk, child watch still armed
    queued.expire_session(zk.session_id)
    assert queued.armed_watches() == frozenset()
    assert [p.event for p in queued.queued_watch_events(zk.session_id)] == [SessionState.EXPIRED]


def test_immediate_delivery_lets_a_callback_re_arm_and_write(memory_backend):
    server = memory_backend.server
    writer, reader = server.connect(), server.connect()
    writer.create("/n", b"0")
    seen: list[bytes] = []

    def rearm(event: WatchedEvent) -> None:
        data, _ = reader.get_data("/n", rearm)                 # re-entering the server from a callback
        seen.append(data)
        if data == b"1":
            reader.set_data("/n", b"2")                        # whose own event is delivered afterwards

    reader.get_data("/n", rearm)
    writer.set_data("/n", b"1")
    assert seen == [b"1", b"2"]
    assert server.armed_watches() == {(reader.session_id, "/n", WatchKind.DATA)}


def test_concurrent_sequential_creates_get_distinct_names(memory_backend):
    server = memory_backend.server
    clients = [server.connect() for _ in range(8)]
    clients[0].create("/seq")
    names: list[str] = []
    lock = threading.Lock()

    def work(zk) -> None:
        for _ in range(50):
            path, _ = zk.create("/seq/n-", sequential=True)
            with lock:
                names.append(path)

    threads = [threading.Thread(target=work, args=(zk,)) for zk in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(names) == [f"/seq/n-{i:010d}" for i in range(400)]
    assert server.snapshot()["/seq"][1].cversion == 400
