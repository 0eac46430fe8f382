"""Fixtures for the ZooKeeper layer: an embedded server, a real one, and one `backend` over both.

The real server is Debian's `zookeeper` package, started once per test session, standalone, on a
free loopback port, with its data in a temporary folder, and killed (its whole process group)
afterwards. If the package or Java is missing the fixture *fails*: the integration tests are part
of `make test`, which installs the package (`scripts/sysdeps.sh`).

`backend` runs a test on both servers. Each real-server test gets its own chroot, so tests never
see each other's znodes. Two helpers hide the one real difference, asynchrony:

* `backend.settle(zk)` returns once every watch event caused by the writes already answered has
  reached `zk`'s callbacks (ZooKeeper delivers a client's events in order, so it writes a marker
  znode under a watch and waits for that event). On the embedded server, delivery is immediate.
* `backend.expire(zk)` makes the server expire `zk`'s session and returns once `zk` knows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kcm.impl.zk.kazoo_backend import KazooZooKeeper, expire_session
from kcm.impl.zk.memory import MemoryZooKeeperServer
from kcm.impl.zk.protocol import EventType, WatchedEvent, ZooKeeper, ZooKeeperUnavailable

JAVA_DIR = Path("/usr/share/java")
ZOOKEEPER_HOME = Path("/usr/share/zookeeper")
ZOOKEEPER_JAR = JAVA_DIR / "zookeeper.jar"
STARTUP_DEADLINE_S = 60   # a cold JVM on a loaded CI machine; a warm start takes under a second
WAIT_S = 20               # upper bound for an event that is certainly coming
CONNECT_S = 30            # a session on a loaded machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _classpath() -> str:
    # zookeeper.jar's manifest names its dependencies (/usr/share/java/...); add the jute jar and an
    # slf4j binding so the server logs to our log file instead of warning about a missing binding.
    jars = [ZOOKEEPER_JAR, JAVA_DIR / "zookeeper-jute.jar", JAVA_DIR / "slf4j-api.jar",
            JAVA_DIR / "slf4j-simple.jar", *sorted(ZOOKEEPER_HOME.glob("**/*.jar"))]
    return os.pathsep.join(str(j) for j in jars if j.exists())


def _serving(port: int) -> bool:
    """Whether the server takes sessions. `ruok` will not do: ZooKeeper 3.8 answers it once the port
    is bound, before the database is loaded. `srvr` says "not currently serving" until then."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"srvr")
            return s.recv(64).startswith(b"Zookeeper version")
    except OSError:
        return False


class ZooKeeperProcess:
    """A standalone ZooKeeper on a loopback port, with its data in `work`; it can be stopped and
    started again on the same port and data (its sessions survive a restart: the server restores
    them from its log and gives each a fresh timeout)."""

    def __init__(self, work: Path, tick_ms: int = 500) -> None:
        java = shutil.which("java") or "/usr/bin/java"
        if not ZOOKEEPER_JAR.exists() or not os.access(java, os.X_OK):
            pytest.fail(f"ZooKeeper is not installed ({ZOOKEEPER_JAR} or java missing): install the Debian "
                        "package `zookeeper` (`make test` does it through scripts/sysdeps.sh)", pytrace=False)
        self.java = java
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.hosts = f"127.0.0.1:{self.port}"
        self.config = work / "zoo.cfg"
        self.config.write_text(f"tickTime={tick_ms}\ndataDir={work / 'data'}\nclientPort={self.port}\n"
                               "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
                               "4lw.commands.whitelist=srvr\nmaxClientCnxns=0\n")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the server and wait (up to STARTUP_DEADLINE_S) until it serves."""
        with (self.work / "zookeeper.log").open("ab") as log:
            self.process = subprocess.Popen(
                [self.java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", _classpath(),
                 "-Dzookeeper.jmx.log4j.disable=true", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                 "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",   # a timed log, to trace a failure
                 "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                 str(self.config)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        while not _serving(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = (self.work / "zookeeper.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"ZooKeeper did not start on {self.hosts} (exit {self.process.poll()}); log:\n{tail}",
                            pytrace=False)
            time.sleep(0.05)

    def stop(self) -> None:
        """Kill the server's whole process group (as a crash would) and wait for it."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def connect_real(hosts: str, **kwargs) -> KazooZooKeeper:
    """A session on a real server, tolerant of a loaded machine: a generous connection timeout,
    tried again until CONNECT_S has passed."""
    deadline = time.monotonic() + CONNECT_S
    while True:
        try:
            return KazooZooKeeper.connect(hosts, timeout=kwargs.pop("timeout", WAIT_S), **kwargs)
        except ZooKeeperUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.fixture(scope="session")
def zookeeper_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A standalone ZooKeeper on loopback for the whole test session; yields 'host:port'."""
    server = ZooKeeperProcess(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    try:
        yield server.hosts
    finally:
        server.stop()


@pytest.fixture
def zookeeper_process(tmp_path: Path) -> Iterator[ZooKeeperProcess]:
    """A ZooKeeper of the test's own, which the test may stop and start again."""
    server = ZooKeeperProcess(tmp_path / "zookeeper")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def running_zookeeper(work: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A standalone ZooKeeper on loopback with its data under `work`; yields ('host:port', process).
    It is killed at the end if still running."""
    server = ZooKeeperProcess(work)
    server.start()
    try:
        yield server.hosts, server.process
    finally:
        server.stop()


@pytest.fixture
def own_zookeeper(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A ZooKeeper of the test's own, which it may kill; yields ('host:port', process)."""
    work = tmp_path / "own-zookeeper"
    work.mkdir()
    with running_zookeeper(work) as running:
        yield running


class Recorder:
    """A watch callback (or session listener) that records what it receives, thread-safely."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list = []

    def __call__(self, item) -> None:
        with self._lock:
            self._items.append(item)

    @property
    def events(self) -> list:
        with self._lock:
            return list(self._items)


class MemoryBackend:
    name = "memory"

    def __init__(self) -> None:
        self.server = MemoryZooKeeperServer()

    def connect(self) -> ZooKeeper:
        return self.server.connect()

    def expire(self, zk: ZooKeeper) -> None:
        self.server.expire_session(zk.session_id)

    def settle(self, zk: ZooKeeper) -> None:
        pass   # immediate delivery: callbacks have run before the write returned

    def close(self) -> None:
        pass


class RealBackend:
    name = "zookeeper"

    def __init__(self, hosts: str) -> None:
        self.hosts = hosts
        self.chroot = f"/test-{uuid.uuid4().hex[:12]}"
        self._clients: list[KazooZooKeeper] = []
        admin = connect_real(hosts)
        try:
            admin.create(self.chroot)
        finally:
            admin.close()

    def connect(self) -> ZooKeeper:
        zk = connect_real(self.hosts + self.chroot)
        self._clients.append(zk)
        return zk

    def expire(self, zk: ZooKeeper) -> None:
        assert isinstance(zk, KazooZooKeeper)
        expire_session(zk, timeout=WAIT_S)

    def settle(self, zk: ZooKeeper) -> None:
        arrived = threading.Event()
        marker = f"/settle-{uuid.uuid4().hex[:12]}"

        def on_marker(event: WatchedEvent) -> None:
            if event.type is EventType.CREATED:
                arrived.set()

        assert zk.exists(marker, on_marker) is None
        zk.create(marker)
        assert arrived.wait(WAIT_S), f"the marker event for {marker} never arrived"
        zk.delete(marker)

    def close(self) -> None:
        for zk in self._clients:
            zk.close()


@pytest.fixture
def memory_backend() -> Iterator[MemoryBackend]:
    backend = MemoryBackend()
    yield backend
    backend.close()


@pytest.fixture
def real_backend(zookeeper_hosts: str) -> Iterator[RealBackend]:
    backend = RealBackend(zookeeper_hosts)
    yield backend
    backend.close()


@pytest.fixture(params=["memory", "zookeeper"])
def backend(request: pytest.FixtureRequest) -> MemoryBackend | RealBackend:
    """The same test on the embedded server and on a real ZooKeeper."""
    return request.getfixturevalue("memory_backend" if request.param == "memory" else "real_backend")


@pytest.fixture
def make_recorder() -> type[Recorder]:
    """`make_recorder()` -> a new `Recorder` (conftest is not importable under importlib mode)."""
    return Recorder
