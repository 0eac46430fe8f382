"""What only the real-server backend has: connecting with a timeout, keeping an expired client
expired although kazoo would quietly open a new session for it, and surviving a connection loss."""

from __future__ import annotations

import socket
import threading

import pytest
from kcm.impl.zk.kazoo_backend import KazooZooKeeper
from kcm.impl.zk.protocol import EventType, SessionExpiredError, SessionState, WatchedEvent, ZooKeeperUnavailable


def _port_with_nothing_listening() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_raises_zookeeper_unavailable_naming_it():
    port = _port_with_nothing_listening()
    with pytest.raises(ZooKeeperUnavailable) as unavailable:
        KazooZooKeeper.connect(f"127.0.0.1:{port}/chroot", timeout=0.5)
    message = str(unavailable.value)
    assert f"127.0.0.1:{port}" in message and "/chroot" not in message
    assert "\n" not in message


def test_an_expired_client_stays_on_its_dead_session(real_backend):
    zk = real_backend.connect()
    session = zk.session_id
    real_backend.expire(zk)
    for _ in range(3):
        with pytest.raises(SessionExpiredError):
            zk.create("/orphan", ephemeral=True)
    assert zk.session_id == session
    assert real_backend.connect().exists("/orphan") is None


def test_a_connection_loss_keeps_the_session_and_wakes_dropped_watches(real_backend, make_recorder):
    # kazoo forgets its watches when a connection drops (the Java client would re-register them);
    # the adapter wakes each one instead, so a handler re-reads and re-arms rather than going deaf.
    from kazoo.protocol.connection import _CONNECTION_DROP  # kazoo's own test hook

    zk, writer = real_backend.connect(), real_backend.connect()
    writer.create("/n")
    woken, reconnected = threading.Event(), threading.Event()
    watch, listener = make_recorder(), make_recorder()
    zk.get_data("/n", lambda event: (watch(event), woken.set()))
    zk.add_session_listener(lambda state: (listener(state), state is SessionState.CONNECTED and reconnected.set()))
    session = zk.session_id

    zk._client._call(_CONNECTION_DROP, None)
    assert woken.wait(20) and reconnected.wait(20)
    assert watch.events == [WatchedEvent(EventType.CHANGED, "/n")]
    assert listener.events == [SessionState.SUSPENDED, SessionState.CONNECTED]
    assert zk.session_id == session and zk.exists("/n") is not None
