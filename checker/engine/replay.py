"""Replaying counterexamples: re-run a trace through the model and check that it still fails.

A trace is replayed, never unpickled: actions are re-run through `Model.step` from an initial
state, each checked to be enabled, so a replay also tests that the model still allows every step.

- `replay(model, actions)` takes action objects (as the explorer returns them).
- `replay_labels(model, labels)` takes action labels (`Model.format_action` strings, as an ITF
  file records them) and, at each step, picks the enabled action whose label matches. Two
  enabled actions with one label but different next states make the replay ambiguous: an error.
- `replay_itf(file)` rebuilds the model the file names (its `ModelSpec`, `#meta.model_factory`
  called with `#meta.model_args`), replays the labels from the recorded initial state, checks every
  replayed state against the recorded one, and asserts the recorded violation.
- `replay_script(trace)` writes a small standalone Python file (also a pytest test) that does the
  same from the labels alone, so a counterexample can be attached to a bug report or a test suite.

Reproduction (`reproduces`): an `Always` must fail in the last state; an `AlwaysStep` on the last
step; a deadlock means no enabled action and not `is_terminal`; a `Sometimes` witness must meet
its goal on the last step (the initial state counts as the step `(init, None, init)`).

Failures raise `ReplayError`, an `AssertionError`, so the script fails like a test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kcm.checker.engine.contract import Always, AlwaysStep, Model, Sometimes
from kcm.checker.engine.itf import ItfTrace, decode_value, encode_value, read_itf
from kcm.checker.engine.model_spec import ModelSpec, load_factory


class ReplayError(AssertionError):
    """A trace does not replay (an action is not enabled, a state differs) or does not reproduce."""


def _labels(model: Model, actions: Sequence[Any], limit: int = 8) -> str:
    shown = [model.format_action(a) for a in list(actions)[:limit]]
    more = f", ... ({len(actions) - limit} more)" if len(actions) > limit else ""
    return ", ".join(shown) + more if shown else "none"


def replay(model: Model, actions: Sequence[Any], initial: Any = None) -> list:
    """The states `[initial, s1, ..., sn]` of running `actions` from `initial` (by default the
    first initial state from which every action is enabled)."""
    candidates = [initial] if initial is not None else list(model.init_states())
    first_error: ReplayError | None = None
    for start in candidates:
        states = [start]
        try:
            for i, action in enumerate(actions, 1):
                enabled = model.enabled_actions(states[-1])
                if action not in enabled:
                    raise ReplayError(f"step {i}: {model.format_action(action)} is not enabled; "
                                      f"enabled: {_labels(model, enabled)}")
                states.append(model.step(states[-1], action))
            return states
        except ReplayError as exc:
            first_error = first_error or exc
    assert first_error is not None
    if len(candidates) > 1:
        raise ReplayError(f"no initial state replays the trace; from the first: {first_error}")
    raise first_error


def replay_trace(model: Model, trace: Sequence[tuple[Any, Any]]) -> list:
    """Replay an explorer trace (`(action, state)` pairs) and check it lands on the same states."""
    states = replay(model, [a for a, _ in trace[1:]], initial=trace[0][1])
    for i, (state, (_, expected)) in enumerate(zip(states, trace)):
        if state != expected:
            raise ReplayError(f"step {i}: the replayed state differs from the trace's")
    return states


def replay_labels(
    model: Model,
    labels: Sequence[str],
    initial: Any = None,
    check_state: Callable[[int, Any], None] | None = None,
) -> tuple[list, list]:
    """`(actions, states)` from replaying action labels; `check_state(i, state)` may veto a state."""
    state = initial if initial is not None else model.init_states()[0]
    states, actions = [state], []
    if check_state:
        check_state(0, state)
    for i, label in enumerate(labels, 1):
        matches = [(a, t) for a, t in model.successors(state) if model.format_action(a) == label]
        if not matches:
            raise ReplayError(f"step {i}: no enabled action is '{label}'; "
                              f"enabled: {_labels(model, model.enabled_actions(state))}")
        if any(t != matches[0][1] for _, t in matches[1:]):
            raise ReplayError(f"step {i}: the label '{label}' matches several enabled actions "
                              "with different effects; make Model.format_action unique")
        action, state = matches[0]
        actions.append(action)
        states.append(state)
        if check_state:
            check_state(i, state)
    return actions, states


def reproduces(model: Model, name: str, kind: str, states: Sequence[Any], actions: Sequence[Any]) -> bool:
    """Whether the last state (or step) of a replayed trace violates property `name` (meets it,
    for a goal). Raises `ReplayError` if the model has no such property."""
    last = states[-1]
    prev, action = (states[-2], actions[-1]) if actions else (last, None)
    if kind == "deadlock":
        return not model.enabled_actions(last) and not model.is_terminal(last)
    if kind == "liveness":
        from kcm.checker.engine.liveness import reproduces_liveness  # liveness imports result, not replay

        # A known loop's trace is named "known <Name>": judged by the property that loop breaks.
        known = {f"known {k.name}": k.property for k in model.known_loops()}
        return reproduces_liveness(model, states, actions, prop=known.get(name, name))
    prop = next((p for p in model.properties() if p.name == name), None)
    if prop is None:
        raise ReplayError(f"the model has no property '{name}'")
    if isinstance(prop, Always):
        return not prop.holds(last)
    if isinstance(prop, AlwaysStep):
        return action is not None and not prop.holds(prev, action, last)
    if isinstance(prop, Sometimes):
        return bool(prop.met(prev, action, last))
    raise ReplayError(f"property '{name}' is of an unknown type {type(prop).__name__}")


def assert_reproduces(model: Model, name: str, kind: str, states: Sequence[Any], actions: Sequence[Any]) -> None:
    """Raise `ReplayError` unless the replayed trace ends in the recorded violation (or goal)."""
    if not reproduces(model, name, kind, states, actions):
        what = "meet" if kind == "sometimes" else "violate"
        raise ReplayError(f"the replayed trace does not {what} {kind} '{name}' "
                          f"after {len(actions)} steps")


def model_from_meta(meta: Mapping[str, Any]) -> Model:
    """Rebuild the model an ITF file was written from (the `ModelSpec` its `#meta` names)."""
    spec = ModelSpec.from_meta(meta)
    return load_factory(spec.factory)(*spec.args, **dict(spec.kwargs))


def _initial_state(model: Model, trace: ItfTrace) -> Any:
    inits = list(model.init_states())
    index = trace.meta.get("initial_index")
    if isinstance(index, int) and 0 <= index < len(inits):
        return inits[index]
    for state in inits:
        if _plain_fields(model, state) == trace.states[0]:
            return state
    raise ReplayError("the trace's first state is not an initial state of the model")


def _plain_fields(model: Model, state: Any) -> dict[str, Any]:
    return {k: decode_value(encode_value(v), k) for k, v in model.fields(state).items()}


def replay_itf(source: str | Path | ItfTrace, model: Model | None = None) -> tuple[list, list]:
    """Replay an ITF trace (a file or a decoded trace) and assert its violation; returns
    `(actions, states)`. The model comes from the file's `#meta` unless given."""
    trace = source if isinstance(source, ItfTrace) else read_itf(source)
    model = model or model_from_meta(trace.meta)

    def check_state(i: int, state: Any) -> None:
        plain = _plain_fields(model, state)
        if plain != trace.states[i]:
            from kcm.checker.engine.traces import diff_values  # traces imports this module

            diffs = [d for name in trace.vars for d in diff_values(trace.states[i].get(name), plain.get(name), name)]
            where = f" ({diffs[0][0]})" if diffs else ""
            raise ReplayError(f"state {i} differs from the recorded one{where}")

    labels = [label for label in trace.actions[1:] if label is not None]
    if len(labels) < len(trace.actions) - 1:
        raise ReplayError("the trace does not record every action label")
    actions, states = replay_labels(model, labels, _initial_state(model, trace), check_state)
    if trace.invariant is not None:
        assert_reproduces(model, trace.invariant, trace.kind or "safety", states, actions)
    return actions, states


def replay_script(trace: ItfTrace, itf_name: str | None = None) -> str:
    """A standalone Python script (and pytest test) that replays `trace` by its labels and
    asserts its violation. The trace must name its model factory."""
    meta = trace.meta
    if not isinstance(meta.get("model_factory"), str):
        raise ValueError("a replay script needs #meta.model_factory to rebuild the model")
    name, kind = trace.invariant, trace.kind or "safety"
    actions = "".join(f"    {label!r},\n" for label in trace.actions[1:])
    source = f" from {itf_name}" if itf_name else ""
    check = ("    assert_reproduces(model, INVARIANT, KIND, states, actions)\n" if name is not None else "")
    return f'''#!/usr/bin/env python3
"""Replays a kcm trace{source}: {kind} '{name}' after {len(trace.states) - 1} steps.

Rebuilds the model with {meta["model_factory"]}(**MODEL_ARGS), replays each action (matched by
its label among the enabled actions, from initial state number INITIAL_INDEX), and asserts that
the last step {"meets" if kind == "sometimes" else "violates"} '{name}'. Run it with python, or collect it with pytest.
"""

from kcm.checker.engine.model_spec import load_factory
from kcm.checker.engine.replay import assert_reproduces, replay_labels

MODEL_FACTORY = {meta["model_factory"]!r}
MODEL_ARGS = {dict(meta.get("model_args") or {})!r}
INITIAL_INDEX = {int(meta.get("initial_index") or 0)!r}
INVARIANT = {name!r}
KIND = {kind!r}
ACTIONS = [
{actions}]


def test_replay():
    model = load_factory(MODEL_FACTORY)(**MODEL_ARGS)
    initial = list(model.init_states())[INITIAL_INDEX]
    actions, states = replay_labels(model, ACTIONS, initial)
{check}    return states


if __name__ == "__main__":
    test_replay()
    print(f"reproduced: {{KIND}} {{INVARIANT!r}} after {{len(ACTIONS)}} steps")
'''
