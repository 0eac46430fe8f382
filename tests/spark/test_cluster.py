"""A real standalone Spark cluster on loopback: a master and two workers started with the
`spark-class` launcher shipped in the pyspark package. The Kafka `tiny` preset is explored with
`master=spark://127.0.0.1:PORT`; one worker (and its executor) is killed in the middle of the run,
and the result is still the sequential explorer's. Everything started here is stopped here, by
process group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest
from kcm.checker.engine.bfs import explore
from kcm.spark_explore.bfs import explore_spark
from kcm.spark_explore.session import spark_session
from kcm.spark_explore.spec import ModelSpec

from kcm.config import load_preset
from tests.spark.conftest import REPO_ROOT, signature

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"port {port} did not open in {timeout} s:\n{log.read_text()[-2000:]}")


def launch(logs: Path, name: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable, SPARK_DAEMON_MEMORY="512m")
    log = logs / f"{name}.log"
    # A session of its own: the worker's executor is its child, so killpg takes both.
    return subprocess.Popen([str(SPARK_CLASS), *args], stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    logs = tmp_path_factory.mktemp("spark-cluster")
    port = free_port()
    master = launch(logs, "master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(port), "--webui-port", str(free_port()))
    workers: list[subprocess.Popen] = []
    try:
        wait_for_port(port, master, logs / "master.log")
        for i in range(2):
            worker_port = free_port()
            workers.append(launch(
                logs, f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--port", str(worker_port), "--webui-port", str(free_port()), "--cores", "1",
                "--memory", "1g", "--work-dir", str(logs / f"work{i}"), f"spark://127.0.0.1:{port}"))
            wait_for_port(worker_port, workers[-1], logs / f"worker{i}.log")
        yield f"spark://127.0.0.1:{port}", workers
    finally:
        for process in [*workers, master]:
            stop(process)


def executors(session) -> int:
    """Executors registered with the driver (the driver's own block manager excluded)."""
    return session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1


@pytest.mark.slow
def test_tiny_on_a_standalone_cluster_survives_a_lost_worker(cluster, tmp_path):
    url, workers = cluster
    spec = ModelSpec.kafka(load_preset("tiny"))
    session = spark_session(url, app_name="kcm-cluster-test", checkpoint_dir=str(tmp_path / "ck"),
                            python_path=(REPO_ROOT,), conf={"spark.executor.memory": "512m"})
    try:
        deadline = time.monotonic() + 120
        while executors(session) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert executors(session) == 2, "both workers should run an executor"
        killed = []

        def kill_a_worker(progress):
            if progress.phase == "level" and progress.level == 9 and not killed:
                os.killpg(workers[1].pid, signal.SIGKILL)
                workers[1].wait(timeout=30)
                killed.append(progress.level)

        result = explore_spark(session, spec, partitions=4, checkpoint_every=4, progress=kill_a_worker)
        assert killed == [9]
        assert signature(result) == signature(explore(spec.build()))
        assert result.extra["spark"]["master"] == url
        assert executors(session) == 1  # the run finished on the surviving worker
    finally:
        session.stop()
