"""Livelocks Kafka 2.6 is known to have, as data: the liveness checker lists them, not fails on them.

The liveness checker (`kcm.checker.liveness`) reports every fair cycle of healing actions that
never reaches quiescence as a lasso. Some of those cycles are Kafka 2.6's own behaviour, read from
its code and recorded as Findings in docs/model.md (the controller-move loops: a failover that
resumes a reassignment of a partition without a state znode, a pending preferred election on a
leaderless partition that throws, the next controller doing the same). A known loop is listed in
`KNOWN_LOOPS` with:

- `name`: a short CamelCase name of the loop;
- `finding`: the Finding that explains it (docs/model.md, "Findings");
- `property`: the liveness property it breaks ("EventuallyQuiescent" or
  "QuiescenceAlwaysReachable", see `kcm.checker.liveness`);
- `matches(cycle)`: whether a lasso's cycle is this loop; `cycle` is the cycle's steps as
  `(action, state)` pairs (the action taken into the state), the first state being the loop's
  entry. A predicate on what the cycle does (the events it processes, the znodes it reads) rather
  than on one exact state, so that it recognises the loop in every config that has it;
- `doc`: one paragraph, the why.

The gate stays green on a known loop, and its lasso is still written out, so that the behaviour
stays visible. A loop that only some configs reach is matched the same way: the list is per model,
not per preset. The list is empty until the loops are modelled; the `fidelity` work adds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple


class KnownLoop(NamedTuple):
    """A livelock the modelled Kafka version has (see the module docstring)."""

    name: str
    finding: str
    property: str
    matches: Callable[[Sequence[tuple[Any, Any]]], bool]
    doc: str = ""


#: Kafka 2.6's known livelocks (see the module docstring); a variant adds none.
KNOWN_LOOPS: tuple[KnownLoop, ...] = ()
