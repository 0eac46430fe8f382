"""Results for CI: the JSON report (a versioned contract, `docs/report-schema.json`) and JUnit XML.

The JSON report is what CI scripts parse, so its shape only grows: a field is never renamed or
removed without bumping `schema_version`. Its fields: `schema_version`, `verdict` (`pass` /
`violation` / `incomplete`), `preset`, `engine`, `distinct_states`, `generated_states`, `depth`,
`symmetry`, `duration_s`, `violations` (each `invariant`, `kind`, `trace_length`, `trace_file`,
and `loop` for a lasso), `known_violations` (violations of properties the model lists as its known
violations, behaviour of the modelled system, which do not fail the verdict: each `invariant`,
`kind`, `trace_length`, `finding`), `goals` (name -> met), `coverage` (`table_edges_taken`,
`table_edges_total`, `untaken`, `illegal_requests`, `actions`), `proofs` (each `property`,
`brokers`, `result`, `seconds`), plus `variant` and the versions the caller passes (`kcm_version`,
`kafka_version`); with `kcm explore --liveness`, `liveness` (`liveness_section`).

JUnit XML has one test case per property checked (failed if violated), per goal (failed if not
met), per proof (failed unless proved) and one for table coverage, so CI dashboards show them.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kcm.checker.engine.result import CheckResult

SCHEMA_VERSION = 1


def verdict_of(result: CheckResult | None, proofs: Sequence[Any]) -> str:
    """The overall verdict: a failed proof or a violation wins, then an incomplete part."""
    if any(p.result == "failed" for p in proofs) or (result is not None and result.verdict == "violation"):
        return "violation"
    if any(p.result != "proved" for p in proofs) or (result is not None and result.verdict == "incomplete"):
        return "incomplete"
    return "pass"


def _edge(e: Any) -> str:
    return " ".join(str(x) for x in e) if isinstance(e, tuple) else str(e)


def build(result: CheckResult | None, proofs: Sequence[Any], *, preset: str, variant: str = "",
          trace_files: Mapping[str, str] | None = None, duration_s: float | None = None,
          versions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The JSON report as a dict; `versions` (the checker's and the modelled system's, as
    `{"kcm_version": ..., "kafka_version": ...}`) follow `schema_version`."""
    trace_files = trace_files or {}
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        **(versions or {}),
        "verdict": verdict_of(result, proofs),
        "preset": preset,
        "variant": variant,
        "engine": result.engine if result is not None else None,
        "proofs": [{"property": p.property, "brokers": p.brokers, "result": p.result,
                    "seconds": round(p.seconds, 4)} for p in proofs],
    }
    if result is None:
        doc.update(distinct_states=0, generated_states=0, depth=0, symmetry=False,
                   duration_s=round(duration_s or 0.0, 3), violations=[], known_violations=[], goals={},
                   coverage={"table_edges_taken": 0, "table_edges_total": 0, "untaken": [],
                             "illegal_requests": [], "actions": {}})
        return doc
    cov = result.coverage
    taken = [e for e in cov.edges_taken if e not in cov.outside_universe]
    doc.update(
        distinct_states=result.stats.distinct,
        generated_states=result.stats.generated,
        depth=result.stats.depth,
        symmetry=result.symmetry,
        duration_s=round(duration_s if duration_s is not None else result.stats.duration_s, 3),
        violations=[{"invariant": v.name, "kind": v.kind, "trace_length": v.trace_length,
                     "trace_file": trace_files.get(v.name),
                     **({"loop": v.loop} if v.loop is not None else {})} for v in result.violations],
        known_violations=[{"invariant": v.name, "kind": v.kind, "trace_length": v.trace_length,
                           "finding": result.known_reasons.get(v.name, "")} for v in result.known_violations],
        goals={name: g.met for name, g in result.goals.items()},
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


def junit(result: CheckResult | None, proofs: Sequence[Any], *, preset: str) -> ET.Element:
    """JUnit XML: one test suite per part (properties, goals, proofs, coverage)."""
    suites = ET.Element("testsuites", name=f"kcm check {preset}")

    def suite(name: str, cases: list[tuple[str, str | None, float]]) -> None:
        failures = sum(1 for _, msg, _ in cases if msg)
        s = ET.SubElement(suites, "testsuite", name=name, tests=str(len(cases)), failures=str(failures))
        for case, msg, secs in cases:
            c = ET.SubElement(s, "testcase", classname=f"kcm.{name}", name=case, time=f"{secs:.3f}")
            if msg:
                ET.SubElement(c, "failure", message=msg).text = msg

    if result is not None:
        violated = {v.name: v for v in result.violations}
        cases = []
        for name in result.checked:
            v = violated.get(name)
            cases.append((name, f"{v.kind} violated after {v.trace_length} steps" if v else None, 0.0))
        suite("properties", cases)
        suite("goals", [(g.name, None if g.met else "never met", 0.0) for g in result.goals.values()])
        untaken = result.coverage.untaken
        suite("coverage", [("every table edge taken", f"untaken: {', '.join(map(_edge, untaken))}" if untaken else None,
                            0.0)])
    if proofs:
        suite("proofs", [(f"{p.property} [{p.brokers} brokers]", None if p.result == "proved" else p.result,
                          p.seconds) for p in proofs])
    return suites


def write_junit(element: ET.Element, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(element).write(p, encoding="utf-8", xml_declaration=True)
    return p
