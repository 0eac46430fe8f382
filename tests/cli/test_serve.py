"""`kcm serve`: the page addresses and the walks they name, checked against the model; the pages
in headless Chromium (Debian's `chromium`), driven as a reviewer drives them: step, go back,
branch, open a counterexample at its violating step; and bad input through the real command line."""

from __future__ import annotations

import json
import select
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest
from kcm.checker.engine.contract import KnownViolation
from kcm.checker.engine.traces import format_value, to_itf_trace
from kcm.model.checking.kafka_model import KafkaModel

from kcm import config
from kcm.cli import main
from kcm.serve.fields import all_leaves, groups
from kcm.serve.origins import from_trace
from kcm.serve.paths import INIT, TRACE, Address, BadAddress, Start, parse, walk
from kcm.serve.verdicts import HOLDS, NO_STEP, VIOLATED, goals, judge

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: The first line of `kcm serve` on a loaded machine: the model is built before the server starts.
URL_TIMEOUT_S = 180
#: What tiny's cold start enables, in the model's order (`successors`).
TINY_FIRST_ACTIONS = ["BrokerCrash(broker=0)", "ControllerProcessEvent(broker=0)", "BrokerCrash(broker=1)",
                      "ControllerProcessEvent(broker=1)"]
V6_DESCRIBED = ["ControllerProcessEvent(broker=0): Startup", "BrokerCrash(broker=0)", "ZkSessionExpire(broker=0)",
                "ControllerProcessEvent(broker=1): Startup"]
#: V6's counterexample (KAFKA-708): IsrNonEmpty fails after these steps.
V6_ACTIONS = ["ControllerProcessEvent(broker=0)", "BrokerCrash(broker=0)", "ZkSessionExpire(broker=0)",
              "ControllerProcessEvent(broker=1)"]


@pytest.fixture(scope="module")
def tiny() -> KafkaModel:
    return KafkaModel(config.load("tiny")[1])


@pytest.fixture(scope="module")
def v6_trace(v6_run) -> Path:
    """`kcm explore --preset v6`'s counterexample (the session's `v6_run`)."""
    return v6_run / "IsrNonEmpty.itf.json"


# ---- addresses and walks ------------------------------------------------------------------------


def test_an_address_is_its_start_and_choices_both_ways() -> None:
    address = parse("start=init:0&path=3.0.1")
    assert address == Address(Start(INIT, 0), (3, 0, 1))
    assert address.url() == "/state?start=init:0&path=3.0.1"
    assert parse(address.url().split("?", 1)[1]) == address
    assert parse("") == Address(Start(INIT, 0), ())
    assert parse("start=trace:4&path=") == Address(Start(TRACE, 4), ())
    assert address.then(2) == Address(Start(INIT, 0), (3, 0, 1, 2))


@pytest.mark.parametrize("query, message", [
    ("start=init:x", "bad start 'init:x': expected init:N or trace:N"),
    ("start=here:0", "bad start 'here:0': expected init:N or trace:N"),
    ("path=1..2", "bad path '1..2': expected choices as numbers separated by dots, e.g. 3.0.1"),
    ("path=-1", "bad path '-1': expected choices as numbers separated by dots, e.g. 3.0.1"),
    ("state=1", "unknown parameter 'state': a page is addressed by start= and path="),
    ("path=1&path=2", "start= and path= may each be given once"),
])
def test_a_malformed_address_is_a_400_with_one_line(query: str, message: str) -> None:
    with pytest.raises(BadAddress) as caught:
        parse(query)
    assert caught.value.status == 400
    assert str(caught.value) == message


def _by_steps(model: KafkaModel, start, choices: tuple[int, ...]) -> list:
    """The states `model.step` reaches from `start` taking the `choices`-th enabled action each time."""
    states = [start]
    for choice in choices:
        action = model.enabled_actions(states[-1])[choice]
        states.append(model.step(states[-1], action))
    return states


@pytest.mark.parametrize("choices", [(), (1,), (1, 0), (1, 0, 1), (3, 4, 1, 0, 0)])
def test_the_state_of_an_address_is_the_model_stepped_along_it(tiny, choices) -> None:
    inits = tiny.init_states()
    steps = walk(tiny, inits, None, Address(Start(INIT, 0), choices))
    assert [s.state for s in steps] == _by_steps(tiny, inits[0], choices)
    assert [s.choice for s in steps] == [None, *choices]
    # Each step's own page is the prefix of the path: back and branch are links to it.
    assert [s.address.choices for s in steps] == [choices[:i] for i in range(len(choices) + 1)]


def test_a_long_walk_agrees_with_the_model(tiny) -> None:
    """Twenty steps, each taking the enabled action at a different position."""
    state, choices = tiny.init_states()[0], []
    for n in range(20):
        enabled = tiny.enabled_actions(state)
        if not enabled:
            break
        choices.append(n % len(enabled))
        state = tiny.step(state, enabled[choices[-1]])
    steps = walk(tiny, tiny.init_states(), None, Address(Start(INIT, 0), tuple(choices)))
    assert len(steps) == len(choices) + 1 and steps[-1].state == state


@pytest.mark.parametrize("address, message", [
    (Address(Start(INIT, 1)), "there is no initial state 1: the config has 1 (init:0 to init:0)"),
    (Address(Start(INIT, 0), (4,)), "step 1: there is no enabled action 4; the state before it enables 4 (0 to 3)"),
    (Address(Start(INIT, 0), (1, 99)), "step 2: there is no enabled action 99; the state before it enables 6 (0 to 5)"),
    (Address(Start(INIT, 0), (3, 2, 0, 1)), "step 4: there is no enabled action 1; the state before it enables 1 "
                                            "(0 to 0)"),
    (Address(Start(TRACE, 0)), "no counterexample was given to this server (kcm serve --trace FILE)"),
])
def test_an_address_out_of_range_is_a_404_with_one_line(tiny, address, message) -> None:
    with pytest.raises(BadAddress) as caught:
        walk(tiny, tiny.init_states(), None, address)
    assert caught.value.status == 404
    assert str(caught.value) == message


def test_a_counterexample_replays_and_branches(v6_trace) -> None:
    origins = from_trace(v6_trace)
    assert origins.trace is not None and len(origins.trace) == 5
    assert [origins.model.format_action(a) for a, _ in origins.trace[1:]] == V6_ACTIONS
    steps = walk(origins.model, origins.inits, origins.trace, Address(Start(TRACE, 4)))
    assert [s.state for s in steps] == [state for _, state in origins.trace]
    verdicts = {v.name: v.outcome for v in judge(origins.model, steps, origins.known)}
    assert [name for name, outcome in verdicts.items() if outcome == VIOLATED] == ["IsrNonEmpty"]
    assert {g.name: g.met_at for g in goals(origins.model, steps)} == {"ControllerFailsOver": 4,
                                                                        "PartitionOfflineAndBack": None}
    # Branching at step 2 instead of expiring broker 0's session: broker 1's controller starts.
    branch = walk(origins.model, origins.inits, origins.trace, Address(Start(TRACE, 2), (1,)))
    assert branch[-1].state == _by_steps(origins.model, origins.trace[2][1], (1,))[-1]
    assert origins.model.format_action(branch[-1].action) == "ControllerProcessEvent(broker=1)"
    # The walk of docs/explorer.md: then the session expiry, and broker 1 writes the empty ISR a step later.
    later = walk(origins.model, origins.inits, origins.trace, Address(Start(TRACE, 2), (1, 0, 1)))
    assert len(later) == 6
    assert [v.name for v in judge(origins.model, later, origins.known) if v.outcome == VIOLATED] == ["IsrNonEmpty"]


@pytest.mark.parametrize("theirs", [True, False])
def test_a_violation_is_excused_only_when_the_finding_matches_it(v6_trace, theirs) -> None:
    """As the explorer decides: a known behaviour's matcher sees the step and the whole trace."""
    origins = from_trace(v6_trace)
    steps = walk(origins.model, origins.inits, origins.trace, Address(Start(TRACE, 4)))
    seen = []

    def matches(state, action, next_state, trace) -> bool:
        seen.append((state, action, next_state, list(trace())))
        return theirs

    known = {"IsrNonEmpty": KnownViolation("a Finding", matches)}
    [verdict] = [v for v in judge(origins.model, steps, known) if v.name == "IsrNonEmpty"]
    assert verdict.outcome == VIOLATED and verdict.known == ("a Finding" if theirs else None)
    assert seen == [(steps[3].state, steps[4].action, steps[4].state, list(origins.trace or ()))]


def test_at_the_start_transition_invariants_wait_for_a_step(tiny) -> None:
    steps = walk(tiny, tiny.init_states(), None, Address(Start(INIT, 0)))
    outcomes = {v.kind: {w.outcome for w in judge(tiny, steps, {}) if w.kind == v.kind} for v in judge(tiny, steps, {})}
    assert outcomes["transition"] == {NO_STEP}
    assert outcomes["safety"] == {HOLDS}


def test_every_leaf_of_a_state_is_in_exactly_one_group(tiny) -> None:
    steps = walk(tiny, tiny.init_states(), None, Address(Start(INIT, 0), (1,)))
    state = to_itf_trace(tiny, [(s.action, s.state) for s in steps]).states[-1]
    grouped = groups(state)
    paths = [p for g in grouped for p in g.paths]
    assert sorted(paths) == sorted(all_leaves(state)) and len(paths) == len(set(paths))
    headings = [g.heading for g in grouped]
    # Broker 0 won the election: its controller module comes first among the modules, unfolded.
    assert headings[:4] == ["ZooKeeper", "Broker 0", "Broker 1",
                            "Active controller: broker 0's context and event queue"]
    assert [g.open for g in grouped if "controller module" in g.heading] == [False]


# ---- the page in a real browser -----------------------------------------------------------------


class _Page(HTMLParser):
    """What a test reads in a dumped DOM: links by class, state rows, property and goal outcomes."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.dom = dom
        self.links: dict[str, list[tuple[str, str]]] = {}
        self.rows: dict[str, str] = {}
        self.outcomes: dict[str, str] = {}
        self._link: tuple[str, str] | None = None
        self._row: str | None = None
        self._prop: str | None = None
        self._cell: str | None = None
        self._cells: list[str] = []
        self._text: list[str] = []
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("class"):
            self._link, self._text = (a["class"], a["href"]), []
        elif tag == "tr" and "data-path" in a:
            self._row, self._cells = a["data-path"], []
        elif tag == "tr" and "data-name" in a:
            self._prop, self._cells = a["data-name"], []
        elif tag == "td" and (self._row or self._prop):
            self._cell, self._text = a.get("class") or "", []

    def handle_data(self, data):
        self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._link:
            self.links.setdefault(self._link[0], []).append((self._link[1], "".join(self._text)))
            self._link = None
        elif tag == "td" and self._cell is not None:
            self._cells.append("".join(self._text))
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows[self._row] = self._cells[1]
            self._row = None
        elif tag == "tr" and self._prop:
            self.outcomes[self._prop] = self._cells[2] if len(self._cells) > 3 else self._cells[1]
            self._prop = None


class _Server:
    """A `kcm serve` subprocess and its address."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kcm.cli", "serve", "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], URL_TIMEOUT_S)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("http://127.0.0.1:"):
            self.stop()
            pytest.fail(f"kcm serve printed no address: {line!r} {self.proc.stderr.read()[-2000:]}")
        self.url = line.strip().rstrip("/")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def dom(self, href: str) -> _Page:
        """The page at `href` as headless Chromium builds it."""
        if CHROMIUM is None:
            pytest.fail("Chromium is not installed: install the Debian package `chromium` (`make test` does it "
                        "through scripts/sysdeps.sh)", pytrace=False)
        proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                               "--v=0", "--dump-dom", self.url + href], capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "<script" not in proc.stdout
        return _Page(proc.stdout)


@pytest.fixture(scope="module")
def tiny_server():
    server = _Server("--preset", "tiny")
    yield server
    server.stop()
    assert server.proc.returncode == 0   # SIGTERM ends a server as its work's end, not an interruption


@pytest.fixture(scope="module")
def v6_server(v6_trace):
    server = _Server("--trace", str(v6_trace))
    yield server
    server.stop()


def _shown_as(model: KafkaModel, steps: list) -> dict[str, str]:
    """The rows a page must show for the walk's last state: every leaf, as the engine formats it."""
    state = to_itf_trace(model, steps).states[-1]
    return {path: format_value(value) for path, value in all_leaves(state).items()}


def test_a_reviewer_steps_goes_back_and_branches(tiny_server, tiny) -> None:
    init = tiny.init_states()[0]
    start = tiny_server.dom("/")
    [(href, label)] = start.links["start"]
    assert label.startswith("cold start")
    page = tiny_server.dom(href)
    assert page.rows == _shown_as(tiny, [(None, init)])
    assert [text for _, text in page.links["action"]] == TINY_FIRST_ACTIONS
    # Which event each controller would process: both brokers have their Startup event queued.
    assert page.dom.count('<span class="meta">· Startup</span>') == 2
    # Step: broker 0's controller processes its Startup event.
    enabled = tiny.enabled_actions(init)
    page = tiny_server.dom(page.links["action"][1][0])
    after = tiny.step(init, enabled[1])
    assert page.rows == _shown_as(tiny, [(None, init), (enabled[1], after)])
    assert page.rows["zk.controller"] == "0"
    assert page.outcomes["ControllerFailsOver"] == "not met on this path"
    # Back: the link to the shorter path shows the initial state again.
    [(back, _)] = page.links["back"]
    assert tiny_server.dom(back).rows == _shown_as(tiny, [(None, init)])
    # Branch: from the path's first step, broker 1 crashes instead.
    steps = page.links["step"]
    assert [text for _, text in steps][0].startswith("cold start")
    branched = tiny_server.dom(tiny_server.dom(steps[0][0]).links["action"][2][0])
    crashed = tiny.step(init, enabled[2])
    assert branched.rows == _shown_as(tiny, [(None, init), (enabled[2], crashed)])
    assert branched.rows["broker1[up]"] == "False"


def test_a_counterexample_opens_at_its_violating_step(v6_server, v6_trace) -> None:
    origins = from_trace(v6_trace)
    start = v6_server.dom("/")
    trace_steps = start.links["trace-step"]
    # each step as Kafka names it: the event a controller processes after its label
    assert [text for _, text in trace_steps] == ["initial state", *V6_DESCRIBED]
    last = v6_server.dom(trace_steps[-1][0])
    assert last.rows == _shown_as(origins.model, list(origins.trace or ()))
    assert last.outcomes["IsrNonEmpty"] == "violated"
    assert last.outcomes["ControllerFailsOver"] == "met at step 4"
    assert last.rows["zk.partitions[0][isr]"] == "()"


def test_an_address_out_of_range_is_a_404_page_of_one_line(tiny_server) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(tiny_server.url + "/state?start=init:0&path=1.99", timeout=120)
    assert caught.value.code == 404
    body = caught.value.read().decode()
    assert "<p>step 2: there is no enabled action 99; the state before it enables 6 (0 to 5)</p>" in body
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(tiny_server.url + "/state?start=init:zero", timeout=120)
    assert caught.value.code == 400


# ---- bad input on the command line --------------------------------------------------------------


def _fails(capsys, args: list[str], code: int = 2) -> str:
    assert main(["serve", *args]) == code
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("kcm: error: "), err
    return err.strip()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_a_host_beyond_loopback_is_refused(capsys, host) -> None:
    assert _fails(capsys, ["--preset", "tiny", "--host", host]) == (
        f"kcm: error: --host {host}: kcm serve listens on a loopback address only (127.0.0.1, ::1 or localhost)")


def test_an_unknown_preset_is_refused(capsys) -> None:
    assert _fails(capsys, ["--preset", "huge", "--port", "0"]).startswith("kcm: error: unknown preset 'huge'")


def test_a_missing_or_corrupt_trace_is_refused(capsys, tmp_path) -> None:
    missing = tmp_path / "none.itf.json"
    assert _fails(capsys, ["--trace", str(missing), "--port", "0"]) == f"kcm: error: {missing}: no such file"
    corrupt = tmp_path / "corrupt.itf.json"
    corrupt.write_text("{not json", encoding="utf-8")
    assert _fails(capsys, ["--trace", str(corrupt), "--port", "0"]).startswith(f"kcm: error: {corrupt}: not JSON (")


def test_a_trace_of_another_model_is_refused_without_importing_it(capsys, tmp_path, v6_trace) -> None:
    doc = json.loads(v6_trace.read_text(encoding="utf-8"))
    doc["#meta"]["model_factory"] = "os:system"
    other = tmp_path / "other.itf.json"
    other.write_text(json.dumps(doc), encoding="utf-8")
    assert _fails(capsys, ["--trace", str(other), "--port", "0"]) == (
        f"kcm: error: --trace {other}: the trace names model 'kafka-2.6-controller/V6' (#meta.model_factory "
        "'os:system'); kcm serve steps through the Kafka controller model, whose traces kcm explore and kcm check "
        "write")


def test_a_trace_of_another_config_than_the_one_named_is_refused(capsys, v6_trace) -> None:
    err = _fails(capsys, ["--preset", "tiny", "--trace", str(v6_trace), "--port", "0"])
    assert err.startswith(f"kcm: error: --trace {v6_trace}: the trace was found in another config than the one given")


def test_a_trace_that_does_not_replay_is_refused(capsys, tmp_path, v6_trace) -> None:
    doc = json.loads(v6_trace.read_text(encoding="utf-8"))
    doc["#meta"]["actions"][2] = doc["states"][2]["#meta"]["action"] = "BrokerCrash(broker=1)"
    edited = tmp_path / "edited.itf.json"
    edited.write_text(json.dumps(doc), encoding="utf-8")
    err = _fails(capsys, ["--trace", str(edited), "--port", "0"])
    assert err.startswith(f"kcm: error: --trace {edited}: the trace does not replay through its model")


def test_a_port_in_use_is_refused(capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = _fails(capsys, ["--preset", "tiny", "--port", str(port)])
    assert err.startswith(f"kcm: error: --port {port}: cannot listen on 127.0.0.1:{port} (")
