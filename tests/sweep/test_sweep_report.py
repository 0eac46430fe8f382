"""The sweep's JUnit says a known Kafka 2.6 behaviour as `kcm check`'s does: a visible skip naming
the Finding, unless the property also fails in another scope."""

from __future__ import annotations

from kcm.sweep import report


def _doc(broken_in: list[dict]) -> dict:
    known = [{"scope": "b2-rf2-p1-shutdown-cold", "finding": "Findings 8", "steps": 11}]
    return {"grid": "t", "reason": "", "goals": [], "cut_by_budget": [], "not_run": [], "failed": [],
            "properties": [{"property": "NoShuttingDownJoinsIsr", "broken_in": broken_in, "known_in": known}]}


def test_a_known_behaviour_alone_is_a_skipped_case_naming_its_finding() -> None:
    suite = report.junit(_doc([]))[0]
    (case,) = suite.findall("testcase")
    (skip,) = case.findall("skipped")
    assert skip.get("message") == ("known Kafka 2.6 behaviour in 1 scope(s): b2-rf2-p1-shutdown-cold (Findings 8)")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "1")


def test_a_known_behaviour_does_not_hide_a_failure_elsewhere() -> None:
    broken = [{"scope": "b2-rf1-p1-shutdown-cold", "steps": 9, "trace": "x.itf.json"}]
    suite = report.junit(_doc(broken))[0]
    (case,) = suite.findall("testcase")
    assert case.find("skipped") is None and case.find("failure") is not None
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "0")
