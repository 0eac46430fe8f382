"""The one report of a sweep, from the records of its scopes: `sweep.json`, `junit.xml` and the
terminal summary. Its shape is `docs/sweep-schema.json`.

Per property (every property some scope checked, in the order first checked): the scopes that
break it, each with the length of its shortest trace and the trace's file, shortest first; apart,
the scopes where it broke as a known Kafka 2.6 behaviour (as the explorer classifies them,
`CheckResult.known_violations`), with the Finding. Then the scopes cut by their budget, and the
scopes not run (an interruption).

With liveness (`kcm sweep --liveness`), EventuallyQuiescent, EventuallySettled and
QuiescenceAlwaysReachable are properties like the others: the scopes that break each, the shortest
lasso first (an entry's `loop` is where its cycle starts), and a known Kafka 2.6 loop in `known_in`
with its name (`known_loop`) and Finding. Each scope says its liveness verdict (held, violated,
not judged and why); a scope whose liveness search its budget cut is listed as cut, with the
search it was in.

Goals (`Sometimes`) are judged over the grid, as the disjoint runs of one config are
(`kcm.checker.engine.runs`): a goal is met when some scope meets it, and "not met" (a violation:
the grid is vacuous for it) only when every scope finished and none met it.

Verdict and exit code, as `kcm check`: "violation" (1) when some scope breaks a property or a goal
is not met; else
"incomplete" (3) when a scope was cut by its budget or not run, or the sweep was interrupted;
else "pass" (0). An interruption is "incomplete" whatever was found.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION
from kcm.sweep.grid import Grid

SCHEMA_VERSION = 1


def build(grid: Grid, records: dict[str, dict], *, engine: str, interrupted: bool, duration_s: float,
          failed: dict[str, str] | None = None, stopped_early: bool = False, liveness: bool = False) -> dict[str, Any]:
    """The report of `grid` from the records of its finished scopes (`kcm.sweep.results`);
    `failed`: scopes whose run failed (not judged), with why; `stopped_early`: a fail-fast sweep
    stopped at its first violation (the scopes left are not run); `liveness`: the scopes were
    judged by liveness too."""
    failed = failed or {}
    order = [s.name for s in grid.scopes]
    done = [records[name] for name in order if name in records]
    properties: dict[str, dict[str, list]] = {}
    for r in done:
        for name in r["checked"]:
            properties.setdefault(name, {"broken_in": [], "known_in": []})
        for v in r["violations"]:
            properties.setdefault(v["property"], {"broken_in": [], "known_in": []})["broken_in"].append(
                {"scope": r["scope"], "steps": v["steps"], "trace": v.get("trace")} | _lasso(v))
        for k in r["known"]:
            properties.setdefault(k["property"], {"broken_in": [], "known_in": []})["known_in"].append(
                {"scope": r["scope"], "steps": k["steps"], "finding": k["finding"], "trace": k.get("trace")}
                | _lasso(k))
    rows = []
    for name, found in properties.items():
        for key in ("broken_in", "known_in"):
            found[key].sort(key=lambda e: (e["steps"] is None, e["steps"] or 0))
        status = "violated" if found["broken_in"] else "known" if found["known_in"] else "held"
        rows.append({"property": name, "status": status, **found})
    goals: dict[str, list[str]] = {}
    for r in done:
        for name, met in r.get("goals", {}).items():
            goals.setdefault(name, [])
            if met:
                goals[name].append(r["scope"])
    whole = not interrupted and len(done) == len(order) and all(r["reason"] == "" for r in done)
    goal_rows = [{"goal": name, "status": "met" if met_in else "not met" if whole else "not reached (incomplete)",
                  "met_in": len(met_in), "first_met_in": met_in[0] if met_in else None}
                 for name, met_in in goals.items()]
    cut = [{"scope": r["scope"], "distinct": r["distinct"], "seconds": r["seconds"],
            "search": r.get("cut_in", "safety")} for r in done if r["reason"] == "budget"]
    not_run = [name for name in order if name not in records and name not in failed]
    if interrupted:
        verdict, reason = "incomplete", "interrupted"
    elif any(row["status"] == "violated" for row in rows) or any(g["status"] == "not met" for g in goal_rows):
        verdict, reason = "violation", ""
    elif cut or not_run or failed:
        verdict, reason = "incomplete", "budget" if cut else "not run" if not_run else "failed"
    else:
        verdict, reason = "pass", ""
    return {
        "schema_version": SCHEMA_VERSION, "grid": grid.name, "grid_version": grid.version,
        "description": grid.description, "engine": engine, "liveness": liveness, "verdict": verdict, "reason": reason,
        "budget": {"max_states": grid.budget.max_states, "seconds": grid.budget.seconds},
        "scopes_total": len(order), "scopes_finished": len(done), "dropped": grid.dropped,
        "distinct_states": sum(r["distinct"] for r in done), "duration_s": round(duration_s, 2),
        # a record written before the CPU time was kept counts 0 (`--resume` reads old folders)
        "cpu_s": round(sum(r.get("cpu_seconds", 0.0) for r in done), 2),
        "properties": rows, "goals": goal_rows, "cut_by_budget": cut, "not_run": not_run,
        "failed": [{"scope": s, "error": e} for s, e in failed.items()],
        "stopped_at_first_violation": stopped_early,
        "scopes": [{k: r[k] for k in ("scope", "verdict", "reason", "distinct", "generated", "depth", "seconds")}
                   | {"cpu_seconds": r.get("cpu_seconds", 0.0),
                      "violations": [v["property"] for v in r["violations"]],
                      "known": [k["property"] for k in r["known"]]}
                   | ({"liveness": _scope_liveness(r["liveness_check"])} if "liveness_check" in r else {})
                   for r in done],
    }


def _lasso(entry: dict) -> dict:
    """A liveness entry's lasso and known loop, as a record keeps them."""
    return {k: entry[k] for k in ("loop", "known_loop") if entry.get(k) is not None}


def _scope_liveness(check: dict) -> dict:
    """A scope's liveness in `sweep.json`: its verdict, why it was not judged, the states of its
    graph modulo controller epochs, the known loops it has (the record keeps the whole check)."""
    return {"verdict": check["verdict"], "reason": check["reason"], "states": check["graph"]["states"],
            "known_loops": [k["name"] for k in check["known_loops"]]}


def exit_code(doc: dict) -> int:
    if doc["reason"] == "interrupted":
        return EXIT_INCOMPLETE
    return {"pass": EXIT_PASS, "violation": EXIT_VIOLATION}.get(doc["verdict"], EXIT_INCOMPLETE)


def junit(doc: dict) -> ET.Element:
    """One test case per property, failing with the scopes that break it (a known behaviour
    elsewhere is skipped with its Finding, as in `kcm check`'s JUnit); a case for the scopes cut or
    not run, skipped."""
    suites = ET.Element("testsuites", name=f"kcm sweep {doc['grid']}")
    suite = ET.SubElement(suites, "testsuite", name="properties")
    failures = skipped = 0
    for row in doc["properties"]:
        case = ET.SubElement(suite, "testcase", classname=f"kcm.sweep.{doc['grid']}", name=row["property"])
        if row["broken_in"]:
            failures += 1
            scopes = ", ".join(f"{e['scope']} ({_steps(e['steps'])})" for e in row["broken_in"])
            failure = ET.SubElement(case, "failure", message=f"broken in {len(row['broken_in'])} scope(s): {scopes}")
            failure.text = "\n".join(f"{e['scope']}: {e['trace'] or _steps(e['steps'])}" for e in row["broken_in"])
        if row["known_in"]:
            # as `kcm check` says it (kcm.checker.engine.report): a visible skip naming the Finding,
            # unless the property also fails somewhere
            where = ", ".join(f"{e['scope']} ({e['known_loop'] + ', ' if e.get('known_loop') else ''}{e['finding']})"
                              for e in row["known_in"])
            if not row["broken_in"]:
                skipped += 1
                ET.SubElement(case, "skipped", message=f"known Kafka 2.6 behaviour in {len(row['known_in'])} "
                              f"scope(s): {where}")
            ET.SubElement(case, "system-out").text = f"known Kafka 2.6 behaviour in: {where}"
    for g in doc["goals"]:
        case = ET.SubElement(suite, "testcase", classname=f"kcm.sweep.{doc['grid']}", name=f"goal {g['goal']}")
        if g["status"] == "not met":
            failures += 1
            ET.SubElement(case, "failure", message="not met in any scope: the grid is vacuous for it")
        elif g["status"] != "met":
            skipped += 1
            ET.SubElement(case, "skipped", message=g["status"])
    unfinished = [c["scope"] for c in doc["cut_by_budget"]] + doc["not_run"] + [f["scope"] for f in doc["failed"]]
    if unfinished or doc["reason"] == "interrupted":
        skipped += 1
        case = ET.SubElement(suite, "testcase", classname=f"kcm.sweep.{doc['grid']}", name="every scope finished")
        ET.SubElement(case, "skipped", message=f"incomplete ({doc['reason'] or 'failed'}): "
                      f"{len(unfinished)} scope(s) unfinished: {', '.join(unfinished)}")
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    return suites


def summary(doc: dict, reports: list[str]) -> list[str]:
    """The terminal summary: the verdict, the counts, each broken property with its scopes and
    shortest trace, the known behaviours, the unfinished scopes, the reports."""
    head = f"{doc['verdict'].upper()} · kcm sweep · grid {doc['grid']} v{doc['grid_version']} · engine {doc['engine']}"
    if doc["reason"]:
        head += f" · incomplete: {doc['reason']}" if doc["verdict"] == "incomplete" else f" · {doc['reason']}"
    dropped = sum(doc["dropped"].values())
    lines = [head, f"  {doc['scopes_finished']} of {doc['scopes_total']} scopes finished"
             + (f" ({dropped} combinations dropped as impossible)" if dropped else "")
             + f", {doc['distinct_states']:,} distinct states, {doc['duration_s']:.1f} s"
             + f" ({doc['cpu_s']:.0f} CPU s in the scopes' runs)"]
    for row in doc["properties"]:
        if row["broken_in"]:
            first = row["broken_in"][0]
            lines.append(f"  {row['property']}: violated in {len(row['broken_in'])} scope(s); shortest "
                         f"{_steps(first['steps'], first.get('loop'))} in {first['scope']}"
                         + (f": {first['trace']}" if first["trace"] else ""))
    for row in doc["properties"]:
        loops: dict[str, list[dict]] = {}   # a property's known loops apart, its known behaviour as one
        for e in row["known_in"]:
            loops.setdefault(e.get("known_loop", ""), []).append(e)
        for loop, entries in loops.items():
            first = entries[0]
            what = f"known Kafka 2.6 loop {loop}" if loop else "known Kafka 2.6 behaviour"
            lines.append(f"  {row['property']}: {what} ({first['finding']}) in {len(entries)} scope(s); "
                         f"shortest {_steps(first['steps'], first.get('loop'))} in {first['scope']}")
    if doc.get("liveness"):
        verdicts = [s["liveness"]["verdict"] for s in doc["scopes"] if "liveness" in s]
        lines.append(f"  liveness: held in {verdicts.count('held')} scope(s), violated in "
                     f"{verdicts.count('violated')}, not judged in {verdicts.count('not judged')}")
    for g in doc["goals"]:
        if g["status"] == "not met":
            lines.append(f"  goal {g['goal']}: not met in any scope (the grid is vacuous for it)")
    if doc["cut_by_budget"]:
        lines.append("  cut by the budget: " + ", ".join(
            c["scope"] + (" (liveness search)" if c.get("search") == "liveness" else "") for c in doc["cut_by_budget"]))
    if doc["not_run"]:
        lines.append(f"  not run: {len(doc['not_run'])} scope(s)"
                     + (" (--fail-fast: stopped at the first violation)" if doc.get("stopped_at_first_violation")
                        else ""))
    for f in doc["failed"]:
        lines.append(f"  failed: {f['scope']}: {f['error']}")
    lines.append("  reports: " + ", ".join(reports))
    return lines


def _steps(steps: int | None, loop: int | None = None) -> str:
    if steps is None:
        return "a goal never met"
    return f"{steps} steps" if loop is None else f"lasso: {loop} steps to a cycle of {steps - loop}"
