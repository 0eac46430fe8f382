"""The mutants of the model: generated from its own source files, as they are now.

`MUTABLE_FILES` are the controller, its state machines, reassignment, topic deletion, the broker
side, and the ZooKeeper and request handling of `world.py`; `operators.py` says where each
operator seeds a fault. Each mutant is the original source with one site replaced, and carries
its unified diff (`difflib`).

A mutant's id is `<file>:<line>:<operator>:<ordinal>` (ordinal among the mutants of the same
operator on the same line, from 0): stable as long as that line does not move, and readable in a
report. Generation is deterministic: the same sources give the same mutants in the same order;
`sample(mutants, n, seed)` picks a subset with `random.Random(seed)`, and `mutant_by_id` rebuilds
one from the sources (what a Spark executor does with the id it receives).
"""

from __future__ import annotations

import difflib
import hashlib
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import kcm.model
from kcm.checker.mutation.operators import OPERATORS, apply, sites

#: The files mutated, in the model package (`model/` in the source tree, `kcm.model` installed).
MUTABLE_FILES = ("controller.py", "state_machines.py", "reassignment.py", "topic_deletion.py", "broker.py", "world.py")


def model_dir() -> Path:
    """The folder of the installed (or editable) `kcm.model` package."""
    return Path(kcm.model.__file__).parent


def read_sources(folder: Path | None = None) -> dict[str, str]:
    """Every `*.py` of the model package and its sub-packages: {path relative to the package
    (`controller.py`, `checking/kafka_model.py`): source}."""
    folder = folder or model_dir()
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.py"))}


@dataclass(frozen=True)
class Mutant:
    """One seeded fault: where, which operator, what it does, and the source with it."""

    id: str
    file: str
    line: int
    operator: str
    ordinal: int
    description: str
    diff: str
    source: str
    #: The lines (first, last) of the original file whose execution the change needs: from the
    #: innermost statement around it to its end. A mutant whose lines never run on a config
    #: explores exactly as the clean model there.
    reach: tuple[int, int] = (0, 0)

    def summary(self) -> dict:
        return {"id": self.id, "file": self.file, "line": self.line, "operator": self.operator,
                "description": self.description}



def mutants_of(file: str, source: str, operators: Iterable[str] = OPERATORS) -> list[Mutant]:
    """The mutants of one source file, in a fixed order (operator, then position)."""
    wanted = set(operators)
    lines = source.splitlines(keepends=True)
    by_operator, statements = sites(file, source)
    seen = {source}
    out: list[Mutant] = []
    ordinals: dict[tuple[int, str], int] = {}
    stem = file[:-3] if file.endswith(".py") else file
    for op in OPERATORS:
        if op not in wanted:
            continue
        for site in sorted(by_operator[op], key=lambda s: (s.line, s.span)):
            mutated = apply(lines, site)
            if mutated in seen:
                continue  # a no-op, or a change another operator already makes
            # (Always valid Python: a span becomes a parenthesized expression, a deleted sole
            # statement becomes `pass`; a swap exchanges whole statements of one block.)
            seen.add(mutated)
            k = (site.line, op)
            ordinal = ordinals.get(k, 0)
            ordinals[k] = ordinal + 1
            diff = "".join(difflib.unified_diff(lines, mutated.splitlines(keepends=True),
                                                f"a/model/{file}", f"b/model/{file}", n=2))
            last = site.span[1] if site.kind == "lines" else site.span[2]
            first = max((a for a, b in statements if a <= site.line <= b), default=site.line)
            out.append(Mutant(f"{stem}:{site.line}:{op}:{ordinal}", file, site.line, op, ordinal,
                              site.description, diff, mutated, (min(first, site.line), max(last, site.line))))
    return out


def generate(sources: Mapping[str, str] | None = None, files: Iterable[str] | None = None,
             operators: Iterable[str] | None = None) -> list[Mutant]:
    """Every mutant of the mutable files (or `files`) by every operator (or `operators`)."""
    sources = sources if sources is not None else read_sources()
    files = tuple(files) if files else MUTABLE_FILES
    ops = tuple(operators) if operators else OPERATORS
    out = []
    for f in MUTABLE_FILES:
        if f in files and f in sources:
            out.extend(mutants_of(f, sources[f], ops))
    return out


def sample(mutants: list[Mutant], n: int | None, seed: int = 0) -> list[Mutant]:
    """`n` mutants picked with `random.Random(seed)`, in generation order; all of them if `n` is None."""
    if n is None or n >= len(mutants):
        return list(mutants)
    chosen = set(random.Random(seed).sample(range(len(mutants)), n))
    return [m for i, m in enumerate(mutants) if i in chosen]



_generated: dict[tuple, dict[str, Mutant]] = {}


def mutant_by_id(sources: Mapping[str, str], mutant_id: str, files=None, operators=None) -> Mutant:
    """The mutant `mutant_id` among those `generate` makes from `sources` (cached per sources)."""
    key = (hashlib.blake2b(repr(sorted(sources.items())).encode(), digest_size=16).digest(),
           tuple(files or ()), tuple(operators or ()))
    table = _generated.get(key)
    if table is None:
        table = {m.id: m for m in generate(sources, files, operators)}
        _generated.clear()
        _generated[key] = table
    return table[mutant_id]


