"""The triage of surviving mutants: why each survivor no property kills is not a blind spot.

A mutation report lists the survivors; a reviewer's next question is which of them matter. The
answer is written by hand, once per survivor, in TOML files (one per mutated source file, in
`bench/mutation/triage/` for the model's own suite), and `kcm mutate --triage DIR` joins it to
the report:

    [[mutant]]
    id = "controller:142:delete-effect:0"
    description = "delete `w.fire_controller_change(deleted=False)` in elect"
    verdict = "beyond-suite"
    reason = "..."

`verdict` says what kind of explanation it is (`VERDICTS`); `open` is an honest "not decided".
The `description` is copied from the report: a mutant id names a line, so an edit above it moves
the id onto another statement; an entry whose description no longer matches the mutant of that
id (or whose id no longer exists) is *stale*, reported apart and never applied; `carry_over`
moves stale entries to the id their description now has (`bench/carry_triage.py`).

What the report gains (`apply`): each survivor or timed-out mutant with an entry carries it; the
counts of explained survivors by verdict, the unexplained ones, the stale entries, the entries
whose mutant the run now kills (the entry can go), and a second score that counts the survivors
argued equivalent as equivalent. The first score stays the report's headline: an argument is a
reviewer's to check, the tool only counts it.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcm.checker.engine.errors import UsageError
from kcm.checker.mutation.generate import Mutant
from kcm.checker.mutation.outcome import CRASHED, EQUIVALENT, KILLED, SURVIVED, TIMED_OUT

#: What an entry may say about its mutant.
VERDICTS = {
    "equivalent": "no behaviour a broker, a client or Kafka's own checks could observe differs",
    "out-of-scope": "what changes is something the model abstracts away (docs/model.md, Abstractions)",
    "beyond-suite": "a real bug the suite's configs cannot reach; the reason says what a config would need to reach it",
    "liveness-only": "runs that never settle; only a liveness pass sees them (`kcm explore --liveness`; "
                     "`kcm mutate --liveness` judges survivors so)",
    "masked-by-known": "a known 2.6 violation (Findings) that the checkers excuse hides it",
    "timeout": "the state space outgrows the budget; the reason says why",
    "open": "not decided yet",
}


@dataclass(frozen=True)
class TriageEntry:
    id: str
    description: str
    verdict: str
    reason: str
    source: str  # the file it was read from, for messages


def load(folder: Path) -> dict[str, TriageEntry]:
    """Every entry of every `*.toml` in `folder`; a malformed file or entry is one UsageError line."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"--triage: '{folder}' is not a folder of triage files")
    entries: dict[str, TriageEntry] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"--triage: '{path}' is not valid TOML ({exc})") from None
        for n, raw in enumerate(doc.get("mutant", []), 1):
            where = f"'{path}', entry {n}"
            missing = [k for k in ("id", "description", "verdict", "reason")
                       if not isinstance(raw.get(k), str) or not raw[k].strip()]
            if missing:
                raise UsageError(f"--triage: {where} has no {missing[0]}")
            if raw["verdict"] not in VERDICTS:
                raise UsageError(f"--triage: {where}: unknown verdict '{raw['verdict']}'; "
                                 f"choose from {', '.join(VERDICTS)}")
            if raw["id"] in entries:
                raise UsageError(f"--triage: {where}: '{raw['id']}' is triaged twice "
                                 f"(also in '{entries[raw['id']].source}')")
            entries[raw["id"]] = TriageEntry(raw["id"], raw["description"].strip(), raw["verdict"],
                                             " ".join(raw["reason"].split()), path.name)
    return entries


def stale(entries: Mapping[str, TriageEntry], generated: Iterable[Mutant]) -> list[str]:
    """Ids of the entries that no longer name their mutant: the id is gone, or names another statement."""
    described = {m.id: m.description for m in generated}
    return sorted(i for i, e in entries.items() if described.get(i) != e.description)


def apply(doc: dict[str, Any], entries: Mapping[str, TriageEntry], generated: Iterable[Mutant]) -> dict[str, Any]:
    """The report `doc` with the triage joined in (in place, and returned)."""
    gone = set(stale(entries, generated))
    explained: Counter = Counter()
    unexplained, settled = [], []
    for e in doc["mutants"]:
        entry = entries.get(e["id"])
        if entry is None or e["id"] in gone:
            if e["status"] in (SURVIVED, TIMED_OUT):
                unexplained.append(e["id"])
            continue
        if e["status"] in (SURVIVED, TIMED_OUT):
            e["triage"] = {"verdict": entry.verdict, "reason": entry.reason}
            explained[entry.verdict] += 1
            if entry.verdict == "open":
                unexplained.append(e["id"])
        else:
            settled.append(e["id"])
    statuses = Counter(e["status"] for e in doc["mutants"])
    argued = explained["equivalent"]
    judged = len(doc["mutants"]) - statuses[EQUIVALENT] - argued
    doc["triage"] = {
        "entries": len(entries),
        "explained": {v: explained[v] for v in VERDICTS if explained[v] and v != "open"},
        "unexplained": unexplained,
        "stale": sorted(gone),
        "no_longer_needed": settled,
        "score_after_triage": round((statuses[KILLED] + statuses[CRASHED]) / judged, 4) if judged else None,
    }
    return doc


def text(doc: dict[str, Any]) -> list[str]:
    """The report's triage lines (none when the run had no triage)."""
    t = doc.get("triage")
    if t is None:
        return []
    explained = sum(t["explained"].values())
    by = ", ".join(f"{v} {n}" for v, n in t["explained"].items()) or "none"
    sc = "n/a" if t["score_after_triage"] is None else f"{t['score_after_triage']:.1%}"
    lines = [f"Triage: {explained} survivors or timeouts explained ({by}); {len(t['unexplained'])} unexplained; "
             f"score counting the survivors argued equivalent as equivalent: {sc}."]
    if t["stale"]:
        lines.append(f"Stale triage entries (the id names another statement now, or is gone): {', '.join(t['stale'])}")
    if t["no_longer_needed"]:
        lines.append("Triage entries for mutants this run kills or finds equivalent: "
                     + ", ".join(t["no_longer_needed"]))
    return lines


_ID_LINE = re.compile(r'^(\s*id\s*=\s*")([^"]+)(")', re.MULTILINE)


def carry_over(folder: Path, generated: Iterable[Mutant]) -> list[tuple[str, str, str]]:
    """Move the stale entries of the triage files in `folder` to the current line numbers.

    An edit above a mutated statement moves its mutant's id; the entry keeps its description,
    which names the statement. A stale entry moves to the mutant of the same file and operator
    with that description that no other entry names; of several, to the one nearest its old
    line (none if two are as near). Rewrites the files in place (only `id` lines change) and
    returns (file, old id, new id) per moved entry; what cannot be matched stays stale."""
    folder = Path(folder)
    entries = load(folder)
    mutants = list(generated)
    gone = set(stale(entries, mutants))
    taken = set(entries) - gone
    candidates: dict[tuple[str, str, str], list[Mutant]] = {}
    for m in mutants:
        if m.id not in taken:
            candidates.setdefault((m.id.split(":")[0], m.operator, m.description), []).append(m)
    moves: dict[str, dict[str, str]] = {}
    for old in sorted(gone):
        stem, line, operator, _ = old.split(":")
        free = [m for m in candidates.get((stem, operator, entries[old].description), []) if m.id not in taken]
        distance = sorted((abs(m.line - int(line)), m.id) for m in free)
        if not distance or len(distance) > 1 and distance[0][0] == distance[1][0]:
            continue
        new = distance[0][1]
        taken.add(new)
        moves.setdefault(entries[old].source, {})[old] = new
    out = []
    for name, renames in sorted(moves.items()):
        path = folder / name
        path.write_text(_renamed(path.read_text(encoding="utf-8"), renames), encoding="utf-8")
        out += [(name, old, new) for old, new in sorted(renames.items())]
    return out


def _renamed(text: str, renames: Mapping[str, str]) -> str:
    """`text` with each `id = "old"` line naming `renames[old]` instead."""

    def rename(m: re.Match[str]) -> str:
        return m.group(1) + renames.get(m.group(2), m.group(2)) + m.group(3)

    return _ID_LINE.sub(rename, text)
