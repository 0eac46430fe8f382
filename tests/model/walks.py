"""Helpers the model tests share: a bounded breadth-first walk, and renaming an action's brokers."""

from __future__ import annotations

from collections import deque

from kcm.model.cluster import Cluster
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, init_states, step


def reachable(cfg: ModelConfig, limit: int) -> list[Cluster]:
    """The first `limit` states breadth-first from the initial states (no checker involved)."""
    seen = set()
    queue = deque(init_states(cfg))
    out = []
    while queue and len(out) < limit:
        s = queue.popleft()
        if s in seen:
            continue
        seen.add(s)
        out.append(s)
        for a in enabled_actions(cfg, s):
            t = step(cfg, s, a)
            if t is not None and t not in seen:
                queue.append(t)
    return out


def rename_action(a, pi):
    """Action `a` with every broker id `b` in it renamed `pi[b]`."""
    fields = {}
    for name in a.__dataclass_fields__:
        value = getattr(a, name)
        if name in ("broker", "src", "dst", "follower"):
            value = pi[value]
        elif name == "target":
            value = tuple(pi[b] for b in value)
        elif name == "replicas":
            value = tuple(tuple(pi[b] for b in r) for r in value)
        elif name == "targets":
            value = tuple((p, tuple(pi[b] for b in t)) for p, t in value)
        fields[name] = value
    return type(a)(**fields)
