"""Shared by the checker tests: the fuzz-vs-explorer table that `test_stateful.py` fills, printed at
the end of the session (the shrunk length is a result worth seeing, not only a bound to assert)."""

from __future__ import annotations

import pytest

#: variant -> (invariant, fuzz shrunk length, explorer shortest length, first failing walk's length, the
#: example it was, examples run in all with shrinking)
_FUZZ_VS_EXPLORER: dict[str, tuple[str, int, int, int, int, int]] = {}


@pytest.fixture(scope="session")
def fuzz_vs_explorer() -> dict:
    return _FUZZ_VS_EXPLORER


def pytest_terminal_summary(terminalreporter) -> None:
    if not _FUZZ_VS_EXPLORER:
        return
    write = terminalreporter.write_line
    terminalreporter.section("kcm fuzz vs the explorer (shortest counterexample), per variant")
    write(f"{'variant':8} {'invariant':34} {'fuzz, shrunk':>12} {'explorer, shortest':>18} "
          f"{'first failing walk':>18} {'at example':>10} {'runs with shrinking':>19}")
    for name in sorted(_FUZZ_VS_EXPLORER):
        invariant, shrunk, shortest, first, at, examples = _FUZZ_VS_EXPLORER[name]
        write(f"{name:8} {invariant:34} {shrunk:>12} {shortest:>18} {first:>18} {at:>10} {examples:>19}")
