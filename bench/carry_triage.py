"""Carry the triage of survivors over to the current sources' line numbers.

A mutant's id names its line (`file:line:operator:ordinal`), so an edit above a triaged statement
makes its entry stale. This moves every stale entry of bench/mutation/triage/*.toml (or the folder
given) to the current mutant with the same file, operator and description, rewriting only the
`id` lines, and lists what stays stale (a statement changed or gone: triage it again).

    python bench/carry_triage.py [FOLDER]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kcm.checker.mutation import generate
from kcm.checker.mutation.triage import carry_over, load, stale

REPO_ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=REPO_ROOT / "bench/mutation/triage",
                    help="the triage folder (default: bench/mutation/triage)")
    folder = ap.parse_args(argv).folder
    mutants = generate()
    for name, old, new in carry_over(folder, mutants):
        print(f"{name}: {old} -> {new}")
    left = stale(load(folder), mutants)
    for old in left:
        print(f"still stale: {old}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
