"""The mutation report: JSON (`docs/mutation-schema.json`), text and JUnit XML.

The JSON report is a versioned contract like `kcm check`'s: fields only grow. It holds the score
(killed and crashed over all mutants but the equivalent suspects) and what it stands on (`scored`
of the `total` run; the `unreached` ones, whose lines no config's clean run executes, are not
scored), the configs with their clean baselines and how many of the `planned` mutants each
reaches (a `warnings` line for a config that reaches under half: a score on it says little of the
model), whether the run was `interrupted` (after `total` of `planned` mutants: the score is the
score so far), the counts by status, by file and by operator, and one entry per mutant with its
outcome; survivors and timed-out mutants also carry their diff and a hint of the property family
that could catch them (`score.hint`).

JUnit XML has one test case per mutant: a survivor or a timed-out mutant fails (the hint is the
message) unless the triage explains it, an equivalent suspect or an explained survivor is
skipped (the reason is the message), a killed or crashed one passes; an interrupted run adds
one test case in error that says how far it got. With a triage (`triage.py`) the report also
carries each survivor's explanation and the triage counts.
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
          generated: int, duration_s: float, complete: bool, interrupted: bool = False,
          versions: Mapping[str, str] | None = None, grid: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON report of a run of `mutants` (the ones planned; `outcomes` holds those that ran,
    fewer when `interrupted`); `versions` (the tool's and the modelled system's, as
    `{"kcm_version": ..., "kafka_version": ...}`) follow `schema_version`. A run on a grid's scopes
    (`by_config.py`) gives `grid`: its name, version, scope count and the scopes skipped because
    the clean model breaks a property there (`skipped`, name and reason); `configs` then lists
    the scopes explored, and a scope that reaches few mutants is no warning (each scope is small
    on purpose: the grid reaches what its scopes reach together)."""
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
    reached = [_reached(b, mutants) for b in bases]
    warnings = [] if grid else [_few(b.config, r, len(mutants)) for b, r in zip(bases, reached)
                                if r is not None and 2 * r < len(mutants)]
    warnings += [f"scope {name} skipped: {why}" for name, why in (grid or {}).get("skipped", ())]
    doc = {
        "schema_version": SCHEMA_VERSION,
        **(versions or {}),
        "complete": complete,
        "interrupted": interrupted,
        "engine": engine,
        "configs": [{"name": b.config, "distinct_states": b.distinct, "fingerprint_digest": b.digest, "reaches": r}
                    for b, r in zip(bases, reached)] if bases else [{"name": c} for c in configs],
        "seed": seed,
        "sample": sample,
        "budget": {"max_states": budget.max_states, "timeout_s": budget.timeout_s, "walks": budget.walks,
                   "depth": budget.depth, "liveness": budget.liveness},
        "generated": generated,
        "planned": len(mutants),
        "total": len(outcomes),
        "counts": counts,
        "unreached": sum(o.note == "unreached" for o in outcomes),
        "scored": len(outcomes) - counts[EQUIVALENT],
        "score": None if s is None else round(s, 4),
        "warnings": warnings,
        "by_file": tally(outcomes, "file"),
        "by_operator": tally(outcomes, "operator"),
        "duration_s": round(duration_s, 3),
        "mutants": entries,
    }
    if grid is not None:
        doc["grid"] = {"name": grid["name"], "version": grid["version"], "scopes": grid["scopes"],
                       "explored": len(bases), "skipped": [{"scope": n, "reason": why} for n, why in grid["skipped"]]}
    return doc


def _reached(base: Baseline, mutants: Sequence[Mutant]) -> int | None:
    """How many of `mutants` the clean run on `base`'s config executes (None when it does not know:
    random walks record no lines)."""
    return None if base.covered is None else sum(base.reaches(m) for m in mutants)


def _few(config: str, reached: int, planned: int) -> str:
    return (f"config {config} reaches only {reached} of {planned} mutants (under half): the others are not "
            "judged there; add a config that runs more of the model (a preset with more faults and admin operations)")


def headline(doc: Mapping[str, Any]) -> str:
    """The score and what it stands on; for an interrupted run, how far it got and the score so far."""
    c = doc["counts"]
    sc = "n/a" if doc["score"] is None else f"{doc['score']:.1%}"
    what = (f"{sc}: {c[KILLED] + c[CRASHED]} killed ({c[CRASHED]} by a crash) of the {doc['scored']} mutants it "
            f"stands on, of {doc['total']} run ({doc['generated']} generated)")
    if doc.get("interrupted"):
        return f"Interrupted after {doc['total']} of {doc['planned']} mutants; mutation score so far: {what}"
    return f"Mutation score: {what}"


def _reach(doc: Mapping[str, Any]) -> list[str]:
    """Per config, how many of the planned mutants it reaches, and a warning for a config that reaches few."""
    known = [(e["name"], e["reaches"]) for e in doc["configs"] if e.get("reaches") is not None]
    if not known:
        return []
    if "grid" in doc:
        g = doc["grid"]
        most = max(known, key=lambda k: k[1])
        return [f"Grid {g['name']} (version {g['version']}): {g['explored']} of its {g['scopes']} scopes explored "
                f"(a run stops once every mutant is killed), {len(g['skipped'])} skipped; each explored scope reaches "
                f"{min(r for _, r in known)} to {most[1]} of the {doc['planned']} mutants ({most[0]} the most; "
                "every scope's count in the JSON report)."] + [f"warning: {w}" for w in doc.get("warnings", ())]
    lines = ["Mutants reached (the clean run executes their lines), by config: "
             + ", ".join(f"{name} {r} of {doc['planned']}" for name, r in known) + "."]
    return lines + [f"warning: {w}" for w in doc.get("warnings", ())]


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
    lines = [
        headline(doc),
        f"Not scored: {doc['unreached']} never reached by any config, {c[EQUIVALENT] - doc['unreached']} other "
        f"equivalent suspect(s). Survived {c[SURVIVED]}, timed out {c[TIMED_OUT]}.",
        *_reach(doc),
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
    interrupted = bool(doc.get("interrupted"))
    s = ET.SubElement(suites, "testsuite", name="mutants", tests=str(len(mutants) + interrupted),
                      failures=str(failures), errors=str(int(interrupted)), skipped=str(skipped))
    if interrupted:  # a dashboard shows that the run stopped short, and where
        case = ET.SubElement(s, "testcase", classname="kcm.mutants", name="interrupted", time="0.000")
        ET.SubElement(case, "error", message=headline(doc))
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
