"""`kcm simulate`: the shipped scenarios pass, an invariant broken on the way exits 1, bad input and
an unreachable ZooKeeper are one line and exit 2."""

from __future__ import annotations

import socket
import textwrap

import pytest

from kcm.cli import main


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
    assert main(["simulate", "--scenario", "kcm/scenarios/zombie-controller.toml"]) == 0
    out = capsys.readouterr().out
    assert "bounced [" in out and "LeaderAndIsr" in out and "PASS" in out


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
    assert main(["simulate", "--zk", zookeeper_hosts, "--scenario", str(scenario), "--brief"]) == 0
    out = capsys.readouterr().out
    assert f"ZooKeeper {zookeeper_hosts}" in out and "epoch 2" in out and "PASS" in out
