"""Models for the Spark tests that the checker's toys do not cover.

`Comb`: a chain 0 -> 1 -> ... -> `length` (the spine) plus `teeth` initial states with no
successor (legal ends). After level 0 every level has the same single candidate, while the
visited set holds `teeth` more fingerprints in a wide comb than in a bare spine: the shape for
checking that what a level shuffles does not grow with the visited set.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcm.checker.engine.contract import Model


@dataclass(frozen=True, slots=True)
class Advance:
    pass


class Comb(Model):
    name = "comb"

    def __init__(self, teeth: int, length: int) -> None:
        self.teeth, self.length = teeth, length

    def init_states(self):
        return (("spine", 0),) + tuple(("tooth", i) for i in range(self.teeth))

    def enabled_actions(self, s):
        return [Advance()] if s[0] == "spine" and s[1] < self.length else []

    def step(self, s, a):
        return ("spine", s[1] + 1)

    def is_terminal(self, s):
        return True
