"""The mutation report: JSON (`docs/mutation-schema.json`), text and JUnit XML.

The JSON report is a versioned contract like `kcm check`'s: fields only grow. It holds the score
(killed and crashed over all mutants but the equivalent suspects), the configs and their clean
baselines, the counts by status, by file and by operator, and one entry per mutant with its
outcome; survivors and timed-out mutants also carry their diff and a hint of the property family
that could catch them (`score.hint`).

JUnit XML has one test case per mutant: a survivor or a timed-out mutant fails (the hint is the
message) unless the triage explains it, an equivalent suspect or an explained survivor is
skipped (the reason is the message), a killed or crashed one passes. With a triage
(`triage.py`) the report also carries each survivor's explanation and the triage counts.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from kcm.checker.mutation import triage
from kcm.checker.mutation.baseline import Baseline
from kcm.checker.mutation.generate import Mutant
from kcm.checker.mutation.outcome import CRASHED, EQUIVALENT, KILLED, STATUSES, SURVIVED, TIMED_OUT, Outcome
from kcm.checker.mutation.score import hint, score, tally
from kcm.checker.mutation.search import Budget

SCHEMA_VERSION = 1


def build(mutants: Sequence[Mutant], outcomes: Sequence[Outcome], *, configs: Sequence[str],
          bases: Sequence[Baseline], engine: str, seed: int, sample: int | None, budget: Budget,
          generated: int, duration_s: float, complete: bool,
          versions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The JSON report of a run; `versions` (the tool's and the modelled system's, as
    `{"kcm_version": ..., "kafka_version": ...}`) follow `schema_version`."""
    by_id = {m.id: m for m in mutants}
    counts = {s: sum(o.status == s for o in outcomes) for s in STATUSES}
    entries = []
    for o in outcomes:
        e = o.to_json()
        m = by_id[o.id]
        e["description"] = m.description
        if o.status in (SURVIVED, TIMED_OUT):
            e["diff"] = m.diff
            e["hint"] = hint(m)
        entries.append(e)
    s = score(outcomes)
    return {
        "schema_version": SCHEMA_VERSION,
        **(versions or {}),
        "complete": complete,
        "engine": engine,
        "configs": [{"name": b.config, "distinct_states": b.distinct, "fingerprint_digest": b.digest}
                    for b in bases] if bases else [{"name": c} for c in configs],
        "seed": seed,
        "sample": sample,
        "budget": {"max_states": budget.max_states, "timeout_s": budget.timeout_s, "walks": budget.walks,
                   "depth": budget.depth, "liveness": budget.liveness},
        "generated": generated,
        "total": len(outcomes),
        "counts": counts,
        "unreached": sum(o.note == "unreached" for o in outcomes),
        "score": None if s is None else round(s, 4),
        "by_file": tally(outcomes, "file"),
        "by_operator": tally(outcomes, "operator"),
        "duration_s": round(duration_s, 3),
        "mutants": entries,
    }


def _table(title: str, rows: dict[str, dict[str, int]]) -> list[str]:
    head = f"{title:<18}{'total':>7}{'killed':>8}{'crashed':>9}{'survived':>10}{'equiv.':>8}{'timeout':>9}{'score':>8}"
    out = [head, "-" * len(head)]
    for name, r in rows.items():
        judged = r["total"] - r[EQUIVALENT]
        sc = f"{(r[KILLED] + r[CRASHED]) / judged:.0%}" if judged else "-"
        out.append(f"{name:<18}{r['total']:>7}{r[KILLED]:>8}{r[CRASHED]:>9}{r[SURVIVED]:>10}{r[EQUIVALENT]:>8}"
                   f"{r[TIMED_OUT]:>9}{sc:>8}")
    return out


def text(doc: dict[str, Any]) -> list[str]:
    """The report as lines of text: the score, the two tables, then every survivor with its diff."""
    c = doc["counts"]
    sc = "n/a" if doc["score"] is None else f"{doc['score']:.1%}"
    lines = [
        f"Mutation score: {sc} ({c[KILLED] + c[CRASHED]} killed, of them {c[CRASHED]} by a crash, "
        f"of {doc['total'] - c[EQUIVALENT]} non-equivalent mutants; "
        f"{doc['total']} run of {doc['generated']} generated)",
        f"Survived {c[SURVIVED]}, equivalent suspects {c[EQUIVALENT]} (of which {doc['unreached']} never reached), "
        f"timed out {c[TIMED_OUT]}.",
        "",
        *_table("file", doc["by_file"]),
        "",
        *_table("operator", doc["by_operator"]),
    ]
    explained = triage.text(doc)
    if explained:
        lines += ["", *explained]
    for e in doc["mutants"]:
        if e["status"] in (SURVIVED, TIMED_OUT):
            lines += ["", f"{e['status'].upper()} {e['id']}: {e['description']}", f"  hint: {e['hint']}"]
            if "triage" in e:
                lines.append(f"  triage: {e['triage']['verdict']}: {e['triage']['reason']}")
            lines += ["  " + x for x in e["diff"].rstrip("\n").splitlines()]
    return lines


def _explained(e: dict[str, Any]) -> bool:
    """A survivor or timed-out mutant whose triage entry decides it (an `open` one does not)."""
    return e["status"] in (SURVIVED, TIMED_OUT) and e.get("triage", {}).get("verdict", "open") != "open"


def junit(doc: dict[str, Any]) -> ET.Element:
    suites = ET.Element("testsuites", name="kcm mutate")
    mutants = doc["mutants"]
    failures = sum(e["status"] in (SURVIVED, TIMED_OUT) and not _explained(e) for e in mutants)
    skipped = sum(e["status"] == EQUIVALENT or _explained(e) for e in mutants)
    s = ET.SubElement(suites, "testsuite", name="mutants", tests=str(len(mutants)), failures=str(failures),
                      skipped=str(skipped))
    for e in mutants:
        case = ET.SubElement(s, "testcase", classname=f"kcm.mutants.{e['file'][:-3]}.{e['operator']}", name=e["id"],
                             time=f"{e['seconds']:.3f}")
        if _explained(e):  # a reviewer's argument stands in for a kill
            why = e["triage"]
            ET.SubElement(case, "skipped", message=f"{e['status']}, triaged {why['verdict']}: {why['reason']}")
        elif e["status"] == SURVIVED:
            ET.SubElement(case, "failure", message=f"survived: {e['hint']}").text = e["diff"]
        elif e["status"] == TIMED_OUT:
            ET.SubElement(case, "failure", message="timed out").text = e["diff"]
        elif e["status"] == EQUIVALENT:
            ET.SubElement(case, "skipped", message="equivalent suspect" + (" (never reached)" if e["note"] else ""))
    return suites
