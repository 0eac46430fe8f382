"""The threaded implementation on Debian's ZooKeeper through connection losses and session expiries.

* A connection dropped and re-established within the session timeout (the server restarted): the
  sessions, their ephemerals and their watches survive (ZooKeeper restores sessions from its log
  and gives each a fresh timeout), a request in flight fails with CONNECTIONLOSS and is sent again
  once connected (`retryRequestsUntilConnected`), and the controller carries on at the same epoch.
* A controller cut off from ZooKeeper past its session timeout while the server runs (a TCP proxy
  between that broker and the server refuses its connections): the server expires the session,
  another broker wins `/controller` at the next epoch, and the old controller learns of the expiry
  only when it reconnects, then resigns and re-registers. One controller per epoch, and nothing the
  zombie sent after the new election is applied by a broker that had seen the new epoch.

(Stopping the server for longer than the timeout does not expire a session: the restarted server
gives restored sessions a fresh timeout. An outage for one client while the server runs does.)

No assertion depends on timing: each test waits, with a generous bound, for a condition.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from kcm.impl.threaded_cluster import ThreadedCluster
from kcm.impl.zk.kazoo_backend import KazooZooKeeper
from kcm.impl.zk_data import TopicPartition

from tests.impl import threaded
from tests.impl.threaded import FAST, ORDERS

WAIT_S = 60


def wait_for(condition, timeout_s: float = WAIT_S) -> bool:
    return threaded.wait_for(condition, timeout_s, tolerate=(Exception,))   # ZooKeeper not back yet


class TcpProxy:
    """Forwards loopback connections to `target`; `cut()` closes them all and refuses new ones
    until `restore()`: a network outage for the clients behind it only."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.hosts = f"127.0.0.1:{self.port}"
        self._open = threading.Event()
        self._open.set()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self._open.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True, name="proxy-pump").start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self._closed = True
        self.cut()
        self.listener.close()


def epoch_of(c: ThreadedCluster) -> int:
    return c.admin.get_controller_epoch()[0]


def elections(c: ThreadedCluster) -> dict[int, list[int]]:
    """Controller epoch -> the brokers that became controller with it (from the timeline)."""
    out: dict[int, list[int]] = {}
    for r in c.timeline.records:
        if r.kind == "election":
            out.setdefault(r.epoch, []).append(r.broker)
    return out


def test_a_controller_survives_a_connection_drop_without_expiry(zookeeper_process):
    # The clients reach the server through a proxy that stays shut until the restarted server serves.
    # ZooKeeper 3.8.0 binds its port before it loads its database, and a connection accepted in that
    # window is neither answered nor closed (closing it throws: "zkDb is null"), so a client there
    # waits out its connect timeout (the session timeout, 10 s) while its restored session's fresh
    # 10 s run out: the session expires. That is the server's startup race, not what this test is about.
    proxy = TcpProxy(zookeeper_process.port)
    c = ThreadedCluster(3, zookeeper=proxy.hosts, config=FAST, session_timeout_s=2.5,
                        connect_timeout_s=WAIT_S)   # kazoo session timeout 10 s, the server's maximum
    try:
        for b in range(3):
            c.start_broker(b)
        c.create_topic("orders", ORDERS)
        assert c.settle(WAIT_S)
        controller, epoch = c.controller_id(), epoch_of(c)
        sessions = {b: s.session_id for b, s in c.servers.items()}
        before = len(c.timeline.records)

        proxy.cut()
        zookeeper_process.stop()
        # A request in flight across the outage: the admin's write fails with CONNECTIONLOSS and
        # is sent again once the connection is back.
        done = threading.Event()
        writer = threading.Thread(target=lambda: (c.preferred_election(TopicPartition("orders", 0)), done.set()),
                                  daemon=True)
        writer.start()
        time.sleep(0.5)
        assert not done.is_set()
        zookeeper_process.start()   # returns once the server serves
        proxy.restore()
        assert done.wait(WAIT_S), "the write in flight was not retried after the reconnection"

        assert wait_for(lambda: all(s.zk_client.zookeeper._client.connected for s in c.servers.values()))
        assert c.settle(WAIT_S)
        # Same controller, same epoch, same sessions: nobody resigned, nobody re-registered.
        assert (c.controller_id(), epoch_of(c)) == (controller, epoch)
        assert {b: s.session_id for b, s in c.servers.items()} == sessions
        later = c.timeline.records[before:]
        moved = [r for r in later if r.kind in ("election", "resignation")
                 or (r.kind == "broker" and "expired" in r.detail)]
        assert not moved, moved
        # The watches survived: the controller still reacts to ZooKeeper. A broker crash (its
        # session expired by the server) makes it elect new leaders, at the same controller epoch.
        victim = next(b for b in range(3) if b != controller)
        c.crash_broker(victim)
        assert wait_for(lambda: all(state.leader_and_isr.leader != victim
                                    for _, state in c.partition_states().values())), c.partition_states()
        states = c.partition_states()
        assert all(state.controller_epoch == epoch for _, state in states.values()
                   if state.leader_and_isr.leader_epoch > 0), states
    finally:
        c.close()
        proxy.close()


def test_a_controller_cut_off_past_its_session_timeout_is_replaced_and_fenced(zookeeper_process):
    proxy = TcpProxy(zookeeper_process.port)
    c = ThreadedCluster(3, zookeeper=zookeeper_process.hosts, config=FAST, session_timeout_s=0.5,
                        connect_timeout_s=WAIT_S)   # kazoo session timeout 2 s
    try:
        chroot = "/" + c.admin.zookeeper.hosts.split("/", 1)[1]
        direct = c._connect
        c._connect = lambda: KazooZooKeeper.connect(proxy.hosts + chroot, timeout=WAIT_S, session_timeout=2.0)
        c.start_broker(0)                      # broker 0, behind the proxy, becomes the controller
        assert wait_for(lambda: c.controller_id() == 0)
        c._connect = direct
        for b in (1, 2):
            c.start_broker(b)
        c.create_topic("orders", ORDERS)
        assert c.settle(WAIT_S)
        assert (c.controller_id(), epoch_of(c)) == (0, 1)

        proxy.cut()                            # broker 0 cannot reach ZooKeeper; the server runs on
        assert wait_for(lambda: c.controller_id() in (1, 2) and epoch_of(c) == 2)
        new = c.controller_id()
        assert c.servers[0].controller.is_active   # a zombie: it has not heard of the expiry
        assert wait_for(lambda: all(s.leader_and_isr.leader != 0 for _, s in c.partition_states().values()))

        proxy.restore()                        # it reconnects, is told its session expired, resigns
        assert wait_for(lambda: not c.servers[0].controller.is_active and c.servers[0].zk_session_believed_alive
                        and c.admin.get_broker(0) is not None)
        assert c.settle(WAIT_S)
        assert (c.controller_id(), epoch_of(c)) == (new, 2)
        # One controller per epoch.
        assert elections(c) == {1: [0], 2: [new]}
        # Every partition state written after the failover carries the new epoch, and no broker
        # applied a request of epoch 1 after it had seen epoch 2.
        states = c.partition_states()
        assert all(s.controller_epoch == 2 for _, s in states.values() if s.leader_and_isr.leader_epoch > 0)
        seen: dict[int, int] = {}
        for r in c.timeline.records:
            if r.kind == "delivered":
                assert r.epoch >= seen.get(r.peer, 0), f"broker {r.peer} applied epoch {r.epoch} after {seen[r.peer]}"
                seen[r.peer] = max(seen.get(r.peer, 0), r.epoch)
        assert all(c.servers[b].replica_manager.controller_epoch == 2 for b in range(3))
    finally:
        c.close()
        proxy.close()


def test_simulate_gives_one_line_and_exit_2_when_zookeeper_goes_away_for_good(zookeeper_process, tmp_path):
    """`kcm simulate --zk HOST:PORT`: the server dies for good in the middle of a scenario. The
    next ZooKeeper call waits for the connection (`waitUntilConnected`) no longer than the connection
    timeout, and the run ends with one line naming the problem and exit code 2, never a hang."""
    import subprocess
    import sys

    scenario = tmp_path / "s.toml"
    scenario.write_text('name = "outage"\nbrokers = 2\n[[step]]\ndo = "start"\n'
                        '[[step]]\ndo = "create_topic"\ntopic = "a"\npartitions = 1\nreplication_factor = 2\n'
                        '[[step]]\ndo = "sleep"\nseconds = 2\n'
                        '[[step]]\ndo = "create_topic"\ntopic = "b"\npartitions = 1\nreplication_factor = 2\n')
    proc = subprocess.Popen([sys.executable, "-u", "-m", "kcm.cli", "simulate", "--zk", zookeeper_process.hosts,
                             "--scenario", str(scenario), "--connect-timeout", "5", "--timeout", "10", "--brief"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if line.startswith("3. "):          # the sleep step: the cluster is up and settled
                zookeeper_process.stop()
                break
        else:
            raise AssertionError("the scenario never reached its third step")
        out, err = proc.communicate(timeout=240)   # a hang fails here
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("kcm: error: ") and "ZooKeeper" in lines[0] and zookeeper_process.hosts in lines[0], err
