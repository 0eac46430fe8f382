"""The outputs of a run say one thing: each property's outcome is computed once
(`kcm.checker.engine.result.Outcome`) and the terminal, `report.json`, `junit.xml` and
`report.html` render it, known Kafka 2.6 behaviours included; the counts are the same everywhere;
every checking command ends with a short summary, all it prints with `--quiet`; `kcm fuzz` and
`kcm prove` write JSON and JUnit like `kcm check`; an interruption in any phase of `kcm check`
still writes the reports."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kcm.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: A config under which Kafka 2.6's Finding 8 shows: a controlled shutdown on two brokers.
SHUTDOWN = ("brokers = 2\nreplication_factor = 2\nmax_broker_crashes = 0\nmax_session_expiries = 0\n"
            "max_controlled_shutdowns = 1\n")
FINDING_8 = "Findings 8: a shutting-down broker rejoins the ISR"


def _validate(doc: dict, schema: str) -> None:
    """`doc` against docs/`schema`, with the report schema's shared definitions resolvable."""
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    schemas = {name: json.loads((DOCS / name).read_text()) for name in ("report-schema.json", schema)}
    registry = referencing.Registry().with_resources(
        (s["$id"], referencing.Resource.from_contents(s)) for s in schemas.values())
    jsonschema.Draft202012Validator(schemas[schema], registry=registry).validate(doc)


def _cases(junit: ET.Element, suite: str) -> dict[str, tuple[str | None, str]]:
    """{case name: (how it did not pass: "failure", "skipped" or None, its message)} of one suite."""
    cases = {}
    for case in junit.find(f"testsuite[@name='{suite}']"):
        child = next(iter(case), None)
        cases[case.get("name")] = (None, "") if child is None else (child.tag, child.get("message"))
    return cases


def _page_outcomes(page: str) -> dict[str, str]:
    """{name: the outcome cell's text} of the page's property and goal tables."""
    import re

    rows = re.findall(r"<tr><td class=mono>([^<]+)</td>(?:<td>[^<]*</td><td>[^<]*</td>)?<td class=\"\w+\">([^<]*)</td>",
                      page)
    return {name: text for name, text in rows}


def _explore(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "kcm.cli", "explore", *args, "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, out


def _agree(stdout: str, out: Path) -> dict:
    """Every output renders the report's outcomes, and the counts, the same way; returns the report."""
    report = json.loads((out / "report.json").read_text())
    _validate(report, "report-schema.json")
    junit = ET.parse(out / "junit.xml").getroot()
    page = (out / "report.html").read_text()
    shown = _page_outcomes(page)
    cases = {**_cases(junit, "properties"), **_cases(junit, "goals")}
    assert list(cases) == [o["name"] for o in report["outcomes"]]
    for o in report["outcomes"]:
        how, message = cases[o["name"]]
        expected = {"held": None, "met": None, "violated": "failure", "not met": "failure"}.get(o["status"], "skipped")
        assert how == expected, o
        assert o["text"] in message or how is None, (o, message)
        assert shown[o["name"]] == o["text"], o
    summary = report["summary"]
    assert f"<p><b>{summary}</b></p>" in page and f"  {summary}" in stdout.splitlines()
    counted = sum(n for group in report["counts"].values() for n in group.values())
    assert counted == len(report["outcomes"]) == sum(int(s.get("tests")) for s in junit
                                                     if s.get("name") in ("properties", "goals"))
    return report


def test_a_known_kafka_behaviour_is_one_outcome_in_every_output(tmp_path) -> None:
    config = tmp_path / "shutdown.toml"
    config.write_text(SHUTDOWN)
    code, stdout, out = _explore(tmp_path, "--config", str(config))
    assert code == 0
    report = _agree(stdout, out)
    known = [o for o in report["outcomes"] if o["status"] == "known"]
    assert [(o["name"], o["steps"], o["finding"]) for o in known] == [("NoShuttingDownJoinsIsr", 14, FINDING_8)]
    assert known[0]["text"] == f"known Kafka 2.6 behaviour: {FINDING_8} (violated after 14 steps)"
    assert report["summary"] == "58 invariants held, 1 known 2.6 behaviour, 2 goals met, no deadlock"
    # In JUnit a visible skip with the Finding; on the terminal listed as known with its trace file.
    junit = ET.parse(out / "junit.xml").getroot()
    how, message = _cases(junit, "properties")["NoShuttingDownJoinsIsr"]
    assert how == "skipped" and message.startswith(f"known Kafka 2.6 behaviour: {FINDING_8}")
    assert junit.find("testsuite[@name='properties']").get("skipped") == "1"
    trace = out / "known_NoShuttingDownJoinsIsr.itf.json"
    assert f"  NoShuttingDownJoinsIsr: {known[0]['text']}: {trace}" in stdout.splitlines()
    assert known[0]["trace_file"] == str(trace) and trace.exists()


def test_a_violation_is_one_outcome_in_every_output(tmp_path) -> None:
    code, stdout, out = _explore(tmp_path, "--preset", "v6")
    assert code == 1
    report = _agree(stdout, out)
    assert [(o["name"], o["status"], o["steps"]) for o in report["outcomes"] if o["status"] == "violated"] == [
        ("IsrNonEmpty", "violated", 4)]
    # The search stopped at the violation: nothing else is claimed to hold.
    assert report["summary"] == ("1 invariant violated, 59 invariants not violated in the explored part, "
                                 "1 goal met, 1 goal not reached, no deadlock in the explored part")
    assert f"  IsrNonEmpty: violated after 4 steps: {out / 'IsrNonEmpty.itf.json'}" in stdout.splitlines()


def test_a_passing_run_counts_invariants_goals_and_deadlock_apart_on_short_lines(tmp_path) -> None:
    code, stdout, out = _explore(tmp_path, "--preset", "tiny")
    assert code == 0
    report = _agree(stdout, out)
    assert report["summary"] == "60 invariants held, 2 goals met, no deadlock"
    assert report["counts"] == {"invariant": {"held": 60}, "deadlock": {"held": 1}, "goal": {"met": 2}}
    assert max(len(line) for line in stdout.splitlines() if str(out) not in line) <= 150


def test_quiet_prints_only_the_summary(tmp_path) -> None:
    code, stdout, out = _explore(tmp_path, "--preset", "tiny", "--quiet")
    assert code == 0
    assert stdout.splitlines() == [
        "PASS · kcm explore · preset tiny",
        "  10,294 distinct states, 30,669 generated, depth 30",
        "  60 invariants held, 2 goals met, no deadlock",
        f"  reports: {out / 'report.json'}, {out / 'junit.xml'}, {out / 'report.html'}"]


def test_check_quiet_prints_only_the_summary_and_no_progress(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "kcm.cli", "check", "--preset", "v6", "--engine", "local",
                           "--proof-brokers", "2", "--quiet", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0] == "VIOLATION · kcm check · preset v6 · variant V6"
    assert "  82 of 84 proofs proved, 2 failed" in lines and len(lines) == 7, lines


def test_fuzz_writes_its_reports_and_a_summary(tmp_path, capsys) -> None:
    assert main(["fuzz", "--preset", "tiny", "--examples", "5", "--steps", "10", "--out", str(tmp_path),
                 "--quiet"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    _validate(report, "fuzz-schema.json")
    assert (report["verdict"], report["failure"], report["run"]["examples"]) == ("pass", None, 5)
    # every invariant is judged, those a Finding may break included: a violation is excused only
    # when it is the Finding's own (tests/checker/test_stateful.py shows one reported as known)
    assert report["summary"] == "62 invariants held"
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    cases = _cases(junit, "fuzz")
    assert len(cases) == 62 and cases["ImplementationMatchesModel"] == (None, "")
    assert cases["NoShuttingDownJoinsIsr"] == (None, "")
    stdout = capsys.readouterr().out.splitlines()
    assert stdout[0] == "PASS · kcm fuzz · preset tiny" and stdout[1] == f"  {report['summary']}"


def test_fuzz_reports_a_failure_in_json_and_junit(tmp_path, capsys) -> None:
    assert main(["fuzz", "--variant", "V6", "--out", str(tmp_path), "--quiet"]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    _validate(report, "fuzz-schema.json")
    failure = report["failure"]
    assert (report["verdict"], failure["property"], failure["length"]) == ("violation", "IsrNonEmpty", 4)
    assert Path(failure["trace_file"]).exists()
    cases = _cases(ET.parse(tmp_path / "junit.xml").getroot(), "fuzz")
    assert cases["IsrNonEmpty"] == ("failure", "safety violated after 4 steps")


def test_prove_writes_its_reports_and_a_summary(tmp_path, capsys) -> None:
    assert main(["prove", "--brokers", "2", "--variant", "KAFKA-3670", "--out", str(tmp_path), "--quiet"]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    _validate(report, "prove-schema.json")
    failed = [p for p in report["proofs"] if p["result"] == "failed"]
    assert (report["verdict"], len(report["proofs"]), len(failed)) == ("violation", 84, 6)
    assert all(p["counterexample"]["inputs"] for p in failed)
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert junit.find("testsuite[@name='proofs']").get("failures") == "6"
    assert capsys.readouterr().out.splitlines() == [
        "VIOLATION · kcm prove · rules V7 · 1..2 brokers", "  78 of 84 proofs proved, 6 failed (3 of 42 properties)",
        f"  reports: {tmp_path / 'report.json'}, {tmp_path / 'junit.xml'}"]


@pytest.mark.parametrize("command", [["fuzz", "--preset", "tiny"], ["prove"]])
def test_fuzz_and_prove_check_their_output_places_first(tmp_path, command, capsys) -> None:
    same = tmp_path / "same"
    assert main([*command, "--out", str(tmp_path), "--json", str(same), "--junit", str(same)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "are one file" in err[0] and not same.exists()
    assert main([*command, "--json", "/proc/x/r.json"]) == 2
    assert "--json /proc/x/r.json: cannot write there" in capsys.readouterr().err


def test_sigterm_during_the_proofs_of_check_writes_incomplete_reports(tmp_path) -> None:
    run = subprocess.Popen([sys.executable, "-m", "kcm.cli", "check", "--preset", "tiny", "--engine", "local",
                            "--proof-brokers", "12", "--out", str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.stdout is not None
    for line in run.stdout:   # the proof phase's header: the proofs are under way
        if line.startswith("3. Proofs of the election rules"):
            break
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=300)
    assert run.returncode == 3, err
    assert "Traceback" not in err and "INCOMPLETE · kcm check · preset tiny · incomplete: interrupted" in out
    report = json.loads((tmp_path / "report.json").read_text())
    _validate(report, "report-schema.json")
    assert (report["verdict"], report["reason"], report["engine"]) == ("incomplete", "interrupted", None)
    assert len(report["proofs"]) < 42 * 12 and report["distinct_states"] == 0
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert _cases(junit, "run") == {"every phase finished": ("skipped", "incomplete: interrupted")}
    assert len(junit.findall("testsuite/testcase")) == 1 + len(report["proofs"])
    assert "INCOMPLETE" in (tmp_path / "report.html").read_text()


def test_a_liveness_property_a_known_loop_breaks_is_known_and_an_unchecked_one_not_judged() -> None:
    """The liveness check's own words become outcomes too: a property a known Kafka 2.6 loop
    breaks is known (with the loop's Finding), and a check that could not run judges nothing."""
    from dataclasses import replace
    from types import SimpleNamespace

    from kcm.checker.engine.bfs import explore
    from kcm.checker.engine.liveness import LIVENESS_PROPERTIES
    from kcm.checker.engine.report import junit_case
    from kcm.checker.engine.result import count_text
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm.config import load_preset

    result = explore(KafkaModel(load_preset("tiny")))
    loop = SimpleNamespace(breaks="EventuallyQuiescent", finding="Findings 10", known="controller-move",
                           loop=3, trace=(None,) * 6)
    checked = SimpleNamespace(verdict="pass", checked=LIVENESS_PROPERTIES, known=(loop,), reason="")
    live = replace(result, checked=result.checked + LIVENESS_PROPERTIES, extra={"liveness": checked})
    by_name = {o.name: o for o in live.outcomes()}
    known = by_name["EventuallyQuiescent"]
    assert (known.category, known.status, known.steps, known.loop) == ("liveness", "known", 5, 3)
    message = "known Kafka 2.6 behaviour: Findings 10, loop controller-move (violated after 5 steps)"
    assert junit_case(known) == ("EventuallyQuiescent", "skipped", message, 0.0)
    assert by_name["EventuallySettled"].status == "held"
    assert count_text(live.outcomes()) == ("60 invariants held, 1 known 2.6 behaviour, 2 liveness properties held, "
                                           "2 goals met, no deadlock")
    unchecked = SimpleNamespace(verdict="not checked", checked=LIVENESS_PROPERTIES, known=(), reason="why")
    cut = replace(live, extra={"liveness": unchecked})
    assert [o.text() for o in cut.outcomes() if o.category == "liveness"] == ["not judged: why"] * 3
