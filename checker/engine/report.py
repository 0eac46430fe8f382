"""Results for CI: the JSON report (a versioned contract, `docs/report-schema.json`) and JUnit XML.

The JSON report is what CI scripts parse, so its shape only grows: a field is never renamed or
removed without bumping `schema_version`. Its fields: `schema_version`, `verdict` (`pass` /
`violation` / `incomplete`), `preset`, `engine`, `distinct_states`, `generated_states`, `depth`,
`states_cut_by_bound` (states with no successor only because a bound of the model cut their steps,
`Stats.cut`: not deadlocks), `symmetry`, `duration_s`, `violations` (each `invariant`, `kind`,
`trace_length`, `trace_file`, and `loop` for a lasso), `known_violations` (violations of properties
the model lists as its known violations, behaviour of the modelled system, which do not fail the
verdict: each `invariant`, `kind`, `trace_length`, `finding`), `goals` (name -> met), `coverage`
(`table_edges_taken`, `table_edges_total`, `untaken`, `illegal_requests`, `actions`), `proofs`
(each `property`, `brokers`, `result`, `seconds`), plus `variant` and the versions the caller
passes (`kcm_version`, `kafka_version`); with `kcm explore --liveness`, `liveness`
(`liveness_section`). `outcomes` holds each property's one outcome
(`kcm.checker.engine.result.Outcome`: `name`, `category`, `status`, `text`, and `kind`, `steps`,
`finding`, `trace_file` where they apply), `counts` the same counted by category and status, and
`summary` the counts in words; `reason` says why a run is incomplete ("interrupted", "max_depth",
...).

JUnit XML renders the same outcomes: one test case per property checked, failed if violated,
*skipped* with the Finding as its message if it broke as a known behaviour of the modelled system (so that a
dashboard shows it), skipped too when an incomplete run could not judge it; one per goal (failed
if a complete run never met it, skipped if an incomplete run did not reach it), one per proof
(failed unless proved) and one for table coverage.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kcm.checker.engine.result import GOAL, HELD, KNOWN, MET, VIOLATED, CheckResult, Outcome, count_text, counts

SCHEMA_VERSION = 1


def verdict_of(result: CheckResult | None, proofs: Sequence[Any], reason: str = "") -> str:
    """The overall verdict: a failed proof or a violation wins, then an incomplete part (a proof
    not proved, an exploration cut short, or a run stopped for `reason` before its last phase)."""
    if any(p.result == "failed" for p in proofs) or (result is not None and result.verdict == "violation"):
        return "violation"
    if (reason or any(p.result != "proved" for p in proofs)
            or (result is not None and result.verdict == "incomplete")):
        return "incomplete"
    return "pass"


def _reason(verdict: str, result: CheckResult | None, proofs: Sequence[Any], reason: str) -> str:
    """Why an incomplete run is incomplete; empty for any other verdict."""
    if verdict != "incomplete":
        return ""
    if reason:
        return reason
    if result is not None and result.verdict == "incomplete":
        return result.reason or "cut short"
    return "a proof timed out" if any(p.result == "unknown" for p in proofs) else "cut short"


def outcome_entry(o: Outcome, trace_files: Mapping[str, str]) -> dict[str, Any]:
    """One `outcomes` entry of the report."""
    trace = trace_files.get(f"known {o.name}" if o.status == KNOWN else o.name) if o.steps is not None else None
    entry: dict[str, Any] = {"name": o.name, "category": o.category, "status": o.status, "text": o.text()}
    entry.update({k: v for k, v in (("kind", o.kind), ("steps", o.steps), ("loop", o.loop),
                                    ("finding", o.finding), ("trace_file", trace)) if v not in (None, "")})
    return entry


def _edge(e: Any) -> str:
    return " ".join(str(x) for x in e) if isinstance(e, tuple) else str(e)


def build(result: CheckResult | None, proofs: Sequence[Any], *, preset: str, variant: str = "",
          trace_files: Mapping[str, str] | None = None, duration_s: float | None = None,
          versions: Mapping[str, str] | None = None, reason: str = "") -> dict[str, Any]:
    """The JSON report as a dict; `versions` (the checker's and the modelled system's, as
    `{"kcm_version": ..., "kafka_version": ...}`) follow `schema_version`. `reason` says why the
    run stopped before its last phase (an interruption during the proofs: "interrupted")."""
    trace_files = trace_files or {}
    verdict = verdict_of(result, proofs, reason)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        **(versions or {}),
        "verdict": verdict,
        "reason": _reason(verdict, result, proofs, reason),
        "preset": preset,
        "variant": variant,
        "engine": result.engine if result is not None else None,
        "proofs": [{"property": p.property, "brokers": p.brokers, "result": p.result,
                    "seconds": round(p.seconds, 4)} for p in proofs],
    }
    if result is None:
        doc.update(distinct_states=0, generated_states=0, depth=0, states_cut_by_bound=0, symmetry=False,
                   duration_s=round(duration_s or 0.0, 3), violations=[], known_violations=[], goals={},
                   coverage={"table_edges_taken": 0, "table_edges_total": 0, "untaken": [],
                             "illegal_requests": [], "actions": {}}, outcomes=[], counts={}, summary="")
        return doc
    cov = result.coverage
    taken = [e for e in cov.edges_taken if e not in cov.outside_universe]
    doc.update(
        distinct_states=result.stats.distinct,
        generated_states=result.stats.generated,
        depth=result.stats.depth,
        states_cut_by_bound=result.stats.cut,
        symmetry=result.symmetry,
        duration_s=round(duration_s if duration_s is not None else result.stats.duration_s, 3),
        violations=[{"invariant": v.name, "kind": v.kind, "trace_length": v.trace_length,
                     "trace_file": trace_files.get(v.name),
                     **({"loop": v.loop} if v.loop is not None else {})} for v in result.violations],
        known_violations=[{"invariant": v.name, "kind": v.kind, "trace_length": v.trace_length,
                           "finding": result.known_reasons.get(v.name, "")} for v in result.known_violations],
        goals={name: g.met for name, g in result.goals.items()},
        outcomes=[outcome_entry(o, trace_files) for o in result.outcomes()],
        counts=counts(result.outcomes()),
        summary=count_text(result.outcomes()),
        coverage={
            "table_edges_taken": len(taken),
            "table_edges_total": cov.edges_total,
            "untaken": [_edge(e) for e in cov.untaken],
            "illegal_requests": [_edge(e) for e in cov.outside_universe],
            "actions": {a.name: {"evaluations": a.evaluations, "new_states": a.new_states} for a in cov.actions},
        },
    )
    live = result.extra.get("liveness")
    if live is not None:
        doc["liveness"] = liveness_section(live, trace_files)
    return doc


def liveness_section(live: Any, trace_files: Mapping[str, str]) -> dict[str, Any]:
    """The report's `liveness` object (a `kcm.checker.engine.liveness.LivenessResult`): whether it was
    checked, each property's outcome, the known loops listed, and the kept graph's size and cost."""
    violated = {v.name for v in live.violations}
    checked = live.verdict != "not checked"
    return {
        "checked": checked,
        "reason": live.reason,
        "properties": {name: ("not checked" if not checked else "violated" if name in violated else "holds")
                       for name in live.checked},
        "cyclic_components": live.cyclic_components,
        "fair_components": live.fair_components,
        "unsettleable_states": live.unsettleable_states,
        "pruned_states": live.pruned_states,
        "undecided_states": live.undecided_states,
        "undecided_components": live.undecided_components,
        "quotient": live.quotient,
        "known_loops": [{"name": k.known, "finding": k.finding, "property": k.breaks, "prefix_length": k.prefix_length,
                         "cycle_length": k.cycle_length, "trace_file": trace_files.get(f"known {k.known}")}
                        for k in live.known],
        "graph": {"states": live.nodes, "edges": live.edges, "healing_edges": live.healing_edges,
                  "bytes": live.graph_bytes, "backend": live.backend},
        "duration_s": round(live.duration_s, 3),
    }


def write_json(doc: Mapping[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return p


def junit(result: CheckResult | None, proofs: Sequence[Any], *, preset: str, title: str = "kcm check",
          reason: str = "") -> ET.Element:
    """JUnit XML: one test suite per part (properties, goals, coverage, proofs), each case the
    rendering of one outcome (`junit_case`); a run stopped for `reason` before its last phase
    starts with a suite "run" whose one case, skipped, says so (a dashboard shows a run with
    nothing else to list as skipped, not as passed)."""
    suites = ET.Element("testsuites", name=f"{title} {preset}")
    if reason:
        suite(suites, "run", [("every phase finished", "skipped", f"incomplete: {reason}", 0.0)])
    if result is not None:
        outcomes = result.outcomes()
        suite(suites, "properties", [junit_case(o) for o in outcomes if o.category != GOAL])
        suite(suites, "goals", [junit_case(o) for o in outcomes if o.category == GOAL])
        untaken = result.coverage.untaken
        suite(suites, "coverage", [("every table edge taken", "failure" if untaken else None,
                                    f"untaken: {', '.join(map(_edge, untaken))}" if untaken else "", 0.0)])
    if proofs:
        suite(suites, "proofs", [(f"{p.property} [{p.brokers} brokers]",
                                  None if p.result == "proved" else "failure" if p.result == "failed" else "skipped",
                                  p.result, p.seconds) for p in proofs])
    return suites


#: One JUnit case: its name, "failure", "skipped" or None (passed), the message, the seconds.
Case = tuple[str, str | None, str, float]


def junit_case(o: Outcome) -> Case:
    """An outcome as a JUnit case: a violation or an unmet goal fails, a known behaviour and
    anything an incomplete run could not judge is skipped with the outcome's words as message."""
    if o.failed:
        return o.name, "failure", (f"{o.kind} " if o.kind and o.status == VIOLATED else "") + o.text(), 0.0
    if o.status in (HELD, MET):
        return o.name, None, "", 0.0
    return o.name, "skipped", o.text(), 0.0


def suite(parent: ET.Element, name: str, cases: Sequence[Case]) -> ET.Element:
    """A `<testsuite>` of `cases` under `parent`, with its counts."""
    failures = sum(1 for _, how, _, _ in cases if how == "failure")
    skipped = sum(1 for _, how, _, _ in cases if how == "skipped")
    s = ET.SubElement(parent, "testsuite", name=name, tests=str(len(cases)), failures=str(failures),
                      skipped=str(skipped))
    for case, how, msg, secs in cases:
        c = ET.SubElement(s, "testcase", classname=f"kcm.{name}", name=case, time=f"{secs:.3f}")
        if how is not None:
            ET.SubElement(c, how, message=msg).text = msg
    return s


def write_junit(element: ET.Element, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(element).write(p, encoding="utf-8", xml_declaration=True)
    return p
