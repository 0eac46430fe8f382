"""`kcm simulate`: the shipped scenarios pass, an invariant broken on the way exits 1, bad input and
an unreachable ZooKeeper are one line and exit 2."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from kcm.cli import main
from tests.child import sigint_default


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kcm: error: ") and "Traceback" not in captured.err
    return lines[0]


def test_the_default_scenario_runs_and_prints_a_timeline_and_a_summary(capsys):
    assert main(["simulate", "--brief"]) == 0
    out = capsys.readouterr().out
    assert "scenario failover" in out and "PASS" in out
    assert "⚑ broker 0 is the controller, epoch 1" in out   # the first election
    assert "is the controller, epoch 2" in out               # the failover after the crash
    assert "controlled shutdown election" in out and "controller: broker" in out
    assert "audit-0" not in out.split("controller: broker")[-1]   # deleted by the last step


def test_the_zombie_controller_scenario_detects_the_bounce(capsys):
    assert main(["simulate", "--scenario", "zombie-controller"]) == 0   # a shipped scenario, by name
    out = capsys.readouterr().out
    assert "bounced [" in out and "LeaderAndIsr" in out and "PASS" in out
    assert "broker broker" not in out
    # A same-epoch resend the broker ignores is explained where it is shown.
    resends = [line for line in out.splitlines() if "STALE_CONTROLLER_EPOCH" in line and "applied" in line]
    assert all("leader epoch not newer than the broker's" in line for line in resends)


def test_a_scenario_file_by_path_and_an_unknown_name(tmp_path, capsys):
    assert main(["simulate", "--scenario", "no-such-scenario"]) == 2
    assert ("unknown scenario 'no-such-scenario'; choose one of failover, zombie-controller or give a TOML file"
            in _one_error_line(capsys))
    assert main(["simulate", "--scenario", str(tmp_path / "missing.toml")]) == 2
    assert "missing.toml' does not exist" in _one_error_line(capsys)


@pytest.mark.parametrize(("step", "needle"), [
    ('do = "delete_topic"\ntopic = "ghost"', "step 3: topic 'ghost' does not exist"),
    ('do = "reassign"\ntopic = "ghost"\npartition = 0\nreplicas = [1, 0]', "step 3: topic 'ghost' does not exist"),
    ('do = "reassign"\ntopic = "t"\npartition = 7\nreplicas = [1, 0]',
     "step 3: topic 't' has no partition 7 (it has 0)"),
    ('do = "preferred_election"\ntopic = "ghost"\npartition = 0', "step 3: topic 'ghost' does not exist"),
])
def test_an_operation_on_a_topic_that_does_not_exist_is_an_error_not_a_pass(tmp_path, capsys, step, needle):
    scenario = tmp_path / "ghost.toml"
    scenario.write_text(f'brokers = 2\n[[step]]\ndo = "start"\n[[step]]\ndo = "create_topic"\ntopic = "t"\n'
                        f'replication_factor = 2\n[[step]]\n{step}\n')
    assert main(["simulate", "--scenario", str(scenario), "--brief"]) == 2
    assert needle in _one_error_line(capsys)


@pytest.mark.parametrize("zk", ["127.0.0.1:99999", "127.0.0.1:0", "localhost"])
def test_a_bad_zookeeper_address_is_one_line_and_exit_2(capsys, zk):
    assert main(["simulate", "--zk", zk]) == 2
    assert f"--zk '{zk}'" in _one_error_line(capsys)


def test_a_broken_invariant_exits_1(tmp_path, capsys):
    scenario = tmp_path / "v6.toml"
    scenario.write_text(textwrap.dedent("""
        name = "v6"
        brokers = 2
        [config]
        variant = "V6"
        [[step]]
        do = "start"
        [[step]]
        do = "create_topic"
        topic = "single"
        assignment = [[1]]
        [[step]]
        do = "crash"
        broker = 1
    """))
    assert main(["simulate", "--scenario", str(scenario), "--brief"]) == 1
    out = capsys.readouterr().out
    assert "invariant violated: IsrNonEmpty" in out and "VIOLATION · step 3: IsrNonEmpty" in out


def test_an_unreachable_zookeeper_is_one_line_and_exit_2(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]   # nothing listens here once the socket is closed
    assert main(["simulate", "--zk", f"127.0.0.1:{port}", "--connect-timeout", "0.5"]) == 2
    assert f"ZooKeeper at 127.0.0.1:{port} is unreachable" in _one_error_line(capsys)


@pytest.mark.parametrize(("content", "needle"), [
    ('[[step]]\ndo = "explode"\n', "step 1: unknown action 'explode'"),
    ('[[step]]\ndo = "crash"\n', "step 1 (crash): missing field `broker`"),
    ('name = "x"\n', "no steps"),
    ('[[step]\n', "not valid TOML"),
    ('[[step]]\ndo = "sleep"\nseconds = -5\n', "step 1 (sleep): `seconds` = -5 must be a number of seconds in 0..600"),
    ('[[step]]\ndo = "sleep"\nseconds = "soon"\n', "step 1 (sleep): `seconds` = 'soon' must be"),
])
def test_a_malformed_scenario_is_one_line_and_exit_2(tmp_path, capsys, content, needle):
    scenario = tmp_path / "bad.toml"
    scenario.write_text(content)
    assert main(["simulate", "--scenario", str(scenario)]) == 2
    assert needle in _one_error_line(capsys)


def test_a_real_zookeeper_runs_a_scenario(zookeeper_hosts, tmp_path, capsys):
    scenario = tmp_path / "short.toml"
    scenario.write_text(textwrap.dedent("""
        name = "short"
        [[step]]
        do = "start"
        [[step]]
        do = "create_topic"
        topic = "t"
        partitions = 2
        [[step]]
        do = "expire_session"
        broker = "controller"
    """))
    # Other tests' threaded clusters on the session's ZooKeeper leave their own chroots: only the
    # ones this run makes count.
    before = set(_chroots(zookeeper_hosts))
    assert main(["simulate", "--zk", zookeeper_hosts, "--scenario", str(scenario), "--brief"]) == 0
    out = capsys.readouterr().out
    assert f"ZooKeeper {zookeeper_hosts}" in out and "epoch 2" in out and "PASS" in out
    # the watches are the embedded ZooKeeper's to list: a real one's client cannot
    assert ("not checked on a real ZooKeeper (a client cannot list its watches): "
            "ControllerWatchesArmed, NoControllerWatchesWhenInactive") in out
    assert set(_chroots(zookeeper_hosts)) == before   # the run's chroot removed
    assert main(["simulate", "--zk", zookeeper_hosts, "--scenario", str(scenario), "--brief", "--keep-chroot"]) == 0
    kept = sorted(set(_chroots(zookeeper_hosts)) - before)
    assert len(kept) == 1 and f"kept ZooKeeper chroot /{kept[0]}" in capsys.readouterr().out


def _chroots(hosts: str) -> list[str]:
    return [c for c in _root_children(hosts) if c.startswith("kcm-simulate-")]


def _root_children(hosts: str) -> list[str]:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=hosts, timeout=10.0)
    client.start(timeout=30.0)
    try:
        return client.get_children("/")
    finally:
        client.stop()
        client.close()


def test_zookeeper_killed_during_a_simulation_ends_the_run_with_one_line(tmp_path, own_zookeeper):
    """ZooKeeper dies for good in the middle of a scenario: the run ends within its step deadline
    (here 1 + 2 * 1 + 10 s), with one line and exit 2 or 3, never a hang or a traceback."""
    scenario = tmp_path / "long.toml"
    scenario.write_text('brokers = 2\n[[step]]\ndo = "start"\n[[step]]\ndo = "sleep"\nseconds = 3\n'
                        '[[step]]\ndo = "create_topic"\ntopic = "t"\n')
    hosts, process = own_zookeeper
    run = subprocess.Popen([sys.executable, "-m", "kcm.cli", "simulate", "--zk", hosts, "--scenario", str(scenario),
                            "--timeout", "1", "--connect-timeout", "1", "--brief"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while "2. sleep" not in (line := run.stdout.readline()):
        assert line and time.monotonic() < deadline, "the run never reached the sleep step"
    os.killpg(process.pid, signal.SIGKILL)
    out, err = run.communicate(timeout=90)
    assert run.returncode in (2, 3), (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kcm: error: ") and "Traceback" not in err, err


def test_the_first_ctrl_c_ends_a_simulation_at_once(tmp_path):
    """Ctrl-C during a long step (here a sleep; a ZooKeeper that stopped answering looks the same
    to the main thread) ends the run at once: incomplete, exit 3, one line."""
    scenario = tmp_path / "slow.toml"
    scenario.write_text('brokers = 1\n[[step]]\ndo = "start"\n[[step]]\ndo = "sleep"\nseconds = 300\n')
    run = subprocess.Popen([sys.executable, "-m", "kcm.cli", "simulate", "--scenario", str(scenario), "--brief"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=sigint_default)
    while "2. sleep" not in (line := run.stdout.readline()):
        assert line, "the run never reached the sleep step"
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)   # far less than the 300 s sleep
    assert run.returncode == 3, (out, err)
    assert err.strip() == "kcm: error: interrupted"
