"""A page of `kcm serve` is an address: where it starts and the choices taken from there.

`/state?start=init:0&path=3.0.1` is initial state 0 of the model (`Model.init_states()`), then its
4th enabled action, then the 1st enabled action of the state that reached, then the 2nd: choices
index the model's `successors(state)`, which lists enabled actions in a deterministic order (the
contract's requirement, so that traces replay), so the same address always shows the same state.
`start=trace:K` is the counterexample given to the server, replayed to its step K; choices after
it branch off the trace. The empty path (`path=` or none) is the start itself.

Nothing is kept between requests: the walk is rebuilt from the model on every page, so back is the
link to the shorter path, a branch is another choice at an earlier step, and every page can be
bookmarked. A malformed address is a `BadAddress` with status 400, one that names a state that
does not exist (an initial state, a trace step or a choice out of range) one with status 404.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode

from kcm.checker.engine.contract import Model

INIT, TRACE = "init", "trace"
_START = re.compile(r"(init|trace):([0-9]{1,9})\Z")
_PATH = re.compile(r"([0-9]{1,9}(\.[0-9]{1,9})*)?\Z")


class BadAddress(Exception):
    """An address that names no page: `status` 400 (malformed) or 404 (out of range)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Start:
    """Where a walk starts: initial state `index` (`init`), or the given trace at step `index` (`trace`)."""

    kind: str
    index: int

    def text(self) -> str:
        return f"{self.kind}:{self.index}"


@dataclass(frozen=True)
class Address:
    """A page: a start and the choices (indices into the enabled actions) taken from it."""

    start: Start
    choices: tuple[int, ...] = ()

    def url(self) -> str:
        """The page's URL path and query, as links carry it."""
        return "/state?" + urlencode({"start": self.start.text(), "path": ".".join(map(str, self.choices))},
                                     safe=":.")

    def then(self, choice: int) -> Address:
        """The page reached from this one by taking enabled action number `choice`."""
        return Address(self.start, (*self.choices, choice))


def parse(query: str) -> Address:
    """The address in a URL's query string (`start=...&path=...`); `BadAddress` (400) if malformed."""
    values = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(values) - {"start", "path"})
    if unknown:
        raise BadAddress(400, f"unknown parameter '{unknown[0]}': a page is addressed by start= and path=")
    if any(len(v) > 1 for v in values.values()):
        raise BadAddress(400, "start= and path= may each be given once")
    start_text = values.get("start", [f"{INIT}:0"])[0]
    start = _START.match(start_text)
    if start is None:
        raise BadAddress(400, f"bad start '{start_text}': expected init:N or trace:N")
    path = values.get("path", [""])[0]
    if not _PATH.match(path):
        raise BadAddress(400, f"bad path '{path}': expected choices as numbers separated by dots, e.g. 3.0.1")
    return Address(Start(start.group(1), int(start.group(2))), tuple(int(c) for c in path.split(".") if c))


@dataclass(frozen=True)
class Step:
    """One state of a walk: the action that reached it (None for the start of the walk's origin),
    the state, the choice taken (None for an initial or a trace step) and the page that shows it."""

    action: Any
    state: Any
    choice: int | None
    address: Address


def walk(model: Model, inits: Sequence[Any], trace: Sequence[tuple[Any, Any]] | None,
         address: Address) -> list[Step]:
    """The steps from the origin to the page at `address`: states 0 to n, each with its action.

    `inits` are the model's initial states, `trace` the replayed counterexample as `(action, state)`
    pairs (its first action None), or None when the server was given none."""
    start = address.start
    if start.kind == INIT:
        if not 0 <= start.index < len(inits):
            raise BadAddress(404, f"there is no initial state {start.index}: the config has {len(inits)} "
                                  f"(init:0 to init:{len(inits) - 1})")
        steps = [Step(None, inits[start.index], None, Address(start))]
    else:
        if trace is None:
            raise BadAddress(404, "no counterexample was given to this server (kcm serve --trace FILE)")
        if not 0 <= start.index < len(trace):
            raise BadAddress(404, f"the counterexample has no step {start.index}: it has steps 0 to {len(trace) - 1}")
        steps = [Step(action, state, None, Address(Start(TRACE, k)))
                 for k, (action, state) in enumerate(trace[:start.index + 1])]
    for n, choice in enumerate(address.choices):
        successors = list(model.successors(steps[-1].state))
        if not 0 <= choice < len(successors):
            raise BadAddress(404, f"step {len(steps)}: there is no enabled action {choice}; the state before it "
                                  + (f"enables {len(successors)} (0 to {len(successors) - 1})" if successors
                                     else "enables none"))
        action, state = successors[choice]
        steps.append(Step(action, state, choice, Address(start, address.choices[:n + 1])))
    return steps
